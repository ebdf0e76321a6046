"""One entry point for every decomposition method, in the style of ``scipy.optimize.minimize(method=...)``.

Each method is a row of :data:`METHOD_TABLE`: its function and the options it reads. Every option is
validated whatever the method; an option the chosen method does not read draws an
:class:`~anondecomp.AnonDecompWarning` (as ``scipy.optimize.linprog`` warns about unused options) and an
unknown option is an error. Randomness (``rng`` or ``seed``), ``improve`` and ``allow_large`` are accepted
silently by every method, so that a caller can hand one Generator to whichever method it runs: a deterministic
method just draws nothing, only ``auto`` has an improvement step to switch off, and a method without a size
limit has nothing to lift.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from anondecomp.absence import is_absent, robust_decomposition
from anondecomp.capacity import capacitated
from anondecomp.errors import AnonDecompWarning, InvalidInputError
from anondecomp.exposure import least_exposed
from anondecomp.graph import DemandGraph
from anondecomp.methods.auto import auto_decomposition
from anondecomp.methods.block import block_decomposition
from anondecomp.methods.greedy import greedy_decomposition
from anondecomp.methods.optimal import optimal_decomposition
from anondecomp.methods.polytope import polytope_decomposition
from anondecomp.methods.randomized import randomized_decomposition
from anondecomp.methods.sessions import LARGE_EDGES, sessions_decomposition
from anondecomp.methods.slack import slack_decomposition
from anondecomp.result import Decomposition
from anondecomp.validation import (
    allowing_large,
    check_bool,
    check_dense,
    check_improve,
    check_rng,
    check_seed,
    check_time_limit,
    check_vertices,
    checked,
    large_allowed,
)

# A new method is its module (imported above from the module itself) plus its row of METHOD_TABLE below.
# option -> its check; ``rng`` and ``seed`` are two spellings of the method's randomness
RANDOMNESS = frozenset({"rng", "seed"})
# accepted without a warning by every method: a caller may hand them to whichever method it runs (a deterministic
# method draws nothing; ``improve=False`` asks for no improvement step, which only ``auto`` has; ``allow_large``
# lifts the size limits of the methods that have one, and is read by decompose itself, never by a method)
SILENT = RANDOMNESS | {"improve", "allow_large", "reseat"}
OPTION_CHECKS: dict[str, Callable] = {
    "rng": check_rng,
    "seed": check_seed,
    "vertices": check_vertices,
    "time_limit": check_time_limit,
    "improve": check_improve,
    "allow_large": lambda value: check_bool("allow_large", value),
    "reseat": lambda value: check_bool("reseat", value),
}


@dataclass(frozen=True)
class Method:
    """A decomposition method: ``function(graph, C, best_effort=..., **options)`` and the options it reads.

    Every method reads ``best_effort``.

    Parameters
    ----------
    name : str
        The method's name, as :func:`decompose` takes it.
    function : callable
        ``function(graph, C, best_effort=..., **options) -> Decomposition``.
    options : frozenset of str
        The options it reads besides ``best_effort``.
    dense : bool, optional
        Whether its model holds (users x arms) arrays of the whole graph: it then refuses graphs above
        :data:`~anondecomp.validation.DENSE_CELLS` users x arms before it starts (unless :func:`decompose` is
        given ``allow_large=True``). The other methods refuse by
        their own model or output only (``block``, ``polytope``: the dense point of one face, N users x its
        arms; ``randomized``, ``greedy``: their assignments x users).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> sorted(method_info("optimal").options)
    ['rng', 'seed', 'time_limit', 'vertices']
    """

    name: str
    function: Callable[..., Decomposition]
    options: frozenset[str]
    dense: bool = False


_FACES = RANDOMNESS | {"vertices"}

METHOD_TABLE: dict[str, Method] = {
    m.name: m
    for m in (
        Method("auto", auto_decomposition, _FACES | {"time_limit", "improve"}),
        Method("greedy", greedy_decomposition, frozenset()),
        Method("block", block_decomposition, _FACES),
        Method("polytope", polytope_decomposition, _FACES),
        Method("randomized", randomized_decomposition, RANDOMNESS),
        Method("slack", slack_decomposition, frozenset()),
        Method("sessions", sessions_decomposition, frozenset()),
        Method("optimal", optimal_decomposition, _FACES | {"time_limit"}, dense=True),
    )
}

METHODS = tuple(METHOD_TABLE)
RESEAT_CELLS = 100_000_000
"""Distinct assignments x users up to which ``auto`` re-seats its result by default (about 15 s and a second copy
of the schedule at 3 x 10^7; a log of 10^6 users x 300 rounds is left as the method seats it unless
``reseat=True``)."""
CALENDAR_ROUNDS = 20_000
"""Lower bound (rounds) above which the session calendar is not tried as an alternative: it places one session
at a time among all its rounds (a batch of a bandit run can need 10^5 rounds, and then takes minutes)."""


@checked()
def method_info(method: str) -> Method:
    """The row of ``METHOD_TABLE`` for ``method``.

    Parameters
    ----------
    method : str
        One of ``METHODS``.

    Returns
    -------
    Method
        Its function and the options it reads.

    Raises
    ------
    InvalidInputError
        For an unknown name.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> method_info("greedy").options
    frozenset()
    """
    if method not in METHOD_TABLE:
        raise InvalidInputError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    return METHOD_TABLE[method]


def checked_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options of :func:`decompose` that are given (not None), each checked by its rule; an unknown option
    is refused (``InvalidInputError``, naming it)."""
    unknown = sorted(set(options) - set(OPTION_CHECKS))
    if unknown:
        raise InvalidInputError(f"unknown option {unknown[0]!r}; the options are {', '.join(OPTION_CHECKS)}")
    return {name: OPTION_CHECKS[name](value) for name, value in options.items() if value is not None}


@checked()
def decompose(
    graph: DemandGraph,
    C: int,
    method: str = "auto",
    *,
    best_effort: bool = False,
    absence=None,
    confidence: float | None = None,
    max_surplus_exposure: int | None = None,
    capacity=None,
    **options,
) -> Decomposition:
    """Compute a C-anonymous decomposition of ``graph`` (paper 000, Section 3).

    Parameters
    ----------
    graph : DemandGraph
        The demand graph (:class:`~anondecomp.DemandGraph`).
    C : int
        The anonymity parameter (>= 1): an arm is informative only with at least C+1 users on it.
    method : str, optional
        ``"greedy"`` (alpha = K), ``"block"`` (alpha = ceil(K(C+1)/U)), ``"polytope"`` (alpha = 1, needs every
        column of w/D to sum to >= C+1), ``"randomized"`` (the paper's simulation baseline), ``"slack"``
        (least-slack rounds aimed at the lower bound, for logs), ``"sessions"`` (an arm-by-arm calendar, linear
        in the edges, for large sparse logs), or ``"auto"`` (default): on batched graphs of more than
        :data:`~anondecomp.methods.phase.PHASE_PAIRS` edges their phase schedule, shard by shard (method
        ``"phase"``, as the command line's sharded path), else polytope when it applies, else on
        graphs that are not batched sessions (large logs) or least-slack rounds, returned when they meet the
        lower bound, else the shortest of those, block and time-shared faces (method ``"timeshare"``);
        ``"optimal"`` (column generation and an integer face program; certified lower bound in
        ``result.info["lp_lower_bound"]``).
    best_effort : bool, optional
        Cover what can be covered when some arm is wanted by at most C users, and list the rest in
        ``result.uncovered`` instead of raising :class:`~anondecomp.InfeasibleError`.
    absence : float or array_like of float, optional
        The probability in [0, 1) that a user misses a block (one assignment), one for every user or one per user
        (default 0: every user is always present, and the decomposition is the method's, bit for bit). Above 0
        the decomposition is *robust* (:mod:`anondecomp.absence`): the method runs with groups of at least the
        robust size (:func:`~anondecomp.robust_group_size`; ``auto`` on a log also weighs the session calendar),
        so that every group that gives samples keeps at least C+1 present users with probability >=
        ``confidence``; an arm whose whole support cannot reach that (*at risk*) gets groups of its whole support;
        padders go to the groups least likely to keep C+1 present users. ``info`` keeps ``absence``,
        ``confidence``, ``robust_size`` (one absence for all) and ``at_risk_arms``; :func:`~anondecomp.verify`
        reads them.
    confidence : float, optional
        Q in (0, 1), default 0.95; read only with an absence above 0.
    max_surplus_exposure : int, optional
        S >= 0: no user's exposure (the blocks in which its arm holds at least C+1 users, with multiplicity) may
        exceed its demand ``sum_j ceil(w_ij)`` by more than S (:mod:`anondecomp.exposure`). The shortest
        re-seated candidate that meets it is returned; an S below the certified minimum is refused
        (:class:`~anondecomp.InfeasibleError`), and so is one no candidate meets
        (:class:`~anondecomp.MethodNotApplicableError`, giving the least found). Not with an absence above 0.
    capacity : int or array_like of int, optional
        M: at most M users on an arm in one assignment, padders and hidden users included; one for every arm or
        one per arm (:mod:`anondecomp.capacity`). The chosen method (``auto``: the session calendar, which
        seats at most the capacity) runs on the demand left until none is left, each group keeping at most its
        arm's capacity; ``info["lower_bound"]`` (and ``lower_bound``) becomes
        ``max(max_i sum_j ceil(w_ij), max_j ceil(sum_i ceil(w_ij) / M_j))``. An arm with demand and a capacity
        below C+1, or users that cannot all be seated at once, are refused
        (:class:`~anondecomp.InvalidInputError`). Not with an absence above 0.
    **options : dict
        Read by some methods only (others warn with :class:`~anondecomp.AnonDecompWarning`):

        - ``rng`` (a numpy Generator) or ``seed`` (int >= 0, default 0; ``rng`` wins): randomness for
          ``randomized``, and for the schedule's retries in ``auto``, ``block``, ``polytope``, ``optimal``
          (``greedy`` accepts it without a warning and draws nothing);
        - ``vertices``: for ``auto``, ``block``, ``polytope``, ``optimal``, how vertices of P_C are found:
          ``"auto"`` (phase schedule, then the exact colouring route, then exact Carathéodory),
          ``"schedule"``, ``"colouring"`` or ``"caratheodory"``;
        - ``time_limit``: seconds, for ``optimal`` (best decomposition found, with its gap) and ``auto`` (no
          phase starts after it; ``info["time_limit_reached"]`` says when one was cut);
        - ``improve`` (bool, default True): for ``auto``, improve a log's decomposition above the lower bound
          (:func:`anondecomp.improve.polish`; the certified bound it computes is kept in ``info``);
        - ``allow_large`` (bool, default False; every method): build a dense model above
          :data:`~anondecomp.validation.DENSE_CELLS` cells or an output above
          :data:`~anondecomp.validation.OUTPUT_CELLS` cells instead of refusing (the command line's
          ``--allow-large``); it changes no decomposition the limits let through;
        - ``reseat`` (bool; every method; default True for ``auto`` up to :data:`RESEAT_CELLS` distinct
          assignments x users, False for the others, which return the paper's or their own seating): re-seat
          the decomposition so that it releases each user as little as it can at the same R and coverage
          (:func:`anondecomp.exposure.reseat`: groups keep the users that need them and padders up to C+1, the
          others move to hidden groups of at most C users); ``auto`` also re-seats the session calendar of a
          log and keeps it when its R is within 1 % and its total exposure lower (unless its time limit cut
          it). ``info["exposure"]`` holds the exposure figures (the command line's ``--reseat yes|no``). The
          bandit layer passes ``False``, so that its recorded runs stay as they were. Robust decompositions
          (absence above 0) are never re-seated: their spare members are their robustness.

    Returns
    -------
    Decomposition
        Distinct assignments with integer multiplicities; see its attributes.

    Raises
    ------
    InvalidInputError
        For an unknown method or option, or an invalid option value (whatever the method).
    InfeasibleError
        If some arm is wanted by at most C users and ``best_effort`` is false.
    MethodNotApplicableError
        If the chosen method's precondition does not hold (e.g. ``polytope`` with a thin column), or the graph
        is too large for it: its dense model above :data:`~anondecomp.validation.DENSE_CELLS` cells
        (``optimal``: users x arms; ``block``: N users x its largest block's arms; ``polytope``: N users x the
        wanted arms), or its assignments x users above :data:`~anondecomp.validation.OUTPUT_CELLS` cells
        (``greedy``: one per wanted arm; ``randomized``: its draws), unless ``allow_large=True``.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np, anondecomp
    >>> active = np.array([[1, 1], [1, 0], [0, 1], [1, 1], [1, 1], [1, 1]], bool)
    >>> g = anondecomp.DemandGraph.from_batched(10, active)
    >>> res = anondecomp.decompose(g, C=1)
    >>> res.method, anondecomp.verify(g, 1, res).valid
    ('polytope', True)
    >>> robust = anondecomp.decompose(g, C=1, absence=0.2, confidence=0.9)
    >>> robust.info["robust_size"], robust.total_assignments, anondecomp.verify(g, 1, robust).valid
    (4, 20, True)
    """
    info = method_info(method)
    given = checked_options(options)
    for name in sorted(set(given) - info.options - SILENT):
        warnings.warn(f"method {method!r} does not use option {name!r}; ignored", AnonDecompWarning, stacklevel=2)
    kwargs = {name: value for name, value in given.items() if name in info.options and name != "seed"}
    if "rng" in info.options and "rng" not in kwargs:  # the seed only ever reaches a method as a Generator
        kwargs["rng"] = np.random.default_rng(given.get("seed", 0))
    with allowing_large(given.get("allow_large", False) or large_allowed()):
        if info.dense:
            check_dense(graph, method)
        if is_absent(absence):
            for name, value in (("max_surplus_exposure", max_surplus_exposure), ("capacity", capacity)):
                if value is not None:
                    raise InvalidInputError(f"{name} cannot be combined with an absence above 0")
            solve = partial(info.function, best_effort=True, **kwargs)
            if method == "auto":
                solve = partial(_shorter_of_calendar, solve)
            return robust_decomposition(graph, C, solve, absence, confidence, best_effort)
        if confidence is not None:
            warnings.warn("confidence has no effect without absence; ignored", AnonDecompWarning, stacklevel=2)
        start = time.perf_counter()
        alternatives: list[Callable[[], Decomposition]] = []
        if capacity is not None:
            if method in ("auto", "sessions"):  # the calendar seats at most the capacity in every session
                solve = partial(sessions_decomposition, best_effort=True, capacity=capacity)
            else:
                solve = partial(info.function, best_effort=True, **kwargs)
            result = capacitated(graph, C, solve, capacity, best_effort)
        else:
            result = info.function(graph, C, best_effort=best_effort, **kwargs)
            default = method == "auto" and result.n_distinct * graph.n_users <= RESEAT_CELLS
            if not given.get("reseat", default) and max_surplus_exposure is None:
                return result
            alternatives = _alternatives(graph, C, method, result, best_effort, max_surplus_exposure)
        best = least_exposed(result, alternatives, max_surplus_exposure, reseat=capacity is None)
        return best._annotated(wall_time=time.perf_counter() - start)


def _shorter_of_calendar(solve: Callable[..., Decomposition], graph: DemandGraph, C: int) -> Decomposition:
    """``solve(graph, C)``, or the session calendar when that is shorter, on a log within the calendar's reach
    (at most ``LARGE_EDGES`` edges, a lower bound of at most :data:`CALENDAR_ROUNDS`) where ``solve`` misses the
    lower bound. A robust stage or a re-planned residual is thin and scattered: on OBD at C = 50, A = 10 % the
    calendar re-plans a residual in 214 rounds where least-slack rounds take 266 (its bound 176), in
    milliseconds."""
    result = solve(graph, C)
    if (
        result.total_assignments <= graph.lower_bound
        or graph.demand is not None
        or graph.nnz > LARGE_EDGES
        or graph.lower_bound > CALENDAR_ROUNDS
    ):
        return result
    calendar = sessions_decomposition(graph, C, best_effort=True)
    return calendar if calendar.total_assignments < result.total_assignments else result


def _alternatives(
    graph: DemandGraph, C: int, method: str, result: Decomposition, best_effort: bool, max_surplus: int | None
) -> list[Callable[[], Decomposition]]:
    """The other decompositions :func:`~anondecomp.exposure.least_exposed` weighs against ``result``: for
    ``auto`` on a graph that is not batched (a log; not cut by its time limit) the session calendar, and with a
    cap on the surplus exposure the calendar whose padders are those that padded least; none for graphs of more
    than ``LARGE_EDGES`` edges or whose lower bound is above :data:`CALENDAR_ROUNDS`."""
    out: list[Callable[[], Decomposition]] = []
    if graph.nnz > LARGE_EDGES or graph.lower_bound > CALENDAR_ROUNDS:
        return out
    logs = graph.demand is None  # on batched graphs auto's faces already seat every user where it is needed
    if method == "auto" and logs and result.method != "sessions" and not result.info.get("time_limit_reached", False):
        out.append(partial(sessions_decomposition, graph, C, best_effort=best_effort))
    if max_surplus is not None:
        out.append(partial(sessions_decomposition, graph, C, best_effort=best_effort, padders="surplus"))
    return out
