"""Checks every decomposition method shares: the anonymity parameter, feasibility, and method options.

:func:`prepare` is the first step of every method (and of :func:`~anondecomp.lp_lower_bound`): it checks C
and removes, in best-effort mode, the arms that can never be observed. The ``check_*`` functions validate
the options of :func:`~anondecomp.decompose` whether or not the chosen method reads them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from anondecomp.errors import InfeasibleError, InvalidInputError, MethodNotApplicableError
from anondecomp.graph import DemandGraph, row_sums

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
        return row_sums(self.graph.indptr, self.edge_required)

    @property
    def lower_bound(self) -> int:
        """max_i sum_j required_ij, the trivial lower bound on R for the demand to meet."""
        return int(self.user_demand.max()) if self.graph.n_users else 0


def check_C(C: int) -> int:
    """The anonymity parameter: an integer >= 1 (:class:`InvalidInputError` otherwise)."""
    if isinstance(C, bool) or not isinstance(C, int | np.integer) or C < 1:
        raise InvalidInputError(f"C must be an integer >= 1, got {C!r}")
    return int(C)


def thin_arms_error(names: list[str], C: int, advice: str = "") -> InfeasibleError:
    """The error for arms wanted by 1..C users (they can never be observed), naming them."""
    listed = ", ".join(repr(a) for a in names)
    return InfeasibleError(f"arm(s) {listed} are wanted by fewer than C+1 = {C + 1} users and can never be "
                           f"observed{advice}", arms=names)


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
    uncovered = np.stack([graph.edge_users[drop & (required > 0)], graph.edge_arms[drop & (required > 0)]],
                         axis=1).astype(np.int64)
    return np.where(drop, 0, required), uncovered


def check_dense(graph: DemandGraph, method: str) -> None:
    """Refuse a graph above :data:`DENSE_CELLS` users x arms for a method whose model is dense, in one line
    (:class:`~anondecomp.MethodNotApplicableError`)."""
    cells = graph.n_users * graph.n_arms
    if cells > DENSE_CELLS:
        raise MethodNotApplicableError(
            f"method {method!r} builds (users x arms) arrays: {graph.n_users} x {graph.n_arms} = {cells:.3g} cells "
            f"is above its limit of {DENSE_CELLS:.0e} (anondecomp.validation.DENSE_CELLS); method 'auto' or "
            "'sessions' decomposes graphs of any size")


def check_output_cells(rows: float, n_users: int, method: str, what: str,
                       noun: str = "distinct assignments") -> None:
    """Refuse an output of ``rows`` assignments x ``n_users`` above :data:`OUTPUT_CELLS`, in one line.

    ``rows`` may be an estimate (a float); ``what`` says where it comes from, ``noun`` what the rows are."""
    cells = rows * n_users
    if cells > OUTPUT_CELLS:
        count = f"{rows:.3g}" if isinstance(rows, float) and rows >= 1e6 else f"{math.ceil(rows)}"
        raise MethodNotApplicableError(
            f"method {method!r} would build {count} {noun} ({what}) x {n_users} users = {cells:.3g} cells, above "
            f"the limit of {OUTPUT_CELLS:.0e} (anondecomp.validation.OUTPUT_CELLS); method 'auto' or 'sessions' "
            "decomposes graphs of any size")


def check_model_cells(rows: int, cols: int, method: str, what: str) -> None:
    """Refuse a dense model of ``rows`` users x ``cols`` arms above :data:`DENSE_CELLS`, in one line, before it
    is built (``what`` names the model)."""
    cells = rows * cols
    if cells > DENSE_CELLS:
        raise MethodNotApplicableError(
            f"method {method!r}: {what}, {rows} users x {cols} arms = {cells:.3g} cells, is above DENSE_CELLS = "
            f"{DENSE_CELLS:.0e} (anondecomp.validation.DENSE_CELLS); method 'auto' or 'sessions' decomposes "
            "graphs of any size")


def check_vertices(vertices: str) -> str:
    """How vertices of P_C are found: one of :data:`VERTEX_ROUTES`."""
    if vertices not in VERTEX_ROUTES:
        raise InvalidInputError(f"vertices must be one of {', '.join(VERTEX_ROUTES)}, got {vertices!r}")
    return vertices


def check_time_limit(time_limit: float | None) -> float | None:
    """``None`` (no limit) or a positive, finite number of seconds."""
    if time_limit is None:
        return None
    if (isinstance(time_limit, bool) or not isinstance(time_limit, int | float | np.integer | np.floating)
            or not math.isfinite(time_limit) or time_limit <= 0):
        raise InvalidInputError(f"time_limit must be a positive finite number of seconds, got {time_limit!r}")
    return float(time_limit)


def check_improve(value: bool) -> bool:
    """``improve``: a bool (numpy's too); anything else, "no" or 0 included, is refused."""
    if not isinstance(value, bool | np.bool_):
        raise InvalidInputError(f"improve must be True or False, got {value!r}")
    return bool(value)


def check_seed(seed: int | None) -> int | None:
    """``None`` or a non-negative integer (what :func:`numpy.random.default_rng` accepts)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0):
        raise InvalidInputError(f"seed must be a non-negative integer, got {seed!r}")
    return seed


def check_rng(rng: np.random.Generator | None) -> np.random.Generator | None:
    """``None`` or a :class:`numpy.random.Generator`."""
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise InvalidInputError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng
