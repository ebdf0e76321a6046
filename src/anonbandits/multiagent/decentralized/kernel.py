"""The one engine of paper 002 (Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed Bandits",
ICML 2019): a compiled per-step simulation of DECENTRALIZED ELIMINATION (Algorithms 1-2; spec 3, 4.4), 1-PRIVACY
and 0-PRIVACY (Sec. 5.1; spec 6) and DSER4 (Sec. 4; spec 5.5, A18).

One loop iteration per global step is the protocol itself: the active player reads the board lazily (A2: every
global elimination since her last activation; A4 guard; A5 restart; line 11 adoption of the shared singleton),
makes one call of her Arm Selection subroutine (spec 3.1-3.4, 3.6: random tie-breaks, SER3's reshuffled
rounds, a unit completed by global eliminations decided at her next activation before her pull) and posts one
vote per newly eliminated arm; an arm leaves the shared set at its M-th vote. 1-PRIVACY has no board; 0-PRIVACY
is one learner who owns every step; DSER4 runs to its horizon and restarts everything at its reset steps.
Stationary Bernoulli runs are *lazy*, the others *eager* (see :func:`simulate`); the streams are those of spec
A20, and uniform integers come from one uniform double each (:func:`_index`: ``Generator.integers`` costs about
30 ns inside numba). Each player keeps the list of her arms in index order next to her mask, so that the end of
a round costs O(|S|), not O(K) (most pulls of SER3 are in two-arm rounds). One kernel source serves every
subroutine and mode; numba compiles it once per subroutine group (:func:`kernel_for`: a run compiles its own
group's branches only, cached on disk). It and its helpers run without numba's reference counting
(``_nrt=False``, scratch arrays from the caller), whose atomic updates took half its time; the helpers are
ordinary compiled functions without Python wrappers (numba's IR inlining of them took most of a first call's
30-40 s of compilation).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

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
from anonbandits.multiagent.decentralized.environment import Environment

KINDS = {"naive": 0, "median": 1, "se": 2, "ser3": 3, "ugapec": 4}
SUBROUTINES = tuple(KINDS)
NAIVE, MEDIAN, SE, SER3, UGAPEC = range(5)
STOP_ALL, STOP_CONSENSUS = 0, 1

STOP_NONE = 2  # DSER4: run to the horizon
STOP_CODES = {"all": STOP_ALL, "consensus": STOP_CONSENSUS, "none": STOP_NONE}
# slots of the scalar state (an int64 array, so that a run resumes across chunks of the player sequence)
T, RAW, DONE, VERSION, NG, GUARD, SUBOPT, T_CONS, STOPPED, N_VOTES, N_CURVE, N_ABSORBED, N_RESETS, N_REC = range(14)
TWO53 = 1 << 53


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
def _is_best(a, t, best, best_after, switch_at):
    """Whether arm ``a`` is a best arm at step ``t`` (the means switch at ``switch_at`` if positive; under a
    drift the initial best arm stays the best)."""
    return best_after[a] if 0 < switch_at <= t else best[a]


@_inlined
def _reward(a, t, i, means, after, switch_at, drift, top, pool, rewards):
    """The reward of a pull of arm ``a`` at step ``t`` (index ``i`` of the current chunk): from the pre-drawn
    block ``pool`` (rewards other than Bernoulli, one per step and arm), else a Bernoulli draw of the mean at
    ``t`` (spec A8; Problem 3's drift, A9; a switch, A18)."""
    if pool.shape[0] > 0:
        return pool[i, a]
    if 0 < switch_at <= t:
        mu = after[a]
    elif drift > 0 and a != top:
        mu = max(0.0, means[a] - drift * t)
    else:
        mu = means[a]
    return bernoulli_reward(rewards.random(), mu)


@_helper
def _pull_unit(p, kind, t, i, target, means, after, best, best_after, switch_at, drift, top, pool, rewards, ties,
               scal, S, cnt, sums, pulled, left, rec_t, rec_a, rec_r):
    """Eager mode: one pull of ``p``'s open unit at step ``t``, its arm chosen and its reward drawn now (SE:
    the next arm of the round in index order; SER3: a uniformly random arm not pulled yet in the round, i.e. a
    reshuffled round; naive/median: the least pulled arm, lowest index first, i.e. round-robin)."""
    k = S.shape[1]
    arm = -1
    if kind == SE or kind == SER3:
        pick = 0 if kind == SE else _index(ties, left[p])  # ``left``: the arms not pulled yet in the round
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
    y = _reward(arm, t, i, means, after, switch_at, drift, top, pool, rewards)
    sums[p, arm] += y
    scal[SUBOPT] += not _is_best(arm, t, best, best_after, switch_at)
    _record(arm, t, y, scal, rec_t, rec_a, rec_r)


@_inlined
def _record(arm, t, y, scal, rec_t, rec_a, rec_r):
    """Keep (step, arm, reward) of a pull when pulls are recorded (the broadcasts of 0-PRIVACY)."""
    if rec_t.size > 0:
        c = scal[N_REC]
        rec_t[c], rec_a[c], rec_r[c] = t, arm, y
        scal[N_REC] = c + 1


@_inlined
def _settle(p, S, ns, held, arms):
    """Rebuild player ``p``'s list of arms (index order) from ``S``, their count and her single arm if she
    holds one."""
    c = 0
    for a in range(S.shape[1]):
        if S[p, a]:
            arms[p, c] = a
            c += 1
    ns[p] = c
    held[p] = arms[p, 0] if c == 1 else -1


@_inlined
def _end_round(p, kind, means, best, eps, conf, se_c, target, two_radius, rewards, ties, scal, S, ns, held,
               cnt, sums, cnt_r, jj, left, opened, E, mu, keys, arms, eager, pulled):
    """End of an SE/SER3 round (spec 3.3, 3.4): one reward per arm of the set (drawn already in eager mode),
    the decision; returns the number of arms eliminated (set in ``E``). Runs over the player's list of arms
    only (most rounds have two arms, out of K): the same draws in the same order as over the index range."""
    jj[p], left[p], opened[p] = 0, 0, False
    k, r = S.shape[1], ns[p]
    if eager:
        for i in range(r):
            pulled[p, arms[p, i]] = False
    else:
        bad = 0
        for i in range(r):
            a = arms[p, i]
            sums[p, a] += bernoulli_reward(rewards.random(), means[a])  # no branch: it would be mispredicted
            bad += not best[a]
        scal[SUBOPT] += bad
    cnt_r[p] += 1
    tau = cnt_r[p]
    if tau < two_radius.size:
        tr = two_radius[tau]
    else:  # the core's boundary is in sum space
        tr = se_boundary(tau, k, conf, se_c, 2 if kind == SER3 else 1) / tau
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
        if i != pos and se_eliminates(top - mu[i], tr, eps):
            S[p, a] = False
            E[a] = True
        else:
            arms[p, kept] = a
            kept += 1
    if kept < r:
        ns[p] = kept
        held[p] = arms[p, 0] if kept == 1 else -1
    return r - kept


@_inlined
def _decide_phase(p, kind, S, ns, cnt, sums, cnt_r, E, ties, mu, keys):
    """End of a naive phase (keep the empirical best) or a median phase (keep the ceil(|S|/2) best; spec 3.1,
    3.2), ties at random."""
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
    keep = (ns[p] + 1) // 2
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
    cnt_r[p] += 1


@_inlined
def _ugapec_indices(p, k_total, conf, S, cnt, sums, t_pulls, ucb_log, beta, upper, gap, ties):
    """UGapEc's beta, U and -B over the active arms (every one pulled); returns J = argmin B (spec 3.6)."""
    t = max(t_pulls, 1)
    log_term = ucb_log[t] if t < ucb_log.size else ugapec_log_term(float(t), k_total, conf)
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
def _ugapec_partner(p, j, S, beta, upper, ties, mask):
    """The arm to pull next: the more uncertain of J and u = argmax_{k != J} U_k (tie -> J)."""
    for a in range(mask.shape[1]):
        mask[0, a] = S[p, a] and a != j
    u = _tie_argmax(upper, mask, np.int64(0), ties)  # int64 rows only: one specialisation
    return j if beta[j] >= beta[u] else u


@_helper
def _materialise(p, S, best, cnt, jj, left, target, scal):
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
                scal[SUBOPT] += new - cnt[p, a]
            cnt[p, a] = new
            left[p] += target - new
            rank += 1
    jj[p] = 0


@_helper
def _remove(p, a, kind, S, best, jj, left, opened, scal, ties, eager, pulled):
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
            scal[SUBOPT] += not (eager or best[a])  # an eager pull was counted when it was made
        else:
            left[p] -= 1
    S[p, a] = False


@_helper
def _end_phase(p, kind, means, best, eps, conf, se_c, target, two_radius, rewards, ties, scal, S, ns, held,
               cnt, sums, cnt_r, jj, left, opened, E, mu, keys, arms, eager, pulled):
    """End of a naive/median phase: draw its rewards unless drawn already in eager mode (each arm of the set
    was pulled ``target`` times), count its plays, decide (spec 3.1, 3.2). Returns the number of arms
    eliminated (set in ``E``). The arguments are those of :func:`_end_round`: ``simulate`` calls either."""
    jj[p], left[p], opened[p] = 0, 0, False
    before = ns[p]
    if not eager:
        for i in range(before):
            a = arms[p, i]
            sums[p, a] = rewards.binomial(target, means[a])
            if not best[a]:
                scal[SUBOPT] += target - cnt[p, a]
            cnt[p, a] = target
    _decide_phase(p, kind, S, ns, cnt, sums, cnt_r, E, ties, mu, keys)
    _settle(p, S, ns, held, arms)
    return before - ns[p]


def kernel_for(kind: int) -> Callable[..., int]:
    """:func:`simulate` compiled for the subroutines of ``kind``'s group: SE/SER3, naive/median or UGapEc."""
    return _group_kernel(kind <= MEDIAN, kind == UGAPEC)


@functools.cache
def _group_kernel(phases: bool, ugapec: bool) -> Callable[..., int]:
    """The kernel of one group of subroutines: the group is a closure constant, so numba drops the other
    groups' branches before typing them and a run compiles its own subroutine's helpers only (a phase's
    Binomial draws and UGapEc's indices cost more compilation than SE's whole round). numba's cache keys each
    group's kernel by these constants."""

    @njit(cache=True, _nrt=False, no_cfunc_wrapper=True, error_model="numpy")
    def simulate(players, kind, means, best, eps, conf, se_c, targets, two_radius, ucb_log, m, stop_rule, only_active,
                 max_steps, rewards, ties, scal, S, ns, held, arms, cnt, sums, cnt_r, jj, left, opened, aux, lam, seen,
                 local, absorbed, G, V, elim_time, vote_sender, vote_time, vote_arm, curve_t, curve_done,
                 E, mu, keys, beta, upper, gap, mask, eager, round_mode, after, best_after, switch_at, drift, top, pool,
                 resets, pulled, rec_t, rec_a, rec_r):
        """Run the steps of ``players`` (one chunk of the player sequence) until the stopping rule fires.

        Returns the number of entries of ``players`` consumed: all of them, or fewer when the run is over
        (``scal[STOPPED]`` is 1 at the stopping rule, 2 at ``max_steps`` raw steps) or when the vote or status
        buffers are nearly full (the caller grows them and resumes). Every array is the run's state, updated in
        place.

        Round-robin units (an SE/SER3 round, a naive/median phase; ``opened``) are kept lazily: ``jj`` pulls made
        and ``left`` pulls to go. Which arms the pulls went to is settled only when an arm leaves the set (SE:
        index order; SER3: the pulled arms of a round are a uniformly random subset; naive/median: canonical
        round-robin counts in ``cnt``), and the rewards are drawn at the unit's end (one per arm of a round, one
        binomial per arm of a phase): the same law as pull by pull, since nothing looks at them earlier.
        In ``eager`` mode (means that change over time, rewards from ``pool``, recorded pulls, resets) every pull
        takes its arm and reward at its step instead (``pulled``: the arms pulled in the open SE/SER3 round).
        ``round_mode``: one activation runs the rest of an SE/SER3 round, or one pull of every arm of a phase.
        ``resets``: the steps (increasing) before which every player restarts and the board is cleared (DSER4).
        ``cnt_r``: SE/SER3 completed rounds, median phase, UGapEc pulls; ``aux``: UGapEc's next arm (-1: to be
        chosen). ``two_radius[tau]``: ``2 radius(tau)`` of SE/SER3 (constant ``se_c``, 4 for SER3); ``ucb_log[t]``:
        UGapEc's log term (both computed past their tables); ``targets``: pulls per arm of a phase, ``[ell]`` for
        naive elimination, by phase for median elimination (a table: the formula's powers and logarithm cost more
        than a step).
        """
        n, k = S.shape
        end_unit = _end_phase if phases else _end_round
        target = targets[0]
        raw, t = scal[RAW], scal[T]  # kept in registers; written back on return
        consumed = players.size
        for i in range(players.size):
            if raw >= max_steps:
                scal[STOPPED] = 2
                consumed = i
                break
            if resets.size > 0 and (scal[N_VOTES] + k > vote_sender.size or scal[N_CURVE] + 3 > curve_t.size):
                consumed = i  # without resets the buffers cannot fill up (M votes per arm, two flips per arm)
                break
            p = np.int64(players[i])
            raw += 1
            if resets.size > 0 and scal[N_RESETS] < resets.size and raw == resets[scal[N_RESETS]]:  # DSER4: afresh
                scal[N_RESETS] += 1
                for q in range(n):
                    for a in range(k):
                        S[q, a], lam[q, a], pulled[q, a], cnt[q, a], sums[q, a] = True, False, False, 0, 0.0
                    _settle(q, S, ns, held, arms)
                    cnt_r[q] = 1 if kind == MEDIAN else 0
                    jj[q], left[q], opened[q], aux[q] = 0, 0, False, -1
                for a in range(k):
                    G[a], V[a], elim_time[a] = True, 0, -1
                scal[NG], scal[DONE], scal[T_CONS] = k, 0, -1
                scal[VERSION] += 1
                seen[:] = scal[VERSION]
                c = scal[N_CURVE]
                curve_t[c], curve_done[c] = raw - 1, 0
                scal[N_CURVE] = c + 1
            if absorbed[p]:
                continue
            t += 1
            local[p] += 1
            was_done = ns[p] == 1
            gone = 0  # arms her subroutine eliminates at this step (set in E)
            if kind == MEDIAN:
                target = targets[cnt_r[p]]
            # ---- read the board (A2): every global elimination since the last activation
            if m > 0 and seen[p] != scal[VERSION]:
                seen[p] = scal[VERSION]
                lost = 0
                for j in range(ns[p]):
                    lost += not G[arms[p, j]]
                restart = lost == ns[p] or (scal[NG] == 1 and (ns[p] > 1 or lost > 0))  # A5 / line 11
                if lost > 0 or restart:
                    if phases and opened[p] and not eager:
                        _materialise(p, S, best, cnt, jj, left, target, scal)
                    for j in range(ns[p]):  # the list is rebuilt by _settle below
                        a = arms[p, j]
                        if restart or not G[a]:
                            _remove(p, a, kind, S, best, jj, left, opened, scal, ties, eager, pulled)
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
                    _settle(p, S, ns, held, arms)
                    if opened[p] and left[p] == 0 and ns[p] > 1:  # a unit completed by the eliminations
                        gone += end_unit(p, kind, means, best, eps, conf, se_c, target, two_radius, rewards, ties,
                                          scal, S, ns, held, cnt, sums, cnt_r, jj, left, opened, E, mu, keys, arms,
                                          eager, pulled)
                        if kind == MEDIAN:
                            target = targets[cnt_r[p]]
            # ---- one call of the subroutine: one pull (one round-robin pass or SE/SER3 round in round mode)
            if ns[p] == 1:  # a finished player pulls her arm; only a recorded pull needs its reward
                a = held[p]
                scal[SUBOPT] += not _is_best(a, raw, best, best_after, switch_at)
                if rec_t.size > 0:
                    _record(a, raw, _reward(a, raw, i, means, after, switch_at, drift, top, pool, rewards), scal,
                            rec_t, rec_a, rec_r)
            elif kind != UGAPEC:  # the pull goes into the unit; lazily, its arm and reward are settled later
                if not opened[p]:
                    opened[p] = True
                    left[p] = ns[p] if kind == SE or kind == SER3 else ns[p] * target
                q = 1
                if round_mode:  # a round's pulls all come at this step (a phase's counts stay equal: min works)
                    q = left[p] if kind == SE or kind == SER3 else min(ns[p], left[p])
                if eager:
                    for _ in range(q):
                        _pull_unit(p, kind, raw, i, target, means, after, best, best_after, switch_at, drift, top,
                                   pool, rewards, ties, scal, S, cnt, sums, pulled, left, rec_t, rec_a, rec_r)
                        left[p] -= 1
                else:
                    left[p] -= q
                jj[p] += q
                if left[p] == 0:
                    gone += end_unit(p, kind, means, best, eps, conf, se_c, target, two_radius, rewards, ties, scal,
                                      S, ns, held, cnt, sums, cnt_r, jj, left, opened, E, mu, keys, arms, eager,
                                      pulled)
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
                        j = _ugapec_indices(p, k, conf, S, cnt, sums, cnt_r[p], ucb_log, beta, upper, gap, ties)
                        a = _ugapec_partner(p, j, S, beta, upper, ties, mask)
                y = _reward(a, raw, i, means, after, switch_at, drift, top, pool, rewards)
                cnt[p, a] += 1
                sums[p, a] += y
                cnt_r[p] += 1
                aux[p] = -1
                scal[SUBOPT] += not _is_best(a, raw, best, best_after, switch_at)
                _record(a, raw, y, scal, rec_t, rec_a, rec_r)
                tried = True
                for b in range(k):
                    if S[p, b] and cnt[p, b] == 0:
                        tried = False
                if tried:  # the stopping test; its indices also fix the next arm
                    j = _ugapec_indices(p, k, conf, S, cnt, sums, cnt_r[p], ucb_log, beta, upper, gap, ties)
                    if -gap[j] < eps:
                        gone += ns[p] - 1
                        for b in range(k):
                            E[b] = S[p, b] and b != j
                            S[p, b] = b == j
                        _settle(p, S, ns, held, arms)
                    else:
                        aux[p] = _ugapec_partner(p, j, S, beta, upper, ties, mask)
            # ---- votes (a player votes against an arm at most once) and global eliminations; E is cleared
            if gone > 0:
                for a in range(k):
                    if not E[a]:
                        continue
                    E[a] = False
                    if m > 0 and not lam[p, a]:
                        lam[p, a] = True
                        V[a] += 1
                        nv = scal[N_VOTES]
                        vote_sender[nv], vote_time[nv], vote_arm[nv] = p, t, a
                        scal[N_VOTES] = nv + 1
                        if V[a] == m and G[a]:  # index order; never empty the shared set (A4)
                            if scal[NG] > 1:
                                G[a] = False
                                scal[NG] -= 1
                                scal[VERSION] += 1
                                elim_time[a] = raw
                            else:
                                scal[GUARD] += 1
                if m > 0 and scal[NG] == 1 and scal[T_CONS] < 0:
                    scal[T_CONS] = t
            # ---- status and stopping
            now_done = ns[p] == 1
            if now_done == was_done:
                if stop_rule != STOP_CONSENSUS or scal[NG] > 1:  # nothing else can have changed
                    continue
            else:
                scal[DONE] += 1 if now_done else -1
                c = scal[N_CURVE]
                curve_t[c], curve_done[c] = raw, scal[DONE]
                scal[N_CURVE] = c + 1
                if now_done and only_active:
                    absorbed[p] = True
                    scal[N_ABSORBED] += 1
            stop = stop_rule == STOP_ALL and scal[DONE] == n
            if stop_rule == STOP_CONSENSUS:
                stop = scal[NG] == 1 or scal[N_ABSORBED] == n
                if not stop and scal[DONE] == n and now_done != was_done:  # nothing changes unless a read undoes one
                    stop = True
                    for w in range(n):
                        stop = stop and (absorbed[w] or G[held[w]])
            if stop:
                scal[STOPPED] = 1
                consumed = i + 1
                break
        scal[RAW], scal[T] = raw, t
        return consumed

    return simulate


@njit(cache=True)
def close_units(kind, best, S, cnt, jj, left, opened, scal, ties):
    """At the end of a run, count the plays of arms that are not the best among the pulls of open units."""
    n, k = S.shape
    for p in range(n):
        if not opened[p] or jj[p] == 0:
            continue
        if kind <= MEDIAN:
            _materialise(p, S, best, cnt, jj, left, np.int64(0), scal)  # (``left`` is not needed any more)
            continue
        want, rest = jj[p], jj[p] + left[p]  # SE: the first jj arms; SER3: a uniform jj-subset
        for a in range(k):
            if S[p, a] and want > 0:
                if kind == SE or _index(ties, rest) < want:
                    want -= 1
                    scal[SUBOPT] += not best[a]
                rest -= 1


def run_kernel(subroutine: str, env: Environment, n: int, sample: Callable[[int, np.random.Generator], np.ndarray],
               player_rng: np.random.Generator, rewards: np.random.Generator, ties: np.random.Generator, *,
               eps: float, conf: float, se_c: float, threshold: int | None, stop_rule: str,
               draw_only_active: bool, max_steps: int, per_activation: str = "pull",
               resets: np.ndarray | None = None, record: bool = False) -> dict[str, Any]:
    """One run; returns its final state (the arrays of :func:`simulate` by name) and raw results. The vote
    steps and the consensus step leave out the draws of finished players with ``draw_only_active`` (the public
    results' convention), while ``t_end``, the elimination steps and the status curve are raw steps.
    ``threshold``: M, ``None`` for no board (1-PRIVACY, 0-PRIVACY); ``stop_rule``: ``all``, ``consensus`` or
    ``none`` (run ``max_steps`` steps); ``resets``: DSER4's reset steps; ``record``: keep (step, arm, reward)
    of every pull.

    The player sequence is drawn with ``sample(size, player_rng)`` in chunks (first chunk ``max(2^15, 64 N)``
    steps, then doubling). Stationary Bernoulli runs without records or resets are lazy (see
    :func:`simulate`), the others eager; rewards other than Bernoulli come from the run's reward stream as
    one pre-drawn block per chunk (a reward per step and arm, of the means at that step).
    """
    k = env.arms
    m = threshold or 0
    resets = np.empty(0, np.int64) if resets is None else np.asarray(resets, np.int64)
    scal = np.zeros(14, np.int64)
    scal[NG], scal[T_CONS] = k, -1
    kind = KINDS[subroutine]
    se_c = 4.0 if kind == SER3 else se_c  # the constant c of the SE/SER3 radius (spec 3.3, 3.4)
    state = dict(S=np.ones((n, k), np.bool_), ns=np.full(n, k, np.int64), held=np.full(n, -1, np.int64),
                 arms=np.tile(np.arange(k, dtype=np.int64), (n, 1)), cnt=np.zeros((n, k), np.int64),
                 sums=np.zeros((n, k)), cnt_r=np.full(n, 1 if kind == MEDIAN else 0, np.int64),
                 jj=np.zeros(n, np.int64), left=np.zeros(n, np.int64), opened=np.zeros(n, np.bool_),
                 aux=np.full(n, -1, np.int64), lam=np.zeros((n, k), np.bool_), seen=np.zeros(n, np.int64),
                 local=np.zeros(n, np.int64), absorbed=np.zeros(n, np.bool_), G=np.ones(k, np.bool_),
                 V=np.zeros(k, np.int64), elim_time=np.full(k, -1, np.int64))  # in the order of simulate's arguments
    two_radius, ucb_log = _tables(kind, k, conf, se_c)
    if kind == MEDIAN:
        targets = _median_targets(eps, conf, k)
    else:  # naive elimination's pulls per arm, ell (spec 3.1)
        targets = np.array([naive_elimination_pulls(eps, conf, k) if kind == NAIVE else 0], np.int64)
    votes = [np.zeros(m * k + k, np.int64) for _ in range(3)]  # M votes per arm at most between resets
    curve = [np.zeros(2 * n * k + 3, np.int64) for _ in range(2)]  # a player flips at most twice per arm
    means = env.means
    best = means == means.max()
    after = env.means_after if env.switch_at > 0 else means
    best_after = after == after.max()
    if env.drift > 0:  # the initial best arm alone keeps its mean
        best = np.arange(k) == int(np.argmax(means))
    bernoulli = env.reward == "bernoulli"
    eager = not (env.stationary and bernoulli) or record or resets.size > 0
    # E (cleared by the kernel after use), mu, keys, beta, upper, gap, mask
    scratch = (np.zeros(k, np.bool_), *np.empty((5, k)), np.empty((1, k), np.bool_))
    pulled = np.zeros((n, k), np.bool_)
    fixed = (eager, per_activation == "round", after, best_after, int(env.switch_at), float(env.drift),
             int(np.argmax(means)))
    no_pool, no_rec = np.empty((0, k)), (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))
    records: list[tuple[np.ndarray, ...]] = []
    cap = max_steps if bernoulli else max(1 << 10, (1 << 21) // k)  # a reward block holds size * K draws
    drawn, size = 0, min(max_steps, max(1 << 15, 64 * n), cap)
    kernel = kernel_for(kind)
    while scal[STOPPED] == 0:
        chunk = sample(size, player_rng)
        pool = no_pool
        if not bernoulli:
            mu = env.mean(np.arange(drawn + 1, drawn + size + 1))
            pool = env.draw(mu, rewards)
        drawn += size
        pos = 0
        while pos < size and scal[STOPPED] == 0:
            rec = tuple(np.empty(size - pos, x.dtype) for x in no_rec) if record else no_rec
            scal[N_REC] = 0
            pos += kernel(chunk[pos:], kind, means, best, eps, conf, se_c, targets, two_radius, ucb_log, m,
                            STOP_CODES[stop_rule], draw_only_active, max_steps, rewards, ties, scal,
                            *state.values(), *votes, *curve, *scratch, *fixed, pool[pos:], resets, pulled, *rec)
            records.append(tuple(x[:scal[N_REC]] for x in rec))
            if pos < size and scal[STOPPED] == 0:  # the vote or status buffers are full
                votes = [np.concatenate([x, np.zeros_like(x)]) for x in votes]
                curve = [np.concatenate([x, np.zeros_like(x)]) for x in curve]
        if scal[STOPPED] == 0 and drawn >= max_steps:
            scal[STOPPED] = 2
        size = min(max_steps - drawn, drawn, 1 << 22, cap)
    if not eager:
        close_units(kind, best, *(state[x] for x in ("S", "cnt", "jj", "left", "opened")), scal, ties)
    nv, nc = scal[N_VOTES], scal[N_CURVE]
    return dict(state, t_end=int(scal[RAW]), stopped=bool(scal[STOPPED] == 1 or stop_rule == "none"),
                t_consensus=None if scal[T_CONS] < 0 else int(scal[T_CONS]), outputs=_outputs(state, scal),
                vote_sender=votes[0][:nv], vote_time=votes[1][:nv], vote_arm=votes[2][:nv],
                guard_fired=int(scal[GUARD]), suboptimal=int(scal[SUBOPT]), done_times=curve[0][:nc],
                done_counts=curve[1][:nc], resets=int(scal[N_RESETS]),
                pull_records=tuple(np.concatenate(x) for x in zip(*records, strict=True)) if record else None)


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


def _outputs(state: dict[str, np.ndarray], scal: np.ndarray) -> np.ndarray:
    """Each player's single arm at the end, with the shared set as she would read it at her next activation
    (the reference loop's convention too): a finished player keeps her arm until that read; another one holds
    the arm left by the read, if one."""
    S, G, held = state["S"], state["G"], state["held"]
    out = held.copy()
    stale = (held < 0) & (state["seen"] != scal[VERSION]) & ~state["absorbed"]
    if stale.any():
        if G.sum() == 1:
            out[stale] = int(np.flatnonzero(G)[0])
        else:
            left = S[stale] & G
            single = left.sum(axis=1) == 1
            out[np.flatnonzero(stale)[single]] = left[single].argmax(axis=1)
    return out
