"""Arm Selection subroutines of paper 002 (002_a84f5dc1d354d2b6.txt, Def. 4 and Sec. 3.1; spec sections 2-3),
vectorised over many learners.

Every learner (a player, or the shared learner of 0-PRIVACY) owns one instance; here the instances of all
learners live in one state dict of arrays with the learners on the first axis (``S`` active arms, ``cnt`` pulls
per arm, ``sums`` reward sums, plus per-subroutine counters). Def. 4 has one pull per call; the simulation
groups the calls of a learner into **blocks**: the pulls between two decision points, during which the
subroutine cannot eliminate anything, so their rewards are drawn at once:

* NAIVE ELIMINATION (spec 3.1) and MEDIAN ELIMINATION (3.2): round-robin in index order; a block is the rest of
  the (median) phase, and the per-arm reward sums of a block are one draw each (binomial for Bernoulli).
  With ``round_blocks`` (needed when means change over time or every pull must be logged) a block is one round.
* SUCCESSIVE ELIMINATION (3.3, fixed index order) and SER3 (3.4, order reshuffled every round): a block is the
  rest of the current round, one reward per arm.
* UGAPEC (3.6): adaptive, so a block is a single pull.

A block can be cut short when the board changes (an arm eliminated globally): :meth:`execute` runs the first
``q`` activations of the block only; a block run completely ends with the subroutine's decision, which returns
the set ``E`` of eliminated arms. ``activations`` of a block are pulls (paper 002: one pull per activation) or,
with ``per_activation="round"`` (the convention of paper 003), rounds.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from anonbandits.errors import ConfigError
from anonbandits.multiagent.decentralized.environment import Environment

SUBROUTINES = ("naive", "median", "se", "ser3", "ugapec")

State = dict[str, np.ndarray]


@dataclass
class Context:
    """What a block needs from the simulation: pull times, the environment, randomness (``rng`` for rewards,
    ``tie_rng`` for shuffles and tie-breaks: separate streams, spec A20). ``record``: report every pull
    (step, arm, reward) in :attr:`Outcome.pulls`, for logging the broadcasts of 0-PRIVACY.

    ``times(rows, offsets)`` returns the global step of activation ``local + offset`` of the learners at
    ``rows`` of the current sub-state (offsets broadcast against ``rows[:, None]``).
    """

    times: Callable[[np.ndarray, np.ndarray], np.ndarray]
    env: Environment
    rng: np.random.Generator
    tie_rng: np.random.Generator
    per_activation: str = "pull"
    need_times: bool = False
    record: bool = False


@dataclass
class Outcome:
    """Result of running (part of) a block for ``n`` learners: arms eliminated (only when the block ran to its
    decision), pulls and reward sums per arm, the pull's step per arm when each arm was pulled once, and
    (multi-round blocks with ``Context.record``) every pull as (steps, arms, rewards)."""

    eliminated: np.ndarray
    counts: np.ndarray
    rewards: np.ndarray
    times: np.ndarray | None
    pulls: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None


def rand_argmax(values: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row-wise index of a largest ``values`` entry among ``mask``, ties broken uniformly at random (A20)."""
    v = np.where(mask, values, -np.inf)
    cand = mask & (v == v.max(axis=1, keepdims=True))
    return np.where(cand, rng.random(v.shape), -1.0).argmax(axis=1)


def _one_hot(idx: np.ndarray, k: int) -> np.ndarray:
    return np.arange(k) == idx[:, None]


class Subroutine:
    """Common state handling; subclasses define blocks and decisions.

    Parameters
    ----------
    k : total number of arms ``K_total`` (kept in the log terms after drops and restarts, A15).
    eps : approximation factor.
    conf : failure-probability parameter (``eta`` in DE, ``delta/N`` in 1-PRIVACY, ``delta`` in 0-PRIVACY; A14).
    """

    name = ""
    extra: tuple[str, ...] = ()

    def __init__(self, k: int, eps: float, conf: float) -> None:
        self.k, self.eps, self.conf = k, float(eps), float(conf)

    def init_state(self, s0: np.ndarray) -> State:
        n = s0.shape[0]
        st: State = {"S": s0.copy(), "cnt": np.zeros((n, self.k), np.int64), "sums": np.zeros((n, self.k))}
        for name in self.extra:
            st[name] = np.zeros(n, np.int64)
        self._reset_counters(st, np.arange(n))
        return st

    def _reset_counters(self, st: State, rows: np.ndarray) -> None:
        for name in self.extra:
            st[name][rows] = 0

    def restart(self, st: State, rows: np.ndarray, arms: np.ndarray) -> None:
        """A fresh instance on ``arms`` for the learners ``rows`` (spec A5)."""
        st["S"][rows] = arms
        st["cnt"][rows] = 0
        st["sums"][rows] = 0.0
        self._reset_counters(st, rows)

    def drop(self, st: State, rows: np.ndarray, arms: np.ndarray) -> None:
        """Remove the globally eliminated ``arms`` from the learners ``rows`` (no message, spec 3)."""
        st["S"][rows] &= ~arms

    def length(self, st: State, mode: str) -> np.ndarray:
        """Activations of each learner's next block."""
        raise NotImplementedError

    def plan(self, st: State, mode: str, bounded: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """``(length, ahead)``: activations of each learner's next block (0: a decision is pending and happens
        at her next activation), and per learner and arm a lower bound on the activations from now until one
        whose decision could eliminate the arm, whatever the rewards (in [0, 1] when ``bounded``); ``ahead``
        has one column when the bound is the same for every arm, and is ``None`` when it is the block's end
        (``max(length, 1)``)."""
        return self.length(st, mode), None

    def execute(self, st: State, q: np.ndarray, ctx: Context) -> Outcome:
        """Run the first ``q`` activations of every learner's next block on ``st`` (in place)."""
        raise NotImplementedError


class _RoundRobin(Subroutine):
    """Subroutines that pull arms in rounds (each arm of ``S`` once per round) and decide at unit ends (a
    round for SE/SER3, a phase for naive/median elimination).

    ``round_blocks=False`` lets a block span rounds: the rest of the unit for naive/median elimination, and for
    SE/SER3 every round up to the first one at which an elimination is possible at all (see
    :meth:`SuccessiveElimination.first_rounds`); the per-arm reward sums of such a block are one draw each.
    Needs stationary means (and, for SE/SER3, rewards in [0, 1]).
    """

    random_order = False

    def __init__(self, k: int, eps: float, conf: float, round_blocks: bool = True) -> None:
        super().__init__(k, eps, conf)
        self.round_blocks = round_blocks

    def target(self, st: State) -> np.ndarray:
        """Pulls per arm at which the current unit ends with a decision."""
        raise NotImplementedError

    def need(self, st: State, target: np.ndarray) -> np.ndarray:
        """Pulls per arm in the next block: the rest of the round, or everything up to ``target``."""
        s, cnt, target = st["S"], st["cnt"], target[:, None]
        if not self.round_blocks:
            return np.where(s, target - cnt, 0)
        level = np.where(s, cnt, np.iinfo(np.int64).max).min(axis=1, keepdims=True)
        return (s & (cnt == level) & (cnt < target)).astype(np.int64)

    @staticmethod
    def _activations(need: np.ndarray, mode: str) -> np.ndarray:
        return need.max(axis=1) if mode == "round" else need.sum(axis=1)

    def plan(self, st: State, mode: str, bounded: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """Votes come only at unit ends."""
        target = self.target(st)
        length = self._activations(self.need(st, target), mode)
        rest = np.where(st["S"], target[:, None] - st["cnt"], 0)
        ends = np.maximum(np.maximum(length, 1), self._activations(rest, mode))
        return length, ends[:, None]

    def execute(self, st: State, q: np.ndarray, ctx: Context) -> Outcome:
        target = self.target(st)
        need = self.need(st, target)
        n = need.shape[0]
        times = None
        if ctx.per_activation == "round":
            counts = np.minimum(need, q[:, None])
            if ctx.need_times:
                times = np.where(counts > 0, ctx.times(np.arange(n), np.ones((1, 1), np.int64)), 0)
        elif not self.round_blocks and ctx.record:
            return self._finish(st, need, q, target, ctx, *self._recorded_pulls(st, need, q, ctx))
        elif not self.round_blocks:
            counts = _water_fill(st["cnt"], need, q, ctx.tie_rng if self.random_order else None)
        else:
            if self.random_order:
                keys = np.where(need > 0, ctx.tie_rng.random(need.shape), 2.0)
                pos = np.argsort(np.argsort(keys, axis=1), axis=1) + 1
            else:
                pos = np.cumsum(need, axis=1)
            counts = ((need > 0) & (pos <= q[:, None])).astype(np.int64)
            if ctx.need_times:
                times = np.where(counts > 0, ctx.times(np.arange(n), pos), 0)
        mu = ctx.env.arm_means(times) if times is not None else np.broadcast_to(ctx.env.means, counts.shape)
        rewards = ctx.env.sums(mu, counts, ctx.rng) if counts.any() else np.zeros(counts.shape)
        return self._finish(st, need, q, target, ctx, counts, rewards, times, None)

    def _recorded_pulls(self, st: State, need: np.ndarray, q: np.ndarray, ctx: Context) -> tuple:
        """Multi-round blocks, pull by pull (stationary means): the round-robin arm sequence of each learner's
        first q pulls, one reward draw per pull."""
        counts, rewards = np.zeros_like(need), np.zeros(need.shape)
        steps, arms, draws = [], [], []
        for i in range(need.shape[0]):
            seq = _round_robin_sequence(st["cnt"][i], need[i], ctx.tie_rng if self.random_order else None)[:q[i]]
            draw = ctx.env.sums(ctx.env.means[seq], np.ones(seq.size, np.int64), ctx.rng)
            counts[i] = np.bincount(seq, minlength=self.k)
            rewards[i] = np.bincount(seq, weights=draw, minlength=self.k)
            steps.append(ctx.times(np.array([i]), np.arange(1, seq.size + 1)[None, :])[0])
            arms.append(seq)
            draws.append(draw)
        pulls = (np.concatenate(steps), np.concatenate(arms), np.concatenate(draws))
        return counts, rewards, None, pulls

    def _finish(self, st: State, need: np.ndarray, q: np.ndarray, target: np.ndarray, ctx: Context,
                counts: np.ndarray, rewards: np.ndarray, times: np.ndarray | None, pulls) -> Outcome:
        """Add the pulls to the statistics; decide for the learners whose unit is complete."""
        st["cnt"] += counts
        st["sums"] += rewards
        eliminated = np.zeros(need.shape, bool)
        complete = (q == self._activations(need, ctx.per_activation))
        complete &= ~np.any(st["S"] & (st["cnt"] < target[:, None]), axis=1)
        self.settle(st, target)
        rows = np.flatnonzero(complete)
        if rows.size:
            eliminated[rows] = self.decide(st, rows, target[rows], ctx.tie_rng)
        return Outcome(eliminated, counts, rewards, times, pulls)

    def settle(self, st: State, target: np.ndarray) -> None:
        """Record progress of a block that ran (part of the way) towards ``target``."""

    def decide(self, st: State, rows: np.ndarray, target: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Eliminated arms of the learners ``rows`` whose unit (ending at ``target`` pulls per arm) is complete."""
        raise NotImplementedError


def _water_fill(base: np.ndarray, need: np.ndarray, q: np.ndarray,
                rng: np.random.Generator | None = None) -> np.ndarray:
    """Per-arm pulls among the first ``q`` pulls of a round-robin block.

    Arm k's pulls in the block are at levels (rounds) ``base_k .. base_k + need_k - 1``, taken level by level;
    the highest fully completed level comes from a vectorised bisection, and the remaining pulls go to the
    first arms of the next level in index order, or to a uniformly random subset of them (``rng``: the round
    order of SER3 is a random permutation).
    """
    full = need.sum(axis=1)
    if np.all(q >= full):
        return need.copy()
    active = need > 0
    big = np.iinfo(np.int64).max // 4
    lo = np.where(active, base, big).min(axis=1)
    hi = np.where(active, base + need, 0).max(axis=1)
    lo = np.minimum(lo, hi)

    def below(level: np.ndarray) -> np.ndarray:
        return np.clip(level[:, None] - base, 0, need).sum(axis=1)

    while np.any(hi > lo):  # largest level R with below(R) <= q
        mid = (lo + hi + 1) // 2
        ok = below(mid) <= q
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid - 1)
    counts = np.clip(lo[:, None] - base, 0, need)
    extra = q - counts.sum(axis=1)
    eligible = active & (base <= lo[:, None]) & (lo[:, None] < base + need)
    if rng is None:
        rank = np.cumsum(eligible, axis=1)
    else:
        keys = np.where(eligible, rng.random(eligible.shape), 2.0)
        rank = np.argsort(np.argsort(keys, axis=1), axis=1) + 1
    counts += eligible & (rank <= extra[:, None])
    return counts


def _round_robin_sequence(base: np.ndarray, need: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
    """The arms of one learner's block in pull order: level by level (round by round), in index order or in a
    random order per level (SER3)."""
    if not need.any():
        return np.empty(0, np.int64)
    levels = np.arange(base[need > 0].min(), (base + need).max())[:, None]
    valid = (base <= levels) & (levels < base + need)
    keys = rng.random(valid.shape) if rng is not None else np.arange(base.size, dtype=float)[None, :]
    order = np.argsort(np.where(valid, keys, np.inf), axis=1, kind="stable")
    return order[np.arange(base.size) < valid.sum(axis=1, keepdims=True)]


class NaiveElimination(_RoundRobin):
    """NAIVE ELIMINATION (Even-Dar et al. 2006; spec 3.1): ``ceil(4/eps^2 log(2K/conf))`` pulls per arm in
    round-robin, then keep the empirical best (L = 1)."""

    name = "naive"

    def __init__(self, k: int, eps: float, conf: float, round_blocks: bool = True) -> None:
        super().__init__(k, eps, conf, round_blocks)
        self.ell = math.ceil(4.0 / self.eps**2 * math.log(2 * k / self.conf))

    def target(self, st: State) -> np.ndarray:
        return np.full(st["S"].shape[0], self.ell, np.int64)

    def decide(self, st: State, rows: np.ndarray, target: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        s = st["S"][rows]
        best = rand_argmax(st["sums"][rows] / np.maximum(st["cnt"][rows], 1), s, rng)
        return s & ~_one_hot(best, self.k)


class MedianElimination(_RoundRobin):
    """MEDIAN ELIMINATION (Even-Dar et al. 2006; spec 3.2, A19): phase l pulls every arm of S_l
    ``ceil(4 log(3/delta_l)/eps_l^2)`` times (fresh estimates per phase), then keeps the ceil(|S_l|/2) best
    (random tie-break); ``eps_1 = eps/4``, ``delta_1 = conf/2``, ``eps_{l+1} = 3 eps_l/4``,
    ``delta_{l+1} = delta_l/2``."""

    name = "median"
    extra = ("phase",)

    def _reset_counters(self, st: State, rows: np.ndarray) -> None:
        st["phase"][rows] = 1

    def target(self, st: State) -> np.ndarray:
        phase = st["phase"].astype(float)
        eps_l = self.eps / 4 * 0.75 ** (phase - 1)
        delta_l = self.conf / 2.0**phase
        return np.ceil(4 * np.log(3 / delta_l) / eps_l**2).astype(np.int64)

    def decide(self, st: State, rows: np.ndarray, target: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        s = st["S"][rows]
        mu = np.where(s, st["sums"][rows] / np.maximum(st["cnt"][rows], 1), -np.inf)
        order = np.lexsort((rng.random(s.shape), -mu), axis=-1)
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.broadcast_to(np.arange(self.k), order.shape), axis=1)
        keep = rank < ((s.sum(axis=1) + 1) // 2)[:, None]
        st["phase"][rows] += 1
        st["cnt"][rows] = 0
        st["sums"][rows] = 0.0
        return s & ~keep


class SuccessiveElimination(_RoundRobin):
    """SUCCESSIVE ELIMINATION (Even-Dar et al. 2006; spec 3.3): rounds in fixed index order; after round r,
    eliminate k when ``mu_b - mu_k + eps >= 2 sqrt(log(c K r^2/conf)/r)`` (b the empirical best, c = 4).

    ``tau`` counts the settled rounds: decided, or skipped inside a block because no elimination was possible.
    """

    name = "se"
    extra = ("tau",)

    def __init__(self, k: int, eps: float, conf: float, c: float = 4.0, round_blocks: bool = True) -> None:
        super().__init__(k, eps, conf, round_blocks)
        self.c = float(c)
        self._reach, self._inverse = _reach_table(type(self), k, self.eps, self.conf, self.c)

    @staticmethod
    def radius_of(tau: np.ndarray, k: int, conf: float, c: float) -> np.ndarray:
        return np.sqrt(np.log(c * k * tau**2 / conf) / tau)

    def radius(self, tau: np.ndarray) -> np.ndarray:
        return self.radius_of(tau, self.k, self.conf, self.c)

    def first_rounds(self, st: State) -> np.ndarray:
        """Per learner and arm, a round before which the arm cannot be eliminated, whatever the rewards in
        [0, 1]: at round R the empirical gap to any b is at most ``(u_b + R - sum_k)/R`` with
        ``u_b = sum_b - cnt_b`` (all future rewards of b equal to 1, of k equal to 0), so elimination needs
        ``R (1 + eps - 2 radius(R)) >= sum_k - max_{b != k} u_b`` (a lookup in a non-decreasing table)."""
        s = st["S"]
        u = np.where(s, st["sums"] - st["cnt"], -np.inf)
        top2 = -np.partition(-u, 1, axis=1)[:, :2]
        other = np.where(u >= top2[:, :1], top2[:, 1:], top2[:, :1])
        need = np.where(s, st["sums"] - other, 0.0)
        first = _first_reaching(self._reach, self._inverse, need) + 1
        return np.maximum(first, (st["tau"] + 1)[:, None])

    def _target(self, st: State, first: np.ndarray | None) -> np.ndarray:
        if self.round_blocks:
            return st["tau"] + 1
        return np.where(st["S"], first, np.iinfo(np.int64).max).min(axis=1)

    def target(self, st: State) -> np.ndarray:
        return self._target(st, None if self.round_blocks else self.first_rounds(st))

    def plan(self, st: State, mode: str, bounded: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """Arm k cannot be voted before the end of round :meth:`first_rounds`; rounds after the next block
        take at least 2 pulls (1 activation in round mode) while the learner still has 2 arms."""
        first = self.first_rounds(st) if bounded or not self.round_blocks else None
        target = self._target(st, first)
        length = self._activations(self.need(st, target), mode)
        soon = np.maximum(length, 1)
        if first is None:
            return length, None
        later = first - target[:, None]
        if mode == "round":
            return length, soon[:, None] + later
        return length, np.maximum(soon[:, None], length[:, None] + 2 * later)

    def settle(self, st: State, target: np.ndarray) -> None:
        """Rounds completed inside a block, before its target, had no possible elimination."""
        done = np.where(st["S"], st["cnt"], np.iinfo(np.int64).max).min(axis=1)
        st["tau"] = np.maximum(st["tau"], np.minimum(done, target - 1))

    def decide(self, st: State, rows: np.ndarray, target: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        st["tau"][rows] = target
        tau = target.astype(float)
        s = st["S"][rows]
        mu = st["sums"][rows] / tau[:, None]
        best = rand_argmax(mu, s, rng)
        mu_best = mu[np.arange(len(rows)), best]
        out = s & (mu_best[:, None] - mu + self.eps >= 2 * self.radius(tau)[:, None])
        return out & ~_one_hot(best, self.k)


INVERSE_SIZE = 1 << 16  # integer arguments covered by the inverse of the reach table


@functools.lru_cache(maxsize=64)
def _reach_table(cls: type, k: int, eps: float, conf: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    """``reach(R) = max_{R' <= R} R' (1 + eps - 2 radius(R'))`` for R = 1..2^17, non-decreasing (see
    :meth:`SuccessiveElimination.first_rounds`), and its inverse at the integers ``floor(reach(1)) + i``
    (``searchsorted`` of each); cached, as many runs share their parameters."""
    r = np.arange(1, 2**17 + 1, dtype=float)
    table = np.maximum.accumulate(r * (1 + eps - 2 * cls.radius_of(r, k, conf, c)))
    inverse = np.searchsorted(table, np.floor(table[0]) + np.arange(INVERSE_SIZE), side="left")
    table.flags.writeable = inverse.flags.writeable = False
    return table, inverse


def _first_reaching(table: np.ndarray, inverse: np.ndarray, need: np.ndarray) -> np.ndarray:
    """``searchsorted(table, need, side="left")``. Bernoulli rewards make ``need`` integer-valued: then it is a
    lookup in ``inverse`` (a binary search costs ~40 ns per entry, a lookup ~2 ns)."""
    idx = need - np.floor(table[0])
    fast = (idx == np.floor(idx)) & (idx < inverse.size)
    first = inverse[np.clip(idx, 0, inverse.size - 1).astype(np.int64)]
    if not fast.all():
        first[~fast] = np.searchsorted(table, need[~fast], side="left")
    return first


class SER3(SuccessiveElimination):
    """SER3, SUCCESSIVE ELIMINATION WITH RANDOMIZED ROUND-ROBIN (Allesiardo et al. 2017; spec 3.4, A12): the
    order is reshuffled every round; Hoeffding radius ``sqrt(log(4 K tau^2/conf)/(2 tau))``."""

    name = "ser3"
    random_order = True

    def __init__(self, k: int, eps: float, conf: float, round_blocks: bool = True) -> None:
        super().__init__(k, eps, conf, c=4.0, round_blocks=round_blocks)

    @staticmethod
    def radius_of(tau: np.ndarray, k: int, conf: float, c: float) -> np.ndarray:
        return np.sqrt(np.log(4 * k * tau**2 / conf) / (2 * tau))


class UGapEc(Subroutine):
    """UGAPEC (Gabillon, Ghavamzadeh, Lazaric 2012), fixed confidence, m = 1 (spec 3.6, A13): every arm once
    in random order, then pull the more uncertain of J (smallest gap index B) and u (largest UCB besides J);
    stop once ``B_J < eps`` and eliminate every arm but J at once. ``beta_k = sqrt(log(4 K t^3/conf)/(2 T_k))``
    (b = 1, c = 1/2), t = pulls of this instance so far."""

    name = "ugapec"
    extra = ("t", "next")

    def _reset_counters(self, st: State, rows: np.ndarray) -> None:
        st["t"][rows] = 0
        st["next"][rows] = -1

    def length(self, st: State, mode: str) -> np.ndarray:
        return np.ones(st["S"].shape[0], np.int64)

    def drop(self, st: State, rows: np.ndarray, arms: np.ndarray) -> None:
        super().drop(st, rows, arms)
        st["next"][rows] = -1

    def _indices(self, st: State, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        """(beta, U, B, J) over the active arms (every active arm pulled at least once)."""
        s, cnt = st["S"], st["cnt"]
        t = np.maximum(st["t"], 1).astype(float)[:, None]
        beta = np.sqrt(0.5 * np.log(4 * self.k * t**3 / self.conf) / np.maximum(cnt, 1))
        mu = st["sums"] / np.maximum(cnt, 1)
        upper = np.where(s, mu + beta, -np.inf)
        top2 = -np.partition(-upper, 1, axis=1)[:, :2]
        other = np.where(upper >= top2[:, :1], top2[:, 1:], top2[:, :1])
        b = other - (mu - beta)
        j = rand_argmax(-b, s, rng)
        return beta, upper, b, j

    def _choose(self, st: State, rng: np.random.Generator) -> np.ndarray:
        """The next arm of every learner: an untried arm at random, else the more uncertain of J and u."""
        s = st["S"]
        untried = s & (st["cnt"] == 0)
        fresh = untried.any(axis=1)
        arm = np.full(s.shape[0], -1, np.int64)
        if fresh.any():
            arm[fresh] = rand_argmax(np.zeros(untried[fresh].shape), untried[fresh], rng)
        rows = np.flatnonzero(~fresh)
        if rows.size:
            sub = {key: v[rows] for key, v in st.items()} if rows.size < s.shape[0] else st
            beta, upper, _, j = self._indices(sub, rng)
            u = rand_argmax(upper, sub["S"] & ~_one_hot(j, self.k), rng)
            r = np.arange(rows.size)
            arm[rows] = np.where(beta[r, j] >= beta[r, u], j, u)
        return arm

    def execute(self, st: State, q: np.ndarray, ctx: Context) -> Outcome:
        """One pull. The stopping test after the pull uses the same indices as the next choice (same t,
        counts and sums), so it also fixes the next arm (``next``; cleared when the arm set changes)."""
        s, n = st["S"], st["S"].shape[0]
        go = q >= 1
        arm = st["next"].copy()
        unknown = arm < 0
        if unknown.any():
            arm[unknown] = self._choose({key: v[unknown] for key, v in st.items()}, ctx.tie_rng)
        counts = (_one_hot(arm, self.k) & go[:, None]).astype(np.int64)
        times = None
        if ctx.need_times:
            times = np.where(counts > 0, ctx.times(np.arange(n), np.ones((1, 1), np.int64)), 0)
        mu = ctx.env.arm_means(times) if times is not None else np.broadcast_to(ctx.env.means, counts.shape)
        rewards = ctx.env.sums(mu, counts, ctx.rng)
        st["cnt"] += counts
        st["sums"] += rewards
        st["t"] += go
        st["next"][:] = -1
        eliminated = np.zeros(s.shape, bool)
        check = np.flatnonzero(go & ~np.any(s & (st["cnt"] == 0), axis=1))
        if check.size:
            sub = {key: v[check] for key, v in st.items()} if check.size < n else st
            beta, upper, b, j = self._indices(sub, ctx.tie_rng)
            r = np.arange(check.size)
            stop = b[r, j] < self.eps
            eliminated[check[stop]] = sub["S"][stop] & ~_one_hot(j[stop], self.k)
            u = rand_argmax(upper, sub["S"] & ~_one_hot(j, self.k), ctx.tie_rng)
            st["next"][check[~stop]] = np.where(beta[r, j] >= beta[r, u], j, u)[~stop]
        return Outcome(eliminated, counts, rewards, times)


def make_subroutine(name: str, k: int, eps: float, conf: float, *, round_blocks: bool = True,
                    se_c: float = 4.0) -> Subroutine:
    """The subroutine ``name`` (one of :data:`SUBROUTINES`) with confidence parameter ``conf``;
    ``round_blocks=False`` lets blocks span rounds (stationary means only; rewards in [0, 1] for se/ser3)."""
    if name not in SUBROUTINES:
        raise ConfigError(f"subroutine must be one of {', '.join(SUBROUTINES)}, got {name!r}")
    if not 0 < conf < 1:
        raise ConfigError(f"the subroutine's confidence parameter must be in (0, 1), got {conf}")
    if name in ("naive", "median", "ugapec") and not eps > 0:
        raise ConfigError(f"epsilon must be > 0 for subroutine {name!r}, got {eps}")
    if name == "naive":
        return NaiveElimination(k, eps, conf, round_blocks)
    if name == "median":
        return MedianElimination(k, eps, conf, round_blocks)
    if name == "se":
        if not se_c >= 1:
            raise ConfigError(f"se_c must be >= 1, got {se_c}")
        return SuccessiveElimination(k, eps, conf, se_c, round_blocks)
    if name == "ser3":
        return SER3(k, eps, conf, round_blocks)
    return UGapEc(k, eps, conf)
