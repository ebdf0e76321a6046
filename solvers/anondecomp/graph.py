"""The demand graph: users x arms, non-negative weights w_ij = feedback samples user i wants from arm j.

Paper 000, Section 3.2 (anonymous decompositions of weighted bipartite graphs, batched and U-batched graphs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import cached_property

import numpy as np
import numpy.typing as npt

from anondecomp.errors import InvalidInputError
from anondecomp.sorting import stable_order
from anondecomp.validation import ALLOW_LARGE, DENSE_CELLS, checked, large_allowed

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


def _is_sparse(x) -> bool:
    """Whether ``x`` is a scipy.sparse matrix or array (checked without importing scipy for dense input)."""
    return type(x).__module__.startswith("scipy.sparse")


def _stored(x, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    """(rows, cols, values, shape) of the entries of a 2-D ``x``: a scipy.sparse matrix's stored entries
    (duplicates summed, row-major order), or a dense array's non-zero entries."""
    if _is_sparse(x):
        if x.ndim != 2:
            raise InvalidInputError(f"{what} must be a 2-D (users x arms) matrix, got {x.ndim} dimensions")
        csr = x.tocsr(copy=True)
        csr.sum_duplicates()
        csr.sort_indices()
        rows = np.repeat(np.arange(csr.shape[0], dtype=np.int64), np.diff(csr.indptr))
        return rows, csr.indices.astype(np.int64), np.asarray(csr.data), csr.shape
    a = np.asarray(x)
    if a.ndim != 2:
        raise InvalidInputError(f"{what} must be a 2-D (users x arms) matrix, got shape {a.shape}")
    rows, cols = np.nonzero(a)
    return rows.astype(np.int64), cols.astype(np.int64), a[rows, cols], a.shape


def _boolean_pairs(
    x, what: str, shape: tuple[int, int] | None = None
) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """(rows, cols, shape) of the true entries of a boolean (or 0/1) matrix, dense or sparse."""
    try:
        rows, cols, values, got = _stored(x, what)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{what} must be a (users x arms) matrix of booleans") from None
    if shape is not None and tuple(got) != tuple(shape):
        raise InvalidInputError(f"{what} must have the shape of the weights, {tuple(shape)}, got {tuple(got)}")
    v = np.asarray(values)
    if v.dtype != bool:
        numeric = np.issubdtype(v.dtype, np.integer) or np.issubdtype(v.dtype, np.floating)
        if not numeric or not np.isin(v, (0, 1)).all():
            raise InvalidInputError(f"{what} must hold booleans (or 0 and 1)")
        v = v.astype(bool)
    return rows[v], cols[v], got


def _keys(rows: np.ndarray, cols: np.ndarray, n_arms: int) -> np.ndarray:
    return rows.astype(np.int64) * n_arms + cols


def _merge_support(
    pos_rows: np.ndarray,
    pos_cols: np.ndarray,
    support,
    shape: tuple[int, int],
    users: Sequence[str],
    arms: Sequence[str],
    what: str,
) -> tuple[np.ndarray, np.ndarray]:
    """The support's pairs (row-major), after checking that they hold every ``pos`` pair and that no user's
    row is empty; and the index of every ``pos`` pair among them."""
    s_rows, s_cols, _ = _boolean_pairs(support, "support", shape)
    keys = _keys(s_rows, s_cols, shape[1])
    order = np.argsort(keys, kind="stable")
    keys, s_rows, s_cols = keys[order], s_rows[order], s_cols[order]
    pos = _keys(pos_rows, pos_cols, shape[1])
    at = np.minimum(np.searchsorted(keys, pos), max(len(keys) - 1, 0))
    missing = (keys[at] != pos) if len(keys) else np.ones(len(pos), bool)
    if missing.any():
        k = int(np.argmax(missing))
        raise InvalidInputError(
            f"user {users[pos_rows[k]]!r} {what} arm {arms[pos_cols[k]]!r}, which is not in its support"
        )
    _no_empty_row(s_rows, shape[0], users, "has an empty support (no arm it may play)")
    return np.stack([s_rows, s_cols]), at


def _no_empty_row(rows: np.ndarray, n: int, users: Sequence[str], text: str) -> None:
    empty = np.bincount(rows, minlength=n) == 0
    if empty.any():
        raise InvalidInputError(f"user {users[int(np.argmax(empty))]!r} {text}")


class DemandGraph:
    """A weighted bipartite demand graph: user i wants ``w_ij`` feedback samples from arm j.

    Held sparse: one entry per *edge*, a (user, arm) pair of the support (the arms the user may play), in
    row-major order, with its weight and its requirement; nothing is stored per (user, arm) cell, so a log of
    10^6 users x 10^5 items costs memory in its interactions only. Every user must want at least one arm
    (unless a support wider than the demand is given). Build one with :meth:`from_weights` or
    :meth:`from_batched` (dense arrays or scipy.sparse matrices); ``lower_bound`` is ``max_i sum_j ceil(w_ij)``,
    which no decomposition beats.

    Parameters
    ----------
    weights : numpy.ndarray or scipy.sparse matrix
        (N, K) float, ``w_ij >= 0``: the samples user i wants from arm j (its demand).
    required : numpy.ndarray or scipy.sparse matrix
        (N, K) int, ``ceil(w_ij)``: the informative samples pair (i, j) must get. For a batched graph it is
        computed exactly as ``ceil(D / |A_i|)`` in rational arithmetic.
    users : sequence of str
        The users' names, used in JSON input and output.
    arms : sequence of str
        The arms' names.
    demand : float or None, optional
        The total demand D of a batched graph (``w_ij = D / |A_i|`` on A_i), else ``None``.
    support : numpy.ndarray or scipy.sparse matrix, optional
        (N, K) bool, the arms each user may be assigned to; it contains every pair with ``w_ij > 0`` and is
        ``weights > 0`` unless given. A user with zero demand (all weights 0) still plays an arm of its support
        in every assignment and counts towards the C+1 users an arm needs.

    Attributes
    ----------
    edge_users, edge_arms : numpy.ndarray
        (E,) the user and arm of every edge, sorted by user, then arm (read-only).
    edge_weights, edge_required : numpy.ndarray
        (E,) float64 ``w_ij`` and int64 ``ceil(w_ij)`` of every edge (0 on support without demand).
    indptr : numpy.ndarray
        (N+1,) int64: user i's edges are ``indptr[i]:indptr[i+1]`` (as a CSR matrix's).
    weights, required, support : numpy.ndarray
        Dense (N, K) copies, built on first access and kept: for small graphs and for users' convenience;
        nothing inside the package reads them.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> g = DemandGraph.from_batched(10, np.array([[1, 1], [1, 0], [0, 1]], bool))
    >>> g.required.tolist(), g.lower_bound, g.nnz
    ([[5, 5], [10, 0], [0, 10]], 10, 4)
    """

    # Declared for the type checker: _set assigns them through object.__setattr__ (the class is immutable).
    # Edge indices are int32 while N and K fit it (half the memory of large logs), else int64.
    users: tuple[str, ...]
    arms: tuple[str, ...]
    demand: float | None
    _shape: tuple[int, int]
    edge_users: npt.NDArray[np.int32 | np.int64]
    edge_arms: npt.NDArray[np.int32 | np.int64]
    edge_weights: npt.NDArray[np.float64]
    edge_required: npt.NDArray[np.int64]
    indptr: npt.NDArray[np.int64]
    _dense: dict[str, np.ndarray]

    @checked()
    def __init__(
        self, weights, required, users: Sequence[str], arms: Sequence[str], demand: float | None = None, support=None
    ) -> None:
        w_rows, w_cols, w_vals, shape = _stored(weights, "weights")
        N, K = shape
        users_t = _names(users, N, "u", "user")
        arms_t = _names(arms, K, "a", "arm")
        _check_exact_limit(w_vals, w_rows, w_cols, users_t, arms_t)
        w_vals = np.asarray(w_vals, dtype=np.float64)
        _check_weight_values(w_vals, w_rows, w_cols, users_t, arms_t)
        pos = w_vals > 0
        if support is None:
            rows, cols = w_rows[pos], w_cols[pos]
            _no_empty_row(rows, N, users_t, "has no demand (all weights 0)")
        else:
            (rows, cols), _ = _merge_support(
                w_rows[pos], w_cols[pos], support, shape, users_t, arms_t, "has positive weight on"
            )
        keys = _keys(rows, cols, K)
        r_rows, r_cols, r_vals, r_shape = _stored(required, "required")
        if tuple(r_shape) != tuple(shape):
            raise InvalidInputError(
                f"required must have the shape of the weights, {tuple(shape)}, got {tuple(r_shape)}"
            )
        r_vals = np.asarray(r_vals)
        r_keys = _keys(r_rows, r_cols, K)
        off = np.isin(r_keys, keys, invert=True) & (r_vals != 0)
        if off.any():
            k = int(np.argmax(off))
            raise InvalidInputError(
                f"required of user {users_t[r_rows[k]]!r} on arm {arms_t[r_cols[k]]!r} is "
                f"{r_vals[k]}, but the pair has no weight and is not in the support"
            )
        w_edge = _lookup(_keys(w_rows, w_cols, K), w_vals, keys)
        r_edge = _lookup(r_keys, r_vals.astype(np.int64), keys)
        bad = (r_edge < np.floor(w_edge)) | (r_edge > np.ceil(w_edge))
        if bad.any():
            k = int(np.argmax(bad))
            raise InvalidInputError(
                f"required of user {users_t[rows[k]]!r} on arm {arms_t[cols[k]]!r} is "
                f"{r_edge[k]}, but its weight is {w_edge[k]:.6g}: required must be ceil(w_ij)"
            )
        _check_totals(rows, r_edge, users_t)
        self._set(N, K, users_t, arms_t, None if demand is None else float(demand), rows, cols, w_edge, r_edge)

    @classmethod
    def _from_edges(
        cls,
        shape: tuple[int, int],
        users: tuple[str, ...],
        arms: tuple[str, ...],
        rows: np.ndarray,
        cols: np.ndarray,
        w: np.ndarray,
        r: np.ndarray,
        demand: float | None = None,
    ) -> DemandGraph:
        """A graph from checked, row-major sorted edges (no further checks)."""
        self = cls.__new__(cls)
        self._set(shape[0], shape[1], users, arms, demand, rows, cols, w, r)
        return self

    def _set(
        self,
        N: int,
        K: int,
        users: tuple[str, ...],
        arms: tuple[str, ...],
        demand: float | None,
        rows: np.ndarray,
        cols: np.ndarray,
        w: np.ndarray,
        r: np.ndarray,
    ) -> None:
        idx = np.int32 if max(N, K) < 2**31 else np.int64
        edge_users = np.asarray(rows, dtype=idx)
        fields: dict[str, object] = {
            "users": users,
            "arms": arms,
            "demand": demand,
            "_shape": (int(N), int(K)),
            "edge_users": edge_users,
            "edge_arms": np.asarray(cols, dtype=idx),
            "edge_weights": np.asarray(w, dtype=np.float64),
            "edge_required": np.asarray(r, dtype=np.int64),
            "_dense": {},
        }
        for name, value in fields.items():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
            object.__setattr__(self, name, value)
        indptr = np.zeros(N + 1, dtype=np.int64)
        np.cumsum(np.bincount(edge_users, minlength=N), out=indptr[1:])
        indptr.flags.writeable = False
        object.__setattr__(self, "indptr", indptr)

    def __setattr__(self, name, value):
        raise AttributeError(f"DemandGraph is immutable (cannot set {name!r})")

    def __repr__(self) -> str:
        return f"DemandGraph(users={self.n_users}, arms={self.n_arms}, edges={self.nnz}, demand={self.demand!r})"

    # -- dense views -------------------------------------------------------------------------------
    def _dense_of(self, name: str, values: np.ndarray | bool, dtype: npt.DTypeLike) -> np.ndarray:
        if name not in self._dense:
            cells = self.n_users * self.n_arms
            if cells > DENSE_CELLS and not large_allowed():
                # the sparse graph's dense views exist for small graphs (the exact methods, beta): a log of
                # 10^5 users x 10^4 items would take 8 GB per view
                raise InvalidInputError(
                    f"DemandGraph.{name}: its dense view, {self.n_users} users x {self.n_arms} arms = {cells:.3g} "
                    f"cells, is above DENSE_CELLS = {DENSE_CELLS:.0e} (anondecomp.validation.DENSE_CELLS); read "
                    f"the edges (edge_users, edge_arms, edge_weights) instead, or {ALLOW_LARGE}"
                )
            out = np.zeros(self.shape, dtype=dtype)
            out[self.edge_users, self.edge_arms] = values
            out.flags.writeable = False
            self._dense[name] = out
        return self._dense[name]

    @property
    def weights(self) -> np.ndarray:
        """(N, K) float64 dense weights, built on first access (memory N x K x 8 bytes).

        Refused (:class:`~anondecomp.InvalidInputError`) above :data:`~anondecomp.validation.DENSE_CELLS`
        cells unless :func:`~anondecomp.validation.allowing_large` confirms it.
        """
        return self._dense_of("weights", self.edge_weights, np.float64)

    @property
    def required(self) -> np.ndarray:
        """(N, K) int64 dense requirements ``ceil(w_ij)``, built on first access.

        Refused (:class:`~anondecomp.InvalidInputError`) above :data:`~anondecomp.validation.DENSE_CELLS`
        cells unless :func:`~anondecomp.validation.allowing_large` confirms it.
        """
        return self._dense_of("required", self.edge_required, np.int64)

    @property
    def support(self) -> np.ndarray:
        """(N, K) bool dense support, built on first access.

        Refused (:class:`~anondecomp.InvalidInputError`) above :data:`~anondecomp.validation.DENSE_CELLS`
        cells unless :func:`~anondecomp.validation.allowing_large` confirms it.
        """
        return self._dense_of("support", True, bool)

    @checked()
    def toarray(self) -> np.ndarray:
        """The dense weights.

        Returns
        -------
        numpy.ndarray
            (N, K) float64, a new writable array (memory N x K x 8 bytes).

        Examples
        --------
        >>> DemandGraph.from_weights([[2.5, 0.0], [1.0, 3.0]]).toarray().tolist()
        [[2.5, 0.0], [1.0, 3.0]]
        """
        return np.array(self.weights)

    @checked()
    def tocsr(self, what: str = "weights"):
        """The graph as a scipy.sparse CSR array over its edges.

        Parameters
        ----------
        what : str, optional
            ``"weights"`` (default), ``"required"`` or ``"support"``; an edge of the support without demand is
            an explicit zero.

        Returns
        -------
        scipy.sparse.csr_array
            (N, K), one stored entry per edge.

        Raises
        ------
        InvalidInputError
            For another ``what``.

        Examples
        --------
        >>> DemandGraph.from_weights([[2.5, 0.0], [1.0, 3.0]]).tocsr("required").toarray().tolist()
        [[3, 0], [1, 3]]
        """
        from scipy.sparse import csr_array

        tables = {
            "weights": self.edge_weights,
            "required": self.edge_required,
            "support": np.ones(self.nnz, dtype=bool),
        }
        if what not in tables:
            raise InvalidInputError(f"what must be one of {', '.join(tables)}, got {what!r}")
        return csr_array((tables[what], self.edge_arms, self.indptr), shape=self.shape)

    @property
    def explicit_support(self) -> bool:
        """Whether the support is wider than the demand (some pair may be played with ``w_ij = 0``)."""
        return bool((self.edge_weights == 0).any())

    # -- construction ------------------------------------------------------------------------------
    @classmethod
    @checked()
    def from_weights(
        cls, weights, users: Sequence[str] | None = None, arms: Sequence[str] | None = None, *, support=None
    ) -> DemandGraph:
        """A graph from an (N, K) weight matrix, dense or scipy.sparse; weights must be finite and non-negative.

        Parameters
        ----------
        weights : array_like of float or scipy.sparse matrix
            (N, K) demands ``w_ij``; a sparse matrix's unstored entries are 0 and it is never made dense.
        users : sequence of str, optional
            The users' names; default ``u0, u1, ...``.
        arms : sequence of str, optional
            The arms' names; default ``a0, a1, ...``.
        support : array_like of bool or scipy.sparse matrix, optional
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
        >>> from scipy.sparse import csr_array
        >>> DemandGraph.from_weights(csr_array([[2.5, 0.0], [1.0, 3.0]])).edge_required.tolist()
        [3, 1, 3]
        """
        if _is_sparse(weights):
            rows, cols, vals, shape = _stored(weights, "weights")
            try:
                vals = np.asarray(vals, dtype=np.float64)
            except (TypeError, ValueError):
                raise InvalidInputError("weights must be numbers") from None
        else:
            _check_exact_limit(np.asarray(weights), None, None, None, None)
            try:
                w = np.array(weights, dtype=float)
            except OverflowError:
                raise InvalidInputError(f"weights must be at most {LIMIT_TEXT}") from None
            except (TypeError, ValueError):
                raise InvalidInputError("weights must be numbers") from None
            if w.ndim != 2:
                raise InvalidInputError(f"weights must be a non-empty 2-D (users x arms) matrix, got shape {w.shape}")
            rows, cols = np.nonzero(w)  # NaN counts as non-zero, so it is checked below
            rows, cols, vals, shape = rows.astype(np.int64), cols.astype(np.int64), w[rows, cols], w.shape
        if len(shape) != 2 or shape[0] == 0 or shape[1] == 0:
            raise InvalidInputError(f"weights must be a non-empty 2-D (users x arms) matrix, got shape {tuple(shape)}")
        users_t = _names(users, shape[0], "u", "user")
        arms_t = _names(arms, shape[1], "a", "arm")
        _check_weight_values(vals, rows, cols, users_t, arms_t)
        pos = vals > 0
        rows, cols, vals = rows[pos], cols[pos], vals[pos]
        if support is None:
            _no_empty_row(rows, shape[0], users_t, "has no demand (all weights 0)")
            w_edge = vals
        else:
            (rows, cols), at = _merge_support(rows, cols, support, shape, users_t, arms_t, "has positive weight on")
            w_edge = np.zeros(len(rows))
            w_edge[at] = vals
        required = np.ceil(w_edge).astype(np.int64)
        _check_totals(rows, required, users_t)
        return cls._from_edges(shape, users_t, arms_t, rows, cols, w_edge, required)

    @classmethod
    @checked()
    def from_batched(
        cls,
        demand: float,
        active,
        users: Sequence[str] | None = None,
        arms: Sequence[str] | None = None,
        *,
        support=None,
    ) -> DemandGraph:
        """A batched graph: ``w_ij = D / |A_i|`` for j in A_i (paper 000, Section 3.2).

        Parameters
        ----------
        demand : int or float
            The total demand D of every user, positive.
        active : array_like of bool or scipy.sparse matrix
            (N, K): row i marks the active set A_i (non-empty).
        users : sequence of str, optional
            The users' names; default ``u0, u1, ...``.
        arms : sequence of str, optional
            The arms' names; default ``a0, a1, ...``.
        support : array_like of bool or scipy.sparse matrix, optional
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
        try:
            rows, cols, vals, shape = _stored(active, "active sets")
        except (TypeError, ValueError):
            raise InvalidInputError("active sets must be a (users x arms) matrix of booleans") from None
        if len(shape) != 2 or shape[0] == 0 or shape[1] == 0:
            raise InvalidInputError(f"active sets must be a non-empty (users x arms) matrix, got shape {tuple(shape)}")
        on = np.asarray(vals).astype(bool)
        rows, cols = rows[on], cols[on]
        users_t = _names(users, shape[0], "u", "user")
        arms_t = _names(arms, shape[1], "a", "arm")
        sizes = np.bincount(rows, minlength=shape[0])
        if support is None:
            _no_empty_row(rows, shape[0], users_t, "has an empty active set")
            at = np.arange(len(rows))
        else:
            (rows_s, cols_s), at = _merge_support(rows, cols, support, shape, users_t, arms_t, "has in its active set")
        d = Fraction(demand)  # exact: ceil(D / s) without floating error
        per_size = {int(s): -((-d.numerator) // (d.denominator * max(int(s), 1))) for s in np.unique(sizes)}
        req_user = np.array([per_size[int(s)] for s in sizes], dtype=np.int64)
        if support is not None:
            rows, cols = rows_s, cols_s
        active_edge = np.zeros(len(rows), dtype=bool)
        active_edge[at] = True
        w_edge = np.where(active_edge, demand / np.maximum(sizes, 1)[rows], 0.0)
        required = np.where(active_edge, req_user[rows], 0)
        _check_totals(rows, required, users_t)
        return cls._from_edges(shape, users_t, arms_t, rows, cols, w_edge, required, demand=float(demand))

    # -- derived quantities ----------------------------------------------------------------------
    @property
    def n_users(self) -> int:
        return self._shape[0]

    @property
    def n_arms(self) -> int:
        return self._shape[1]

    @property
    def shape(self) -> tuple[int, int]:
        return self._shape

    @property
    def nnz(self) -> int:
        """The number of edges (pairs of the support)."""
        return len(self.edge_arms)

    @property
    def user_demand(self) -> np.ndarray:
        """(N,) int64 ``sum_j ceil(w_ij)``: the informative samples each user needs in all (exact)."""
        return row_sums(self.indptr, self.edge_required)

    @property
    def lower_bound(self) -> int:
        """``max_i sum_j ceil(w_ij)``: no decomposition has fewer assignments (one sample per user each)."""
        return int(self.user_demand.max())

    @property
    def arm_degrees(self) -> np.ndarray:
        """``|B_j|``: how many users may play each arm."""
        return np.bincount(self.edge_arms, minlength=self.n_arms)

    @cached_property
    def arm_order(self) -> np.ndarray:
        """(E,) int64 the edges sorted by arm, stably (by user within an arm): arm j's edges are
        ``arm_order[s[j]:s[j + 1]]`` for ``s`` the cumulative :attr:`arm_degrees`. Computed once (radix sort)."""
        order = stable_order(self.edge_arms, self.n_arms)
        order.flags.writeable = False
        return order

    @property
    def wanted_arms(self) -> np.ndarray:
        """(K,) bool: the arms some user requires a sample of."""
        return np.bincount(self.edge_arms[self.edge_required > 0], minlength=self.n_arms) > 0

    @checked()
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
        return np.flatnonzero((deg > 0) & (deg <= C) & self.wanted_arms)

    @property
    def scale(self) -> float:
        """D: the batched graph's total demand when it has one, else ``max_i sum_j w_ij``."""
        if self.demand is not None:
            return self.demand
        return float(np.bincount(self.edge_users, weights=self.edge_weights, minlength=self.n_users).max())

    @checked()
    def normalized(self) -> tuple[np.ndarray, float]:
        """The normalised weights ``w_hat = w / D`` (row sums <= 1) as a dense array, and the scale D.

        D is :attr:`scale`. Dense: meant for the small graphs of the exact methods (``beta``).

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
        d = self.scale
        return (self.weights / d if d > 0 else self.toarray()), d  # d = 0: every user has zero demand

    @checked()
    def arm_names(self, idx) -> list[str]:
        """The names of the arms with the given indices.

        Parameters
        ----------
        idx : int or array_like of int
            Arm indices in ``[0, n_arms)`` (a single index or a sequence, e.g. the output of :meth:`thin_arms`).

        Returns
        -------
        list of str
            The arms' names, in the order of ``idx``.

        Raises
        ------
        InvalidInputError
            For an index that is not an integer (a bool, a float such as 1.7, a string) or is outside
            ``[0, n_arms)`` (-1 is refused, not read as the last arm).

        Examples
        --------
        >>> import numpy as np
        >>> g = DemandGraph.from_batched(10, np.array([[1, 1], [1, 0]], bool))
        >>> g.arm_names([1, 0]), g.arm_names(1)
        (['a1', 'a0'], ['a1'])
        """
        return [self.arms[int(j)] for j in np.atleast_1d(idx)]


def row_sums(indptr: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(N,) int64 sums of integer per-edge ``values`` over each user's edges (``indptr`` as a CSR matrix's)."""
    out = np.zeros(len(indptr) - 1, dtype=np.int64)
    has = indptr[1:] > indptr[:-1]
    if has.any():
        out[has] = np.add.reduceat(np.asarray(values, dtype=np.int64), indptr[:-1][has])
    return out


def _lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """``values`` at ``wanted`` keys (0 where a key is absent); ``keys`` need not be sorted."""
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    out = np.zeros(len(wanted), dtype=values.dtype)
    if not len(keys):
        return out
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    hit = keys[at] == wanted
    out[hit] = values[at[hit]]
    return out


def _check_exact_limit(values: np.ndarray, rows, cols, users, arms) -> None:
    """Refuse integer weights above :data:`MAX_DEMAND` before they are made float (2^53 + 1 would round to
    2^53); ``values`` of an integer or object dtype (Python ints of any size) are compared exactly."""
    v = np.asarray(values)
    if not (np.issubdtype(v.dtype, np.integer) or v.dtype == object) or v.size == 0:
        return
    over = np.array([x > MAX_DEMAND for x in v.ravel()]) if v.dtype == object else (v > MAX_DEMAND).ravel()
    if over.any():
        k = int(np.argmax(over))
        where = (
            f"user {users[rows[k]]!r} on arm {arms[cols[k]]!r}"
            if rows is not None
            else f"entry {tuple(int(i) for i in np.unravel_index(k, v.shape))}"
        )
        raise InvalidInputError(f"weight of {where} is {int(v.ravel()[k])}; weights must be at most {LIMIT_TEXT}")


def _check_weight_values(
    vals: np.ndarray, rows: np.ndarray, cols: np.ndarray, users: Sequence[str], arms: Sequence[str]
) -> None:
    """Refuse a negative, non-finite or too large weight, naming its user and arm."""
    bad = ~np.isfinite(vals) | (vals < 0)
    if bad.any():
        k = int(np.argmax(bad))
        raise InvalidInputError(
            f"weight of user {users[rows[k]]!r} on arm {arms[cols[k]]!r} is {vals[k]}; "
            "weights must be finite and non-negative"
        )
    if (vals > MAX_DEMAND).any():
        k = int(np.argmax(vals > MAX_DEMAND))
        raise InvalidInputError(
            f"weight of user {users[rows[k]]!r} on arm {arms[cols[k]]!r} is "
            f"{vals[k]:.6g}; weights must be at most {LIMIT_TEXT}"
        )


def _check_totals(rows: np.ndarray, required: np.ndarray, users: Sequence[str]) -> None:
    """Check every user's demand ``sum_j ceil(w_ij)`` against :data:`MAX_DEMAND` (each term is at most 2^53,
    so a float64 partial sum that passes the limit is detected before any int64 overflow could matter)."""
    totals = np.bincount(rows, weights=required.astype(np.float64), minlength=len(users))
    for i in np.flatnonzero(totals >= MAX_DEMAND):  # float sums near the limit are recounted exactly
        exact = sum(int(x) for x in required[rows == i])
        if exact > MAX_DEMAND:
            raise InvalidInputError(
                f"user {users[int(i)]!r} asks for {exact} samples in all (sum of ceil(w_ij)); the limit is {LIMIT_TEXT}"
            )


def active_from_sets(
    active_sets: Mapping[str, Sequence[str]], arms: Sequence[str] | None = None
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
