"""Plain per-round Python loops for the single-learner private bandits (paper 001 and its DP-SE baseline).

Papers: Hu, Huang and Mehta, *Near-Optimal Algorithms for Private Online Learning in a Stochastic
Environment* (arXiv v2), Algorithm 1 (Anytime-Lazy-UCB) and Algorithm 4 (Hybrid-UCB); Sajed and Sheffet,
*An Optimal Private Stochastic-MAB Algorithm Based on an Optimal Private Stopping Rule* (ICML 2019), DP-SE.
One reward draw and one decision per loop iteration, written for clarity; ``benchmarks/dp_ucb_speed.py`` times
the first two against the simulators of :mod:`anonbandits.dp`, and the tests compare Hybrid-UCB's with
:func:`anonbandits.dp.hybrid_ucb_batch`.
"""

from __future__ import annotations

import math

import numpy as np

from anonbandits.core.radii import dpse_threshold
from anonbandits.core.schedules import epoch_length
from anonbandits.reference import oracle


@oracle
def per_round_dp_se(mu: np.ndarray, eps: float, horizon: int, rng: np.random.Generator) -> float:
    """DP-SE with one Bernoulli draw and one decision per round; returns the pseudo-regret."""
    beta, best = 1 / horizon, float(mu.max())
    active, epoch, t, regret = list(range(mu.size)), 1, 0, 0.0
    length = epoch_length(len(active), epoch, beta, eps)
    sums, pulled, turn = [0.0] * mu.size, 0, 0
    while t < horizon:
        arm = active[turn]
        sums[arm] += rng.random() < mu[arm]
        regret += best - mu[arm]
        t += 1
        turn += 1
        if turn == len(active):
            turn, pulled = 0, pulled + 1
            if pulled == length and len(active) > 1:
                noisy = [(sums[a] + rng.laplace(0, 1 / eps)) / length for a in active]
                width = dpse_threshold(len(active), epoch, length, beta, eps)
                top = max(noisy)
                active = [a for a, m in zip(active, noisy, strict=True) if top - m <= width]
                epoch, pulled, sums = epoch + 1, 0, [0.0] * mu.size
                length = epoch_length(len(active), epoch, beta, eps)
    return regret


@oracle
def per_round_lazy_ucb(mu: np.ndarray, eps: float, horizon: int, rng: np.random.Generator) -> float:
    """Anytime-Lazy-UCB with one Bernoulli draw and one index computation per round."""
    K = mu.size
    mean = [float(rng.random() < mu[j]) + rng.laplace(0, 1 / eps) for j in range(K)]
    size, count, total = [1.0] * K, [0] * K, [0.0] * K
    best = float(mu.max())
    regret = float((best - mu).sum())
    for t in range(K + 1, horizon + 1):
        log_t = math.log(t)
        index = [mean[j] + math.sqrt(3 * log_t / size[j]) + 3 * log_t / (eps * size[j]) for j in range(K)]
        j = index.index(max(index))
        total[j] += rng.random() < mu[j]
        count[j] += 1
        regret += best - mu[j]
        if count[j] == 2 * size[j]:
            size[j] *= 2
            mean[j] = (total[j] + rng.laplace(0, 1 / eps)) / size[j]
            count[j], total[j] = 0, 0.0
    return regret


@oracle
def per_round_hybrid_ucb(
    mu: np.ndarray,
    eps: float,
    horizon: int,
    rng: np.random.Generator,
    *,
    exact_rewards: bool = False,
    tree_noise: str = "paper",
) -> tuple[float, list[int]]:
    """Hybrid-UCB (paper 001, Algorithm 4) round by round from the paper; returns (pseudo-regret, pulls per arm).

    Each arm keeps its full arrays' noisy sums (one Lap(2/eps) each) and its current tree r of 2^r leaves with
    one persistent Lap(2r/eps) per dyadic node (Lap(2(r+1)/eps) with ``tree_noise="exact"``), drawn when the
    node is first read; its private mean is (full arrays + noisy prefix sum of the tree) / O. ``exact_rewards``
    makes every reward equal its mean (Bernoulli otherwise).
    """
    K, shift, best = mu.size, int(tree_noise == "exact"), float(mu.max())

    def reward(j: int) -> float:
        return float(mu[j]) if exact_rewards else float(rng.random() < mu[j])

    full = [reward(j) + rng.laplace(0, 2 / eps) for j in range(K)]
    leaves: list[list[float]] = [[] for _ in range(K)]
    nodes: list[dict[tuple[int, int], float]] = [{} for _ in range(K)]
    tree, pulls, mean = [1] * K, [1] * K, list(full)
    regret = float(sum(best - m for m in mu))
    for t in range(K + 1, horizon + 1):
        log_t = math.log2(t)
        index = [
            mean[j]
            + math.sqrt(3 * log_t / pulls[j])
            + 6 * math.sqrt(8) * log_t * math.floor(math.log2(pulls[j] + 1)) / (eps * pulls[j])
            for j in range(K)
        ]
        j = index.index(max(index))
        regret += best - mu[j]
        pulls[j] += 1
        leaves[j].append(reward(j))
        k, r = len(leaves[j]), tree[j]
        prefix, start = 0.0, 0
        for level in range(r, -1, -1):  # the dyadic blocks of leaves 1..k, largest first
            if k >> level & 1:
                key = (start, level)
                if key not in nodes[j]:
                    nodes[j][key] = rng.laplace(0, 2 * (r + shift) / eps)
                prefix += sum(leaves[j][start : start + 2**level]) + nodes[j][key]
                start += 2**level
        mean[j] = (full[j] + prefix) / pulls[j]
        if k == 2**r:  # the tree is full: it becomes an array with its own Lap(2/eps)
            full[j] += sum(leaves[j]) + rng.laplace(0, 2 / eps)
            leaves[j], nodes[j], tree[j] = [], {}, r + 1
    return regret, pulls
