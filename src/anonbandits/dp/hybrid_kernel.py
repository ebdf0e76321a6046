"""The compiled round loop of Hybrid-UCB (paper 001, Algorithm 4; driver :mod:`anonbandits.dp.hybrid_ucb`) and
the persistent binary-mechanism noise of its trees.

The loop is compiled in :mod:`anonbandits.dp.hybrid_loop`, imported at the first call of :func:`choose_arms`
or :func:`run_rounds`: importing the dp family (SE, DP-SE, the UCBs and FTNL run on numpy) does not import
numba, which takes most of a new process's first call.

The binary mechanism costs O(1) per pull: the noisy prefix sum at tree count k is the one stored when the
count was k - lowbit(k) plus a fresh node noise (nodes are created once, at the count that completes them,
and reused while their bit is set). The loop runs many independent runs in lockstep, one round per step,
over the rounds of a chunk and the runs.
"""

import functools
from types import ModuleType

import numpy as np


def floor_log2(n: np.ndarray) -> np.ndarray:
    """floor(log2(n)) for positive integers, exactly."""
    return np.frexp(np.asarray(n, dtype=np.float64))[1] - 1


def tree_noise_store(slots: int, capacity: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Persistent binary-mechanism noise of ``slots`` trees (counts up to ``capacity``) for the loop's
    ``_node_advance``: the stored noise per slot and level (zeros) and, per count k, the levels of its lowest
    set bit and of its next set bit (the never-written level 63, zero noise, when k is a power of two). The
    layout is the compiled loop's (its ``LEVELS``), so the store imports it: a run needs it next anyway."""
    levels = _loop().LEVELS
    counts = np.arange(capacity + 1, dtype=np.int64)
    low = counts & -counts
    high = counts - low
    low_level = floor_log2(np.maximum(low, 1)).astype(np.int16)
    high_level = np.where(high > 0, floor_log2(np.maximum(high & -high, 1)), levels - 1).astype(np.int16)
    return np.zeros(slots * levels), low_level, high_level


def choose_arms(t: int, K: int, mean: np.ndarray, width_a: np.ndarray, width_b: np.ndarray, arm: np.ndarray) -> None:
    """Every run's arm of round ``t`` into ``arm`` (flat index): the largest index, the lowest arm on ties."""
    _loop().choose_arms(t, K, mean, width_a, width_b, arm)


def run_rounds(
    t: int,
    stop: int,
    start: int,
    lap: np.ndarray,
    uniform: np.ndarray,
    x: np.ndarray,
    chosen: bool,
    state: tuple[np.ndarray, ...],
) -> int:
    """Rounds ``t``.. of the chunk (see :func:`anonbandits.dp.hybrid_loop.run_rounds`); returns the next round."""
    return _loop().run_rounds(t, stop, start, lap, uniform, x, chosen, state)


@functools.cache
def _loop() -> ModuleType:
    """The compiled loop, imported (with numba) at its first use."""
    from anonbandits.dp import hybrid_loop

    return hybrid_loop
