"""Block decomposition (paper 000, Corollary 2 and Lemma 6; spec 4.5): alpha = ceil(K(C+1)/U).

Split the wanted arms into blocks S_1..S_b. Within block a every user spreads its time over
A_i ∩ S_a, i.e. w(a)_ij = w_ij / sum_{j' in S_a} w_ij'; when every column of w(a) sums to at least C+1,
w(a) is in P_C(S_a) and is decomposed like the polytope method; blocks run one after the other.
Blocks of at most floor(U/(C+1)) arms always qualify (Lemma 6, with U = min_j |B_j|). The paper leaves the
block choice free [spec DECISION]: we try b = 1, 2, ... balanced blocks (arms sorted by |B_j| and dealt
round-robin, so every block gets a mix of popular and rare arms) and keep the first b whose blocks all
qualify, which is never more than ceil(K / floor(U/(C+1))) and often fewer.
"""

from __future__ import annotations

import time

import numpy as np

from anondecomp.graph import DemandGraph
from anondecomp.methods._common import decompose_face, pad_point, repair
from anondecomp.result import Decomposition, arm_dtype
from anondecomp.validation import Prepared, prepare


def partition_arms(arms: np.ndarray, degrees: np.ndarray, n_blocks: int) -> list[np.ndarray]:
    """Deal arms, most popular first, round-robin (snake order) into ``n_blocks`` blocks of equal size ±1."""
    ranked = arms[np.argsort(-degrees[arms], kind="stable")]
    pos = np.arange(len(ranked))
    lap, step = divmod(pos, n_blocks)
    block_of = np.where(lap % 2 == 0, step, n_blocks - 1 - step)
    return [np.sort(ranked[block_of == b]) for b in range(n_blocks)]


def _block_point(prep: Prepared, block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(required restricted to the block, Lemma 6's point w(a) with rows normalised over the block; a user
    with no demand in the block but support there pads it, :func:`~anondecomp.methods._common.pad_point`)."""
    mask = np.zeros(prep.graph.n_arms, dtype=bool)
    mask[block] = True
    req = np.where(mask[None, :], prep.required, 0)
    w = np.where(req > 0, prep.graph.weights, 0.0)
    rows = w.sum(axis=1, keepdims=True)
    return req, pad_point(prep.graph, req, np.divide(w, rows, out=np.zeros_like(w), where=rows > 0), mask, prep.C)


def block_decomposition(graph: DemandGraph, C: int, *, best_effort: bool = False,
                        rng: np.random.Generator | None = None, vertices: str = "auto",
                        deadline: float | None = None) -> Decomposition | None:
    """Decompose block by block (Corollary 2); valid whenever every wanted arm has >= C+1 users.

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
    arms = np.flatnonzero(prep.required.max(axis=0) > 0)
    degrees = graph.arm_degrees
    chosen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for n_blocks in range(1, len(arms) + 1):
        chosen = []
        if deadline is not None and time.perf_counter() > deadline:
            return None
        for block in partition_arms(arms, degrees, n_blocks):
            req, x = _block_point(prep, block)
            if (x[:, block].sum(axis=0) < prep.C + 1 - 1e-12).any():
                break
            chosen.append((block, req, x))
        else:
            break
    parts, mults, routes = [], [], []
    for block, req, x in chosen:
        if deadline is not None and time.perf_counter() > deadline:
            return None
        open_arms = np.zeros(graph.n_arms, dtype=bool)
        open_arms[block] = True
        a, m, route = decompose_face(prep, req, x, open_arms, rng, vertices)
        parts.append(a)
        mults.append(m)
        routes.append(route)
    if not chosen:  # best effort with no coverable demand: the empty decomposition, as the other methods give
        parts, mults = [np.empty((0, graph.n_users), dtype=arm_dtype(graph.n_arms))], [np.empty(0, np.int64)]
    a, m, repaired = repair(prep, np.concatenate(parts), np.concatenate(mults))
    return Decomposition(graph, prep.C, "block", a, m, uncovered=prep.uncovered,
                         wall_time=time.perf_counter() - start,
                         info={"blocks": len(chosen), "block_arms": [graph.arm_names(b) for b, _, _ in chosen],
                               "routes": routes, "repaired": repaired})
