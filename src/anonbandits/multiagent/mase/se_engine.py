"""Many agents running Successive Elimination on one bandit, simulated exactly and vectorised.

This engine runs the voting schemes of paper 003 whose local routine is Successive Elimination (SE, Sec. 4.1):
CORRUPTED ELIMINATION (Alg. 3 with Alg. 4b), the generic MASE scheme (Alg. 1) and the INDEPENDENT baseline
(Sec. 6). One *round* is one activation of one agent, which pulls every arm of its local set.

How the simulation stays exact while being fast
-----------------------------------------------
* **Poisson clock.** Rounds are embedded in continuous time: agent n is activated at the points of an
  independent Poisson process of rate ``p_n``. Merging the processes of the agents still in the pool gives
  i.i.d. draws from ``P_N`` restricted to those agents and renormalised (spec A10), and removing an agent is
  simply stopping its process. Round numbers are ranks of activation times.
* **Windows.** Time advances in windows (about ``window`` activations of the most active agent, at least
  ``_ROWS`` in all). Between two global eliminations the agents do not interact, so within a window every
  agent's activations are processed along its own time axis, all agents at once:

  - with Bernoulli rewards, the activations during which SE provably cannot eliminate anything
    (:func:`safe_steps`) are drawn as one Binomial sum per arm, in stages;
  - the other activations get per-pull rewards, cumulated, and the SE test is evaluated on all of them in one
    pass, which finds every local elimination of the window (a rare second pass handles an agent whose
    empirical best arm was one it had already eliminated).
* **Global eliminations.** After a window the delivered votes are ordered by time. If an arm reaches the
  threshold inside the window at time ``s``, the window is replayed with the same draws up to ``s`` only (the
  trajectory before ``s`` is identical), the arm leaves the global set, and the next window starts at ``s``.
  Discarding the draws after ``s`` is exact because ``s`` is a stopping time and the future is memoryless.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from anonbandits.multiagent.mase.formulas import se_boundary
from anonbandits.multiagent.mase.instances import Instance
from anonbandits.multiagent.mase.result import EliminationLog
from anonbandits.multiagent.messages import MessageLog

RUNNING, IDLE, GONE = 0, 1, 2
_MAX_STAGES = 12  # bulk stages per window
_MIN_STAGE = 4  # shorter safe runs are left to the per-activation scan
_ROWS = 8192  # a full window holds at least about this many activations in total


@dataclass(frozen=True)
class SEProtocol:
    """How the agents interact.

    conf : local failure probability of every agent's SE (``eta_xi``, ``beta`` or ``delta``).
    threshold : votes needed for a global elimination (``M*``); ``None`` means no communication.
    xi : probability that a vote is dropped (CORRUPTED ELIMINATION's mask, spec A21).
    sync : ``"lazy"`` (K_n := K_n ∩ K_glob at the end of each activation, Alg. 3 line 12), ``"immediate"``
        (every agent loses a globally eliminated arm at once, Alg. 1) or ``"none"``.
    retire : agents whose local set has one arm leave the pool (Alg. 3 line 10); otherwise (Alg. 1) they stay
        and keep pulling that arm.
    retire_on_sync : also retire agents left with at most one arm by a sync (spec A9 option).
    sampling : ``"active"`` draws the agent among those still in the pool (spec A10); ``"fixed"`` keeps
        drawing from the fixed P_N, the rounds of agents that left being idle rounds that still count.
    stop : ``"global"`` (one arm left globally), ``"all"`` (every agent finished) or ``"first"`` (the first
        agent finished; INDEPENDENT's options, spec A14).
    width_c, width_denominator : the constant c and the t / 2t choice of the SE width (spec A4).
    max_rounds : the run stops (``truncated``) once this many rounds are exceeded.
    window : expected activations of the most active agent per simulation window (speed only).
    """

    conf: float
    threshold: int | None
    xi: float = 0.0
    sync: str = "lazy"
    retire: bool = True
    retire_on_sync: bool = False
    sampling: str = "active"
    stop: str = "global"
    width_c: float = 1.0
    width_denominator: int = 1
    max_rounds: int = 10**9
    window: int = 32


@dataclass
class SEOutcome:
    """Raw outcome of :func:`run_se_agents` (turned into a :class:`MaseResult` by the algorithm modules)."""

    rounds: int
    pulls: int
    global_set: np.ndarray
    votes: np.ndarray
    local_sets: np.ndarray
    finished: np.ndarray
    exit_rounds: np.ndarray
    messages: MessageLog
    eliminations: EliminationLog
    global_eliminations: list[tuple[int, int]] = field(default_factory=list)
    stalled: bool = False
    truncated: bool = False


@dataclass
class _Pass:
    """Agent states after processing one window's activations up to some time."""

    S: np.ndarray
    Kn: np.ndarray
    tn: np.ndarray
    status: np.ndarray
    pos: np.ndarray
    end: np.ndarray
    exit_time: np.ndarray
    pulls: int
    vote_agent: np.ndarray
    vote_col: np.ndarray
    vote_time: np.ndarray


@dataclass
class _Window:
    """One window's draws for the running agents ``run`` (rows = activations, agent-major, time-sorted).

    ``stages`` are the exact bulk sums of the safe prefix: per stage, the agents it advances, the number of
    activations it covers for each, and their per-arm reward sums. The remaining activations get one reward
    per (activation, arm) in ``rewards``, whose row for window row r of agent n is ``r - reward_offset[n]``.
    Activation times are drawn for the agents with activations outside the safe prefix; the others' are
    drawn only if needed (``timed``), which is exact since nothing has depended on them.
    """

    run: np.ndarray
    counts: np.ndarray
    seg_start: np.ndarray
    t0: float
    t1: float
    times: np.ndarray
    timed: np.ndarray
    cols: np.ndarray
    stages: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    bulk_total: np.ndarray
    reward_offset: np.ndarray
    rewards: np.ndarray


def safe_steps(spread: np.ndarray, t: np.ndarray, arms: int, proto: SEProtocol) -> np.ndarray:
    """Activations during which SE cannot eliminate anything, whatever the [0, 1] rewards.

    With ``spread = max_l S_l - min_k S_k`` over the local set after ``t`` samples, every pairwise difference
    grows by at most 1 per activation, so steps ``1..b`` are safe while ``spread + b < g(t + b)``; since g is
    non-decreasing, ``b = ceil(g(t + b') - spread) - 1`` is safe whenever ``b'`` is, which is iterated from
    ``b' = 1``.
    """
    def bound(b):
        g = se_boundary(t + np.maximum(b, 1), arms, proto.conf, proto.width_c, proto.width_denominator)
        return np.ceil(g - spread) - 1

    b = bound(np.ones_like(t))
    for _ in range(3):
        b = np.where(b >= 1, np.maximum(b, bound(b)), b)
    return np.maximum(b, 0).astype(np.int64)


def sorted_uniform_segments(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each segment of length ``counts[i]``, its sorted i.i.d. U(0,1) points (exponential spacings)."""
    n = int(counts.sum())
    ext = counts + 1
    gaps = rng.standard_exponential(n + counts.size)
    csum = np.cumsum(gaps)
    ends = np.cumsum(ext) - 1
    base = np.concatenate([[0.0], csum[ends[:-1]]])
    keep = np.ones(n + counts.size, bool)
    keep[ends] = False
    seg = np.repeat(np.arange(counts.size), counts)
    return (csum[keep] - base[seg]) / (csum[ends] - base)[seg]


def _ranks(times: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """For each query q, the number of ``times`` <= q (``times`` unsorted)."""
    if queries.size == 0:
        return np.empty(0, np.int64)
    order = np.argsort(queries)
    bins = np.searchsorted(queries[order], times, "left")
    below = np.cumsum(np.bincount(bins, minlength=queries.size + 1))[:queries.size]
    out = np.empty(queries.size, np.int64)
    out[order] = below
    return out


def _cat(parts: list[np.ndarray], dtype) -> np.ndarray:
    return np.concatenate(parts).astype(dtype) if parts else np.empty(0, dtype)


class _Engine:
    def __init__(self, instance: Instance, probs: np.ndarray, proto: SEProtocol, rng: np.random.Generator,
                 record: bool) -> None:
        self.inst, self.p, self.proto, self.rng = instance, probs, proto, rng
        n, k = probs.size, instance.arms
        self.K = k
        self.Kn = np.ones((n, k), bool)
        self.S = np.zeros((n, k))
        self.tn = np.zeros(n, np.int64)
        self.status = np.full(n, RUNNING, np.int8)
        self.G = np.ones(k, bool)
        self.lam = np.zeros(k, np.int64)
        self.clock = 0.0
        self.rounds = 0
        self.pulls = 0
        self.exit_round = np.full(n, -1, np.int64)
        self.messages = MessageLog(record=record)
        self.elims = EliminationLog()
        self.global_elims: list[tuple[int, int]] = []
        self.record = record
        self.span = float(proto.window)

    # -- one window -----------------------------------------------------------------------------------------
    def _draw_window(self, run: np.ndarray, width: float) -> _Window:
        """Activation times of the running agents in ``[clock, clock + width)`` and the rewards they need.

        For Bernoulli rewards the safe prefix of every agent (:func:`safe_steps`) is drawn in stages, one
        Binomial sum per (agent, arm, stage), restarting the bound from the state each stage reaches.
        """
        rng, proto = self.rng, self.proto
        counts = rng.poisson(self.p[run] * width)
        seg_start = np.cumsum(counts) - counts
        cols = np.flatnonzero(self.Kn[run].any(axis=0))
        kn = self.Kn[np.ix_(run, cols)]
        stages: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        bulk_total = np.zeros(run.size, np.int64)
        if self.inst.model == "bernoulli":
            s = self.S[np.ix_(run, cols)]
            t = self.tn[run].copy()
            alive = kn.sum(axis=1) > 1
            if proto.sync == "lazy":
                alive &= ~(kn & ~self.G[cols]).any(axis=1)
            for _ in range(_MAX_STAGES):
                idx = np.flatnonzero(alive)
                if idx.size == 0:
                    break
                sub, kk = s[idx], kn[idx]
                spread = np.where(kk, sub, -np.inf).max(axis=1) - np.where(kk, sub, np.inf).min(axis=1)
                b = np.minimum(safe_steps(spread, t[idx], self.K, proto), counts[idx] - bulk_total[idx])
                b[b < _MIN_STAGE] = 0
                if not b.any():
                    break
                keep = b > 0
                idx, b = idx[keep], b[keep]
                sums = self.inst.sums_where(rng, b[:, None] * kn[idx], kn[idx], cols)
                stages.append((idx, b, sums))
                s[idx] += sums
                t[idx] += b
                bulk_total[idx] += b
                alive[:] = False
                alive[idx] = bulk_total[idx] < counts[idx]
        reward_offset = np.cumsum(bulk_total)
        rewards = self.inst.draw(rng, cols, int(counts.sum() - bulk_total.sum()))
        w = _Window(run, counts, seg_start, self.clock, self.clock + width, np.full(int(counts.sum()), np.nan),
                    np.zeros(run.size, bool), cols, stages, bulk_total, reward_offset, rewards)
        self._time(w, np.flatnonzero(bulk_total < counts))
        return w

    def _time(self, w: _Window, agents: np.ndarray | None = None) -> None:
        """Draw the activation times of ``agents`` (default: all not yet timed) in the window."""
        agents = np.flatnonzero(~w.timed) if agents is None else agents[~w.timed[agents]]
        if agents.size == 0:
            return
        c = w.counts[agents]
        u = sorted_uniform_segments(c, self.rng)
        rows = np.arange(int(c.sum())) - np.repeat(np.cumsum(c) - c - w.seg_start[agents], c)
        w.times[rows] = w.t0 + (w.t1 - w.t0) * u
        w.timed[agents] = True

    def _pass(self, w: _Window, t_end: float) -> _Pass:
        """Process the window's activations with time <= ``t_end`` (the engine's state is left untouched)."""
        proto = self.proto
        run, cols, times = w.run, w.cols, w.times
        m = run.size
        G = self.G[cols]
        S = self.S[np.ix_(run, cols)]
        Kn = self.Kn[np.ix_(run, cols)]
        tn = self.tn[run].copy()
        status = np.full(m, RUNNING, np.int8)
        if t_end >= w.t1:
            end = w.seg_start + w.counts
        else:
            self._time(w)
            seg_id = np.repeat(np.arange(m), w.counts)
            end = w.seg_start + np.bincount(seg_id[times <= t_end], minlength=m)
        # the safe prefix: exact sums per stage, split hypergeometrically if the pass stops inside a stage
        avail = end - w.seg_start
        done = np.zeros(m, np.int64)
        for idx, step, sums in w.stages:
            take = np.clip(avail[idx] - done[idx], 0, step)
            S[idx] += np.where((take == step)[:, None], sums, 0.0)
            part = np.flatnonzero((take > 0) & (take < step))
            if part.size:
                good = sums[part].astype(np.int64)
                S[idx[part]] += self.rng.hypergeometric(good, step[part, None] - good, take[part, None])
            done[idx] += take
        tn += done
        pulls = int((done * Kn.sum(axis=1)).sum())
        pos = w.seg_start + done
        exit_time = np.full(m, np.inf)
        v_agent, v_col, v_time = [], [], []
        lazy = proto.sync == "lazy"
        pending = np.flatnonzero(end > pos)
        while pending.size:
            lens = end[pending] - pos[pending]
            offs = np.cumsum(lens) - lens
            last = offs + lens - 1
            nrows = int(lens.sum())
            rowid = np.arange(nrows)
            rows = rowid - np.repeat(offs - pos[pending], lens)
            seg = np.repeat(np.arange(pending.size), lens)
            ag = pending[seg]
            kn0 = Kn[pending]
            kg = kn0 & G if lazy else kn0  # the lazy sync drops stale arms after the first activation
            mask = kn0[seg]
            if lazy:
                mask[~np.isin(rowid, offs)] &= G
            cs = np.cumsum(w.rewards[rows - w.reward_offset[ag]] * mask, axis=0)
            cs0 = np.vstack([np.zeros((1, cols.size)), cs])
            srow = S[ag] + cs - np.repeat(cs0[offs], lens, axis=0)
            trow = tn[ag] + 1 + (rows - np.repeat(pos[pending], lens))
            g = se_boundary(trow, self.K, proto.conf, proto.width_c, proto.width_denominator)
            top = np.where(mask, srow, -np.inf).max(axis=1)
            gap = top[:, None] - srow
            cond = mask & (gap >= g[:, None]) & (gap > 0)
            # every elimination at once: the first row each arm meets the test against the max over the arms
            # the agent held at the start of the scan; that max is the true one on every row where an arm still
            # held attains it, and the scan stops before the first row where this fails
            first_hit = np.minimum.reduceat(np.where(cond, rowid[:, None], nrows), offs, axis=0)
            alive = mask & (first_hit[seg] >= rowid[:, None])
            valid = (alive & (srow == top[:, None])).any(axis=1)
            bad = np.minimum.reduceat(np.where(valid, nrows, rowid), offs)
            # the agent leaves (or idles) at its first activation if the sync leaves it too few arms, otherwise
            # at the activation where its last-but-one arm is eliminated
            first_elim = kn0 & (first_hit == offs[:, None])
            before1 = (kn0 & ~first_elim).sum(axis=1)
            after1 = (kg & ~first_elim).sum(axis=1)
            out1 = self._leaves(before1, after1)
            held = kg.sum(axis=1)
            order = np.sort(np.where(kg, first_hit, nrows), axis=1)
            drop = np.where(held >= 2, order[np.arange(pending.size), np.maximum(held - 2, 0)], offs)
            stop = np.minimum.reduce([last, bad - 1, np.where(out1, offs, np.maximum(drop, offs + 1))])
            npull = alive.sum(axis=1)
            cp = np.concatenate([[0], np.cumsum(npull)])
            pulls += int((cp[stop + 1] - cp[offs]).sum())
            S[pending] = srow[stop]
            tn[pending] = trow[stop]
            elim = kn0 & (first_hit <= stop[:, None])
            er, ec = np.nonzero(elim)
            if er.size:
                v_agent.append(pending[er])
                v_col.append(ec)
                v_time.append(times[rows[first_hit[er, ec]]])
            newk = kg & ~elim
            size = newk.sum(axis=1)
            leave = self._leaves(np.where(stop == offs, (kn0 & ~elim).sum(axis=1), size), size)
            new_status = np.where(leave, GONE if proto.retire else IDLE, RUNNING)
            Kn[pending] = newk
            status[pending] = new_status
            left = new_status != RUNNING
            row_at = rows[stop]
            exit_time[pending[left]] = times[row_at[left]]
            pos[pending] = row_at + 1
            pending = pending[~left & (pos[pending] < end[pending])]
        return _Pass(S, Kn, tn, status, pos, end, exit_time, pulls, _cat(v_agent, np.int64),
                     _cat(v_col, np.int64), _cat(v_time, float))

    def window(self) -> bool:
        """Advance by one window; return True when the run is over."""
        proto, rng = self.proto, self.rng
        run = np.flatnonzero(self.status == RUNNING)
        counting_idle = (self.status == IDLE) | ((self.status == GONE) & (proto.sampling == "fixed"))
        idle = np.flatnonzero(counting_idle)
        pr = self.p[run]
        width = self.span / proto.window * max(proto.window / pr.max(), _ROWS / pr.sum())
        t1 = self.clock + width
        w = self._draw_window(run, width)
        cols = w.cols
        idle_counts = rng.poisson(self.p[idle] * width)
        idle_each = self.Kn[idle].sum(axis=1) * (self.status[idle] == IDLE)

        res = self._pass(w, t1)
        v_agent, v_col, v_time = res.vote_agent, res.vote_col, res.vote_time
        delivered = rng.random(v_agent.size) >= proto.xi
        cut, crossing = self._cut_time(res, cols, delivered)
        t_stop = t1
        if cut < t1:
            # replay with the same draws up to the cut: the trajectory before it is unchanged, so the votes
            # are those of the first pass with time <= cut
            res = self._pass(w, cut)
            keep = v_time <= cut
            v_agent, v_col, v_time, delivered = v_agent[keep], v_col[keep], v_time[keep], delivered[keep]
            t_stop = cut
        # global eliminations come in bursts: after one, the next window is sized on where it fell in this one;
        # without one, the window grows back
        if cut < t1:
            self.span = max(0.5, self.span * (cut - self.clock) / width / 4)
        else:
            self.span = min(float(proto.window), self.span * 2)
        left = np.flatnonzero(np.isfinite(res.exit_time))
        if left.size and not (res.status == RUNNING).any():
            t_stop = min(t_stop, float(res.exit_time[left].max()))

        if v_agent.size == 0 and left.size == 0 and cut >= t1:
            # nothing to time-stamp: every activation of the window counts
            self.rounds += int((res.pos - w.seg_start).sum() + idle_counts.sum())
            self.pulls += res.pulls + int((idle_each * idle_counts).sum())
            self._commit(res, run, cols)
            self.clock = t_stop
            return self._finished()

        # rows that count as rounds: processed ones, then post-exit rows of agents whose rounds still count
        self._time(w)
        times = w.times
        seg_id = np.repeat(np.arange(run.size), w.counts)
        idle_times = self.clock + width * rng.random(idle_counts.sum())
        idle_pulls = np.repeat(idle_each, idle_counts)
        row_status = res.status[seg_id]
        row_idx = np.arange(seg_id.size)
        processed = row_idx < res.pos[seg_id]
        after = ~processed & (row_idx < res.end[seg_id]) & (times <= t_stop)
        after &= (row_status == IDLE) | ((row_status == GONE) & (proto.sampling == "fixed"))
        after_pulls = int(res.Kn.sum(axis=1)[seg_id[after & (row_status == IDLE)]].sum())
        idle_ok = idle_times <= t_stop
        counted = np.concatenate([times[processed], times[after], idle_times[idle_ok]])
        self.pulls += res.pulls + after_pulls + int(idle_pulls[idle_ok].sum())
        self._commit(res, run, cols)
        order = np.argsort(v_time, kind="stable")
        queries = np.concatenate([res.exit_time[left], v_time[order], [cut]])
        ranks = self.rounds + _ranks(counted, queries)
        self.exit_round[run[left]] = ranks[:left.size]
        if v_agent.size:
            agent = run[v_agent[order]]
            arm = cols[v_col[order]]
            when = ranks[left.size:-1]
            ok = delivered[order]
            self.elims.extend(agent, arm, when, ok)
            if proto.threshold is not None:
                self.messages.add(agent[ok], when[ok], arm[ok])
                np.add.at(self.lam, arm[ok], 1)
        self.rounds += counted.size
        self.clock = t_stop
        for arm in crossing:
            if self.G.sum() > 1:
                self.G[arm] = False
                self.global_elims.append((int(ranks[-1]), int(arm)))
                if proto.sync == "immediate":
                    self._immediate_sync(arm)
        return self._finished()

    def _leaves(self, before_sync: np.ndarray, after_sync: np.ndarray) -> np.ndarray:
        """Whether an agent stops being processed after an activation, given its set sizes around the sync.

        Alg. 3 retires it when one arm is left before the sync (line 10; spec A9 keeps the literal order) or
        none after it (guard); ``retire_on_sync`` also when at most one is left after it. In Alg. 1 it stays in
        the pool, idle, once at most one arm is left.
        """
        if not self.proto.retire:
            return after_sync <= 1
        out = (before_sync == 1) | (after_sync == 0)
        if self.proto.retire_on_sync:
            out |= after_sync <= 1
        return out

    def _commit(self, res: _Pass, run: np.ndarray, cols: np.ndarray) -> None:
        self.S[np.ix_(run, cols)] = res.S
        self.Kn[np.ix_(run, cols)] = res.Kn
        self.tn[run] = res.tn
        self.status[run] = res.status

    def _cut_time(self, res: _Pass, cols: np.ndarray, delivered: np.ndarray) -> tuple[float, list[int]]:
        """Earliest time in the window at which the run's course changes, and the arms it eliminates."""
        cut = np.inf
        crossing: list[int] = []
        if self.proto.threshold is not None and res.vote_agent.size:
            best_time = {}
            vt, vc = res.vote_time[delivered], cols[res.vote_col[delivered]]
            for arm in np.flatnonzero(self.G):
                need = self.proto.threshold - self.lam[arm]
                at = np.sort(vt[vc == arm])
                if at.size >= need:
                    best_time[int(arm)] = float(at[max(need, 1) - 1])
            if best_time:
                cut = min(best_time.values())
                crossing = sorted(a for a, t in best_time.items() if t == cut)
        if self.proto.stop == "first":
            exits = res.exit_time[np.isfinite(res.exit_time)]
            if exits.size and exits.min() < cut:
                cut, crossing = float(exits.min()), []
        return cut, crossing

    def _immediate_sync(self, arm: int) -> None:
        self.Kn[:, arm] = False
        few = (self.status == RUNNING) & (self.Kn.sum(axis=1) <= 1)
        self.status[few] = IDLE if not self.proto.retire else GONE

    def _finished(self) -> bool:
        proto = self.proto
        if proto.stop == "global" and self.G.sum() == 1:
            return True
        if proto.stop == "first" and (self.exit_round >= 0).any():
            return True
        if not (self.status == RUNNING).any():
            return True
        return self.rounds >= proto.max_rounds


def run_se_agents(instance: Instance, probs: np.ndarray, proto: SEProtocol, rng: np.random.Generator,
                  record: bool = True) -> SEOutcome:
    """Simulate ``len(probs)`` agents running SE under ``proto`` until its stopping rule fires."""
    eng = _Engine(instance, probs, proto, rng, record)
    while not eng.window():
        pass
    running = (eng.status == RUNNING).any()
    done_globally = proto.stop == "global" and eng.G.sum() == 1
    stalled = proto.stop == "global" and not done_globally and not running and eng.rounds < proto.max_rounds
    truncated = eng.rounds >= proto.max_rounds and not done_globally and running
    finished = eng.Kn.sum(axis=1) == 1
    return SEOutcome(eng.rounds, eng.pulls, eng.G.copy(), eng.lam.copy(), eng.Kn.copy(), finished,
                     eng.exit_round.copy(), eng.messages, eng.elims, eng.global_elims, bool(stalled),
                     bool(truncated))
