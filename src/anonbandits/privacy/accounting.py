"""Privacy accounting: RDP of the Skellam mechanism, CDP of sums of discrete Gaussians, conversions to
(eps, delta)-DP, and composition for returning users (spec distributed-dp.md, Secs. 1.3-1.5, 3.2, 3.3, 3.8).

Conventions: an RDP curve is ``eps(alpha)`` for orders ``alpha > 1``; ``rho``-zCDP means
``eps(alpha) = rho alpha`` for all alpha, so the paper's "(1/2) eps^2-CDP" is ``rho = eps^2/2``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from anonbandits.errors import ConfigError

#: Integer orders used for numeric RDP -> DP conversion (Lemma 3 is stated for integer alpha >= 2).
DEFAULT_ORDERS = np.concatenate([np.arange(2, 65), np.unique(np.geomspace(65, 10_000, 80).astype(int))])


def _check_delta(delta: float) -> float:
    if not 0.0 < delta < 1.0:
        raise ConfigError(f"delta must be in (0, 1), got {delta!r}")
    return float(delta)


def skellam_rdp(alpha: np.ndarray | float, sensitivity: float, variance: float) -> np.ndarray:
    """Lemma 3 (Agarwal et al. 2021, Thm 3.5): RDP of adding ``Sk(0, variance)`` to a query of sensitivity D.

    ``eps(alpha) = alpha D^2/(2 s2) + min(((2 alpha - 1) D^2 + 6 D)/(4 s2^2), 3 D/(2 s2))`` with
    ``s2 = variance``, for integer ``alpha >= 2``.
    """
    a = np.asarray(alpha, dtype=float)
    d, s2 = float(sensitivity), float(variance)
    return a * d * d / (2 * s2) + np.minimum(((2 * a - 1) * d * d + 6 * d) / (4 * s2 * s2), 3 * d / (2 * s2))


def dist_rdp_se_rdp(alpha: np.ndarray | float, epsilon: float, scale: float,
                    n: int | None = None) -> np.ndarray:
    """Theorem 2 of paper 004: RDP of one Dist-RDP-SE batch of ``n`` users (uniform over n when ``None``).

    ``alpha eps^2/2 + min((2alpha-1) eps^2/(4 s^2 n) + 3 eps/(2 s^3 n^1.5), 3 eps/(2 s sqrt n))``, with the
    last term's ``eps^1`` as corrected in spec Sec. 3.2. ``n = None`` gives the bound with n = 1, valid for
    every batch. :func:`skellam_rdp` with the actual integer ``g`` is at most this.
    """
    a = np.asarray(alpha, dtype=float)
    nn = 1.0 if n is None else float(n)
    e, s = float(epsilon), float(scale)
    return a * e * e / 2 + np.minimum((2 * a - 1) * e * e / (4 * s * s * nn) + 3 * e / (2 * s**3 * nn**1.5),
                                      3 * e / (2 * s * math.sqrt(nn)))


def discrete_gaussian_sum_xi(n: int, sigma: float) -> float:
    """``xi = 10 sum_{k=1}^{n-1} exp(-2 pi^2 sigma^2 k/(k+1))`` of Lemma 4 (Kairouz et al. 2021a, Prop. 13)."""
    c = 2.0 * math.pi**2 * sigma * sigma
    if n <= 1 or c > 745.0:  # every term underflows to 0 in double precision
        return 0.0
    total = 0.0
    chunk = 1 << 20
    for start in range(2, n + 1, chunk):  # k/(k+1) = 1 - 1/j with j = k + 1 in 2..n
        j = np.arange(start, min(n, start + chunk - 1) + 1, dtype=float)
        total += float(np.exp(-c + c / j).sum())
    return 10.0 * total


def discrete_gaussian_sum_cdp(n: int, sigma: float, sensitivity: float) -> float:
    """Lemma 4: adding the sum of ``n`` i.i.d. ``N_Z(0, sigma^2)`` (sigma >= 1/2) is ``(1/2) epsbar^2``-CDP.

    Returns ``epsbar = min(sqrt(D^2/(n sigma^2) + xi/2), D/(sqrt(n) sigma) + xi)``.
    """
    if sigma < 0.5:
        raise ConfigError(f"Lemma 4 needs per-user sigma >= 1/2, got {sigma!r}")
    xi = discrete_gaussian_sum_xi(n, sigma)
    d = float(sensitivity)
    return min(math.sqrt(d * d / (n * sigma * sigma) + xi / 2), d / (math.sqrt(n) * sigma) + xi)


def rdp_to_dp(rdp: Callable[[np.ndarray], np.ndarray] | np.ndarray, delta: float,
              orders: np.ndarray = DEFAULT_ORDERS) -> float:
    """Lemma 10: ``(alpha, eps(alpha))``-RDP for the given orders implies ``(eps', delta)``-DP with
    ``eps' = min_alpha eps(alpha) + log(1/(alpha delta))/(alpha - 1) + log(1 - 1/alpha)``.

    ``rdp`` is a function of the orders or an array of values aligned with ``orders``.
    """
    delta = _check_delta(delta)
    a = np.asarray(orders, dtype=float)
    if np.any(a <= 1):
        raise ConfigError("RDP orders must be > 1")
    values = np.asarray(rdp(a) if callable(rdp) else rdp, dtype=float)
    return float(np.min(values + np.log(1.0 / (a * delta)) / (a - 1) + np.log1p(-1.0 / a)))


def zcdp_to_dp(rho: float, delta: float) -> float:
    """``rho``-zCDP implies ``(eps', delta)``-DP: the smaller of ``rho + 2 sqrt(rho log(1/delta))`` (the
    standard conversion) and the Lemma 10 conversion of the curve ``rho alpha`` over real orders."""
    delta = _check_delta(delta)
    simple = rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
    orders = 1.0 + np.geomspace(1e-4, 1e5, 4000)
    return min(simple, rdp_to_dp(lambda a: rho * a, delta, orders))


def pure_dp_to_rdp(epsilon: float, alpha: np.ndarray | float) -> np.ndarray:
    """(eps, 0)-DP implies ``(alpha, min(eps, alpha eps^2/2))``-RDP (Lemma 10 gives the second term)."""
    a = np.asarray(alpha, dtype=float)
    return np.minimum(float(epsilon), a * epsilon * epsilon / 2)


def advanced_composition_epsilon(epsilon_total: float, k: int, delta_prime: float) -> float:
    """Theorem 7: each of ``k`` adaptive mechanisms ``(eps, delta)``-DP with
    ``eps = eps'/(2 sqrt(2 k log(1/delta')))`` compose to ``(eps', k delta + delta')``-DP."""
    _check_delta(delta_prime)
    return epsilon_total / (2.0 * math.sqrt(2.0 * k * math.log(1.0 / delta_prime)))


def returning_users_dp(rdp: Callable[[np.ndarray], np.ndarray], batches: int, delta: float,
                       orders: np.ndarray = DEFAULT_ORDERS) -> float:
    """Appendix I: a user in at most ``B`` batches, each ``(alpha, eps(alpha))``-RDP, is ``(eps', delta)``-DP
    with ``eps'`` from Lemma 10 applied to the composed curve ``B eps(alpha)``."""
    if int(batches) != batches or batches < 1:
        raise ConfigError(f"batches must be a positive integer, got {batches!r}")
    return rdp_to_dp(lambda a: batches * np.asarray(rdp(a)), delta, orders)
