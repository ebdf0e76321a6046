"""Shorter decompositions by removing rounds: a large-neighbourhood search on a decomposition's rounds.

A decomposition of length R is a sequence of R rounds (its assignments repeated by their multiplicities).
:func:`drop_round` deletes one round d and tries to re-place the samples only d gave in the other rounds,
keeping every other round's open arms (those with >= C+1 users) as they are:

* every user that loses a sample (a *lost user*) is re-planned from scratch: in each kept round it takes one
  open arm of its support, and over the kept rounds it must meet its whole demand. For one user alone this is
  a bipartite matching of its pairs into the rounds where their arms are open (augmenting paths move a sample
  to a round where the user was padding, and the sample there to a round where it was idle, and so on);
* other users may leave a *free* slot (one whose sample the user does not need: it pads, or its pair is
  covered more often than asked) to sit on another open arm, so that an open arm a lost user leaves keeps
  C+1 users (a *padder*);
* an arm a lost sample needs may also open in a round where it is closed (in the :data:`OPEN_ROUNDS` rounds
  with the most idle users who may play it): it then needs C+1 users, lost users or padders;
* every open arm of every kept round keeps >= C+1 users.

That is a 0/1 program (a covering of the lost users' pairs coupled only through the arms' counts) solved by
HiGHS; a feasible point is a decomposition one round shorter. :func:`shorten` repeats this, trying the rounds
that give the fewest samples no other round gives first, while time allows.

On long decompositions (more than :data:`MAX_ROUNDS` rounds) that program is too slow (6 s for one deletion
on the 3000 x 1000 log at C = 50, 531 rounds). :func:`reroute` solves it greedily instead: one lost sample at
a time, by an augmenting path over the lost user's arms (a sample moves to a round where the user's slot is
free, the sample there to another round, and so on), with a padder where an open arm the user leaves would
drop below C+1 users. :func:`shorten_long` repeats deletions with it, and :func:`polish` applies it to the
shortest arm-first schedule before it rounds the certified bound's master. Measured on
that log (arm-first R = 532 against the bound 500): 0.1-0.2 s per deletion tried, R = 519-524 within 8 s,
where the program reached 531 in 6 s.

Everything is held per edge of the graph (the (user, arm) pairs of its support, found by :class:`EdgeIndex`)
and per round: memory grows with the edges and with the rounds x users schedule, never with users x arms.

It is a local search in the sense of large-neighbourhood search for scheduling (Shaw, *Using Constraint
Programming and Local Search Methods to Solve Vehicle Routing Problems*, CP 1998): destroy a part (a round),
repair it exactly with an integer program over a restricted neighbourhood. The lower bound it works toward is
max_i sum_j ceil(w_ij) of Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems*,
NeurIPS 2022 (Section 3.2); at that length a user of the largest demand has no free slot, which is why the
lost users are re-planned whole rather than only moved to their free slots.
"""

from __future__ import annotations

import time
from collections import deque
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from anondecomp.flows import ranges
from anondecomp.graph import DemandGraph
from anondecomp.highs import load_model, new_highs
from anondecomp.validation import Prepared

if TYPE_CHECKING:  # for annotations only: the functions below import lower_bound when they run
    from anondecomp.lower_bound import ColumnGeneration

MAX_ROUNDS = 400  # decompositions longer than this (in rounds, multiplicities expanded) are left as they are
MAX_VARIABLES = 400_000  # a neighbourhood whose program would have more 0/1 variables is skipped
MAX_CELLS = 50_000_000  # ...and one whose table of (kept round, edge of a lost user) would have more cells
PADDERS_PER_ARM = 40  # free users offered to each open arm a lost user may leave
TIGHT_SURPLUS = 8  # ...when the arm holds at most C+1 + this many users
CANDIDATES = 6  # rounds tried (fewest unique samples first) before giving up
TRY_SHARE = 0.5  # of the search's time, the most one program may take
IMPROVE_SHARE = 0.25  # of --certify's time limit, for shortening the decomposition before the bound
IMPROVE_SECONDS = 10.0  # seconds for it without a time limit
POLISH_SECONDS = 60.0  # seconds for polish (rounds removed, then the bound's search) without a time limit
REROUTE_CANDIDATES = 40  # rounds tried per step by shorten_long (measured on the 3000 x 1000 log at C = 50)
OPEN_ROUNDS = 12  # rounds in which an arm a lost sample needs may be opened (most free users first)
ARMFIRST_SHARE = 0.5  # of polish's search time, after which arm-first rounds give up (logs)
ARMFIRST_RESTARTS = 2  # ... and their restarts with noisy scores
REROUTE_SHARE = 0.3  # ... and then, until this share more has passed, rounds removed from the shortest of them
ROUNDING_SHARE = 0.2  # of polish's search time, kept after the column generation for rounding its master


def rounds_of(assignments: np.ndarray, multiplicities: np.ndarray) -> np.ndarray:
    """The (R, N) rounds of a decomposition: each assignment repeated by its multiplicity."""
    return np.repeat(np.asarray(assignments), np.asarray(multiplicities, dtype=np.int64), axis=0)


def _counts(rounds: np.ndarray, K: int) -> np.ndarray:
    """Users per (round, arm)."""
    T = len(rounds)
    idx = (np.arange(T, dtype=np.int64)[:, None] * K + rounds).ravel()
    return np.bincount(idx, minlength=T * K).reshape(T, K)


class EdgeIndex:
    """Where each (user, arm) pair sits among a graph's edges, and which users may play each arm.

    The edges are sorted by user, then arm, so their keys ``user * K + arm`` are sorted too and a pair's edge
    is one binary search away: memory and time grow with the edges, never with users x arms. A pair off the
    support (an arm the user may not play) maps to -1. The per-edge arrays this module reads at such look-ups
    carry one entry more, at the end, which index -1 reaches: demand 0 there, so such a pair is never needed.

    Parameters
    ----------
    graph : DemandGraph
        The graph whose edges are indexed.

    Examples
    --------
    >>> import numpy as np
    >>> from anondecomp.graph import DemandGraph
    >>> ix = EdgeIndex(DemandGraph.from_weights(np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]])))
    >>> ix.of([0, 0, 1, 1], [0, 1, 1, 2]).tolist(), ix.one(1, 2)
    ([0, -1, 2, 3], 3)
    """

    def __init__(self, graph: DemandGraph) -> None:
        self.graph = graph
        self.n_edges = graph.nnz
        self.n_arms = graph.n_arms
        self.keys = graph.edge_users.astype(np.int64) * graph.n_arms + graph.edge_arms

    def of(self, users, arms) -> np.ndarray:
        """The edge of every (user, arm) pair (arrays broadcast together), -1 for a pair off the support."""
        q = np.asarray(users, dtype=np.int64) * self.n_arms + np.asarray(arms, dtype=np.int64)
        if not self.n_edges:
            return np.full(q.shape, -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.keys, q), self.n_edges - 1)
        return np.where(self.keys[at] == q, at, -1)

    def one(self, user: int, arm: int) -> int:
        """:meth:`of` for one pair (scalar work: the rerouting's moves come one at a time)."""
        q = int(user) * self.n_arms + int(arm)
        at = int(np.searchsorted(self.keys, q))
        return at if at < self.n_edges and self.keys[at] == q else -1

    def slots(self, rounds: np.ndarray) -> np.ndarray:
        """(T, N) the edge of every user's arm in every round of ``rounds`` (T, N), -1 off its support."""
        # looked up user by user (all rounds of one user, then the next): successive searches then land in
        # the same few edges, which halves the time of a round-by-round order (measured on a 1500 x 500 log)
        by_user = self.of(np.arange(rounds.shape[1])[:, None], np.asarray(rounds).T)
        return np.ascontiguousarray(by_user.T)

    @cached_property
    def players(self) -> tuple[np.ndarray, np.ndarray]:
        """(users, starts): the users who may play arm a are ``users[starts[a]:starts[a + 1]]``, increasing (a
        stable sort by arm keeps the edges' user order)."""
        g = self.graph
        starts = np.zeros(self.n_arms + 1, dtype=np.int64)
        np.cumsum(np.bincount(g.edge_arms, minlength=self.n_arms), out=starts[1:])
        return g.edge_users[g.arm_order].astype(np.int64), starts


def _padded(per_edge: np.ndarray) -> np.ndarray:
    """An (E,) int64 per-edge array with a last 0 appended: the value index -1 (a pair off the support) reads."""
    return np.append(np.asarray(per_edge, dtype=np.int64), 0)


def _coverage(slots: np.ndarray, on: np.ndarray, n_edges: int) -> np.ndarray:
    """(E + 1,) informative samples per edge over rounds whose slots are ``slots`` (T, N) (edges, -1 off the
    support) and ``on`` (T, N) (the user's arm is open), and a last 0 for the pairs off the support."""
    hit = slots[on]
    return np.append(np.bincount(hit[hit >= 0], minlength=n_edges), 0)


def unique_samples(prep: Prepared, rounds: np.ndarray) -> np.ndarray:
    """Per round: the samples no other round can replace (pairs covered exactly as often as required, and
    informative in this round); the cost of deleting it."""
    graph = prep.graph
    rounds = np.asarray(rounds, dtype=np.int64)
    is_open = _counts(rounds, graph.n_arms) >= prep.C + 1
    slots = EdgeIndex(graph).slots(rounds)
    on = np.take_along_axis(is_open, rounds, axis=1)
    return _unique(_padded(prep.edge_required), slots, on, _coverage(slots, on, graph.nnz))


def _unique(req: np.ndarray, slots: np.ndarray, on: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """:func:`unique_samples` from the rounds' slots (edges), open slots and coverage (``req`` and ``cov``
    padded per edge, :func:`_padded`)."""
    need = req[slots]
    tight = (need > 0) & (cov[slots] <= need)
    return (on & tight).sum(axis=1)


def reroute(
    graph: DemandGraph,
    required: np.ndarray,
    C1: int,
    rounds: np.ndarray,
    counts: np.ndarray | None = None,
    coverage: np.ndarray | None = None,
    slots: np.ndarray | None = None,
    *,
    index: EdgeIndex | None = None,
) -> np.ndarray | None:
    """``rounds`` with every missing sample re-placed by augmenting paths, one lost sample at a time, or
    ``None`` when one of them finds none.

    A lost user u short of arm j looks for a round where j is open and u's slot is free (its sample there is
    not needed); failing that, for a round where j is open and u gives a needed sample of an arm a, which
    then needs a round of its own, and so on (a breadth-first search over u's arms, each round used once).
    An open arm u leaves keeps C+1 users, if need be with a padder: a user of that round whose slot is free,
    who may play the arm, and whose own arm can spare it. No arm opens or closes, so each step is checked in
    its round alone. This is the program of :func:`drop_round` solved greedily (one user and one sample at a
    time); on long decompositions it finds most repairs at a small part of the program's cost.

    Everything is held per edge of ``graph`` (the pairs of its support) and per round: no array grows with
    users x arms.

    Parameters
    ----------
    graph : DemandGraph
        The graph: its edges are the (user, arm) pairs a user may play.
    required : numpy.ndarray
        (E,) int, the informative samples each edge needs (``Prepared.edge_required``).
    C1 : int
        C + 1, the users an arm needs to be open.
    rounds : numpy.ndarray
        (T, N) the arm of every user in every round.
    counts, coverage, slots : numpy.ndarray, optional
        (T, K) users per round and arm of ``rounds``, (E,) their informative samples per edge, and (T, N) the
        edge of every user's arm in every round (-1 off its support, :meth:`EdgeIndex.slots`), when known
        already (left unchanged).
    index : EdgeIndex, optional
        ``graph``'s, when built already.

    Returns
    -------
    numpy.ndarray or None
        (T, N) rounds that meet ``required``, or ``None``.

    Examples
    --------
    Users 0 and 1 want arms 0 and 1, user 2 arm 1, C = 1. User 1 lacks arm 1: in round 1 it sits alone on
    arm 0 (closed, a free slot) while arm 1 is open, so it moves there.

    >>> import numpy as np
    >>> from anondecomp.graph import DemandGraph
    >>> g = DemandGraph.from_weights(np.array([[1, 1], [1, 1], [0, 1]], float))
    >>> reroute(g, g.edge_required, 2, np.array([[0, 0, 1], [1, 0, 1]])).tolist()
    [[0, 0, 1], [1, 1, 1]]
    >>> reroute(g, g.edge_required, 2, np.array([[0, 0, 1], [0, 0, 1]])) is None  # arm 1 is never open
    True
    """
    ix = EdgeIndex(graph) if index is None else index
    cur = np.array(rounds, dtype=np.int64)
    K, E = graph.n_arms, graph.nnz
    req = _padded(required)  # index -1 (a pair off the support) reads demand 0
    cnt = _counts(cur, K) if counts is None else counts.copy()
    slot = ix.slots(cur) if slots is None else np.array(slots, dtype=np.int64)  # kept in step with cur
    if coverage is None:
        cov = _coverage(slot, np.take_along_axis(cnt >= C1, cur, axis=1), E)
    else:
        cov = _padded(coverage)
    deficit = np.maximum(req[:E] - cov[:E], 0)
    state = _Rerouting(ix, req, C1, cur, cnt, slot, cov)
    for edge in np.flatnonzero(deficit):  # the edges' order: by user, then arm
        u, j = int(graph.edge_users[edge]), int(graph.edge_arms[edge])
        for _ in range(int(deficit[edge])):
            if not state.place(u, j):
                return None
    return cur


_Path = dict[int, tuple[int, int] | None]
"""An augmenting path's tree: arm -> (the arm it gave way to, the round), ``None`` at the arm short of a sample."""


class _Rerouting:
    """The state of one :func:`reroute`: the rounds and, kept in step with them as users move, the users per
    (round, arm), the slots' edges and the coverage per edge; the padders found so far.

    No arm opens or closes (``is_open`` is fixed), so every step is checked in its round alone.
    """

    def __init__(
        self,
        ix: EdgeIndex,
        req: np.ndarray,
        C1: int,
        cur: np.ndarray,
        cnt: np.ndarray,
        slot: np.ndarray,
        cov: np.ndarray,
    ) -> None:
        self.ix, self.req, self.C1 = ix, req, C1
        self.cur, self.cnt, self.slot, self.cov = cur, cnt, slot, cov  # updated in place by move()
        self.N = cur.shape[1]
        self.is_open = cnt >= C1
        ot, self.open_rounds = np.nonzero(self.is_open.T)
        # rounds where arm j is open: open_rounds[open_start[j]:open_start[j + 1]], increasing
        self.open_start = np.searchsorted(ot, np.arange(cnt.shape[1] + 1))
        # per round: how many users each user's arm can spare, -1 if it cannot pad (:meth:`room_of`)
        self.rooms: dict[int, np.ndarray] = {}
        self.found: dict[tuple[int, int, int], int] = {}  # padders found (round, arm, user it stands in for)

    def place(self, u: int, j: int) -> bool:
        """Give user ``u`` one more sample of arm ``j`` along an augmenting path; False when there is none, or
        when a padder it needs is missing (the rounds are then partly changed: the caller gives up)."""
        found = self.path(u, j)
        return found is not None and self.apply(u, *found)

    def path(self, u: int, j: int) -> tuple[_Path, tuple[int, int]] | None:
        """A breadth-first search over ``u``'s arms, from ``j``, through the rounds where each is open: the tree
        and the path's end (arm, round), where ``u``'s slot is free; ``None`` when no path ends so."""
        cur, starts = self.cur, self.open_start
        parent: _Path = {j: None}
        queue = deque([j])
        while queue:
            x = queue.popleft()
            for t in self.open_rounds[starts[x] : starts[x + 1]]:
                a = int(cur[t, u])
                if a == x or (a in parent and not self.free(t, u)) or not self.leaves(t, a, u):
                    continue
                if self.free(t, u):
                    return parent, (x, int(t))
                parent[a] = (x, int(t))
                queue.append(a)
        return None

    def apply(self, u: int, parent: _Path, end: tuple[int, int]) -> bool:
        """Move ``u`` along the path from its ``end`` back to the short arm, a padder in where an open arm it
        leaves would drop below C+1 users; False when that padder is missing."""
        x, t = end
        while True:  # u takes x in round t, giving up the arm it had there (needed again up the path)
            a = int(self.cur[t, u])
            if self.is_open[t, a] and self.cnt[t, a] <= self.C1:
                v = self.padder(t, a, u)
                if v < 0:
                    return False
                self.move(t, v, a)
            self.move(t, u, x)
            step = parent[x]
            if step is None:
                return True
            x, t = step  # x came from giving it up in that round for another arm

    def free(self, t: int, v: int) -> bool:
        """Whether user ``v``'s sample in round ``t`` is not needed (closed arm, no demand, or covered more often
        than required)."""
        e = self.slot[t, v]
        return not self.is_open[t, self.cur[t, v]] or self.req[e] == 0 or self.cov[e] > self.req[e]

    def leaves(self, t: int, a: int, u: int) -> bool:
        """Whether ``u`` may leave arm ``a`` in round ``t``: it is closed, has users to spare, or a padder."""
        return not self.is_open[t, a] or self.cnt[t, a] > self.C1 or self.padder(t, a, u) >= 0

    def room_of(self, t: int) -> np.ndarray:
        """How many users the arm of each user in round t can spare (a closed arm: any number), -1 where a
        user may not pad (its sample is needed, or its arm cannot spare it)."""
        arm, e = self.cur[t], self.slot[t]
        req, cov, cnt, C1 = self.req, self.cov, self.cnt, self.C1
        on = self.is_open[t, arm]
        needed = on & (req[e] > 0) & (cov[e] <= req[e])
        return np.where(needed | (on & (cnt[t, arm] <= C1)), -1, np.where(on, cnt[t, arm] - C1, self.N))

    def padder(self, t: int, a: int, u: int) -> int:
        """The user of round ``t`` who may play arm ``a`` and whose own arm has the most users to spare (the
        first of equals), to stand in for ``u`` there; -1 when none can."""
        if t not in self.rooms:
            self.rooms[t] = self.room_of(t)
        if (t, a, u) not in self.found:
            # the users who may play arm a (increasing, so the first of equals wins, as over all users)
            players, starts = self.ix.players
            who = players[starts[a] : starts[a + 1]]
            room = np.where((self.cur[t, who] != a) & (who != u), self.rooms[t][who], -1)
            k = int(np.argmax(room)) if len(room) else -1
            self.found[t, a, u] = int(who[k]) if k >= 0 and room[k] >= 0 else -1  # the most users to spare
        return self.found[t, a, u]

    def move(self, t: int, v: int, b: int) -> None:
        """User ``v`` moves to arm ``b`` in round ``t``; counts, slots, coverage and rooms follow."""
        self.found.clear()
        cur, slot, cov, cnt = self.cur, self.slot, self.cov, self.cnt
        a = cur[t, v]
        if self.is_open[t, a]:
            cov[slot[t, v]] -= 1
        cnt[t, a] -= 1
        cnt[t, b] += 1
        cur[t, v] = b
        slot[t, v] = self.ix.one(v, b)
        if self.is_open[t, b]:
            cov[slot[t, v]] += 1
        self.rooms.pop(t, None)  # the counts of round t changed; v's coverage of a and b too (where it sits on them)
        self.refresh_rooms(v, a, b)

    def refresh_rooms(self, v: int, a: int, b: int) -> None:
        """Recompute user ``v``'s room in the other rounds' kept rooms where it sits on ``a`` or ``b`` (its
        coverage of those arms changed)."""
        cur, slot, cov, cnt, req, C1 = self.cur, self.slot, self.cov, self.cnt, self.req, self.C1
        for r, room in self.rooms.items():
            c = cur[r, v]
            if c == a or c == b:  # one user: scalar tests (numpy's whole-array path costs 30x more here)
                k, e = int(cnt[r, c]), slot[r, v]
                room[v] = (
                    self.N if not self.is_open[r, c] else -1 if k <= C1 or (req[e] > 0 and cov[e] <= req[e]) else k - C1
                )


def drop_round(prep: Prepared, rounds: np.ndarray, d: int, time_limit: float | None = None) -> np.ndarray | None:
    """``rounds`` without round ``d``, the samples it gave re-placed in the others (module docstring).

    Parameters
    ----------
    prep : Prepared
        The demand ``rounds`` meets.
    rounds : numpy.ndarray
        (R, N) the arm of every user in every round (:func:`rounds_of`).
    d : int
        The round to delete.
    time_limit : float, optional
        Seconds for HiGHS.

    Returns
    -------
    numpy.ndarray or None
        (R - 1, N) rounds meeting the same demand (every changed user on an open arm of its support), or
        ``None`` when the program is infeasible, too large (:data:`MAX_VARIABLES`, :data:`MAX_CELLS`) or
        without a feasible point within ``time_limit``.

    Examples
    --------
    Users A, B want arms 0 and 1, users C, D arms 1 and 2, C = 1. Round 2 alone gives C and D arm 2; deleting
    it, they open arm 2 in round 1, where D sat alone and C padded arm 1.

    >>> import numpy as np
    >>> from anondecomp.graph import DemandGraph
    >>> from anondecomp.validation import prepare
    >>> prep = prepare(DemandGraph.from_weights(np.array([[1, 1, 0], [1, 1, 0], [0, 1, 1], [0, 1, 1]])), 1, False)
    >>> drop_round(prep, np.array([[0, 0, 1, 1], [1, 1, 1, 2], [0, 1, 2, 2]]), 2).tolist()
    [[0, 0, 1, 1], [1, 1, 2, 2]]
    """
    import scipy.sparse as sp

    graph, C1 = prep.graph, prep.C + 1
    N, K = graph.shape
    E = graph.nnz
    ix = EdgeIndex(graph)
    eu, ea = graph.edge_users.astype(np.int64), graph.edge_arms.astype(np.int64)
    req = _padded(prep.edge_required)  # per edge, and demand 0 at index -1 (a pair off the support)
    cur = np.delete(np.asarray(rounds, dtype=np.int64), d, axis=0)  # (T, N) arm of each user per kept round
    T = len(cur)
    cnt = _counts(cur, K)
    is_open = cnt >= C1
    slot = ix.slots(cur)  # (T, N) the edge each user sits on
    on = np.take_along_axis(is_open, cur, axis=1)
    cov = _coverage(slot, on, E)
    deficit = np.maximum(req[:E] - cov[:E], 0)
    lost = np.unique(eu[deficit > 0])  # users short of a sample, increasing
    if not len(lost):
        return cur
    others = np.ones(N, bool)
    others[lost] = False
    # free slots of the other users: not informative, or informative on a pair covered more than required
    idle = ~on | (req[slot] == 0) | (cov[slot] > req[slot])
    free = others[None, :] & idle
    # arms to open: those of lost samples, in the closed rounds where the most users sit idle who may play them
    # (a lost user is idle there when its sample in that round is not needed either); the users who may play
    # them as a sparse (N, arms) incidence, so the count is one sparse product, exact in integers
    short_arms = np.unique(ea[deficit > 0])
    col = np.full(K, -1, dtype=np.int64)
    col[short_arms] = np.arange(len(short_arms))
    se = np.flatnonzero(col[ea] >= 0)
    may = sp.csc_array((np.ones(len(se), np.int64), (eu[se], col[ea[se]])), shape=(N, len(short_arms)))
    idle_play = np.asarray(may.T @ idle.T.astype(np.int64)).T  # (T, arms)
    score = np.where(is_open[:, short_arms] | (idle_play < C1), -1, idle_play)
    best = np.argsort(-score, axis=0, kind="stable")[:OPEN_ROUNDS]
    ct, ca = best.ravel(), np.tile(np.arange(len(short_arms)), len(best))
    ok = score[ct, ca] >= 0
    cand = np.zeros((T, K), bool)
    cand[ct[ok], short_arms[ca[ok]]] = True
    avail = is_open | cand
    # lost users: one variable per (kept round, edge of a lost user whose arm is available there), in the order
    # (round, user, arm); the table of the lost users' edges in every round is bounded first
    lost_edges = ranges(graph.indptr[lost], graph.indptr[lost + 1] - graph.indptr[lost])  # by user, then arm
    if T * len(lost_edges) > MAX_CELLS:
        return None
    lt, lk = np.nonzero(avail[:, ea[lost_edges]])
    le = lost_edges[lk]
    li, lj = eu[le], ea[le]
    # padders: free users moving to an open arm a lost user sits on with little surplus, or to a candidate arm
    lost_on = np.zeros((T, K), bool)
    tl_, tu_ = np.nonzero(on[:, lost])
    lost_on[tl_, cur[tl_, lost[tu_]]] = True
    needy = lost_on & is_open & (cnt <= C1 + TIGHT_SURPLUS)
    target = needy | cand
    # one round at a time, over the edges of the arms some round targets (by user, then arm, in each round)
    te = np.flatnonzero(np.any(target, axis=0)[ea])
    te_u, te_a = eu[te], ea[te]
    found = [te[free[t, te_u] & target[t, te_a]] for t in range(T)]
    pt = np.repeat(np.arange(T, dtype=np.int64), [len(x) for x in found])
    pe = np.concatenate(found) if found else np.zeros(0, np.int64)
    pk, pj = eu[pe], ea[pe]
    own = cur[pt, pk]
    stay = own != pj
    pt, pk, pj, own = pt[stay], pk[stay], pj[stay], own[stay]
    # at most PADDERS_PER_ARM per needy open arm, those whose own arm has the most users to spare first
    room = np.where(is_open[pt, own], cnt[pt, own] - C1, 10 * N)
    order = np.lexsort((-room, pt * K + pj))
    pt, pk, pj, own, room = pt[order], pk[order], pj[order], own[order], room[order]
    key = pt * K + pj
    rank = np.arange(len(key)) - np.searchsorted(key, key)
    keep = cand[pt, pj] | (rank < PADDERS_PER_ARM)
    pt, pk, pj, own = pt[keep], pk[keep], pj[keep], own[keep]
    own_e = slot[pt, pk]  # the edge a padder leaves (-1 off its support)
    ot, oj = np.nonzero(cand)
    n_x, n_p, n_z = len(lt), len(pt), len(ot)
    nv = n_x + n_p + n_z
    if nv > MAX_VARIABLES:
        return None
    xc, pc, zc = np.arange(n_x), n_x + np.arange(n_p), n_x + n_p + np.arange(n_z)
    blocks = []  # (row, column, value) triples; row offsets added per block
    lo_parts, hi_parts = [], []
    n_rows = 0

    def add(rows, cols, vals, lo, hi):
        nonlocal n_rows
        blocks.append((n_rows + rows, cols, vals))
        lo_parts.append(lo)
        hi_parts.append(hi)
        n_rows += len(lo)

    # pair rows: every demanded pair (edge) of a lost user is covered as often as required
    dem = lost_edges[req[lost_edges] > 0]
    pair_id = np.full(E, -1, dtype=np.int64)
    pair_id[dem] = np.arange(len(dem))
    xp = pair_id[le]
    has = xp >= 0
    add(xp[has], xc[has], np.ones(has.sum()), req[dem].astype(float), np.full(len(dem), np.inf))
    # slot rows: a user takes at most one arm per round; a lost user with an open arm of its support takes one
    slot_keys, inv = np.unique(np.concatenate([lt * N + li, pt * N + pk]), return_inverse=True)
    st, su = np.divmod(slot_keys, N)
    n_edges = graph.indptr[lost + 1] - graph.indptr[lost]  # >= 1: a lost user lacks a sample of an edge
    has_open = np.logical_or.reduceat(is_open[:, ea[lost_edges]], np.cumsum(n_edges) - n_edges, axis=1)
    must = np.zeros(len(slot_keys), bool)
    mine = ~others[su]
    must[mine] = has_open[st[mine], np.searchsorted(lost, su[mine])]
    add(inv, np.concatenate([xc, pc]), np.ones(n_x + n_p), must.astype(float), np.ones(len(slot_keys)))
    # count rows: every available arm of every round; the other users who stay are fixed
    fixed = _counts(np.where(others[None, :], cur, K), K + 1)[:, :K]
    at, aj = np.nonzero(avail)
    cid = np.full(T * K, -1, dtype=np.int64)
    cid[at * K + aj] = np.arange(len(at))
    leaves = avail[pt, own]
    add(
        np.concatenate([cid[lt * K + lj], cid[pt * K + pj], cid[pt[leaves] * K + own[leaves]], cid[ot * K + oj]]),
        np.concatenate([xc, pc, pc[leaves], zc]),
        np.concatenate([np.ones(n_x + n_p), -np.ones(leaves.sum()), np.full(n_z, -float(C1))]),
        np.where(is_open[at, aj], C1 - fixed[at, aj], -fixed[at, aj]).astype(float),
        np.full(len(at), np.inf),
    )
    # a lost user's sample on a candidate arm counts only if the arm opens: x <= z
    on_cand = np.flatnonzero(cand[lt, lj])
    zid = np.full(T * K, -1, dtype=np.int64)
    zid[ot * K + oj] = np.arange(n_z)
    m = len(on_cand)
    add(
        np.concatenate([np.arange(m), np.arange(m)]),
        np.concatenate([xc[on_cand], zc[zid[lt[on_cand] * K + lj[on_cand]]]]),
        np.concatenate([np.ones(m), -np.ones(m)]),
        np.full(m, -np.inf),
        np.zeros(m),
    )
    # spare rows: a padder leaving an informative sample of a demanded pair uses one of the pair's extra samples
    gives = is_open[pt, own] & (req[own_e] > 0)
    spare, sinv = np.unique(own_e[gives], return_inverse=True)  # edges: in the order of their (user, arm)
    add(sinv, pc[gives], np.ones(gives.sum()), np.full(len(spare), -np.inf), (cov[spare] - req[spare]).astype(float))
    A = sp.csc_matrix(
        (
            np.concatenate([b[2] for b in blocks]),
            (np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])),
        ),
        shape=(n_rows, nv),
    )
    # few changes preferred: a lost user staying where it is costs nothing, opening an arm costs most
    cost = np.concatenate([(cur[lt, li] != lj).astype(float), np.ones(n_p), np.full(n_z, 10.0)])
    h = new_highs(time_limit)
    # any feasible point will do (the cost only breaks ties): stop at the first. Measured on the power-law log
    # N=1000 items=100 C=50 (an 84,000-column program): HiGHS's feasibility jump finds the point in 2-3 s, while
    # presolve alone took 12 s and symmetry detection most of the rest before it
    h.setOptionValue("mip_rel_gap", 1.0)
    h.setOptionValue("mip_max_improving_sols", 1)
    h.setOptionValue("presolve", "off")
    h.setOptionValue("mip_detect_symmetry", False)
    load_model(h, A, cost, np.zeros(nv), np.ones(nv), np.concatenate(lo_parts), np.concatenate(hi_parts), integer=True)
    h.run()
    if h.getInfo().primal_solution_status != 2:
        return None
    x = np.round(np.asarray(h.getSolution().col_value)) > 0.5
    out = cur.copy()
    out[lt[x[xc]], li[x[xc]]] = lj[x[xc]]
    out[pt[x[pc]], pk[x[pc]]] = pj[x[pc]]
    return out


def shorten(
    prep: Prepared,
    assignments: np.ndarray,
    multiplicities: np.ndarray,
    *,
    target: int | None = None,
    time_limit: float | None = None,
    candidates: int = CANDIDATES,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Delete rounds of a decomposition while :func:`drop_round` re-places their samples.

    Parameters
    ----------
    prep : Prepared
        The demand the decomposition meets (:func:`anondecomp.validation.prepare`).
    assignments, multiplicities : numpy.ndarray
        The decomposition: (n, N) arms and (n,) positive integers.
    target : int, optional
        Stop at this length (default: the lower bound max_i sum_j ceil(w_ij), below which nothing exists).
    time_limit : float, optional
        Seconds for the whole search; each program gets at most :data:`TRY_SHARE` of it.
    candidates : int, optional
        Rounds tried per step, those with the fewest samples no other round gives first; the search stops
        when none of them can go.

    Returns
    -------
    tuple of numpy.ndarray or None
        (assignments, multiplicities) of a shorter decomposition of the same demand, or ``None`` when no round
        could be removed (or the decomposition is longer than :data:`MAX_ROUNDS` rounds).

    Examples
    --------
    Four users who want both arms, C = 1: a round per user pair and arm is twice the shortest length.

    >>> import numpy as np
    >>> from anondecomp.graph import DemandGraph
    >>> from anondecomp.validation import prepare
    >>> prep = prepare(DemandGraph.from_weights(np.ones((4, 2))), 1, False)
    >>> rounds = np.array([[0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]])
    >>> a, m = shorten(prep, rounds, np.ones(4, np.int64))
    >>> int(m.sum())
    2
    """
    from anondecomp.result import compress

    start = time.perf_counter()
    m = np.asarray(multiplicities, dtype=np.int64)
    if int(m.sum()) > MAX_ROUNDS:
        return None
    rounds = rounds_of(assignments, m).astype(np.int64)
    target = prep.lower_bound if target is None else target
    removed = 0
    while len(rounds) > target:
        found = None
        for d in np.argsort(unique_samples(prep, rounds), kind="stable")[:candidates]:
            limit = None  # this program's seconds: what is left, at most TRY_SHARE of the search's
            if time_limit is not None:
                left = time_limit - (time.perf_counter() - start)
                if left <= 0:
                    break
                limit = min(left, TRY_SHARE * time_limit)
            found = drop_round(prep, rounds, int(d), limit)
            if found is not None:
                break
        if found is None:
            break
        rounds = found
        removed += 1
    if not removed:
        return None
    return compress(rounds.astype(np.asarray(assignments).dtype), np.ones(len(rounds), np.int64))


def shorten_long(
    prep: Prepared,
    assignments: np.ndarray,
    multiplicities: np.ndarray,
    *,
    time_limit: float | None = None,
    candidates: int = REROUTE_CANDIDATES,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Delete rounds of a long decomposition while :func:`reroute` re-places their samples (no program).

    The rounds with the fewest samples no other round gives are tried first; a round that could not go is
    tried after the others in the next steps (the rounds change little between steps, so it mostly fails
    again).

    Parameters
    ----------
    prep : Prepared
        The demand the decomposition meets.
    assignments, multiplicities : numpy.ndarray
        The decomposition.
    time_limit : float, optional
        Seconds for the whole search.
    candidates : int, optional
        Rounds tried per step; the search stops when none of them can go.

    Returns
    -------
    tuple of numpy.ndarray or None
        (assignments, multiplicities) of a shorter decomposition of the same demand, or ``None`` when no round
        could be removed.

    Examples
    --------
    >>> import numpy as np
    >>> from anondecomp.graph import DemandGraph
    >>> from anondecomp.validation import prepare
    >>> prep = prepare(DemandGraph.from_weights(np.ones((4, 2))), 1, False)
    >>> rounds = np.array([[0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]])
    >>> a, m = shorten_long(prep, rounds, np.ones(4, np.int64))
    >>> int(m.sum())
    2
    """
    from anondecomp.result import compress

    start = time.perf_counter()
    rounds = rounds_of(assignments, multiplicities).astype(np.int64)
    graph = prep.graph
    ix = EdgeIndex(graph)  # built once: every reroute below shares it
    req = np.asarray(prep.edge_required, dtype=np.int64)
    failed = np.zeros(len(rounds), bool)  # per round: it could not go in an earlier step
    removed = 0
    slots = ix.slots(rounds)  # the edge of every slot; afterwards looked up again only where a user moved
    while len(rounds) > prep.lower_bound:
        found = None
        # the state of the rounds, once per step; a candidate's is this one without its round
        cnt = _counts(rounds, graph.n_arms)
        is_open = cnt >= prep.C + 1
        on = np.take_along_axis(is_open, rounds, axis=1)
        cov = _coverage(slots, on, graph.nnz)
        for d in np.lexsort((_unique(_padded(req), slots, on, cov), failed))[:candidates]:
            if time_limit is not None and time.perf_counter() - start > time_limit:
                break
            gave = slots[d, on[d]]
            gave = gave[gave >= 0]  # the edges round d covers: each user once per round, no repeated index
            cov[gave] -= 1
            found = reroute(
                graph,
                req,
                prep.C + 1,
                np.delete(rounds, d, axis=0),
                np.delete(cnt, d, axis=0),
                cov[:-1],
                np.delete(slots, d, axis=0),
                index=ix,
            )
            cov[gave] += 1
            if found is not None:
                failed = np.delete(failed, d)
                break
            failed[d] = True
        if found is None:
            break
        slots = np.delete(slots, d, axis=0)
        moved = found != np.delete(rounds, d, axis=0)  # a few slots: a lookup of all of them costs more
        slots[moved] = ix.of(np.nonzero(moved)[1], found[moved])
        rounds = found
        removed += 1
    if not removed:
        return None
    return compress(rounds.astype(np.asarray(assignments).dtype), np.ones(len(rounds), np.int64))


def shorter(decomposition, *, best_effort: bool = False, time_limit: float | None = None):
    """``decomposition`` shortened by :func:`shorten` (``--certify``'s first step with the default method).

    Parameters
    ----------
    decomposition : Decomposition
        A decomposition whose graph and C define the demand.
    best_effort : bool, optional
        The demand is the coverable one (as the decomposition was built).
    time_limit : float, optional
        Seconds for the search (default :data:`IMPROVE_SECONDS`).

    Returns
    -------
    Decomposition
        A shorter one that the exact verifier accepts, method ``"<method>+improve"`` (``info`` keeps
        ``improved_from`` and ``seed_total``), or ``decomposition`` itself.

    Examples
    --------
    >>> import numpy as np
    >>> from anondecomp import Decomposition, DemandGraph
    >>> g = DemandGraph.from_weights(np.array([[1, 1, 0], [1, 1, 0], [0, 1, 1], [0, 1, 1]], float))
    >>> d = Decomposition(g, 1, "greedy", np.array([[0, 0, 1, 1], [1, 1, 1, 2], [0, 1, 2, 2]]), np.ones(3, int))
    >>> e = shorter(d)
    >>> e.method, e.total_assignments
    ('greedy+improve', 2)
    """
    from anondecomp.result import Decomposition
    from anondecomp.validation import prepare

    start = time.perf_counter()
    prep = prepare(decomposition.graph, decomposition.C, best_effort)
    if decomposition.total_assignments <= prep.lower_bound:
        return decomposition
    found = shorten(
        prep,
        decomposition.assignments,
        decomposition.multiplicities,
        time_limit=IMPROVE_SECONDS if time_limit is None else time_limit,
    )
    if found is None or not _valid(prep, *found, best_effort):
        return decomposition
    return Decomposition(
        decomposition.graph,
        decomposition.C,
        f"{decomposition.method}+improve",
        *found,
        uncovered=decomposition.uncovered,
        wall_time=decomposition.wall_time + time.perf_counter() - start,
        info={
            **decomposition.info,
            "improved_from": decomposition.method,
            "seed_total": decomposition.total_assignments,
        },
    )


def polish(decomposition, *, best_effort: bool = False, time_limit: float | None = None):
    """The default's improvement of a decomposition above its lower bound: rounds removed (:func:`shorter`),
    then a search with the certified bound's master, keeping the shortest decomposition that verifies.

    The search (after :func:`shorter`, within the time left): on logs, arm-first rounds (:mod:`anondecomp.armfirst`:
    plain, users without slack first, then restarts with noisy scores, until :data:`ARMFIRST_SHARE` of the
    time) and rounds removed from the shortest of them by rerouting (:func:`shorten_long`, until
    :data:`REROUTE_SHARE` more); then, unless one meets the trivial bound, a fast seed (polytope or time-shared
    faces, as :func:`~anondecomp.lp_lower_bound` builds); then the column generation of the bound over all
    their faces (:func:`anondecomp.lower_bound.column_generation`, until all but :data:`ROUNDING_SHARE` of the
    time), whose master is rounded (:func:`anondecomp.rounding.round_master`) when the best so far is above
    the bound's ceiling.

    ``auto`` applies it to graphs that are not batched (logs) unless ``improve=False``; the bound it computed
    stays in ``info`` (``lp_lower_bound``, ``lp_how``, ``lp_converged``), so ``--certify`` prints it without
    solving again. Round removal, rerouting, arm-first rounds and the split of the master work on the graph's
    edges (no users x arms array); the search past :func:`shorter` (arm-first rounds, the fast seed, the
    rounding, which colours each face on a table of its users x its open arms) runs within
    :data:`~anondecomp.validation.DENSE_CELLS` users x arms only: above, only the bound is computed.

    Parameters
    ----------
    decomposition : Decomposition
        A decomposition whose graph and C define the demand.
    best_effort : bool, optional
        The demand is the coverable one (as the decomposition was built).
    time_limit : float, optional
        Seconds for both steps (a quarter, :data:`IMPROVE_SHARE`, for the first); default
        :data:`POLISH_SECONDS`. The LP bound may then be Farley's or the trivial one (``info["lp_how"]``).

    Returns
    -------
    Decomposition
        ``decomposition`` itself when it meets the lower bound; else the shortest found, method
        ``"<method>+improve"`` or ``"<method>+<source>"`` (``armfirst``, ``armfirst+improve``, ``lp``,
        ``polytope``, ``timeshare``), with the bound in ``info``.

    Examples
    --------
    >>> import numpy as np
    >>> from anondecomp import Decomposition, DemandGraph
    >>> g = DemandGraph.from_weights(np.array([[1, 1, 0], [1, 1, 0], [0, 1, 1], [0, 1, 1]], float))
    >>> d = Decomposition(g, 1, "greedy", np.array([[0, 0, 1, 1], [1, 1, 1, 2], [0, 1, 2, 2]]), np.ones(3, int))
    >>> e = polish(d)
    >>> e.total_assignments, e.info["lp_lower_bound"]
    (2, 2.0)
    """
    from anondecomp.result import Decomposition
    from anondecomp.validation import prepare

    start = time.perf_counter()
    prep = prepare(decomposition.graph, decomposition.C, best_effort)
    if decomposition.total_assignments <= prep.lower_bound:
        return decomposition
    time_limit = POLISH_SECONDS if time_limit is None else time_limit
    result = shorter(decomposition, best_effort=best_effort, time_limit=IMPROVE_SHARE * time_limit)
    left = max(time_limit - (time.perf_counter() - start), 1e-3)
    began = time.perf_counter()
    found, (value, how, converged) = _search(prep, result, best_effort, left)
    bound = {"lp_lower_bound": value, "lp_how": how, "lp_converged": converged}
    wall_time = result.wall_time + time.perf_counter() - began
    if found is None:
        return Decomposition(
            result.graph,
            result.C,
            result.method,
            result.assignments,
            result.multiplicities,
            uncovered=result.uncovered,
            wall_time=wall_time,
            info={**result.info, **bound},
        )
    a, m, source = found
    info = {k: v for k, v in result.info.items() if k != "time_limit_reached"}
    return Decomposition(
        result.graph,
        result.C,
        f"{result.method}+{source}",
        a,
        m,
        uncovered=result.uncovered,
        wall_time=wall_time,
        info={**info, "improved_from": result.method, "seed_total": result.total_assignments, **bound},
    )


def _search(
    prep: Prepared, seed, best_effort: bool, time_limit: float
) -> tuple[tuple[np.ndarray, np.ndarray, str] | None, tuple[float, str, bool]]:
    """:func:`polish`'s search from ``seed`` (a Decomposition) within ``time_limit`` seconds: ((assignments,
    multiplicities, source) of the shortest decomposition found that beats the seed and verifies, or ``None``;
    (certified bound, how it is certified, converged))."""
    from anondecomp import lower_bound
    from anondecomp.validation import DENSE_CELLS

    start = time.perf_counter()
    graph, trivial = prep.graph, prep.lower_bound
    if seed.total_assignments <= trivial:  # shorter() met the trivial bound, which no decomposition beats
        return None, (float(trivial), lower_bound.TRIVIAL, True)
    small = graph.n_users * graph.n_arms <= DENSE_CELLS  # the fast seed's and the faces' models within reach
    seeds = [(seed.assignments, seed.multiplicities, seed.method)]
    if small and graph.demand is None:
        seeds += _armfirst_seeds(prep, start, time_limit)
    met = any(int(x[1].sum()) <= trivial for x in seeds[1:])  # an arm-first seed meets the bound already
    if small and not met:
        # its share of the time limit, within what the arm-first seeds left
        left = max(start + time_limit - time.perf_counter(), 0.0)
        seeds += lower_bound.fast_seed(
            prep, best_effort, min(time_limit, left / lower_bound.TIMESHARE_SHARE), seed.method
        )
    for a, m, source in seeds[1:]:
        if int(m.sum()) <= trivial and _valid(prep, a, m, best_effort):
            return (a, m, source), (float(trivial), lower_bound.TRIVIAL, True)
    cg, bound = _bound_master(prep, seeds, start, time_limit)
    best = _shortest_valid(prep, seeds[1:], seed.total_assignments, best_effort)
    best_total = seed.total_assignments if best is None else int(best[1].sum())
    if (
        small
        and cg is not None
        and best_total > int(np.ceil(bound[0] - 1e-6))
        and time.perf_counter() < start + time_limit
    ):
        rounded = _rounded(cg, prep, best_total, best_effort)
        if rounded is not None:
            best = (*rounded, "lp")
    return best, bound


def _armfirst_seeds(prep: Prepared, start: float, time_limit: float) -> list[tuple[np.ndarray, np.ndarray, str]]:
    """:func:`_search`'s seeds on a log (``start`` its start, ``time_limit`` its seconds): arm-first rounds, often
    much shorter than the given seed there (module :mod:`anondecomp.armfirst`), and the shortest of them with
    rounds removed by rerouting their samples (:func:`shorten_long`)."""
    from anondecomp.armfirst import armfirst_rounds  # imported here: it imports the methods package

    trivial = prep.lower_bound
    seeds: list[tuple[np.ndarray, np.ndarray, str]] = []
    # plain, users without slack first, then restarts of the latter with noisy scores (fixed seeds)
    # a restart runs only while the time left for them is twice the last run: one that would be cut, or
    # barely finish, is worth less than the same time spent rerouting below (3000 x 1000 log at C = 50:
    # a restart gives R = 524-540 in 3-4 s, rerouting about one round less per second)
    deadline = start + ARMFIRST_SHARE * time_limit
    last = 0.0
    for tight_first, restart in ((False, None), (True, None), *((True, r) for r in range(ARMFIRST_RESTARTS))):
        if restart is not None and deadline - time.perf_counter() < 2 * last:
            break
        began = time.perf_counter()
        found = armfirst_rounds(
            prep, deadline, tight_first, None if restart is None else np.random.default_rng(restart)
        )
        last = time.perf_counter() - began
        if found is not None:
            seeds.append((*found, "armfirst"))
            if int(found[1].sum()) <= trivial:
                break
    # the shortest, with rounds removed by rerouting their samples
    shortest = min(seeds, key=lambda x: int(x[1].sum()), default=None)
    if shortest is not None and int(shortest[1].sum()) > trivial:
        budget = (ARMFIRST_SHARE + REROUTE_SHARE) * time_limit - (time.perf_counter() - start)
        better = shorten_long(prep, shortest[0], shortest[1], time_limit=budget) if budget > 0 else None
        if better is not None:
            seeds.append((*better, "armfirst+improve"))
    return seeds


def _bound_master(
    prep: Prepared, seeds: list[tuple[np.ndarray, np.ndarray, str]], start: float, time_limit: float
) -> tuple[ColumnGeneration | None, tuple[float, str, bool]]:
    """The column generation of the bound over every seed's faces, while :func:`_search`'s time allows (part of
    it kept for rounding the master), and its certified bound; (``None``, the trivial bound) without it."""
    from anondecomp import lower_bound

    trivial = float(prep.lower_bound)
    if time.perf_counter() >= start + time_limit:
        return None, (trivial, lower_bound.TIME_TRIVIAL, False)
    types = lower_bound.UserTypes.from_prepared(prep)
    faces = lower_bound.seed_faces(prep, [(a, m) for a, m, _ in seeds])
    cg = lower_bound.column_generation(
        prep, faces, start + (1.0 - ROUNDING_SHARE) * time_limit, floor=trivial, types=types
    )
    if cg is None:
        return None, (trivial, lower_bound.TOO_LARGE, False)
    return cg, (*cg.certificate(trivial), cg.converged)


def _shortest_valid(
    prep: Prepared, seeds: list[tuple[np.ndarray, np.ndarray, str]], seed_total: int, best_effort: bool
) -> tuple[np.ndarray, np.ndarray, str] | None:
    """The shortest of ``seeds`` shorter than ``seed_total`` that verifies (the first of equals), or ``None``."""
    for a, m, source in sorted(seeds, key=lambda x: int(x[1].sum())):
        if int(m.sum()) < seed_total and _valid(prep, a, m, best_effort):
            return a, m, source
    return None


def _valid(prep: Prepared, assignments: np.ndarray, multiplicities: np.ndarray, best_effort: bool) -> bool:
    """Whether a decomposition meets ``prep``'s demand (the exact verifier)."""
    from anondecomp.verify import verify

    return verify(prep.graph, prep.C, assignments, multiplicities, best_effort=best_effort).valid


def _rounded(cg, prep: Prepared, seed_total: int, best_effort: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """The master's last solution rounded into a decomposition (:mod:`anondecomp.rounding`), when that is
    shorter than ``seed_total`` and verifies."""
    from anondecomp.result import compress
    from anondecomp.rounding import round_master

    point = cg.last_solution()
    if point is None:
        return None
    found = round_master(prep, cg.types, *point)
    if found is None or int(found[1].sum()) >= seed_total:
        return None
    a, m = compress(*found)
    return (a, m) if _valid(prep, a, m, best_effort) else None
