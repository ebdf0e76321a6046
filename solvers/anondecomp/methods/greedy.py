"""Greedy decomposition (paper 000, Section 3.4; spec 4.1): alpha = K, needs every |B_j| >= C+1."""

from __future__ import annotations

import time

import numpy as np

from anondecomp.graph import DemandGraph
from anondecomp.methods._common import greedy_assignments, prepare
from anondecomp.result import Decomposition


def greedy_decomposition(graph: DemandGraph, C: int, *, best_effort: bool = False) -> Decomposition:
    """One assignment per wanted arm j, every user of B_j on j, repeated ``max_i ceil(w_ij)`` times.

    Valid because arm j then holds all |B_j| >= C+1 of its users; uses at most K * D assignments.

    Examples
    --------
    >>> import numpy as np
    >>> g = DemandGraph.from_batched(6, np.ones((4, 2), bool))
    >>> greedy_decomposition(g, C=2).total_assignments
    6
    """
    start = time.perf_counter()
    prep = prepare(graph, C, best_effort)
    arms = np.flatnonzero(prep.required.max(axis=0) > 0)
    mult = prep.required[:, arms].max(axis=0).astype(np.int64)
    return Decomposition(graph, prep.C, "greedy", greedy_assignments(graph, arms), mult,
                         uncovered=prep.uncovered, wall_time=time.perf_counter() - start)
