"""LP / polytope decomposition (paper 000, Section 3.4.2: Lemmas 3 and 5 and Corollary 1).

When every column of w_hat = w / D sums to at least C+1, w_hat lies in P_C([K]) and a Carathéodory
decomposition of it, scaled by D, is a C-anonymous decomposition with at most D + NK + 1 assignments
(alpha = 1; Lemma 5 shows the condition holds whenever U >= K(C+1)). The vertices come from the phase
schedule of :mod:`anondecomp.schedule` (exactly the lower bound, when no slot is thin) or else from the
exact Carathéodory procedure of :mod:`anondecomp.caratheodory`.
"""

from __future__ import annotations

import time

import numpy as np

from anondecomp.errors import MethodNotApplicableError
from anondecomp.graph import DemandGraph
from anondecomp.methods._common import Face, decompose_face, pad_point, per_edge, repair
from anondecomp.result import Decomposition
from anondecomp.validation import check_model_cells, prepare


def demand_point(graph: DemandGraph, required, C: int) -> tuple[np.ndarray, np.ndarray]:
    """(w_hat = w / max row sum on the demand, per edge, padded by the users with zero demand
    (:func:`~anondecomp.methods._common.pad_point`); mask of the arms still wanted). ``required`` is per edge
    or dense (N, K)."""
    r = per_edge(graph, required)
    w = np.where(r > 0, graph.edge_weights, 0.0)
    wanted = np.bincount(graph.edge_arms[r > 0], minlength=graph.n_arms) > 0
    scale = np.bincount(graph.edge_users, weights=w, minlength=graph.n_users).max() if graph.nnz else 0.0
    return pad_point(graph, r, w / max(scale, 1e-300), wanted, C), wanted


def column_sums(graph: DemandGraph, required, C: int) -> tuple[np.ndarray, np.ndarray]:
    """(column sums of w_hat over the arms, mask of the arms still wanted), w_hat = w / max row sum (a user
    with zero demand pads: :func:`~anondecomp.methods._common.pad_point`); on the edges."""
    x, wanted = demand_point(graph, required, C)
    return np.bincount(graph.edge_arms, weights=x, minlength=graph.n_arms), wanted


def polytope_applies(graph: DemandGraph, C: int, required: np.ndarray | None = None) -> np.ndarray:
    """Indices of wanted arms whose column sum of w_hat is below C+1 (empty: the method applies).

    ``required`` is per edge or dense (N, K), default the graph's. The sums are taken over the edges; only
    when some arm falls short and users without demand there could pad it (:func:`pad_point`) is the padding
    flow run."""
    r = graph.edge_required if required is None else per_edge(graph, required)
    w = np.where(r > 0, graph.edge_weights, 0.0)
    scale = np.bincount(graph.edge_users, weights=w, minlength=graph.n_users).max() if graph.nnz else 0.0
    cols = np.bincount(graph.edge_arms, weights=w / max(scale, 1e-300), minlength=graph.n_arms)
    wanted = np.bincount(graph.edge_arms[r > 0], minlength=graph.n_arms) > 0
    low = np.flatnonzero(wanted & (cols < C + 1 - 1e-12))
    if len(low) and (graph.explicit_support or (r != graph.edge_required).any()):
        cols, wanted = column_sums(graph, r, C)
        low = np.flatnonzero(wanted & (cols < C + 1 - 1e-12))
    return low


def polytope_decomposition(
    graph: DemandGraph,
    C: int,
    *,
    best_effort: bool = False,
    rng: np.random.Generator | None = None,
    vertices: str = "auto",
) -> Decomposition:
    """Decompose w_hat in P_C([K]) (Corollary 1); refuse with a clear message when it is not in it.

    The condition is checked on the edges; the decomposition then works on the dense point, N users x the
    wanted arms, refused (one line) above :data:`~anondecomp.validation.DENSE_CELLS` cells before it is built.

    Raises
    ------
    MethodNotApplicableError naming the arms whose column sum of w / D is below C+1, or the point's size.

    Examples
    --------
    >>> import numpy as np
    >>> g = DemandGraph.from_batched(10, np.ones((8, 2), bool))
    >>> polytope_decomposition(g, C=3).total_assignments
    10
    """
    start = time.perf_counter()
    prep = prepare(graph, C, best_effort)
    low = polytope_applies(graph, prep.C, prep.edge_required)
    if len(low):
        cols, _ = column_sums(graph, prep.edge_required, prep.C)
        detail = ", ".join(f"{graph.arms[j]!r} ({cols[j]:.3g})" for j in low[:10])
        raise MethodNotApplicableError(
            f"polytope needs every arm's column sum of w/D to be at least C+1 = {prep.C + 1}; arm(s) {detail} "
            f"fall short{' (and more)' if len(low) > 10 else ''}; use method='block'"
        )
    x, open_arms = demand_point(graph, prep.edge_required, prep.C)
    check_model_cells(graph.n_users, int(open_arms.sum()), "polytope", "its point w/D on the wanted arms")
    a, m, route = decompose_face(prep, Face.of(graph, open_arms, prep.edge_required, x), rng, vertices)
    a, m, repaired = repair(prep, a, m)
    return Decomposition(
        graph,
        prep.C,
        "polytope",
        a,
        m,
        uncovered=prep.uncovered,
        wall_time=time.perf_counter() - start,
        info={"route": route, "repaired": repaired},
    )
