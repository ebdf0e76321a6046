"""The compiled round loop of Hybrid-UCB (paper 001, Algorithm 4; driver :mod:`anonbandits.dp.hybrid_ucb`) and
the persistent binary-mechanism noise of its trees.

The binary mechanism costs O(1) per pull: the noisy prefix sum at tree count k is the one stored when the
count was k - lowbit(k) plus a fresh node noise (nodes are created once, at the count that completes them,
and reused while their bit is set). The loop runs many independent runs in lockstep, one round per step,
over the rounds of a chunk and the runs.
"""

import math

import numpy as np
from numba import njit

_LEVELS = 64


def floor_log2(n: np.ndarray) -> np.ndarray:
    """floor(log2(n)) for positive integers, exactly."""
    return np.frexp(np.asarray(n, dtype=np.float64))[1] - 1


class TreeNoise:
    """Persistent binary-mechanism noise of many trees at once (one tree per slot), counts up to ``capacity``.

    :meth:`advance` moves the given slots from count k - 1 to count k and returns the total noise of the
    dyadic blocks covering leaves 1..k: the noise stored when the count was k - lowbit(k) (the blocks of the
    higher bits; zero if k is a power of two) plus one fresh node noise for the block of the lowest set
    bit, which is stored for later. A new tree simply starts again at count 1: every level read was written
    in the current tree. Level lookups go through tables, so a step costs a few array operations.
    """

    def __init__(self, slots: int, capacity: int) -> None:
        counts = np.arange(capacity + 1, dtype=np.int64)
        low = counts & -counts
        high = counts - low
        self.low_level = floor_log2(np.maximum(low, 1)).astype(np.int16)
        # Level _LEVELS - 1 is never written: reading it gives the zero noise of "no higher block".
        self.high_level = np.where(high > 0, floor_log2(np.maximum(high & -high, 1)), _LEVELS - 1).astype(np.int16)
        self.stored = np.zeros(slots * _LEVELS)

    def advance(self, slot: np.ndarray, count: np.ndarray, fresh: np.ndarray) -> np.ndarray:
        """Total noise of leaves 1..``count`` of every tree in ``slot``, whose fresh node noise is ``fresh``."""
        return np.array([_node_advance(self.stored, self.low_level, self.high_level, int(s), int(c), float(f))
                         for s, c, f in zip(slot, count, fresh, strict=True)])


@njit(cache=True)
def _node_advance(stored, low_level, high_level, slot, count, fresh):
    """One tree's step of :meth:`TreeNoise.advance` (shared with the compiled round loop)."""
    base = slot * _LEVELS
    total = stored[base + high_level[count]] + fresh
    stored[base + low_level[count]] = total
    return total


@njit(cache=True)
def choose_arms(t, K, mean, width_a, width_b, arm):
    """Every run's arm of round ``t`` (flat index): the largest index, the lowest arm on ties."""
    log_t = math.log2(t)
    root = math.sqrt(log_t)
    for r in range(arm.size):
        best, j = -math.inf, 0
        for a in range(r * K, r * K + K):
            v = width_a[a] * root + width_b[a] * log_t + mean[a]
            if v > best:
                best, j = v, a
        arm[r] = j


@njit(cache=True)
def run_rounds(t, stop, start, lap, uniform, x, chosen, state):
    """Rounds ``t``.. of the chunk starting at ``start`` (node noises from row ``t - start`` of ``lap``), up to
    ``stop`` or just after a round that completes a tree (whose array noise the caller draws); returns the
    next round. Each round: the arms (already ``chosen`` by the caller for the first one), the rewards ``x``
    (Bernoulli from ``uniform``; given by the caller when ``uniform`` is empty), new private means and
    widths, regret and checkpoint; ``done`` marks the runs whose tree just completed."""
    (mu_flat, gaps, mean, width_a, width_b, full, pulls, tree_k, tree_sum, tree_leaves, node_scale, priv_width,
     log2_table, stored, low_level, high_level, regret, curves, grid, cursor, arm, done) = state
    K = mu_flat.size // arm.size
    while t < stop:
        if not chosen:
            choose_arms(t, K, mean, width_a, width_b, arm)
        chosen, completed = False, False
        for r in range(arm.size):
            j = arm[r]
            if uniform.shape[0]:
                x[r] = 1.0 if uniform[t - start, r] < mu_flat[j] else 0.0
            o = pulls[j] + 1
            pulls[j] = o
            k = tree_k[j] + 1
            tree_k[j] = k
            s = tree_sum[j] + x[r]
            tree_sum[j] = s
            noise = _node_advance(stored, low_level, high_level, j, k, lap[t - start, r] * node_scale[j])
            mean[j] = (full[j] + s + noise) / o
            width_a[j] = math.sqrt(3.0 / o)
            width_b[j] = priv_width[j] * log2_table[o + 1] / o
            regret[r] += gaps[j]
            done[r] = k == tree_leaves[j]
            completed = completed or done[r]
        if cursor[0] < grid.size and t == grid[cursor[0]]:
            curves[:, cursor[0]] = regret
            cursor[0] += 1
        t += 1
        if completed:
            return t
    return t
