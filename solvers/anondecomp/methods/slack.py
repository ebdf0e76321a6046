"""Least-slack rounds: a round-by-round schedule aimed at the lower bound, for general (weighted) graphs.

Beyond paper 000. A decomposition of length T = max_i sum_j ceil(w_ij) must give the busiest user an
informative sample in every round, and a user with demand d_i and T - t rounds left has slack
T - t - d_i rounds in which it may idle. Every step builds one assignment that serves the users with the
least slack first, then repeats it while it stays useful:

1. **Prices.** A user's remaining pairs are worth p_i = d_i / (rounds left), its share of the remaining
   rounds it must spend informative (1 for a user with no slack); pairs already served are worth 0 (the user
   may still pad its arm), pairs of arms the user does not want are not allowed.
2. **Open arms** (a fast heuristic for the pricing problem of :mod:`anondecomp.lower_bound`: the vertex of
   P_C of most value). Every user goes to its most valuable open arm; users with nothing to gain there fill
   the arms short of C+1 users; an arm still short is closed, the weakest (value per missing user) first,
   and its users move on, until every open arm holds C+1 users.
3. **Repeat** the assignment for k rounds: k is the smallest remaining demand it serves, at most a share
   (:data:`CHUNK_SHARE`) of the rounds left, so the prices are renewed before they drift.

When the steps outrun T, the rounds left become the largest remaining demand (T is stretched, never
missed). A step that would serve nothing opens the arm with the most remaining demand to all its users
(the paper's greedy assignment M_j), so the schedule always ends with every pair served.

On logs (the ``real`` family of the solver benchmark) it meets or nears the lower bound where block
decompositions need 10-100 % more rounds; ``auto`` tries it on graphs that are not batched.
"""

from __future__ import annotations

import time
from typing import Protocol

import numpy as np

from anondecomp.graph import DemandGraph
from anondecomp.methods._common import park, repair
from anondecomp.result import Decomposition, arm_dtype, compress
from anondecomp.validation import Prepared, prepare

CHUNK_SHARE = 0.05  # an assignment is repeated for at most this share of the rounds left
CLOSE_SHARE = 0.5  # share of the arms still short of C+1 users closed per pass (the weakest first)
TIE_BREAK = 1e-3  # scale of the preference for arms few users can fill (breaks ties between equal prices)


class Segments(Protocol):
    """Edges sorted by user with per-user segments: what :func:`segment_best` reads."""

    @property
    def user(self) -> np.ndarray: ...  # (E,) the user of every edge, sorted
    @property
    def start(self) -> np.ndarray: ...  # (N,) the first edge of every user
    @property
    def has(self) -> np.ndarray: ...  # (N,) bool, whether the user has an edge
    @property
    def N(self) -> int: ...


class ArmEdges(Segments, Protocol):
    """What :func:`open_arms` reads: :class:`Edges`, or the type-level edges of
    :class:`~anondecomp.lower_bound.GreedyPricer`."""

    @property
    def arm(self) -> np.ndarray: ...  # (E,) the arm of every edge
    @property
    def degree(self) -> np.ndarray: ...  # (K,) the users who may play each arm
    @property
    def K(self) -> int: ...


def segment_best(edges: Segments, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per user: (best value, its edge index) of ``value`` (one per edge); users without edges get -inf."""
    top = np.full(edges.N, -np.inf)
    top[edges.has] = np.maximum.reduceat(value, edges.start[edges.has])
    hit = np.where(value >= top[edges.user], np.arange(len(value)), len(value))
    first = np.full(edges.N, len(value))
    first[edges.has] = np.minimum.reduceat(hit, edges.start[edges.has])
    return top, first


class Edges:
    """The (user, arm) pairs a user may play, sorted by user, with per-user segment starts."""

    def __init__(self, graph: DemandGraph):
        self.user, self.arm = graph.edge_users.astype(np.int64), graph.edge_arms.astype(np.int64)
        self.N, self.K = graph.n_users, graph.n_arms
        self.start = np.searchsorted(self.user, np.arange(self.N))
        self.has = np.bincount(self.user, minlength=self.N) > 0
        self.degree = graph.arm_degrees  # |B_j|: users who may play arm j

    def best(self, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per user: (best value, its edge index) of ``value`` (one per edge); users without edges get -inf."""
        return segment_best(self, value)


class _Part:
    """The edges ``idx`` of ``edges`` (still sorted by user) with their own per-user segments: the passes of
    :func:`open_arms` scan only the edges of open (or short) arms, which shrink fast as arms close."""

    def __init__(self, edges: ArmEdges, idx: np.ndarray):
        self.user = edges.user[idx]
        self.N = edges.N
        self.start = np.searchsorted(self.user, np.arange(self.N))
        self.has = np.bincount(self.user, minlength=self.N) > 0

    def best(self, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`Edges.best` over these edges (users without one get -inf)."""
        if not len(value):
            return np.full(self.N, -np.inf), np.zeros(self.N, dtype=np.int64)
        return segment_best(self, value)


def open_arms(edges: ArmEdges, value: np.ndarray, C: int) -> np.ndarray:
    """An assignment (arm per user, -1 for none) in which every used arm holds >= C+1 users, of high total
    ``value`` (one per edge, >= 0; 0 = the user may pad the arm): step 2 of the module docstring."""
    K = edges.K
    is_open = edges.degree >= C + 1
    while True:
        live = np.flatnonzero(is_open[edges.arm])  # a closed arm's edges can never win
        top, first = _Part(edges, live).best(value[live])
        gains = top > 0
        pick = live[np.minimum(first, len(live) - 1)] if len(live) else np.zeros(edges.N, dtype=np.int64)
        arm = np.where(gains, edges.arm[pick], -1)
        count = np.bincount(arm[gains], minlength=K)
        worth = np.bincount(arm[gains], weights=top[gains], minlength=K)
        is_open &= count > 0
        short = np.where(is_open, np.maximum(C + 1 - count, 0), 0)
        # users with nothing to gain pad the short arms, the most valuable arm per missing user first; an arm
        # takes padding only if that fills it (a partial fill would waste users another arm could use)
        free = ~gains & (top == 0)
        while free.any() and short.any():
            pad = live[free[edges.user[live]] & (short[edges.arm[live]] > 0)]
            if not len(pad):
                break
            pa = edges.arm[pad]
            ptop, pfirst = _Part(edges, pad).best(worth[pa] / np.maximum(short[pa], 1))
            chosen = np.flatnonzero(ptop >= 0)
            parm = pa[pfirst[chosen]]
            fills = np.bincount(parm, minlength=K) >= short
            keep = fills[parm]
            chosen, parm = chosen[keep], parm[keep]
            order = np.argsort(parm, kind="stable")
            chosen, parm = chosen[order], parm[order]
            seat = np.arange(len(parm)) - np.searchsorted(parm, parm)  # place in the arm's queue
            take = seat < short[parm]
            if not take.any():
                break
            arm[chosen[take]] = parm[take]
            free[chosen[take]] = False
            short[np.unique(parm[take])] = 0
        if not short.any():
            return arm
        weak = np.flatnonzero(short > 0)
        weak = weak[np.argsort(worth[weak] / short[weak], kind="stable")]
        is_open[weak[: max(1, int(CLOSE_SHARE * len(weak)))]] = False


def slack_rounds(prep: Prepared, deadline: float | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """(assignments (R', N), multiplicities (R',), steps) of the least-slack schedule of ``prep``'s demand;
    past ``deadline`` (a :func:`time.perf_counter` value) no step starts and the demand left is not served."""
    graph, C = prep.graph, prep.C
    edges = Edges(graph)
    left_demand = prep.edge_required.copy()
    scarce = TIE_BREAK / np.maximum(edges.degree, 1)[edges.arm]
    base = park(graph)
    target = prep.lower_bound
    t, rows, mults = 0, [], []
    while left_demand.any() and (deadline is None or time.perf_counter() < deadline):
        need = np.bincount(edges.user, weights=left_demand, minlength=graph.n_users)
        left = max(target - t, int(need.max()))
        value = np.where(left_demand > 0, need[edges.user] / left + scarce, 0.0)
        arm = open_arms(edges, value, C)
        on = np.flatnonzero(arm[edges.user] == edges.arm)
        served = on[left_demand[on] > 0]
        if not len(served):  # nothing to serve: the arm with the most demand left, with all its users
            j = int(np.argmax(np.bincount(edges.arm, weights=left_demand, minlength=graph.n_arms)))
            arm = np.full(graph.n_users, -1, dtype=np.int64)
            arm[edges.user[edges.arm == j]] = j
            served = np.flatnonzero((edges.arm == j) & (left_demand > 0))
        k = max(1, min(int(left_demand[served].min()), int(CHUNK_SHARE * left)))
        left_demand[served] -= np.minimum(k, left_demand[served])
        rows.append(np.where(arm >= 0, arm, base))
        mults.append(k)
        t += k
    if not rows:
        return np.empty((0, graph.n_users), arm_dtype(graph.n_arms)), np.empty(0, np.int64), 0
    a, m = compress(np.array(rows, dtype=arm_dtype(graph.n_arms)), np.array(mults, dtype=np.int64))
    return a, m, len(rows)


def slack_decomposition(
    graph: DemandGraph, C: int, *, best_effort: bool = False, deadline: float | None = None
) -> Decomposition:
    """Least-slack rounds (module docstring): a schedule aimed at the lower bound max_i sum_j ceil(w_ij).

    Parameters
    ----------
    graph : DemandGraph
        The demand graph.
    C : int
        Anonymity parameter: an arm is informative with at least C+1 users on it.
    best_effort : bool
        Cover what can be covered when some arm is wanted by at most C users (listed in ``uncovered``).
    deadline : float, optional
        A :func:`time.perf_counter` value (``auto``'s time limit): no step starts after it, and the demand
        left then is served by greedy assignments (the repair), so the result is valid but longer.

    Returns
    -------
    Decomposition
        Method ``"slack"``; ``info["steps"]`` counts the assignments built (before identical ones merge).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems*, NeurIPS 2022 (Section 3.2:
    decompositions and the lower bound max_i sum_j w_ij).

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([[2, 1], [1, 2], [2, 1], [1, 2]], float)  # four users, two arms, C = 1
    >>> d = slack_decomposition(DemandGraph.from_weights(w), C=1)
    >>> d.total_assignments, d.lower_bound
    (3, 3)
    """
    start = time.perf_counter()
    prep = prepare(graph, C, best_effort)
    a, m, steps = slack_rounds(prep, deadline)
    a, m, repaired = repair(prep, a, m)
    info = {"steps": steps, "repaired": repaired}
    if deadline is not None and repaired and time.perf_counter() >= deadline:
        info["time_limit_reached"] = True
    return Decomposition(
        graph, prep.C, "slack", a, m, uncovered=prep.uncovered, wall_time=time.perf_counter() - start, info=info
    )
