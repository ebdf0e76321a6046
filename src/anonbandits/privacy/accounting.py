"""Privacy accounting of paper 004 (Chowdhury and Zhou, ICLR 2023; docs/distributed-dp.md): RDP and CDP of the
distributed mechanisms, conversions to ``(eps, delta)``-DP, composition.

An RDP curve is ``eps(alpha)`` for orders ``alpha > 1``; ``rho``-zCDP is ``eps(alpha) = rho alpha``, so the
paper's "(1/2) eps^2-CDP" is ``rho = eps^2/2``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.errors import ConfigError, require
from anonbandits.validation import (
    CALLABLE,
    COUNT,
    EPSILON,
    FINITE,
    NONNEGATIVE_FINITE,
    OPEN_UNIT,
    ORDERS,
    POSITIVE_ARRAY,
    POSITIVE_FINITE,
    RDP_CURVE,
    UNIT_NO_ONE,
    checks,
    int_between,
    optional,
)

#: Integer orders used for numeric RDP -> DP conversion (Lemma 3 is stated for integer alpha >= 2).
DEFAULT_ORDERS = np.concatenate([np.arange(2, 65), np.unique(np.geomspace(65, 10_000, 80).astype(int))])


@fill
class TrivialGuaranteeWarning(UserWarning):
    """A conversion to ``(eps, delta)``-DP found that ``delta`` alone covers the release: the tightest valid eps is
    0, and the guarantee is only as strong as ``delta`` (which should be well below 1/users to mean anything).

    {{refs_paper004}}

    Examples
    --------
    >>> issubclass(TrivialGuaranteeWarning, UserWarning)
    True
    """


@checks(raw=FINITE, delta=UNIT_NO_ONE)
@fill
def nonnegative_epsilon(raw: float, delta: float) -> float:
    """The tightest valid epsilon of an ``(eps, delta)`` conversion whose formula gave ``raw``: ``max(raw, 0)``.

    A conversion formula can go below 0 when ``delta`` is large (``dist-cdp-se --epsilon 0.01 --dp-delta
    0.5`` gives -0.69): ``(eps, delta)``-DP with eps < 0 means ``(0, delta)``-DP, and no epsilon is negative.
    Then a :class:`TrivialGuaranteeWarning` says that delta makes the guarantee trivial.

    Parameters
    ----------
    raw : float
        What the conversion formula gave.
    delta : float
        The conversion's delta.

    Returns
    -------
    float
        ``raw``, or 0.0 when it is negative.

    Raises
    ------
    ConfigError
        If ``raw`` is not a finite number (a bool, NaN or infinite) or ``delta`` is outside [0, 1).

    {{refs_paper004}}

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     nonnegative_epsilon(-0.69, 0.5), nonnegative_epsilon(1.5, 1e-6)
    (0.0, 1.5)
    """
    if raw < 0:
        warnings.warn(
            f"delta = {delta:g} makes the (epsilon, delta)-DP guarantee trivial: the conversion gives "
            f"epsilon {raw:.3g} < 0, reported as 0 (delta alone bounds the privacy loss; use a delta well "
            "below 1/users)",
            TrivialGuaranteeWarning,
            stacklevel=3,
        )
        return 0.0
    return raw


def _check_delta(delta: float) -> float:
    require(0.0 < delta < 1.0, "delta", "in (0, 1)", delta)
    return float(delta)


@checks(alpha=ORDERS, sensitivity=POSITIVE_FINITE, variance=POSITIVE_FINITE)
@fill
def skellam_rdp(alpha: np.ndarray | float, sensitivity: float, variance: float) -> np.ndarray:
    """RDP of adding ``Sk(0, variance)`` to a query of sensitivity D (Lemma 3 of paper 004).

    ``eps(alpha) = alpha D^2/(2 s2) + min(((2 alpha - 1) D^2 + 6 D)/(4 s2^2), 3 D/(2 s2))`` with
    ``s2 = variance``, for integer ``alpha >= 2`` (Theorem 3.5 of the Skellam mechanism's paper).

    Parameters
    ----------
    {{rdp_orders}}
    sensitivity : float
        The query's sensitivity D.
    variance : float
        The Skellam variance.

    {{rdp_returns}}

    Raises
    ------
    ConfigError
        If ``alpha`` is not an order > 1 or a non-empty array of finite ones, or ``sensitivity`` or ``variance``
        is not a positive finite number.

    {{refs_agarwal2021_paper004}}

    Examples
    --------
    >>> float(skellam_rdp(2, 1.0, 100.0))
    0.010225
    """
    a = np.asarray(alpha, dtype=float)
    d, s2 = float(sensitivity), float(variance)
    return a * d * d / (2 * s2) + np.minimum(((2 * a - 1) * d * d + 6 * d) / (4 * s2 * s2), 3 * d / (2 * s2))


@checks(alpha=ORDERS, epsilon=EPSILON, scale=POSITIVE_FINITE, n=optional(COUNT))
@fill
def dist_rdp_se_rdp(alpha: np.ndarray | float, epsilon: float, scale: float, n: int | None = None) -> np.ndarray:
    """Theorem 2 of paper 004: RDP of one Dist-RDP-SE batch of ``n`` users.

    ``alpha eps^2/2 + min((2alpha-1) eps^2/(4 s^2 n) + 3 eps/(2 s^3 n^1.5), 3 eps/(2 s sqrt n))``, with the
    last term's ``eps^1`` as corrected in this project's reading of the theorem. ``n = None`` gives the
    bound with n = 1, valid for every batch. :func:`skellam_rdp` with the actual integer ``g`` is at most
    this.

    Parameters
    ----------
    {{rdp_orders}}
    epsilon : float
        The privacy level.
    scale : float
        The scaling factor ``s >= 1``.
    n : int or None, optional
        The batch's number of users; ``None`` for the bound valid for every batch.

    {{rdp_returns}}

    Raises
    ------
    ConfigError
        If ``alpha`` is not an order > 1 or a non-empty array of finite ones, ``epsilon`` is not a finite
        positive number in the supported range, ``scale`` is not a positive finite number, or ``n`` is neither
        ``None`` nor a positive integer.

    {{refs_paper004}}

    Examples
    --------
    >>> round(float(dist_rdp_se_rdp(2, 1.0, 10.0, 1)), 6)
    1.009
    """
    a = np.asarray(alpha, dtype=float)
    nn = 1.0 if n is None else float(n)
    e, s = float(epsilon), float(scale)
    # s * s * s, not s**3: a huge scale makes the term 0 (its limit) instead of raising OverflowError
    return a * e * e / 2 + np.minimum(
        (2 * a - 1) * e * e / (4 * s * s * nn) + 3 * e / (2 * (s * s * s) * nn**1.5), 3 * e / (2 * s * math.sqrt(nn))
    )


#: The most users of :func:`discrete_gaussian_sum_xi` and :func:`discrete_gaussian_sum_cdp`: the sum has one
#: term per user (about a second per 10^8 of them); a batch has at most a horizon's users
#: (:data:`anonbandits.channels.feedback.MAX_HORIZON`).
MAX_XI_USERS = 10**9


@checks(n=int_between(1, MAX_XI_USERS), sigma=POSITIVE_FINITE)
@fill
def discrete_gaussian_sum_xi(n: int, sigma: float) -> float:
    """``xi = 10 sum_{k=1}^{n-1} exp(-2 pi^2 sigma^2 k/(k+1))`` of Lemma 4 of paper 004.

    Parameters
    ----------
    n : int
        The number of users.
    sigma : float
        Each user's discrete Gaussian scale.

    Returns
    -------
    float
        ``xi`` (0 when every term underflows in double precision).

    Raises
    ------
    ConfigError
        If ``n`` is not an integer from 1 to :data:`MAX_XI_USERS` or ``sigma`` is not a positive finite number.

    References
    ----------
    Kairouz, Liu, Steinke, "The Distributed Discrete Gaussian Mechanism for Federated Learning with Secure
    Aggregation", ICML 2021 (Proposition 13).

    {{paper004}}

    Examples
    --------
    >>> f"{discrete_gaussian_sum_xi(10, 1.0):.4e}"
    '5.4352e-04'
    """
    c = 2.0 * math.pi**2 * sigma * sigma
    if n <= 1 or c > 745.0:  # every term underflows to 0 in double precision
        return 0.0
    total = 0.0
    chunk = 1 << 20
    for start in range(2, n + 1, chunk):  # k/(k+1) = 1 - 1/j with j = k + 1 in 2..n
        j = np.arange(start, min(n, start + chunk - 1) + 1, dtype=float)
        total += float(np.exp(-c + c / j).sum())
    return 10.0 * total


@checks(n=int_between(1, MAX_XI_USERS), sigma=POSITIVE_FINITE, sensitivity=POSITIVE_FINITE)
@fill
def discrete_gaussian_sum_cdp(n: int, sigma: float, sensitivity: float) -> float:
    """Lemma 4 of paper 004: adding the sum of ``n`` i.i.d. ``N_Z(0, sigma^2)`` is ``(1/2) epsbar^2``-CDP.

    ``epsbar = min(sqrt(D^2/(n sigma^2) + xi/2), D/(sqrt(n) sigma) + xi)`` with ``xi`` of
    :func:`discrete_gaussian_sum_xi`.

    Parameters
    ----------
    n : int
        The number of users.
    sigma : float
        Each user's scale, at least 1/2.
    sensitivity : float
        The query's sensitivity D.

    Returns
    -------
    float
        ``epsbar``.

    Raises
    ------
    ConfigError
        If ``n`` is not an integer from 1 to :data:`MAX_XI_USERS`, ``sigma`` is not a finite number of at least
        1/2, or ``sensitivity`` is not a positive finite number.

    {{refs_kairouz2021_paper004}}

    Examples
    --------
    >>> round(discrete_gaussian_sum_cdp(100, 1.0, 1.0), 4)
    0.1005
    """
    require(sigma >= 0.5, "Lemma 4's per-user sigma", ">= 1/2", sigma)
    xi = discrete_gaussian_sum_xi(n, sigma)
    d = float(sensitivity)
    return min(math.sqrt(d * d / (n * sigma * sigma) + xi / 2), d / (math.sqrt(n) * sigma) + xi)


@checks(rdp=RDP_CURVE, delta=OPEN_UNIT, orders=ORDERS)
@fill
def rdp_to_dp(
    rdp: Callable[[np.ndarray], np.ndarray] | np.ndarray, delta: float, orders: np.ndarray = DEFAULT_ORDERS
) -> float:
    """Lemma 10 of paper 004: RDP at the given orders implies ``(eps', delta)``-DP.

    ``eps' = min_alpha eps(alpha) + log(1/(alpha delta))/(alpha - 1) + log(1 - 1/alpha)``, or 0 where that is
    negative (a delta so large it makes the guarantee trivial: :func:`nonnegative_epsilon` warns).

    Parameters
    ----------
    rdp : callable or numpy.ndarray
        ``eps(alpha)``: a function of the orders, or its values aligned with ``orders``.
    {{rdp_delta_orders}}

    {{returns_eps}}

    Raises
    ------
    ConfigError
        If ``rdp`` is neither a callable nor an array of finite numbers, its values are not one per order (or
        NaN), ``delta`` is outside (0, 1), or ``orders`` is not a non-empty array of finite orders > 1.

    {{refs_canonne2020_paper004}}

    Examples
    --------
    >>> round(rdp_to_dp(lambda alpha: 0.5 * alpha, 1e-6), 4)   # 0.5-zCDP
    5.2224
    """
    delta = _check_delta(delta)
    a = np.asarray(orders, dtype=float)
    require(bool(np.all(a > 1)), "RDP orders", "> 1", a[a <= 1])
    values = np.asarray(rdp(a) if callable(rdp) else rdp, dtype=float)
    require(
        values.shape == a.shape and not np.isnan(values).any(),
        "rdp",
        f"a curve of {a.size} values (one per order, not NaN)",
        values,
    )
    return nonnegative_epsilon(float(np.min(values + np.log(1.0 / (a * delta)) / (a - 1) + np.log1p(-1.0 / a))), delta)


@checks(rho=NONNEGATIVE_FINITE, delta=OPEN_UNIT)
@fill
def zcdp_to_dp(rho: float, delta: float) -> float:
    """``rho``-zCDP implies ``(eps', delta)``-DP: the better of two conversions.

    The smaller of ``rho + 2 sqrt(rho log(1/delta))`` (the standard conversion) and :func:`rdp_to_dp` of the
    curve ``rho alpha`` over real orders.

    Parameters
    ----------
    rho : float
        The zCDP parameter.
    delta : float
        The target delta, in (0, 1).

    {{returns_eps}}

    Raises
    ------
    ConfigError
        If ``rho`` is not a finite number >= 0 or ``delta`` is outside (0, 1).

    See Also
    --------
    rdp_to_dp : the conversion of any RDP curve, used here for ``rho alpha``.

    {{refs_bun2016_paper004}}

    Examples
    --------
    >>> round(zcdp_to_dp(0.5, 1e-6), 4)
    5.2215
    """
    delta = _check_delta(delta)
    simple = rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
    orders = 1.0 + np.geomspace(1e-4, 1e5, 4000)
    return min(simple, rdp_to_dp(lambda a: rho * a, delta, orders))  # never < 0: rdp_to_dp's is not


@checks(epsilon=POSITIVE_ARRAY, alpha=ORDERS)
@fill
def pure_dp_to_rdp(epsilon: float | np.ndarray, alpha: np.ndarray | float) -> np.ndarray:
    """(eps, 0)-DP implies ``(alpha, min(eps, alpha eps^2/2))``-RDP; ``epsilon`` and ``alpha`` broadcast.

    Parameters
    ----------
    epsilon : float or array_like of float
        The pure-DP level.
    {{rdp_orders}}

    Returns
    -------
    numpy.ndarray
        The RDP curve at ``alpha``.

    Raises
    ------
    ConfigError
        If ``epsilon`` is not a positive finite number or array of them, ``alpha`` is not an order > 1 or an
        array of them, or the two do not broadcast together.

    {{refs_bun2016_paper004}}

    Examples
    --------
    >>> pure_dp_to_rdp(0.1, [2, 4])
    array([0.01, 0.02])
    """
    eps = np.asarray(epsilon, dtype=float)
    try:
        np.broadcast_shapes(eps.shape, np.shape(alpha))
    except ValueError:
        raise ConfigError(
            f"epsilon and alpha must broadcast together, got shapes {eps.shape} and {np.shape(alpha)}"
        ) from None
    return np.minimum(eps, np.asarray(alpha, dtype=float) * eps**2 / 2)


@checks(epsilon_total=POSITIVE_FINITE, k=COUNT, delta_prime=OPEN_UNIT)
@fill
def advanced_composition_epsilon(epsilon_total: float, k: int, delta_prime: float) -> float:
    """The per-mechanism epsilon under advanced composition (Theorem 7 of paper 004).

    Each of ``k`` adaptive mechanisms ``(eps, delta)``-DP with ``eps = eps'/(2 sqrt(2 k log(1/delta')))``
    compose to ``(eps', k delta + delta')``-DP.

    Parameters
    ----------
    epsilon_total : float
        The total ``eps'``.
    k : int
        The number of mechanisms.
    delta_prime : float
        The composition's ``delta'``, in (0, 1).

    Returns
    -------
    float
        The per-mechanism ``eps``.

    Raises
    ------
    ConfigError
        If ``epsilon_total`` is not a positive finite number, ``k`` is not a positive integer or ``delta_prime``
        is outside (0, 1).

    {{refs_dwork2010_paper004}}

    Examples
    --------
    >>> round(advanced_composition_epsilon(1.0, 100, 1e-6), 6)
    0.009512
    """
    _check_delta(delta_prime)
    return epsilon_total / (2.0 * math.sqrt(2.0 * k * math.log(1.0 / delta_prime)))


@checks(rdp=CALLABLE, batches=COUNT, delta=OPEN_UNIT, orders=ORDERS)
@fill
def returning_users_dp(
    rdp: Callable[[np.ndarray], np.ndarray], batches: int, delta: float, orders: np.ndarray = DEFAULT_ORDERS
) -> float:
    """``(eps', delta)``-DP of a user in at most ``B`` batches, each RDP (Appendix I of paper 004).

    ``eps'`` is :func:`rdp_to_dp` (Lemma 10) of the composed curve ``B eps(alpha)``.

    Parameters
    ----------
    rdp : callable
        ``eps(alpha)`` of one batch, a function of the orders.
    batches : int
        ``B``, a positive integer.
    {{rdp_delta_orders}}

    {{returns_eps}}

    Raises
    ------
    ConfigError
        If ``rdp`` is not a callable, ``batches`` is not a positive integer, ``delta`` is outside (0, 1), an order
        is at most 1, or the curve ``rdp`` gives is not one value per order.

    {{refs_paper004}}

    Examples
    --------
    >>> round(returning_users_dp(lambda alpha: 0.01 * alpha, 10, 1e-6), 4)
    2.143
    """
    require(int(batches) == batches and batches >= 1, "batches", "a positive integer", batches)
    return rdp_to_dp(lambda a: batches * np.asarray(rdp(a)), delta, orders)
