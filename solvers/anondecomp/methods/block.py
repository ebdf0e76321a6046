"""Block decomposition (paper 000, Section 3.4.2, Corollary 2 and Lemma 6): alpha = ceil(K(C+1)/U).

Split the wanted arms into blocks S_1..S_b. Within block a every user spreads its time over A_i ∩ S_a, i.e.
w(a)_ij = w_ij / sum_{j' in S_a} w_ij'; when every column of w(a) sums to at least C+1, w(a) is in P_C(S_a) and is
decomposed like the polytope method; blocks run one after the other. Blocks of at most floor(U/(C+1)) arms always
qualify (Lemma 6, with U = min_j |B_j|). The paper partitions the arms arbitrarily and does not say how; the
block choice is a choice of this implementation: we try b = 1, 2, ... balanced blocks (arms sorted by |B_j| and
dealt round-robin, so every block gets a mix of popular and rare arms) and keep the first b whose blocks all
qualify, which is never more than ceil(K / floor(U/(C+1))) and often fewer.
"""

from __future__ import annotations

import time
from typing import overload

import numpy as np

from anondecomp.graph import DemandGraph
from anondecomp.methods._common import Face, arm_edges, arm_index, decompose_face, face_point, repair
from anondecomp.result import Decomposition, arm_dtype
from anondecomp.validation import Prepared, check_model_cells, check_output_cells, prepare


def partition_arms(arms: np.ndarray, degrees: np.ndarray, n_blocks: int) -> list[np.ndarray]:
    """Deal arms, most popular first, round-robin (snake order) into ``n_blocks`` blocks of equal size ±1."""
    ranked = arms[np.argsort(-degrees[arms], kind="stable")]
    pos = np.arange(len(ranked))
    lap, step = divmod(pos, n_blocks)
    block_of = np.where(lap % 2 == 0, step, n_blocks - 1 - step)
    return [np.sort(ranked[block_of == b]) for b in range(n_blocks)]


def block_face(prep: Prepared, index: tuple[np.ndarray, np.ndarray], block: np.ndarray) -> Face:
    """The block's face: the demand on its arms and Lemma 6's point w(a), rows normalised over the block; a
    user with no demand in the block but support there pads it
    (:func:`~anondecomp.methods._common.face_point`). Held on the block's edges (``index``:
    :func:`~anondecomp.methods._common.arm_index`), so that trying blocks costs no (users x arms) array."""
    graph = prep.graph
    edges = arm_edges(index, block)
    users, arms = graph.edge_users[edges], graph.edge_arms[edges]
    req = prep.edge_required[edges]
    w = np.where(req > 0, graph.edge_weights[edges], 0.0)
    rows = np.bincount(users, weights=w, minlength=graph.n_users)[users]
    x = np.divide(w, rows, out=np.zeros_like(w), where=rows > 0)
    mask = np.zeros(graph.n_arms, dtype=bool)
    mask[block] = True
    return Face(block, edges, req, face_point(graph, users, arms, req, x, mask, prep.C))


# Without a deadline the method never gives up (the method table's callers pass none): typed apart, so that
# they get a Decomposition, not an Optional one.
@overload
def block_decomposition(
    graph: DemandGraph,
    C: int,
    *,
    best_effort: bool = False,
    rng: np.random.Generator | None = None,
    vertices: str = "auto",
    deadline: None = None,
) -> Decomposition: ...
@overload
def block_decomposition(
    graph: DemandGraph,
    C: int,
    *,
    best_effort: bool = False,
    rng: np.random.Generator | None = None,
    vertices: str = "auto",
    deadline: float | None = None,
) -> Decomposition | None: ...
def block_decomposition(
    graph: DemandGraph,
    C: int,
    *,
    best_effort: bool = False,
    rng: np.random.Generator | None = None,
    vertices: str = "auto",
    deadline: float | None = None,
) -> Decomposition | None:
    """Decompose block by block (Corollary 2); valid whenever every wanted arm has >= C+1 users.

    The blocks are chosen on the edges; each is then decomposed on its dense model, N users x its arms. The
    method refuses (:class:`~anondecomp.MethodNotApplicableError`, one line) when its largest block's model is
    above :data:`~anondecomp.validation.DENSE_CELLS` cells, before building any, or when its assignments x
    users would pass :data:`~anondecomp.validation.OUTPUT_CELLS` (one assignment per block at least).

    ``deadline`` (a :func:`time.perf_counter` value, from ``auto``'s time limit) makes it give up and return
    ``None`` once passed: on graphs with hundreds of thin arms the search for blocks and their faces takes
    minutes.

    Examples
    --------
    >>> import numpy as np
    >>> g = DemandGraph.from_batched(12, np.ones((4, 3), bool))
    >>> d = block_decomposition(g, C=1)
    >>> d.info["blocks"], d.total_assignments
    (2, 12)
    """
    start = time.perf_counter()
    prep = prepare(graph, C, best_effort)
    N = graph.n_users
    arms = np.flatnonzero(np.bincount(graph.edge_arms[prep.edge_required > 0], minlength=graph.n_arms) > 0)
    degrees = graph.arm_degrees
    index = arm_index(graph)
    chosen: list[Face] = []
    for n_blocks in range(1, len(arms) + 1):
        chosen = []
        if deadline is not None and time.perf_counter() > deadline:
            return None
        for block in partition_arms(arms, degrees, n_blocks):
            face = block_face(prep, index, block)
            cols = np.bincount(graph.edge_arms[face.edges], weights=face.x, minlength=graph.n_arms)[block]
            if (cols < prep.C + 1 - 1e-12).any():
                break
            chosen.append(face)
        else:
            break
    if chosen:
        check_model_cells(N, max(len(f.arms) for f in chosen), "block", "its largest block's point")
        check_output_cells(len(chosen), N, "block", "one per block, at least", noun="assignments")
    parts, mults, routes = [], [], []
    rows = 0
    for face in chosen:
        if deadline is not None and time.perf_counter() > deadline:
            return None
        a, m, route = decompose_face(prep, face, rng, vertices)
        rows += len(a)
        check_output_cells(rows, N, "block", "its blocks' assignments so far")
        parts.append(a)
        mults.append(m)
        routes.append(route)
    if not chosen:  # best effort with no coverable demand: the empty decomposition, as the other methods give
        parts, mults = [np.empty((0, N), dtype=arm_dtype(graph.n_arms))], [np.empty(0, np.int64)]
    a, m, repaired = repair(prep, np.concatenate(parts), np.concatenate(mults))
    return Decomposition(
        graph,
        prep.C,
        "block",
        a,
        m,
        uncovered=prep.uncovered,
        wall_time=time.perf_counter() - start,
        info={
            "blocks": len(chosen),
            "block_arms": [graph.arm_names(f.arms) for f in chosen],
            "routes": routes,
            "repaired": repaired,
        },
    )
