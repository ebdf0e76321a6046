"""The paper's route for ``auto``: polytope when it applies (Corollary 1), else block (Corollary 2), least-slack
rounds on logs, or time-shared faces, whichever is shortest.

Paper: Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022. :func:`auto_choice`
is what :func:`~anondecomp.methods.auto.auto_decomposition` runs with ``improve=False`` (the bandit layer's
batches) and what the ``optimal`` method takes as its seed, with time-shared faces left uncoloured.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from anondecomp.graph import DemandGraph
from anondecomp.methods._common import repair
from anondecomp.methods.block import block_decomposition
from anondecomp.methods.polytope import polytope_applies, polytope_decomposition
from anondecomp.methods.sessions import LARGE_EDGES, sessions_decomposition
from anondecomp.methods.slack import slack_decomposition
from anondecomp.methods.timeshare import TimeSharePlan, timeshare_plan
from anondecomp.result import Decomposition
from anondecomp.validation import DENSE_CELLS, prepare


@dataclass(frozen=True)
class TimeShared:
    """``auto``'s choice when time-shared faces win, before their colouring (:func:`auto_choice`)."""

    plan: TimeSharePlan
    block_total: int | None
    start: float
    method: str = "timeshare"

    @property
    def total_assignments(self) -> int:
        return self.plan.total

    def decomposition(self) -> Decomposition:
        """The plan coloured into assignments: what :func:`auto_decomposition` returns."""
        prep = self.plan.prep
        a, m, info = self.plan.colour()
        a, m, repaired = repair(prep, a, m)
        return Decomposition(
            prep.graph,
            prep.C,
            "timeshare",
            a,
            m,
            uncovered=prep.uncovered,
            wall_time=time.perf_counter() - self.start,
            info={**info, "block_total": self.block_total, "repaired": repaired},
        )


def auto_choice(
    graph: DemandGraph,
    C: int,
    *,
    best_effort: bool = False,
    rng: np.random.Generator | None = None,
    vertices: str = "auto",
    time_limit: float | None = None,
) -> Decomposition | TimeShared:
    """:func:`auto_decomposition`, with time-shared faces returned uncoloured (:class:`TimeShared`): a caller
    that only needs their length and faces (the ``optimal`` method's seed) skips the colouring, which costs one
    maximum flow per distinct assignment."""
    start = time.perf_counter()
    prep = prepare(graph, C, best_effort)
    if too_large_for_block(graph) or (graph.demand is None and graph.nnz >= LARGE_EDGES):
        # dense models out of reach, or a large log (block would take minutes): sessions, linear in the edges
        return sessions_decomposition(graph, C, best_effort=best_effort)
    if not len(polytope_applies(graph, prep.C, prep.edge_required)):
        return polytope_decomposition(graph, C, best_effort=best_effort, rng=rng, vertices=vertices)
    lower = prep.lower_bound
    deadline = None if time_limit is None else start + time_limit
    slack = None
    if graph.demand is None:  # a log: least-slack rounds first, they often meet the bound at a fraction of block's cost
        slack = slack_decomposition(graph, C, best_effort=best_effort, deadline=deadline)
        if slack.total_assignments <= lower:
            return slack
    # block is the fallback on batched graphs, so it is cut short only when slack's decomposition stands in
    block = block_decomposition(
        graph, C, best_effort=best_effort, rng=rng, vertices=vertices, deadline=deadline if slack is not None else None
    )
    cut = block is None or (slack is not None and "time_limit_reached" in slack.info)
    candidates = [d for d in (block, slack) if d is not None]
    best = min(candidates, key=lambda d: d.total_assignments)  # block first: it wins ties, as before
    block_total = None if block is None else block.total_assignments
    left = None if deadline is None else deadline - time.perf_counter()
    if best.total_assignments > lower and left is not None and left <= 0:
        cut = True  # time-shared faces not tried
    if best.total_assignments <= lower or cut:
        return _timed_out(best) if cut else best
    plan = timeshare_plan(prep, left, stop_at=lower)
    if plan is None or plan.total >= best.total_assignments:
        return best
    return TimeShared(plan, block_total, start)


def too_large_for_block(graph: DemandGraph) -> bool:
    """Whether polytope, block and time-shared faces, whose models are dense (users x arms), are out of reach:
    above :data:`~anondecomp.validation.DENSE_CELLS` cells ``auto`` schedules the graph by sessions."""
    return graph.n_users * graph.n_arms > DENSE_CELLS


def _timed_out(result: Decomposition) -> Decomposition:
    """``result`` marked as cut by auto's time limit (``info["time_limit_reached"]``)."""
    return Decomposition(
        result.graph,
        result.C,
        result.method,
        result.assignments,
        result.multiplicities,
        uncovered=result.uncovered,
        wall_time=result.wall_time,
        info={**result.info, "time_limit_reached": True},
    )
