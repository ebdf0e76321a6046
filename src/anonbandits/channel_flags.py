"""Deprecated path of :mod:`anonbandits.channel_params` (the anonymous channel's library parameters): every name
still imports from here for one release, with a ``DeprecationWarning`` naming its new path."""

from __future__ import annotations

from anonbandits import channel_params
from anonbandits._deprecated import moved
from anonbandits.channels import CHANNELS as _CHANNELS

#: the names this module held that kept their name in :mod:`anonbandits.channel_params`
MOVED_NAMES = (
    "ANONYMOUS_ONLY",
    "DIRECT_ONLY",
    "EPOCH_CHANNEL",
    "INSTANCE_PARAMS",
    "PRIVACY_PARAMS",
    "SHARES",
    "epoch_params",
    "parse_epsilon",
)

__getattr__ = moved(
    __name__,
    dict.fromkeys(MOVED_NAMES, channel_params),
    {
        "CHANNELS": (tuple(_CHANNELS), "the table anonbandits.channels.CHANNELS"),
        "EPOCH_DECOMPOSER": (channel_params.DECOMPOSER, "anonbandits.channel_params.DECOMPOSER"),
    },
)
