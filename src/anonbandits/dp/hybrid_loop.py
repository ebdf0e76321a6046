"""Hybrid-UCB's round loop (paper 001, Algorithm 4), compiled by numba: the binary-mechanism trees and their
persistent noise are described in :mod:`anonbandits.dp.hybrid_kernel`, which imports this module at the first
run (so that numba is imported by the runs that need it only); this module imports nothing of the kernel.
"""

import math

from numba import njit

from anonbandits.channels.compiled import bernoulli_reward
from anonbandits.core.compiled import hybrid_ucb_widths, widths_index

#: Noise levels stored per tree: one per bit of a count (below 2^63), the last never written (zero noise).
#: The layout of the loop's ``stored`` array, which :func:`anonbandits.dp.hybrid_kernel.tree_noise_store` sizes.
LEVELS = 64


@njit(no_cpython_wrapper=True, no_cfunc_wrapper=True, forceinline=True)  # run_rounds only: no wrappers
def _node_advance(stored, low_level, high_level, slot, count, fresh):
    """Move tree ``slot`` from count k - 1 to k = ``count``; return the total noise of the dyadic blocks covering
    leaves 1..k: the noise stored when the count was k - lowbit(k) (the blocks of the higher bits) plus the
    ``fresh`` node noise of the block of the lowest set bit, which is stored for later. A new tree simply starts
    again at count 1: every level read was written in the current tree."""
    base = slot * LEVELS
    total = stored[base + high_level[count]] + fresh
    stored[base + low_level[count]] = total
    return total


@njit(cache=True, no_cfunc_wrapper=True)
def choose_arms(t, K, mean, width_a, width_b, arm):
    """Every run's arm of round ``t`` (flat index): the largest index, the lowest arm on ties."""
    log_t = math.log2(t)
    root = math.sqrt(log_t)
    for r in range(arm.size):
        best, j = -math.inf, 0
        for a in range(r * K, r * K + K):
            v = widths_index(mean[a], width_a[a], width_b[a], root, log_t)
            if v > best:
                best, j = v, a
        arm[r] = j


@njit(cache=True, no_cfunc_wrapper=True)
def run_rounds(t, stop, start, lap, uniform, x, chosen, state):
    """Rounds ``t``.. of the chunk starting at ``start`` (node noises from row ``t - start`` of ``lap``), up to
    ``stop`` or just after a round that completes a tree (whose array noise the caller draws); returns the
    next round. Each round: the arms (already ``chosen`` by the caller for the first one), the rewards ``x``
    (Bernoulli from ``uniform``; given by the caller when ``uniform`` is empty), new private means and
    widths, regret and checkpoint; ``done`` marks the runs whose tree just completed."""
    (
        mu_flat,
        gaps,
        mean,
        width_a,
        width_b,
        full,
        pulls,
        tree_k,
        tree_sum,
        tree_leaves,
        node_scale,
        priv_width,
        log2_table,
        stored,
        low_level,
        high_level,
        regret,
        curves,
        grid,
        cursor,
        arm,
        done,
    ) = state
    K = mu_flat.size // arm.size
    while t < stop:
        if not chosen:
            choose_arms(t, K, mean, width_a, width_b, arm)
        chosen, completed = False, False
        for r in range(arm.size):
            j = arm[r]
            if uniform.shape[0]:
                x[r] = bernoulli_reward(uniform[t - start, r], mu_flat[j])
            o = pulls[j] + 1
            pulls[j] = o
            k = tree_k[j] + 1
            tree_k[j] = k
            s = tree_sum[j] + x[r]
            tree_sum[j] = s
            noise = _node_advance(stored, low_level, high_level, j, k, lap[t - start, r] * node_scale[j])
            mean[j] = (full[j] + s + noise) / o
            width_a[j], width_b[j] = hybrid_ucb_widths(o, log2_table[o + 1], priv_width[j])
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
