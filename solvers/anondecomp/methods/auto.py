"""``auto``: the polytope method when it applies (Corollary 1), else the better of block (Corollary 2) and
time-shared faces (:mod:`anondecomp.methods.timeshare`), the latter tried only when block is above the lower
bound max_i sum_j ceil(w_ij). On a graph that is not batched (a log rather than a batch of Algorithm 1),
least-slack rounds (:mod:`anondecomp.methods.slack`) are tried first and returned when they meet the lower
bound (they are fast and usually do there; block then is never built), else kept when shorter than block. A log
of :data:`~anondecomp.methods.sessions.LARGE_EDGES` edges or more, and any graph too large for dense models
(:data:`~anondecomp.validation.DENSE_CELLS` users x arms), is scheduled by sessions
(:mod:`anondecomp.methods.sessions`), linear in its edges. A batched graph of more than
:data:`~anondecomp.methods.phase.PHASE_PAIRS` edges takes the phase route (:mod:`anondecomp.methods.phase`,
the sharded command's schedule); with ``improve=False`` Algorithm 1's batched graphs keep the paper's route
unchanged."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np

from anondecomp.graph import DemandGraph
from anondecomp.improve import polish
from anondecomp.methods._common import repair
from anondecomp.methods.block import block_decomposition
from anondecomp.methods.phase import phase_decomposition, phase_support
from anondecomp.methods.polytope import polytope_applies, polytope_decomposition
from anondecomp.methods.sessions import LARGE_EDGES, sessions_decomposition
from anondecomp.methods.slack import slack_decomposition
from anondecomp.methods.timeshare import TimeSharePlan, timeshare_plan
from anondecomp.result import Decomposition
from anondecomp.validation import DENSE_CELLS, prepare


def auto_decomposition(graph: DemandGraph, C: int, *, best_effort: bool = False,
                       rng: np.random.Generator | None = None, vertices: str = "auto",
                       time_limit: float | None = None, improve: bool = True, phases: bool = True) -> Decomposition:
    """Polytope (alpha = 1) when every column of w/D sums to >= C+1, else block, least-slack rounds (graphs
    that are not batched) or time-shared faces, whichever is shortest.

    The result's ``method`` names the one used (``"polytope"``, ``"block"``, ``"slack"`` or ``"timeshare"``).
    With ``time_limit`` (seconds), no phase starts after it: least-slack rounds stop building steps and
    greedy assignments serve what is left, block gives up when least-slack rounds already hold a
    decomposition, and time-shared faces start no trial; ``info["time_limit_reached"]`` then says so (on a
    3000 x 1000 log at C = 50, block alone takes minutes).

    With ``improve`` (default), a batched graph of more than :data:`~anondecomp.methods.phase.PHASE_PAIRS`
    edges whose phase schedule suits it (:func:`~anondecomp.methods.phase.phase_support`) is scheduled by phases,
    shard by shard, as the command line's sharded path does (method ``"phase"``; the same schedule for the same
    seed); a shard whose phases are not valid is decomposed by this route with ``phases=False``, as the
    sharded path's shards fall back. A graph that is not batched (a log) is first scheduled by sessions
    (:mod:`anondecomp.methods.sessions`: under a second on every graph of the ``real`` family, at the lower bound
    on all but OBD at C = 50), returned when they meet the lower bound; otherwise the route above runs and the
    shorter of the two is kept. A result above the lower bound,
    on a graph small enough for dense models, is then improved by :func:`anondecomp.improve.polish` (rounds
    removed, on logs arm-first rounds, the LP master rounded) within what is left of ``time_limit`` (default
    :data:`~anondecomp.improve.POLISH_SECONDS`); ``info`` then holds the certified bound. The bandit layer's
    drivers pass ``improve=False``: their batches take the route above alone, as the paper's reproductions ran.

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
    data = phase_support(graph, C) if improve and phases else None
    if data is not None:  # a large batched graph: its phase schedule, shard by shard (as the sharded path)
        found = phase_decomposition(graph, data, C, rng, lambda shard: auto_decomposition(
            shard, C, rng=rng, vertices=vertices, improve=improve, phases=False))
        if found is not None:
            return dataclasses.replace(found, wall_time=time.perf_counter() - start)
    first = None
    if improve and (graph.demand is None or too_large_for_block(graph)):
        # a log: sessions first, linear in the edges and usually at the bound
        first = sessions_decomposition(graph, C, best_effort=best_effort)
        if first.total_assignments <= prepare(graph, C, best_effort).lower_bound or too_large_for_block(graph) \
                or (graph.demand is None and graph.nnz >= LARGE_EDGES):  # the other route: sessions again
            return first
    found = auto_choice(graph, C, best_effort=best_effort, rng=rng, vertices=vertices, time_limit=time_limit)
    result = found if isinstance(found, Decomposition) else found.decomposition()
    if first is not None and first.total_assignments < result.total_assignments:
        result = first
    if not improve or too_large_for_block(graph) or "time_limit_reached" in result.info:
        return result
    left = None if time_limit is None else time_limit - (time.perf_counter() - start)
    return result if left is not None and left <= 0 else polish(result, best_effort=best_effort, time_limit=left)


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
        return Decomposition(prep.graph, prep.C, "timeshare", a, m, uncovered=prep.uncovered,
                             wall_time=time.perf_counter() - self.start,
                             info={**info, "block_total": self.block_total, "repaired": repaired})


def auto_choice(graph: DemandGraph, C: int, *, best_effort: bool = False, rng: np.random.Generator | None = None,
                vertices: str = "auto", time_limit: float | None = None) -> Decomposition | TimeShared:
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
    block = block_decomposition(graph, C, best_effort=best_effort, rng=rng, vertices=vertices,
                                deadline=deadline if slack is not None else None)
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
    return Decomposition(result.graph, result.C, result.method, result.assignments, result.multiplicities,
                         uncovered=result.uncovered, wall_time=result.wall_time,
                         info={**result.info, "time_limit_reached": True})
