"""``auto``: the polytope method when it applies (Corollary 1), else the block method (Corollary 2)."""

from __future__ import annotations

import numpy as np

from anondecomp.graph import DemandGraph
from anondecomp.methods.block import block_decomposition
from anondecomp.methods.polytope import polytope_applies, polytope_decomposition
from anondecomp.result import Decomposition
from anondecomp.validation import prepare


def auto_decomposition(graph: DemandGraph, C: int, *, best_effort: bool = False,
                       rng: np.random.Generator | None = None, vertices: str = "auto") -> Decomposition:
    """Polytope (alpha = 1) when every column of w/D sums to >= C+1, else block (alpha = ceil(K(C+1)/U)).

    The result's ``method`` names the one used.
    """
    prep = prepare(graph, C, best_effort)
    solver = block_decomposition if len(polytope_applies(graph, prep.C, prep.required)) else polytope_decomposition
    return solver(graph, C, best_effort=best_effort, rng=rng, vertices=vertices)
