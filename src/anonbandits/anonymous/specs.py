"""Deprecated path of :mod:`anonbandits.anonymous.entries` (the family's registry entries): every name still
imports from here for one release, with a ``DeprecationWarning`` naming its new module."""

from __future__ import annotations

from anonbandits import channel_params
from anonbandits._deprecated import moved
from anonbandits.anonymous import entries

#: the names this module held, each by the module that holds it now
NEW_HOMES = {
    **dict.fromkeys(
        (
            "ALGORITHMS",
            "BAI_INSTANCE",
            "BAI_PARAMS",
            "BATCHED_PARAMS",
            "ETC_PARAMS",
            "run_bai",
            "run_batched",
            "run_epochs",
            "run_etc",
        ),
        entries,
    ),
    **dict.fromkeys(("DIRECT_ONLY", "INSTANCE_PARAMS", "PRIVACY_PARAMS", "SHARES"), channel_params),
}

__getattr__ = moved(__name__, NEW_HOMES)
