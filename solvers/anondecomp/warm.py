"""Warm starts: a decomposition of a graph built around the groups of a plan made for a similar graph.

Beyond paper 000. A plan is carried from one graph to the next as its *seats*: the places (round, user, item)
of its groups of at least C+1 users that some demand needs, plus the fewest other members that keep such a
group at C+1 (:func:`plan_seats`). Users and items are named by codes shared by both graphs (a log's codes,
:mod:`anondecomp.stream`), so a seat is found again in the next graph when its user and its item are still there
and the item is still in the user's support. :func:`warm_decomposition` then builds a calendar of
``L = max_i sum_j ceil(w_ij)`` rounds (the lower bound) for the new graph:

1. **Kept groups.** The seats found again whose group still holds a share of C+1 of them (half, or, in a
   second try, 1.2: :data:`KEEP_SHARES`); at most L rounds of them, the ones with the most seats of pairs with
   demand; each pair keeps only as many places as its demand needs (the earliest), each group with a needed
   place keeps C+1 members, and the others are dissolved.
2. **Joining and repair.** A user free in a round and short of samples of an item that has a group there
   sits in it (a group of C+1 users gives it a sample for free); a user with several such items takes the one
   it has the fewest chances left to join, for its demand. A group below C+1 (members left) is then filled by
   other users of its item free in its round, those with the most rounds to spare first, or dissolved.
3. **Sessions.** What is still short is scheduled item by item (thinnest first) as
   :mod:`anondecomp.methods.sessions` does: in the round where most of its short users are free, joining the
   item's group there, or padded to C+1 by its other free users (the most slack first); a round is added only
   when no round can hold a group.

Every group of the result holds C+1 users and every pair gets its demand, so the result is a C-anonymous
decomposition. Users free in a round are hidden (:func:`_hide_free`): each sits on an arm of its support with no
group in that round and at most C users, so it is not exposed; on the catalogue log of 30,000 users this takes
0.1 s and leaves the warm plans' total exposure 1.12 times the re-seated cold plans' (6 times without it). The
work is linear in the seats and the rounds x users of the calendar, plus, for the items still short after
joining, their short users x rounds. R stays near the lower bound when the graphs are alike (users and items
that stay, with demands that change little); :mod:`anondecomp.stream` compares it with the bound and falls back
to a cold decomposition.

Reference: Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (the
decompositions of Section 3 and their lower bound max_i sum_j w_ij).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from anondecomp.errors import SolverError
from anondecomp.exposure import HIDE_PASSES
from anondecomp.flows import ranges
from anondecomp.graph import DemandGraph
from anondecomp.methods._common import park
from anondecomp.result import Decomposition

CALENDAR_CELLS = 50_000_000
"""Rounds x users above which a plan is not laid out round by round (its calendar would take 200 MB): a graph
after such a plan is decomposed without a warm start."""
GROUP_TABLE = 1 << 26
"""Rounds x items up to which group sizes are counted in a table; above it by sorting."""
JOIN_CANDIDATES = 1 << 24
"""Candidates (short pair, round of a group of its item) up to which step 2 (joining) runs; above it sessions
serve every short pair."""
KEEP_SHARES = (0.5, 1.2)
"""The warm starts tried in turn (:func:`warm_decomposition`'s ``keep``): a group of the previous plan is kept
when it still holds this share of C+1 places. The first repairs the groups that lost members; the second keeps
only groups with room to spare, which leaves the calendar freer where demands changed much."""
REPAIR_TRIES = 4
"""Users of its item tried per missing member of a group being repaired (most are free in its round)."""
JOIN_PASSES = 3
"""Greedy passes of step 2 (a pass seats most of what it can; the next ones take what conflicts left)."""
TOP_ROUNDS = 8
"""Rounds tried for a padded session before counting the free users of an item in every round."""


@dataclass(frozen=True, eq=False)
class Seats:
    """The seats of a plan (module docstring): the round, user and item of each place, users and items named by
    the codes of the plan's graph.

    Parameters
    ----------
    rounds, users, items : numpy.ndarray
        (s,) int64 round of each place and the index of its user and item in ``user_codes`` and ``item_codes``.
    user_codes, item_codes : numpy.ndarray
        (N,) and (K,) the sorted codes of the plan's users and items.
    length : int
        The plan's number of rounds R.
    """

    rounds: np.ndarray
    users: np.ndarray
    items: np.ndarray
    user_codes: np.ndarray
    item_codes: np.ndarray
    length: int


def group_size(keys: np.ndarray, n_keys: int) -> np.ndarray:
    """How many entries share each entry's key (a group: one key per (round, item)), keys in ``[0, n_keys)``."""
    if n_keys <= GROUP_TABLE:
        return np.bincount(keys, minlength=n_keys)[keys]
    _, at, counts = np.unique(keys, return_inverse=True, return_counts=True)
    return counts[at.ravel()]


def _segment_rank(sorted_keys: np.ndarray) -> np.ndarray:
    """The rank of each entry among the entries of equal key before it (keys sorted, or at least grouped)."""
    n = len(sorted_keys)
    first = np.ones(n, dtype=bool)
    first[1:] = sorted_keys[1:] != sorted_keys[:-1]
    return np.arange(n) - np.maximum.accumulate(np.where(first, np.arange(n), 0))


def _index_map(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """For each code of ``old``, its index in the sorted codes ``new``, or -1."""
    at = np.minimum(np.searchsorted(new, old), len(new) - 1)
    return np.where(new[at] == old, at, -1)


@dataclass
class _Places:
    """Places in a graph: round, user, arm and edge of each, sorted by edge, then round."""

    t: np.ndarray
    i: np.ndarray
    a: np.ndarray
    e: np.ndarray

    def take(self, keep: np.ndarray) -> _Places:
        return _Places(self.t[keep], self.i[keep], self.a[keep], self.e[keep])


def _places(graph: DemandGraph, t: np.ndarray, i: np.ndarray, a: np.ndarray, n_rounds: int) -> _Places:
    """The places (round ``t``, user ``i``, arm ``a``) that are on their user's support, with their edges, sorted
    by edge, then round (one binary search per distinct (user, arm) pair, not per place)."""
    K = graph.n_arms
    pair = i.astype(np.int64) * K + a
    order = np.argsort(pair * n_rounds + t)
    t, i, a, pair = t[order], i[order], a[order], pair[order]
    first = np.ones(len(pair), dtype=bool)
    first[1:] = pair[1:] != pair[:-1]
    keys = graph.edge_users.astype(np.int64) * K + graph.edge_arms
    at = np.minimum(np.searchsorted(keys, pair[first]), max(len(keys) - 1, 0))
    run = np.cumsum(first) - 1
    e, on = at[run], (keys[at] == pair[first])[run]
    return _Places(t[on], i[on], a[on], e[on])


def _trim(places: _Places, need: np.ndarray, K: int, C: int) -> np.ndarray:
    """Which places to keep (step 1 of the module docstring): each edge's first ``need[e]`` places in round
    order are needed; a group with a needed place keeps them and as many others as make C+1, a group without
    is dissolved."""
    needed = _segment_rank(places.e) < need[places.e]
    key = places.t * K + places.a
    by_group = np.argsort(key)
    g, wanted = key[by_group], needed[by_group]
    first = np.ones(len(g), dtype=bool)
    first[1:] = g[1:] != g[:-1]
    group = np.cumsum(first) - 1
    n_needed = np.bincount(group, weights=wanted)[group]
    unneeded = np.cumsum(~wanted)  # the rank of each unneeded member among its group's unneeded members:
    pad_rank = unneeded - 1 - (unneeded - ~wanted)[np.flatnonzero(first)][group]
    keep = np.empty(len(g), dtype=bool)
    keep[by_group] = wanted | ((n_needed > 0) & ~wanted & (pad_rank < C + 1 - n_needed))
    return keep


def plan_seats(result: Decomposition, user_codes: np.ndarray, item_codes: np.ndarray) -> Seats | None:
    """The seats of a decomposition (module docstring): the places of its groups that the demand needs, and the
    fewest others that keep those groups at C+1.

    Parameters
    ----------
    result : Decomposition
        A decomposition.
    user_codes, item_codes : numpy.ndarray
        The sorted codes naming its graph's users and items (a log's codes, :mod:`anondecomp.stream`).

    Returns
    -------
    Seats or None
        Its seats; ``None`` when its calendar (R x users) would exceed :data:`CALENDAR_CELLS`.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np, anondecomp
    >>> g = anondecomp.DemandGraph.from_weights(np.ones((4, 1)))
    >>> seats = plan_seats(anondecomp.decompose(g, 2), np.arange(4), np.array([7]))
    >>> seats.rounds.tolist(), seats.users.tolist(), seats.length
    ([0, 0, 0, 0], [0, 1, 2, 3], 1)
    """
    graph, C = result.graph, result.C
    R, N, K = result.total_assignments, graph.n_users, graph.n_arms
    if R * N > CALENDAR_CELLS:
        return None
    a = np.repeat(np.asarray(result.assignments), result.multiplicities, axis=0).ravel().astype(np.int64)
    t, i = np.repeat(np.arange(R), N), np.tile(np.arange(N), R)
    on = group_size(t * K + a, R * K) >= C + 1
    places = _places(graph, t[on], i[on], a[on], R)
    places = places.take(_trim(places, graph.edge_required.astype(np.int64), K, C))
    return Seats(places.t, places.i, places.a, user_codes, item_codes, R)


def _found(
    previous: Seats, graph: DemandGraph, user_codes: np.ndarray, item_codes: np.ndarray, C: int, keep: float
) -> _Places:
    """The seats of ``previous`` found again in ``graph`` (user and item still there, the item in the user's
    support), in groups that still hold at least ``keep`` times C+1 of them (a group below C+1 is repaired or
    dissolved later)."""
    i = _index_map(previous.user_codes, user_codes)[previous.users]
    a = _index_map(previous.item_codes, item_codes)[previous.items]
    there = (i >= 0) & (a >= 0)
    places = _places(graph, previous.rounds[there], i[there], a[there], previous.length)
    size = group_size(places.t * graph.n_arms + places.a, previous.length * graph.n_arms)
    return places.take(size >= keep * (C + 1))


def _useful_rounds(places: _Places, need: np.ndarray, n_rounds: int, length: int) -> _Places:
    """At most ``length`` rounds: the ones with the most places on pairs with demand (ties: the earlier),
    renumbered from 0 in their order."""
    if n_rounds <= length:
        return places
    useful = np.bincount(places.t, weights=need[places.e] > 0, minlength=n_rounds)
    kept = np.sort(np.argsort(-useful, kind="stable")[:length])
    new = np.full(n_rounds, -1, dtype=np.int64)
    new[kept] = np.arange(length)
    places = places.take(new[places.t] >= 0)
    places.t = new[places.t]
    return places


@dataclass
class _ByArm:
    """The graph's edges listed arm by arm: ``edges[start[j]:start[j + 1]]`` are arm j's, ``users`` their users."""

    edges: np.ndarray
    users: np.ndarray
    start: np.ndarray

    @classmethod
    def of(cls, graph: DemandGraph) -> _ByArm:
        edges = graph.arm_order
        return cls(edges, graph.edge_users[edges].astype(np.int64), np.concatenate([[0], np.cumsum(graph.arm_degrees)]))


def _groups(places: _Places, L: int, K: int) -> tuple[np.ndarray, np.ndarray]:
    """The (arm, round) key ``a * L + t`` of every group of ``places``, sorted (so arm by arm), and its size."""
    key = places.a * L + places.t
    if L * K <= GROUP_TABLE:
        count = np.bincount(key, minlength=L * K)
        groups = np.flatnonzero(count)
        return groups, count[groups]
    return np.unique(key, return_counts=True)


def _first_per_slot(user: np.ndarray, rounds: np.ndarray, priority: np.ndarray, L: int) -> np.ndarray:
    """Of candidates (``user``, ``rounds``), the one of least ``priority`` for each (user, round), as indices
    (one sort of a combined key: user, round, priority)."""
    if not len(user):
        return np.empty(0, dtype=np.int64)
    low = int(priority.min())
    slot = user * L + rounds
    order = np.argsort(slot * (int(priority.max()) - low + 1) + (priority - low))
    first = np.ones(len(order), dtype=bool)
    first[1:] = slot[order[1:]] != slot[order[:-1]]
    return order[first]


def _join_groups(cal: np.ndarray, graph: DemandGraph, places: _Places, rem: np.ndarray) -> _Places:
    """Step 2 of the module docstring: the places taken in the groups of ``places`` (``cal`` and ``rem`` updated).

    The candidates are the (short pair, round) pairs whose item has a group in the round while the user is
    free; a few greedy passes give each (user, round) to one of its candidate pairs, the pair with the fewest
    candidates first, and each pair at most as many rounds as it is short."""
    L = cal.shape[0]
    groups, _ = _groups(places, L, graph.n_arms)
    start = np.searchsorted(groups // L, np.arange(graph.n_arms + 1))
    taken = []
    for _ in range(JOIN_PASSES):
        need = np.flatnonzero(rem > 0)
        arm = graph.edge_arms[need].astype(np.int64)
        n_rounds = start[arm + 1] - start[arm]
        if not len(need) or int(n_rounds.sum()) > JOIN_CANDIDATES:
            break
        edge = np.repeat(need, n_rounds)
        rounds = groups[np.repeat(start[arm], n_rounds) + _segment_rank(edge)] % L
        user = graph.edge_users[edge].astype(np.int64)
        free = cal[rounds, user] < 0
        edge, rounds, user = edge[free], rounds[free], user[free]
        if not len(edge):
            break
        won = _first_per_slot(user, rounds, np.bincount(edge, minlength=len(rem))[edge] - rem[edge], L)
        won = won[np.argsort(edge[won], kind="stable")]
        won = won[_segment_rank(edge[won]) < rem[edge[won]]]  # at most what each pair is short
        arms = graph.edge_arms[edge[won]].astype(np.int64)
        cal[rounds[won], user[won]] = arms
        rem[edge[won]] -= 1
        taken.append(_Places(rounds[won], user[won], arms, edge[won]))
    return _concat(taken)


def _concat(parts: list[_Places]) -> _Places:
    empty = np.empty(0, dtype=np.int64)
    return _Places(*(np.concatenate([getattr(p, f) for p in parts] + [empty]) for f in "tiae"))


def _repair(cal: np.ndarray, graph: DemandGraph, places: _Places, rem: np.ndarray, C: int, by_arm: _ByArm) -> _Places:
    """Fill the groups of ``places`` that hold fewer than C+1 users with free users of their item that have rounds
    to spare beyond their remaining demand ``rem`` (one group per (user, round), the groups missing the fewest
    first, each user at most as often as it has rounds to spare, the most spare first), only where that fills a
    group; then dissolve every group still below C+1. Returns the places kept (``cal`` updated)."""
    L, K = cal.shape[0], graph.n_arms
    groups, size = _groups(places, L, K)
    broken = np.flatnonzero(size < C + 1)
    arm = groups[broken] // L
    missing = C + 1 - size[broken]
    degree = by_arm.start[arm + 1] - by_arm.start[arm]
    n = np.minimum(degree, REPAIR_TRIES * (missing + 1))  # users tried per group: most are free in its round
    pads = _Places(*(np.empty(0, dtype=np.int64) for _ in range(4)))
    if len(broken) and int(n.sum()) <= JOIN_CANDIDATES:
        spare = (cal < 0).sum(axis=0) - np.bincount(graph.edge_users, weights=rem, minlength=graph.n_users)
        g = np.repeat(np.arange(len(broken)), n)
        # each group tries its own run of its arm's users
        k = by_arm.start[arm][g] + (broken[g] * 7919 + _segment_rank(g)) % degree[g]
        user, rounds = by_arm.users[k], groups[broken][g] % L
        ok = (cal[rounds, user] < 0) & (spare[user] > 0)
        g, k, user, rounds = g[ok], k[ok], user[ok], rounds[ok]
        won = _first_per_slot(user, rounds, missing[g], L)
        won = won[np.argsort(user[won], kind="stable")]
        won = won[_segment_rank(user[won]) < spare[user[won]]]  # a user pads at most its spare rounds
        won = won[np.lexsort((-spare[user[won]], g[won]))]
        won = won[_segment_rank(g[won]) < missing[g[won]]]
        won = won[(np.bincount(g[won], minlength=len(broken)) >= missing)[g[won]]]  # only groups it fills
        pads = _Places(rounds[won], user[won], arm[g[won]], by_arm.edges[k[won]])
        cal[pads.t, pads.i] = pads.a
    places = _concat([places, pads])
    small = group_size(places.t * K + places.a, L * K) < C + 1
    cal[places.t[small], places.i[small]] = -1
    return places.take(~small)


def _best_round(count: np.ndarray, ok: np.ndarray, offset: int) -> int:
    """The round of largest ``count`` among ``ok`` (-1 if none); ties go to the first from ``offset`` on, so
    that items with equal counts spread over the calendar (as :mod:`anondecomp.methods.sessions` does)."""
    if not ok.any():
        return -1
    L = len(count)
    key = np.where(ok, count.astype(np.int64) * L + (L - 1 - (np.arange(L) - offset) % L), -1)
    return int(np.argmax(key))


class _Calendar:
    """The calendar filled by step 3: the arm of every (round, user) (-1 free), which users are free when, how
    many rounds each user has free, and the users of each group of the short items (``seated``)."""

    def __init__(self, cal: np.ndarray, short_arms: np.ndarray, places: _Places, n_arms: int) -> None:
        self.arm = cal
        self.free = (cal < 0).T.copy()
        self.n_free = self.free.sum(axis=1)
        L, S = cal.shape[0], len(short_arms)
        self.column = np.full(n_arms, -1, dtype=np.int64)  # each short arm's column of ``seated``
        self.column[short_arms] = np.arange(S)
        where = self.column[places.a]
        mine = where >= 0
        self.seated = np.bincount(places.t[mine] * S + where[mine], minlength=L * S).reshape(L, S)

    @property
    def rounds(self) -> int:
        return self.arm.shape[0]

    def group(self, j: int) -> np.ndarray:
        """(rounds,) users seated on arm ``j`` in each round (a view, zero-padded for rounds added since)."""
        if self.seated.shape[0] < self.rounds:
            grown = np.zeros((self.rounds, self.seated.shape[1]), dtype=np.int64)
            grown[: self.seated.shape[0]] = self.seated
            self.seated = grown
        return self.seated[:, self.column[j]]

    def grow(self) -> int:
        """Add a round in which every user is free; its index."""
        self.arm = np.concatenate([self.arm, np.full((1, self.arm.shape[1]), -1, dtype=self.arm.dtype)])
        self.free = np.concatenate([self.free, np.ones((self.free.shape[0], 1), dtype=bool)], axis=1)
        self.n_free += 1
        return self.rounds - 1

    def seat(self, users: np.ndarray, t: int, j: int) -> None:
        self.arm[t, users] = j
        self.free[users, t] = False
        self.n_free[users] -= 1
        self.group(j)[t] += len(users)


def _session_round(cal: _Calendar, users: np.ndarray, short: np.ndarray, j: int, C: int) -> int:
    """The round of arm ``j``'s next session (step 3 of the module docstring): the round where most of its
    ``short`` users are free among those where a group can sit: one is there already, or they are C+1, or its
    other free ``users`` can pad them to C+1 (the :data:`TOP_ROUNDS` best checked first); else a new round."""
    seated = cal.group(j)
    count = cal.free[users[short]].sum(axis=0)
    top = np.argsort(-count, kind="stable")[:TOP_ROUNDS]
    for t in top[count[top] > 0]:  # most often the first fits: its free users are counted alone
        if seated[t] > 0 or count[t] >= C + 1 or int(cal.free[users, t].sum()) + seated[t] >= C + 1:
            return int(t)
    t = _best_round(count, (count > 0) & (cal.free[users].sum(axis=0) + seated >= C + 1), j)
    return t if t >= 0 else cal.grow()


def _arm_sessions(
    cal: _Calendar, graph: DemandGraph, rem: np.ndarray, left: np.ndarray, edges: np.ndarray, C: int
) -> None:
    """Serve the remaining demand ``rem`` of one arm's ``edges`` by sessions of C+1 users (step 3), padders the
    most slack first (free rounds beyond the demand ``left`` of each user). In place."""
    j = int(graph.edge_arms[edges[0]])
    users = graph.edge_users[edges].astype(np.int64)
    short = np.flatnonzero(rem[edges] > 0)
    while len(short):
        t = _session_round(cal, users, short, j, C)
        hit = short[cal.free[users[short], t]]
        missing = C + 1 - int(cal.group(j)[t]) - len(hit)
        pads = np.empty(0, dtype=np.int64)
        if missing > 0:
            pads = np.flatnonzero(cal.free[users, t] & (rem[edges] == 0))
            if missing < len(pads):
                slack = cal.n_free[users[pads]] - left[users[pads]]
                pads = pads[np.argpartition(-slack, missing - 1)[:missing]]
        cal.seat(users[np.concatenate([hit, pads])], t, j)
        rem[edges[hit]] -= 1
        left[users[hit]] -= 1
        short = short[rem[edges[short]] > 0]


def warm_decomposition(
    graph: DemandGraph,
    C: int,
    previous: Seats,
    user_codes: np.ndarray,
    item_codes: np.ndarray,
    keep: float = KEEP_SHARES[0],
) -> tuple[np.ndarray, Seats, dict]:
    """A C-anonymous decomposition of ``graph`` warm-started from the seats of a previous plan (module
    docstring).

    Parameters
    ----------
    graph : DemandGraph
        The graph to decompose.
    C : int
        The anonymity parameter.
    previous : Seats
        The previous plan's seats (:func:`plan_seats`, or this function's own).
    user_codes, item_codes : numpy.ndarray
        The sorted codes of ``graph``'s users and items (in the code space of ``previous``).
    keep : float, optional
        A group of ``previous`` is kept when it still holds ``keep`` times C+1 places (:data:`KEEP_SHARES`).

    Returns
    -------
    rounds : numpy.ndarray
        (R, N) the decomposition's rounds, each of multiplicity 1, every user on an arm of its support.
    seats : Seats
        Its seats, for the next graph.
    info : dict
        ``kept_places`` (places of the previous plan kept), ``joined`` (places taken in its groups),
        ``repaired`` (places added to fill its groups), ``added_rounds`` (rounds beyond the lower bound).

    Raises
    ------
    SolverError
        If a demand is left unserved (a bug: every item's sessions end with its demand met).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    Four users of one item at C = 2 (groups of 3); u0 leaves and u4 comes: u4 joins the kept group.

    >>> import numpy as np, anondecomp
    >>> before = anondecomp.DemandGraph.from_weights(np.ones((4, 1)), users=["u0", "u1", "u2", "u3"])
    >>> seats = plan_seats(anondecomp.decompose(before, 2), np.arange(4), np.array([0]))
    >>> after = anondecomp.DemandGraph.from_weights(np.ones((4, 1)), users=["u1", "u2", "u3", "u4"])
    >>> rounds, _, info = warm_decomposition(after, 2, seats, np.array([1, 2, 3, 4]), np.array([0]))
    >>> rounds.tolist(), info["kept_places"], info["joined"], info["added_rounds"]
    ([[0, 0, 0, 0]], 3, 1, 0)
    """
    K, need = graph.n_arms, graph.edge_required.astype(np.int64)
    length = max(graph.lower_bound, 1)
    found = _found(previous, graph, user_codes, item_codes, C, keep)
    places = _useful_rounds(found, need, previous.length, length)
    places = places.take(_trim(places, need, K, C))
    cal = np.full((length, graph.n_users), -1, dtype=np.int32)
    cal[places.t, places.i] = places.a
    rem = np.maximum(need - np.bincount(places.e, minlength=len(need)), 0)  # as if every group is repaired
    by_arm = _ByArm.of(graph)
    joined = _join_groups(cal, graph, places, rem)
    kept = _repair(cal, graph, _concat([places, joined]), rem, C, by_arm)
    rem = np.maximum(need - np.bincount(kept.e, minlength=len(need)), 0)
    info = {"kept_places": len(places.t), "joined": len(joined.t), "repaired": len(kept.t) - len(places.t)}
    short_arms = np.flatnonzero(np.bincount(graph.edge_arms, weights=rem > 0, minlength=K) > 0)
    calendar = _Calendar(cal, short_arms, kept, K)
    left = np.bincount(graph.edge_users, weights=rem, minlength=graph.n_users).astype(np.int64)
    for j in short_arms[np.argsort(graph.arm_degrees[short_arms], kind="stable")]:
        _arm_sessions(calendar, graph, rem, left, by_arm.edges[by_arm.start[j] : by_arm.start[j + 1]], C)
    if rem.any():  # every arm's loop ends with its demand served: this would be a bug, never an output
        raise SolverError("the warm start left a demand unserved")
    busy = calendar.arm >= 0
    rows = busy.any(axis=1)
    arm, busy = (calendar.arm, busy) if rows.all() else (calendar.arm[rows], busy[rows])
    info["added_rounds"] = calendar.rounds - length
    t, i = np.divmod(np.flatnonzero(busy), graph.n_users)  # row-major, as np.nonzero but faster
    seats = Seats(t, i, arm[t, i].astype(np.int64), user_codes, item_codes, len(arm))
    return _hide_free(graph, arm, seats, C), seats, info


def _hide_free(graph: DemandGraph, arm: np.ndarray, members: Seats, C: int) -> np.ndarray:
    """The calendar ``arm`` ((R, N), -1 where a user is in no group, ``members`` its other places), in place,
    with every free user seated where it is not exposed: on an arm of its support with no group in that round and
    at most C users (a hidden group releases nothing). Each user has a *home*, an arm of its support held by at
    most C users' homes, the one with groups in the fewest rounds it can get (:func:`_homes`); a free user sits at
    home unless its home has a group in that round, and then tries :data:`HIDE_PASSES` other arms of its support,
    counting every home as full. A user that finds none sits on its first support arm (it pads a group). Linear
    in the calendar; the groups are counted in a (round, arm) table of at most :data:`GROUP_TABLE` cells (above
    it, free users sit on their first support arm)."""
    R, N = arm.shape
    K = graph.n_arms
    parked = park(graph)
    free = arm < 0
    if R * K > GROUP_TABLE or len(members.rounds) == R * N:
        return _fill_free(arm, free, parked)
    groups = np.bincount(members.rounds * K + members.items, minlength=R * K).reshape(R, K) > 0
    home = _homes(graph, groups.sum(axis=0), C)
    out = _fill_free(arm, free, np.where(home >= 0, home, parked))
    # the free users not hidden at home: those at home in a group's round and arm (each group's arm is home to at
    # most C users: found from the groups, not from every free place), and those without a home
    homed = np.flatnonzero(home >= 0)
    homed = homed[np.argsort(home[homed], kind="stable")]
    first = np.searchsorted(home[homed], np.arange(K + 1))
    gt, ga = np.nonzero(groups)
    n = first[ga + 1] - first[ga]
    t = np.repeat(gt, n)
    i = homed[ranges(first[ga], n)]
    keep = free[t, i]
    t, i = t[keep], i[keep]
    lone = np.flatnonzero(home < 0)
    lt, li = np.nonzero(free[:, lone])
    t, i = np.concatenate([t, lt]), np.concatenate([i, lone[li]])
    load = np.bincount(home[home >= 0], minlength=K)  # every home full in every round, for the others
    extra = np.zeros(R * K, dtype=np.int64)
    deg = np.diff(graph.indptr)[i]
    turn = (i + t) % np.maximum(deg, 1)
    for _ in range(int(min(HIDE_PASSES, deg.max(initial=0)))):
        a = graph.edge_arms[graph.indptr[i] + turn].astype(np.int64)
        key = t * K + a
        open_ = np.flatnonzero(~groups.reshape(-1)[key])
        open_ = open_[np.argsort(key[open_], kind="stable")]
        fits = open_[load[a[open_]] + extra[key[open_]] + _segment_rank(key[open_]) < C]
        out[t[fits], i[fits]] = a[fits]
        extra += np.bincount(key[fits], minlength=R * K)
        left = np.ones(len(t), dtype=bool)
        left[fits] = False
        t, i, turn, deg = t[left], i[left], turn[left] + 1, deg[left]
        turn[turn == deg] = 0
        if not len(t):
            break
    out[t, i] = parked[i]
    return out


def _fill_free(arm: np.ndarray, free: np.ndarray, fill: np.ndarray) -> np.ndarray:
    """``arm`` with user i on ``fill[i]`` where it is ``free`` (-1), in place: adding ``free * (fill + 1)``
    writes them without a scatter."""
    arm += free * (fill + 1).astype(arm.dtype)
    return arm


def _homes(graph: DemandGraph, busy: np.ndarray, C: int) -> np.ndarray:
    """(N,) each user's home arm (:func:`_hide_free`), or -1: users of the smallest supports first, each takes
    the arm of its support with the fewest ``busy`` rounds that has room (at most C homes per arm), in
    :data:`HIDE_PASSES` passes."""
    N, K = graph.shape
    deg = np.diff(graph.indptr)
    # each user's edges by busy rounds (stable: by arm among equals), one sort of a combined key
    order = np.argsort(
        graph.edge_users.astype(np.int64) * (int(busy.max(initial=0)) + 1) + busy[graph.edge_arms], kind="stable"
    )
    home = np.full(N, -1, dtype=np.int64)
    load = np.zeros(K, dtype=np.int64)
    users = np.argsort(deg, kind="stable")
    for p in range(int(min(HIDE_PASSES, deg.max(initial=0)))):
        users = users[deg[users] > p]
        a = graph.edge_arms[order[graph.indptr[users] + p]].astype(np.int64)
        by_arm = np.argsort(a, kind="stable")  # users of the smallest supports first within an arm
        fits = by_arm[load[a[by_arm]] + _segment_rank(a[by_arm]) < C]
        home[users[fits]] = a[fits]
        load += np.bincount(a[fits], minlength=K)
        left = np.ones(len(users), dtype=bool)
        left[fits] = False
        users = users[left]
        if not len(users):
            break
    return home


def merge_rounds(rounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``rounds`` (each a round of multiplicity 1) and their multiplicities, in order of first
    appearance: rows are matched by a random projection, then compared whole, so no row sort is needed.

    Examples
    --------
    >>> rows, mult = merge_rounds(np.array([[1, 0], [0, 1], [1, 0]]))
    >>> rows.tolist(), mult.tolist()
    ([[1, 0], [0, 1]], [2, 1])
    """
    if len(rounds) <= 1:
        return rounds, np.ones(len(rounds), dtype=np.int64)
    hashes = rounds.astype(np.float64) @ np.random.default_rng(0).random(rounds.shape[1])
    _, first, at = np.unique(hashes, return_index=True, return_inverse=True)
    at = at.ravel()
    same = (rounds == rounds[first[at]]).all(axis=1)
    if not same.all():  # a hash collision between different rows: fall back to comparing rows exactly
        uniq, at = np.unique(rounds, axis=0, return_inverse=True)
        return uniq, np.bincount(at.ravel(), minlength=len(uniq)).astype(np.int64)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rounds[first[order]], np.bincount(rank[at], minlength=len(order)).astype(np.int64)
