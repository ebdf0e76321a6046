"""Re-planning: decompose what is left of the demand after some blocks ran, warm-started from the plan.

When users miss blocks (:mod:`anondecomp.absence`), a plan run to its end leaves some demand unmet. Given the
blocks not yet run and the informative samples received so far, :func:`replan` decomposes the residual demand
``max(w - received, 0)``: it keeps the plan's assignments as far as they still serve the residual (each one
repeated only as often as some pair still needs it), decomposes what the kept plan leaves short, and returns
that or a cold decomposition of the residual, whichever is shorter.
"""

from __future__ import annotations

import time

import numpy as np

from anondecomp.absence import DEFAULT_CONFIDENCE, graph_with_demand, is_absent, presence
from anondecomp.columnar import whole_counts
from anondecomp.decompose import checked_options, decompose, method_info
from anondecomp.graph import DemandGraph, exact_sum
from anondecomp.result import Decomposition, arm_dtype, compress
from anondecomp.validation import checked, drop_uncoverable
from anondecomp.verify import edge_coverage, informative_entries

_CHUNK = 1 << 22  # (assignment, user) entries whose groups are judged at once when trimming a plan


def received_at_edges(graph: DemandGraph, received) -> np.ndarray:
    """(E,) int64 the counts of ``received`` (dense or scipy.sparse, the graph's shape) at the graph's edges;
    counts off the support are ignored (a user can receive nothing there). A sparse matrix is read by its
    stored entries: memory per entry and per edge, never users x arms."""
    if not type(received).__module__.startswith("scipy.sparse"):
        return whole_counts(np.asarray(received)[graph.edge_users, graph.edge_arms])
    coo = received.tocsr()
    coo.sum_duplicates()
    coo = coo.tocoo()
    K = graph.n_arms
    keys = coo.row.astype(np.int64) * K + coo.col
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], np.asarray(coo.data)[order]
    out = np.zeros(graph.nnz, dtype=np.int64)
    if len(keys):
        want = graph.edge_users.astype(np.int64) * K + graph.edge_arms
        at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
        hit = keys[at] == want
        out[hit] = whole_counts(values[at[hit]])
    return out


def residual_graph(graph: DemandGraph, received) -> DemandGraph:
    """The demand left after ``received``: weights ``max(w - received, 0)`` and demands ``max(ceil(w) -
    received, 0)`` (equal to ``ceil`` of the weights: the counts are whole) on the graph's own support, so a
    user whose demand is met still pads groups."""
    got = received_at_edges(graph, received)
    return graph_with_demand(
        graph, np.maximum(graph.edge_weights - got, 0.0), np.maximum(graph.edge_required - got, 0).astype(np.int64)
    )


def _counted_edges(graph: DemandGraph, plan: Decomposition, informative) -> tuple[np.ndarray, np.ndarray]:
    """(assignment, edge) of every entry of the plan in a group that gives samples, on the support."""
    a = np.asarray(plan.assignments)
    N, K = graph.shape
    keys = graph.edge_users.astype(np.int64) * K + graph.edge_arms
    rows, edges = [], []
    step = max(1, _CHUNK // max(N, 1))
    for lo in range(0, len(a), step):
        block = a[lo : lo + step].astype(np.int64)
        r, i = np.nonzero(informative(block))
        want = i * K + block[r, i]
        at = np.minimum(np.searchsorted(keys, want), max(len(keys) - 1, 0))
        on = keys[at] == want if len(keys) else np.zeros(len(want), bool)
        rows.append(r[on] + lo)
        edges.append(at[on])
    if not rows:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    return np.concatenate(rows), np.concatenate(edges)


def trim(graph: DemandGraph, plan: Decomposition, need: np.ndarray, informative) -> tuple[np.ndarray, np.ndarray]:
    """The plan's assignments, each repeated only as often as the demand ``need`` (per edge) still needs it:
    from the last assignment to the first, a multiplicity drops by the least surplus of the pairs it serves.
    Returns the kept assignments and multiplicities (zero multiplicities dropped)."""
    m = np.asarray(plan.multiplicities).astype(np.int64)
    r_idx, e_idx = _counted_edges(graph, plan, informative)
    order = np.argsort(r_idx, kind="stable")
    r_idx, e_idx = r_idx[order], e_idx[order]
    bounds = np.searchsorted(r_idx, np.arange(len(m) + 1))
    got = np.bincount(e_idx, weights=m[r_idx].astype(np.float64), minlength=graph.nnz).astype(np.int64)
    surplus = got - need
    for r in range(len(m) - 1, -1, -1):
        served = e_idx[bounds[r] : bounds[r + 1]]
        cut = int(min(m[r], surplus[served].min())) if len(served) else int(m[r])
        if cut > 0:
            m[r] -= cut
            surplus[served] -= cut
    keep = m > 0
    return np.asarray(plan.assignments)[keep], m[keep]


@checked()
def replan(
    graph: DemandGraph,
    plan: Decomposition,
    received,
    *,
    absence=None,
    confidence: float | None = None,
    method: str = "auto",
    best_effort: bool = False,
    compare_cold: bool = False,
    **options,
) -> Decomposition:
    """Decompose the demand left after the samples received so far, warm-started from the plan not yet run.

    The residual demand is ``max(w - received, 0)`` on the graph's own support (:func:`residual_graph`). The
    plan's assignments are kept as far as they still serve it (:func:`trim`: each repeated only as often as
    some pair still needs it, counting only groups that give samples under the absence model), and what they
    leave short is decomposed by ``method``. That is never slower than a cold :func:`~anondecomp.decompose` of
    the residual (it decomposes a part of it); with ``compare_cold`` the cold decomposition is computed too and
    the shorter of the two returned (the warm one on a tie), so the result is never longer than it either.

    Parameters
    ----------
    graph : DemandGraph
        The demand graph the plan was made for.
    plan : Decomposition
        The blocks not yet run: a decomposition over the same users and arms (in the same order), possibly
        empty (no assignments). Its C is the anonymity parameter.
    received : numpy.ndarray or scipy.sparse matrix
        (N, K) informative samples received so far per (user, arm): whole, non-negative counts in any numeric
        dtype (counts off the support are ignored).
    absence : float or array_like of float, optional
        As for :func:`~anondecomp.decompose`; default the plan's ``info["absence"]``, else 0.
    confidence : float, optional
        As for :func:`~anondecomp.decompose`; default the plan's ``info["confidence"]``, else 0.95.
    method : str, optional
        The method decomposing what the plan leaves short, and the cold residual (default ``"auto"``).
    best_effort : bool, optional
        As for :func:`~anondecomp.decompose`: leave pairs on arms wanted by at most C users uncovered.
    compare_cold : bool, optional
        Also decompose the residual cold and return the shorter (default False: the warm start only, unless the
        plan is empty).
    **options : dict
        The options of :func:`~anondecomp.decompose` (``seed``, ``time_limit``, ...).

    Returns
    -------
    Decomposition
        A decomposition of the residual graph (its ``graph``, with the same users, arms and support); ``info``
        keeps the absence model and ``replan``: ``"warm"`` or ``"cold"`` (which was returned), ``plan_kept`` (the
        plan's assignments kept in the result, counted with multiplicity), ``warm_total`` and ``cold_total`` (R
        of each; ``None`` when not computed).

    Raises
    ------
    InvalidInputError
        For a plan over other users or arms, ``received`` that is not (N, K) whole non-negative counts, or an
        invalid absence, confidence, method or option.
    InfeasibleError
        If the residual wants an arm of at most C users and ``best_effort`` is false.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (the
    decompositions of Section 3, re-planned for users that miss blocks).

    Examples
    --------
    >>> import numpy as np, anondecomp
    >>> g = anondecomp.DemandGraph.from_batched(10, np.ones((6, 2), bool))
    >>> plan = anondecomp.decompose(g, C=1)
    >>> received = np.full((6, 2), 3)
    >>> res = anondecomp.replan(g, plan, received)
    >>> res.total_assignments, res.info["replan"], anondecomp.verify(res.graph, 1, res).valid
    (4, 'warm', True)
    """
    start = time.perf_counter()
    # refused now, even when the plan leaves nothing to decompose
    method_info(method)
    checked_options(options)
    C = plan.C
    absence = plan.info.get("absence", 0.0) if absence is None else absence
    confidence = plan.info.get("confidence", DEFAULT_CONFIDENCE) if confidence is None else confidence
    residual = residual_graph(graph, received)
    pres = presence(residual, C, absence, confidence) if is_absent(absence) else None
    robust = {"absence": absence, "confidence": confidence} if pres else {}
    info: dict = pres.info(residual) if pres else {}

    def solve(g: DemandGraph) -> Decomposition:
        return decompose(g, C, method, best_effort=best_effort, **robust, **options)

    def result(method_name: str, rows, mult, uncovered, **more) -> Decomposition:
        rows, mult = compress(np.asarray(rows).astype(arm_dtype(graph.n_arms)), np.asarray(mult, dtype=np.int64))
        uncovered = np.empty((0, 2), dtype=np.int64) if uncovered is None else uncovered
        return Decomposition(
            residual, C, method_name, rows, mult, uncovered, time.perf_counter() - start, {**info, **more}
        )

    if not residual.edge_required.any():
        empty = np.empty((0, graph.n_users), dtype=np.int64)
        figures: dict[str, int | None] = {"plan_kept": 0, "warm_total": 0, "cold_total": None}
        return result("replan", empty, np.empty(0, np.int64), None, replan="warm", **figures)
    if not len(plan.multiplicities):  # nothing to warm-start from: the cold decomposition is the answer
        cold = solve(residual)
        figures = {"plan_kept": 0, "warm_total": None, "cold_total": cold.total_assignments}
        return result(cold.method, cold.assignments, cold.multiplicities, cold.uncovered, replan="cold", **figures)
    informative = pres.informative if pres else (lambda block: _plain(block, C, graph.n_arms))
    need, uncovered = (
        drop_uncoverable(residual, C, residual.edge_required) if best_effort else (residual.edge_required, None)
    )
    kept_a, kept_m = trim(residual, plan, need, informative)
    got, _ = edge_coverage(residual, kept_a, kept_m, C, informative)
    short = np.maximum(need - got, 0)
    rows, mult, name = np.asarray(kept_a, dtype=np.int64), kept_m, "replan"
    if short.any():
        extra = solve(graph_with_demand(residual, np.minimum(residual.edge_weights, short * 1.0), short))
        rows = np.concatenate([rows, np.asarray(extra.assignments, dtype=np.int64)])
        mult = np.concatenate([mult, extra.multiplicities.astype(np.int64)])
        name = f"replan+{extra.method}"
    figures = {"warm_total": exact_sum(mult), "cold_total": None}
    if compare_cold:
        cold = solve(residual)
        figures["cold_total"] = cold.total_assignments
        if exact_sum(mult) > cold.total_assignments:
            rows, mult, uncovered = cold.assignments, cold.multiplicities, cold.uncovered
            return result(cold.method, rows, mult, uncovered, replan="cold", plan_kept=0, **figures)
    return result(name, rows, mult, uncovered, replan="warm", plan_kept=exact_sum(kept_m), **figures)


def _plain(block: np.ndarray, C: int, n_arms: int) -> np.ndarray:
    """Entries of a block in groups of at least C+1 users (the rule without absence)."""
    return informative_entries(block, C, n_arms)
