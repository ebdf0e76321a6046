"""The one engine of Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed Bandits" (ICML 2019): a
compiled per-step simulation of DECENTRALIZED ELIMINATION (Sec. 3.2, Algorithms 1-2), 1-PRIVACY and 0-PRIVACY
(Sec. 5.1) and DSER4 (Sec. 4, Theorem 4).

One loop iteration per global step is the protocol itself (Algorithm 1): the active player reads the board
lazily (every global elimination since her last activation; the shared set is never emptied; a player whose
arms were all eliminated restarts on the shared set; line 11 of Algorithm 2, adoption of the shared singleton),
makes one call of her Arm Selection subroutine (Sec. 3.1: naive and median elimination and Successive
Elimination after Even-Dar et al. 2006, SER3 after Allesiardo et al. 2017, UGapEc after Gabillon et al. 2012;
random tie-breaks, SER3's reshuffled rounds, a unit completed by global eliminations decided at her next
activation before her pull) and posts one vote per newly eliminated arm; an arm leaves the shared set at its
M-th vote. 1-PRIVACY has no board; 0-PRIVACY is one learner who owns every step; DSER4 runs to its horizon and
restarts everything at its reset steps. Stationary Bernoulli runs are *lazy*, the others *eager* (see
:func:`_group_kernel`); players, rewards, tie-breaks and resets draw from independent streams, and uniform
integers come from one uniform double each (:func:`_index`: ``Generator.integers`` costs about 30 ns inside
numba). Each player keeps the list of her arms in index order next to her mask, so that the end of a round
costs O(|S|), not O(K) (most pulls of SER3 are in two-arm rounds).

The run's state travels as a few named tuples of arrays, each a part of the protocol: :class:`Instance` (the
means and best arms), :class:`Config` (the subroutine, its constants and tables, the board's threshold, the
stopping rule and the modes), :class:`Players` (every player's subroutine state and board view, one row or
entry per player), :class:`Board` (the shared set, the tallies and the log of votes), :class:`Recorder` (the
status curve and the recorded pulls) and :class:`Scratch` (per-step work arrays), plus the run's counters, one
record of the structured dtype :data:`COUNTERS` (the global step, the number of finished players, the board's
version, ...), so that a run resumes across chunks of the player sequence.

One kernel source serves every subroutine and mode; numba compiles it once per subroutine group
(:func:`kernel_for`: a run compiles its own group's branches only, cached on disk). It and its helpers run
without numba's reference counting (``_nrt=False``, scratch arrays from the caller), whose atomic updates took
half its time; the helpers are ordinary compiled functions without Python wrappers (numba's IR inlining of
them took most of a first call's 30-40 s of compilation).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from anonbandits.channels.compiled import bernoulli_reward
from anonbandits.core import radii
from anonbandits.core.compiled import (
    se_boundary,
    se_eliminates,
    ugapec_gap_index,
    ugapec_log_term,
    ugapec_radius,
    ugapec_upper,
)
from anonbandits.core.schedules import median_elimination_pulls, naive_elimination_pulls
from anonbandits.multiagent.decentralized.environment import MeansSchedule

KINDS = {"naive": 0, "median": 1, "se": 2, "ser3": 3, "ugapec": 4}
SUBROUTINES = tuple(KINDS)
NAIVE, MEDIAN, SE, SER3, UGAPEC = range(5)
STOP_ALL, STOP_CONSENSUS = 0, 1

STOP_NONE = 2  # DSER4: run to the horizon
STOP_CODES = {"all": STOP_ALL, "consensus": STOP_CONSENSUS, "none": STOP_NONE}
#: The run's counters, one record (``np.zeros(1, COUNTERS)``): global steps (``t``: steps of active players,
#: ``raw``: every step), players holding one arm, the board's version (one more per global elimination or
#: reset), arms in the shared set, times the empty-set guard fired, pulls of arms that are not the best, the
#: consensus step (-1: none yet), the stop (1: the stopping rule, 2: ``max_steps``), the entries of the vote log,
#: the status curve and the pull records, the players absorbed (``draw_only_active``) and the resets done.
COUNTERS = np.dtype(
    [
        (name, np.int64)
        for name in (
            "t",
            "raw",
            "done",
            "version",
            "n_global",
            "guard",
            "suboptimal",
            "t_consensus",
            "stopped",
            "n_votes",
            "n_curve",
            "n_absorbed",
            "n_resets",
            "n_records",
        )
    ]
)
TWO53 = 1 << 53


class Instance(NamedTuple):
    """The bandit instance as the kernel reads it: ``means`` (K,), ``best`` (K,) bool, the means after the
    switch step ``switch_at`` (0: never) and their best arms, the ``drift`` per step of every arm but ``top``
    (the initial best arm; Problem 3 of Sec. 5.1)."""

    means: np.ndarray
    best: np.ndarray
    after: np.ndarray
    best_after: np.ndarray
    switch_at: int
    drift: float
    top: int


class Config(NamedTuple):
    """What stays fixed during a run: the subroutine ``kind``, its ``eps`` and confidence ``conf``, the constant
    ``se_c`` of the SE/SER3 radius, ``targets`` (pulls per arm of a phase: ``[ell]`` for naive elimination, by
    phase for median elimination; a table, as the formula's powers and logarithm cost more than a step),
    ``two_radius[tau]`` (``2 radius(tau)`` of SE/SER3) and ``ucb_log[t]`` (UGapEc's log term; both computed past
    their tables), the vote threshold ``m`` (0: no board), the ``stop_rule`` code, ``only_active`` (finished
    players leave the pool), ``max_steps``, ``eager`` and ``round_mode`` (one activation runs the rest of an
    SE/SER3 round, or one pull of every arm of a phase) and ``resets`` (the steps, increasing, before which every
    player restarts and the board is cleared: DSER4)."""

    kind: int
    eps: float
    conf: float
    se_c: float
    targets: np.ndarray
    two_radius: np.ndarray
    ucb_log: np.ndarray
    m: int
    stop_rule: int
    only_active: bool
    max_steps: int
    eager: bool
    round_mode: bool
    resets: np.ndarray


class Players(NamedTuple):
    """Every player's state, one row (N, K) or entry (N,) per player: her set ``S``, its size ``ns``, her single
    arm ``held`` (-1: none), her arms in index order ``arms``, the open unit's counts ``cnt`` (naive/median:
    per phase; UGapEc: all pulls) and ``sums``, ``cnt_r`` (SE/SER3 completed rounds, median phase, UGapEc pulls),
    ``jj`` and ``left`` (pulls made and to go in the open unit), ``opened``, ``aux`` (UGapEc's next arm; -1: to be
    chosen), ``lam`` (her votes), ``seen`` (the board's version at her last read), ``local`` (her steps),
    ``absorbed`` (left the pool) and ``pulled`` (eager mode: the arms pulled in the open SE/SER3 round)."""

    S: np.ndarray
    ns: np.ndarray
    held: np.ndarray
    arms: np.ndarray
    cnt: np.ndarray
    sums: np.ndarray
    cnt_r: np.ndarray
    jj: np.ndarray
    left: np.ndarray
    opened: np.ndarray
    aux: np.ndarray
    lam: np.ndarray
    seen: np.ndarray
    local: np.ndarray
    absorbed: np.ndarray
    pulled: np.ndarray


class Board(NamedTuple):
    """The vote board: the shared set ``G`` (K,), the tallies ``V``, the step at which each arm left the shared
    set (-1: never), and the log of votes (sender, step, arm; its first ``n_votes`` entries)."""

    G: np.ndarray
    V: np.ndarray
    elim_time: np.ndarray
    sender: np.ndarray
    time: np.ndarray
    arm: np.ndarray


class Recorder(NamedTuple):
    """What a run records: the status curve (the raw steps at which the number of players holding one arm
    changed, and that number; first ``n_curve`` entries) and, when pulls are recorded (0-PRIVACY's broadcasts),
    their (step, arm, reward) (first ``n_records`` entries; empty arrays otherwise)."""

    curve_t: np.ndarray
    curve_done: np.ndarray
    pull_t: np.ndarray
    pull_arm: np.ndarray
    pull_reward: np.ndarray


class Scratch(NamedTuple):
    """Work arrays (K,) of one step: ``E`` (the arms eliminated at the step; cleared after use), ``mu``,
    ``keys``, UGapEc's ``beta``, ``upper`` and ``gap``, and the (1, K) ``mask``."""

    E: np.ndarray
    mu: np.ndarray
    keys: np.ndarray
    beta: np.ndarray
    upper: np.ndarray
    gap: np.ndarray
    mask: np.ndarray


#: The kernel's helpers: called only from compiled code, so no Python or C wrappers; those called at every
#: step or round are inlined by LLVM (``forceinline``: cheaper to compile than numba's IR inlining; not the
#: phases' Binomial draws, whose sampler would be inlined as well)
_helper = njit(_nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy")
_inlined = njit(_nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy", forceinline=True)

MAX_ARMS = (1 << 10) - 1  # _index's 53-bit product stays below 2^63 up to here


@njit(cache=True, _nrt=False, no_cfunc_wrapper=True, error_model="numpy", forceinline=True)  # also tests
def _index(rng, q):
    """Uniform integer in [0, q) from the 53 random bits of one ``rng.random()`` (Lemire, with rejection; plain
    rejection sampling of the remainder beyond ``MAX_ARMS``)."""
    while q > MAX_ARMS:
        x = np.int64(rng.random() * 9007199254740992.0)
        if x < TWO53 - TWO53 % q:
            return x % q
    while True:
        x = np.int64(rng.random() * 9007199254740992.0)
        prod = x * q  # < 2^63 for q <= MAX_ARMS
        low = prod & (TWO53 - 1)
        if low >= q or low >= TWO53 % q:
            return prod >> 53


@_inlined
def _tie_argmax(values, mask, row, rng):
    """Index of a largest ``values`` entry among ``mask[row]``, ties uniformly at random."""
    best, ties, arm = -np.inf, 0, -1
    for a in range(values.size):
        if mask[row, a]:
            v = values[a]
            if v > best:
                best, ties, arm = v, 1, a
            elif v == best:
                ties += 1
    if ties > 1:
        pick = _index(rng, ties)
        for a in range(values.size):
            if mask[row, a] and values[a] == best:
                if pick == 0:
                    return a
                pick -= 1
    return arm


@_inlined
def _is_best(a, t, inst):
    """Whether arm ``a`` is a best arm at step ``t`` (the means switch at ``switch_at`` if positive; under a
    drift the initial best arm stays the best)."""
    return inst.best_after[a] if 0 < inst.switch_at <= t else inst.best[a]


@_inlined
def _reward(a, t, i, inst, pool, rewards):
    """The reward of a pull of arm ``a`` at step ``t`` (index ``i`` of the current chunk): from the pre-drawn
    block ``pool`` (rewards other than Bernoulli, one per step and arm), else a Bernoulli draw of the mean at
    ``t`` (Bernoulli rewards, as the paper's experiments; Problem 3's drift of Sec. 5.1, clipped at 0; a switch
    of the means for DSER4)."""
    if pool.shape[0] > 0:
        return pool[i, a]
    if 0 < inst.switch_at <= t:
        mu = inst.after[a]
    elif inst.drift > 0 and a != inst.top:
        mu = max(0.0, inst.means[a] - inst.drift * t)
    else:
        mu = inst.means[a]
    return bernoulli_reward(rewards.random(), mu)


@_helper
def _pull_unit(p, t, i, target, cfg, inst, pool, st, cn, rec, rewards, ties):
    """Eager mode: one pull of ``p``'s open unit at step ``t``, its arm chosen and its reward drawn now (SE:
    the next arm of the round in index order; SER3: a uniformly random arm not pulled yet in the round, i.e. a
    reshuffled round; naive/median: the least pulled arm, lowest index first, i.e. round-robin)."""
    kind, S, cnt, pulled = cfg.kind, st.S, st.cnt, st.pulled
    k = S.shape[1]
    arm = -1
    if kind == SE or kind == SER3:
        pick = 0 if kind == SE else _index(ties, st.left[p])  # ``left``: the arms not pulled yet in the round
        for a in range(k):
            if S[p, a] and not pulled[p, a]:
                if pick == 0:
                    arm = a
                    break
                pick -= 1
        pulled[p, arm] = True
    else:
        low = np.iinfo(np.int64).max
        for a in range(k):
            if S[p, a] and cnt[p, a] < low and cnt[p, a] < target:
                arm, low = a, cnt[p, a]
        cnt[p, arm] += 1
    y = _reward(arm, t, i, inst, pool, rewards)
    st.sums[p, arm] += y
    cn.suboptimal += not _is_best(arm, t, inst)
    _record(arm, t, y, cn, rec)


@_inlined
def _record(arm, t, y, cn, rec):
    """Keep (step, arm, reward) of a pull when pulls are recorded (the broadcasts of 0-PRIVACY)."""
    if rec.pull_t.size > 0:
        c = cn.n_records
        rec.pull_t[c], rec.pull_arm[c], rec.pull_reward[c] = t, arm, y
        cn.n_records = c + 1


@_inlined
def _settle(p, st):
    """Rebuild player ``p``'s list of arms (index order) from ``S``, their count and her single arm if she
    holds one."""
    S, arms = st.S, st.arms
    c = 0
    for a in range(S.shape[1]):
        if S[p, a]:
            arms[p, c] = a
            c += 1
    st.ns[p] = c
    st.held[p] = arms[p, 0] if c == 1 else -1


@_inlined
def _end_round(p, target, cfg, inst, st, sc, cn, rewards, ties):
    """End of an SE/SER3 round (Successive Elimination, Even-Dar et al. 2006; SER3, Allesiardo et al. 2017):
    one reward per arm of the set (drawn already in eager mode), the decision; returns the number of arms
    eliminated (set in ``sc.E``). Runs over the player's list of arms only (most rounds have two arms, out of
    K): the same draws in the same order as over the index range. ``target`` is unused (the arguments are
    those of :func:`_end_phase`)."""
    S, ns, held, sums, arms, pulled, mu = st.S, st.ns, st.held, st.sums, st.arms, st.pulled, sc.mu
    st.jj[p], st.left[p], st.opened[p] = 0, 0, False
    k, r = S.shape[1], ns[p]
    if cfg.eager:
        for i in range(r):
            pulled[p, arms[p, i]] = False
    else:
        bad = 0
        for i in range(r):
            a = arms[p, i]
            sums[p, a] += bernoulli_reward(rewards.random(), inst.means[a])  # no branch: it would be mispredicted
            bad += not inst.best[a]
        cn.suboptimal += bad
    st.cnt_r[p] += 1
    tau = st.cnt_r[p]
    if tau < cfg.two_radius.size:
        tr = cfg.two_radius[tau]
    else:  # the core's boundary is in sum space
        tr = se_boundary(tau, k, cfg.conf, cfg.se_c, 2 if cfg.kind == SER3 else 1) / tau
    top, n_top, pos = -np.inf, 0, -1
    for i in range(r):
        v = sums[p, arms[p, i]] / tau
        mu[i] = v
        if v > top:
            top, n_top, pos = v, 1, i
        elif v == top:
            n_top += 1
    if n_top > 1:  # uniformly among the tied arms (their index order, as _tie_argmax)
        pick = _index(ties, n_top)
        for i in range(r):
            if mu[i] == top:
                if pick == 0:
                    pos = i
                    break
                pick -= 1
    kept = 0
    for i in range(r):
        a = arms[p, i]
        if i != pos and se_eliminates(top - mu[i], tr, cfg.eps):
            S[p, a] = False
            sc.E[a] = True
        else:
            arms[p, kept] = a
            kept += 1
    if kept < r:
        ns[p] = kept
        held[p] = arms[p, 0] if kept == 1 else -1
    return r - kept


@_inlined
def _decide_phase(p, kind, st, sc, ties):
    """End of a naive phase (keep the empirical best) or a median phase (keep the ceil(|S|/2) best; naive and
    median elimination, Even-Dar et al. 2006), ties at random."""
    S, cnt, sums, E, mu, keys = st.S, st.cnt, st.sums, sc.E, sc.mu, sc.keys
    k = mu.size
    for a in range(k):
        mu[a] = sums[p, a] / max(cnt[p, a], 1) if S[p, a] else -np.inf
    if kind == NAIVE:
        b = _tie_argmax(mu, S, p, ties)
        for a in range(k):
            if S[p, a] and a != b:
                S[p, a] = False
                E[a] = True
        return
    # rank by (-mu, random key): arm a is kept when fewer than ceil(|S|/2) arms come before it
    for a in range(k):
        keys[a] = ties.random() if S[p, a] else 2.0
    keep = (st.ns[p] + 1) // 2
    for a in range(k):
        if not S[p, a]:
            continue
        before = 0
        for b in range(k):
            if S[p, b] and (mu[b] > mu[a] or (mu[b] == mu[a] and keys[b] < keys[a])):
                before += 1
        if before >= keep:
            E[a] = True
    for a in range(k):
        if E[a]:
            S[p, a] = False
        cnt[p, a] = 0
        sums[p, a] = 0.0
    st.cnt_r[p] += 1


@_inlined
def _ugapec_indices(p, conf, ucb_log, st, sc, ties):
    """UGapEc's beta, U and -B over the active arms (every one pulled); returns J = argmin B (UGapEc, Gabillon,
    Ghavamzadeh, Lazaric 2012, with K the number of arms of the problem in its log term)."""
    S, cnt, sums, beta, upper, gap = st.S, st.cnt, st.sums, sc.beta, sc.upper, sc.gap
    t = max(st.cnt_r[p], 1)
    log_term = ucb_log[t] if t < ucb_log.size else ugapec_log_term(float(t), S.shape[1], conf)
    first, second = -np.inf, -np.inf
    for a in range(beta.size):
        if S[p, a]:
            beta[a] = ugapec_radius(log_term, cnt[p, a])
            upper[a] = ugapec_upper(sums[p, a] / cnt[p, a], beta[a])
            if upper[a] > first:
                first, second = upper[a], first
            elif upper[a] > second:
                second = upper[a]
    for a in range(beta.size):
        if S[p, a]:
            other = second if upper[a] >= first else first
            gap[a] = -ugapec_gap_index(other, sums[p, a] / cnt[p, a], beta[a])  # -B, for the argmax
    return _tie_argmax(gap, S, p, ties)


@_inlined
def _ugapec_partner(p, j, S, sc, ties):
    """The arm to pull next: the more uncertain of J and u = argmax_{k != J} U_k (tie -> J)."""
    mask, beta = sc.mask, sc.beta
    for a in range(mask.shape[1]):
        mask[0, a] = S[p, a] and a != j
    u = _tie_argmax(sc.upper, mask, np.int64(0), ties)  # int64 rows only: one specialisation
    return j if beta[j] >= beta[u] else u


@_helper
def _materialise(p, S, best, cnt, jj, left, target, cn):
    """Naive/median: the per-arm counts of ``p``'s open phase after its ``jj`` unsettled pulls (round-robin in
    index order keeps them canonical: ``total // r`` each, one more for the first ``total % r`` arms), their
    plays of arms that are not the best counted, and ``left`` recomputed."""
    k = S.shape[1]
    r, total = 0, jj[p]
    for a in range(k):
        if S[p, a]:
            r += 1
            total += cnt[p, a]
    rank, left[p] = 0, 0
    for a in range(k):
        if S[p, a]:
            new = total // r + (1 if rank < total % r else 0)
            if not best[a]:
                cn.suboptimal += new - cnt[p, a]
            cnt[p, a] = new
            left[p] += target - new
            rank += 1
    jj[p] = 0


@_helper
def _remove(p, a, kind, eager, best, S, jj, left, opened, pulled, cn, ties):
    """Arm ``a`` leaves ``p``'s set: in an open SE/SER3 round, settle whether it was pulled already (the
    pulled arms are the first ``jj`` of the round in index order for SE, a uniformly random ``jj``-subset of
    the ``jj + left`` arms for SER3; known in eager mode, whose pulls are counted already) and count that
    pull."""
    if opened[p] and (kind == SE or kind == SER3):
        if eager:
            was = pulled[p, a]
            pulled[p, a] = False
        elif kind == SE:
            rank = 0
            for b in range(a):
                rank += S[p, b]
            was = rank < jj[p]
        else:
            was = _index(ties, jj[p] + left[p]) < jj[p]
        if was:
            jj[p] -= 1
            cn.suboptimal += not (eager or best[a])  # an eager pull was counted when it was made
        else:
            left[p] -= 1
    S[p, a] = False


@_helper
def _end_phase(p, target, cfg, inst, st, sc, cn, rewards, ties):
    """End of a naive/median phase: draw its rewards unless drawn already in eager mode (each arm of the set
    was pulled ``target`` times), count its plays, decide (naive and median elimination, Even-Dar et al.
    2006). Returns the number of arms eliminated (set in ``sc.E``). The arguments are those of
    :func:`_end_round`: the kernel calls either."""
    st.jj[p], st.left[p], st.opened[p] = 0, 0, False
    before = st.ns[p]
    if not cfg.eager:
        sums, cnt, arms = st.sums, st.cnt, st.arms
        for i in range(before):
            a = arms[p, i]
            sums[p, a] = rewards.binomial(target, inst.means[a])
            if not inst.best[a]:
                cn.suboptimal += target - cnt[p, a]
            cnt[p, a] = target
    _decide_phase(p, cfg.kind, st, sc, ties)
    _settle(p, st)
    return before - st.ns[p]


def kernel_for(kind: int) -> Callable[..., int]:
    """The kernel compiled for the subroutines of ``kind``'s group: SE/SER3, naive/median or UGapEc."""
    return _group_kernel(kind <= MEDIAN, kind == UGAPEC)


@functools.cache
def _group_kernel(phases: bool, ugapec: bool) -> Callable[..., int]:
    """The kernel of one group of subroutines: the group is a closure constant, so numba drops the other
    groups' branches before typing them and a run compiles its own subroutine's helpers only (a phase's
    Binomial draws and UGapEc's indices cost more compilation than SE's whole round). numba's cache keys each
    group's kernel by these constants."""

    @njit(cache=True, _nrt=False, no_cfunc_wrapper=True, error_model="numpy")
    def simulate(players, pool, inst, cfg, st, board, rec, sc, counters, rewards, ties):
        """Run the steps of ``players`` (one chunk of the player sequence) until the stopping rule fires.

        ``pool``: the chunk's pre-drawn rewards (one per step and arm; empty for Bernoulli rewards, drawn at
        the pulls); ``inst``, ``cfg``, ``st``, ``board``, ``rec``, ``sc``: the run's :class:`Instance`,
        :class:`Config`, :class:`Players`, :class:`Board`, :class:`Recorder` and :class:`Scratch`;
        ``counters``: the run's :data:`COUNTERS` (one record); ``rewards``, ``ties``: the reward and tie-break
        streams. Returns the number of entries of ``players`` consumed: all of them, or fewer when the run is
        over (``stopped`` is 1 at the stopping rule, 2 at ``max_steps`` raw steps) or when the vote or status
        buffers are nearly full (the caller grows them and resumes). Every array is the run's state, updated
        in place.

        Round-robin units (an SE/SER3 round, a naive/median phase; ``opened``) are kept lazily: ``jj`` pulls made
        and ``left`` pulls to go. Which arms the pulls went to is settled only when an arm leaves the set (SE:
        index order; SER3: the pulled arms of a round are a uniformly random subset; naive/median: canonical
        round-robin counts in ``cnt``), and the rewards are drawn at the unit's end (one per arm of a round, one
        binomial per arm of a phase): the same law as pull by pull, since nothing looks at them earlier.
        In ``eager`` mode (means that change over time, rewards from ``pool``, recorded pulls, resets) every pull
        takes its arm and reward at its step instead (``pulled``: the arms pulled in the open SE/SER3 round).
        """
        cn = counters[0]
        S, ns, held, arms, cnt, sums, cnt_r = st.S, st.ns, st.held, st.arms, st.cnt, st.sums, st.cnt_r
        jj, left, opened, aux, lam, seen = st.jj, st.left, st.opened, st.aux, st.lam, st.seen
        G, V, E, mask, mu = board.G, board.V, sc.E, sc.mask, sc.mu
        kind, targets, m, stop_rule, eager, resets = cfg.kind, cfg.targets, cfg.m, cfg.stop_rule, cfg.eager, cfg.resets
        n, k = S.shape
        end_unit = _end_phase if phases else _end_round
        target = targets[0]
        raw, t = cn.raw, cn.t  # kept in registers; written back on return
        consumed = players.size
        for i in range(players.size):
            if raw >= cfg.max_steps:
                cn.stopped = 2
                consumed = i
                break
            if resets.size > 0 and (cn.n_votes + k > board.sender.size or cn.n_curve + 3 > rec.curve_t.size):
                consumed = i  # without resets the buffers cannot fill up (M votes per arm, two flips per arm)
                break
            p = np.int64(players[i])
            raw += 1
            if resets.size > 0 and cn.n_resets < resets.size and raw == resets[cn.n_resets]:  # DSER4: afresh
                cn.n_resets += 1
                for q in range(n):
                    for a in range(k):
                        S[q, a], lam[q, a], st.pulled[q, a], cnt[q, a], sums[q, a] = True, False, False, 0, 0.0
                    _settle(q, st)
                    cnt_r[q] = 1 if kind == MEDIAN else 0
                    jj[q], left[q], opened[q], aux[q] = 0, 0, False, -1
                for a in range(k):
                    G[a], V[a], board.elim_time[a] = True, 0, -1
                cn.n_global, cn.done, cn.t_consensus = k, 0, -1
                cn.version += 1
                seen[:] = cn.version
                c = cn.n_curve
                rec.curve_t[c], rec.curve_done[c] = raw - 1, 0
                cn.n_curve = c + 1
            if st.absorbed[p]:
                continue
            t += 1
            st.local[p] += 1
            was_done = ns[p] == 1
            gone = 0  # arms her subroutine eliminates at this step (set in E)
            if kind == MEDIAN:
                target = targets[cnt_r[p]]
            # ---- read the board: every global elimination since the last activation
            if m > 0 and seen[p] != cn.version:
                seen[p] = cn.version
                lost = 0
                for j in range(ns[p]):
                    lost += not G[arms[p, j]]
                restart = lost == ns[p] or (cn.n_global == 1 and (ns[p] > 1 or lost > 0))  # restart / line 11
                if lost > 0 or restart:
                    if phases and opened[p] and not eager:
                        _materialise(p, S, inst.best, cnt, jj, left, target, cn)
                    for j in range(ns[p]):  # the list is rebuilt by _settle below
                        a = arms[p, j]
                        if restart or not G[a]:
                            _remove(p, a, kind, eager, inst.best, S, jj, left, opened, st.pulled, cn, ties)
                    aux[p] = -1
                    if opened[p] and kind <= MEDIAN:  # the phase goes on with the arms that remain
                        left[p] = 0
                        for a in range(k):
                            if S[p, a]:
                                left[p] += target - cnt[p, a]
                    if restart:
                        for a in range(k):
                            S[p, a] = G[a]
                            cnt[p, a] = 0
                            sums[p, a] = 0.0
                        cnt_r[p] = 1 if kind == MEDIAN else 0
                        jj[p], left[p], opened[p] = 0, 0, False
                        if kind == MEDIAN:
                            target = targets[1]
                    _settle(p, st)
                    if opened[p] and left[p] == 0 and ns[p] > 1:  # a unit completed by the eliminations
                        gone += end_unit(p, target, cfg, inst, st, sc, cn, rewards, ties)
                        if kind == MEDIAN:
                            target = targets[cnt_r[p]]
            # ---- one call of the subroutine: one pull (one round-robin pass or SE/SER3 round in round mode)
            if ns[p] == 1:  # a finished player pulls her arm; only a recorded pull needs its reward
                a = held[p]
                cn.suboptimal += not _is_best(a, raw, inst)
                if rec.pull_t.size > 0:
                    _record(a, raw, _reward(a, raw, i, inst, pool, rewards), cn, rec)
            elif kind != UGAPEC:  # the pull goes into the unit; lazily, its arm and reward are settled later
                if not opened[p]:
                    opened[p] = True
                    left[p] = ns[p] if kind == SE or kind == SER3 else ns[p] * target
                q = 1
                if cfg.round_mode:  # a round's pulls all come at this step (a phase's counts stay equal: min works)
                    q = left[p] if kind == SE or kind == SER3 else min(ns[p], left[p])
                if eager:
                    for _ in range(q):
                        _pull_unit(p, raw, i, target, cfg, inst, pool, st, cn, rec, rewards, ties)
                        left[p] -= 1
                else:
                    left[p] -= q
                jj[p] += q
                if left[p] == 0:
                    gone += end_unit(p, target, cfg, inst, st, sc, cn, rewards, ties)
            elif ugapec:
                a = aux[p]
                if a < 0:
                    untried = 0
                    for b in range(k):
                        mask[0, b] = S[p, b] and cnt[p, b] == 0
                        untried += mask[0, b]
                    if untried > 0:  # initialisation: every arm once, in random order
                        for b in range(k):
                            mu[b] = 0.0
                        a = _tie_argmax(mu, mask, np.int64(0), ties)
                    else:
                        j = _ugapec_indices(p, cfg.conf, cfg.ucb_log, st, sc, ties)
                        a = _ugapec_partner(p, j, S, sc, ties)
                y = _reward(a, raw, i, inst, pool, rewards)
                cnt[p, a] += 1
                sums[p, a] += y
                cnt_r[p] += 1
                aux[p] = -1
                cn.suboptimal += not _is_best(a, raw, inst)
                _record(a, raw, y, cn, rec)
                tried = True
                for b in range(k):
                    if S[p, b] and cnt[p, b] == 0:
                        tried = False
                if tried:  # the stopping test; its indices also fix the next arm
                    j = _ugapec_indices(p, cfg.conf, cfg.ucb_log, st, sc, ties)
                    if -sc.gap[j] < cfg.eps:
                        gone += ns[p] - 1
                        for b in range(k):
                            E[b] = S[p, b] and b != j
                            S[p, b] = b == j
                        _settle(p, st)
                    else:
                        aux[p] = _ugapec_partner(p, j, S, sc, ties)
            # ---- votes (a player votes against an arm at most once) and global eliminations; E is cleared
            if gone > 0:
                for a in range(k):
                    if not E[a]:
                        continue
                    E[a] = False
                    if m > 0 and not lam[p, a]:
                        lam[p, a] = True
                        V[a] += 1
                        nv = cn.n_votes
                        board.sender[nv], board.time[nv], board.arm[nv] = p, t, a
                        cn.n_votes = nv + 1
                        if V[a] == m and G[a]:  # index order; never empty the shared set
                            if cn.n_global > 1:
                                G[a] = False
                                cn.n_global -= 1
                                cn.version += 1
                                board.elim_time[a] = raw
                            else:
                                cn.guard += 1
                if m > 0 and cn.n_global == 1 and cn.t_consensus < 0:
                    cn.t_consensus = t
            # ---- status and stopping
            now_done = ns[p] == 1
            if now_done == was_done:
                if stop_rule != STOP_CONSENSUS or cn.n_global > 1:  # nothing else can have changed
                    continue
            else:
                cn.done += 1 if now_done else -1
                c = cn.n_curve
                rec.curve_t[c], rec.curve_done[c] = raw, cn.done
                cn.n_curve = c + 1
                if now_done and cfg.only_active:
                    st.absorbed[p] = True
                    cn.n_absorbed += 1
            stop = stop_rule == STOP_ALL and cn.done == n
            if stop_rule == STOP_CONSENSUS:
                stop = cn.n_global == 1 or cn.n_absorbed == n
                if not stop and cn.done == n and now_done != was_done:  # nothing changes unless a read undoes one
                    stop = True
                    for w in range(n):
                        stop = stop and (st.absorbed[w] or G[held[w]])
            if stop:
                cn.stopped = 1
                consumed = i + 1
                break
        cn.raw, cn.t = raw, t
        return consumed

    return simulate


@njit(cache=True)
def close_units(kind, best, st, counters, ties):
    """At the end of a run, count the plays of arms that are not the best among the pulls of open units."""
    cn = counters[0]
    S, jj, left = st.S, st.jj, st.left
    n, k = S.shape
    for p in range(n):
        if not st.opened[p] or jj[p] == 0:
            continue
        if kind <= MEDIAN:
            _materialise(p, S, best, st.cnt, jj, left, np.int64(0), cn)  # (``left`` is not needed any more)
            continue
        want, rest = jj[p], jj[p] + left[p]  # SE: the first jj arms; SER3: a uniform jj-subset
        for a in range(k):
            if S[p, a] and want > 0:
                if kind == SE or _index(ties, rest) < want:
                    want -= 1
                    cn.suboptimal += not best[a]
                rest -= 1


class Settings(NamedTuple):
    """A run's settings beyond its subroutine and instance: ``eps``, the subroutine's confidence ``conf``, the
    constant ``se_c`` of SE's radius, the vote ``threshold`` M (``None``: no board; 1-PRIVACY, 0-PRIVACY), the
    ``stop_rule`` (``all``, ``consensus`` or ``none``: run ``max_steps`` steps), ``draw_only_active``,
    ``max_steps``, ``per_activation`` (``pull`` or ``round``), DSER4's reset steps ``resets`` and ``record``
    (keep (step, arm, reward) of every pull)."""

    eps: float
    conf: float
    se_c: float
    threshold: int | None
    stop_rule: str
    draw_only_active: bool
    max_steps: int
    per_activation: str = "pull"
    resets: np.ndarray | None = None
    record: bool = False


def initial_players(n: int, k: int, kind: int) -> Players:
    """Every player at the start: the whole set, no pulls, no votes."""
    return Players(
        S=np.ones((n, k), np.bool_),
        ns=np.full(n, k, np.int64),
        held=np.full(n, -1, np.int64),
        arms=np.tile(np.arange(k, dtype=np.int64), (n, 1)),
        cnt=np.zeros((n, k), np.int64),
        sums=np.zeros((n, k)),
        cnt_r=np.full(n, 1 if kind == MEDIAN else 0, np.int64),
        jj=np.zeros(n, np.int64),
        left=np.zeros(n, np.int64),
        opened=np.zeros(n, np.bool_),
        aux=np.full(n, -1, np.int64),
        lam=np.zeros((n, k), np.bool_),
        seen=np.zeros(n, np.int64),
        local=np.zeros(n, np.int64),
        absorbed=np.zeros(n, np.bool_),
        pulled=np.zeros((n, k), np.bool_),
    )


def _instance(env: MeansSchedule) -> Instance:
    """The kernel's view of ``env``: the means, the best arms before and after the switch, the drift."""
    k, means = env.arms, env.means
    best = means == means.max()
    after = env.means_after if env.switch_at > 0 else means
    if env.drift > 0:  # the initial best arm alone keeps its mean
        best = np.arange(k) == int(np.argmax(means))
    return Instance(
        means, best, after, after == after.max(), int(env.switch_at), float(env.drift), int(np.argmax(means))
    )


def _config(kind: int, k: int, settings: Settings, eager: bool, resets: np.ndarray) -> Config:
    """The kernel's :class:`Config` of a run (the subroutine's tables cached across runs)."""
    se_c = 4.0 if kind == SER3 else settings.se_c  # SER3's radius has c = 4 (Allesiardo et al. 2017)
    two_radius, ucb_log = _tables(kind, k, settings.conf, se_c)
    if kind == MEDIAN:
        targets = _median_targets(settings.eps, settings.conf, k)
    else:  # naive elimination's pulls per arm, ell
        targets = np.array([naive_elimination_pulls(settings.eps, settings.conf, k) if kind == NAIVE else 0], np.int64)
    return Config(
        kind,
        settings.eps,
        settings.conf,
        se_c,
        targets,
        two_radius,
        ucb_log,
        settings.threshold or 0,
        STOP_CODES[settings.stop_rule],
        settings.draw_only_active,
        settings.max_steps,
        eager,
        settings.per_activation == "round",
        resets,
    )


def _grown(board: Board, rec: Recorder) -> tuple[Board, Recorder]:
    """The vote log and the status curve twice as long (their entries kept)."""

    def twice(x: np.ndarray) -> np.ndarray:
        return np.concatenate([x, np.zeros_like(x)])

    return (
        board._replace(sender=twice(board.sender), time=twice(board.time), arm=twice(board.arm)),
        rec._replace(curve_t=twice(rec.curve_t), curve_done=twice(rec.curve_done)),
    )


def run_kernel(
    subroutine: str,
    env: MeansSchedule,
    n: int,
    sample: Callable[[int, np.random.Generator], np.ndarray],
    streams: tuple[np.random.Generator, np.random.Generator, np.random.Generator],
    settings: Settings,
) -> dict[str, Any]:
    """One run; returns its final state (the arrays of :class:`Players` and :class:`Board` by name) and raw
    results. ``streams``: the player, reward and tie-break streams. The vote steps and the consensus step leave
    out the draws of finished players with ``draw_only_active`` (the public results' convention), while
    ``t_end``, the elimination steps and the status curve are raw steps.

    The player sequence is drawn with ``sample(size, player_rng)`` in chunks (first chunk ``max(2^15, 64 N)``
    steps, then doubling). Stationary Bernoulli runs without records or resets are lazy (see
    :func:`_group_kernel`), the others eager; rewards other than Bernoulli come from the run's reward stream as
    one pre-drawn block per chunk (a reward per step and arm, of the means at that step).
    """
    player_rng, rewards, ties = streams
    k, max_steps = env.arms, settings.max_steps
    m = settings.threshold or 0
    resets = np.empty(0, np.int64) if settings.resets is None else np.asarray(settings.resets, np.int64)
    counters = np.zeros(1, COUNTERS)
    counters[0]["n_global"], counters[0]["t_consensus"] = k, -1
    cn = counters[0]
    kind = KINDS[subroutine]
    bernoulli = env.reward == "bernoulli"
    eager = not (env.stationary and bernoulli) or settings.record or resets.size > 0
    inst, cfg, st = _instance(env), _config(kind, k, settings, eager, resets), initial_players(n, k, kind)
    board = Board(
        np.ones(k, np.bool_),
        np.zeros(k, np.int64),
        np.full(k, -1, np.int64),
        *(np.zeros(m * k + k, np.int64) for _ in range(3)),
    )  # M votes per arm at most between resets
    no_rec = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))
    recorder = Recorder(*(np.zeros(2 * n * k + 3, np.int64) for _ in range(2)), *no_rec)  # two flips per arm
    # E (cleared by the kernel after use), mu, keys, beta, upper, gap, mask
    scratch = Scratch(np.zeros(k, np.bool_), *np.empty((5, k)), np.empty((1, k), np.bool_))
    no_pool = np.empty((0, k))
    records: list[tuple[np.ndarray, ...]] = []
    cap = max_steps if bernoulli else max(1 << 10, (1 << 21) // k)  # a reward block holds size * K draws
    drawn, size = 0, min(max_steps, max(1 << 15, 64 * n), cap)
    kernel = kernel_for(kind)
    while cn["stopped"] == 0:
        chunk = sample(size, player_rng)
        pool = no_pool
        if not bernoulli:
            pool = env.draw(env.mean(np.arange(drawn + 1, drawn + size + 1)), rewards)
        drawn += size
        pos = 0
        while pos < size and cn["stopped"] == 0:
            if settings.record:
                recorder = recorder._replace(
                    **{
                        name: np.empty(size - pos, x.dtype)
                        for name, x in zip(("pull_t", "pull_arm", "pull_reward"), no_rec, strict=True)
                    }
                )
            cn["n_records"] = 0
            pos += kernel(chunk[pos:], pool[pos:], inst, cfg, st, board, recorder, scratch, counters, rewards, ties)
            records.append(tuple(x[: cn["n_records"]] for x in recorder[2:]))
            if pos < size and cn["stopped"] == 0:  # the vote or status buffers are full
                board, recorder = _grown(board, recorder)
        if cn["stopped"] == 0 and drawn >= max_steps:
            cn["stopped"] = 2
        size = min(max_steps - drawn, drawn, 1 << 22, cap)
    if not eager:
        close_units(kind, inst.best, st, counters, ties)
    nv, nc = cn["n_votes"], cn["n_curve"]
    return dict(
        st._asdict(),
        G=board.G,
        V=board.V,
        elim_time=board.elim_time,
        t_end=int(cn["raw"]),
        stopped=bool(cn["stopped"] == 1 or settings.stop_rule == "none"),
        t_consensus=None if cn["t_consensus"] < 0 else int(cn["t_consensus"]),
        outputs=_outputs(st, board.G, int(cn["version"])),
        vote_sender=board.sender[:nv],
        vote_time=board.time[:nv],
        vote_arm=board.arm[:nv],
        guard_fired=int(cn["guard"]),
        suboptimal=int(cn["suboptimal"]),
        done_times=recorder.curve_t[:nc],
        done_counts=recorder.curve_done[:nc],
        resets=int(cn["n_resets"]),
        pull_records=tuple(np.concatenate(x) for x in zip(*records, strict=True)) if settings.record else None,
    )


@functools.lru_cache(maxsize=64)
def _median_targets(eps: float, conf: float, k: int) -> np.ndarray:
    """:func:`~anonbandits.core.schedules.median_elimination_pulls` of every phase (index ``l``). A phase at
    least halves the arms, so a player's phase index (one past her last phase once she holds one arm) stays
    below ``log2 K + 3``."""
    out = np.zeros(k.bit_length() + 3, np.int64)
    for phase in range(1, out.size):
        out[phase] = median_elimination_pulls(eps, conf, phase)
    return out


TABLE = 1 << 16  # rounds / pulls covered by the radius tables (computed beyond)


@functools.lru_cache(maxsize=64)
def _tables(kind: int, k: int, conf: float, se_c: float) -> tuple[np.ndarray, np.ndarray]:
    """``2 radius(tau)`` of SE/SER3 (the core's :func:`~anonbandits.core.radii.se_boundary` over ``tau``) and
    UGapEc's ``log(4 K t^3/conf)/2`` (:func:`~anonbandits.core.radii.ugapec_log_term`) for the integers below
    ``TABLE`` (index 0 unused); cached, as many runs share their parameters."""
    x = np.arange(TABLE, dtype=float)
    x[0] = 1.0
    two_radius = radii.se_boundary(x, k, conf, se_c, 2 if kind == SER3 else 1) / x
    return two_radius, radii.ugapec_log_term(x, k, conf)


def _outputs(st: Players, G: np.ndarray, version: int) -> np.ndarray:
    """Each player's single arm at the end, with the shared set as she would read it at her next activation
    (the reference loop's convention too): a finished player keeps her arm until that read; another one holds
    the arm left by the read, if one."""
    S, held = st.S, st.held
    out = held.copy()
    stale = (held < 0) & (st.seen != version) & ~st.absorbed
    if stale.any():
        if G.sum() == 1:
            out[stale] = int(np.flatnonzero(G)[0])
        else:
            left = S[stale] & G
            single = left.sum(axis=1) == 1
            out[np.flatnonzero(stale)[single]] = left[single].argmax(axis=1)
    return out
