"""Static batch grids of batched successive elimination.

Gao, Han, Ren, Zhou, "Batched Multi-armed Bandits Problem" (NeurIPS 2019), as used by paper
``000_e91e148c589dfd32.txt`` Section 2.2; spec ``anonymous-bandits.md`` Section 5.1. A grid
``0 = t_0 < t_1 < ... < t_M = T`` depends only on T and M, never on data: that is what lets N learners run
in lock-step (Algorithm 1 of paper 000).

* minimax: ``a = T^(1/(2 - 2^(1-M)))``, ``t_m = floor(a^(2 - 2^(1-m)))``;
* geometric: ``b = T^(1/M)``, ``t_m = floor(b^m)``;
* arithmetic: ``t_m = floor(m T / M)``;

and always ``t_M = T``. For tiny T two grid points may coincide (an empty batch).
"""

from __future__ import annotations

import math

import numpy as np

from anonbandits.errors import ConfigError

GRIDS = ("minimax", "geometric", "arithmetic")


def default_batches(horizon: int) -> int:
    """M = ceil(log log T), at least 2 (Lemma 1 of paper 000 uses M = log log T)."""
    if horizon <= math.e:
        return 2
    return max(2, math.ceil(math.log(max(math.log(horizon), 1.0))))


def static_grid(kind: str, horizon: int, batches: int) -> np.ndarray:
    """The grid ``[t_0, ..., t_M]`` (int64, non-decreasing, ``t_0 = 0``, ``t_M = horizon``)."""
    if kind not in GRIDS:
        raise ConfigError(f"grid must be one of {', '.join(GRIDS)}, got {kind!r}")
    if horizon < 1:
        raise ConfigError(f"grid horizon must be at least 1, got {horizon}")
    if batches < 1:
        raise ConfigError(f"batches must be at least 1, got {batches}")
    m = np.arange(1, batches + 1, dtype=float)
    log_t = math.log(horizon)
    if kind == "minimax":
        exponents = (2 - 2.0 ** (1 - m)) / (2 - 2.0 ** (1 - batches))
    elif kind == "geometric":
        exponents = m / batches
    else:
        exponents = None
    if exponents is None:
        points = np.floor(m * horizon / batches)
    else:
        # exp(log T * e) with a tiny relative guard so exact integers are not floored one below
        points = np.floor(np.exp(log_t * exponents) * (1 + 1e-12))
    grid = np.concatenate(([0], np.minimum(points, horizon))).astype(np.int64)
    grid[-1] = horizon
    return np.maximum.accumulate(grid)
