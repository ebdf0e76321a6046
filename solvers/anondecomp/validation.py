"""Checks every decomposition method shares: the anonymity parameter, feasibility, and method options.

:func:`prepare` is the first step of every method (and of :func:`~anondecomp.lp_lower_bound`): it checks C
and removes, in best-effort mode, the arms that can never be observed. The ``check_*`` functions validate
the options of :func:`~anondecomp.decompose` whether or not the chosen method reads them.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import math
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from anondecomp.errors import InfeasibleError, InvalidInputError, InvalidTypeError, MethodNotApplicableError

if TYPE_CHECKING:
    from anondecomp.graph import DemandGraph

VERTEX_ROUTES = ("auto", "schedule", "colouring", "caratheodory")
DENSE_CELLS = 50_000_000
"""Cells above which a method refuses to build one dense model (each int64 array of it 400 MB or more):
users x arms for ``optimal``, whose model spans the whole graph (the LP of :func:`~anondecomp.lp_lower_bound`
has no such limit: :data:`anondecomp.lower_bound.MAX_PAIRS` (type, arm) pairs); N users x the largest block's
arms for ``block``; N users x the wanted arms for ``polytope``. ``auto`` leaves its dense routes (polytope,
block, time-shared faces) to sessions above it, users x arms; ``sessions``, ``slack``, ``greedy`` and
``randomized`` build no dense model."""
OUTPUT_CELLS = 500_000_000
"""Assignments x users above which a method refuses to build its output (1 GB or more of arm indices):
``greedy``'s one assignment per wanted arm, ``randomized``'s draws (the draws it expects to need, at least, checked
before drawing; the draws themselves as they come), ``block``'s assignments (one per block at least)."""


@dataclass(frozen=True)
class Prepared:
    """The demand a method must meet, thin arms removed in best-effort mode.

    ``edge_required`` holds it per edge of ``graph`` (its support, :class:`~anondecomp.DemandGraph`); the
    constructor also takes a dense (N, K) matrix, which it reads at the edges. ``required`` is the dense
    (N, K) form, built on access for the methods whose models are dense (small graphs only)."""

    graph: DemandGraph
    C: int
    edge_required: np.ndarray
    uncovered: np.ndarray

    def __post_init__(self) -> None:
        r = np.asarray(self.edge_required)
        if r.ndim == 2:  # a dense (N, K) demand: read it at the edges (it is 0 off the support)
            r = r[self.graph.edge_users, self.graph.edge_arms]
        object.__setattr__(self, "edge_required", r.astype(np.int64, copy=False))

    @cached_property
    def required(self) -> np.ndarray:
        """(N, K) int64 dense demand, read-only, built on first access (for the dense methods only)."""
        out = np.zeros(self.graph.shape, dtype=np.int64)
        out[self.graph.edge_users, self.graph.edge_arms] = self.edge_required
        out.flags.writeable = False
        return out

    @property
    def user_demand(self) -> np.ndarray:
        """(N,) int64 each user's demand to meet."""
        from anondecomp.graph import row_sums

        return row_sums(self.graph.indptr, self.edge_required)

    @property
    def lower_bound(self) -> int:
        """max_i sum_j required_ij, the trivial lower bound on R for the demand to meet."""
        return int(self.user_demand.max()) if self.graph.n_users else 0


def check_C(C: int) -> int:
    """The anonymity parameter: an integer >= 1 (:class:`InvalidInputError` otherwise)."""
    return check_int("C", C, lo=1)


def thin_arms_error(names: list[str], C: int, advice: str = "") -> InfeasibleError:
    """The error for arms wanted by 1..C users (they can never be observed), naming them."""
    listed = ", ".join(repr(a) for a in names)
    return InfeasibleError(
        f"arm(s) {listed} are wanted by fewer than C+1 = {C + 1} users and can never be observed{advice}", arms=names
    )


def prepare(graph: DemandGraph, C: int, best_effort: bool) -> Prepared:
    """Check C and feasibility: an arm wanted by 1..C users can never be observed (paper 000, Sec. 3.2).

    Raises
    ------
    InvalidInputError when C is not an integer >= 1; InfeasibleError naming the thin arms unless
    ``best_effort``, which instead drops their demand and lists it in ``uncovered``.
    """
    C = check_C(C)
    thin = graph.thin_arms(C)
    if len(thin) and not best_effort:
        raise thin_arms_error(graph.arm_names(thin), C, "; use best_effort to cover everything else")
    return Prepared(graph, C, *drop_uncoverable(graph, C, graph.edge_required))


def drop_uncoverable(graph: DemandGraph, C: int, required: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The demand that can be met, and the pairs that cannot: a pair is coverable when its arm is wanted by
    at least C+1 users (positive demand), else no assignment ever observes the arm.

    ``required`` is per edge of ``graph`` ((E,), as ``graph.edge_required``) or a dense (N, K) matrix; the
    result has the same form.

    Returns
    -------
    (``required`` with the uncoverable pairs set to 0 (a copy when any is), (m, 2) int array of those
    (user, arm) pairs with positive ``required``, in row-major order).
    """
    thin = graph.thin_arms(C)
    if not len(thin):
        return required, np.empty((0, 2), dtype=np.int64)
    mask = np.zeros(graph.n_arms, dtype=bool)
    mask[thin] = True
    if np.ndim(required) == 2:
        uncovered = np.argwhere((required > 0) & mask[None, :])
        required = required.copy()
        required[:, thin] = 0
        return required, uncovered
    drop = mask[graph.edge_arms]
    uncovered = np.stack(
        [graph.edge_users[drop & (required > 0)], graph.edge_arms[drop & (required > 0)]], axis=1
    ).astype(np.int64)
    return np.where(drop, 0, required), uncovered


_ALLOW_LARGE: contextvars.ContextVar[bool] = contextvars.ContextVar("anondecomp_allow_large", default=False)
ALLOW_LARGE = "pass allow_large=True (--allow-large) to build it anyway"
"""The end of every refusal by :data:`DENSE_CELLS` or :data:`OUTPUT_CELLS` in a method."""


@contextlib.contextmanager
def allowing_large(allow: bool = True) -> Iterator[None]:
    """Within the block, the methods' size limits (:data:`DENSE_CELLS`, :data:`OUTPUT_CELLS`) let a graph past
    them through when ``allow`` is true: :func:`~anondecomp.decompose` runs its method in it for
    ``allow_large=True`` (``anonbandits decompose --allow-large``). A context, so it reaches every check of the
    method however deep; it changes no result within the limits.

    Parameters
    ----------
    allow : bool, optional
        Confirm large models and outputs (default True); False leaves the limits on.

    Yields
    ------
    None

    Examples
    --------
    >>> with allowing_large():
    ...     check_model_cells(10**5, 10**4, "optimal", "its model")
    >>> large_allowed()
    False
    """
    token = _ALLOW_LARGE.set(bool(allow))
    try:
        yield
    finally:
        _ALLOW_LARGE.reset(token)


def large_allowed() -> bool:
    """Whether an enclosing :func:`allowing_large` confirmed sizes above the methods' limits."""
    return _ALLOW_LARGE.get()


def check_dense(graph: DemandGraph, method: str) -> None:
    """Refuse a graph above :data:`DENSE_CELLS` users x arms for a method whose model is dense, in one line
    (:class:`~anondecomp.MethodNotApplicableError`), unless :func:`allowing_large` confirms it."""
    cells = graph.n_users * graph.n_arms
    if cells > DENSE_CELLS and not large_allowed():
        raise MethodNotApplicableError(
            f"method {method!r} builds (users x arms) arrays: {graph.n_users} x {graph.n_arms} = {cells:.3g} cells "
            f"is above its limit of {DENSE_CELLS:.0e} (anondecomp.validation.DENSE_CELLS); {ALLOW_LARGE}, or use "
            "method 'auto' or 'sessions', which decompose graphs of any size"
        )


def check_output_cells(rows: float, n_users: int, method: str, what: str, noun: str = "distinct assignments") -> None:
    """Refuse an output of ``rows`` assignments x ``n_users`` above :data:`OUTPUT_CELLS`, in one line, unless
    :func:`allowing_large` confirms it.

    ``rows`` may be an estimate (a float); ``what`` says where it comes from, ``noun`` what the rows are."""
    cells = rows * n_users
    if cells > OUTPUT_CELLS and not large_allowed():
        count = f"{rows:.3g}" if isinstance(rows, float) and rows >= 1e6 else f"{math.ceil(rows)}"
        raise MethodNotApplicableError(
            f"method {method!r} would build {count} {noun} ({what}) x {n_users} users = {cells:.3g} cells, above "
            f"the limit of {OUTPUT_CELLS:.0e} (anondecomp.validation.OUTPUT_CELLS); {ALLOW_LARGE}, or use method "
            "'auto' or 'sessions', which decompose graphs of any size"
        )


def check_model_cells(rows: int, cols: int, method: str, what: str) -> None:
    """Refuse a dense model of ``rows`` users x ``cols`` arms above :data:`DENSE_CELLS`, in one line, before it
    is built (``what`` names the model), unless :func:`allowing_large` confirms it."""
    cells = rows * cols
    if cells > DENSE_CELLS and not large_allowed():
        raise MethodNotApplicableError(
            f"method {method!r}: {what}, {rows} users x {cols} arms = {cells:.3g} cells, is above DENSE_CELLS = "
            f"{DENSE_CELLS:.0e} (anondecomp.validation.DENSE_CELLS); {ALLOW_LARGE}, or use method 'auto' or "
            "'sessions', which decompose graphs of any size"
        )


def check_vertices(vertices: str) -> str:
    """How vertices of P_C are found: one of :data:`VERTEX_ROUTES`."""
    if vertices not in VERTEX_ROUTES:
        raise InvalidInputError(f"vertices must be one of {', '.join(VERTEX_ROUTES)}, got {show(vertices)}")
    return vertices


def check_time_limit(time_limit: float | None) -> float | None:
    """``None`` (no limit) or a positive, finite number of seconds."""
    if time_limit is None:
        return None
    if (
        isinstance(time_limit, bool)
        or not isinstance(time_limit, int | float | np.integer | np.floating)
        or not math.isfinite(time_limit)
        or time_limit <= 0
    ):
        raise InvalidInputError(f"time_limit must be a positive finite number of seconds, got {show(time_limit)}")
    return float(time_limit)


def check_improve(value: bool) -> bool:
    """``improve``: a bool (numpy's too); anything else, "no" or 0 included, is refused."""
    if not isinstance(value, bool | np.bool_):
        raise InvalidInputError(f"improve must be True or False, got {show(value)}")
    return bool(value)


def check_seed(seed: int | None) -> int | None:
    """``None`` or a non-negative integer (what :func:`numpy.random.default_rng` accepts)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0):
        raise InvalidInputError(f"seed must be a non-negative integer, got {show(seed)}")
    return seed


def check_rng(rng: np.random.Generator | None) -> np.random.Generator | None:
    """``None`` or a :class:`numpy.random.Generator`."""
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise InvalidInputError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


# -- the checked boundary ---------------------------------------------------------------------------------------
# Every public function and constructor of ``anondecomp`` is wrapped by :func:`checked`, which binds its arguments
# and runs the rule of :data:`RULES` named like each parameter (or the override the decorator names) before the
# body runs. A rule takes ``(name, value, bound)`` (``bound``: the arguments bound so far, in order) and returns
# the value to pass on (normalised: a numpy integer C becomes an int, a float16 demand a float), or raises
# :class:`~anondecomp.errors.InvalidInputError` (:class:`~anondecomp.errors.InvalidTypeError` for a wrong type)
# naming the parameter and the value.

F = TypeVar("F", bound=Callable[..., Any])
Rule = Callable[[str, Any, Mapping[str, Any]], Any]


def show(value: Any) -> str:
    """A value for a message: its repr cut to 60 characters, an array by its shape and dtype."""
    if isinstance(value, np.ndarray) and value.size > 8:
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, np.generic) and not isinstance(value, np.void):
        value = value.item()  # nan, not np.float64(nan)
    text = " ".join(repr(value).split())  # one line: an array's repr spans several
    return text if len(text) <= 60 else text[:57] + "..."


def is_number(x: Any) -> bool:
    """A real number: Python or numpy int or float, never a bool (nor a string, complex or array)."""
    return isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool | np.bool_)


def check_int(name: str, value: Any, lo: int | None = None, hi: int | None = None) -> int:
    """An integer (Python or numpy, not a bool) within ``[lo, hi]``; returned as a Python int."""
    bound = (f" >= {lo}" if lo is not None else "") + (f" and <= {hi}" if hi is not None else "")
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise InvalidTypeError(f"{name} must be an integer{bound}, got {show(value)}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise InvalidInputError(f"{name} must be an integer{bound}, got {show(value)}")
    return int(value)


def check_number(
    name: str, value: Any, *, positive: bool = False, lo: float | None = None, hi: float | None = None
) -> int | float:
    """A finite real number (not a bool, string or complex), positive or within ``[lo, hi]`` when asked.

    A Python int is returned as is (it may exceed float range and be refused by ``hi`` exactly), any other
    number as a Python float."""
    if not is_number(value):
        raise InvalidTypeError(f"{name} must be a number, got {show(value)}")
    if not isinstance(value, int) and not math.isfinite(float(value)):
        raise InvalidInputError(f"{name} must be a finite number, got {show(value)}")
    if positive and not value > 0:
        raise InvalidInputError(f"{name} must be positive, got {show(value)}")
    if lo is not None and value < lo:
        raise InvalidInputError(f"{name} must be at least {lo}, got {show(value)}")
    if hi is not None and value > hi:
        raise InvalidInputError(f"{name} must be at most {hi}, got {show(value)}")
    return int(value) if isinstance(value, int | np.integer) else float(value)


def check_bool(name: str, value: Any) -> bool:
    """True or False (numpy's too); "no", 0, 1 and None are refused."""
    if not isinstance(value, bool | np.bool_):
        raise InvalidTypeError(f"{name} must be True or False, got {show(value)}")
    return bool(value)


def check_str(name: str, value: Any) -> str:
    """A string (the choice among allowed values is the function's own check)."""
    if not isinstance(value, str):
        raise InvalidTypeError(f"{name} must be a string, got {show(value)}")
    return value


def check_path(name: str, value: Any) -> Any:
    """A file system path: str or os.PathLike, not empty."""
    if not isinstance(value, str | os.PathLike) or str(value) == "":
        raise InvalidTypeError(f"{name} must be a non-empty path (str or os.PathLike), got {show(value)}")
    return value


def check_names(name: str, value: Any) -> tuple | None:
    """``None`` or a sequence of names (str, or int ids, made str by the graph); a string is not a sequence of
    names, and ``None``, bools and floats are not names."""
    if value is None:
        return None
    if isinstance(value, str | bytes) or not hasattr(value, "__iter__") or isinstance(value, Mapping):
        raise InvalidTypeError(f"{name} must be a sequence of names (not a string), got {show(value)}")
    items = tuple(value.tolist() if isinstance(value, np.ndarray) else value)
    for k, item in enumerate(items):
        if not isinstance(item, str | int | np.integer) or isinstance(item, bool | np.bool_):
            raise InvalidTypeError(f"{name}[{k}] must be a name (str), got {show(item)}")
    return items


def _values_of(name: str, value: Any) -> tuple[np.ndarray, tuple[int, ...]]:
    """The values of a matrix argument (a sparse matrix's stored data) and its shape, refusing ragged input."""
    if type(value).__module__.startswith("scipy.sparse"):
        return np.asarray(value.data), tuple(value.shape)
    if isinstance(value, str | bytes | Mapping) or value is None or is_number(value):
        raise InvalidTypeError(f"{name} must be a 2-D (users x arms) array, got {show(value)}")
    try:
        a = np.asarray(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a rectangular 2-D (users x arms) array, got {show(value)}") from None
    if a.ndim != 2:
        raise InvalidInputError(f"{name} must be a 2-D (users x arms) array, got shape {a.shape}")
    return a, a.shape


def _real_values(name: str, v: np.ndarray) -> None:
    """Refuse values that are not real numbers: bools, complex, strings, None and other objects."""
    if v.dtype == bool:
        raise InvalidTypeError(f"{name} must hold numbers, got booleans")
    if v.dtype == object:
        found = [x for x in v.ravel() if not is_number(x)][:1]
        if found:
            bad = found[0]
            raise InvalidTypeError(f"{name} must hold numbers, got {show(bad)}")
    elif not (np.issubdtype(v.dtype, np.integer) or np.issubdtype(v.dtype, np.floating)):
        raise InvalidTypeError(f"{name} must hold real numbers, got dtype {v.dtype}")


def check_weights(name: str, value: Any) -> Any:
    """A 2-D matrix (dense or scipy.sparse) of real numbers: no bools, strings, complex or None (values are
    the graph's own check, which names the user and arm)."""
    v, _ = _values_of(name, value)
    _real_values(name, v)
    return value


def check_finite_array(name: str, value: Any) -> np.ndarray:
    """A 2-D array of finite real numbers, as float64 (a copy only when the dtype differs)."""
    v, _ = _values_of(name, value)
    _real_values(name, v)
    x = np.asarray(v, dtype=float)
    if x.size == 0:
        raise InvalidInputError(f"{name} must be a non-empty 2-D array, got shape {x.shape}")
    bad = ~np.isfinite(x)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InvalidInputError(f"{name} must be finite: {name}[{i}, {j}] is {x[i, j]}")
    return x


def check_boolean_matrix(name: str, value: Any, optional: bool = True) -> Any:
    """``None`` or a 2-D matrix (dense or scipy.sparse) of booleans or 0/1 numbers; NaN, 0.5, -1 and strings
    are refused."""
    if value is None and optional:
        return None
    v, _ = _values_of(name, value)
    if v.dtype == bool:
        return value
    if v.dtype == object or not (np.issubdtype(v.dtype, np.integer) or np.issubdtype(v.dtype, np.floating)):
        if v.dtype != object or not all(is_number(x) or isinstance(x, bool | np.bool_) for x in v.ravel()):
            raise InvalidTypeError(f"{name} must hold booleans (or 0 and 1), got dtype {v.dtype}")
    bad = ~np.isin(v, (0, 1))
    if bad.any():
        at = np.argwhere(bad)[0] if v.ndim == 2 else (int(np.argmax(bad)),)
        raise InvalidInputError(
            f"{name} must hold booleans (or 0 and 1), got {show(v[tuple(at)].item())} at {tuple(int(k) for k in at)}"
        )
    return value


def check_graph(name: str, value: Any) -> Any:
    """A :class:`~anondecomp.DemandGraph`."""
    from anondecomp.graph import DemandGraph

    if not isinstance(value, DemandGraph):
        raise InvalidTypeError(f"{name} must be an anondecomp.DemandGraph, got {show(value)}")
    return value


def check_decomposition(name: str, value: Any, bound: Mapping[str, Any] | None = None) -> Any:
    """A :class:`~anondecomp.Decomposition` (of the bound ``graph`` when there is one)."""
    from anondecomp.result import Decomposition

    if not isinstance(value, Decomposition):
        raise InvalidTypeError(f"{name} must be an anondecomp.Decomposition, got {show(value)}")
    graph = (bound or {}).get("graph")
    if graph is not None and value.graph is not graph and value.graph.shape != graph.shape:
        raise InvalidInputError(
            f"{name} decomposes a {value.graph.shape[0]} x {value.graph.shape[1]} graph, not "
            f"this {graph.shape[0]} x {graph.shape[1]} one"
        )
    return value


def check_demand(name: str, value: Any) -> Any:
    """``None`` or the total demand D: a positive finite number at most 2^53 (a Python int of any size is
    compared exactly)."""
    from anondecomp.graph import LIMIT_TEXT, MAX_DEMAND, describe

    if value is None:
        return None
    if not is_number(value):
        raise InvalidTypeError(f"demand D must be a number, got {show(value)}")
    if isinstance(value, int | np.integer) and value > MAX_DEMAND:
        raise InvalidInputError(f"demand D is {describe(int(value))}; the limit is {LIMIT_TEXT}")
    value = check_number("demand D", value, positive=True)
    if value > MAX_DEMAND:
        raise InvalidInputError(f"demand D is {describe(value)}; the limit is {LIMIT_TEXT}")
    return value


def check_arm_set(name: str, value: Any) -> Any:
    """``None``, arm indices (integers) or a boolean mask (range and length are checked against K later)."""
    if value is None:
        return None
    if isinstance(value, str | bytes | Mapping):
        raise InvalidTypeError(f"{name} must be arm indices or a boolean mask, got {show(value)}")
    try:
        a = np.asarray(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be arm indices or a boolean mask, got {show(value)}") from None
    if a.ndim != 1 or not (a.dtype == bool or np.issubdtype(a.dtype, np.integer) or a.size == 0):
        raise InvalidTypeError(f"{name} must be a 1-D array of arm indices or a boolean mask, got {show(value)}")
    return value


def check_faces(name: str, value: Any) -> Any:
    """``None`` or a sequence of 1-D boolean arm sets."""
    if value is None:
        return None
    if isinstance(value, str | bytes | Mapping) or not hasattr(value, "__iter__"):
        raise InvalidTypeError(f"{name} must be a sequence of boolean arm sets, got {show(value)}")
    faces = list(value)
    for k, f in enumerate(faces):
        a = np.asarray(f)
        if a.dtype != bool or a.ndim != 1:
            raise InvalidTypeError(f"{name}[{k}] must be a 1-D boolean arm set, got {show(f)}")
    return faces


def check_extra(name: str, value: Any) -> Any:
    """``None`` or a dict of header fields with string keys."""
    if value is not None and (not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value)):
        raise InvalidTypeError(f"{name} must be a dict with string keys, got {show(value)}")
    return value


def check_int_array(name: str, value: Any, ndim: int) -> np.ndarray:
    """An ``ndim``-D array of integers (an integer dtype, or Python ints in an object array); bools, floats
    (1.7 would be truncated) and strings are refused."""
    if value is None or isinstance(value, str | bytes | Mapping) or is_number(value):
        raise InvalidTypeError(f"{name} must be a {ndim}-D array of integers, got {show(value)}")
    try:
        a = np.asarray(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a rectangular {ndim}-D array of integers") from None
    if a.ndim != ndim:
        raise InvalidInputError(f"{name} must be a {ndim}-D array of integers, got shape {a.shape}")
    if a.dtype == object:
        found = [x for x in a.ravel() if not isinstance(x, int | np.integer) or isinstance(x, bool)][:1]
        if found:
            bad = found[0]
            raise InvalidTypeError(f"{name} must hold integers, got {show(bad)}")
    elif a.dtype == bool or not np.issubdtype(a.dtype, np.integer):
        raise InvalidTypeError(f"{name} must hold integers, got dtype {a.dtype}")
    return a


def check_arm_indices(name: str, value: Any, bound: Mapping[str, Any]) -> Any:
    """One arm index or a 1-D sequence of them (integers, no bools or floats), each in ``[0, n_arms)`` of the
    bound graph (``self``); an empty sequence is allowed."""
    if isinstance(value, bool | np.bool_):
        raise InvalidTypeError(f"{name} must be arm indices (integers), got {show(value)}")
    if isinstance(value, int | np.integer):
        a = np.array([value])
    elif isinstance(value, list | tuple | np.ndarray) and len(value) == 0:
        return value
    else:
        a = check_int_array(name, value, 1)
    graph = bound.get("self")
    n_arms = getattr(graph, "n_arms", None)
    if n_arms is not None and a.size:
        bad = (a < 0) | (a >= n_arms)
        if bad.any():
            raise InvalidInputError(f"{name} must hold arm indices in [0, {n_arms}), got {show(a[bad][0])}")
    return value


def check_assignments(name: str, value: Any, bound: Mapping[str, Any]) -> Any:
    """A :class:`~anondecomp.Decomposition`, or an (n, N) integer array of arm indices."""
    from anondecomp.result import Decomposition

    if isinstance(value, Decomposition):
        return check_decomposition(name, value, bound)
    return check_int_array(name, value, 2)


def check_multiplicities(name: str, value: Any, bound: Mapping[str, Any]) -> Any:
    """``None`` (with a Decomposition) or an (n,) array of integers."""
    from anondecomp.result import Decomposition

    if value is None:
        if not isinstance(bound.get("assignments"), Decomposition | None):
            raise InvalidInputError(
                f"{name} must be given with an assignments array (only a Decomposition carries its own)"
            )
        return None
    return check_int_array(name, value, 1)


def check_required(name: str, value: Any, bound: Mapping[str, Any]) -> Any:
    """``None`` or an (N, K) array of non-negative integers (integral floats too) of the bound graph's shape."""
    if value is None:
        return None
    v, shape = _values_of(name, value)
    _real_values(name, v)
    graph = bound.get("graph")
    if graph is not None and tuple(shape) != tuple(graph.shape):
        raise InvalidInputError(f"{name} must have the graph's shape {graph.shape}, got {tuple(shape)}")
    a = np.asarray(v)
    bad = ~np.isfinite(a.astype(float)) | (a < 0) | (a != np.floor(a.astype(float)))
    if bad.any():
        at = tuple(int(k) for k in np.argwhere(bad)[0])
        raise InvalidInputError(f"{name} must hold non-negative integers, got {show(a[at])} at {at}")
    return value


def check_absence(name: str, value: Any, bound: Mapping[str, Any]) -> Any:
    """``None``, one probability in ``[0, 1)`` that each user misses a block (every user alike), or one per
    user of the bound graph (a 1-D array of its length). Returned as a Python float, or as a read-only float64
    copy of the array; a bool, a string, NaN or a value of 1 (a user never present) is refused."""
    if value is None:
        return None
    if is_number(value):
        a = check_number(name, value)
        if not 0 <= a < 1:
            raise InvalidInputError(f"{name} must be a probability in [0, 1), got {show(value)}")
        return float(a)
    if isinstance(value, str | bytes | Mapping | bool | np.bool_) or not hasattr(value, "__len__"):
        raise InvalidTypeError(f"{name} must be a probability in [0, 1) or one per user, got {show(value)}")
    try:
        v = np.asarray(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a 1-D array of probabilities, one per user") from None
    _real_values(name, v)
    graph = bound.get("graph")
    n = getattr(graph, "n_users", None)
    if v.ndim != 1 or (n is not None and len(v) != n):
        raise InvalidInputError(f"{name} must hold one probability per user ({n} users), got shape {v.shape}")
    x = np.array(v, dtype=np.float64)
    bad = ~np.isfinite(x) | (x < 0) | (x >= 1)
    if bad.any():
        k = int(np.argmax(bad))
        who = f"user {graph.users[k]!r}" if graph is not None else f"entry {k}"
        raise InvalidInputError(f"{name} must be a probability in [0, 1): {who} has {show(v[k])}")
    x.flags.writeable = False
    return x


def check_capacity(name: str, value: Any, bound: Mapping[str, Any]) -> Any:
    """``None``, one capacity (an integer >= 1: at most that many users on an arm in one assignment) for every
    arm, or one per arm of the bound graph; returned as a read-only (K,) int64 array (or ``None``)."""
    if value is None:
        return None
    graph = bound.get("graph")
    K = getattr(graph, "n_arms", None)
    if is_number(value):
        m = check_int(name, value, lo=1)
        if K is None:
            return m
        out = np.full(K, min(m, 2**62), dtype=np.int64)
    else:
        v = check_int_array(name, value, 1)
        if not isinstance(value, np.ndarray) and any(isinstance(x, bool | np.bool_) for x in v.tolist()):
            raise InvalidTypeError(f"{name} must hold integers, got a bool")
        if K is not None and len(v) != K:
            raise InvalidInputError(f"{name} must hold one capacity per arm ({K} arms), got {len(v)}")
        if len(v) and v.min() < 1:
            raise InvalidInputError(f"{name} must be integers >= 1, got {v.min()} at arm {int(np.argmin(v))}")
        out = np.array(np.minimum(v, 2**62), dtype=np.int64)
    out.flags.writeable = False
    return out


def check_one_absence(name: str, value: Any, bound: Mapping[str, Any]) -> float:
    """One absence probability in ``[0, 1)`` (where one per user has no meaning: a group size for all users)."""
    if not is_number(value):
        raise InvalidTypeError(f"{name} must be a probability in [0, 1), got {show(value)}")
    return check_absence(name, value, bound)


def check_confidence(name: str, value: Any) -> float | None:
    """``None`` or a probability strictly between 0 and 1 (a group must keep C+1 present users with at least
    this probability); a bool, a string, NaN, 0 and 1 are refused."""
    if value is None:
        return None
    q = check_number(name, value)
    if not 0 < q < 1:
        raise InvalidInputError(f"{name} must be a probability in (0, 1), got {show(value)}")
    return float(q)


def check_received(name: str, value: Any, bound: Mapping[str, Any]) -> Any:
    """An (N, K) matrix (dense or scipy.sparse) of the bound graph's shape holding whole, non-negative, finite
    counts, in any numeric dtype (bools, strings, NaN, 1.5 and -1 are refused, naming the entry)."""
    v, shape = _values_of(name, value)
    _real_values(name, v)
    graph = bound.get("graph")
    if graph is not None and tuple(shape) != tuple(graph.shape):
        raise InvalidInputError(f"{name} must have the graph's shape {graph.shape}, got {tuple(shape)}")
    a = np.asarray(v)
    if np.issubdtype(a.dtype, np.integer):
        bad = a < 0
    elif a.dtype == object:  # Python numbers of any size: compared one by one, never made float
        bad = np.array(
            [
                not (x >= 0 and (isinstance(x, int | np.integer) or (math.isfinite(x) and x == math.floor(x))))
                for x in a.ravel()
            ],
            dtype=bool,
        ).reshape(a.shape)
    else:
        x = a.astype(np.float64)
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(x) | (x < 0) | (x != np.floor(x))
    if bad.any():
        if type(value).__module__.startswith("scipy.sparse"):
            coo = value.tocoo()
            k = int(np.argmax(np.asarray(bad).ravel()))
            at: tuple[int, ...] = (int(coo.row[k]), int(coo.col[k]))
            shown = show(np.asarray(coo.data)[k])
        else:
            at = tuple(int(k) for k in np.argwhere(bad)[0])
            shown = show(a[at])
        raise InvalidInputError(f"{name} must hold whole non-negative counts, got {shown} at {at}")
    return value


def check_plan(name: str, value: Any, bound: Mapping[str, Any]) -> Any:
    """A :class:`~anondecomp.Decomposition` over the bound graph's users and arms (same names, same order)."""
    value = check_decomposition(name, value, bound)
    graph = bound.get("graph")
    if graph is not None and (value.graph.users != graph.users or value.graph.arms != graph.arms):
        raise InvalidInputError(f"{name} must decompose a graph of the same users and arms, in the same order")
    return value


def freeze_arrays(obj: Any) -> None:
    """Make every numpy array field of a frozen dataclass a read-only view (the caller's array keeps its flags)."""
    import dataclasses

    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, np.ndarray) and value.flags.writeable:
            view = value.view()
            view.flags.writeable = False
            object.__setattr__(obj, f.name, view)


def _optional(rule: Callable[[str, Any], Any]) -> Rule:
    return lambda name, value, bound: None if value is None else rule(name, value)


def _plain(rule: Callable[[str, Any], Any]) -> Rule:
    return lambda name, value, bound: rule(name, value)


def _seed_rule(name: str, value: Any, bound: Mapping[str, Any]) -> Any:
    return None if value is None else check_decomposition(name, value, bound)


def _rng_rule(name: str, value: Any, bound: Mapping[str, Any]) -> Any:
    return check_rng(value)


RULES: dict[str, Rule] = {
    # the anonymity parameter and other counts
    "C": lambda name, value, bound: check_int(name, value, lo=1),
    "U": lambda name, value, bound: check_int(name, value, lo=0),
    "n_arms": lambda name, value, bound: check_int(name, value, lo=1),
    "k": lambda name, value, bound: check_int(name, value, lo=0),
    "limit": lambda name, value, bound: check_int(name, value, lo=0),
    "max_seed_faces": lambda name, value, bound: check_int(name, value, lo=1),
    # numbers
    "demand": lambda name, value, bound: check_demand(name, value),
    "time_limit": lambda name, value, bound: check_time_limit(value),
    "tol": lambda name, value, bound: check_number(name, value, lo=0.0),
    "absence": check_absence,
    "capacity": check_capacity,
    "max_surplus_exposure": lambda name, value, bound: None if value is None else check_int(name, value, lo=0),
    "confidence": lambda name, value, bound: check_confidence(name, value),
    # flags and choices
    "best_effort": _plain(check_bool),
    "allow_large": _plain(check_bool),
    "compare_cold": _plain(check_bool),
    "improve": lambda name, value, bound: check_improve(value),
    "method": _plain(check_str),
    "sense": _plain(check_str),
    "what": _plain(check_str),
    # objects
    "graph": _plain(check_graph),
    "result": lambda name, value, bound: check_decomposition(name, value),
    "decomposition": lambda name, value, bound: check_decomposition(name, value),
    "seed": _seed_rule,  # lp_lower_bound's seed decomposition (decompose's int seed: OPTION_RULES)
    "rng": _rng_rule,
    # arrays
    "weights": _plain(check_weights),
    "active": lambda name, value, bound: check_boolean_matrix(name, value, optional=False),
    "support": _plain(check_boolean_matrix),
    "x": _plain(check_finite_array),
    "S": _plain(check_arm_set),
    "faces": _plain(check_faces),
    "users": _plain(check_names),
    "arms": _plain(check_names),
    "assignments": check_assignments,
    "idx": check_arm_indices,
    "multiplicities": check_multiplicities,
    "required": check_required,
    "received": check_received,
    "plan": check_plan,
    # files
    "path": _plain(check_path),
    "extra": _plain(check_extra),
}
"""The rule of every parameter name of the public functions (one table for the whole package)."""


def checked(**overrides: Rule) -> Callable[[F], F]:
    """Decorate a public function so that every argument passes its rule of :data:`RULES` (or ``overrides``)
    before the body runs; arguments left at their defaults are not checked (the defaults are valid).

    A call that does not fit the signature (an unknown keyword, a missing argument) is refused too, with an
    :class:`~anondecomp.errors.InvalidTypeError` naming the function."""

    def wrap(fn: F) -> F:
        sig = inspect.signature(fn)
        rules = {
            name: overrides.get(name, RULES.get(name))
            for name, p in sig.parameters.items()
            if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and name not in ("self", "cls")
        }

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                raise InvalidTypeError(f"{fn.__qualname__}(): {exc}") from None
            values = bound.arguments
            for name in list(values):
                rule = rules.get(name)
                if rule is not None:
                    values[name] = rule(name, values[name], values)
            return fn(*bound.args, **bound.kwargs)

        run.__signature__ = sig  # type: ignore[attr-defined]
        return run  # type: ignore[return-value]

    return wrap
