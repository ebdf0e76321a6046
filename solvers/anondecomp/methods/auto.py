"""``auto``: the polytope method when it applies (Corollary 1), else the better of block (Corollary 2) and
time-shared faces (:mod:`anondecomp.methods.timeshare`), the latter tried only when block is above the lower
bound max_i sum_j ceil(w_ij). On a graph that is not batched (a log rather than a batch of Algorithm 1),
least-slack rounds (:mod:`anondecomp.methods.slack`) are tried first and returned when they meet the lower
bound (they are fast and usually do there; block then is never built), else kept when shorter than block;
Algorithm 1's batched graphs keep the paper's route unchanged."""

from __future__ import annotations

import time

import numpy as np

from anondecomp.graph import DemandGraph
from anondecomp.methods._common import repair
from anondecomp.methods.block import block_decomposition
from anondecomp.methods.polytope import polytope_applies, polytope_decomposition
from anondecomp.methods.slack import slack_decomposition
from anondecomp.methods.timeshare import timeshare
from anondecomp.result import Decomposition
from anondecomp.validation import prepare


def auto_decomposition(graph: DemandGraph, C: int, *, best_effort: bool = False,
                       rng: np.random.Generator | None = None, vertices: str = "auto") -> Decomposition:
    """Polytope (alpha = 1) when every column of w/D sums to >= C+1, else block, least-slack rounds (graphs
    that are not batched) or time-shared faces, whichever is shortest.

    The result's ``method`` names the one used (``"polytope"``, ``"block"``, ``"slack"`` or ``"timeshare"``).

    Examples
    --------
    >>> import numpy as np
    >>> active = np.zeros((12, 4), bool)
    >>> active[:, :2] = True
    >>> active[6:, 2:] = True
    >>> d = auto_decomposition(DemandGraph.from_batched(8, active), C=3)
    >>> d.method, d.total_assignments, d.lower_bound
    ('timeshare', 8, 8)
    """
    start = time.perf_counter()
    prep = prepare(graph, C, best_effort)
    if not len(polytope_applies(graph, prep.C, prep.required)):
        return polytope_decomposition(graph, C, best_effort=best_effort, rng=rng, vertices=vertices)
    lower = prep.lower_bound
    slack = None
    if graph.demand is None:  # a log: least-slack rounds first, they often meet the bound at a fraction of block's cost
        slack = slack_decomposition(graph, C, best_effort=best_effort)
        if slack.total_assignments <= lower:
            return slack
    best = block_decomposition(graph, C, best_effort=best_effort, rng=rng, vertices=vertices)
    block_total = best.total_assignments
    if slack is not None and slack.total_assignments < block_total:
        best = slack
    if best.total_assignments <= lower:
        return best
    found = timeshare(prep, stop_at=lower)
    if found is None or found[1].sum() >= best.total_assignments:
        return best
    a, m, info = found
    a, m, repaired = repair(prep, a, m)
    return Decomposition(graph, prep.C, "timeshare", a, m, uncovered=prep.uncovered,
                         wall_time=time.perf_counter() - start,
                         info={**info, "block_total": block_total, "repaired": repaired})
