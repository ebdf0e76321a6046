"""Greedy decomposition (paper 000, Section 3.4.1; spec 4.1): alpha = K, needs every |B_j| >= C+1."""

from __future__ import annotations

import math
import time

import numpy as np

from anondecomp.graph import DemandGraph
from anondecomp.methods._common import greedy_assignments, prepare
from anondecomp.result import Decomposition


def greedy_total_demand(graph: DemandGraph, required: np.ndarray | None = None) -> int:
    """The D of the paper's greedy: ``ceil(D)`` of a batched graph, else ``max_i sum_j ceil(w_ij)``.

    A general demand graph has no D in the paper; the trivial lower bound is the smallest D for which D
    copies of every M_j cover every pair (spec 4.1 [DECISION]). ``required`` overrides the graph's integer
    demands (best-effort mode removes thin arms).
    """
    if graph.demand is not None:
        return math.ceil(graph.demand)
    required = graph.required if required is None else required
    return int(required.sum(axis=1).max())


def greedy_decomposition(graph: DemandGraph, C: int, *, best_effort: bool = False) -> Decomposition:
    """The paper's greedy: for each wanted arm j, D copies of M_j (every user of B_j on j, the rest parked).

    Valid because arm j then holds all |B_j| >= C+1 of its users, so every copy of M_j gives each user of
    B_j one informative sample on j, and D copies cover any ``ceil(w_ij) <= D``. R = K * D exactly (K = the
    number of wanted arms), which is the ratio alpha = K that Algorithm 1 budgets for this method.

    Examples
    --------
    >>> import numpy as np
    >>> g = DemandGraph.from_batched(6, np.ones((4, 2), bool))
    >>> greedy_decomposition(g, C=2).total_assignments  # K * D = 2 * 6
    12
    """
    start = time.perf_counter()
    prep = prepare(graph, C, best_effort)
    arms = np.flatnonzero(prep.required.max(axis=0) > 0)
    mult = np.full(len(arms), greedy_total_demand(graph, prep.required), dtype=np.int64)
    return Decomposition(graph, prep.C, "greedy", greedy_assignments(graph, arms), mult,
                         uncovered=prep.uncovered, wall_time=time.perf_counter() - start)
