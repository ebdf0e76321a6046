"""One entry point for every decomposition method, in the style of ``scipy.optimize.minimize(method=...)``."""

from __future__ import annotations

import numpy as np

from anondecomp.errors import InvalidInputError
from anondecomp.graph import DemandGraph
from anondecomp.methods import (
    auto_decomposition,
    block_decomposition,
    greedy_decomposition,
    optimal_decomposition,
    polytope_decomposition,
    randomized_decomposition,
)
from anondecomp.result import Decomposition

METHODS = ("auto", "greedy", "block", "polytope", "randomized", "optimal")


def decompose(graph: DemandGraph, C: int, method: str = "auto", *, rng: np.random.Generator | None = None,
              seed: int | None = 0, best_effort: bool = False, vertices: str = "auto",
              time_limit: float | None = None) -> Decomposition:
    """Compute a C-anonymous decomposition of ``graph`` (paper 000, Section 3).

    Parameters
    ----------
    graph : the demand graph (:class:`~anondecomp.DemandGraph`).
    C : anonymity parameter (>= 1): an arm is informative only with at least C+1 users on it.
    method : ``"greedy"`` (alpha = K), ``"block"`` (alpha = ceil(K(C+1)/U)), ``"polytope"`` (alpha = 1, needs
        every column of w/D to sum to >= C+1), ``"randomized"`` (the paper's simulation baseline), or
        ``"auto"``: polytope when it applies, else block; ``"optimal"`` (column generation and an integer
        face program, spec 4.7; certified lower bound in ``result.info["lp_lower_bound"]``).
    rng, seed : randomness for ``randomized`` (and for retries of the schedule); ``rng`` wins.
    best_effort : cover what can be covered when some arm is wanted by at most C users, and list the
        rest in ``result.uncovered`` instead of raising :class:`~anondecomp.InfeasibleError`.
    vertices : for polytope and block, how vertices of P_C are found: ``"auto"`` (phase schedule, exact
        Carathéodory when a slot comes out thin), ``"schedule"`` or ``"caratheodory"``.
    time_limit : seconds, for ``optimal`` only (best decomposition found, with its gap).

    Returns
    -------
    Decomposition : distinct assignments with integer multiplicities; see its attributes.

    Examples
    --------
    >>> import numpy as np, anondecomp
    >>> active = np.array([[1, 1], [1, 0], [0, 1], [1, 1], [1, 1], [1, 1]], bool)
    >>> g = anondecomp.DemandGraph.from_batched(10, active)
    >>> res = anondecomp.decompose(g, C=1)
    >>> res.method, anondecomp.verify(g, 1, res).valid
    ('polytope', True)
    """
    if method not in METHODS:
        raise InvalidInputError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    rng = rng if rng is not None else np.random.default_rng(seed)
    if method == "auto":
        return auto_decomposition(graph, C, best_effort=best_effort, rng=rng, vertices=vertices)
    if method == "greedy":
        return greedy_decomposition(graph, C, best_effort=best_effort)
    if method == "randomized":
        return randomized_decomposition(graph, C, rng=rng, best_effort=best_effort)
    if method == "optimal":
        return optimal_decomposition(graph, C, best_effort=best_effort, time_limit=time_limit, rng=rng,
                                     vertices=vertices)
    solver = polytope_decomposition if method == "polytope" else block_decomposition
    return solver(graph, C, best_effort=best_effort, rng=rng, vertices=vertices)
