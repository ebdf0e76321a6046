"""Hybrid-UCB: paper 001 (``shared/papers/001_e4d726ca676fc96e.txt``), Algorithm 4, Sec. 4.2 and Appendix E
(spec ``dp-ucb-and-dtol.md`` Sec. 2.2).

Non-lazy and non-forgetful: the pulled arm's private mean is recomputed after every pull from all its
observations, as (noisy sums of the full arrays 0..r-1, each with one persistent Lap(2/eps))
+ (binary-mechanism noisy prefix sum of the current tree r, each dyadic node with one persistent
Lap(2r/eps), or Lap(2(r+1)/eps) with ``tree_noise="exact"``, A6), divided by the pull count O. Index:
``mu~ + sqrt(3 log2 t / O) + 6 sqrt(8) log2(t) floor(log2(O+1)) / (eps O)`` (log base 2, A12). A tree of
2^r leaves completes at O = 2^(r+1) - 1; that update still uses the root's noise, and the array then joins the
Laplace group with a fresh Z (A21, A22).

Simulation: the index of the pulled arm changes after every pull, so the algorithm genuinely needs a decision
every round. What is vectorised is the *batch of runs*: :func:`hybrid_ucb_batch` advances many independent
runs (each with its own means and epsilon) in lockstep, one round per step, with numpy over the runs (the
paper-001 reproduction runs all its 315 Hybrid-UCB runs as one batch). A single run (:func:`hybrid_ucb`, the
simulator's entry) uses a scalar loop that performs the same floating-point operations on the same random
numbers, hence returns exactly the batch-of-one result, several times faster. The binary mechanism costs O(1)
per pull: the noisy prefix sum at tree count k is the one stored when the count was k - lowbit(k) plus a fresh
node noise (nodes are created once, at the count that completes them, and reused while their bit is set).
Random numbers are drawn in chunks of rounds (Laplace node noises, Bernoulli uniforms). Ties have probability
zero and go to the lowest index.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from anonbandits.dp.common import (
    BanditRun,
    RewardSum,
    check_epsilon,
    check_horizon,
    check_means,
    check_reward,
    checkpoint_grid,
    expected_rewards,
)
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
        self._low_level = floor_log2(np.maximum(low, 1)).astype(np.int16)
        # Level _LEVELS - 1 is never written: reading it gives the zero noise of "no higher block".
        self._high_level = np.where(high > 0, floor_log2(np.maximum(high & -high, 1)),
                                    _LEVELS - 1).astype(np.int16)
        self.stored = np.zeros(slots * _LEVELS)

    def advance(self, slot: np.ndarray, count: np.ndarray, fresh: np.ndarray) -> np.ndarray:
        base = slot * _LEVELS
        total = self.stored[base + self._high_level.take(count)] + fresh
        self.stored[base + self._low_level[count]] = total
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


def _validate(means, epsilons, horizon, tree_noise, reward, expected_means, checkpoints):
    """Checked (R, K) means, (R,) epsilons, horizon, node-scale shift, true means and checkpoint grid."""
    eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
    for e in eps:
        check_epsilon(e)
    mu = np.asarray(means, dtype=float)
    mu = np.broadcast_to(mu, (eps.size, mu.shape[-1])) if mu.ndim == 1 else mu
    if mu.ndim != 2 or mu.shape[0] != eps.size:
        raise ConfigError(f"means must be (runs, arms) with one epsilon per run; got {mu.shape}, {eps.size}")
    for row in mu:
        check_means(row)
    T = check_horizon(horizon, mu.shape[1])
    if tree_noise not in TREE_NOISES:
        raise ConfigError(f"tree_noise must be one of {', '.join(TREE_NOISES)}, got {tree_noise!r}")
    check_reward(reward)
    if expected_means is None:
        true = np.stack([expected_rewards(reward, row) for row in mu])
    else:
        true = np.broadcast_to(np.asarray(expected_means, dtype=float), mu.shape)
    return mu, eps, T, int(tree_noise == "exact"), true, checkpoint_grid(T, checkpoints)


def _single_draws(reward: str | RewardSum, rng: np.random.Generator):
    """``draw(mu_vec)``: one reward per entry of ``mu_vec``."""
    def draw(mu_vec: np.ndarray) -> np.ndarray:
        if callable(reward):
            return np.asarray(reward(mu_vec, np.ones(mu_vec.size, dtype=np.int64), rng), dtype=float)
        return draw_rewards(reward, mu_vec, rng)
    return draw


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
    mu, eps, T, shift, true, grid = _validate(means, epsilons, horizon, tree_noise, reward, expected_means,
                                              checkpoints)
    R, K = mu.shape
    gaps = (true.max(axis=1, keepdims=True) - true).ravel()
    mu_flat = mu.ravel()
    eps_flat = np.repeat(eps, K)

    draw = _single_draws(reward, rng)

    # Initialization: round j pulls arm j; array 0 gets Z ~ Lap(2/eps); the current tree is r = 1.
    first = draw(mu_flat)
    full = first + rng.laplace(0.0, 2.0 / eps_flat)         # noisy sum of the full arrays
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
    next_cp = int(np.searchsorted(grid, K, side="right"))
    rows = np.arange(R) * K
    index = np.empty(R * K)
    bernoulli = reward == "bernoulli"
    for start in range(K + 1, T + 1, _CHUNK):
        stop = min(start + _CHUNK, T + 1)
        lap = rng.laplace(0.0, 1.0, (stop - start, R))
        if bernoulli:
            uniform = rng.random((stop - start, R))
        for t in range(start, stop):
            log_t = math.log2(t)
            np.multiply(width_a, math.sqrt(log_t), out=index)
            index += width_b * log_t
            index += mean
            f = rows + index.reshape(R, K).argmax(axis=1)
            x = uniform[t - start] < mu_flat[f] if bernoulli else draw(mu_flat[f])
            o = pulls[f] + 1
            pulls[f] = o
            k = tree_k[f] + 1
            tree_k[f] = k
            s = tree_sum[f] + x
            tree_sum[f] = s
            noise = tree.advance(f, k, lap[t - start] * node_scale[f])
            mean[f] = (full[f] + s + noise) / o
            width_a[f] = np.sqrt(3.0 / o)
            width_b[f] = priv_width[f] * log2_table[o + 1] / o
            regret += gaps[f]
            done = k == tree_leaves[f]
            if done.any():
                g = f[done]
                full[g] += tree_sum[g] + rng.laplace(0.0, 2.0 / eps_flat[g])
                tree_sum[g], tree_k[g] = 0.0, 0
                tree_r[g] += 1
                tree_leaves[g] *= 2
                node_scale[g] = 2.0 * (tree_r[g] + shift) / eps_flat[g]
                laplace_draws[done] += 1
            if next_cp < grid.size and t == grid[next_cp]:
                curves[:, next_cp] = regret
                next_cp += 1
        laplace_draws += stop - start
    return HybridBatch(checkpoints=grid, curves=curves, regret=regret, pulls=pulls.reshape(R, K),
                       noisy_means=mean.reshape(R, K), best_arm=true.argmax(axis=1), laplace_draws=laplace_draws)


def _hybrid_single(mu: np.ndarray, eps: float, T: int, rng: np.random.Generator, shift: int,
                   reward: str | RewardSum, gaps: np.ndarray, grid: np.ndarray):
    """One run of Hybrid-UCB with scalar Python state (several times faster than a batch of one run).

    It performs the floating-point operations of :func:`hybrid_ucb_batch` in the same order and draws the
    same random numbers in the same order, so it returns exactly what a batch of this single run returns.
    """
    K = mu.size
    draw = _single_draws(reward, rng)
    full = (draw(mu) + rng.laplace(0.0, 2.0 / np.full(K, eps))).tolist()
    pulls, tree_r, tree_k = [1] * K, [1] * K, [0] * K
    tree_leaves, tree_sum = [2] * K, [0.0] * K
    node_scale = [2.0 * (1 + shift) / eps] * K
    priv_width = _PRIVACY_WIDTH / eps
    stored = [[0.0] * _LEVELS for _ in range(K)]
    mean = list(full)
    width_a = [math.sqrt(3.0)] * K
    width_b = [priv_width] * K                            # floor(log2(2)) / 1 = 1
    gap = gaps.tolist()
    init_cum = np.cumsum(gaps)
    curve = np.zeros(grid.size)
    early = grid <= K
    curve[early] = init_cum[grid[early] - 1]
    regret = float(init_cum[-1])
    next_cp = int(np.searchsorted(grid, K, side="right"))
    cp = grid.tolist() + [T + 1]
    laplace_draws = K
    bernoulli = reward == "bernoulli"
    arms = range(K)
    for start in range(K + 1, T + 1, _CHUNK):
        stop = min(start + _CHUNK, T + 1)
        lap = rng.laplace(0.0, 1.0, (stop - start, 1)).ravel().tolist()
        if bernoulli:
            uniform = rng.random((stop - start, 1)).ravel().tolist()
        for t in range(start, stop):
            log_t = math.log2(t)
            root = math.sqrt(log_t)
            best, j = -math.inf, 0
            for a in arms:
                v = width_a[a] * root + width_b[a] * log_t + mean[a]
                if v > best:
                    best, j = v, a
            i = t - start
            x = float(uniform[i] < mu[j]) if bernoulli else float(draw(mu[j:j + 1])[0])
            o = pulls[j] = pulls[j] + 1
            k = tree_k[j] = tree_k[j] + 1
            s = tree_sum[j] = tree_sum[j] + x
            low = k & -k
            high = k - low
            levels = stored[j]
            noise = (levels[(high & -high).bit_length() - 1] if high else 0.0) + lap[i] * node_scale[j]
            levels[low.bit_length() - 1] = noise
            mean[j] = (full[j] + s + noise) / o
            width_a[j] = math.sqrt(3.0 / o)
            width_b[j] = priv_width * ((o + 1).bit_length() - 1) / o
            regret += gap[j]
            if k == tree_leaves[j]:
                full[j] += s + float(rng.laplace(0.0, 2.0 / np.full(1, eps))[0])
                tree_sum[j], tree_k[j] = 0.0, 0
                tree_r[j] += 1
                tree_leaves[j] *= 2
                node_scale[j] = 2.0 * (tree_r[j] + shift) / eps
                laplace_draws += 1
            if t == cp[next_cp]:
                curve[next_cp] = regret
                next_cp += 1
        laplace_draws += stop - start
    return curve, regret, np.array(pulls), laplace_draws


def hybrid_ucb(means: str | Sequence[float] | np.ndarray, epsilon: float, horizon: int,
               rng: np.random.Generator, *, tree_noise: str = "paper", reward: str | RewardSum = "bernoulli",
               expected_means: Sequence[float] | None = None,
               checkpoints: int | Sequence[int] = 200) -> BanditRun:
    """Run Hybrid-UCB (paper 001, Algorithm 4) once, with scalar state; the options are those of
    :func:`hybrid_ucb_batch`, whose single-run batch gives exactly the same result (same generator).

    One release is one noisy mean (every round, the K initialization rounds included); the extra metric
    ``laplace_draws`` counts the noise draws (array noises and tree-node noises).
    """
    mu, eps, T, shift, true, grid = _validate(check_means(means), [check_epsilon(epsilon)], horizon, tree_noise,
                                              reward, expected_means, checkpoints)
    curve, regret, pulls, draws = _hybrid_single(mu[0], float(eps[0]), T, rng, shift, reward,
                                                    true[0].max() - true[0], grid)
    return BanditRun(regret=regret, checkpoints=grid, curve=curve, pulls=pulls, best_arm=int(true[0].argmax()),
                     releases=T, extra={"laplace_draws": draws})
