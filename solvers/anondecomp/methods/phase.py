"""The phase route of ``auto``: large batched graphs at the lower bound, in time linear in their support.

Paper 000 (Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022),
Section 3: a batched graph (demand D spread over every arm of A_i) whose columns of w / D sum to at least C+1
lies in P_C (Corollary 1). Its phase schedule (:func:`anondecomp.phases.phase_rows`: every user takes its arms
one after the other, phases rotated among users with as many arms) then meets the lower bound
L = max_i |A_i| ceil(D / |A_i|) without building the polytope point. Users are dealt into shards of at most
:data:`~anondecomp.phases.SHARD_USERS` (:func:`~anondecomp.phases.make_shards`: every arm holds 0 or at least
C+1 users of a shard), each shard scheduled on its own and the shards run in the same rounds: R is the
longest shard's. A shard whose phase schedule (and its repair) is not valid is decomposed by ``fallback``.

The command line's sharded path (:func:`anondecomp.scale.decompose_sharded`) runs the same shards with the
same rule and seed, so a streamed table written there and the same graph decomposed here give one schedule.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from anondecomp.graph import DemandGraph
from anondecomp.phases import (
    SHARD_USERS,
    BatchedSupport,
    batched_support,
    make_shards,
    phase_solution,
    rows_to_assignments,
)
from anondecomp.result import Decomposition, arm_dtype, compress
from anondecomp.validation import OUTPUT_CELLS

PHASE_PAIRS = 1 << 16
"""Edges above which ``auto`` takes the phase route on a batched graph: there the phase schedule takes about
0.01 s against the polytope method's 0.05-0.5 s (about 6,000 users x 20 arms)."""
PHASE_ARMS = 64
"""Arms up to which a batched graph takes the phase route even where its columns fail the polytope condition
(the repair usually mends a few thin stretches); a graph of more arms that fails it is a log of unit weights
whose thin items the phase schedule cannot serve."""


def phase_support(graph: DemandGraph, C: int) -> BatchedSupport | None:
    """The graph's batched support when the phase route suits it: more than :data:`PHASE_PAIRS` edges, batched
    (:func:`~anondecomp.phases.batched_support`), no thin arm, and at most :data:`PHASE_ARMS` arms or every
    column of w / D summing to at least C+1; else ``None``."""
    if graph.nnz <= PHASE_PAIRS or len(graph.thin_arms(C)):
        return None
    data = batched_support(graph)
    if data is None or not (len(data.arms) <= PHASE_ARMS or data.phase_fits(C)):
        return None
    return data


def phase_decomposition(
    graph: DemandGraph,
    data: BatchedSupport,
    C: int,
    rng: np.random.Generator | None,
    fallback: Callable[[DemandGraph], Decomposition],
) -> Decomposition | None:
    """Shards scheduled by phases (or, where their phases are not valid, by ``fallback`` on the shard's batched
    graph, as the sharded path's shards fall back), merged in the same rounds; ``None`` when the merged
    assignments would exceed :data:`~anondecomp.validation.OUTPUT_CELLS` cells.

    ``data`` is :func:`phase_support` of ``graph``; ``rng`` deals users to shards (as the sharded path's seed).
    The result's ``method`` names the shards' methods (``"phase"``, ``"phase+recruit"`` or a fallback's), as the
    sharded path's summary does.
    """
    N, L, D = graph.n_users, data.lower_bound, data.total_demand
    shard = make_shards(data.support, C, max(1, -(-N // SHARD_USERS)), 0 if rng is None else rng)  # as seed 0
    members = [m for m in (np.flatnonzero(shard == s) for s in range(int(shard.max()) + 1)) if len(m)]
    pieces, methods = [], set()
    for m in members:
        found = phase_solution(data.support[m], D, L, C)
        if found is not None:
            pieces.append((m, *rows_to_assignments(found[0], len(m), L)))
            methods.add(found[1])
        else:
            res = fallback(DemandGraph.from_batched(D, data.support[m]))
            pieces.append((m, res.assignments, res.multiplicities))
            methods.add(res.method)
    R = max(int(lengths.sum()) for _, _, lengths in pieces)
    ends = [np.cumsum(lengths) for _, _, lengths in pieces]
    for e in ends:  # a shorter shard's last assignment runs on to R (a group only gains users)
        e[-1] = R
    cuts = np.unique(np.concatenate([[0], *ends]))
    if (len(cuts) - 1) * N > OUTPUT_CELLS:
        return None
    out = np.empty((len(cuts) - 1, N), dtype=arm_dtype(graph.n_arms))
    for (m, assignments, _), e in zip(pieces, ends, strict=True):
        out[:, m] = assignments[np.searchsorted(e, cuts[1:], side="left")]
    a, mult = compress(out, np.diff(cuts))
    method = "+".join(sorted(methods))
    return Decomposition(graph, C, method, a, mult, info={"shards": len(members)})
