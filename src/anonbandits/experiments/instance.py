"""The instance a run uses, as its results-table row records it.

A means file (``--means FILE``, or ``means = "FILE"`` in a grid) sets the instance's users and arms; the
``users`` and ``arms`` flags then keep their defaults (or whatever was given), which the algorithm ignores. The
row must say what ran, so :func:`recorded_params` replaces them by the file's: a 2,157 x 80 means file is
recorded as ``users=2157, arms=80``, not as the flags' ``users=300, arms=5``. A run without a means file (every
run at the defaults) is recorded exactly as its parameters.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from anonbandits import registry
from anonbandits.channels import channel_named
from anonbandits.envs.means_file import is_means_path


def recorded_params(algorithm: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with ``users`` and ``arms`` of the instance that runs where a means file sets them.

    Algorithms with both ``users`` and ``arms`` parameters (the anonymous family, and ``se`` / ``dp-se`` over the
    anonymous channel) take the file's whole users x arms matrix (``se`` / ``dp-se`` given arm means as a list
    take K from the list); the multi-agent algorithms (``users`` only) take the number of agents of a user-type
    file (a headerless one-row file sets none). A file that cannot be read raises the
    :class:`~anonbandits.errors.ConfigError` the run itself would.
    """
    means = params.get("means")
    if not isinstance(means, str) or not means.strip() or "users" not in params:
        return dict(params)
    spec = registry.get(algorithm)
    if spec.family == "dp":  # se / dp-se: N users only over a channel that groups them (a single learner otherwise)
        grouped = "channel" in params and channel_named(params["channel"]).requires_decomposition
        if not grouped or means == spec.defaults()["means"]:
            return dict(params)  # the default means stand for the clustered instance of users x arms
        if not is_means_path(means):  # arm means given to every user: K is their number
            from anonbandits.envs.rewards import parse_means

            return {**params, "arms": len(parse_means(means))}
    if not is_means_path(means):
        return dict(params)
    users, arms = _sizes(means.strip(), "arms" in params)
    out = dict(params)
    if users is not None:
        out["users"] = users
    if arms is not None and "arms" in params:
        out["arms"] = arms
    return out


def _sizes(path: str, matrix: bool) -> tuple[int | None, int | None]:
    try:
        stat = os.stat(path)
        stamp = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        stamp = None  # read_means says the file is missing, in the run's own words
    return _read_sizes(str(Path(path)), matrix, stamp)


@functools.lru_cache(maxsize=32)
def _read_sizes(path: str, matrix: bool, stamp: tuple[int, int] | None) -> tuple[int | None, int | None]:
    """(users, arms) of a means file; read once per file version (``stamp``) in a process, not once per run."""
    from anonbandits.envs.means_file import means_sizes, shared_means

    if matrix:  # the sizes alone: a type's count is not expanded (the run checks it against its limit)
        return means_sizes(path)
    means, agents = shared_means(path)
    return agents, int(means.shape[0])
