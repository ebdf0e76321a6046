"""Indices, noise scales and thresholds of the Python drivers, each named after the paper equation it implements
(the confidence radii themselves are in :mod:`anonbandits.core.radii`, the schedules in
:mod:`anonbandits.core.schedules`):

* Hu, Huang, Mehta, "Near-Optimal Algorithms for Private Online Learning in a Stochastic Environment" (arXiv,
  paper 001): the round at which one arm's Anytime-Lazy-UCB index (eq. (4)) overtakes another's
  (:func:`lazy_ucb_crossing`) and the capacity of its next array (:func:`lazy_ucb_capacity`, Algorithm 1);
  Hybrid-UCB's index and the Laplace scales of its arrays and tree nodes (Algorithm 4: :func:`hybrid_ucb_index`,
  :func:`hybrid_ucb_array_scale`, :func:`hybrid_ucb_node_scale`);
* Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm Identification with Private Communications" (ICML 2023,
  paper 003): DP-MASE's Laplace scale ``1/(eps R)`` and elimination threshold ``2 (h(e) + c(e))`` (Algorithm 4a,
  App. B.1: :func:`dp_mase_laplace_scale`, :func:`dp_mase_threshold`);
* the vote ratio ``log(delta) / log(local failure)`` behind the vote threshold M of paper 003 and of Féraud,
  Alami, Laroche, "Decentralized Exploration in Multi-Armed Bandits" (ICML 2019, paper 002):
  :func:`vote_ratio`.

Every function is vectorised with numpy ufuncs where its arguments are arrays.
"""

from __future__ import annotations

import math
from typing import Any, overload

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.core._rules import EPSILONS, POSITIVE_INTS
from anonbandits.core.radii import dpse_widths
from anonbandits.errors import ConfigError
from anonbandits.validation import (
    BOOL,
    COUNT,
    EPSILON,
    FINITE_ARRAY,
    OPEN_UNIT,
    POSITIVE_ARRAY,
    POSITIVE_INT_ARRAY,
    Rule,
    checks,
)

#: Coefficients of an index's widths: numbers >= 0 (or arrays of them), finite.
_WIDTHS = Rule(
    lambda v: FINITE_ARRAY.test(v) and bool(np.all(np.asarray(v) >= 0)),
    "a finite number >= 0 or an array of them",
)
#: Differences of means: finite, and below 1e300 in magnitude (twice one must not overflow to inf).
_MEAN_GAPS = Rule(
    lambda v: FINITE_ARRAY.test(v) and bool(np.all(np.abs(np.asarray(v)) <= 1e300)),
    "a finite number of magnitude at most 1e300 or an array of them",
)


def _arrays(*values: Any) -> tuple[Any, ...]:
    """``values`` with each list or tuple made an array (numbers and arrays as given): the formulas below use
    operators, which would repeat or concatenate a list."""
    return tuple(np.asarray(v) if isinstance(v, list | tuple) else v for v in values)


def _no_broadcast(names: str, *arrays: Any) -> ConfigError:
    """The error of arrays whose shapes do not broadcast together (numpy's only ValueError in a formula)."""
    return ConfigError(f"{names} must have shapes that broadcast together, got {[np.shape(a) for a in arrays]}")


@checks(mean_gap=_MEAN_GAPS, a_gap=POSITIVE_ARRAY, b_gap=_WIDTHS)
@fill
def lazy_ucb_crossing(mean_gap: np.ndarray, a_gap: np.ndarray, b_gap: np.ndarray) -> np.ndarray:
    """``s = sqrt(ln t)`` at which a rival's Anytime-Lazy-UCB index (paper 001, eq. (4)) reaches the played arm's.

    With both arrays frozen the difference of the two indices is ``b_gap s^2 + a_gap s + mean_gap`` in
    ``s = sqrt(ln t)`` (widths of :func:`~anonbandits.core.radii.lazy_ucb_widths`, rival minus played arm); a rival
    with a smaller last array has ``a_gap, b_gap > 0``, so the quadratic has one non-negative root, written in the
    form without cancellation: ``2 max(-mean_gap, 0) / (a_gap + sqrt(a_gap^2 - 4 b_gap min(mean_gap, 0)))``.

    Parameters
    ----------
    mean_gap : numpy.ndarray
        The rival's mean minus the played arm's (finite, at most 1e300 in magnitude).
    a_gap : numpy.ndarray
        The difference of the ``sqrt(ln t)`` coefficients of the two indices (rival minus played arm), positive.
    b_gap : numpy.ndarray
        The difference of the ``ln t`` coefficients, >= 0.

    Returns
    -------
    numpy.ndarray
        The root ``s >= 0`` (0 when the rival's index is already ahead), broadcast over the arguments.

    Raises
    ------
    ConfigError
        If an argument is not a finite number or array of them, ``a_gap`` is not positive or ``b_gap`` negative
        (the quadratic then has no such root), or the shapes do not broadcast together.

    {{refs_paper001}}

    Examples
    --------
    >>> import numpy as np
    >>> lazy_ucb_crossing(np.array([-0.5, 0.2]), np.array([1.0, 1.0]), np.array([0.5, 0.5])).round(4).tolist()
    [0.4142, 0.0]
    """
    mean_gap, a_gap, b_gap = _arrays(mean_gap, a_gap, b_gap)
    try:
        return 2 * np.maximum(-mean_gap, 0.0) / (a_gap + np.sqrt(a_gap * a_gap - 4 * b_gap * np.minimum(mean_gap, 0.0)))
    except ValueError:
        raise _no_broadcast("mean_gap, a_gap and b_gap", mean_gap, a_gap, b_gap) from None


@checks(size=POSITIVE_ARRAY)
@fill
def lazy_ucb_capacity(size: float | np.ndarray) -> float | np.ndarray:
    """Observations the filling array of an arm holds when full (paper 001, Algorithm 1).

    Arrays have sizes 1, 2, 4, ..., so the next one is twice the last full one's ``size`` (lambda).

    Parameters
    ----------
    size : float or numpy.ndarray
        The size lambda of the arm's last full array, positive.

    Returns
    -------
    float or numpy.ndarray
        ``2 size``.

    Raises
    ------
    ConfigError
        If ``size`` is not a positive finite number or an array of them.

    {{refs_paper001}}

    Examples
    --------
    >>> lazy_ucb_capacity(4)
    8
    """
    (size,) = _arrays(size)
    return 2 * size


@checks(mean=FINITE_ARRAY, width_a=_WIDTHS, width_b=_WIDTHS, t=COUNT)
@fill
def hybrid_ucb_index(mean: np.ndarray, width_a: np.ndarray, width_b: np.ndarray, t: int) -> np.ndarray:
    """Hybrid-UCB's index at round ``t`` (paper 001, Algorithm 4; logs base 2, as in its Appendix E): ``mean + a
    sqrt(log2 t) + b log2 t`` with ``(a, b)`` = :func:`~anonbandits.core.radii.hybrid_ucb_widths`, in the order of
    operations of the compiled round loop (:func:`anonbandits.dp.hybrid_kernel.choose_arms`: ``math`` on the scalar
    ``t``, arithmetic on the rest), which computes it per round without this function's checks.

    Parameters
    ----------
    mean : numpy.ndarray
        The arms' (noisy) means.
    width_a : numpy.ndarray
        The coefficient ``a`` of ``sqrt(log2 t)``, >= 0.
    width_b : numpy.ndarray
        The coefficient ``b`` of ``log2 t``, >= 0.
    t : int
        The round, at least 1.

    Returns
    -------
    numpy.ndarray
        The index of each arm.

    Raises
    ------
    ConfigError
        If ``mean`` is not a finite number or array of them, a width is negative or not finite, ``t`` is not an
        integer from 1 to 2^62, or the shapes do not broadcast together.

    {{refs_paper001}}

    Examples
    --------
    >>> import numpy as np
    >>> hybrid_ucb_index(np.array([0.5]), np.array([1.0]), np.array([0.5]), 16).tolist()
    [4.5]
    """
    log_t = math.log2(t)
    mean, width_a, width_b = _arrays(mean, width_a, width_b)
    try:
        return width_a * math.sqrt(log_t) + width_b * log_t + mean
    except ValueError:
        raise _no_broadcast("mean, width_a and width_b", mean, width_a, width_b) from None


@checks(epsilon=EPSILONS)
@fill
def hybrid_ucb_array_scale(epsilon: float | np.ndarray) -> float | np.ndarray:
    """Laplace scale ``2/eps`` of the noise each full array of Hybrid-UCB gets once (paper 001, Algorithm 4).

    Parameters
    ----------
    epsilon : float or numpy.ndarray
        The privacy level eps, in the range the privacy mechanisms support.

    Returns
    -------
    float or numpy.ndarray
        ``2 / epsilon``.

    Raises
    ------
    ConfigError
        If ``epsilon`` is not a number (or an array of numbers) between 1e-6 and 1e12.

    {{refs_paper001}}

    Examples
    --------
    >>> hybrid_ucb_array_scale(0.5)
    4.0
    """
    (epsilon,) = _arrays(epsilon)
    return 2.0 / epsilon


@overload
def hybrid_ucb_node_scale(tree: int, epsilon: float, exact: bool = ...) -> float: ...


@overload
def hybrid_ucb_node_scale(tree: np.ndarray, epsilon: float | np.ndarray, exact: bool = ...) -> np.ndarray: ...


@overload
def hybrid_ucb_node_scale(tree: int | np.ndarray, epsilon: np.ndarray, exact: bool = ...) -> np.ndarray: ...


@checks(tree=POSITIVE_INT_ARRAY, epsilon=EPSILONS, exact=BOOL)
@fill
def hybrid_ucb_node_scale(
    tree: int | np.ndarray, epsilon: float | np.ndarray, exact: bool = False
) -> float | np.ndarray:
    """Laplace scale of the binary-mechanism nodes of Hybrid-UCB's tree ``r`` (paper 001, Algorithm 4):
    ``2 r / eps`` as printed, or ``2 (r + 1) / eps`` (``exact``: a leaf lies in r + 1 dyadic nodes, the
    root included, so the tree's depth counted in full).

    Parameters
    ----------
    tree : int or numpy.ndarray
        The tree's index r, at least 1.
    epsilon : float or numpy.ndarray
        The privacy level eps, in the range the privacy mechanisms support.
    exact : bool, optional
        Count the tree's depth in full (``r + 1`` levels). Default False (the paper's ``r``).

    Returns
    -------
    numpy.ndarray or float
        The Laplace scale of the tree's nodes.

    Raises
    ------
    ConfigError
        If ``tree`` is not a positive integer (or an array of them), ``epsilon`` not a number (or an array) between
        1e-6 and 1e12, ``exact`` not a bool, or the shapes of ``tree`` and ``epsilon`` do not broadcast together.

    {{refs_paper001}}

    Examples
    --------
    >>> hybrid_ucb_node_scale(3, 0.5), hybrid_ucb_node_scale(3, 0.5, exact=True)
    (12.0, 16.0)
    """
    tree, epsilon = _arrays(tree, epsilon)
    try:
        return 2.0 * (tree + int(exact)) / epsilon
    except ValueError:
        raise _no_broadcast("tree and epsilon", tree, epsilon) from None


@checks(epsilon=EPSILON, length=POSITIVE_INT_ARRAY)
@fill
def dp_mase_laplace_scale(epsilon: float, length: np.ndarray | int) -> np.ndarray | float:
    """Scale ``1/(eps_dp R)`` of the Laplace noise on an epoch mean of ``R = length`` rewards in [0, 1] (paper 003,
    Algorithm 4a: the mean's sensitivity is 1/R).

    Parameters
    ----------
    epsilon : float
        The privacy level eps_dp, in the range the privacy mechanisms support.
    length : numpy.ndarray or int
        R, the rewards in the epoch mean, at least 1.

    Returns
    -------
    numpy.ndarray or float
        ``1 / (epsilon length)``.

    Raises
    ------
    ConfigError
        If ``epsilon`` is not a number between 1e-6 and 1e12 or ``length`` not a positive integer (or an array
        of them).

    {{refs_paper003}}

    Examples
    --------
    >>> dp_mase_laplace_scale(0.5, 100)
    0.02
    """
    (length,) = _arrays(length)
    return 1.0 / (epsilon * length)


@checks(active=POSITIVE_INTS, epoch=POSITIVE_INTS, length=POSITIVE_INTS, beta=OPEN_UNIT, epsilon=EPSILON)
@fill
def dp_mase_threshold(
    active: np.ndarray, epoch: np.ndarray, length: np.ndarray, beta: float, epsilon: float
) -> np.ndarray:
    """DP-MASE's elimination width ``2 (h(e) + c(e))`` (paper 003, Algorithm 4a; DP-SE's widths
    :func:`~anonbandits.core.radii.dpse_widths` with ``s = active`` arms sampled), vectorised over epoch ends.

    Parameters
    ----------
    active : numpy.ndarray
        s, the arms sampled in each epoch, at least 1.
    epoch : numpy.ndarray
        e, the epoch (1-based).
    length : numpy.ndarray
        R_e, the samples of each arm in the epoch, at least 1.
    beta : float
        The failure probability, in (0, 1).
    epsilon : float
        The privacy level, in the range the privacy mechanisms support.

    Returns
    -------
    numpy.ndarray
        The elimination width of each epoch end.

    Raises
    ------
    ConfigError
        If ``active``, ``epoch`` or ``length`` is not a positive integer (or an array of them), ``beta`` is not
        in (0, 1), ``epsilon`` not between 1e-6 and 1e12, or the arrays' shapes do not broadcast together.

    {{refs_paper003}}

    Examples
    --------
    >>> import numpy as np
    >>> dp_mase_threshold(np.array([5]), np.array([1]), np.array([2425]), 1 / 4_194_304, 0.5).round(4).tolist()
    [0.1551]
    """
    active, epoch, length = _arrays(active, epoch, length)
    try:
        h, c = dpse_widths(active, epoch, length, beta, epsilon)
    except ValueError:
        raise _no_broadcast("active, epoch and length", active, epoch, length) from None
    return 2.0 * (h + c)


@checks(delta=OPEN_UNIT, local_failure=OPEN_UNIT)
@fill
def vote_ratio(delta: float, local_failure: float) -> float:
    """``log(delta) / log(local_failure)``: the number of votes M for which ``local_failure^M = delta`` (papers 002
    and 003; :func:`~anonbandits.core.votes.vote_threshold` rounds it).

    Parameters
    ----------
    {{vote_failures}}

    Returns
    -------
    float
        ``log(delta) / log(local_failure)``.

    Raises
    ------
    ConfigError
        If ``delta`` or ``local_failure`` is not a number in (0, 1).

    {{refs_paper002_paper003}}

    Examples
    --------
    >>> vote_ratio(0.25, 0.5)
    2.0
    """
    return math.log(delta) / math.log(local_failure)
