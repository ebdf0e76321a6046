"""``auto``: the polytope method when it applies (Corollary 1), else the better of block (Corollary 2) and
time-shared faces (:mod:`anondecomp.methods.timeshare`), the latter tried only when block is above the lower
bound max_i sum_j ceil(w_ij). On a graph that is not batched (a log rather than a batch of Algorithm 1),
least-slack rounds (:mod:`anondecomp.methods.slack`) are tried first and returned when they meet the lower
bound (they are fast and usually do there; block then is never built), else kept when shorter than block. A log
of :data:`~anondecomp.methods.sessions.LARGE_EDGES` edges or more, and any graph too large for dense models
(:data:`~anondecomp.validation.DENSE_CELLS` users x arms), is scheduled by sessions
(:mod:`anondecomp.methods.sessions`), linear in its edges. A batched graph of more than
:data:`~anondecomp.methods.phase.PHASE_PAIRS` edges takes the phase route (:mod:`anondecomp.methods.phase`,
the sharded command's schedule). A result above the lower bound is improved (:func:`anondecomp.improve.polish`)
and, on small graphs still above the certified bound's ceiling, solved by the ``optimal`` method (:func:`exact`).
With ``improve=False`` Algorithm 1's batched graphs keep the paper's route (:mod:`anondecomp.methods.route`)
unchanged."""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from anondecomp.graph import DemandGraph
from anondecomp.improve import polish
from anondecomp.lower_bound import FARLEY, LP_OPTIMUM, TRIVIAL
from anondecomp.methods.optimal import optimal_decomposition
from anondecomp.methods.phase import phase_decomposition, phase_support
from anondecomp.methods.polytope import polytope_applies
from anondecomp.methods.route import LARGE_EDGES, auto_choice, too_large_for_block
from anondecomp.methods.sessions import sessions_decomposition
from anondecomp.result import Decomposition
from anondecomp.validation import prepare

CALENDAR_CELLS = 10_000_000
"""Users x rounds up to which sessions are also tried on a log whose polytope decomposition misses the bound
(their calendar costs about that many steps: 2,000 users x 35,230 rounds took 117 s)."""
EXACT_CELLS = 100_000
"""Users x arms up to which ``auto`` ends with the ``optimal`` method when its improved decomposition is still
above the certified bound's ceiling: there column generation and the integer face program take seconds (the
scarce 500 x 10 graph at C = 4: 1.7 s to a proven optimum of 538, where the improvement step gives 554)."""
EXACT_SECONDS = 20.0
"""Seconds the ``optimal`` step may take at most (within what is left of ``time_limit``)."""


def auto_decomposition(
    graph: DemandGraph,
    C: int,
    *,
    best_effort: bool = False,
    rng: np.random.Generator | None = None,
    vertices: str = "auto",
    time_limit: float | None = None,
    improve: bool = True,
    phases: bool = True,
) -> Decomposition:
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
    :data:`~anondecomp.improve.POLISH_SECONDS`); ``info`` then holds the certified bound. A graph of at most
    :data:`EXACT_CELLS` users x arms still above the bound's ceiling then gets the ``optimal`` method within
    :data:`EXACT_SECONDS` (:func:`exact`), kept when shorter (method ``"optimal"``). The bandit layer's
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
        found = phase_decomposition(
            graph,
            data,
            C,
            rng,
            lambda shard: auto_decomposition(shard, C, rng=rng, vertices=vertices, improve=improve, phases=False),
        )
        if found is not None:
            return dataclasses.replace(found, wall_time=time.perf_counter() - start)
    first = None
    if improve and (too_large_for_block(graph) or (graph.demand is None and not polytope_fits(graph, C, best_effort))):
        # a log: sessions first, linear in the edges and usually at the bound (where the polytope method applies,
        # its phase schedule meets the bound at once, and a calendar of many rounds would cost users x rounds)
        first = sessions_decomposition(graph, C, best_effort=best_effort)
        if (
            first.total_assignments <= prepare(graph, C, best_effort).lower_bound
            or too_large_for_block(graph)
            or (graph.demand is None and graph.nnz >= LARGE_EDGES)
        ):  # the other route: sessions again
            return first
    choice = auto_choice(graph, C, best_effort=best_effort, rng=rng, vertices=vertices, time_limit=time_limit)
    result = choice if isinstance(choice, Decomposition) else choice.decomposition()
    lower = prepare(graph, C, best_effort).lower_bound
    if (
        first is None
        and improve
        and graph.demand is None
        and result.total_assignments > lower
        and graph.n_users * lower <= CALENDAR_CELLS
    ):  # the polytope method missed the bound: sessions too
        first = sessions_decomposition(graph, C, best_effort=best_effort)
    if first is not None and first.total_assignments < result.total_assignments:
        result = first
    if not improve or too_large_for_block(graph) or "time_limit_reached" in result.info:
        return result
    left = None if time_limit is None else time_limit - (time.perf_counter() - start)
    if left is not None and left <= 0:
        return result
    result = polish(result, best_effort=best_effort, time_limit=left)
    left = EXACT_SECONDS if time_limit is None else min(EXACT_SECONDS, time_limit - (time.perf_counter() - start))
    return exact(result, best_effort, rng, vertices, left)


def polytope_fits(graph: DemandGraph, C: int, best_effort: bool) -> bool:
    """Whether the polytope method applies to ``graph`` (every wanted column of w / D sums to >= C+1), checked
    on the edges."""
    prep = prepare(graph, C, best_effort)
    return not len(polytope_applies(graph, prep.C, prep.edge_required))


def exact(
    result: Decomposition, best_effort: bool, rng: np.random.Generator | None, vertices: str, seconds: float
) -> Decomposition:
    """``result``, or the ``optimal`` method's decomposition within ``seconds`` when that is shorter, on a graph
    of at most :data:`EXACT_CELLS` users x arms whose ``result`` is above the ceiling of the bound
    (``info["lp_lower_bound"]``, kept by :func:`~anondecomp.improve.polish`)."""
    graph = result.graph
    bound = result.info.get("lp_lower_bound", result.lower_bound)
    if (
        graph.n_users * graph.n_arms > EXACT_CELLS
        or seconds <= 0
        or result.total_assignments <= math.ceil(bound - 1e-6)
    ):
        return result
    found = optimal_decomposition(
        graph, result.C, best_effort=best_effort, rng=rng, vertices=vertices, time_limit=seconds
    )
    if found.total_assignments >= result.total_assignments:
        return result
    if "user_types" not in found.info:  # its seed met the trivial bound: no LP was solved
        how = TRIVIAL
    else:
        how = LP_OPTIMUM.format(found.info["user_types"]) if found.info["lp_converged"] else FARLEY
    better = found.info["lp_lower_bound"] >= bound
    return dataclasses.replace(
        found,
        wall_time=result.wall_time + found.wall_time,
        info={
            **found.info,
            "improved_from": result.method,
            "improved_total": result.total_assignments,
            "lp_lower_bound": max(bound, found.info["lp_lower_bound"]),
            "lp_how": how if better else result.info.get("lp_how", how),
            "lp_converged": found.info["lp_converged"] or result.info.get("lp_converged", False),
        },
    )
