"""Exact verification of a decomposition (the properties of a C-anonymous decomposition, Section 3.2).

The paper defines the properties but gives no checker: this exact verifier is a choice of this implementation.

All counting is in integers: a pair's informative count is a sum of integer multiplicities, compared with
``ceil(w_ij)``. Multiplicities may be any positive integers (an object array of Python ints when they do not
fit int64): coverage is summed in float64 only while every partial sum is below 2^53, where float64 is
exact, and in Python integers above. Nothing here trusts the method that produced the decomposition.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from anondecomp.errors import InvalidInputError
from anondecomp.graph import DemandGraph, exact_sum, row_sums
from anondecomp.validation import DENSE_CELLS, check_capacity, checked, drop_uncoverable

_CHUNK = 1 << 24  # entries of (assignments x users) handled at once, bounds the memory of verification
_EDGE_CHUNK = 1 << 21  # ... by edge_coverage, whose eight int64 temporaries per entry then take about 128 MB


@checked()
def coverage(
    assignments: np.ndarray, multiplicities: np.ndarray, C: int, n_arms: int, *, allow_large: bool = False
) -> np.ndarray:
    """Informative samples per (user, arm) that a decomposition gives.

    Pair (i, j) is informative in assignment r when ``assignments[r, i] == j`` and arm j has at least C+1
    users in assignment r; it then earns ``multiplicities[r]`` samples.

    Parameters
    ----------
    assignments : numpy.ndarray
        (n, N) integer arm indices.
    multiplicities : numpy.ndarray
        (n,) positive integers (int64, or an object array of Python ints).
    C : int
        The anonymity parameter (>= 1): an arm is informative only with at least C+1 users on it.
    n_arms : int
        The number of arms K.
    allow_large : bool, optional
        Build the (N, K) result above :data:`~anondecomp.validation.DENSE_CELLS` cells instead of refusing
        (:func:`edge_coverage` counts per edge, without it).

    Returns
    -------
    numpy.ndarray
        An (N, K) int64 matrix (object, of Python ints, above 2^53).

    Raises
    ------
    InvalidInputError
        For malformed assignments or multiplicities, arm indices outside [0, n_arms), C < 1, or an (N, K)
        result above :data:`~anondecomp.validation.DENSE_CELLS` cells without ``allow_large``.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> coverage(np.array([[0, 1, 0, 1], [1, 0, 1, 0]]), np.array([5, 5]), 1, 2).tolist()
    [[5, 5], [5, 5], [5, 5], [5, 5]]
    """
    a = np.asarray(assignments)
    m = np.asarray(multiplicities)
    n, N = a.shape
    if m.shape != (n,) or (n and min(m) < 1):
        raise InvalidInputError(
            f"multiplicities must be one positive integer per assignment ({n}), got shape {m.shape}"
        )
    if a.size and (int(a.min()) < 0 or int(a.max()) >= n_arms):
        raise InvalidInputError(f"assignment entries must be arm indices in [0, n_arms = {n_arms})")
    if N * n_arms > DENSE_CELLS and not allow_large:
        raise InvalidInputError(
            f"coverage builds an (N, n_arms) = {N} x {n_arms} matrix, above DENSE_CELLS = "
            f"{DENSE_CELLS:.0e} cells; pass allow_large=True to build it anyway"
        )
    # float64 bincount is exact while every partial sum stays below 2^53, which the total bounds
    exact_in_float = exact_sum(m) < 2**53
    out = np.zeros(N * n_arms, dtype=np.int64 if exact_in_float else object)
    step = max(1, _CHUNK // max(N, 1))
    for lo in range(0, n, step):
        block = a[lo : lo + step].astype(np.int64)
        r_idx, i_idx = np.nonzero(informative_entries(block, C, n_arms))
        keys = i_idx * n_arms + block[r_idx, i_idx]
        if exact_in_float:
            out += np.bincount(keys, weights=m[lo + r_idx].astype(np.float64), minlength=N * n_arms).astype(np.int64)
        else:
            np.add.at(out, keys, m[lo + r_idx].astype(object))
    return out.reshape(N, n_arms)


def group_sizes(block: np.ndarray, n_arms: int) -> np.ndarray:
    """(b, N) int64: the number of users on each entry's arm in its assignment, for a (b, N) block of assignments.

    A histogram of b x n_arms cells while that is at most a few times the block's entries; past it (many arms,
    few users) the (assignment, arm) keys are sorted instead, so memory stays in the block's entries."""
    at = np.arange(len(block), dtype=np.int64)[:, None] * n_arms + block.astype(np.int64)
    if len(block) * n_arms <= 4 * at.size:
        return np.bincount(at.ravel(), minlength=len(block) * n_arms)[at]
    _, inverse, counts = np.unique(at.ravel(), return_inverse=True, return_counts=True)
    return counts[inverse].reshape(at.shape)


def informative_entries(block: np.ndarray, C: int, n_arms: int) -> np.ndarray:
    """(b, N) bool: whether each entry of a block of assignments sits on an arm with >= C+1 users there."""
    return group_sizes(block, n_arms) >= C + 1


def edge_coverage(
    graph: DemandGraph,
    assignments: np.ndarray,
    multiplicities: np.ndarray,
    C: int,
    informative: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Informative samples per edge of ``graph`` that a decomposition gives, and its off-support placements.

    The sparse form of :func:`coverage`: memory is O(edges + a block of the assignments), never users x arms.

    Parameters
    ----------
    graph : DemandGraph
        The graph whose edges (``graph.edge_users``, ``graph.edge_arms``) are counted.
    assignments : numpy.ndarray
        (n, N) integer arm indices in ``[0, K)``.
    multiplicities : numpy.ndarray
        (n,) positive integers (int64, or an object array of Python ints).
    C : int
        The anonymity parameter.
    informative : callable, optional
        ``informative(block)``: (b, N) bool, whether each entry of a (b, N) block of assignments is in a group
        that gives samples (default: a group of at least C+1 users; with absent users,
        :meth:`anondecomp.absence.Presence.informative`).

    Returns
    -------
    got : numpy.ndarray
        (E,) int64 informative samples per edge (object, of Python ints, above 2^53).
    off : numpy.ndarray
        (m, 2) int64 (assignment, user) entries that put a user on an arm outside its support.

    Examples
    --------
    >>> import numpy as np
    >>> from anondecomp.graph import DemandGraph
    >>> g = DemandGraph.from_weights([[5, 5], [5, 5], [5, 0]])
    >>> got, off = edge_coverage(g, np.array([[0, 0, 0], [1, 1, 0]]), np.array([5, 5]), 1)
    >>> got.tolist(), off.tolist()
    ([5, 5, 5, 5, 5], [])
    """
    a = np.asarray(assignments)
    m = np.asarray(multiplicities)
    n, N = a.shape
    K = graph.n_arms
    keys = graph.edge_users.astype(np.int64) * K + graph.edge_arms
    exact_in_float = exact_sum(m) < 2**53
    got = np.zeros(graph.nnz, dtype=np.int64 if exact_in_float else object)
    off_parts = []
    step = max(1, _EDGE_CHUNK // max(N, 1))
    users = np.arange(N, dtype=np.int64)
    for lo in range(0, n, step):
        block = a[lo : lo + step].astype(np.int64)
        counts = informative_entries(block, C, K) if informative is None else informative(block)
        want = users[None, :] * K + block
        at = np.minimum(np.searchsorted(keys, want), max(len(keys) - 1, 0))
        on = keys[at] == want if len(keys) else np.zeros(want.shape, bool)
        if not on.all():
            r_off, i_off = np.nonzero(~on)
            off_parts.append(np.stack([r_off + lo, i_off], axis=1))
        r_idx, i_idx = np.nonzero(counts & on)
        edge = at[r_idx, i_idx]
        if exact_in_float:
            got += np.bincount(edge, weights=m[lo + r_idx].astype(np.float64), minlength=graph.nnz).astype(np.int64)
        else:
            np.add.at(got, edge, m[lo + r_idx].astype(object))
    off = np.concatenate(off_parts) if off_parts else np.empty((0, 2), dtype=np.int64)
    return got, off


@dataclass(frozen=True)
class VerificationReport:
    """Outcome of :func:`verify`.

    The lists may be cut short (the compact verifier keeps the first 1000); the ``n_*`` counts count them
    all (they default to the lengths of the lists).

    Parameters
    ----------
    valid : bool
        Whether every required pair gets its demand, on its own support, in a well-formed schedule.
    total_assignments : int
        R, the sum of the multiplicities (exact).
    lower_bound : int
        ``max_i sum_j ceil(w_ij)``.
    n_distinct : int
        The number of distinct assignments (rows of a compact schedule).
    deficits : list of tuple
        (user, arm, required, informative) for the pairs below their demand.
    off_support : list of tuple
        (assignment, user, arm) where a user is put on an arm outside its support (for a compact schedule,
        ``unit`` is ``"round"`` and the number is the row's first round).
    problems : list of str, optional
        Schedules that are not total functions of time (overlapping rows, gaps, users without rows).
    n_short : int, optional
        The number of pairs short of their demand.
    n_off_support : int, optional
        The number of off-support placements.
    n_problems : int, optional
        The number of schedule problems.
    unit : str, optional
        ``"assignment"`` or ``"round"`` (compact schedules).
    best_effort : bool, optional
        Verified with ``best_effort=True``.
    uncoverable : list of tuple, optional
        With ``best_effort``: the (user, arm) pairs with demand on arms wanted by at most C users, which were
        not required (the first 1000); every other pair was.
    n_uncoverable : int, optional
        Their number.
    absence : str, optional
        With absent users (``verify(..., absence=A)``, or read from the decomposition): A as given (a number,
        or ``per user (...)``); empty without.
    confidence : float, optional
        Q: a group counts only when it keeps at least C+1 present users with probability >= Q, or holds the
        whole support of an arm at risk.
    robust_size : int, optional
        The smallest robust group when every user has the same absence.
    at_risk : list of str, optional
        The arms at risk (their whole support is not robust): their groups count only with every user of the
        arm's support.
    n_fragile : int, optional
        Groups of at least C+1 users (in distinct assignments) that do not count: below Q and not a whole
        support (-1: not counted, for a compact schedule, whose groups are not named).
    capacity : str, optional
        With a capacity (``verify(..., capacity=M)``, or read from the decomposition): M as given (a number, or
        ``per arm (...)``); empty without.
    over_capacity : list of tuple, optional
        (assignment, arm, users, capacity) where an arm holds more users than its capacity (the first 1000).
    n_over_capacity : int, optional
        Their number.
    max_surplus_exposure : int, optional
        S: no user's exposure may exceed its demand by more than S (:mod:`anondecomp.exposure`).
    over_exposure : list of tuple, optional
        (user, surplus exposure) for the users above S (the first 1000).
    n_over_exposure : int, optional
        Their number.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np, anondecomp
    >>> g = anondecomp.DemandGraph.from_batched(4, np.ones((3, 1), bool))
    >>> report = anondecomp.verify(g, 2, np.zeros((1, 3), int), [3])
    >>> report.valid, report.n_short
    (False, 3)
    """

    valid: bool
    total_assignments: int
    lower_bound: int
    n_distinct: int
    deficits: list[tuple[str, str, int, int]]
    off_support: list[tuple[int, str, str]]
    problems: list[str] = field(default_factory=list)
    n_short: int = -1
    n_off_support: int = -1
    n_problems: int = -1
    unit: str = "assignment"
    best_effort: bool = False
    uncoverable: list[tuple[str, str]] = field(default_factory=list)
    n_uncoverable: int = -1
    absence: str = ""
    confidence: float | None = None
    robust_size: int | None = None
    at_risk: list[str] = field(default_factory=list)
    n_fragile: int = 0
    capacity: str = ""
    over_capacity: list[tuple[int, str, int, int]] = field(default_factory=list)
    n_over_capacity: int = -1
    max_surplus_exposure: int | None = None
    over_exposure: list[tuple[str, int]] = field(default_factory=list)
    n_over_exposure: int = -1

    def __post_init__(self) -> None:
        for count, items in (
            ("n_short", self.deficits),
            ("n_off_support", self.off_support),
            ("n_problems", self.problems),
            ("n_uncoverable", self.uncoverable),
            ("n_over_capacity", self.over_capacity),
            ("n_over_exposure", self.over_exposure),
        ):
            if getattr(self, count) < 0:
                object.__setattr__(self, count, len(items))

    @property
    def ratio(self) -> float:
        if self.lower_bound == 0:  # no user has demand
            return 1.0 if self.total_assignments == 0 else math.inf
        try:
            return self.total_assignments / self.lower_bound
        except OverflowError:  # R may be any integer a file holds; the ratio is then beyond float range
            return math.inf

    @checked()
    def summary(self, limit: int = 20) -> str:
        """A human-readable report: the verdict and totals, then the problems found.

        Parameters
        ----------
        limit : int, optional
            At most this many entries of each list (schedule problems, off-support placements, deficits,
            uncoverable pairs) are shown; the rest are counted in a final ``... and n more`` line. Default 20.

        Returns
        -------
        str
            A first line with the verdict, R, the lower bound, their ratio and the distinct assignments, then
            one indented line per problem shown.

        Examples
        --------
        >>> import numpy as np, anondecomp
        >>> g = anondecomp.DemandGraph.from_batched(4, np.ones((3, 1), bool))
        >>> print(anondecomp.verify(g, 2, np.zeros((1, 3), int), [3]).summary(limit=1))
        INVALID: R = 3, lower bound = 4, R / lower bound = 0.7500, distinct assignments = 1
          user 'u0', arm 'a0': 3 informative samples, needs 4
          ... and 2 more
        """
        head = ("valid" if self.valid else "INVALID") + (" (best effort)" if self.best_effort else "")
        lines = [
            f"{head}: R = {self.total_assignments}, lower bound = {self.lower_bound}, "
            f"R / lower bound = {self.ratio:.4f}, distinct assignments = {self.n_distinct}"
        ]
        if self.best_effort:
            shown = ", ".join(f"({user}, {arm})" for user, arm in self.uncoverable[:limit])
            more = " ..." if self.n_uncoverable > min(limit, len(self.uncoverable)) else ""
            lines.append(
                f"  {self.n_uncoverable} pair(s) not coverable (arm wanted by <= C users), not required"
                + (f": {shown}{more}" if shown else "")
                + "; every other pair is checked"
            )
        if self.absence:
            size = f" (robust size {self.robust_size})" if self.robust_size is not None else ""
            fragile = (
                f"; {self.n_fragile} group(s) of >= C+1 users below it give no samples" if self.n_fragile >= 0 else ""
            )
            lines.append(
                f"  absence {self.absence}, confidence {self.confidence:g}: a group counts when it keeps C+1 present "
                f"users with probability >= {self.confidence:g}{size}; {len(self.at_risk)} arm(s) at risk count "
                f"with their whole support only{fragile}"
            )
        if self.capacity:
            lines.append(f"  capacity {self.capacity}: {self.n_over_capacity} (assignment, arm) above it")
        if self.max_surplus_exposure is not None:
            lines.append(f"  max surplus exposure {self.max_surplus_exposure}: {self.n_over_exposure} user(s) above it")
        for r, arm, load, cap in self.over_capacity[:limit]:
            lines.append(f"  {self.unit} {r}: arm {arm!r} holds {load} users, above its capacity {cap}")
        for user, surplus in self.over_exposure[:limit]:
            lines.append(f"  user {user!r}: surplus exposure {surplus}, above {self.max_surplus_exposure}")
        for text in self.problems[:limit]:
            lines.append(f"  {text}")
        for r, user, arm in self.off_support[:limit]:
            lines.append(f"  {self.unit} {r}: user {user!r} is on arm {arm!r}, which it has no demand for")
        for user, arm, req, got in self.deficits[:limit]:
            lines.append(f"  user {user!r}, arm {arm!r}: {got} informative samples, needs {req}")
        hidden = (
            self.n_problems
            + self.n_off_support
            + self.n_short
            + self.n_over_capacity
            + self.n_over_exposure
            - len(self.problems[:limit])
            - len(self.off_support[:limit])
            - len(self.deficits[:limit])
            - len(self.over_capacity[:limit])
            - len(self.over_exposure[:limit])
        )
        if hidden:
            lines.append(f"  ... and {hidden} more")
        return "\n".join(lines)


@checked()
def verify(
    graph: DemandGraph,
    C: int,
    assignments,
    multiplicities=None,
    *,
    required: np.ndarray | None = None,
    best_effort: bool = False,
    absence=None,
    confidence: float | None = None,
    capacity=None,
    max_surplus_exposure: int | None = None,
) -> VerificationReport:
    """Check a decomposition exactly, in integer arithmetic.

    Parameters
    ----------
    graph : DemandGraph
        The demand graph.
    C : int
        The anonymity parameter; a pair is informative only on an arm with >= C+1 users (elicitation leaves
        one user out of a group and must still observe >= C).
    assignments : Decomposition or numpy.ndarray
        A :class:`~anondecomp.Decomposition`, or an (n, N) integer array of arm indices.
    multiplicities : array_like of int, optional
        (n,) positive integers of any size (int64, or an object array of Python ints); omit when passing a
        Decomposition.
    required : numpy.ndarray, optional
        Demands to check against (default ``graph.required``, i.e. ``ceil(w_ij)``).
    best_effort : bool, optional
        Check a best-effort decomposition (``decompose(..., best_effort=True)``): a pair whose arm is wanted
        by at most C users can never be covered and is not required (the report lists it in
        ``uncoverable``); every other pair must get its demand, as without ``best_effort``. The uncoverable
        pairs are found from the graph, not taken from the decomposition.
    absence : float or array_like of float, optional
        The probability in [0, 1) that a user misses a block, one for every user or one per user (default: the
        decomposition's ``info["absence"]``, else 0). With absent users a group gives samples only when it
        keeps at least C+1 present users with probability >= ``confidence`` (the exact binomial or
        Poisson-binomial tail, decided exactly) or, on an arm at risk, holds the arm's whole support
        (:mod:`anondecomp.absence`). 0 is the check without absence, exactly.
    confidence : float, optional
        Q in (0, 1) (default: the decomposition's ``info["confidence"]``, else 0.95).
    capacity : int or array_like of int, optional
        At most this many users on an arm in one assignment, one for every arm or one per arm (default: the
        decomposition's ``info["capacity"]``, else none): every (assignment, arm) above it is reported.
    max_surplus_exposure : int, optional
        S (default: the decomposition's ``info["max_surplus_exposure"]``, else none): every user whose exposure
        (blocks in which its arm holds at least C+1 users) exceeds its demand ``sum_j ceil(w_ij)`` by more than
        S is reported (:mod:`anondecomp.exposure`).

    Returns
    -------
    VerificationReport
        ``valid`` and every pair short of its demand.

    Raises
    ------
    InvalidInputError
        If C < 1, the assignments or multiplicities are malformed, or the absence (given or in the
        decomposition's info) is not a probability in [0, 1) or one per user, or the confidence not in (0, 1).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np, anondecomp
    >>> g = anondecomp.DemandGraph.from_batched(4, np.ones((3, 1), bool))
    >>> anondecomp.verify(g, 2, np.zeros((1, 3), int), [4]).valid
    True
    """
    if multiplicities is None:
        absence = assignments.info.get("absence") if absence is None else absence
        confidence = assignments.info.get("confidence") if confidence is None else confidence
        if capacity is None and assignments.info.get("capacity") is not None:
            capacity = check_capacity("capacity", assignments.info["capacity"], {"graph": graph})
        if max_surplus_exposure is None:
            max_surplus_exposure = assignments.info.get("max_surplus_exposure")
        assignments, multiplicities = assignments.assignments, assignments.multiplicities
    a = np.asarray(assignments)
    m = np.asarray(multiplicities)
    if C < 1:
        raise InvalidInputError(f"C must be at least 1, got {C}")
    if a.ndim != 2 or a.shape[1] != graph.n_users:
        raise InvalidInputError(f"assignments must have shape (n, {graph.n_users}), got {a.shape}")
    if m.shape != (a.shape[0],) or not _integers(m) or (m < 1).any():
        raise InvalidInputError("multiplicities must be one positive integer per assignment")
    if not np.issubdtype(a.dtype, np.integer) or ((a < 0) | (a >= graph.n_arms)).any():
        raise InvalidInputError(f"assignment entries must be arm indices in [0, {graph.n_arms})")
    robust, informative = _absence_model(graph, C, absence, confidence)
    got, off = edge_coverage(graph, a, m, C, informative)
    off_support = [(int(r), graph.users[i], graph.arms[a[r, i]]) for r, i in off[:1000]]
    outside = np.empty((0, 2), dtype=np.int64)
    if required is None:
        need = graph.edge_required
    else:  # a dense (N, K) demand; its pairs off the support can get nothing
        need_dense = np.array(required)
        need = need_dense[graph.edge_users, graph.edge_arms]
        need_dense[graph.edge_users, graph.edge_arms] = 0
        outside = np.argwhere(need_dense > 0)
    need, uncoverable = drop_uncoverable(graph, C, need) if best_effort else (need, np.empty((0, 2), int))
    short = np.flatnonzero(got < need)
    deficits = [
        (graph.users[graph.edge_users[e]], graph.arms[graph.edge_arms[e]], int(need[e]), int(got[e])) for e in short
    ]
    deficits += [(graph.users[i], graph.arms[j], int(need_dense[i, j]), 0) for i, j in outside]
    limits = _limits(graph, C, a, m, capacity, max_surplus_exposure)
    return VerificationReport(
        valid=not deficits and not len(off) and not limits["n_over_capacity"] and not limits["n_over_exposure"],
        total_assignments=exact_sum(m),
        lower_bound=graph.lower_bound,
        n_distinct=int(len(m)),
        deficits=deficits,
        off_support=off_support,
        n_off_support=len(off),
        best_effort=best_effort,
        **uncoverable_fields(graph, uncoverable),
        **robust,
        **limits,
    )


def _limits(graph: DemandGraph, C: int, a: np.ndarray, m: np.ndarray, capacity, max_surplus) -> dict:
    """The report fields of a capacity and an exposure cap: every (assignment, arm) above its capacity and every
    user above the surplus, counted exactly (int64 sums, or Python ints when R reaches 2^62)."""
    out: dict = {"n_over_capacity": 0, "n_over_exposure": 0}
    N, K = graph.shape
    step = max(1, _EDGE_CHUNK // max(N, 1))
    if capacity is not None:
        cap = np.asarray(capacity)
        over = []
        for lo in range(0, len(a), step):
            block = a[lo : lo + step].astype(np.int64)
            loads = group_sizes(block, K)
            r, i = np.nonzero(loads > cap[block])
            first = np.unique(r * K + block[r, i], return_index=True)[1]  # one line per (assignment, arm)
            over += [
                (lo + int(r[k]), graph.arms[block[r[k], i[k]]], int(loads[r[k], i[k]]), int(cap[block[r[k], i[k]]]))
                for k in first
            ]
        low, high = (int(cap.min()), int(cap.max())) if cap.size else (0, 0)
        out["capacity"] = f"{low}" if low == high else f"per arm ({low} to {high})"
        out["over_capacity"], out["n_over_capacity"] = over[:1000], len(over)
    if max_surplus is not None:
        small = exact_sum(m) < 2**62
        expo = np.zeros(N, dtype=np.int64 if small else object)
        for lo in range(0, len(a), step):
            seen = informative_entries(a[lo : lo + step].astype(np.int64), C, K)
            weights = m[lo : lo + step]
            expo += (weights.astype(np.int64) @ seen) if small else (weights.astype(object) @ seen.astype(object))
        surplus = expo - row_sums(graph.indptr, drop_uncoverable(graph, C, graph.edge_required)[0])
        bad = np.flatnonzero(surplus > max_surplus)
        out["max_surplus_exposure"] = int(max_surplus)
        out["over_exposure"] = [(graph.users[i], int(surplus[i])) for i in bad[:1000]]
        out["n_over_exposure"] = len(bad)
    return out


def _absence_model(graph: DemandGraph, C: int, absence, confidence) -> tuple[dict, Callable | None]:
    """The report fields and the ``informative`` rule of :func:`edge_coverage` for ``absence`` (none when
    nobody is ever absent: the check is then the one without absence); the rule tallies the groups of >= C+1
    users that do not count into the fields' ``n_fragile``."""
    from anondecomp.absence import describe_absence, is_absent, presence

    if not is_absent(absence):
        return {}, None
    pres = presence(graph, C, absence, confidence)
    fields: dict[str, Any] = {
        "absence": describe_absence(pres.given),
        "confidence": pres.confidence,
        "robust_size": pres.size,
        "at_risk": graph.arm_names(np.flatnonzero(pres.at_risk)),
        "n_fragile": 0,
    }

    def informative(block: np.ndarray) -> np.ndarray:
        counted, sizes = pres.counted(block)
        fields["n_fragile"] += int(((sizes > C) & ~counted).sum())
        return counted[np.arange(len(block), dtype=np.int64)[:, None] * graph.n_arms + block]

    return fields, informative


def uncoverable_fields(graph: DemandGraph, pairs: np.ndarray) -> dict:
    """The report fields naming the uncoverable ``pairs`` ((m, 2) user and arm indices): the first 1000."""
    return {"uncoverable": [(graph.users[i], graph.arms[j]) for i, j in pairs[:1000]], "n_uncoverable": len(pairs)}


def _integers(m: np.ndarray) -> bool:
    """Whether ``m`` holds integers only: an integer dtype, or Python ints (not bools) in an object array."""
    if m.dtype == object:
        return all(isinstance(x, int | np.integer) and not isinstance(x, bool) for x in m)
    return np.issubdtype(m.dtype, np.integer)
