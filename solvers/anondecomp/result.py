"""The decomposition result: distinct assignments with integer multiplicities (Section 3.2).

Storing distinct assignments with multiplicities rather than R explicit rows is a choice of this
implementation: the paper does not say how a decomposition is represented.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

from anondecomp.errors import InvalidInputError
from anondecomp.graph import DemandGraph, exact_sum
from anondecomp.validation import DENSE_CELLS, check_graph, check_int, check_int_array, check_str, checked

_CHUNK = 1 << 22  # (assignment, user) entries checked against the support at once
_TABLE_CELLS = DENSE_CELLS  # users x arms up to which the support check uses a bitmap (50 MB at most)
_SLICE_CELLS = 1 << 24  # users x arms of a slice of users when the whole bitmap would be larger (16 MB)
_SLICE_USERS = 1024  # fewest users of a slice (fewer: so many arms that binary searches are cheaper)


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

    def __post_init__(self) -> None:
        """Check the structure (never the coverage: :func:`~anondecomp.verify` does that): the graph, C >= 1,
        an (n, N) integer array of arms in range and on each user's support, (n,) integer multiplicities
        >= 1, (m, 2) uncovered pairs in range. The arrays are kept as read-only views."""
        graph = check_graph("graph", self.graph)
        object.__setattr__(self, "C", check_int("C", self.C, lo=1))
        check_str("method", self.method)
        a = check_int_array("assignments", self.assignments, 2)
        m = check_int_array("multiplicities", self.multiplicities, 1)
        u = (
            check_int_array("uncovered", self.uncovered, 2)
            if np.size(self.uncovered)
            else np.asarray(self.uncovered).reshape(0, 2).astype(np.int64)
        )
        N, K = graph.shape
        if a.shape[1] != N or len(m) != len(a):
            raise InvalidInputError(
                f"a Decomposition needs (n, {N}) assignments and (n,) multiplicities, got {a.shape} and {m.shape}"
            )
        if len(m) and min(m) < 1:
            raise InvalidInputError(
                f"multiplicities must be integers >= 1, got {min(m)} at position {int(np.argmin(m))}"
            )
        if u.shape[1] != 2 or (len(u) and ((u[:, 0] < 0) | (u[:, 0] >= N) | (u[:, 1] < 0) | (u[:, 1] >= K)).any()):
            raise InvalidInputError("uncovered must be (m, 2) (user, arm) index pairs of the graph")
        _check_on_support(graph, a)
        if not isinstance(self.info, dict):
            raise InvalidInputError(f"info must be a dict, got {type(self.info).__name__}")
        for name, arr in (("assignments", a), ("multiplicities", m), ("uncovered", u)):
            view = arr.view()
            view.flags.writeable = False
            object.__setattr__(self, name, view)

    @classmethod
    def _unchecked(
        cls,
        graph: DemandGraph,
        C: int,
        method: str,
        assignments: np.ndarray,
        multiplicities: np.ndarray,
        **rest: object,
    ) -> Decomposition:
        """A Decomposition built without the structural checks: for tests that hand the verifiers malformed
        schedules (arms off the support) on purpose. Never used by the package itself."""
        self = cls.__new__(cls)
        fields = {"uncovered": np.empty((0, 2), dtype=np.int64), "wall_time": 0.0, "info": {}, **rest}
        for name, value in {
            "graph": graph,
            "C": C,
            "method": method,
            "assignments": np.asarray(assignments),
            "multiplicities": np.asarray(multiplicities),
            **fields,
        }.items():
            object.__setattr__(self, name, value)
        return self

    def _annotated(self, wall_time: float | None = None, **info: object) -> Decomposition:
        """A copy with another wall time and more ``info`` entries: the arrays are this one's, already checked
        (the structural check of a large schedule takes seconds)."""
        out = copy.copy(self)
        object.__setattr__(out, "info", {**self.info, **info})
        if wall_time is not None:
            object.__setattr__(out, "wall_time", float(wall_time))
        return out

    @property
    def total_assignments(self) -> int:
        return exact_sum(self.multiplicities)

    @property
    def n_distinct(self) -> int:
        return int(self.multiplicities.size)

    @property
    def lower_bound(self) -> int:
        """``max_i sum_j ceil(w_ij)``, or the bound of the constraints the decomposition was made under
        (``info["lower_bound"]``: with a capacity, :func:`anondecomp.capacity.capacity_lower_bound`)."""
        return int(self.info.get("lower_bound", self.graph.lower_bound))

    @property
    def ratio(self) -> float:
        """R / lower bound (1.0 is optimal; also when no user has demand and R = 0)."""
        if self.lower_bound == 0:
            return 1.0 if self.total_assignments == 0 else float("inf")
        return self.total_assignments / self.lower_bound

    @checked()
    def summary(self) -> str:
        """A human-readable report: method, size, R, lower bound, their ratio, distinct assignments, wall time.

        Returns
        -------
        str
            One ``label value`` line per quantity, plus the number of uncovered pairs in best-effort mode, and
            with absent users (``decompose(..., absence=A)``) the absence, the confidence and the arms at risk.

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
        lines = [
            f"method               {self.method}",
            f"users x arms         {self.graph.n_users} x {self.graph.n_arms}, C = {self.C}",
            f"R (assignments)      {self.total_assignments}",
            f"lower bound          {self.lower_bound}   "
            + ("(with capacity: also max_j sum_i w_ij / M_j)" if "capacity" in self.info else "(max_i sum_j w_ij)"),
            f"R / lower bound      {self.ratio:.4f}",
            f"distinct assignments {self.n_distinct}",
            f"wall time            {self.wall_time:.3f} s",
        ]
        if len(self.uncovered):
            lines.append(f"uncovered pairs      {len(self.uncovered)} (best effort)")
        if "capacity" in self.info:
            cap = np.asarray(self.info["capacity"])
            lines.append(
                f"capacity             {int(cap.min())}"
                + ("" if cap.min() == cap.max() else f" to {int(cap.max())}")
                + f" users per arm and assignment ({self.info.get('passes', 1)} pass(es))"
            )
        if "exposure" in self.info:
            x = self.info["exposure"]
            lines += [
                f"exposure (blocks)    largest {x['exposure_max']}, mean {x['exposure_mean']:.1f}; demand largest "
                f"{x['demand_max']}, mean {x['demand_mean']:.1f}",
                f"surplus exposure     largest {x['surplus_max']} (certified minimum {x['surplus_bound']}); total "
                f"exposure {x['exposure_total']} (certified minimum {x['exposure_total_bound']})",
            ]
        if "absence" in self.info:
            from anondecomp.absence import describe_absence

            size = self.info.get("robust_size")
            lines += [
                f"absence              {describe_absence(self.info['absence'])}, confidence "
                f"{self.info['confidence']:g}" + (f" (robust group size {size})" if size is not None else ""),
                f"arms at risk         {len(self.info.get('at_risk_arms', ()))} (their groups hold every user of "
                "the arm)",
            ]
        return "\n".join(lines)


def _check_on_support(graph: DemandGraph, a: np.ndarray) -> None:
    """Refuse an arm index outside [0, K) or off its user's support, naming the assignment, user and arm
    (chunked: memory O(chunk), never assignments x users at once in int64)."""
    N, K = graph.shape
    if not a.size:
        return
    lo_hi = (int(a.min()), int(a.max()))
    if lo_hi[0] < 0 or lo_hi[1] >= K:
        r, i = np.argwhere((a < 0) | (a >= K))[0]
        raise InvalidInputError(f"assignment {r} puts user {graph.users[i]!r} on arm index {a[r, i]}, outside [0, {K})")
    # a bitmap of the support, one gather per entry instead of a binary search: of every user at once when
    # users x arms is small, else of a slice of users at a time (memory O(_SLICE_CELLS), work O(edges + entries))
    slice_users = N if N * K <= _TABLE_CELLS else _SLICE_CELLS // K
    if slice_users < min(N, _SLICE_USERS):  # so many arms that a slice would be a few users: binary searches
        _check_by_search(graph, a)
        return
    table = np.zeros(slice_users * K, dtype=bool)
    for u0 in range(0, N, slice_users):
        u1 = min(N, u0 + slice_users)
        e0, e1 = int(graph.indptr[u0]), int(graph.indptr[u1])
        keys = (graph.edge_users[e0:e1].astype(np.int64) - u0) * K + graph.edge_arms[e0:e1]
        table[keys] = True
        base = np.arange(u1 - u0, dtype=np.int64) * K
        step = max(1, _CHUNK // (u1 - u0))
        for lo in range(0, len(a), step):
            off = ~table[base[None, :] + a[lo : lo + step, u0:u1]]
            if off.any():
                r, i = np.argwhere(off)[0]
                _off_support(graph, a, lo + r, u0 + i)
        table[keys] = False


def _check_by_search(graph: DemandGraph, a: np.ndarray) -> None:
    """:func:`_check_on_support` by a binary search of each entry among the sorted (user, arm) keys."""
    K = graph.n_arms
    keys = graph.edge_users.astype(np.int64) * K + graph.edge_arms
    users = np.arange(graph.n_users, dtype=np.int64) * K
    step = max(1, _CHUNK // max(graph.n_users, 1))
    for lo in range(0, len(a), step):
        want = users[None, :] + a[lo : lo + step].astype(np.int64)
        at = np.minimum(np.searchsorted(keys, want), max(len(keys) - 1, 0))
        off = keys[at] != want
        if off.any():
            r, i = np.argwhere(off)[0]
            _off_support(graph, a, lo + r, i)


def _off_support(graph: DemandGraph, a: np.ndarray, r: int, i: int) -> None:
    raise InvalidInputError(
        f"assignment {r} puts user {graph.users[i]!r} on arm {graph.arms[a[r, i]]!r}, which is not in its support"
    )


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
