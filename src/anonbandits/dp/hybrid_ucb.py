"""Hybrid-UCB: paper 001 (Hu, Huang and Mehta, "Near-Optimal Algorithms for Private Online Learning in a
Stochastic Environment"), Algorithm 4, Sec. 4.2 and Appendix E (spec ``dp-ucb-and-dtol.md`` Sec. 2.2).

Non-lazy and non-forgetful: the pulled arm's private mean is recomputed after every pull from all its
observations, as (noisy sums of the full arrays 0..r-1, each with one persistent Lap(2/eps))
+ (binary-mechanism noisy prefix sum of the current tree r, each dyadic node with one persistent
Lap(2r/eps), or Lap(2(r+1)/eps) with ``tree_noise="exact"``, A6), divided by the pull count O. Index:
``mu~ + sqrt(3 log2 t / O) + 6 sqrt(8) log2(t) floor(log2(O+1)) / (eps O)`` (log base 2, A12). A tree of
2^r leaves completes at O = 2^(r+1) - 1; that update still uses the root's noise, and the array then joins the
Laplace group with a fresh Z (A21, A22).

Simulation: the index of the pulled arm changes after every pull, so the algorithm genuinely needs a decision
every round. :func:`hybrid_ucb_batch` advances a batch of independent runs (each with its own means and
epsilon) in lockstep, one round per step, in a compiled loop over the rounds of a chunk and the runs (the
paper-001 reproduction runs all its 315 Hybrid-UCB runs as one batch); a single run (:func:`hybrid_ucb`, the
simulator's entry) is a batch of one. The loop returns to Python only where the generator must draw in the
middle of a chunk (a completed tree's array noise; every round for a reward model other than Bernoulli), so
the random stream is the one a round-by-round numpy loop would consume. The binary mechanism costs O(1) per
pull: the noisy prefix sum at tree count k is the one stored when the count was k - lowbit(k) plus a fresh
node noise (nodes are created once, at the count that completes them, and reused while their bit is set).
Random numbers are drawn in chunks of rounds (Laplace node noises, Bernoulli uniforms). Ties have probability
zero and go to the lowest index.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from anonbandits.core.schedules import checkpoint_grid
from anonbandits.dp.common import BanditRun, Means, RewardSum, check_epsilon, check_means, check_setup
from anonbandits.envs.rewards import draw_rewards
from anonbandits.errors import ConfigError

TREE_NOISES = ("paper", "exact")
_PRIVACY_WIDTH = 6 * math.sqrt(8)
_LEVELS = 64
_CHUNK = 4096


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


@dataclass(frozen=True)
class HybridBatch:
    """Runs of :func:`hybrid_ucb_batch`: per-run final regret, curves (runs x checkpoints), pulls and the
    private means after the last round (runs x arms)."""

    checkpoints: np.ndarray
    curves: np.ndarray
    regret: np.ndarray
    pulls: np.ndarray
    noisy_means: np.ndarray
    best_arm: np.ndarray
    laplace_draws: np.ndarray


def hybrid_ucb_batch(means: np.ndarray, epsilons: np.ndarray | Sequence[float], horizon: int,
                     rng: np.random.Generator, *, tree_noise: str = "paper",
                     reward: str | RewardSum = "bernoulli", expected_means: np.ndarray | None = None,
                     checkpoints: int | Sequence[int] = 200) -> HybridBatch:
    """Run Hybrid-UCB (paper 001, Algorithm 4) for a batch of independent runs in lockstep.

    Parameters
    ----------
    means : (R, K) arm means per run, or (K,) shared by all runs.
    epsilons : (R,) privacy parameter per run (R is taken from here when ``means`` is 1-D).
    horizon : number of rounds T (at least K).
    rng : random generator of the batch (runs draw from it jointly, so one batch of R runs is not the same
        as R single runs with separate seeds, but has the same law).
    tree_noise : ``"paper"`` (node noise Lap(2r/eps)) or ``"exact"`` (Lap(2(r+1)/eps), A6).
    reward : a model of :mod:`anonbandits.envs.rewards`, or a callable ``sums(mu, counts, rng)``.
    expected_means : (R, K) or (K,) true expected rewards for the pseudo-regret (default: model means).
    checkpoints : number of evenly spaced curve points, or the rounds themselves.
    """
    eps = np.array([check_epsilon(e) for e in np.atleast_1d(np.asarray(epsilons, dtype=float))])
    mu = np.asarray(means, dtype=float)
    mu = np.broadcast_to(mu, (eps.size, mu.shape[-1])) if mu.ndim == 1 else mu
    if mu.ndim != 2 or mu.shape[0] != eps.size:
        raise ConfigError(f"means must be (runs, arms) with one epsilon per run; got {mu.shape}, {eps.size}")
    if tree_noise not in TREE_NOISES:
        raise ConfigError(f"tree_noise must be one of {', '.join(TREE_NOISES)}, got {tree_noise!r}")
    checked = [check_setup(row, horizon, reward, min_horizon=-1) for row in mu]
    T, shift = checked[0][1], int(tree_noise == "exact")
    true = np.stack([c[2] for c in checked]) if expected_means is None else \
        np.broadcast_to(np.asarray(expected_means, dtype=float), mu.shape)
    grid = checkpoint_grid(T, checkpoints)
    R, K = mu.shape
    gaps = (true.max(axis=1, keepdims=True) - true).ravel()
    mu_flat = mu.ravel()
    eps_flat = np.repeat(eps, K)

    def draw(mu_vec: np.ndarray) -> np.ndarray:
        """One reward per entry of ``mu_vec``."""
        if callable(reward):
            return np.asarray(reward(mu_vec, np.ones(mu_vec.size, dtype=np.int64), rng), dtype=float)
        return draw_rewards(reward, mu_vec, rng)

    # Initialization: round j pulls arm j; array 0 gets Z ~ Lap(2/eps); the current tree is r = 1.
    full = draw(mu_flat) + rng.laplace(0.0, 2.0 / eps_flat)     # noisy sum of the full arrays
    pulls = np.ones(R * K, dtype=np.int64)
    tree_r = np.ones(R * K, dtype=np.int64)
    tree_leaves = np.left_shift(1, tree_r)                  # 2^r: the current tree is full at this count
    tree_k = np.zeros(R * K, dtype=np.int64)
    tree_sum = np.zeros(R * K)
    node_scale = 2.0 * (tree_r + shift) / eps_flat          # Lap scale of the current tree's nodes
    priv_width = _PRIVACY_WIDTH / eps_flat
    log2_table = floor_log2(np.arange(T + 2).clip(1)).astype(np.int16)
    tree = TreeNoise(R * K, T)
    mean = full.copy()
    width_a = np.sqrt(3.0 / pulls)
    width_b = priv_width * log2_table[pulls + 1] / pulls
    laplace_draws = np.full(R, K, dtype=np.int64)

    curves = np.zeros((R, grid.size))
    init_cum = np.cumsum(gaps.reshape(R, K), axis=1)
    early = grid <= K
    curves[:, early] = init_cum[:, grid[early] - 1]
    regret = init_cum[:, -1].copy()
    cursor = np.array([np.searchsorted(grid, K, side="right")], dtype=np.int64)   # next checkpoint
    arm = np.empty(R, dtype=np.int64)
    done = np.zeros(R, dtype=np.bool_)
    state = (mu_flat, gaps, mean, width_a, width_b, full, pulls, tree_k, tree_sum, tree_leaves, node_scale,
             priv_width, log2_table, tree.stored, tree.low_level, tree.high_level, regret, curves, grid, cursor,
             arm, done)
    bernoulli, no_uniform = reward == "bernoulli", np.empty((0, R))
    for start in range(K + 1, T + 1, _CHUNK):
        stop = min(start + _CHUNK, T + 1)
        lap = rng.laplace(0.0, 1.0, (stop - start, R))
        uniform = rng.random((stop - start, R)) if bernoulli else no_uniform
        t = start
        while t < stop:
            if bernoulli:
                t = _rounds(t, stop, start, lap, uniform, np.empty(R), False, state)
            else:
                _choose(t, K, mean, width_a, width_b, arm)
                t = _rounds(t, t + 1, start, lap, uniform, draw(mu_flat[arm]), True, state)
            if done.any():  # the completed trees' arrays join the Laplace group with a fresh Z (A21, A22)
                g = arm[done]
                full[g] += tree_sum[g] + rng.laplace(0.0, 2.0 / eps_flat[g])
                tree_sum[g], tree_k[g] = 0.0, 0
                tree_r[g] += 1
                tree_leaves[g] *= 2
                node_scale[g] = 2.0 * (tree_r[g] + shift) / eps_flat[g]
                laplace_draws[done] += 1
                done[:] = False
        laplace_draws += stop - start
    return HybridBatch(checkpoints=grid, curves=curves, regret=regret, pulls=pulls.reshape(R, K),
                       noisy_means=mean.reshape(R, K), best_arm=true.argmax(axis=1), laplace_draws=laplace_draws)


@njit(cache=True)
def _choose(t, K, mean, width_a, width_b, arm):
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
def _rounds(t, stop, start, lap, uniform, x, chosen, state):
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
            _choose(t, K, mean, width_a, width_b, arm)
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


def hybrid_ucb(means: Means, epsilon: float, horizon: int, rng: np.random.Generator, *, tree_noise: str = "paper",
               reward: str | RewardSum = "bernoulli", expected_means: Sequence[float] | None = None,
               checkpoints: int | Sequence[int] = 200) -> BanditRun:
    """Run Hybrid-UCB (paper 001, Algorithm 4) once: a batch of one run of :func:`hybrid_ucb_batch`, whose
    options these are.

    One release is one noisy mean (every round, the K initialization rounds included); the extra metric
    ``laplace_draws`` counts the noise draws (array noises and tree-node noises).
    """
    batch = hybrid_ucb_batch(check_means(means), [check_epsilon(epsilon)], horizon, rng,
                             tree_noise=tree_noise, reward=reward, expected_means=expected_means,
                             checkpoints=checkpoints)
    return BanditRun(regret=float(batch.regret[0]), checkpoints=batch.checkpoints, curve=batch.curves[0],
                     pulls=batch.pulls[0], best_arm=int(batch.best_arm[0]), releases=int(batch.pulls[0].sum()),
                     extra={"laplace_draws": int(batch.laplace_draws[0])})
