"""Event-driven simulation of the decentralized exploration protocol (paper 002, Algorithms 1 and 2; spec 4.4).

It runs every case the compiled per-step kernel (:mod:`.kernel`) does not: rewards other than Bernoulli,
drifting or switching means, one round per activation, 0-PRIVACY and DSER4.

Algorithm 2 draws one player per global step; she reads the vote board, applies the global eliminations,
pulls one arm through her Arm Selection subroutine and broadcasts a vote for every arm it eliminates. This
module produces the same process without visiting steps one by one:

* the player sequence comes from an :class:`~anonbandits.multiagent.decentralized.clock.ActivationClock`;
* players interact only through global eliminations, so between two of them each player runs *blocks* of
  pulls up to her next decision point (see :mod:`.subroutines`), drawn at once and vectorised over the
  players whose blocks are due;
* an arm leaves the shared set at the step of its M-th vote. Each player votes against an arm at most once
  and not before the earliest step her subroutine could eliminate it whatever the future rewards (at least
  her current block's end; see ``plan`` of the subroutines), so the M-th smallest of {votes on the
  board} U {those earliest steps of the players who may still vote against it} bounds that step from below.
  Every block ending before the smallest such bound is run; when the bound is attained by votes on the
  board, the elimination is applied at that step and every block in progress is cut there. The result is
  exact, not an approximation.

Same resolutions as spec 4.4: the vote sum includes the player's own votes (A21); a player applies every
global elimination made since her last activation (A2), restarts her subroutine on the shared set when none of
her arms survives (A5) and adopts the shared set once it is a singleton (line 11); the shared set is never
emptied (A4); finished players are still drawn and pull their arm (A7, unless ``draw_only_active``); the run
stops when every player holds one arm (A6), also recording the step of global consensus. A round whose
remaining arms were all eliminated globally is completed (decision and votes) at the player's next activation,
before her pull.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from anonbandits.multiagent.decentralized.clock import NEVER
from anonbandits.multiagent.decentralized.environment import Environment
from anonbandits.multiagent.decentralized.subroutines import Context, Outcome, State, Subroutine


@dataclass
class EngineResult:
    """Raw outcome of one simulated segment (steps are raw global steps)."""

    t_end: int
    stopped: bool
    t_consensus: int | None
    outputs: np.ndarray
    pulls: np.ndarray
    votes: np.ndarray
    global_set: np.ndarray
    vote_sender: np.ndarray
    vote_time: np.ndarray
    vote_arm: np.ndarray
    eliminations: list[tuple[int, np.ndarray]]
    guard_fired: int
    suboptimal: int
    done_times: np.ndarray
    done_counts: np.ndarray
    done_local: np.ndarray
    pull_records: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None


WINDOW_QUANTILE = 0.75  # speculative windows: span in which this share of the learners finishes a block
MAX_GROWTH = 64  # ... times at most this factor


@dataclass
class _Buffer:
    """Status events (step, learner, done?) waiting until no earlier event can still be produced."""

    t: list[np.ndarray] = field(default_factory=list)
    who: list[np.ndarray] = field(default_factory=list)
    done: list[np.ndarray] = field(default_factory=list)

    def add(self, t: np.ndarray, who: np.ndarray, done: np.ndarray) -> None:
        if len(t):
            self.t.append(np.asarray(t, np.int64))
            self.who.append(np.asarray(who, np.int64))
            self.done.append(np.asarray(done, bool))

    def pop_before(self, bound: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.t:
            return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, bool)
        t, who, done = np.concatenate(self.t), np.concatenate(self.who), np.concatenate(self.done)
        take = t < bound
        self.t, self.who, self.done = [t[~take]], [who[~take]], [done[~take]]
        order = np.argsort(t[take], kind="stable")
        return t[take][order], who[take][order], done[take][order]


@dataclass
class _Speculation:
    """Undo records and withheld results of the speculative blocks of one window."""

    saved: list[tuple[np.ndarray, np.ndarray, State, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = \
        field(default_factory=list)
    votes: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    events: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    counts: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)

    def save(self, eng: Engine, rows: np.ndarray, sub: State, ends: np.ndarray) -> None:
        """Keep the state the blocks of ``rows`` start from (``sub`` is about to be run: copy it)."""
        self.saved.append((rows, ends, {key: v.copy() for key, v in sub.items()}, eng.local[rows].copy(),
                           eng.lam[rows].copy(), eng.absorbed[rows].copy(), eng.done_local[rows].copy()))

    def commit(self, eng: Engine, tau: int) -> None:
        """Undo the blocks ending after ``tau`` (latest first, so each learner gets back the state her first
        undone block started from), and post the results of the others."""
        undone = []
        for rows, ends, sub, local, lam, absorbed, done_local in reversed(self.saved):
            late = ends > tau
            if late.any():
                r = rows[late]
                eng._scatter(r, {key: v[late] for key, v in sub.items()})
                eng.local[r], eng.lam[r] = local[late], lam[late]
                eng.absorbed[r], eng.done_local[r] = absorbed[late], done_local[late]
                undone.append(r)
        if undone:
            eng._plan(np.unique(np.concatenate(undone)))
        if self.votes:
            sender, when, arm = _stack(self.votes, (np.int64, np.int64, np.int64), key=1)
            keep = when <= tau
            eng._post_votes(sender[keep], when[keep], arm[keep])
        for ends, bad in self.counts:
            eng.suboptimal += int(bad[ends <= tau].sum())
        for when, who in self.events:
            keep = when <= tau
            eng.buffer.add(when[keep], who[keep], np.ones(int(keep.sum()), bool))


class Engine:
    """One run of decentralized elimination (or of a baseline) over global steps ``start..end``.

    Parameters
    ----------
    sub : the learners' Arm Selection subroutine.
    learners : number of learners (players; 1 for the shared learner of 0-PRIVACY).
    clock : activation clock of the learners.
    env : arms.
    rng, tie_rng : randomness of the rewards, and of the shuffles and tie-breaks.
    threshold : vote threshold M; ``None`` for no communication (the baselines).
    per_activation : ``"pull"`` (paper 002) or ``"round"`` (one subroutine round per activation, paper 003).
    start, end : first and last global step; the run is cut at ``end``.
    stop_rule : ``"all"`` (every learner holds one arm, A6), ``"consensus"`` (the shared set is a singleton)
        or ``None`` (run to ``end``: DSER4 segments).
    draw_only_active : finished learners leave the pool for good (A7 option; steps stay raw steps here).
    record_pulls : keep (step, arm, reward) of every pull (the broadcasts of 0-PRIVACY).
    """

    def __init__(self, sub: Subroutine, learners: int, clock, env: Environment, rng: np.random.Generator,
                 tie_rng: np.random.Generator, *, threshold: int | None, per_activation: str = "pull",
                 start: int = 1, end: int, stop_rule: str | None = "all", draw_only_active: bool = False,
                 record_pulls: bool = False) -> None:
        self.sub, self.n, self.k = sub, learners, env.arms
        self.clock, self.env, self.rng, self.tie_rng = clock, env, rng, tie_rng
        self.m, self.mode, self.start, self.end = threshold, per_activation, start, end
        self.stop_rule, self.draw_only_active = stop_rule, draw_only_active
        self.record_pulls = record_pulls
        self.need_times = (not env.stationary) or record_pulls
        self.best_mask = env.means == env.means.max()
        ids = np.arange(self.n)
        self.st: State = sub.init_state(np.ones((self.n, self.k), bool))
        self.local = clock.count_upto(ids, np.full(self.n, start - 1))
        self.lam = np.zeros((self.n, self.k), bool)
        self.G = np.ones(self.k, bool)
        self.vt = np.full((self.k, threshold or 1), NEVER, np.int64)  # the M earliest votes per arm
        self.V = np.zeros(self.k, np.int64)
        self.length = np.zeros(self.n, np.int64)
        self.e = np.full(self.n, NEVER, np.int64)
        self.exact = np.zeros(self.n, bool)  # e is the block's end (else a lower bound past the drawn steps)
        self.v = np.full((self.n, self.k), NEVER, np.int64)  # earliest step of a possible vote, per arm
        self.active = np.ones(self.n, bool)
        self.absorbed = np.zeros(self.n, bool)
        self.done_local = np.full(self.n, np.iinfo(np.int64).max, np.int64)
        self.status = np.zeros(self.n, bool)
        self.n_undone = self.n
        self.pending_arm = np.full(self.n, -1, np.int64)
        self.pending_time = np.zeros(self.n, np.int64)
        self.buffer = _Buffer()
        self.curve_t: list[int] = []
        self.curve_done: list[int] = []
        self.votes_log: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.pull_log: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.eliminations: list[tuple[int, np.ndarray]] = []
        self.guard_fired = 0
        self.suboptimal = 0
        self.t_consensus: int | None = None
        self.growth = 1
        self._plan(ids)

    # ------------------------------------------------------------------ state helpers
    def _gather(self, rows: np.ndarray) -> State:
        return {key: v[rows] for key, v in self.st.items()}

    def _scatter(self, rows: np.ndarray, sub: State) -> None:
        for key, v in sub.items():
            self.st[key][rows] = v

    def _plan(self, rows: np.ndarray, sub: State | None = None) -> None:
        """Next block (length in activations, end step ``e``) of the learners ``rows``, and the earliest steps
        ``v`` at which they could vote against each arm (``sub``: their current state, if at hand).

        A block ending past the steps drawn so far gets a lower bound as ``e``, made exact (:meth:`_refine`)
        only once the block is due: many planned blocks are cut by a global elimination long before their end,
        and drawing the player sequence up to it would cost more than the rest of the run (median elimination).
        """
        if not rows.size:
            return
        s = self.st["S"][rows] if sub is None else sub["S"]
        keep = (s.sum(axis=1) > 1) & ~self.absorbed[rows]
        self.active[rows] = keep
        self.e[rows] = NEVER
        self.v[rows] = NEVER
        live = rows[keep]
        if live.size:
            sub = self._gather(live) if sub is None else {key: v[keep] for key, v in sub.items()}
            length, ahead = self.sub.plan(sub, self.mode, self.env.bounded)
            self.length[live] = length
            self.e[live] = self.clock.time_lower_bound(live, self.local[live] + np.maximum(length, 1))
            self.exact[live] = self.e[live] <= self.clock.horizon
            if self.m is not None and ahead is None:
                self.v[live] = self.e[live][:, None]
            elif self.m is not None:
                self.v[live] = self.clock.time_lower_bound(live[:, None], self.local[live][:, None] + ahead)

    def _refine(self, rows: np.ndarray) -> None:
        """Exact block ends of ``rows`` (drawing steps as needed; NEVER past max_steps); no vote comes before."""
        self.e[rows] = self.clock.time_of(rows, self.local[rows] + np.maximum(self.length[rows], 1))
        self.exact[rows] = True
        if self.m is not None:
            self.v[rows] = np.maximum(self.v[rows], self.e[rows][:, None])


    def _context(self, rows: np.ndarray) -> Context:
        base = self.local[rows]

        def times(r: np.ndarray, offsets: np.ndarray) -> np.ndarray:
            return self.clock.time_of(rows[r][:, None], base[r][:, None] + offsets)

        return Context(times, self.env, self.rng, self.tie_rng, self.mode, self.need_times, self.record_pulls)

    # ------------------------------------------------------------------ main loop
    def run(self) -> EngineResult:
        while True:
            live = np.flatnonzero(self.active)
            bound, arm = self._elimination_bound()
            # status events before the next block end and not after the next possible elimination are final
            stop = self._release(min(int(self.e[live].min()) if live.size else int(NEVER), bound + 1))
            if stop is not None:
                return self._finish(stop, stopped=True)
            posted = bound < NEVER and self.V[arm] >= self.m and self.vt[arm, -1] == bound
            window = bound if posted or not live.size else max(bound, self._window_end(live))
            window = min(window, self.end)
            if live.size and self.e[live].min() <= window:
                kind, when = self._advance(window)
                self.growth = 1 if kind else min(2 * self.growth, MAX_GROWTH)
                if kind == "stop":
                    stop = self._release(when + 1)
                    if stop != when:
                        raise RuntimeError("stopping step not reproduced by the status events")
                    return self._finish(stop, stopped=True)
                if kind == "elimination":
                    stop = self._release(when + 1)
                    if stop is not None:
                        return self._finish(stop, stopped=True)
                    self._phase_end(when)
                    if self.stop_rule == "consensus" and self.G.sum() == 1:
                        return self._finish(when, stopped=True)
                continue
            if bound <= self.end:  # no block ends before it: the M-th vote on ``arm`` is on the board
                if not posted:
                    raise RuntimeError("elimination bound not attained by posted votes")
                self._phase_end(bound)
                if self.stop_rule == "consensus" and self.G.sum() == 1:
                    return self._finish(bound, stopped=True)
                continue
            if live.size:  # the next block ends after ``end``
                return self._finish(self.end, stopped=self.stop_rule is None)
            # every learner holds one arm and no elimination is pending: nothing can change any more
            stop = self._release(int(NEVER))
            if stop is not None:
                return self._finish(stop, stopped=True)
            if self.stop_rule is None:
                return self._finish(self.end, stopped=True)
            return self._finish(self.curve_t[-1] if self.curve_t else self.start, stopped=True)

    def _window_end(self, live: np.ndarray) -> int:
        """End of a speculative window: ``growth`` times the span in which most learners finish their next
        block. The growth doubles after every window without elimination and restarts at 1 after one, so
        the blocks undone at an elimination are at most about the last window's worth."""
        e = self.e[live]
        first = int(e.min())
        q = int(WINDOW_QUANTILE * (e.size - 1))
        span = int(np.partition(e, q)[q]) - first + 1
        return first + span * self.growth

    def _elimination_bound(self) -> tuple[int, int]:
        """Earliest step at which an arm of the shared set can get its M-th vote, and that arm."""
        if self.m is None or self.G.sum() <= 1:
            return int(NEVER), -1
        eligible = self.active[:, None] & self.st["S"] & ~self.lam & self.G
        pool = np.concatenate([self.vt, np.where(eligible, self.v, NEVER).T], axis=1)
        mth = np.where(self.G, np.partition(pool, self.m - 1, axis=1)[:, self.m - 1], NEVER)
        arm = int(mth.argmin())
        return int(mth[arm]), arm

    # ------------------------------------------------------------------ blocks
    def _advance(self, window: int) -> tuple[str, int]:
        """Run every block ending by ``window``. Returns ``("elimination", step)`` or ``("stop", step)`` if
        the first global elimination or the stopping step falls in the window (the blocks ending after it are
        undone), else ``("", window)``.

        Without votes, blocks are final at once. With votes, blocks are speculative until the window is
        resolved: their votes, status events and counts wait, and each keeps the state it started from. An
        undone block is re-run later from that state with fresh randomness; this is exact because whether a
        block is undone depends only on its end step and on events before it, not on its own rewards.
        """
        spec = _Speculation() if self.m is not None else None
        while True:
            live = np.flatnonzero(self.active)
            due = live[self.e[live] <= window]
            rough = due[~self.exact[due]]
            if rough.size:
                self._refine(rough)
                due = due[self.e[due] <= window]
            if not due.size:
                break
            self._run_blocks(due, spec)
            if spec is not None and spec.votes:
                # every vote up to the next block end is known: an elimination before it is settled
                tau = self._first_elimination(spec)
                live = np.flatnonzero(self.active)
                if not live.size or tau < self.e[live].min():
                    break
        if spec is None:
            return "", window
        tau = self._first_elimination(spec)
        stop = self._first_stop(spec, min(tau, window))
        cut = min(tau, int(NEVER) if stop is None else stop)
        spec.commit(self, cut)
        if stop is not None and stop <= tau:
            return "stop", stop
        return ("elimination", tau) if tau <= window else ("", window)

    def _first_stop(self, spec: _Speculation, horizon: int) -> int | None:
        """First step ``<= horizon`` at which every learner holds one arm, counting speculative events."""
        if self.stop_rule != "all" or not spec.events:
            return None
        parts = [(np.concatenate(self.buffer.t), np.concatenate(self.buffer.who),
                  np.concatenate(self.buffer.done))] if self.buffer.t else []
        parts += [(when, who, np.ones(when.size, bool)) for when, who in spec.events]
        t, who, done = (np.concatenate(c) for c in zip(*parts, strict=True))
        keep = t <= horizon
        t, who, done = t[keep], who[keep], done[keep]
        order = np.argsort(t, kind="stable")  # at one step a read comes before the block it starts
        status, undone = self.status.copy(), self.n_undone
        for i in order:
            if status[who[i]] != done[i]:
                status[who[i]] = done[i]
                undone += -1 if done[i] else 1
                if undone == 0:
                    return int(t[i])
        return None

    def _first_elimination(self, spec: _Speculation) -> int:
        """Step of the first M-th vote on an arm of the shared set, counting the speculative votes."""
        if self.G.sum() <= 1 or not spec.votes:
            return int(self._elimination_from(self.vt))
        _, when, arm = _stack(spec.votes, (np.int64, np.int64, np.int64), key=1)
        vt = self.vt.copy()
        for k in np.unique(arm):
            vt[k] = np.sort(np.concatenate([vt[k], when[arm == k]]))[: self.m]
        return int(self._elimination_from(vt))

    def _elimination_from(self, vt: np.ndarray) -> int:
        return int(np.where(self.G, vt[:, -1], NEVER).min()) if self.G.sum() > 1 else int(NEVER)

    def _post_votes(self, sender: np.ndarray, when: np.ndarray, arm: np.ndarray) -> None:
        for k in np.unique(arm):
            self.vt[k] = np.sort(np.concatenate([self.vt[k], when[arm == k]]))[: self.m]
        self.V += np.bincount(arm, minlength=self.k)
        self.votes_log.append((sender, when, arm))

    def _run_blocks(self, rows: np.ndarray, spec: _Speculation | None = None) -> None:
        """Run the due blocks to their decisions and post the votes they produce (withheld in ``spec``)."""
        sub = self._gather(rows)
        ends = self.e[rows]
        if spec is not None:
            spec.save(self, rows, sub, ends)
        out = self.sub.execute(sub, self.length[rows], self._context(rows))
        if self.m is not None:
            new = out.eliminated & ~self.lam[rows]  # an arm is never voted twice (lambda is binary)
            if new.any():
                who, arm = np.nonzero(new)
                if spec is None:
                    self._post_votes(rows[who], ends[who], arm)
                else:
                    spec.votes.append((rows[who], ends[who], arm))
                self.lam[rows] |= new
        sub["S"] &= ~out.eliminated
        self._scatter(rows, sub)
        self.local[rows] += self.length[rows]
        bad = self._account(rows, out)
        done = sub["S"].sum(axis=1) == 1
        if spec is None:
            self.suboptimal += int(bad.sum())
            self.buffer.add(ends[done], rows[done], np.ones(int(done.sum()), bool))
        else:
            spec.counts.append((ends, bad))
            spec.events.append((ends[done], rows[done]))
        self._became_done(rows[done])
        self._plan(rows, sub)

    def _account(self, rows: np.ndarray, out: Outcome) -> np.ndarray:
        """Per learner, plays of arms that are not the best at their step; keeps the pulls if asked."""
        if self.record_pulls:
            if out.pulls is None:
                who, arm = np.nonzero(out.counts > 0)
                out.pulls = (out.times[who, arm], arm, out.rewards[who, arm])
            self.pull_log.append(out.pulls)
        if out.times is None:
            return out.counts[:, ~self.best_mask].sum(axis=1)
        mu = self.env.mean(np.where(out.counts > 0, out.times, 1))
        own = np.diagonal(mu, axis1=1, axis2=2)
        return (out.counts * (own < mu.max(axis=2))).sum(axis=1)

    def _became_done(self, rows: np.ndarray) -> None:
        if self.draw_only_active:
            self.absorbed[rows] = True
            self.done_local[rows] = self.local[rows]

    def _exploit(self, rows: np.ndarray, upto: int) -> None:
        """Account the pulls of finished learners (their single arm) up to step ``upto``."""
        rows = rows[~self.absorbed[rows]]
        if not rows.size:
            return
        j0 = self.local[rows]
        j1 = np.maximum(self.clock.count_upto(rows, np.full(rows.size, upto)), j0)
        arm = self.st["S"][rows].argmax(axis=1)
        regimes = self.env.regimes()
        for r, (first, best) in enumerate(regimes):
            if first > upto:
                break
            last = min(regimes[r + 1][0] - 1 if r + 1 < len(regimes) else upto, upto)
            hi = np.clip(self.clock.count_upto(rows, np.full(rows.size, last)), j0, j1)
            lo = np.clip(self.clock.count_upto(rows, np.full(rows.size, first - 1)), j0, j1)
            self.suboptimal += int(((hi - lo) * (arm != best)).sum())
        self.local[rows] = j1

    def _truncate(self, t: int) -> None:
        """Cut every block in progress at step ``t``: run the pulls made up to ``t``, no decision."""
        live = np.flatnonzero(self.active)
        if live.size:
            q = self.clock.count_upto(live, np.full(live.size, t)) - self.local[live]
            part, q = live[q > 0], q[q > 0]
            if part.size:
                sub = self._gather(part)
                out = self.sub.execute(sub, q, self._context(part))
                self._scatter(part, sub)
                self.local[part] += q
                self.suboptimal += int(self._account(part, out).sum())
        self._exploit(np.flatnonzero(~self.active), t)

    # ------------------------------------------------------------------ global eliminations
    def _phase_end(self, tau: int) -> None:
        """Apply the global elimination decided at step ``tau`` (the M-th vote on some arm)."""
        self._truncate(tau)
        crossing = self.G & (self.V >= self.m) & (self.vt[:, -1] <= tau)
        new_g = self.G.copy()
        for arm in np.flatnonzero(crossing):  # index order; never empty the shared set (A4)
            if new_g.sum() > 1:
                new_g[arm] = False
            else:
                self.guard_fired += 1
        dropped = self.G & ~new_g
        self.G = new_g
        self.eliminations.append((tau, dropped))
        readers = np.flatnonzero(~self.absorbed)
        s = self.st["S"][readers]
        before_done = s.sum(axis=1) == 1
        before_arm = np.where(before_done, s.argmax(axis=1), -1)
        if new_g.sum() == 1:  # line 11: adopt the shared singleton
            changed = np.any(s != new_g, axis=1)
            self.sub.restart(self.st, readers[changed], new_g)
        else:
            changed = np.any(s & dropped, axis=1)
            empty = changed & ~np.any(s & ~dropped, axis=1)
            self.sub.restart(self.st, readers[empty], new_g)  # A5: no local survivor left
            self.sub.drop(self.st, readers[changed & ~empty], dropped)
        rows = readers[changed]
        if rows.size:
            read_at = self.clock.time_of(rows, self.local[rows] + 1)
            after_done = self.st["S"][rows].sum(axis=1) == 1
            flip = after_done != before_done[changed]
            self.buffer.add(read_at[flip], rows[flip], after_done[flip])
            fresh = before_done[changed] & (self.pending_time[rows] <= tau)
            self.pending_arm[rows[fresh]] = before_arm[changed][fresh]
            self.pending_time[rows[fresh]] = read_at[fresh]
            if self.draw_only_active:
                became = rows[flip & after_done]
                self.absorbed[became] = True
                self.done_local[became] = self.local[became] + 1
        if new_g.sum() == 1 and self.t_consensus is None:
            self.t_consensus = tau
        self._plan(readers)

    # ------------------------------------------------------------------ stopping
    def _release(self, bound: int) -> int | None:
        """Process the status events before ``bound`` in step order; the stopping step if all are done."""
        t, who, done = self.buffer.pop_before(bound)
        for i in range(t.size):
            n = who[i]
            if self.status[n] != done[i]:
                self.status[n] = done[i]
                self.n_undone += -1 if done[i] else 1
                self.curve_t.append(int(t[i]))
                self.curve_done.append(self.n - self.n_undone)
                if self.n_undone == 0 and self.stop_rule == "all":
                    return int(t[i])
        return None

    def _finish(self, t_end: int, *, stopped: bool) -> EngineResult:
        self._truncate(t_end)
        s = self.st["S"]
        outputs = np.where(s.sum(axis=1) == 1, s.argmax(axis=1), -1)
        late = self.pending_time > t_end  # their last read comes after the end: they still hold the old arm
        outputs[late] = self.pending_arm[late]
        sender, when, arm = _stack(self.votes_log, (np.int64, np.int64, np.int64), key=1)
        pulls = _stack(self.pull_log, (np.int64, np.int64, float), key=0) if self.record_pulls else None
        return EngineResult(
            t_end=int(t_end), stopped=stopped, t_consensus=self.t_consensus, outputs=outputs,
            pulls=self.local.copy(), votes=self.V.copy(), global_set=self.G.copy(),
            vote_sender=sender, vote_time=when, vote_arm=arm,
            eliminations=self.eliminations, guard_fired=self.guard_fired, suboptimal=self.suboptimal,
            done_times=np.asarray(self.curve_t, np.int64), done_counts=np.asarray(self.curve_done, np.int64),
            done_local=self.done_local.copy(), pull_records=pulls)


def _stack(parts: list[tuple[np.ndarray, ...]], dtypes: tuple, key: int) -> tuple[np.ndarray, ...]:
    """Concatenate logged column blocks, sorted (stably) by the step column ``key``."""
    if not parts:
        return tuple(np.empty(0, d) for d in dtypes)
    cols = [np.concatenate(c).astype(d) for c, d in zip(zip(*parts, strict=True), dtypes, strict=True)]
    order = np.argsort(cols[key], kind="stable")
    return tuple(c[order] for c in cols)
