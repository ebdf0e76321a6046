"""Pieces the methods share: vertices to assignments, repair, faces (input checks: :mod:`anondecomp.validation`)."""

from __future__ import annotations

import numpy as np

from anondecomp.caratheodory import caratheodory
from anondecomp.flows import transport
from anondecomp.graph import DemandGraph
from anondecomp.result import arm_dtype, compress
from anondecomp.schedule import phase_schedule
from anondecomp.validation import Prepared, check_vertices
from anondecomp.verify import edge_coverage

SCHEDULE_RETRIES = 3


def park(graph: DemandGraph) -> np.ndarray:
    """The arm a user sits on when an assignment has nothing for it: its first support arm."""
    return graph.edge_arms[graph.indptr[:-1]].astype(np.int64)


def arm_users(graph: DemandGraph) -> tuple[np.ndarray, np.ndarray]:
    """The users of every arm: (users sorted by arm, then user; (K+1,) starts), so that arm j's users are
    ``users[start[j]:start[j + 1]]``."""
    order = np.argsort(graph.edge_arms, kind="stable")
    start = np.zeros(graph.n_arms + 1, dtype=np.int64)
    np.cumsum(graph.arm_degrees, out=start[1:])
    return graph.edge_users[order], start


def pad_point(graph: DemandGraph, required: np.ndarray, x: np.ndarray, open_arms: np.ndarray, C: int
              ) -> np.ndarray:
    """``x`` with a row added for every user with no demand on ``open_arms`` that may play some of them: it
    pads groups there (it needs no sample). As many of them as possible go whole to the open arms whose
    columns of ``x`` fall short of C+1 (a maximum flow: user -> arm of its support -> the arm's shortfall);
    the others spread their time evenly over their open arms.

    Only users whose support is wider than their demand get such a row, so a graph whose support is its
    demand keeps ``x`` unchanged.
    """
    idle = ~((required > 0) & open_arms[None, :]).any(axis=1)
    may = graph.support & open_arms[None, :] & idle[:, None]
    users = np.flatnonzero(may.any(axis=1))
    if not len(users):
        return x
    K = graph.n_arms
    short = np.where(open_arms, np.ceil(np.maximum(C + 1 - x.sum(axis=0), 0) - 1e-9), 0).astype(np.int64)
    pad = may[users] / may[users].sum(axis=1, keepdims=True)
    if short.any():
        from scipy.sparse import csr_array
        from scipy.sparse.csgraph import maximum_flow

        n = len(users)
        ui, aj = np.nonzero(may[users])
        s, t = n + K, n + K + 1        # source, sink; users 0..n-1, arms n..n+K-1
        tail = np.concatenate([np.full(n, s), ui, n + np.arange(K)])
        head = np.concatenate([np.arange(n), n + aj, np.full(K, t)])
        cap = np.concatenate([np.ones(n + len(ui), np.int64), np.minimum(short, n)]).astype(np.int32)
        keep = cap > 0
        flow = maximum_flow(csr_array((cap[keep], (tail[keep], head[keep])), shape=(t + 1, t + 1)), s, t).flow
        sent = np.asarray(flow.tocsr()[ui, n + aj]).ravel() > 0
        routed = np.zeros((n, K))
        routed[ui[sent], aj[sent]] = 1.0
        pad = np.where(routed.any(axis=1)[:, None], routed, pad)
    out = x.copy()
    out[users] = pad
    return out


def face_parking(graph: DemandGraph, open_arms: np.ndarray) -> np.ndarray:
    """The support to park from in a face: a user's open arms when it may play any (it then pads a group),
    else its whole support."""
    inside = graph.support & open_arms[None, :]
    return np.where(inside.any(axis=1)[:, None], inside, graph.support)


def vertices_to_assignments(vertices: np.ndarray, graph: DemandGraph) -> np.ndarray:
    """Carathéodory vertices (-1 = user not on any arm) -> total assignments (idle users parked)."""
    return np.where(vertices >= 0, vertices, park(graph)[None, :]).astype(arm_dtype(graph.n_arms))


def greedy_assignments(graph: DemandGraph, arms: np.ndarray) -> np.ndarray:
    """For each arm j: every user who may play j is on j, the others parked (spec 4.1's M_j)."""
    out = np.repeat(park(graph).astype(arm_dtype(graph.n_arms))[None, :], len(arms), axis=0)
    users, start = arm_users(graph)
    for r, j in enumerate(arms):
        out[r, users[start[j]:start[j + 1]]] = j
    return out


def repair(prep: Prepared, assignments: np.ndarray, mult: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Add greedy assignments for any pair left short (floating-point rounding in Carathéodory weights).

    Returns the compressed decomposition and the number of assignments the repair added.
    """
    graph = prep.graph
    got, _ = edge_coverage(graph, assignments, mult, prep.C)
    short = np.maximum(prep.edge_required - got, 0)
    if not short.any():
        return assignments, mult, 0
    most = np.zeros(graph.n_arms, dtype=np.int64)
    np.maximum.at(most, graph.edge_arms, short)
    arms = np.flatnonzero(most > 0)
    extra_m = most[arms]
    assignments = np.concatenate([assignments, greedy_assignments(graph, arms)])
    mult = np.concatenate([mult, extra_m])
    return assignments, mult, int(extra_m.sum())


def decompose_face(prep: Prepared, required: np.ndarray, x: np.ndarray, open_arms: np.ndarray,
                   rng: np.random.Generator | None, vertices: str = "auto") -> tuple[np.ndarray, np.ndarray, str]:
    """Decompose demand ``required`` whose normalised point ``x`` lies in P_C(open_arms).

    Routes (``vertices``): ``"schedule"``, the phase schedule (deterministic, then a few randomised rotations;
    a thin slot is left to the final repair); ``"colouring"``, the exact integer route of
    :func:`colour_demand` (R = the face's length L, the lower bound on batched graphs); ``"caratheodory"``,
    the exact Carathéodory procedure with multiplicities ``ceil(lambda_k * scale)``, scale taking x up to the
    demand (up to one extra assignment per vertex); ``"auto"``: schedule, then colouring, then Carathéodory.
    Returns assignments, multiplicities and the route taken.
    """
    check_vertices(vertices)
    if vertices in ("auto", "schedule"):
        for attempt in range(SCHEDULE_RETRIES + 1):
            sched = phase_schedule(required, face_parking(prep.graph, open_arms), prep.C,
                                   rng=None if attempt == 0 else (rng or np.random.default_rng(attempt)))
            if sched.valid or vertices == "schedule":
                return sched.assignments, sched.multiplicities, "schedule"
    if vertices in ("auto", "colouring"):
        pos = (required > 0) & open_arms[None, :]
        hi = int(np.ceil((required[pos] / x[pos]).max() - 1e-9)) if pos.any() else 0
        found = colour_demand(prep, required, open_arms, hi)
        if found is not None:
            return *found, "colouring"
    res = caratheodory(x, prep.C, open_arms)
    pos = x > 0
    scale = float((required[pos] / x[pos]).max()) if pos.any() else 0.0
    mult = np.ceil(res.weights * scale - 1e-9).astype(np.int64)
    keep = mult > 0
    a, m = compress(vertices_to_assignments(res.vertices[keep], prep.graph), mult[keep])
    return a, m, "caratheodory"


def colour_demand(prep: Prepared, required: np.ndarray, open_arms: np.ndarray, hi: int | None = None
                  ) -> tuple[np.ndarray, np.ndarray] | None:
    """Exactly L assignments covering integer demand ``required`` on the face P_C(open_arms), or ``None``.

    Find the smallest L (from the face's lower bound max_i sum_j r_ij up) with an integer H >= required on the
    support, rows <= L and every open arm's column >= (C+1) L: a bounded flow, integral because the constraint
    matrix is totally unimodular. H lies in L * P_C(S), and :func:`~anondecomp.realize.colour_face` cuts it
    into L assignments in each of which every open arm holds >= C+1 users (equitable edge colouring).

    L is searched up to ``hi`` (default: four times the lower bound). When the demand's normalised point x is
    in P_C(S), ``hi`` = max ceil(r_ij / x_ij) always works (hi * x is a point of hi * P_C(S) above the demand,
    so the flow polytope has an integral point); on a batched graph that is the lower bound itself.
    ``None`` when no L up to ``hi`` is feasible. The two steps are :func:`fill_face` and :func:`colour_filled`.
    """
    filled = fill_face(prep, required, open_arms, hi)
    return None if filled is None else colour_filled(prep, filled)


def fill_face(prep: Prepared, required: np.ndarray, open_arms: np.ndarray, hi: int | None = None
              ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray] | None:
    """The first step of :func:`colour_demand`: the shortest length L and its filled demand H, as
    ``(L, H, users, arms)`` (H's rows are ``users``, its columns ``arms``), or ``None``.

    Its L is the number of assignments :func:`colour_filled` makes of it, so a caller comparing candidates
    colours only the one it keeps: the colouring costs one maximum flow per distinct assignment, the length a
    few flows.
    """
    C = prep.C
    req = np.where(open_arms[None, :], np.asarray(required, np.int64), 0)
    allowed = prep.graph.support & open_arms[None, :]
    users = np.flatnonzero(allowed.any(axis=1))
    arms = np.flatnonzero(open_arms)
    ui, aj = np.nonzero(allowed[users][:, arms])
    r = req[users][:, arms]
    rows, cols = r.sum(axis=1), r.sum(axis=0)
    lo = int(rows.max()) if len(rows) else 0
    hi = max(lo, 4 * lo if hi is None else hi)

    def solve(L: int) -> np.ndarray | None:
        flow = transport(len(users), len(arms), ui, aj, L - r[ui, aj], np.zeros(len(users), np.int64), L - rows,
                         np.maximum((C + 1) * L - cols, 0), np.full(len(arms), len(users) * L))
        if flow is None:
            return None
        H = r.copy()
        H[ui, aj] += flow
        return H

    best = solve(lo)
    L = lo
    if best is None:  # bisection on (lo, hi]; should feasibility not grow with L, a larger L still works
        best, L = solve(hi), hi
        if best is None:
            return None
        left = lo
        while L - left > 1:
            mid = (left + L) // 2
            H = solve(mid)
            if H is None:
                left = mid
            else:
                best, L = H, mid
    return L, best, users, arms


def colour_filled(prep: Prepared, filled: tuple[int, np.ndarray, np.ndarray, np.ndarray]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The second step of :func:`colour_demand`: a :func:`fill_face` result cut into exactly L assignments
    (compressed)."""
    from anondecomp.realize import colour_assignments

    L, best, users, arms = filled
    busy = best.sum(axis=1) > 0
    a, m = colour_assignments(best[busy], L, prep.C, users[busy], arms, park(prep.graph))
    if not a:
        return np.empty((0, prep.graph.n_users), dtype=arm_dtype(prep.graph.n_arms)), np.empty(0, np.int64)
    return compress(np.array(a, dtype=arm_dtype(prep.graph.n_arms)), np.array(m, dtype=np.int64))
