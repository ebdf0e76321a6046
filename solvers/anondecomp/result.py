"""The decomposition result: distinct assignments with integer multiplicities (spec section 3 [DECISION])."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from anondecomp.graph import DemandGraph, exact_sum


def arm_dtype(n_arms: int) -> np.dtype:
    """Smallest signed integer type holding arm indices: assignments can be large (distinct x users)."""
    for dt in (np.int8, np.int16, np.int32):
        if n_arms <= np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.int64)


@dataclass(frozen=True, eq=False)
class Decomposition:
    """A C-anonymous decomposition of a demand graph.

    Derived: ``total_assignments`` R (the multiplicities' exact sum, a Python int), ``n_distinct``,
    ``lower_bound`` (``max_i sum_j ceil(w_ij)``: no decomposition is shorter), ``ratio`` (R / lower bound)
    and ``summary()``.

    Parameters
    ----------
    graph : DemandGraph
        The graph it decomposes.
    C : int
        The anonymity parameter.
    method : str
        The method that produced it.
    assignments : numpy.ndarray
        (n_distinct, N) integer; ``assignments[r, i]`` is user i's arm in assignment r. Every assignment is a
        total function (every user on one arm of its support).
    multiplicities : numpy.ndarray
        (n_distinct,) int64, each >= 1.
    uncovered : numpy.ndarray, optional
        (m, 2) int (user, arm) pairs that cannot be covered (only with ``best_effort``).
    wall_time : float, optional
        Seconds spent by the method.
    info : dict, optional
        Method-specific details (e.g. blocks used, fallback taken).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np, anondecomp
    >>> res = anondecomp.decompose(anondecomp.DemandGraph.from_batched(10, np.ones((4, 2), bool)), C=1)
    >>> res.total_assignments, res.lower_bound, res.multiplicities.tolist()
    (10, 10, [5, 5])
    """

    graph: DemandGraph
    C: int
    method: str
    assignments: np.ndarray
    multiplicities: np.ndarray
    uncovered: np.ndarray = field(default_factory=lambda: np.empty((0, 2), dtype=np.int64))
    wall_time: float = 0.0
    info: dict = field(default_factory=dict)

    @property
    def total_assignments(self) -> int:
        return exact_sum(self.multiplicities)

    @property
    def n_distinct(self) -> int:
        return int(self.multiplicities.size)

    @property
    def lower_bound(self) -> int:
        return self.graph.lower_bound

    @property
    def ratio(self) -> float:
        """R / lower bound (1.0 is optimal; also when no user has demand and R = 0)."""
        if self.lower_bound == 0:
            return 1.0 if self.total_assignments == 0 else float("inf")
        return self.total_assignments / self.lower_bound

    def summary(self) -> str:
        """A human-readable report: method, size, R, lower bound, their ratio, distinct assignments, wall time.

        Returns
        -------
        str
            One ``label value`` line per quantity, plus the number of uncovered pairs in best-effort mode.

        Examples
        --------
        >>> import numpy as np, anondecomp
        >>> res = anondecomp.decompose(anondecomp.DemandGraph.from_batched(10, np.ones((4, 2), bool)), C=1)
        >>> for line in res.summary().splitlines()[1:4]:
        ...     print(line)
        users x arms         4 x 2, C = 1
        R (assignments)      10
        lower bound          10   (max_i sum_j w_ij)
        """
        lines = [f"method               {self.method}",
                 f"users x arms         {self.graph.n_users} x {self.graph.n_arms}, C = {self.C}",
                 f"R (assignments)      {self.total_assignments}",
                 f"lower bound          {self.lower_bound}   (max_i sum_j w_ij)",
                 f"R / lower bound      {self.ratio:.4f}",
                 f"distinct assignments {self.n_distinct}",
                 f"wall time            {self.wall_time:.3f} s"]
        if len(self.uncovered):
            lines.append(f"uncovered pairs      {len(self.uncovered)} (best effort)")
        return "\n".join(lines)


def compress(assignments: np.ndarray, multiplicities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge identical assignments (adding their multiplicities) and drop zero multiplicities."""
    keep = multiplicities > 0
    a, m = assignments[keep], multiplicities[keep]
    if len(a) <= 1:
        return a, m.astype(np.int64)
    uniq, inverse = np.unique(a, axis=0, return_inverse=True)
    merged = np.zeros(len(uniq), dtype=np.int64)
    np.add.at(merged, inverse.ravel(), m.astype(np.int64))  # integer sums: bincount's float weights round above 2^53
    return uniq, merged
