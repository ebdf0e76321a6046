"""The aggregate relaxation of anonymous decomposition as a cvxpy model, for users to extend.

Variables, for every (user, arm) pair the user may play on an arm someone wants, and every arm:

* ``z_ij``: rounds (assignments) in which user i is counted, informatively, on arm j;
* ``y_j``: rounds in which arm j is open, i.e. holds at least C+1 users;
* ``R``: the number of rounds.

    minimise R  subject to  ceil(w_ij) <= z_ij <= y_j <= R,   sum_j z_ij <= R,   sum_i z_ij >= (C+1) y_j.

Every C-anonymous decomposition with R assignments gives a feasible point (count, for each pair, the
assignments in which it is informative, and for each arm those in which it is open: a user is on one arm per
assignment and an open arm holds at least C+1 users), so the optimum is a lower bound on R for every method.
It is weaker than the certified column-generation bound of :func:`anondecomp.lp_lower_bound` (which
prices whole vertices of the C-anonymity polytope) but it is the model a user would write, and a cvxpy
``Problem`` can take side constraints (per-arm capacities, per-user limits, ...) before it is solved with
any installed solver; HiGHS (scipy's build) is the default.

Reference: Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems" (NeurIPS 2022),
Section 3.2 (the decomposition problem).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from anondecomp.errors import InvalidInputError
from anondecomp.graph import DemandGraph
from anondecomp.validation import prepare


@dataclass(frozen=True, eq=False)
class AggregateRelaxation:
    """The cvxpy model; extend ``constraints`` or build a new ``cvxpy.Problem`` from its parts.

    Attributes
    ----------
    problem : the ``cvxpy.Problem`` (minimise ``R``).
    z : cvxpy Variable, one entry per wanted (user, arm) pair, in the order of ``pairs``.
    y : cvxpy Variable, one entry per arm.
    R : cvxpy Variable, the number of rounds.
    pairs : (P, 2) int array of (user, arm) indices of ``z``.
    user_rows, arm_rows : sparse (N, P) and (K, P) incidence matrices (``user_rows @ z`` is each user's
        informative rounds, ``arm_rows @ z`` each arm's informative users summed over rounds).
    """

    problem: Any
    z: Any
    y: Any
    R: Any
    pairs: np.ndarray
    user_rows: sp.csr_matrix
    arm_rows: sp.csr_matrix

    def with_constraints(self, *extra) -> AggregateRelaxation:
        """The same model with side constraints added (cvxpy constraints on ``z``, ``y``, ``R``)."""
        import cvxpy as cp

        problem = cp.Problem(self.problem.objective, [*self.problem.constraints, *extra])
        return AggregateRelaxation(problem, self.z, self.y, self.R, self.pairs, self.user_rows, self.arm_rows)

    def solve(self, solver: str | None = "SCIPY", **kwargs) -> float:
        """Solve and return the optimal R: by default with HiGHS through scipy's build of it (cvxpy's
        ``"SCIPY"`` solver; cvxpy's ``"HIGHS"`` goes through highspy, which prints a banner on stdout), or
        with any solver cvxpy has installed.

        Raises :class:`~anondecomp.InvalidInputError` if the problem (for instance with side constraints a
        user added) is infeasible or unbounded.
        """
        value = self.problem.solve(solver=solver, **kwargs)
        if self.problem.status not in ("optimal", "optimal_inaccurate"):
            raise InvalidInputError(f"the aggregate relaxation is {self.problem.status}")
        return float(value)


def aggregate_relaxation(graph: DemandGraph, C: int, *, best_effort: bool = False) -> AggregateRelaxation:
    """Build the aggregate relaxation of ``graph`` (module docstring) with sparse constraints.

    Parameters
    ----------
    graph : the demand graph.
    C : anonymity parameter.
    best_effort : leave out arms wanted by at most C users (they can never open) instead of raising
        :class:`~anondecomp.InfeasibleError`.

    Examples
    --------
    >>> import numpy as np, cvxpy as cp, anondecomp
    >>> active = np.repeat(np.eye(2, dtype=bool), 4, axis=0)   # 4 users want arm 0, 4 want arm 1
    >>> model = aggregate_relaxation(anondecomp.DemandGraph.from_batched(12, active), C=3)
    >>> round(model.solve(), 6)
    12.0
    >>> one_group = model.with_constraints(cp.sum(model.y) <= model.R)   # at most one open arm per round
    >>> round(one_group.solve(), 6)
    24.0
    """
    try:
        import cvxpy as cp
    except ImportError:
        raise ImportError("the aggregate relaxation needs cvxpy: pip install 'anonbandits[model]'") from None
    prep = prepare(graph, C, best_effort)
    # pairs with demand, and the pairs a user may play without demand on a wanted arm (it pads that arm's
    # groups: z_ij counts towards sum_i z_ij >= (C+1) y_j with z_ij >= 0); with no such pairs the model is
    # the demand's alone
    req = prep.edge_required
    wanted = np.zeros(graph.n_arms, dtype=bool)
    wanted[graph.edge_arms[req > 0]] = True
    keep = (req > 0) | wanted[graph.edge_arms]  # the graph's edges are its support, in (user, arm) order
    users, arms, req = graph.edge_users[keep], graph.edge_arms[keep], req[keep]
    n_pairs = len(users)
    ones = np.ones(n_pairs)
    user_rows = sp.csr_matrix((ones, (users, np.arange(n_pairs))), shape=(graph.n_users, n_pairs))
    arm_rows = sp.csr_matrix((ones, (arms, np.arange(n_pairs))), shape=(graph.n_arms, n_pairs))
    z, y, R = cp.Variable(n_pairs), cp.Variable(graph.n_arms), cp.Variable()
    constraints = [
        z >= req.astype(float),
        z <= y[arms],
        y <= R,
        y >= 0,
        user_rows @ z <= R,
        arm_rows @ z >= (prep.C + 1) * y,
    ]
    return AggregateRelaxation(
        cp.Problem(cp.Minimize(R), constraints), z, y, R, np.stack([users, arms], axis=1), user_rows, arm_rows
    )
