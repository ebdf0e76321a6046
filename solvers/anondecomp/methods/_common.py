"""Pieces the methods share: vertices to assignments, repair, faces (input checks: :mod:`anondecomp.validation`)."""

from __future__ import annotations

from dataclasses import dataclass

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
    order = graph.arm_order
    start = np.zeros(graph.n_arms + 1, dtype=np.int64)
    np.cumsum(graph.arm_degrees, out=start[1:])
    return graph.edge_users[order], start


def per_edge(graph: DemandGraph, values) -> np.ndarray:
    """``values`` per edge of ``graph``: given so ((E,)), or a dense (N, K) matrix read at the edges (a demand or
    a point is 0 off the support)."""
    v = np.asarray(values)
    return v[graph.edge_users, graph.edge_arms] if v.ndim == 2 else v


def arm_index(graph: DemandGraph) -> tuple[np.ndarray, np.ndarray]:
    """The edges sorted by arm (stable: row-major within an arm) and each arm's (K+1,) starts among them, for
    :func:`arm_edges`."""
    start = np.zeros(graph.n_arms + 1, dtype=np.int64)
    np.cumsum(graph.arm_degrees, out=start[1:])
    return graph.arm_order, start


def arm_edges(index: tuple[np.ndarray, np.ndarray], arms: np.ndarray) -> np.ndarray:
    """The edges whose arm is in ``arms``, in row-major order (increasing), from an :func:`arm_index`: time in
    their number, not in all the edges."""
    order, start = index
    arms = np.asarray(arms, dtype=np.int64)
    return np.sort(order[_slices(start[arms], start[arms + 1])])


def _slices(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The concatenated ranges lo[k]:hi[k]."""
    lengths = hi - lo
    if not lengths.sum():
        return np.empty(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    return np.repeat(lo - ends + lengths, lengths) + np.arange(ends[-1])


@dataclass(frozen=True)
class Face:
    """A face P_C(S) and the demand on it, held on the edges of its open arms.

    ``edges`` are the graph's edges whose arm is open (row-major order), ``required`` and ``x`` (the point,
    ``None`` when only the demand is known) their values. The dense model the vertex routes take,
    :meth:`dense`, has one row per user and one column per open arm: N x |S| cells.
    """

    arms: np.ndarray
    edges: np.ndarray
    required: np.ndarray
    x: np.ndarray | None = None

    @classmethod
    def of(cls, graph: DemandGraph, open_arms: np.ndarray, required, x=None) -> Face:
        """The face of the ``open_arms`` mask, ``required`` and ``x`` per edge or dense (N, K)."""
        edges = np.flatnonzero(open_arms[graph.edge_arms])
        return cls(
            np.flatnonzero(open_arms),
            edges,
            per_edge(graph, required)[edges].astype(np.int64),
            None if x is None else per_edge(graph, x)[edges].astype(np.float64),
        )

    def dense(self, graph: DemandGraph, values, dtype) -> np.ndarray:
        """(N, |S|) ``values`` (one per face edge, or a scalar) at the face's edges, 0 elsewhere."""
        out = np.zeros((graph.n_users, len(self.arms)), dtype=dtype)
        out[graph.edge_users[self.edges], np.searchsorted(self.arms, graph.edge_arms[self.edges])] = values
        return out


def face_point(
    graph: DemandGraph,
    users: np.ndarray,
    arms: np.ndarray,
    required: np.ndarray,
    x: np.ndarray,
    open_arms: np.ndarray,
    C: int,
) -> np.ndarray:
    """``x`` on a face's edges (``users``, ``arms``: those of its open arms, row-major) with a value added for
    every user with no demand on the face but open arms in its support: it pads groups there (it needs no
    sample). As many of them as possible go whole to the open arms whose columns fall short of C+1 (a maximum
    flow: user -> arm of its support -> the arm's shortfall); the others spread their time evenly over their
    open arms.

    Only users whose support is wider than their demand pad, so a graph whose support is its demand keeps
    ``x`` unchanged. Time and memory: the face's edges, and the arms.
    """
    busy = np.zeros(int(users.max(initial=-1)) + 1, dtype=bool)
    busy[users[required > 0]] = True
    may = ~busy[users]
    if not may.any():
        return x
    K = len(open_arms)
    mu, ma = users[may], arms[may]
    pad_users, ui, count = np.unique(mu, return_inverse=True, return_counts=True)
    pad = 1.0 / count[ui]
    cols = np.bincount(arms, weights=x, minlength=K)
    short = np.where(open_arms, np.ceil(np.maximum(C + 1 - cols, 0) - 1e-9), 0).astype(np.int64)
    if short.any():
        from scipy.sparse import csr_array
        from scipy.sparse.csgraph import maximum_flow

        n = len(pad_users)
        s, t = n + K, n + K + 1  # source, sink; users 0..n-1, arms n..n+K-1
        tail = np.concatenate([np.full(n, s), ui, n + np.arange(K)])
        head = np.concatenate([np.arange(n), n + ma, np.full(K, t)])
        cap = np.concatenate([np.ones(n + len(ui), np.int64), np.minimum(short, n)]).astype(np.int32)
        keep = cap > 0
        flow = maximum_flow(csr_array((cap[keep], (tail[keep], head[keep])), shape=(t + 1, t + 1)), s, t).flow
        sent = np.asarray(flow.tocsr()[ui, n + ma]).ravel() > 0
        routed = np.zeros(n, dtype=bool)
        routed[ui[sent]] = True
        pad = np.where(routed[ui], sent.astype(np.float64), pad)
    out = np.array(x, dtype=np.float64)
    out[may] = pad
    return out


def pad_point(graph: DemandGraph, required, x, open_arms: np.ndarray, C: int) -> np.ndarray:
    """:func:`face_point` over the whole graph: ``required`` and ``x`` per edge or dense (N, K), ``x`` positive
    on open arms only; returns ``x`` per edge, padded."""
    r, out = per_edge(graph, required), np.array(per_edge(graph, x), dtype=np.float64)
    on = np.flatnonzero(open_arms[graph.edge_arms])
    out[on] = face_point(graph, graph.edge_users[on], graph.edge_arms[on], r[on], out[on], open_arms, C)
    return out


def vertices_to_assignments(vertices: np.ndarray, graph: DemandGraph) -> np.ndarray:
    """Carathéodory vertices (-1 = user not on any arm) -> total assignments (idle users parked)."""
    return np.where(vertices >= 0, vertices, park(graph)[None, :]).astype(arm_dtype(graph.n_arms))


def greedy_assignments(graph: DemandGraph, arms: np.ndarray) -> np.ndarray:
    """For each arm j: every user who may play j is on j, the others parked (the M_j of Section 3.4.1)."""
    out = np.repeat(park(graph).astype(arm_dtype(graph.n_arms))[None, :], len(arms), axis=0)
    users, start = arm_users(graph)
    for r, j in enumerate(arms):
        out[r, users[start[j] : start[j + 1]]] = j
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


def decompose_face(
    prep: Prepared, face: Face, rng: np.random.Generator | None, vertices: str = "auto"
) -> tuple[np.ndarray, np.ndarray, str]:
    """Decompose the demand of ``face`` (:class:`Face`), whose normalised point ``face.x`` lies in P_C(S).

    Routes (``vertices``): ``"schedule"``, the phase schedule (deterministic, then a few randomised rotations;
    a thin slot is left to the final repair); ``"colouring"``, the exact integer route of
    :func:`colour_demand` (R = the face's length L, the lower bound on batched graphs); ``"caratheodory"``,
    the exact Carathéodory procedure with multiplicities ``ceil(lambda_k * scale)``, scale taking x up to the
    demand (up to one extra assignment per vertex); ``"auto"``: schedule, then colouring, then Carathéodory.
    Every route works on the face's dense model, N users x |S| arms (the caller bounds it); the users with no
    open arm sit parked. Returns assignments, multiplicities and the route taken.
    """
    check_vertices(vertices)
    graph = prep.graph
    if not len(face.arms):  # nothing open: no assignment, as a schedule of length 0
        return np.empty((0, graph.n_users), dtype=arm_dtype(graph.n_arms)), np.empty(0, np.int64), "schedule"
    if vertices in ("auto", "schedule"):
        # one column more, without demand, for the users with no open arm, parked outside the face: no
        # scheduled user sits there, so it never makes a slot thin
        required = np.zeros((graph.n_users, len(face.arms) + 1), dtype=np.int64)
        required[:, :-1] = face.dense(graph, face.required, np.int64)
        parking = np.zeros(required.shape, dtype=bool)
        parking[:, :-1] = face.dense(graph, True, bool)
        parking[:, -1] = ~parking[:, :-1].any(axis=1)
        for attempt in range(SCHEDULE_RETRIES + 1):
            sched = phase_schedule(
                required, parking, prep.C, rng=None if attempt == 0 else (rng or np.random.default_rng(attempt))
            )
            if sched.valid or vertices == "schedule":
                return _global(graph, sched.assignments, face.arms), sched.multiplicities, "schedule"
        del required, parking
    x = face.x
    if x is None:  # a face of the demand alone (Face.of without x): only the schedule route needs no point
        raise TypeError("decompose_face needs the face's point x for its colouring and Carathéodory routes")
    pos = x > 0
    if vertices in ("auto", "colouring"):
        wanted = face.required > 0
        hi = int(np.ceil((face.required[wanted] / x[wanted]).max() - 1e-9)) if wanted.any() else 0
        filled = _fill(prep, face, hi)
        if filled is not None:
            return *colour_filled(prep, filled), "colouring"
    res = caratheodory(face.dense(graph, x, np.float64), prep.C, np.ones(len(face.arms), dtype=bool))
    scale = float((face.required[pos] / x[pos]).max()) if pos.any() else 0.0
    mult = np.ceil(res.weights * scale - 1e-9).astype(np.int64)
    keep = mult > 0
    local = res.vertices[keep]
    a, m = compress(
        vertices_to_assignments(np.where(local >= 0, face.arms[np.maximum(local, 0)], -1), graph), mult[keep]
    )
    return a, m, "caratheodory"


def _global(graph: DemandGraph, local: np.ndarray, arms: np.ndarray) -> np.ndarray:
    """Assignments over a face's columns (column len(arms): parked outside the face) as arm indices."""
    table = np.append(arms, -1).astype(arm_dtype(graph.n_arms))
    out = table[local]
    outside = local == len(arms)
    if outside.any():
        out = np.where(outside, park(graph).astype(out.dtype)[None, :], out)
    return out


def colour_demand(
    prep: Prepared, required, open_arms: np.ndarray, hi: int | None = None
) -> tuple[np.ndarray, np.ndarray] | None:
    """Exactly L assignments covering integer demand ``required`` on the face P_C(open_arms), or ``None``.

    Find the smallest L (from the face's lower bound max_i sum_j r_ij up) with an integer H >= required on the
    support, rows <= L and every open arm's column >= (C+1) L: a bounded flow, integral because the constraint
    matrix is totally unimodular. H lies in L * P_C(S), and :func:`~anondecomp.realize.colour_face` cuts it
    into L assignments in each of which every open arm holds >= C+1 users (equitable edge colouring).

    L is searched up to ``hi`` (default: four times the lower bound). When the demand's normalised point x is
    in P_C(S), ``hi`` = max ceil(r_ij / x_ij) always works (hi * x is a point of hi * P_C(S) above the demand,
    so the flow polytope has an integral point); on a batched graph that is the lower bound itself.
    ``None`` when no L up to ``hi`` is feasible. ``required`` is per edge or dense (N, K). The two steps are
    :func:`fill_face` and :func:`colour_filled`.
    """
    filled = fill_face(prep, required, open_arms, hi)
    return None if filled is None else colour_filled(prep, filled)


def fill_face(
    prep: Prepared, required, open_arms: np.ndarray, hi: int | None = None
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray] | None:
    """The first step of :func:`colour_demand`: the shortest length L and its filled demand H, as
    ``(L, H, users, arms)`` (H's rows are ``users``, its columns ``arms``), or ``None``.

    Its L is the number of assignments :func:`colour_filled` makes of it, so a caller comparing candidates
    colours only the one it keeps: the colouring costs one maximum flow per distinct assignment, the length a
    few flows. ``required`` is per edge or dense (N, K); only its open arms count.
    """
    return _fill(prep, Face.of(prep.graph, open_arms, required), hi)


def _fill(prep: Prepared, face: Face, hi: int | None) -> tuple[int, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`fill_face` of a :class:`Face`: its model is the users with an open arm x the open arms."""
    C, graph = prep.C, prep.graph
    fu = graph.edge_users[face.edges]
    users = np.unique(fu)
    arms = face.arms
    ui = np.searchsorted(users, fu)
    aj = np.searchsorted(arms, graph.edge_arms[face.edges])
    r = np.zeros((len(users), len(arms)), dtype=np.int64)
    r[ui, aj] = face.required
    rows, cols = r.sum(axis=1), r.sum(axis=0)
    lo = int(rows.max()) if len(rows) else 0
    hi = max(lo, 4 * lo if hi is None else hi)

    def solve(L: int) -> np.ndarray | None:
        flow = transport(
            len(users),
            len(arms),
            ui,
            aj,
            L - r[ui, aj],
            np.zeros(len(users), np.int64),
            L - rows,
            np.maximum((C + 1) * L - cols, 0),
            np.full(len(arms), len(users) * L),
        )
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


def colour_filled(
    prep: Prepared, filled: tuple[int, np.ndarray, np.ndarray, np.ndarray]
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
