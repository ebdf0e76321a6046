"""Plain per-round reference of best-arm identification for every user over the anonymous channel.

Papers: Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems* (NeurIPS 2022, paper 000),
Section 3.1 (the 2C+2-round feedback-elicitation sub-algorithm and its anonymity invariant), and Féraud, Alami,
Laroche, *Decentralized Exploration in Multi-Armed Bandits* (ICML 2019, paper 002), Section 3 (the
(epsilon, delta)-PAC subroutines: naive and median elimination, successive elimination and SER3).

:func:`reference_identify` is the slow, literal counterpart of :func:`anonbandits.anonymous.bai.identify`:

* one :class:`RefLearner` per user, a plain loop over its arms, with the papers' sample counts and radii
  written out here (no call into :mod:`anonbandits.core`), every count and squared radius scaled by
  ``4 sigma2`` for estimates of variance proxy ``sigma2``; successive elimination checks after ``growth^b``
  samples per arm (the batched learners' documented decision);
* per batch the learners' demands and supports form a demand graph that ``anondecomp.decompose`` decomposes
  (:func:`plain_decompose`; the decomposer is the solver under test elsewhere, not part of the loop);
* then :class:`PlainChannel` plays every repetition of every assignment, one round at a time: each user plays
  its arm and draws its reward, the users of each arm are split into groups of C+1 to 2C+1 (index order), the
  auditor counts each observed group and refuses one below C, releases its sum, and after 2C+2 rounds each
  grouped user recovers ``r_{s,0} - r_{s,k}``; a user keeps its first ``wanted`` estimates of a pair and
  discards (and counts) the rest.

Random streams: the learners draw their tie-breaking numbers in the order the vectorised learners do (one
``random(K)`` per live user in index order for the best arm, then, for median elimination, one more per live
user), so both take the same decisions on the same sums; the rewards are drawn one by one (the fast channel
draws the sum of many repetitions at once), so on random rewards the two agree in law, and on deterministic
rewards (Bernoulli means 0 or 1) exactly. Written for clarity, not speed: the baseline of
``benchmarks/anonymous_bai_speed.py``. :class:`PlainChannel` and :func:`plain_decompose` also serve the regret
loop of :mod:`anonbandits.reference.anonymous_regret`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

import anondecomp
from anonbandits.errors import AnonBanditsError, AnonymityViolation
from anonbandits.reference import oracle

UNIT = 0.25  # variance proxy of a reward in [0, 1]: the papers' counts and radii are written for it


class RefLearner:
    """One user's (epsilon, delta)-PAC elimination, batch by batch: the Arm Selection subroutines of paper 002's
    Section 3 (naive and median elimination and successive elimination of Even-Dar et al. 2006, SER3 of
    Allesiardo et al. 2017)."""

    def __init__(self, kind: str, k: int, approx: float, delta: float, sigma2: float, growth: int = 2) -> None:
        self.kind, self.k, self.approx, self.delta, self.sigma2, self.growth = kind, k, approx, delta, sigma2, growth
        self.S = list(range(k))  # arms still in play
        self.sums = [0.0] * k
        self.cnt = [0] * k
        self.batch = 0  # completed batches (median elimination: completed phases)

    @property
    def exploring(self) -> bool:
        return len(self.S) > 1

    def per_arm(self) -> int:
        """Samples of each arm of S wanted in the next batch (0 once stopped)."""
        if not self.exploring:
            return 0
        eps = self.approx / math.sqrt(self.sigma2 / UNIT)  # a count for proxy sigma2 is 4 sigma2 times longer
        if self.kind == "naive":  # naive elimination: ceil(4/eps^2 log(2K/delta)) samples of every arm
            return math.ceil(4.0 / eps**2 * math.log(2 * self.k / self.delta))
        if self.kind == "median":  # median elimination: phase l has eps_l = eps/4 (3/4)^(l-1), delta_l = delta/2^l
            phase = self.batch + 1
            eps_l = eps / 4 * 0.75 ** (phase - 1)
            delta_l = self.delta / 2.0**phase
            return math.ceil(4 * math.log(3 / delta_l) / eps_l**2)
        return self.growth**self.batch - max(self.cnt)  # se, ser3: up to growth^b samples per arm

    def demand(self) -> list[int]:
        n = self.per_arm()
        return [n if a in self.S else 0 for a in range(self.k)]

    def two_radius(self, tau: int) -> float:
        """Twice the radius of successive elimination (SE) and SER3 after tau samples per arm, for proxy sigma2."""
        den = 2 if self.kind == "ser3" else 1
        log = max(math.log(4 * self.k * tau * tau / self.delta), 0.0)
        return 2 * math.sqrt(log / (den * tau)) * math.sqrt(self.sigma2 / UNIT)

    def update(self, sums: list[float], counts: list[int], tie: list[float], order_tie: list[float] | None) -> None:
        """Add the batch, then eliminate; ``tie`` (and for median ``order_tie``) break ties, one per arm."""
        for a in range(self.k):
            self.sums[a] += sums[a]
            self.cnt[a] += counts[a]
        self.batch += 1
        mean = {a: self.sums[a] / self.cnt[a] for a in self.S}
        top = max(mean.values())
        best = max((a for a in self.S if mean[a] == top), key=lambda a: tie[a])
        if self.kind == "naive":
            self.S = [best]
        elif self.kind == "median":  # keep the ceil(s/2) best by this phase's samples, then forget them
            assert order_tie is not None  # median elimination draws its order ties
            ranked = sorted(self.S, key=lambda a: (-mean[a], order_tie[a]))
            keep = set(ranked[: (len(self.S) + 1) // 2])
            self.S = [a for a in self.S if a in keep]
            self.sums, self.cnt = [0.0] * self.k, [0] * self.k
        else:
            tau = max(self.cnt)
            bound = self.two_radius(tau)
            self.S = [a for a in self.S if a == best or mean[best] - mean[a] + self.approx < bound]

    def recommendation(self) -> int:
        """The arm left; while exploring the arm of S with the best mean so far (lowest index on ties)."""
        seen = [a for a in self.S if self.cnt[a] > 0]
        if not seen:
            return self.S[0]
        return max(seen, key=lambda a: (self.sums[a] / self.cnt[a], -a))


@dataclass
class ReferenceRun:
    """What :func:`reference_identify` reports: the metrics and info of :func:`~anonbandits.anonymous.identify`'s
    result, plus the auditor's record."""

    rounds: int
    stopped_at: list[int]
    recommendation: list[int]
    samples: int
    surplus: int
    batches: int
    assignments: int
    min_group_size: int | None
    group_sizes: dict[int, int] = field(default_factory=dict)  # group size -> observations released


def plain_groups(assignment: list[int], C: int) -> tuple[list[int], list[int], list[list[int]]]:
    """Step 1 of the sub-algorithm: each arm's users (index order) in floor(n_j/(C+1)) groups of C+1..2C+1
    users, the first ``n_j mod s`` groups one user larger. Returns each user's group (-1: none), its 1-based
    position, and the members of each group."""
    by_arm: dict[int, list[int]] = {}
    for i, a in enumerate(assignment):
        by_arm.setdefault(a, []).append(i)
    group = [-1] * len(assignment)
    position = [0] * len(assignment)
    members: list[list[int]] = []
    for arm in sorted(by_arm):
        users = by_arm[arm]
        s = len(users) // (C + 1)
        if s == 0:
            continue
        size, extra = divmod(len(users), s)
        start = 0
        for g in range(s):
            grp = users[start : start + size + (1 if g < extra else 0)]
            start += len(grp)
            for pos, i in enumerate(grp, start=1):
                group[i], position[i] = len(members), pos
            members.append(grp)
    return group, position, members


class PlainChannel:
    """The anonymous channel one round and one user at a time: rewards, the sub-algorithm's groups, the auditor,
    each user's estimates, the clock and the pseudo-regret (summed over users) of every round.

    ``mu`` (N, K) are Bernoulli means; nothing is played at or beyond ``horizon`` (``None``: no horizon), and the
    cumulative regret is recorded after each round listed in ``record_at``.
    """

    def __init__(
        self,
        mu: np.ndarray,
        C: int,
        reward_rng: np.random.Generator,
        horizon: int | None = None,
        record_at: list[int] | None = None,
    ) -> None:
        self.mu = [[float(x) for x in row] for row in mu]
        self.gaps = [[max(row) - x for x in row] for row in self.mu]
        self.C, self.rng, self.horizon = C, reward_rng, horizon
        self.t, self.regret = 0, 0.0
        self.sizes: dict[int, int] = {}  # group size -> observations released
        self.record_at = sorted(set(record_at or []))
        self.recorded: dict[int, float] = {0: 0.0} if 0 in self.record_at else {}
        self._next = 1 if 0 in self.record_at else 0

    @property
    def done(self) -> bool:
        return self.horizon is not None and self.t >= self.horizon

    def _tick(self, rate: float) -> None:
        """One round played, of pseudo-regret ``rate`` summed over users."""
        self.t += 1
        self.regret += rate
        if self._next < len(self.record_at) and self.record_at[self._next] == self.t:
            self.recorded[self.t] = self.regret
            self._next += 1

    def play(self, arms: list[int]) -> None:
        """Every user plays its arm of ``arms``, with no feedback, round after round to the horizon."""
        rate = sum(self.gaps[i][a] for i, a in enumerate(arms))
        while not self.done:
            self._tick(rate)

    def elicit(
        self, assignments: list[list[int]], reps: list[int], wanted: list[list[int]], method: str, batch: int
    ) -> tuple[list[list[float]], list[list[int]], int, bool]:
        """Every repetition of every assignment, 2C+2 rounds each, one user at a time; each (user, arm) pair keeps
        its first ``wanted`` estimates. Returns their sums and counts, the discarded surplus, and whether every
        repetition ran (a repetition cut by the horizon releases its rounds' groups but gives no estimate)."""
        n, k, C = len(self.mu), len(wanted[0]), self.C
        got_sum = [[0.0] * k for _ in range(n)]
        got_cnt = [[0] * k for _ in range(n)]
        surplus, per_run = 0, 2 * C + 2
        for row, m in zip(assignments, reps, strict=True):
            rate = sum(self.gaps[i][a] for i, a in enumerate(row))
            for _ in range(m):
                group, position, members = plain_groups(row, C)
                released = []  # released[r][s]: the sum of group s's observed members in round r
                for r in range(per_run):
                    if self.done:
                        return got_sum, got_cnt, surplus, False
                    total = [0.0] * len(members)
                    size = [0] * len(members)
                    for i in range(n):
                        reward = 1.0 if self.rng.random() < self.mu[i][row[i]] else 0.0
                        s = group[i]
                        if s >= 0 and position[i] != r:  # round r > 0 leaves out the r-th member
                            total[s] += reward
                            size[s] += 1
                    for s in range(len(members)):  # the auditor
                        if size[s] < C:
                            raise AnonymityViolation(f"group {s} of round {r} has {size[s]} users, fewer than C = {C}")
                        self.sizes[size[s]] = self.sizes.get(size[s], 0) + 1
                    released.append(total)
                    self._tick(rate)
                for i in range(n):
                    s, a = group[i], row[i]
                    if s < 0:
                        continue
                    if got_cnt[i][a] < wanted[i][a]:
                        got_sum[i][a] += released[0][s] - released[position[i]][s]
                        got_cnt[i][a] += 1
                    else:
                        surplus += 1
        if got_cnt != wanted:
            raise AnonBanditsError(f"decomposer {method!r} left pairs below their demand in batch {batch}")
        return got_sum, got_cnt, surplus, True


def plain_decompose(
    learners: list, wanted: list[list[int]], C: int, decomposer: str, rng: np.random.Generator, batch: int
) -> anondecomp.Decomposition:
    """One batch's demand graph and its decomposition: a learner still exploring may be assigned any arm, one
    that stopped (``exploring`` False) plays its ``recommendation()`` only."""
    n, k = len(wanted), len(wanted[0])
    support = [[True] * k if lr.exploring else [a == lr.recommendation() for a in range(k)] for lr in learners]
    graph = anondecomp.DemandGraph.from_weights(np.array(wanted, dtype=np.int64), support=np.array(support))
    for j in range(k):
        wants = any(wanted[i][j] > 0 for i in range(n))
        if wants and sum(support[i][j] for i in range(n)) < C + 1:
            raise AnonBanditsError(f"batch {batch}: arm {j} is wanted but fewer than C + 1 = {C + 1} users can play it")
    return anondecomp.decompose(graph, C, method=decomposer, rng=rng, improve=False, reseat=False)  # as the drivers


@oracle
def reference_identify(
    mu: np.ndarray,
    subroutine: str,
    *,
    C: int,
    approx: float,
    delta: float,
    decomposer: str,
    reward_rng: np.random.Generator,
    learner_rng: np.random.Generator,
    decomposer_rng: np.random.Generator | None = None,
    growth: int = 2,
    max_rounds: int = 10**9,
) -> ReferenceRun:
    """Per-user best-arm identification over the anonymous channel, one round and one user at a time.

    ``mu`` (N, K) are Bernoulli means; ``sigma2`` of every estimate is ``(4C+1)/4`` (Lemma 2 of paper 000).
    Stops when every learner has one arm left, or before a batch that would pass ``max_rounds``.
    """
    n, k = mu.shape
    sigma2 = (4 * C + 1) / 4
    learners = [RefLearner(subroutine, k, approx, delta, sigma2, growth) for _ in range(n)]
    dec_rng = decomposer_rng if decomposer_rng is not None else learner_rng
    channel = PlainChannel(mu, C, reward_rng)
    samples = surplus = batches = assignments = 0
    stopped_at = [-1 if lr.exploring else 0 for lr in learners]
    per_run = 2 * C + 2
    while any(lr.exploring for lr in learners):
        wanted = [lr.demand() for lr in learners]
        res = plain_decompose(learners, wanted, C, decomposer, dec_rng, batches + 1)
        reps = [int(m) for m in res.multiplicities]
        if channel.t + sum(reps) * per_run > max_rounds:
            break
        got_sum, got_cnt, extra, _ = channel.elicit(res.assignments.tolist(), reps, wanted, res.method, batches + 1)
        surplus += extra
        assignments += sum(reps)
        live = [i for i in range(n) if any(wanted[i])]
        ties = {i: np.asarray(learner_rng.random(k)).tolist() for i in live}
        orders = {i: np.asarray(learner_rng.random(k)).tolist() for i in live} if subroutine == "median" else {}
        for i in live:
            learners[i].update(got_sum[i], got_cnt[i], ties[i], orders.get(i))
            samples += sum(got_cnt[i])
            if not learners[i].exploring:
                stopped_at[i] = channel.t
        batches += 1
    sizes = channel.sizes
    return ReferenceRun(
        rounds=channel.t,
        stopped_at=stopped_at,
        recommendation=[lr.recommendation() for lr in learners],
        samples=samples,
        surplus=surplus,
        batches=batches,
        assignments=assignments,
        min_group_size=min(sizes) if sizes else None,
        group_sizes=sizes,
    )
