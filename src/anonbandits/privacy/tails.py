"""Tail bounds of the noises of paper 004 (Chowdhury and Zhou, "Distributed Differential Privacy in Multi-Armed
Bandits", ICLR 2023; docs/distributed-dp.md): the exact tail :func:`discrete_laplace_tail`, and radii: each ``*_radius``
returns a ``v`` with ``P[|X| > v] <= p``; the protocols set ``tau = ceil(radius)``.
"""

from __future__ import annotations

import math

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.errors import require
from anonbandits.validation import COUNT, FINITE_ARRAY, POSITIVE_FINITE, UNIT_NO_ZERO, checks


def _check_p(p: float) -> float:
    require(0.0 < p <= 1.0, "tail probability p", "in (0, 1]", p)
    return float(p)


@checks(scale=POSITIVE_FINITE, k=FINITE_ARRAY)
@fill
def discrete_laplace_tail(scale: float, k: np.ndarray | int) -> np.ndarray:
    """Exact ``P[|X| >= k]`` for ``X ~ Lap_Z(scale)``: ``2 beta^k/(1+beta)`` for k >= 1, and 1 for k <= 0.

    Parameters
    ----------
    scale : float
        The scale ``b`` of ``Lap_Z(b)``; ``beta = exp(-1/b)``.
    k : int or array_like of int
        The thresholds.

    Returns
    -------
    numpy.ndarray
        The tail probabilities, of the shape of ``k``.

    Raises
    ------
    ConfigError
        If ``scale`` is not a positive finite number or ``k`` is not a number or an array of finite numbers.

    {{refs_paper004}}

    Examples
    --------
    >>> discrete_laplace_tail(1.0, [0, 1, 2]).round(4)
    array([1.    , 0.5379, 0.1979])
    """
    beta = math.exp(-1.0 / scale)
    k = np.asarray(k, dtype=float)
    return np.where(k <= 0, 1.0, 2.0 * beta ** np.maximum(k, 1.0) / (1.0 + beta))


@checks(scale=POSITIVE_FINITE, p=UNIT_NO_ZERO)
@fill
def discrete_laplace_radius(scale: float, p: float) -> float:
    """``b log(2/p)``: ``P[|Lap_Z(b)| > b log(2/p)] <= p`` (from the exact tail; Fact 3 of paper 004).

    Parameters
    ----------
    scale : float
        The scale ``b``.
    p : float
        The tail probability, in (0, 1].

    Returns
    -------
    float
        The radius ``v`` with ``P[|X| > v] <= p``.

    Raises
    ------
    ConfigError
        If ``scale`` is not a positive finite number or ``p`` is outside (0, 1] (a bool, NaN).

    {{refs_paper004}}

    Examples
    --------
    >>> round(discrete_laplace_radius(2.0, 0.05), 4)
    7.3778
    """
    return scale * math.log(2.0 / _check_p(p))


@checks(var=POSITIVE_FINITE, p=UNIT_NO_ZERO)
@fill
def skellam_radius(var: float, p: float) -> float:
    """Proposition 1 of paper 004: ``|Sk(0, var)| <= 2 sigma sqrt(log(2/p)) + sqrt(2) log(2/p)`` w.p. 1-p.

    Parameters
    ----------
    var : float
        The variance ``sigma^2`` of the Skellam noise.
    p : float
        The tail probability, in (0, 1].

    Returns
    -------
    float
        The radius ``v`` with ``P[|X| > v] <= p``.

    Raises
    ------
    ConfigError
        If ``var`` is not a positive finite number or ``p`` is outside (0, 1] (a bool, NaN).

    {{refs_paper004}}

    Examples
    --------
    >>> round(skellam_radius(4.0, 0.05), 4)
    12.8994
    """
    log_term = math.log(2.0 / _check_p(p))
    return 2.0 * math.sqrt(var) * math.sqrt(log_term) + math.sqrt(2.0) * log_term


@checks(var=POSITIVE_FINITE, p=UNIT_NO_ZERO)
@fill
def subgaussian_radius(var: float, p: float) -> float:
    """Lemma 6 of paper 004: a ``var``-sub-Gaussian X (e.g. a discrete Gaussian) has ``|X| <= sqrt(2 var log(2/p))``.

    Parameters
    ----------
    var : float
        The variance proxy.
    p : float
        The tail probability, in (0, 1].

    Returns
    -------
    float
        The radius ``v`` with ``P[|X| > v] <= p``.

    Raises
    ------
    ConfigError
        If ``var`` is not a positive finite number or ``p`` is outside (0, 1] (a bool, NaN).

    {{refs_paper004}}

    Examples
    --------
    >>> round(subgaussian_radius(4.0, 0.05), 4)
    5.4324
    """
    return math.sqrt(2.0 * var * math.log(2.0 / _check_p(p)))


@checks(scale=POSITIVE_FINITE, n=COUNT, p=UNIT_NO_ZERO)
@fill
def discrete_laplace_sum_radius(scale: float, n: int, p: float) -> float:
    """Sum of ``n`` i.i.d. ``Lap_Z(B)``, B >= 1: ``B max(3.01 sqrt(n log(2/p)), 4 log(2/p))`` (Lemma 5, derived).

    From ``Lap_Z(B)`` being ``(4.52 B^2, 2B)``-sub-exponential and Lemma 9 of paper 004.

    Parameters
    ----------
    scale : float
        The scale ``B >= 1`` of each term.
    n : int
        The number of terms.
    p : float
        The tail probability, in (0, 1].

    Returns
    -------
    float
        The radius ``v`` with ``P[|X| > v] <= p``.

    Raises
    ------
    ConfigError
        If ``scale`` is not a positive finite number, ``n`` is not a positive integer (at most 2^62) or ``p`` is
        outside (0, 1] (a bool, NaN).

    {{refs_paper004}}

    Examples
    --------
    >>> round(discrete_laplace_sum_radius(1.0, 100, 0.05), 4)
    57.8114
    """
    log_term = math.log(2.0 / _check_p(p))
    return scale * max(3.01 * math.sqrt(n * log_term), 4.0 * log_term)
