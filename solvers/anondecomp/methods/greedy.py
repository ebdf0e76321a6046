"""Greedy decomposition (paper 000, Section 3.4.1): alpha = K, needs every |B_j| >= C+1."""

from __future__ import annotations

import math
import time

import numpy as np

from anondecomp.graph import DemandGraph, row_sums
from anondecomp.methods._common import greedy_assignments
from anondecomp.result import Decomposition
from anondecomp.validation import check_output_cells, prepare


def greedy_total_demand(graph: DemandGraph, required: np.ndarray | None = None) -> int:
    """The D of the paper's greedy: ``ceil(D)`` of a batched graph, else ``max_i sum_j ceil(w_ij)``.

    A general demand graph has no D in the paper; the trivial lower bound is the smallest D for which D copies of
    every M_j cover every pair (a choice of this implementation: the paper's greedy, Section 3.4.1, is stated for
    batched graphs only). ``required`` overrides the graph's integer demands, per edge or dense (best-effort mode
    removes thin arms).
    """
    if graph.demand is not None:
        return math.ceil(graph.demand)
    r = graph.edge_required if required is None else np.asarray(required)
    if r.ndim == 2:
        return int(r.sum(axis=1).max())
    return int(row_sums(graph.indptr, r).max())


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
    arms = np.flatnonzero(np.bincount(graph.edge_arms[prep.edge_required > 0], minlength=graph.n_arms))
    check_output_cells(len(arms), graph.n_users, "greedy", "one assignment per wanted arm")
    mult = np.full(len(arms), greedy_total_demand(graph, prep.edge_required), dtype=np.int64)
    return Decomposition(
        graph,
        prep.C,
        "greedy",
        greedy_assignments(graph, arms),
        mult,
        uncovered=prep.uncovered,
        wall_time=time.perf_counter() - start,
    )
