"""Capacity: at most M_j users on arm j in one assignment, padders and hidden users included.

A platform may show an item to at most M_j users at once (inventory, budget). A group needs C+1 users, so an
arm with demand and ``M_j < C+1`` can never be informative, and the decomposition is refused; so is a graph
whose users cannot all be seated at once (a user must play an arm of its support in every assignment): that
is a flow problem, each user one unit, each arm ``M_j`` units, solved once.

Every method honours a capacity the same way (:func:`capacitated`): it decomposes the demand left, the result
is re-seated (:func:`anondecomp.exposure.reseat`) with each group keeping at most ``M_j`` of the users that
need it (those with most demand left on the arm first), and an assignment whose hidden users do not fit is
re-seated by a flow over the arms' room left; the demand of the users left out is decomposed again, until none
is left. The lower bound becomes ``max(max_i sum_j ceil(w_ij), max_j ceil(sum_i ceil(w_ij) / M_j))``: arm j
serves at most M_j samples per assignment.

How a capacity is honoured is this implementation's choice; the paper's model has no capacity.

References
----------
Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3: the
C-anonymous decompositions, here with a bound on every group's size).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from anondecomp.absence import graph_with_demand
from anondecomp.errors import InvalidInputError, MethodNotApplicableError
from anondecomp.exposure import reseat, with_exposure
from anondecomp.flows import seat_flow
from anondecomp.graph import DemandGraph
from anondecomp.result import Decomposition, arm_dtype, compress
from anondecomp.validation import drop_uncoverable, thin_arms_error

MAX_PASSES = 64
"""Decompositions of the demand left out by the capacities before giving up (each serves at least C+1
samples per group it keeps)."""


def capacity_lower_bound(graph: DemandGraph, capacity: np.ndarray, required: np.ndarray | None = None) -> int:
    """``max(max_i sum_j r_ij, max_j ceil(sum_i r_ij / M_j))`` for the demand ``required`` per edge (default
    ``ceil(w)``): no decomposition honouring the capacities is shorter."""
    req = graph.edge_required if required is None else required
    users = np.bincount(graph.edge_users, weights=req, minlength=graph.n_users)
    arms = np.bincount(graph.edge_arms, weights=req, minlength=graph.n_arms).astype(np.int64)
    return int(max(users.max(initial=0), (-(-arms // capacity)).max(initial=0)))


def check_capacity_fits(graph: DemandGraph, C: int, capacity: np.ndarray) -> None:
    """Refuse, in one line, an arm with demand and a capacity below C+1, or users that cannot all be seated."""
    demand = drop_uncoverable(graph, C, graph.edge_required)[0]
    wanted = np.bincount(graph.edge_arms, weights=demand, minlength=graph.n_arms) > 0
    low = np.flatnonzero(wanted & (capacity < C + 1))
    if len(low):
        j = int(low[0])
        raise InvalidInputError(
            f"capacity of arm {graph.arms[j]!r} is {int(capacity[j])}, below C+1 = {C + 1}: it could never be observed"
        )
    users = np.arange(graph.n_users, dtype=np.int64)
    if seat_flow(graph, users, capacity) is None:
        raise InvalidInputError(
            f"the arms' capacities cannot seat all {graph.n_users} users at once (each user plays an arm of its "
            "support in every assignment)"
        )


def capacitated(
    graph: DemandGraph,
    C: int,
    solve: Callable[[DemandGraph, int], Decomposition],
    capacity: np.ndarray,
    best_effort: bool,
) -> Decomposition:
    """A decomposition honouring ``capacity`` ((K,) int): ``solve(graph, C)`` (the chosen method with best
    effort) on the demand left, re-seated within the capacities, until no demand is left (module docstring)."""
    start = time.perf_counter()
    check_capacity_fits(graph, C, capacity)
    thin = graph.thin_arms(C)
    if len(thin) and not best_effort:
        raise thin_arms_error(graph.arm_names(thin), C, "; use best_effort to cover everything else")
    need, uncovered = drop_uncoverable(graph, C, graph.edge_required)
    remaining = need.astype(np.int64)
    rows, mults, methods = [], [], []
    for _ in range(MAX_PASSES):
        if not remaining.any():
            break
        part = solve(graph_with_demand(graph, remaining.astype(np.float64), remaining), C)
        methods.append(part.method)
        a, m, remaining = reseat(part, capacity=capacity, remaining=remaining)
        rows.append(a)
        mults.append(m)
    if remaining.any():
        raise MethodNotApplicableError(
            f"capacity: {int((remaining > 0).sum())} pair(s) still short after {MAX_PASSES} passes"
        )
    a = np.concatenate(rows) if rows else np.empty((0, graph.n_users), dtype=arm_dtype(graph.n_arms))
    m = np.concatenate(mults) if mults else np.empty(0, dtype=np.int64)
    a, m = compress(a.astype(arm_dtype(graph.n_arms)), m)
    base = "+".join(dict.fromkeys(methods))
    info = {
        "capacity": capacity,
        "lower_bound": capacity_lower_bound(graph, capacity, need),
        "base_method": base,
        "passes": len(rows),
    }
    result = Decomposition(
        graph,
        C,
        "capacity:" + base,
        a,
        m,
        uncovered=uncovered,
        wall_time=time.perf_counter() - start,
        info=info,
    )
    return with_exposure(result)._annotated(wall_time=time.perf_counter() - start)
