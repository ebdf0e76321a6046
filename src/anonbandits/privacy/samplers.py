"""Noise samplers for differential privacy, each exact in law (up to floating-point arithmetic).

Every sampler takes an explicit ``numpy.random.Generator`` and a numpy ``size`` (int, tuple or ``None`` for
a scalar) and returns integers (``int64``) for the discrete laws.

* :func:`laplace`: continuous Laplace ``Lap(b)``, density ``exp(-|x|/b) / (2b)``.
* :func:`discrete_laplace`: ``Lap_Z(b)``, pmf ``(1-beta)/(1+beta) * beta^|x|`` with ``beta = exp(-1/b)``,
  sampled as the difference of two i.i.d. geometric variables (spec distributed-dp.md, Sec. 1.1).
* :func:`polya`: ``Polya(r, beta)``, a negative binomial with real ``r``, sampled as a Gamma-Poisson
  mixture with the paper's parametrisation ``lambda ~ Gamma(r, scale=beta/(1-beta))`` (Sec. 1.2; *not* the
  reference code's ``(1-beta)/beta``, which samples ``Polya(r, 1-beta)``).
* :func:`skellam`: ``Sk(mu, sigma^2) = mu + Poisson(sigma^2/2) - Poisson(sigma^2/2)`` (Sec. 1.3).
* :func:`discrete_gaussian`: ``N_Z(0, sigma^2)`` by the rejection sampler of Canonne, Kamath and Steinke
  (2020): propose ``Y ~ Lap_Z(t)`` with ``t = floor(sigma) + 1`` and accept with probability
  ``exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2))`` (Sec. 1.4), vectorised over the whole request.
* :func:`discrete_gaussian_sum`: the total of ``n`` i.i.d. ``N_Z(0, sigma^2)`` (not itself a discrete
  Gaussian, spec Sec. 6 item 8), drawn as the histogram of the ``n`` users' values: one multinomial over the
  support instead of ``n`` draws.

The acceptance test and the geometric draws use floating-point probabilities; the integer-arithmetic
(bit-exact) variant of CKS20 is not needed for simulation.
"""

from __future__ import annotations

import math

import numpy as np

from anonbandits.errors import ConfigError

Size = int | tuple[int, ...] | None


def _positive(name: str, value: float) -> float:
    value = float(value)
    if not (value > 0 and math.isfinite(value)):
        raise ConfigError(f"{name} must be a positive finite number, got {value!r}")
    return value


def laplace(scale: float, size: Size, rng: np.random.Generator) -> np.ndarray:
    """Continuous Laplace noise with mean 0 and scale ``b`` (variance ``2 b^2``)."""
    return rng.laplace(0.0, _positive("scale", scale), size)


def discrete_laplace(scale: float, size: Size, rng: np.random.Generator) -> np.ndarray:
    """Discrete Laplace ``Lap_Z(b)``: ``G1 - G2`` with ``G1, G2`` i.i.d. ``P[G = k] = (1-beta) beta^k``.

    ``beta = exp(-1/b)``; the difference of two such geometric variables has exactly the pmf
    ``(1-beta)/(1+beta) beta^|x|`` (it is ``Polya(1, beta) - Polya(1, beta)``).
    """
    scale = _positive("scale", scale)
    success = -math.expm1(-1.0 / scale)  # 1 - beta, without cancellation for large scales
    return (rng.geometric(success, size).astype(np.int64) - rng.geometric(success, size).astype(np.int64))


def polya(r: float, beta: float, size: Size, rng: np.random.Generator) -> np.ndarray:
    """``Polya(r, beta)``: pmf ``Gamma(x+r)/(x! Gamma(r)) beta^x (1-beta)^r`` on x = 0, 1, 2, ...

    Sampled as in the paper's footnote: ``lambda ~ Gamma(shape=r, scale=beta/(1-beta))``, then
    ``X ~ Poisson(lambda)``. Mean ``r beta/(1-beta)``; additive in ``r`` for a fixed ``beta``.
    """
    r = _positive("r", r)
    beta = float(beta)
    if not 0.0 <= beta < 1.0:
        raise ConfigError(f"beta must be in [0, 1), got {beta!r}")
    if beta == 0.0:
        return np.zeros(size, dtype=np.int64) if size is not None else np.int64(0)
    lam = rng.gamma(r, beta / (1.0 - beta), size)
    return rng.poisson(lam).astype(np.int64)


def skellam(mu: int, var: float, size: Size, rng: np.random.Generator) -> np.ndarray:
    """Skellam ``Sk(mu, var)``: ``mu + N1 - N2`` with ``N1, N2`` i.i.d. ``Poisson(var/2)``; variance ``var``."""
    if int(mu) != mu:
        raise ConfigError(f"Skellam mean must be an integer, got {mu!r}")
    var = _positive("var", var)
    half = var / 2.0
    return int(mu) + rng.poisson(half, size).astype(np.int64) - rng.poisson(half, size).astype(np.int64)


def discrete_gaussian(sigma: float, size: Size, rng: np.random.Generator) -> np.ndarray:
    """Discrete Gaussian ``N_Z(0, sigma^2)``, pmf proportional to ``exp(-x^2/(2 sigma^2))`` on the integers.

    Canonne-Kamath-Steinke (2020) rejection sampling from a discrete Laplace proposal with scale
    ``t = floor(sigma) + 1``; accepted proposals are i.i.d. with exactly the target law, so the first
    ``prod(size)`` accepted ones are returned. Proposals are drawn in vectorised rounds sized by the
    observed acceptance rate.
    """
    sigma = _positive("sigma", sigma)
    shape = () if size is None else ((size,) if isinstance(size, int | np.integer) else tuple(size))
    total = int(np.prod(shape, dtype=np.int64))
    t = math.floor(sigma) + 1
    shift = sigma * sigma / t
    two_var = 2.0 * sigma * sigma
    out = np.empty(total, dtype=np.int64)
    filled = 0
    rate = 0.5
    while filled < total:
        need = total - filled
        batch = int(need / rate * 1.1) + 16
        y = discrete_laplace(t, batch, rng)
        accept = rng.random(batch) < np.exp(-((np.abs(y) - shift) ** 2) / two_var)
        got = y[accept]
        rate = max(got.size / batch, 0.05)
        take = min(got.size, need)
        out[filled:filled + take] = got[:take]
        filled += take
    return out.reshape(shape) if size is not None else out[0]


def discrete_gaussian_pmf(sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """``(support, pmf)`` of ``N_Z(0, sigma^2)`` over every integer whose weight ``exp(-x^2/(2 sigma^2))`` is
    a positive double (beyond ``|x| ~ 38.6 sigma`` it underflows to 0, far below any sampling error)."""
    sigma = _positive("sigma", sigma)
    half = math.ceil(sigma * math.sqrt(2 * 745.2)) + 1
    support = np.arange(-half, half + 1)
    weights = np.exp(-(support.astype(float) ** 2) / (2.0 * sigma * sigma))
    return support, weights / weights.sum()


def discrete_gaussian_sum(sigma: float, n: int, size: Size, rng: np.random.Generator) -> np.ndarray:
    """Totals of ``n`` i.i.d. ``N_Z(0, sigma^2)`` (one per element of ``size``).

    The sum of discrete Gaussians is not a discrete Gaussian, so the users' values are drawn, but as their
    histogram: ``N ~ Multinomial(n, pmf)`` over the support of :func:`discrete_gaussian_pmf`, total
    ``sum_x x N_x``. This is the exact law of the total (the histogram is a sufficient statistic of the
    users' values) in O(support) work instead of O(n); when ``n`` is below the support size the values are
    drawn one by one with :func:`discrete_gaussian` instead.
    """
    sigma = _positive("sigma", sigma)
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise ConfigError(f"n must be a non-negative integer, got {n!r}")
    shape = () if size is None else ((size,) if isinstance(size, int | np.integer) else tuple(size))
    count = int(np.prod(shape, dtype=np.int64))
    support, pmf = discrete_gaussian_pmf(sigma)
    if n <= support.size:
        totals = discrete_gaussian(sigma, (count, n), rng).sum(axis=1)
    else:
        totals = rng.multinomial(n, pmf, size=count) @ support
    totals = totals.astype(np.int64)
    return totals.reshape(shape) if size is not None else totals[0]

