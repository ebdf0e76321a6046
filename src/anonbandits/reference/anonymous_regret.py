"""Plain per-round reference of SE and DP-SE with doubling epochs for every user over the anonymous channel, with
the regret of every round.

Papers: Sajed and Sheffet, *An Optimal Private Stochastic-MAB Algorithm Based on an Optimal Private Stopping Rule*
(ICML 2019), DP-SE (Algorithm 1: epochs e = 1, 2, ... of ``R_e`` pulls of every active arm, then an elimination
by the epoch's means alone), as used by Hu, Huang and Mehta, *Near-Optimal Algorithms for Private Online Learning
in a Stochastic Environment* (paper 001); Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User
Systems* (NeurIPS 2022, paper 000), Section 3.1 (the 2C+2-round sub-algorithm and its auditor) and its regret
summed over users.

:func:`reference_regret` is the slow, literal counterpart of :func:`anonbandits.anonymous.batched_regret` with
:class:`~anonbandits.core.learners.EpochElimination`:

* one :class:`RefEpochLearner` per user, a plain loop over its arms, with DP-SE's epoch length and widths
  written out here (no call into :mod:`anonbandits.core`), the statistical term of ``R_e`` and the width
  ``h_e`` scaled for estimates of variance proxy ``sigma2 = (4C+1)/4`` (``R_e = max(ceil(4 sigma2 R_e(inf)),
  R_e(epsilon))``, width ``2 (h_e sqrt(4 sigma2) + c_e)``);
* per epoch (one batch, in lock step) the learners' demands and supports form a demand graph that
  ``anondecomp.decompose`` decomposes, and :class:`~anonbandits.reference.anonymous_bai.PlainChannel` plays every
  round of every repetition one user at a time (reward draw, groups, the auditor, released sums, each user's
  first ``wanted`` estimates), charging each round's pseudo-regret; with DP-SE (``epsilon`` finite) each
  (user, arm) epoch sum gets ``Lap(1/epsilon)``, drawn one by one in (user, arm) order;
* a user that stopped plays its arm in every later batch (it fills groups); once every user has stopped, each
  plays its arm to the horizon. An epoch cut by the horizon is played but gives no update.

Random streams: the rewards are drawn one by one (the fast channel draws the sum of many repetitions at once), so
on random rewards the two agree in law, and on deterministic rewards (Bernoulli means 0 or 1) exactly, noise
included. Written for clarity, not speed: the baseline of ``benchmarks/anonymous_regret_speed.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from anonbandits.reference import oracle
from anonbandits.reference.anonymous_bai import UNIT, PlainChannel, plain_decompose


class RefEpochLearner:
    """One user's SE (``epsilon = inf``) or DP-SE with doubling epochs, epoch by epoch."""

    def __init__(self, k: int, beta: float, epsilon: float, sigma2: float) -> None:
        self.k, self.beta, self.epsilon, self.sigma2 = k, beta, epsilon, sigma2
        self.S = list(range(k))  # arms still in play
        self.e = 1  # the next epoch (1-based)
        self.last = [0.0] * k  # the last epoch's means of the arms of S

    @property
    def exploring(self) -> bool:
        return len(self.S) > 1

    def length(self) -> int:
        """R_e = floor(max(32 ln(8 s e^2/beta) 4^e, 8 ln(4 s e^2/beta) 2^e/epsilon)) + 1 (Delta_e = 2^-e), its
        statistical term alone scaled by 4 sigma2 and rounded up."""
        s, e = len(self.S), self.e
        stat = 32.0 * math.log(8.0 * s * e * e / self.beta) * 4.0**e
        private = 8.0 * math.log(4.0 * s * e * e / self.beta) * 2.0**e / self.epsilon
        return max(math.ceil(self.sigma2 / UNIT * (math.floor(stat) + 1)), math.floor(max(stat, private)) + 1)

    def demand(self) -> list[int]:
        n = self.length() if self.exploring else 0
        return [n if a in self.S else 0 for a in range(self.k)]

    def update(self, sums: list[float], sigma2: float) -> int:
        """The epoch's (noisy) sums of R_e samples per arm of S: keep the arms whose mean is within
        2 (h_e sqrt(4 sigma2) + c_e) of the best; returns how many arms left."""
        s, e, r = len(self.S), self.e, self.length()
        h = math.sqrt(math.log(8.0 * s * e * e / self.beta) / (2.0 * r))
        c = math.log(4.0 * s * e * e / self.beta) / (self.epsilon * r)
        width = 2.0 * (h * math.sqrt(sigma2 / UNIT) + c)
        mean = {a: sums[a] / r for a in self.S}
        top = max(mean.values())
        self.S = [a for a in self.S if top - mean[a] <= width]
        self.last = [mean[a] if a in self.S else 0.0 for a in range(self.k)]
        self.e += 1
        return s - len(self.S)

    def recommendation(self) -> int:
        """The arm left; while exploring the arm of S with the best last epoch mean (lowest index on ties)."""
        return max(self.S, key=lambda a: (self.last[a], -a))


@dataclass
class ReferenceRegretRun:
    """What :func:`reference_regret` reports: what it shares with :func:`~anonbandits.anonymous.batched_regret`'s
    result, plus the auditor's record."""

    regret: float
    horizon: int
    exploration_rounds: int
    committed: list[int] | None  # None when the horizon came before every user stopped
    recommendation: list[int]
    stopped: float  # share of users that stopped exploring
    samples: int
    surplus: int
    batches: list[tuple[int, int, int]]  # per batch: (assignments, rounds, arms eliminated)
    min_group_size: int | None
    group_sizes: dict[int, int] = field(default_factory=dict)  # group size -> observations released
    curve: dict[int, float] = field(default_factory=dict)  # round -> cumulative regret (``record_at``)


@oracle
def reference_regret(
    mu: np.ndarray,
    horizon: int,
    *,
    C: int,
    confidence: float,
    decomposer: str,
    reward_rng: np.random.Generator,
    decomposer_rng: np.random.Generator,
    epsilon: float = math.inf,
    noise_rng: np.random.Generator | None = None,
    record_at: list[int] | None = None,
) -> ReferenceRegretRun:
    """SE (DP-SE for a finite ``epsilon``) for every user over the anonymous channel, one round and one user at
    a time, for ``horizon`` rounds.

    ``mu`` (N, K) are Bernoulli means; ``confidence`` is beta; every estimate has variance proxy ``(4C+1)/4``
    (Lemma 2 of paper 000). The cumulative regret after each round of ``record_at`` is in ``curve``.
    """
    n, k = mu.shape
    sigma2 = (4 * C + 1) / 4
    learners = [RefEpochLearner(k, confidence, epsilon, sigma2) for _ in range(n)]
    channel = PlainChannel(mu, C, reward_rng, horizon, record_at)
    samples = surplus = 0
    batches: list[tuple[int, int, int]] = []
    while any(lr.exploring for lr in learners) and not channel.done:
        wanted = [lr.demand() for lr in learners]
        batch, t0 = len(batches) + 1, channel.t
        res = plain_decompose(learners, wanted, C, decomposer, decomposer_rng, batch)
        reps = [int(m) for m in res.multiplicities]
        got_sum, _, extra, complete = channel.elicit(res.assignments.tolist(), reps, wanted, res.method, batch)
        surplus += extra
        eliminated = 0
        if complete:
            if math.isfinite(epsilon):  # DP-SE: the epoch sums are released with Laplace noise
                assert noise_rng is not None, "a finite epsilon needs noise_rng"
                noise = [[noise_rng.laplace(0.0, 1.0 / epsilon) for _ in range(k)] for _ in range(n)]
                got_sum = [[got_sum[i][a] + (noise[i][a] if wanted[i][a] else 0.0) for a in range(k)] for i in range(n)]
            for i in range(n):
                if any(wanted[i]):
                    eliminated += learners[i].update(got_sum[i], sigma2)
                    samples += sum(wanted[i])
        batches.append((sum(reps), channel.t - t0, eliminated))
    exploration = channel.t
    recommendation = [lr.recommendation() for lr in learners]
    committed = None if channel.done else recommendation
    if committed is not None:
        channel.play(committed)
    sizes = channel.sizes
    return ReferenceRegretRun(
        regret=channel.regret,
        horizon=channel.t,
        exploration_rounds=exploration,
        committed=committed,
        recommendation=recommendation,
        stopped=sum(not lr.exploring for lr in learners) / n,
        samples=samples,
        surplus=surplus,
        batches=batches,
        min_group_size=min(sizes) if sizes else None,
        group_sizes=sizes,
        curve=channel.recorded,
    )
