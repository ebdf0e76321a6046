"""Brute-force references for tiny graphs: every vertex of P_C enumerated (N <= 6, K <= 3)."""

import itertools

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from anondecomp import DemandGraph


def vertices(support: np.ndarray, C: int) -> np.ndarray:
    """Every non-zero 0/1 vertex of P_C inside ``support`` (rows: flattened N*K points)."""
    N, K = support.shape
    out = []
    for choice in itertools.product(*[[-1, *np.flatnonzero(support[i])] for i in range(N)]):
        v = np.zeros((N, K))
        for i, j in enumerate(choice):
            if j >= 0:
                v[i, j] = 1
        cols = v.sum(axis=0)
        if v.any() and ((cols == 0) | (cols >= C + 1)).all():
            out.append(v.ravel())
    return np.array(out).reshape(-1, N * K)


def optimum(graph: DemandGraph, C: int) -> tuple[float, int]:
    """(LP value, integer optimum) of min sum m_v s.t. sum m_v v >= ceil(w), over all vertices."""
    V = vertices(graph.support, C)
    req = graph.required.ravel().astype(float)
    n = len(V)
    lp = linprog(np.ones(n), A_ub=-V.T, b_ub=-req, bounds=(0, None), method="highs")
    ip = milp(
        np.ones(n), constraints=LinearConstraint(V.T, req, np.inf), integrality=np.ones(n), bounds=Bounds(0, np.inf)
    )
    return float(lp.fun), int(round(ip.fun))


def beta(graph: DemandGraph, C: int, sense: str) -> float:
    """max beta with beta * w_hat = (or <=) a convex combination of vertices of P_C (and the zero vertex)."""
    support = np.ones(graph.shape, bool) if sense == "equal" else graph.support
    V = vertices(support, C)
    V = np.vstack([V, np.zeros((1, graph.weights.size))])
    w = graph.normalized()[0].ravel()
    n = len(V)
    cost = np.concatenate([np.zeros(n), [-1.0]])
    rows = np.hstack([V.T, -w[:, None]])  # sum lam v - beta w
    convex = np.concatenate([np.ones(n), [0.0]])[None, :]
    if sense == "equal":
        res = linprog(
            cost,
            A_eq=np.vstack([rows, convex]),
            b_eq=np.concatenate([np.zeros(len(w)), [1.0]]),
            bounds=(0, None),
            method="highs",
        )
    else:
        res = linprog(
            cost, A_ub=-rows, b_ub=np.zeros(len(w)), A_eq=convex, b_eq=[1.0], bounds=(0, None), method="highs"
        )
    return float(-res.fun)


def tiny_graphs(count: int, seed: int, feasible: bool = True) -> list[tuple[DemandGraph, int]]:
    """Random batched and weighted graphs with N <= 6 users and K <= 3 arms."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        N, K, C = int(rng.integers(2, 7)), int(rng.integers(1, 4)), int(rng.integers(1, 3))
        if rng.random() < 0.5:
            active = rng.random((N, K)) < 0.6
            active[np.arange(N), rng.integers(0, K, N)] = True
            graph = DemandGraph.from_batched(int(rng.integers(1, 12)), active)
        else:
            w = rng.choice([0, 0, 1, 2, 3, 5, 2.5], size=(N, K)).astype(float)
            w[~(w > 0).any(axis=1), 0] = 1.0
            graph = DemandGraph.from_weights(w)
        if feasible and len(graph.thin_arms(C)):
            continue
        out.append((graph, C))
    return out
