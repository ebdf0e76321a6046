"""Integral assignments with per-arm bounds, by max-flow with lower bounds (scipy.sparse.csgraph).

The constraint matrix of P_C(S) is a bipartite incidence matrix, hence totally unimodular (spec 4.2): every
feasible bounded flow problem below has an integral solution, which is a vertex of the polytope.
"""

from __future__ import annotations

import numpy as np


def bounded_assignment(allowed: np.ndarray, user_lo: np.ndarray, col_lo: np.ndarray,
                       col_hi: np.ndarray) -> np.ndarray | None:
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
    # deferred: only the exact Carathéodory route needs flows, and csgraph is slow to import
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    N, K = allowed.shape
    s, t, users, arms = 0, 1, 2, 2 + N
    ss, tt = 2 + N + K, 3 + N + K
    ui, aj = np.nonzero(allowed)
    # edges (tail, head, lower, capacity)
    tails = [np.full(N, s), users + ui, arms + np.arange(K), [t]]
    heads = [users + np.arange(N), arms + aj, np.full(K, t), [s]]
    lows = [user_lo, np.zeros(len(ui)), col_lo, [0]]
    caps = [np.ones(N), np.ones(len(ui)), col_hi, [N]]
    tail = np.concatenate(tails).astype(np.int64)
    head = np.concatenate(heads).astype(np.int64)
    low = np.concatenate(lows).astype(np.int64)
    cap = np.concatenate(caps).astype(np.int64)
    if (low > cap).any():
        return None
    excess = np.bincount(head, weights=low, minlength=tt + 1) - np.bincount(tail, weights=low, minlength=tt + 1)
    excess = excess.astype(np.int64)
    pos, neg = np.flatnonzero(excess > 0), np.flatnonzero(excess < 0)
    tail = np.concatenate([tail, np.full(len(pos), ss), neg])
    head = np.concatenate([head, pos, np.full(len(neg), tt)])
    cap = np.concatenate([cap - low, excess[pos], -excess[neg]])
    keep = cap > 0
    graph = csr_matrix((cap[keep].astype(np.int32), (tail[keep], head[keep])), shape=(tt + 1, tt + 1))
    result = maximum_flow(graph, ss, tt)
    if result.flow_value < excess[pos].sum():
        return None
    flow = result.flow.tocsr()
    out = np.full(N, -1, dtype=np.int64)
    got = np.asarray(flow[users + ui, arms + aj]).ravel() > 0
    out[ui[got]] = aj[got]
    return out
