"""The demand graph: users x arms, non-negative weights w_ij = feedback samples user i wants from arm j.

Spec: ``shared/specs/anonymous-bandits.md`` section 3 (paper 000, Section 3.2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from anondecomp.errors import InvalidInputError

MAX_DEMAND = 2**53
"""Largest demand of one user, ``sum_j ceil(w_ij)``, the solver layer accepts (also bounds every weight and D).

Up to 2^53 every integer count is exact in float64, which the LP-based methods work in, and a user's demand
fits int64; larger graphs are refused with an error naming the limit rather than rounded."""

LIMIT_TEXT = f"2^53 = {MAX_DEMAND}"


def exact_sum(values, axis: int | None = None):
    """Sum of integers that never overflows: int64 when the sum provably fits, else Python integers.

    Returns a Python ``int`` for ``axis=None``, else an int64 or object array.
    """
    v = np.asarray(values)
    n = v.size if axis is None else v.shape[axis]
    if v.dtype != object and (v.size == 0 or int(np.abs(v).max()) * max(n, 1) < 2**63):
        total = v.sum(axis=axis, dtype=np.int64)
    else:
        total = v.astype(object).sum(axis=axis)
    return int(total) if axis is None else total


def _names(given: Sequence[str] | None, n: int, prefix: str, what: str) -> tuple[str, ...]:
    if given is None:
        return tuple(f"{prefix}{k}" for k in range(n))
    names = tuple(str(x) for x in given)
    if len(names) != n:
        raise InvalidInputError(f"{len(names)} {what} names given for {n} {what}s")
    if len(set(names)) != n:
        dup = next(x for x in names if names.count(x) > 1)
        raise InvalidInputError(f"{what} name {dup!r} appears twice")
    return names


def describe(x) -> str:
    """A number for a message; integers too large for a float (JSON allows 400 digits) by their size."""
    try:
        return f"{x:.6g}"
    except OverflowError:
        return f"an integer of about {int(x.bit_length() * 0.30103) + 1} digits"


def _checked_totals(required: np.ndarray, users: Sequence[str]) -> np.ndarray:
    """``required`` itself, after checking every user's demand against :data:`MAX_DEMAND`."""
    totals = exact_sum(required, axis=1)
    if (totals > MAX_DEMAND).any():
        i = int(np.argmax(totals > MAX_DEMAND))
        raise InvalidInputError(f"user {users[i]!r} asks for {totals[i]} samples in all (sum of ceil(w_ij)); "
                                f"the limit is {LIMIT_TEXT}")
    return required


def _checked_support(support, wanted: np.ndarray, users: Sequence[str], arms: Sequence[str],
                     what: str = "has positive weight on") -> np.ndarray:
    """``support`` as an (N, K) bool array, after checking that it holds every ``wanted`` pair and that no
    user's row is empty."""
    try:
        s = np.asarray(support)
    except (TypeError, ValueError):
        raise InvalidInputError("support must be a (users x arms) matrix of booleans") from None
    if s.shape != wanted.shape:
        raise InvalidInputError(f"support must have the shape of the weights, {wanted.shape}, got {s.shape}")
    if s.dtype != bool:
        numeric = np.issubdtype(s.dtype, np.integer) or np.issubdtype(s.dtype, np.floating)
        if not numeric or not np.isin(s, (0, 1)).all():
            raise InvalidInputError("support must hold booleans (or 0 and 1)")
        s = s.astype(bool)
    missing = wanted & ~s
    if missing.any():
        i, j = np.argwhere(missing)[0]
        raise InvalidInputError(f"user {users[i]!r} {what} arm {arms[j]!r}, which is not in its support")
    empty = ~s.any(axis=1)
    if empty.any():
        raise InvalidInputError(f"user {users[int(np.argmax(empty))]!r} has an empty support (no arm it may play)")
    return s.copy()


@dataclass(frozen=True, eq=False)
class DemandGraph:
    """A weighted bipartite demand graph: user i wants ``w_ij`` feedback samples from arm j.

    Every user must want at least one arm. Build one with :meth:`from_weights` or :meth:`from_batched`;
    ``lower_bound`` is ``max_i sum_j ceil(w_ij)``, which no decomposition beats.

    Parameters
    ----------
    weights : numpy.ndarray
        (N, K) float, ``w_ij >= 0``: the samples user i wants from arm j (its demand).
    required : numpy.ndarray
        (N, K) int64, ``ceil(w_ij)``: the informative samples pair (i, j) must get. For a batched graph it is
        computed exactly as ``ceil(D / |A_i|)`` in rational arithmetic.
    users : tuple of str
        The users' names, used in JSON input and output.
    arms : tuple of str
        The arms' names.
    demand : float or None, optional
        The total demand D of a batched graph (``w_ij = D / |A_i|`` on A_i), else ``None``.
    support : numpy.ndarray, optional
        (N, K) bool, the arms each user may be assigned to; it contains every pair with ``w_ij > 0`` and is
        ``weights > 0`` unless given. A user with zero demand (all weights 0) still plays an arm of its support
        in every assignment and counts towards the C+1 users an arm needs.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> g = DemandGraph.from_batched(10, np.array([[1, 1], [1, 0], [0, 1]], bool))
    >>> g.required.tolist(), g.lower_bound
    ([[5, 5], [10, 0], [0, 10]], 10)
    """

    weights: np.ndarray
    required: np.ndarray
    users: tuple[str, ...]
    arms: tuple[str, ...]
    demand: float | None = None
    support: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "support", self.weights > 0 if self.support is None else self.support)

    @property
    def explicit_support(self) -> bool:
        """Whether the support is wider than the demand (some pair may be played with ``w_ij = 0``)."""
        return bool((self.support & ~(self.weights > 0)).any())

    # -- construction ------------------------------------------------------------------------------
    @classmethod
    def from_weights(cls, weights, users: Sequence[str] | None = None,
                     arms: Sequence[str] | None = None, *, support=None) -> DemandGraph:
        """A graph from an (N, K) weight matrix; weights must be finite and non-negative.

    Parameters
    ----------
    weights : array_like of float
        (N, K) demands ``w_ij``.
    users : sequence of str, optional
        The users' names; default ``u0, u1, ...``.
    arms : sequence of str, optional
        The arms' names; default ``a0, a1, ...``.
    support : array_like of bool, optional
        (N, K): the arms each user may play (default ``weights > 0``); it must contain every pair with positive
        weight, and no row may be empty. Without it every row of weights must be non-zero; with it a row of
        zeros is a user with zero demand, which only pads groups.

    Returns
    -------
    DemandGraph
        The graph, with ``required = ceil(w)``.

    Raises
    ------
    InvalidInputError
        For a malformed matrix, a negative, non-finite or too large weight, a user without demand (no
        support given), or a support that misses a weighted pair or has an empty row.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> DemandGraph.from_weights([[2.5, 0.0], [1.0, 3.0]]).required.tolist()
    [[3, 0], [1, 3]]
        """
        try:
            w = np.array(weights, dtype=float)
        except OverflowError:
            raise InvalidInputError(f"weights must be at most {LIMIT_TEXT}") from None
        except (TypeError, ValueError):
            raise InvalidInputError("weights must be numbers") from None
        if w.ndim != 2 or w.shape[0] == 0 or w.shape[1] == 0:
            raise InvalidInputError(f"weights must be a non-empty 2-D (users x arms) matrix, got shape {w.shape}")
        users_t = _names(users, w.shape[0], "u", "user")
        arms_t = _names(arms, w.shape[1], "a", "arm")
        bad = ~np.isfinite(w) | (w < 0)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise InvalidInputError(f"weight of user {users_t[i]!r} on arm {arms_t[j]!r} is {w[i, j]}; "
                                    "weights must be finite and non-negative")
        if (w > MAX_DEMAND).any():
            i, j = np.argwhere(w > MAX_DEMAND)[0]
            raise InvalidInputError(f"weight of user {users_t[i]!r} on arm {arms_t[j]!r} is {w[i, j]:.6g}; "
                                    f"weights must be at most {LIMIT_TEXT}")
        if support is not None:
            supp = _checked_support(support, w > 0, users_t, arms_t)
        else:
            supp = None
            empty = ~(w > 0).any(axis=1)
            if empty.any():
                raise InvalidInputError(f"user {users_t[int(np.argmax(empty))]!r} has no demand (all weights 0)")
        return cls(w, _checked_totals(np.ceil(w).astype(np.int64), users_t), users_t, arms_t, support=supp)

    @classmethod
    def from_batched(cls, demand: float, active, users: Sequence[str] | None = None,
                     arms: Sequence[str] | None = None, *, support=None) -> DemandGraph:
        """A batched graph: ``w_ij = D / |A_i|`` for j in A_i (paper 000, Section 3.2).

    Parameters
    ----------
    demand : int or float
        The total demand D of every user, positive.
    active : array_like of bool
        (N, K): row i marks the active set A_i (non-empty).
    users : sequence of str, optional
        The users' names; default ``u0, u1, ...``.
    arms : sequence of str, optional
        The arms' names; default ``a0, a1, ...``.
    support : array_like of bool, optional
        (N, K), default ``active``; as for :meth:`from_weights`: with it, a user with an empty active set and a
        non-empty support has zero demand.

    Returns
    -------
    DemandGraph
        The graph, with ``required = ceil(D / |A_i|)`` computed exactly.

    Raises
    ------
    InvalidInputError
        For a demand that is not a positive number within the limit, a malformed matrix, an empty active set
        (no support given) or a support that misses an active pair or has an empty row.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> DemandGraph.from_batched(10, np.array([[1, 1, 1], [1, 0, 0]], bool)).required.tolist()
    [[4, 4, 4], [10, 0, 0]]
        """
        if isinstance(demand, bool) or not isinstance(demand, int | float | np.integer | np.floating):
            raise InvalidInputError(f"demand D must be a number, got {demand!r}")
        if not demand > 0:  # also catches NaN
            raise InvalidInputError(f"demand D must be positive, got {demand}")
        if demand > MAX_DEMAND:  # compared before any float conversion: D may be a 400-digit integer
            raise InvalidInputError(f"demand D is {describe(demand)}; the limit is {LIMIT_TEXT}")
        a = np.asarray(active)
        if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0:
            raise InvalidInputError(f"active sets must be a non-empty (users x arms) matrix, got shape {a.shape}")
        a = a.astype(bool)
        users_t = _names(users, a.shape[0], "u", "user")
        arms_t = _names(arms, a.shape[1], "a", "arm")
        sizes = a.sum(axis=1)
        supp = None if support is None else _checked_support(support, a, users_t, arms_t, "has in its active set")
        if supp is None and (sizes == 0).any():
            raise InvalidInputError(f"user {users_t[int(np.argmin(sizes))]!r} has an empty active set")
        weights = np.where(a, demand / np.maximum(sizes, 1)[:, None], 0.0)
        d = Fraction(demand)  # exact: ceil(D / s) without floating error
        per_size = {int(s): -((-d.numerator) // (d.denominator * max(int(s), 1))) for s in np.unique(sizes)}
        req_row = np.array([per_size[int(s)] for s in sizes], dtype=np.int64)
        required = _checked_totals(np.where(a, req_row[:, None], 0).astype(np.int64), users_t)
        return cls(weights, required, users_t, arms_t, demand=float(demand), support=supp)

    # -- derived quantities ----------------------------------------------------------------------
    @property
    def n_users(self) -> int:
        return self.weights.shape[0]

    @property
    def n_arms(self) -> int:
        return self.weights.shape[1]

    @property
    def shape(self) -> tuple[int, int]:
        return self.weights.shape

    @property
    def lower_bound(self) -> int:
        """``max_i sum_j ceil(w_ij)``: no decomposition has fewer assignments (one sample per user each)."""
        return int(exact_sum(self.required, axis=1).max())

    @property
    def arm_degrees(self) -> np.ndarray:
        """``|B_j|``: how many users may play each arm."""
        return self.support.sum(axis=0)

    def thin_arms(self, C: int) -> np.ndarray:
        """Indices of wanted arms with at most C users able to play them: they can never be observed.

        An arm counts as wanted when some user requires a sample of it; every user whose support contains the
        arm counts towards its degree, demand or not (users with zero demand on an arm fill its groups too).

        Parameters
        ----------
        C : int
            The anonymity parameter: an arm needs at least C+1 users to be observed.

        Returns
        -------
        numpy.ndarray
            The arms' indices (int, increasing); empty when every wanted arm has more than C users.

        Examples
        --------
        >>> import numpy as np
        >>> g = DemandGraph.from_batched(10, np.array([[1, 1], [1, 0], [0, 1]], bool))
        >>> g.thin_arms(1).tolist(), g.thin_arms(2).tolist()
        ([], [0, 1])
        """
        deg = self.arm_degrees
        return np.flatnonzero((deg > 0) & (deg <= C) & (self.required > 0).any(axis=0))

    def normalized(self) -> tuple[np.ndarray, float]:
        """The normalised weights ``w_hat = w / D`` (row sums <= 1) and the scale D.

        D is the batched graph's total demand when it has one, else ``max_i sum_j w_ij``.

        Returns
        -------
        w_hat : numpy.ndarray
            (N, K) float, ``weights / D`` (a copy of the zero weights when D = 0, i.e. no user has demand).
        D : float
            The scale.

        Examples
        --------
        >>> import numpy as np
        >>> w_hat, D = DemandGraph.from_batched(10, np.array([[1, 1], [1, 0]], bool)).normalized()
        >>> w_hat.tolist(), D
        ([[0.5, 0.5], [1.0, 0.0]], 10.0)
        """
        d = self.demand if self.demand is not None else float(self.weights.sum(axis=1).max())
        return (self.weights / d if d > 0 else self.weights.copy()), d  # d = 0: every user has zero demand

    def arm_names(self, idx) -> list[str]:
        """The names of the arms with the given indices.

        Parameters
        ----------
        idx : int or array_like of int
            Arm indices (a single index or a sequence, e.g. the output of :meth:`thin_arms`).

        Returns
        -------
        list of str
            The arms' names, in the order of ``idx``.

        Examples
        --------
        >>> import numpy as np
        >>> g = DemandGraph.from_batched(10, np.array([[1, 1], [1, 0]], bool))
        >>> g.arm_names([1, 0]), g.arm_names(1)
        (['a1', 'a0'], ['a1'])
        """
        return [self.arms[int(j)] for j in np.atleast_1d(idx)]


def active_from_sets(active_sets: Mapping[str, Sequence[str]], arms: Sequence[str] | None = None
                     ) -> tuple[np.ndarray, list[str], list[str]]:
    """``{"user": ["arm", ...]}`` -> (N, K) boolean matrix, user names, arm names (first-seen order)."""
    users = list(active_sets)
    arm_list = list(arms) if arms is not None else list(dict.fromkeys(a for s in active_sets.values() for a in s))
    index = {a: k for k, a in enumerate(arm_list)}
    active = np.zeros((len(users), len(arm_list)), dtype=bool)
    for i, (user, chosen) in enumerate(active_sets.items()):
        for arm in chosen:
            if arm not in index:
                raise InvalidInputError(f"user {user!r} lists unknown arm {arm!r}")
            active[i, index[arm]] = True
    return active, users, arm_list
