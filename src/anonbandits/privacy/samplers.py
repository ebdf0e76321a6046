"""Exact noise samplers of paper 004 ("Distributed Differential Privacy in Multi-Armed Bandits", Chowdhury and
Zhou, ICLR 2023; docs/distributed-dp.md): :func:`laplace`, :func:`discrete_laplace`, :func:`polya`,
:func:`skellam`, :func:`discrete_gaussian` (with its :func:`discrete_gaussian_pmf`) and
:func:`discrete_gaussian_sum`.

They are exact in law up to floating-point arithmetic, take an explicit ``numpy.random.Generator`` and a numpy
``size`` (``None`` for a scalar, at most :data:`~anonbandits.validation.MAX_DRAWS` draws) and return ``int64`` for
discrete laws. The integer samplers refuse the parameters whose draws would not fit ``int64`` (or numpy's
Poisson sampler) exactly: :data:`MAX_GEOMETRIC_SCALE`, :data:`MAX_SKELLAM_VARIANCE` and
:data:`MAX_DISCRETE_GAUSSIAN_SIGMA`.
"""

from __future__ import annotations

import math
from typing import overload

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.errors import ConfigError, require
from anonbandits.validation import (
    INTEGER,
    MAX_DRAWS,
    NONNEGATIVE_COUNT,
    POSITIVE_FINITE,
    RNG,
    SIZE,
    UNIT_NO_ONE,
    Rule,
    checks,
)

Size = int | tuple[int, ...] | None

#: The largest mean of a geometric or gamma draw of the integer samplers (:func:`discrete_laplace`'s scale,
#: :func:`polya`'s ``r beta/(1-beta)``): numpy clips a geometric draw at 2^63 - 1 and refuses a Poisson mean
#: above about 2^63, which a draw of this mean reaches with probability below e^-100.
MAX_GEOMETRIC_SCALE = 2**56
#: The largest variance of :func:`skellam`: its Poisson means ``var/2`` stay at most 2^61, so ``mu + N1 - N2``
#: fits ``int64`` for every ``|mu| <= 2^62``.
MAX_SKELLAM_VARIANCE = 2**62
#: The largest ``sigma`` of the discrete Gaussian samplers: the support of :func:`discrete_gaussian_pmf`
#: (about 77 sigma integers) stays within :data:`~anonbandits.validation.MAX_DRAWS` entries.
MAX_DISCRETE_GAUSSIAN_SIGMA = 10**6


def _at_most(limit: float, name: str, why: str) -> Rule:
    """A finite positive number of at most ``limit`` (the refusal of a larger one names the limit and why)."""
    return Rule(
        POSITIVE_FINITE.test,
        POSITIVE_FINITE.requirement,
        then=Rule(lambda v: v <= limit, f"at most {name} = {limit:.4g} ({why})"),
    )


_OVERFLOW = "the integer draws would overflow"
_GEOMETRIC_SCALE = _at_most(MAX_GEOMETRIC_SCALE, "MAX_GEOMETRIC_SCALE", _OVERFLOW)
_SKELLAM_VARIANCE = _at_most(MAX_SKELLAM_VARIANCE, "MAX_SKELLAM_VARIANCE", _OVERFLOW)
_SIGMA = _at_most(MAX_DISCRETE_GAUSSIAN_SIGMA, "MAX_DISCRETE_GAUSSIAN_SIGMA", "the support would be too large")


def _positive(name: str, value: float, limit: float = math.inf) -> float:
    """``value`` as a float; the body's own check, for the trusted calls the decorator does not check."""
    value = float(value)
    require(
        0 < value <= limit and math.isfinite(value), name, f"a positive finite number of at most {limit:.4g}", value
    )
    return value


def _shape(size: Size) -> tuple[int, ...]:
    return () if size is None else ((size,) if isinstance(size, int | np.integer) else tuple(size))


@checks(scale=POSITIVE_FINITE, size=SIZE, rng=RNG)
@fill
def laplace(scale: float, size: Size, rng: np.random.Generator) -> np.ndarray:
    """Continuous Laplace noise with mean 0 and scale ``b`` (variance ``2 b^2``).

    Parameters
    ----------
    {{scale_b}}
    {{size}}
    {{rng}}

    Returns
    -------
    numpy.ndarray or float
        The draws, of shape ``size`` (a float when ``size`` is ``None``).

    Raises
    ------
    ConfigError
        If ``scale`` is not a positive finite number (a bool, NaN, infinite), ``size`` is not ``None`` or a
        non-negative integer or tuple of them of at most :data:`~anonbandits.validation.MAX_DRAWS` draws, or
        ``rng`` is not a generator.

    {{refs_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> laplace(2.0, 3, np.random.default_rng(0)).shape
    (3,)
    """
    return rng.laplace(0.0, _positive("scale", scale), size)


@overload
def discrete_laplace(scale: float, size: None, rng: np.random.Generator) -> np.int64: ...


@overload
def discrete_laplace(scale: float, size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray: ...


@checks(scale=_GEOMETRIC_SCALE, size=SIZE, rng=RNG)
@fill
def discrete_laplace(scale: float, size: Size, rng: np.random.Generator) -> np.ndarray | np.int64:
    """Discrete Laplace ``Lap_Z(b)``: ``G1 - G2`` with ``G1, G2`` i.i.d. ``P[G = k] = (1-beta) beta^k``.

    ``beta = exp(-1/b)``; the difference of two such geometric variables has exactly the pmf
    ``(1-beta)/(1+beta) beta^|x|`` (it is ``Polya(1, beta) - Polya(1, beta)``).

    Parameters
    ----------
    scale : float
        The scale ``b``, positive and at most :data:`MAX_GEOMETRIC_SCALE`.
    {{size_rng_int_draws}}

    Raises
    ------
    ConfigError
        If ``scale`` is not a positive finite number of at most :data:`MAX_GEOMETRIC_SCALE`, ``size`` is not a
        numpy size of at most :data:`~anonbandits.validation.MAX_DRAWS` draws, or ``rng`` is not a generator.

    {{refs_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> discrete_laplace(1.0, 4, np.random.default_rng(0)).dtype
    dtype('int64')
    """
    scale = _positive("scale", scale, MAX_GEOMETRIC_SCALE)
    success = -math.expm1(-1.0 / scale)  # 1 - beta, without cancellation for large scales
    return np.int64(rng.geometric(success, size)) - np.int64(rng.geometric(success, size))  # scalar or array


@overload
def polya(r: float, beta: float, size: None, rng: np.random.Generator) -> np.int64: ...


@overload
def polya(r: float, beta: float, size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray: ...


@checks(r=POSITIVE_FINITE, beta=UNIT_NO_ONE, size=SIZE, rng=RNG)
@fill
def polya(r: float, beta: float, size: Size, rng: np.random.Generator) -> np.ndarray | np.int64:
    """``Polya(r, beta)``: pmf ``Gamma(x+r)/(x! Gamma(r)) beta^x (1-beta)^r`` on x = 0, 1, 2, ...

    Sampled as in the paper's footnote: ``lambda ~ Gamma(shape=r, scale=beta/(1-beta))``, then
    ``X ~ Poisson(lambda)`` (*not* the reference code's scale ``(1-beta)/beta``, which samples
    ``Polya(r, 1-beta)``). Mean ``r beta/(1-beta)``; additive in ``r`` for a fixed ``beta``.

    Parameters
    ----------
    r : float
        The shape ``r``, positive and finite (Dist-DP-SE gives each of n users ``r = 1/n``).
    beta : float
        The parameter ``beta`` in [0, 1).
    {{size}}
    {{rng}}

    Returns
    -------
    numpy.ndarray or numpy.int64
        Non-negative ``int64`` draws of shape ``size``.

    Raises
    ------
    ConfigError
        If ``r`` is not positive and finite, ``beta`` is outside [0, 1), the mean ``r beta/(1-beta)`` exceeds
        :data:`MAX_GEOMETRIC_SCALE` (the draws would overflow), ``size`` is not a numpy size of at most
        :data:`~anonbandits.validation.MAX_DRAWS` draws, or ``rng`` is not a generator.

    {{refs_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> x = polya(2.0, 0.5, 3, np.random.default_rng(0))
    >>> x.dtype, bool((x >= 0).all())
    (dtype('int64'), True)
    """
    r = _positive("r", r)
    beta = float(beta)
    require(0.0 <= beta < 1.0, "beta", "in [0, 1)", beta)
    odds = beta / (1.0 - beta)
    if r * odds > MAX_GEOMETRIC_SCALE:
        raise ConfigError(
            f"r must be at most MAX_GEOMETRIC_SCALE / (beta/(1-beta)) = {MAX_GEOMETRIC_SCALE / odds:.4g} at "
            f"beta = {beta!r} (the mean r beta/(1-beta) would overflow the draws), got {r!r}"
        )
    return np.int64(rng.poisson(rng.gamma(r, beta / (1.0 - beta), size)))


@overload
def skellam(mu: int, var: float, size: None, rng: np.random.Generator) -> np.int64: ...


@overload
def skellam(mu: int, var: float, size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray: ...


@checks(mu=INTEGER, var=_SKELLAM_VARIANCE, size=SIZE, rng=RNG)
@fill
def skellam(mu: int, var: float, size: Size, rng: np.random.Generator) -> np.ndarray | np.int64:
    """Skellam ``Sk(mu, var)``: ``mu + N1 - N2`` with ``N1, N2`` i.i.d. ``Poisson(var/2)``; variance ``var``.

    Parameters
    ----------
    mu : int
        The mean, an integer of at most 2^62 in absolute value.
    var : float
        The variance, positive and at most :data:`MAX_SKELLAM_VARIANCE`.
    {{size_rng_int_draws}}

    Raises
    ------
    ConfigError
        If ``mu`` is not an integer (a bool or a float is not) of at most 2^62 in absolute value, ``var`` is not
        a positive finite number of at most :data:`MAX_SKELLAM_VARIANCE`, ``size`` is not a numpy size of at
        most :data:`~anonbandits.validation.MAX_DRAWS` draws, or ``rng`` is not a generator.

    {{refs_agarwal2021_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> x = skellam(0, 4.0, 10_000, np.random.default_rng(0))
    >>> x.dtype, round(float(x.var()), 1)
    (dtype('int64'), 4.0)
    """
    require(int(mu) == mu, "mu", "an integer", mu)
    half = _positive("var", var, MAX_SKELLAM_VARIANCE) / 2.0
    return int(mu) + np.int64(rng.poisson(half, size)) - np.int64(rng.poisson(half, size))


@checks(sigma=_SIGMA, size=SIZE, rng=RNG)
@fill
def discrete_gaussian(sigma: float, size: Size, rng: np.random.Generator) -> np.ndarray:
    """Discrete Gaussian ``N_Z(0, sigma^2)``, pmf proportional to ``exp(-x^2/(2 sigma^2))`` on the integers.

    Canonne-Kamath-Steinke rejection sampling from a discrete Laplace proposal with scale
    ``t = floor(sigma) + 1``; accepted proposals are i.i.d. with exactly the target law, so the first
    ``prod(size)`` accepted ones are returned. Proposals are drawn in vectorised rounds sized by the
    observed acceptance rate.

    Parameters
    ----------
    sigma : float
        The scale ``sigma``, positive and at most :data:`MAX_DISCRETE_GAUSSIAN_SIGMA`.
    {{size_rng_int_draws}}

    Raises
    ------
    ConfigError
        If ``sigma`` is not a positive finite number of at most :data:`MAX_DISCRETE_GAUSSIAN_SIGMA`, ``size`` is
        not a numpy size of at most :data:`~anonbandits.validation.MAX_DRAWS` draws, or ``rng`` is not a
        generator.

    {{refs_canonne2020}}

    Examples
    --------
    >>> import numpy as np
    >>> discrete_gaussian(2.0, (2, 3), np.random.default_rng(0)).shape
    (2, 3)
    """
    sigma = _positive("sigma", sigma, MAX_DISCRETE_GAUSSIAN_SIGMA)
    shape = _shape(size)
    total = int(np.prod(shape, dtype=np.int64))
    t = math.floor(sigma) + 1
    shift, two_var = sigma * sigma / t, 2.0 * sigma * sigma
    out, filled, rate = np.empty(total, dtype=np.int64), 0, 0.5
    while filled < total:
        batch = int((total - filled) / rate * 1.1) + 16
        y = discrete_laplace(t, batch, rng)
        got = y[rng.random(batch) < np.exp(-((np.abs(y) - shift) ** 2) / two_var)]
        rate = max(got.size / batch, 0.05)
        take = min(got.size, total - filled)
        out[filled : filled + take] = got[:take]
        filled += take
    return out.reshape(shape) if size is not None else out[0]


@checks(sigma=_SIGMA)
@fill
def discrete_gaussian_pmf(sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """``(support, pmf)`` of ``N_Z(0, sigma^2)`` over every integer whose weight is a positive double.

    Beyond ``|x| ~ 38.6 sigma`` the weight ``exp(-x^2/(2 sigma^2))`` underflows to 0, far below any sampling
    error.

    Parameters
    ----------
    sigma : float
        The scale ``sigma``, positive and at most :data:`MAX_DISCRETE_GAUSSIAN_SIGMA`.

    Returns
    -------
    support : numpy.ndarray
        The integers ``-h, ..., h`` (``int64``).
    pmf : numpy.ndarray
        Their probabilities, summing to 1.

    Raises
    ------
    ConfigError
        If ``sigma`` is not a positive finite number of at most :data:`MAX_DISCRETE_GAUSSIAN_SIGMA`.

    {{refs_canonne2020}}

    Examples
    --------
    >>> support, pmf = discrete_gaussian_pmf(1.0)
    >>> int(support[pmf.argmax()]), round(float(pmf.sum()), 12)
    (0, 1.0)
    """
    sigma = _positive("sigma", sigma, MAX_DISCRETE_GAUSSIAN_SIGMA)
    half = math.ceil(sigma * math.sqrt(2 * 745.2)) + 1
    support = np.arange(-half, half + 1)
    weights = np.exp(-(support.astype(float) ** 2) / (2.0 * sigma * sigma))
    return support, weights / weights.sum()


@checks(sigma=_SIGMA, n=NONNEGATIVE_COUNT, size=SIZE, rng=RNG)
@fill
def discrete_gaussian_sum(sigma: float, n: int, size: Size, rng: np.random.Generator) -> np.ndarray:
    """Totals of ``n`` i.i.d. ``N_Z(0, sigma^2)`` (one total per element of ``size``).

    The sum of discrete Gaussians is not a discrete Gaussian, so the users' values are drawn, but as their
    histogram: ``N ~ Multinomial(n, pmf)`` over the support of :func:`discrete_gaussian_pmf`, total
    ``sum_x x N_x``. This is the exact law of the total (the histogram is a sufficient statistic of the
    users' values) in O(support) work instead of O(n); when ``n`` is below the support size the values are
    drawn one by one with :func:`discrete_gaussian` instead.

    Parameters
    ----------
    sigma : float
        Each user's scale ``sigma``, positive and at most :data:`MAX_DISCRETE_GAUSSIAN_SIGMA`.
    n : int
        The number of users, a non-negative integer (at most 2^62).
    {{size}}
    {{rng}}

    Returns
    -------
    numpy.ndarray or numpy.int64
        ``int64`` totals of shape ``size``.

    Raises
    ------
    ConfigError
        If ``sigma`` is not a positive finite number of at most :data:`MAX_DISCRETE_GAUSSIAN_SIGMA`, ``n`` is
        not a non-negative integer, ``size`` is not a numpy size, ``rng`` is not a generator, or the totals
        would need more than :data:`~anonbandits.validation.MAX_DRAWS` values (the number of totals times
        ``n``, or times the support when ``n`` is larger).

    {{refs_kairouz2021_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> discrete_gaussian_sum(1.0, 50, 4, np.random.default_rng(0)).shape
    (4,)
    """
    sigma = _positive("sigma", sigma, MAX_DISCRETE_GAUSSIAN_SIGMA)
    require(not isinstance(n, bool) and isinstance(n, int | np.integer) and n >= 0, "n", "a non-negative integer", n)
    shape = _shape(size)
    count = int(np.prod(shape, dtype=np.int64))
    support, pmf = discrete_gaussian_pmf(sigma)
    values = count * min(int(n), support.size)  # the users' draws, or their histograms' entries
    if values > MAX_DRAWS:
        raise ConfigError(
            f"size {size!r} of totals of n = {n} users needs {values:,} values, above MAX_DRAWS = {MAX_DRAWS:,}"
        )
    if n <= support.size:
        totals = discrete_gaussian(sigma, (count, n), rng).sum(axis=1)
    else:
        totals = rng.multinomial(n, pmf, size=count) @ support
    return totals.astype(np.int64).reshape(shape)[()]
