"""The rules of the core's arguments that only the core uses, built from :mod:`anonbandits.validation`'s
blocks (the shared ones, ``COUNT``, ``OPEN_UNIT``, ..., are imported from there where they are used)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from anonbandits.core.limits import MAX_INSTANCE_CELLS, check_size
from anonbandits.validation import (
    EPSILON,
    EPSILON_MAX,
    EPSILON_MIN,
    FINITE_ARRAY,
    Rule,
    array_of,
    int_between,
    is_integer,
)

#: N learners (users, agents): an integer from 1 to 2^62 (their (N, K) arrays are checked against
#: MAX_INSTANCE_CELLS too, :func:`check_cells`).
LEARNERS_N = int_between(1, 2**62)
#: K arms of a learner: an integer from 2 to 2^62 (a learner chooses between arms).
ARMS = int_between(2, 2**62)
#: A static grid ``[t_0 = 0, ..., t_M = T]`` (its order and start are checked by the learner).
GRID = array_of("iu", "a 1-D array of at least two integers >= 0", low=0, size=2)
#: An (N, K) sum of samples per learner and arm.
BATCH_SUMS = array_of("iuf", "a 2-D array of finite numbers", ndim=2)
_NONNEGATIVE_MATRIX = array_of("iuf", "", ndim=2, low=0)
#: An (N, K) count of samples given as :meth:`~anonbandits.core.elimination.BatchedElimination.demand` gives it:
#: integers, or floats of integer value (1.7 samples are refused, not truncated).
WHOLE_COUNTS = Rule(
    lambda v: _NONNEGATIVE_MATRIX.test(v) and bool(np.all(np.asarray(v) % 1 == 0)),
    "a 2-D array of non-negative integers (or of floats of integer value)",
)


def entrywise(kinds: str, test: Callable[[np.ndarray], np.ndarray], what: str) -> Rule:
    """The rule "a number, or an array of any shape, of the dtype kinds ``kinds`` whose every entry passes
    ``test``" (a vectorised formula's argument; bools, text and ``None`` are refused).

    Parameters
    ----------
    kinds : str
        numpy dtype kinds allowed (``"iu"`` integers, ``"iuf"`` numbers).
    test : callable
        ``test(array) -> bool array``, entry by entry (NaN must fail it).
    what : str
        The requirement as the message says it.

    Returns
    -------
    Rule
        The rule.
    """

    def passes(value: Any) -> bool:
        if isinstance(value, str | bytes | bool | np.bool_ | Mapping) or value is None:
            return False
        a = np.asarray(value)
        return a.dtype.kind in kinds and bool(np.all(test(a)))

    return Rule(passes, what)


#: Positive integers of a vectorised formula (arms, epochs, lengths), each at most 2^62.
POSITIVE_INTS = entrywise("iu", lambda a: (a >= 1) & (a <= 2**62), "a positive integer or an array of them")
#: Probabilities of a vectorised formula, each in (0, 1).
OPEN_UNITS = entrywise("iuf", lambda a: (a > 0) & (a < 1), "a number in (0, 1) or an array of them")
#: Privacy levels of a vectorised formula: each ``inf`` (none) or in the range the mechanisms support.
EPSILONS_OR_INF = entrywise(
    "iuf",
    lambda a: (a == math.inf) | ((a >= EPSILON_MIN) & (a <= EPSILON_MAX)),
    f"inf (no privacy) or a number between {EPSILON_MIN:g} and {EPSILON_MAX:g}, or an array of them",
)
#: A privacy level where ``inf`` means none: ``math.inf``, or a finite epsilon in the range the privacy
#: mechanisms support (:data:`anonbandits.validation.EPSILON`).
EPSILON_OR_INF = Rule(
    lambda v: v == math.inf or (EPSILON.test(v) and EPSILON_MIN <= v <= EPSILON_MAX),
    f"inf (no privacy) or a finite positive number between {EPSILON_MIN:g} and {EPSILON_MAX:g}",
)
#: Privacy levels one per entry (Hybrid-UCB's arms): an epsilon or an array of them, each in EPSILON's range.
EPSILONS = Rule(
    lambda v: FINITE_ARRAY.test(v) and bool(np.all((np.asarray(v) >= EPSILON_MIN) & (np.asarray(v) <= EPSILON_MAX))),
    f"a number or an array of numbers between {EPSILON_MIN:g} and {EPSILON_MAX:g}",
)
#: A sequence of arm indices, agent ids, slots or times: a 1-D array of non-negative integers.
INDICES = array_of("iu", "a 1-D array of non-negative integers", low=0)
#: A 1-D mask (arms alive).
MASK = array_of("b", "a 1-D array of bools")
_ARM_ARRAY = array_of("iu", "a non-empty 1-D array of non-negative integers", low=0, size=1)
#: Arm indices of a block of rounds: one, or a non-empty 1-D array of them (each below K: checked by the trace).
ARM_CYCLE = Rule(
    lambda v: (is_integer(v) and 0 <= v <= 2**62) or (not is_integer(v) and _ARM_ARRAY.test(v)),
    "an arm index (an integer >= 0) or a non-empty 1-D array of them",
)


def _means(value: Any) -> bool:
    """Sample means along the last axis: numbers (not NaN, not +inf; -inf marks an arm out of play)."""
    a = np.asarray(value)
    return (
        not isinstance(value, str | bytes | bool | np.bool_ | dict)
        and a.dtype.kind in "iuf"
        and 1 <= a.ndim <= 3
        and a.size >= 1
        and not bool(np.any(np.isnan(a) | (a == math.inf)))
    )


def _widths(value: Any) -> bool:
    """Elimination widths: numbers >= 0 (not NaN; ``inf``, a radius without samples, keeps every arm)."""
    if isinstance(value, str | bytes | bool | np.bool_ | dict) or value is None:
        return False
    a = np.asarray(value)
    return a.dtype.kind in "iuf" and a.ndim <= 3 and bool(np.all(a >= 0))


#: (..., K) sample means of :func:`~anonbandits.core.elimination.gap_survivors`.
MEANS = Rule(_means, "a non-empty array of numbers (not NaN or +inf; -inf marks an arm out of play), 1-D to 3-D")
#: An elimination width (or one per learner): a number >= 0 or an array of them, ``inf`` allowed.
WIDTHS = Rule(_widths, "a number >= 0 (inf allowed) or an array of them")


def check_cells(n_learners: int, n_arms: int) -> None:
    """Refuse N x K learner arrays above :data:`~anonbandits.core.limits.MAX_INSTANCE_CELLS` (the instance's own
    limit; ``allow_large`` lifts it) before they are allocated.

    Parameters
    ----------
    n_learners : int
        N, an integer >= 1.
    n_arms : int
        K, an integer >= 1.

    Raises
    ------
    ConfigError
        If ``n_learners * n_arms`` is above the limit and nothing confirmed it.
    """
    check_size(
        "n_learners x n_arms", int(n_learners) * int(n_arms), MAX_INSTANCE_CELLS, "MAX_INSTANCE_CELLS", "users x arms"
    )
