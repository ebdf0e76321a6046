"""Integral bipartite flows with bounds (:func:`transport`), by max-flow with lower bounds
(scipy.sparse.csgraph), and assignments of users to arms with per-arm bounds built on them.

The constraint matrix of P_C(S) is a bipartite incidence matrix, hence totally unimodular (the standard fact behind
Lemma 4, Section 3.4.2): every feasible bounded flow problem below has an integral solution, which is a vertex of
the polytope.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import maximum_flow

from anondecomp.highs import load_model, new_highs

_INT32_MAX = np.iinfo(np.int32).max


def bounded_assignment(
    allowed: np.ndarray, user_lo: np.ndarray, col_lo: np.ndarray, col_hi: np.ndarray
) -> np.ndarray | None:
    """An integral assignment of users to arms meeting per-user and per-arm bounds, or ``None``.

    Parameters
    ----------
    allowed : (N, K) bool, pairs a user may take.
    user_lo : (N,) 0 or 1; 1 means the user must be assigned, 0 that it may stay unassigned.
    col_lo, col_hi : (K,) integer bounds on the number of users per arm.

    Returns
    -------
    (N,) int array of arm indices, -1 for unassigned users; ``None`` when infeasible.
    """
    N, K = allowed.shape
    ui, aj = np.nonzero(allowed)
    flow = transport(N, K, ui, aj, np.ones(len(ui), np.int64), user_lo, np.ones(N, np.int64), col_lo, col_hi)
    if flow is None:
        return None
    out = np.full(N, -1, dtype=np.int64)
    got = flow > 0
    out[ui[got]] = aj[got]
    return out


def transport(
    n_rows: int,
    n_cols: int,
    er: np.ndarray,
    ec: np.ndarray,
    cap: np.ndarray,
    row_lo: np.ndarray,
    row_hi: np.ndarray,
    col_lo: np.ndarray,
    col_hi: np.ndarray,
) -> np.ndarray | None:
    """An integral bipartite flow with bounds, or ``None`` when none exists.

    Edge e goes from row ``er[e]`` to column ``ec[e]`` and carries 0..``cap[e]``; row r sends between
    ``row_lo[r]`` and ``row_hi[r]`` in total; column c receives between ``col_lo[c]`` and ``col_hi[c]``.
    Edges must be distinct (row, column) pairs. Returns the flow on every edge.
    """
    row_lo, row_hi = np.asarray(row_lo, np.int64), np.asarray(row_hi, np.int64)
    col_lo, col_hi = np.asarray(col_lo, np.int64), np.asarray(col_hi, np.int64)
    cap = np.asarray(cap, np.int64)
    if (row_lo > row_hi).any() or (col_lo > col_hi).any() or (cap < 0).any():
        return None
    if len(er) == 0:
        return np.zeros(0, np.int64) if not row_lo.any() and not col_lo.any() else None
    big = int(min(row_hi.sum(), col_hi.sum()))
    if max(big, int(cap.max())) >= _INT32_MAX // 4:
        return _transport_lp(n_rows, n_cols, er, ec, cap, row_lo, row_hi, col_lo, col_hi)
    s, t, r0, c0 = 0, 1, 2, 2 + n_rows
    ss, tt = c0 + n_cols, c0 + n_cols + 1
    tail = np.concatenate([np.full(n_rows, s), r0 + er, c0 + np.arange(n_cols), [t]])
    head = np.concatenate([r0 + np.arange(n_rows), c0 + ec, np.full(n_cols, t), [s]])
    low = np.concatenate([row_lo, np.zeros(len(er), np.int64), col_lo, [0]])
    high = np.concatenate([row_hi, cap, col_hi, [big]])
    excess = (
        np.bincount(head, weights=low, minlength=tt + 1) - np.bincount(tail, weights=low, minlength=tt + 1)
    ).astype(np.int64)
    pos, neg = np.flatnonzero(excess > 0), np.flatnonzero(excess < 0)
    tail = np.concatenate([tail, np.full(len(pos), ss), neg])
    head = np.concatenate([head, pos, np.full(len(neg), tt)])
    width = np.concatenate([high - low, excess[pos], -excess[neg]])
    keep = width > 0
    flow = _max_flow(tt + 1, tail[keep], head[keep], width[keep], ss, tt, excess[pos].sum())
    if flow is None:
        return None
    # the flow on each row -> column edge (edges of zero capacity carry none)
    on = keep[n_rows : n_rows + len(er)]
    out = np.zeros(len(er), np.int64)
    out[on] = flow[np.cumsum(keep)[n_rows : n_rows + len(er)][on] - 1]  # each edge's place among the kept ones
    return out


def _max_flow(
    n_nodes: int, tail: np.ndarray, head: np.ndarray, width: np.ndarray, source: int, sink: int, need: int
) -> np.ndarray | None:
    """The flow on each edge of a maximum ``source`` -> ``sink`` flow (scipy's Dinic), or ``None`` when it is
    below ``need``. Edges are distinct (tail, head) pairs with positive integer widths.

    The CSR graph is built sorted by hand and the flow read back by position: scipy's generic sparse
    constructors and fancy indexing cost ten times the flow itself on the small graphs of the realisation,
    which runs thousands of them.
    """
    # deferred: csgraph is slow to import, and the fast paths of the methods never need a flow
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import maximum_flow

    key = tail.astype(np.int64) * n_nodes + head
    order = np.argsort(key, kind="stable")
    indptr = np.zeros(n_nodes + 1, dtype=np.int32)
    np.cumsum(np.bincount(tail, minlength=n_nodes), out=indptr[1:])
    graph = csr_array((width[order].astype(np.int32), head[order].astype(np.int32), indptr), shape=(n_nodes, n_nodes))
    result = maximum_flow(graph, source, sink)
    if result.flow_value < need:
        return None
    flow = result.flow
    got = np.repeat(np.arange(n_nodes, dtype=np.int64), np.diff(flow.indptr)) * n_nodes + flow.indices
    if (np.diff(got) < 0).any():  # scipy keeps rows sorted; sort should a version not
        perm = np.argsort(got, kind="stable")
        got, data = got[perm], np.asarray(flow.data)[perm]
    else:
        data = np.asarray(flow.data)
    return data[np.searchsorted(got, key)].astype(np.int64)


def _transport_lp(n_rows, n_cols, er, ec, cap, row_lo, row_hi, col_lo, col_hi) -> np.ndarray | None:
    """:func:`transport` for capacities beyond int32, as a HiGHS LP (totally unimodular: vertices integral)."""
    import highspy
    import scipy.sparse as sp

    n = len(er)
    A = sp.csc_matrix(
        (np.ones(2 * n), (np.concatenate([er, n_rows + ec]), np.tile(np.arange(n), 2))), shape=(n_rows + n_cols, n)
    )
    h = new_highs()
    h.setOptionValue("solver", "simplex")
    load_model(h, A, np.zeros(n), np.zeros(n), cap, np.concatenate([row_lo, col_lo]), np.concatenate([row_hi, col_hi]))
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    return np.round(np.asarray(h.getSolution().col_value)).astype(np.int64)


def seat_flow(graph, users: np.ndarray, room: np.ndarray) -> np.ndarray | None:
    """An arm of its support (``graph``, a DemandGraph) for each of ``users`` with at most ``room[j]`` of them
    on arm j, by a maximum flow (scipy.sparse.csgraph); ``None`` when they do not all fit."""
    n, K = len(users), graph.n_arms
    deg = graph.indptr[users + 1] - graph.indptr[users]
    arms = graph.edge_arms[ranges(graph.indptr[users], deg)].astype(np.int64)
    who = np.repeat(np.arange(n), deg)
    # nodes: 0 source, 1..n users, n+1..n+K arms, n+K+1 sink
    src = np.r_[np.zeros(n, np.int64), 1 + who, n + 1 + np.arange(K)]
    dst = np.r_[1 + np.arange(n), n + 1 + arms, np.full(K, n + K + 1)]
    cap = np.r_[np.ones(n + len(who), np.int64), np.clip(room, 0, n)].astype(np.int32)
    size = n + K + 2
    net = csr_array((cap, (src, dst)), shape=(size, size))
    net.sum_duplicates()
    flow = maximum_flow(net, 0, size - 1)
    if flow.flow_value < n:
        return None
    f = flow.flow.tocsr()
    out = np.empty(n, dtype=np.int64)
    sub = f[1 : n + 1, n + 1 : n + K + 1].tocoo()
    pos = sub.data > 0
    out[sub.row[pos]] = sub.col[pos]
    return out


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenated index ranges ``starts[k] : starts[k] + lengths[k]`` (users' edges, from ``indptr``)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(np.asarray(starts, dtype=np.int64) - offsets, lengths) + np.arange(int(lengths.sum()))
