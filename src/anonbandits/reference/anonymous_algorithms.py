"""Plain per-round references of Algorithm 1 (anonymous BaSE) and Algorithm 2 (anonymous explore-then-commit).

Papers: Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems* (NeurIPS 2022, paper 000),
Sections 3.3 (Algorithm 1, Theorem 1) and 3.5 (Algorithm 2, Theorem 2); Gao, Han, Ren, Zhou, *Batched
Multi-armed Bandits Problem* (NeurIPS 2019), BaSE with its static minimax, geometric and arithmetic grids.

:func:`reference_batched` is the slow, literal counterpart of :func:`anonbandits.anonymous.anon_batched`:

* one :class:`RefBaSE` per user, a plain loop over its arms: the grid of T' = floor(T / (alpha (2C+2))) rounds
  in M = max(2, ceil(log log T')) batches, ``ceil(D_b / |A_i|)`` samples of each active arm in batch b, and the
  elimination of every sampled arm whose cumulative mean is at least BaSE's radius below the best (radius
  ``sqrt(gamma sigma2 log(T'K) / tau)``, or Gao et al.'s ``sqrt(gamma sigma2 K log(T'K/t_b) / t_b)``), written
  out here with ``sigma2 = (4C+1)/4`` (no call into :mod:`anonbandits.core`); in the last batch every user
  commits to its active arm of best mean (lowest index on ties);
* per exploration batch the active sets form the batched graph (D_b, A) of Section 3.2, checked U-batched by
  ``anondecomp.check_u_batched`` and decomposed by ``anondecomp.decompose`` (the solver layer is under test
  elsewhere, not part of the loop);
* :class:`~anonbandits.reference.anonymous_bai.PlainChannel` plays every repetition of every assignment one
  round and one user at a time (reward draw, the sub-algorithm's groups, the auditor, released sums, each
  user's estimate); BaSE keeps every estimate it is given, also those of a decomposition that over-covers a
  pair (Algorithm 1 as published; the library's documented decision too).

:func:`reference_etc` is the counterpart of :func:`anonbandits.anonymous.anon_etc`: floor(T_exp / (2C+2))
phases (at least one), T_exp = ``scale C^(2/3) K^(1/3) T^(2/3) (log NKT)^(1/3)``; the users split once into
floor(N/(C+1)) groups of C+1 consecutive users (the rest join the last); in phase r group s plays
``(r + s) mod K`` (``arm_offset``) or ``r mod K``, one run of the sub-algorithm per phase; then every user plays
its arm of best estimated mean (unexplored arms last, lowest index on ties) to the horizon.

Not covered: best effort (a graph that is not U-batched) and privacy mechanisms on the released sums.

Random streams: neither algorithm breaks ties at random, and the decomposer draws from its own generator, so with
the same decomposer generator both runs take the same decompositions (``randomized`` included); the rewards are
drawn one by one (the fast channel draws the sum of many repetitions at once), so on random rewards the two agree
in law, and on deterministic rewards (Bernoulli means 0 or 1) exactly. Written for clarity, not speed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

import anondecomp
from anonbandits.errors import AnonBanditsError
from anonbandits.reference import oracle
from anonbandits.reference.anonymous_bai import PlainChannel


def plain_grid(kind: str, horizon: int, batches: int) -> list[int]:
    """Gao et al.'s static grid ``[0, t_1, ..., t_M = T]``: minimax ``t_m = floor(a^(2 - 2^(1-m)))`` with
    ``a = T^(1/(2 - 2^(1-M)))``, geometric ``t_m = floor(T^(m/M))``, arithmetic ``t_m = floor(m T / M)``."""
    points = [0]
    for m in range(1, batches + 1):
        if kind == "arithmetic":
            t = math.floor(m * horizon / batches)
        else:
            e = (2 - 2.0 ** (1 - m)) / (2 - 2.0 ** (1 - batches)) if kind == "minimax" else m / batches
            # a power that is an exact integer may be computed a hair below it: floor it with a tiny guard
            t = math.floor(math.exp(math.log(horizon) * e) * (1 + 1e-12))
        points.append(max(points[-1], min(t, horizon)))
    points[-1] = horizon
    return points


class RefBaSE:
    """One user's BaSE on a static grid of T' rounds, batch by batch."""

    def __init__(self, k: int, grid: list[int], gamma: float, threshold: str, sigma2: float) -> None:
        self.k, self.grid, self.gamma, self.threshold, self.sigma2 = k, grid, gamma, threshold, sigma2
        self.S = list(range(k))  # the active arms
        self.sums = [0.0] * k
        self.cnt = [0] * k
        self.batch = 0  # batches completed

    @property
    def exploring(self) -> bool:
        """Until the grid's last batch, which commits."""
        return self.batch < len(self.grid) - 2

    def length(self) -> int:
        return self.grid[self.batch + 1] - self.grid[self.batch]

    def demand(self) -> list[int]:
        """``ceil(D / |A|)`` samples of each active arm."""
        per = -(-self.length() // len(self.S))
        return [per if a in self.S else 0 for a in range(self.k)]

    def radius(self) -> float:
        horizon = self.grid[-1]
        if self.threshold == "log":
            tau = min(self.cnt[a] for a in self.S)
            return math.inf if tau == 0 else math.sqrt(self.gamma * self.sigma2 * math.log(horizon * self.k) / tau)
        t_b = self.grid[self.batch]
        if t_b <= 0 or any(self.cnt[a] == 0 for a in self.S):
            return math.inf
        return math.sqrt(self.gamma * self.sigma2 * self.k * math.log(horizon * self.k / t_b) / t_b)

    def update(self, sums: list[float], counts: list[int]) -> int:
        """Add the batch's estimates, then eliminate every sampled active arm at least the radius below the
        best; returns how many arms left."""
        for a in range(self.k):
            self.sums[a] += sums[a]
            self.cnt[a] += counts[a]
        self.batch += 1
        sampled = [a for a in self.S if self.cnt[a] > 0]
        if not sampled:
            return 0
        mean = {a: self.sums[a] / self.cnt[a] for a in sampled}
        top, r = max(mean.values()), self.radius()
        out = [a for a in sampled if top - mean[a] >= r]
        self.S = [a for a in self.S if a not in out]
        return len(out)

    # BaSE commits to the active arm of best cumulative mean (lowest index on ties; the first active arm if none
    # was sampled): the rule of the identification learners' recommendation, on the same fields
    def commitment(self) -> int:
        seen = [a for a in self.S if self.cnt[a] > 0]
        if not seen:
            return self.S[0]
        return max(seen, key=lambda a: (self.sums[a] / self.cnt[a], -a))


@dataclass
class ReferenceAlgorithmRun:
    """What :func:`reference_batched` and :func:`reference_etc` report: what they share with the results of
    :func:`~anonbandits.anonymous.anon_batched` and :func:`~anonbandits.anonymous.anon_etc`, plus the auditor's
    record."""

    regret: float
    horizon: int
    exploration_rounds: int
    committed: list[int] | None  # None when the horizon came first
    recommendation: list[int]
    optimal_fraction: float
    batches: list[tuple[int, int, int, int]]  # per batch: (demand, assignments, rounds, arms eliminated)
    group_sizes: dict[int, int] = field(default_factory=dict)  # group size -> observations released
    curve: dict[int, float] = field(default_factory=dict)  # round -> cumulative regret (``record_at``)
    info: dict = field(default_factory=dict)

    @property
    def min_group_size(self) -> int | None:
        """The smallest group the auditor released (``None``: none)."""
        return min(self.group_sizes) if self.group_sizes else None


def _one_repetition(channel: PlainChannel, row: list[int], k: int, method: str, batch: int):
    """One run of the sub-algorithm on ``row``: a user whose arm has at least C+1 users is in a group and gets one
    estimate of its arm (PlainChannel refuses one left without it); the others play without feedback."""
    users = [row.count(a) for a in range(k)]
    grouped = [users[a] >= channel.C + 1 for a in row]
    wanted = [[1 if a == row[i] and grouped[i] else 0 for a in range(k)] for i in range(len(row))]
    return channel.elicit([row], [1], wanted, method, batch)


def _finish(channel: PlainChannel, mu: np.ndarray, recommendation: list[int], batches: list, info: dict):
    exploration = channel.t
    committed = None if channel.done else recommendation
    if committed is not None:
        channel.play(committed)
    best = [mu[i][a] == max(mu[i]) for i, a in enumerate(recommendation)]
    return ReferenceAlgorithmRun(
        regret=channel.regret,
        horizon=channel.t,
        exploration_rounds=exploration,
        committed=committed,
        recommendation=recommendation,
        optimal_fraction=sum(best) / len(best),
        batches=batches,
        group_sizes=channel.sizes,
        curve=channel.recorded,
        info=info,
    )


@oracle
def reference_batched(
    mu: np.ndarray,
    C: int,
    horizon: int,
    *,
    U: int,
    decomposer: str,
    reward_rng: np.random.Generator,
    decomposer_rng: np.random.Generator,
    grid: str = "minimax",
    batches: int = 0,
    gamma: float = 4.0,
    threshold: str = "log",
    alpha: float = 0.0,
    record_at: list[int] | None = None,
) -> ReferenceAlgorithmRun:
    """Algorithm 1 for every user over the anonymous channel, one round and one user at a time.

    ``mu`` (N, K) are Bernoulli means; ``alpha`` 0 takes the decomposer's guarantee (``greedy`` K, every other
    method ``max(1, ceil(K(C+1)/U))``). Raises :class:`AnonBanditsError` if a batch's graph is not U-batched or
    the decomposition leaves a pair below its demand.
    """
    n, k = mu.shape
    r = 2 * C + 2
    alpha = alpha or (k if decomposer == "greedy" else max(1, math.ceil(k * (C + 1) / U)))
    base_horizon = int(horizon // (alpha * r))
    n_batches = batches or max(2, math.ceil(math.log(max(math.log(base_horizon), 1.0))))
    points = plain_grid(grid, base_horizon, n_batches)
    learners = [RefBaSE(k, points, gamma, threshold, (4 * C + 1) / 4) for _ in range(n)]
    channel = PlainChannel(mu, C, reward_rng, horizon, record_at)
    records: list[tuple[int, int, int, int]] = []
    while learners[0].exploring and not channel.done:  # every user on the same grid, in lock step
        demand = learners[0].length()
        if demand == 0:  # an empty batch (a tiny T'): nothing to play
            for lr in learners:
                lr.update([0.0] * k, [0] * k)
            continue
        b = learners[0].batch + 1
        active = [[a in lr.S for a in range(k)] for lr in learners]
        if anondecomp.check_u_batched(np.array(active), U).size:
            raise AnonBanditsError(f"batch {b}: the graph is not {U}-batched")
        graph = anondecomp.DemandGraph.from_batched(float(demand), np.array(active))
        res = anondecomp.decompose(graph, C, method=decomposer, rng=decomposer_rng, improve=False, reseat=False)
        t0, complete = channel.t, True
        sums = [[0.0] * k for _ in range(n)]
        counts = [[0] * k for _ in range(n)]
        for row, m in zip(res.assignments.tolist(), res.multiplicities.tolist(), strict=True):
            for _ in range(int(m)):
                got_sum, got_cnt, _, complete = _one_repetition(channel, row, k, res.method, b)
                if not complete:
                    break
                for i in range(n):
                    sums[i][row[i]] += got_sum[i][row[i]]
                    counts[i][row[i]] += got_cnt[i][row[i]]
            if not complete:
                break
        eliminated = 0
        if complete:
            wanted = [lr.demand() for lr in learners]
            if any(counts[i][a] < wanted[i][a] for i in range(n) for a in range(k)):
                raise AnonBanditsError(f"decomposer {res.method!r} left pairs below their demand in batch {b}")
            eliminated = sum(lr.update(sums[i], counts[i]) for i, lr in enumerate(learners))
        records.append((demand, int(res.multiplicities.sum()), channel.t - t0, eliminated))
    return _finish(
        channel,
        mu,
        [lr.commitment() for lr in learners],
        records,
        {"alpha": alpha, "base_horizon": base_horizon, "grid": points, "batches": n_batches},
    )


def _best_estimate(estimate: list[float]) -> int:
    """The arm of largest estimate, the lowest index on ties."""
    return max(range(len(estimate)), key=lambda a: (estimate[a], -a))


@oracle
def reference_etc(
    mu: np.ndarray,
    C: int,
    horizon: int,
    *,
    reward_rng: np.random.Generator,
    arm_offset: bool = True,
    explore_scale: float = 10.0,
    record_at: list[int] | None = None,
) -> ReferenceAlgorithmRun:
    """Algorithm 2 for every user over the anonymous channel, one round and one user at a time."""
    n, k = mu.shape
    r = 2 * C + 2
    t_exp = explore_scale * C ** (2 / 3) * k ** (1 / 3) * horizon ** (2 / 3) * math.log(n * k * horizon) ** (1 / 3)
    phases = max(1, int(t_exp // r))
    n_groups = n // (C + 1)
    group = [min(i // (C + 1), n_groups - 1) for i in range(n)]
    channel = PlainChannel(mu, C, reward_rng, horizon, record_at)
    sums = [[0.0] * k for _ in range(n)]
    counts = [[0] * k for _ in range(n)]
    for phase in range(1, phases + 1):
        row = [(phase + group[i]) % k if arm_offset else phase % k for i in range(n)]
        got_sum, got_cnt, _, complete = _one_repetition(channel, row, k, "etc", phase)
        if not complete:
            break
        for i in range(n):
            sums[i][row[i]] += got_sum[i][row[i]]
            counts[i][row[i]] += got_cnt[i][row[i]]
    estimate = [[sums[i][a] / counts[i][a] if counts[i][a] else -math.inf for a in range(k)] for i in range(n)]
    recommendation = [_best_estimate(e) for e in estimate]
    record = (phases, min(phases, channel.t // r), channel.t, 0)
    return _finish(channel, mu, recommendation, [record], {"exploration_target": t_exp, "phases": phases})
