"""Privacy mechanisms of paper 004 ("Distributed Differential Privacy in Multi-Armed Bandits", Chowdhury and
Zhou, ICLR 2023; docs/distributed-dp.md): exact noise samplers, tail bounds, randomized
rounding, secure aggregation, the analyzer with underflow correction, and privacy accounting.

* Samplers (:func:`laplace`, :func:`discrete_laplace`, :func:`polya`, :func:`skellam`, :func:`discrete_gaussian`,
  :func:`discrete_gaussian_sum`) are exact in law up to floating-point arithmetic, take an explicit
  ``numpy.random.Generator`` and a numpy ``size`` (``None`` for a scalar) and return ``int64`` for discrete laws.
* Each ``*_radius`` returns a ``v`` with ``P[|X| > v] <= p``; the protocols set ``tau = ceil(radius)``.
* :func:`secure_sum` is SecAgg's ideal functionality (the server learns ``(sum_i y_i) mod m`` only);
  :func:`masked_messages` (pairwise masking, Bonawitz et al. 2017) and :func:`split_and_mix` (the shuffle
  stand-in) simulate it with no real cryptography and must give the identical sum.
* Accounting: an RDP curve is ``eps(alpha)`` for orders ``alpha > 1``; ``rho``-zCDP is ``eps(alpha) = rho
  alpha``, so the paper's "(1/2) eps^2-CDP" is ``rho = eps^2/2``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.errors import ConfigError, require

Size = int | tuple[int, ...] | None
#: Integer orders used for numeric RDP -> DP conversion (Lemma 3 is stated for integer alpha >= 2).
DEFAULT_ORDERS = np.concatenate([np.arange(2, 65), np.unique(np.geomspace(65, 10_000, 80).astype(int))])


def _positive(name: str, value: float) -> float:
    value = float(value)
    require(value > 0 and math.isfinite(value), name, "a positive finite number", value)
    return value


def _check_p(p: float) -> float:
    require(0.0 < p <= 1.0, "tail probability p", "in (0, 1]", p)
    return float(p)


def _check_modulus(m: int) -> int:
    require(int(m) == m and 2 <= m < 2**62, "modulus m", "an integer in [2, 2^62)", m)
    return int(m)


def _check_delta(delta: float) -> float:
    require(0.0 < delta < 1.0, "delta", "in (0, 1)", delta)
    return float(delta)


def _shape(size: Size) -> tuple[int, ...]:
    return () if size is None else ((size,) if isinstance(size, int | np.integer) else tuple(size))


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

    {{raises_scale_refs_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> laplace(2.0, 3, np.random.default_rng(0)).shape
    (3,)
    """
    return rng.laplace(0.0, _positive("scale", scale), size)


@fill
def discrete_laplace(scale: float, size: Size, rng: np.random.Generator) -> np.ndarray:
    """Discrete Laplace ``Lap_Z(b)``: ``G1 - G2`` with ``G1, G2`` i.i.d. ``P[G = k] = (1-beta) beta^k``.

    ``beta = exp(-1/b)``; the difference of two such geometric variables has exactly the pmf
    ``(1-beta)/(1+beta) beta^|x|`` (it is ``Polya(1, beta) - Polya(1, beta)``).

    Parameters
    ----------
    {{scale_b}}
    {{size_rng_int_draws}}

    {{raises_scale_refs_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> discrete_laplace(1.0, 4, np.random.default_rng(0)).dtype
    dtype('int64')
    """
    scale = _positive("scale", scale)
    success = -math.expm1(-1.0 / scale)  # 1 - beta, without cancellation for large scales
    return np.int64(rng.geometric(success, size)) - np.int64(rng.geometric(success, size))  # scalar or array


@fill
def polya(r: float, beta: float, size: Size, rng: np.random.Generator) -> np.ndarray:
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
        If ``r`` is not positive and finite or ``beta`` is outside [0, 1).

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
    return np.int64(rng.poisson(rng.gamma(r, beta / (1.0 - beta), size)))


@fill
def skellam(mu: int, var: float, size: Size, rng: np.random.Generator) -> np.ndarray:
    """Skellam ``Sk(mu, var)``: ``mu + N1 - N2`` with ``N1, N2`` i.i.d. ``Poisson(var/2)``; variance ``var``.

    Parameters
    ----------
    mu : int
        The mean, an integer.
    var : float
        The variance, positive and finite.
    {{size_rng_int_draws}}

    Raises
    ------
    ConfigError
        If ``mu`` is not an integer or ``var`` is not positive and finite.

    {{refs_agarwal2021_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> x = skellam(0, 4.0, 10_000, np.random.default_rng(0))
    >>> x.dtype, round(float(x.var()), 1)
    (dtype('int64'), 4.0)
    """
    require(int(mu) == mu, "Skellam mean", "an integer", mu)
    half = _positive("var", var) / 2.0
    return int(mu) + np.int64(rng.poisson(half, size)) - np.int64(rng.poisson(half, size))


@fill
def discrete_gaussian(sigma: float, size: Size, rng: np.random.Generator) -> np.ndarray:
    """Discrete Gaussian ``N_Z(0, sigma^2)``, pmf proportional to ``exp(-x^2/(2 sigma^2))`` on the integers.

    Canonne-Kamath-Steinke rejection sampling from a discrete Laplace proposal with scale
    ``t = floor(sigma) + 1``; accepted proposals are i.i.d. with exactly the target law, so the first
    ``prod(size)`` accepted ones are returned. Proposals are drawn in vectorised rounds sized by the
    observed acceptance rate.

    Parameters
    ----------
    {{sigma_scale}}
    {{size_rng_int_draws}}

    {{raises_sigma}}

    {{refs_canonne2020}}

    Examples
    --------
    >>> import numpy as np
    >>> discrete_gaussian(2.0, (2, 3), np.random.default_rng(0)).shape
    (2, 3)
    """
    sigma = _positive("sigma", sigma)
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
        out[filled:filled + take] = got[:take]
        filled += take
    return out.reshape(shape) if size is not None else out[0]


@fill
def discrete_gaussian_pmf(sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """``(support, pmf)`` of ``N_Z(0, sigma^2)`` over every integer whose weight is a positive double.

    Beyond ``|x| ~ 38.6 sigma`` the weight ``exp(-x^2/(2 sigma^2))`` underflows to 0, far below any sampling
    error.

    Parameters
    ----------
    {{sigma_scale}}

    Returns
    -------
    support : numpy.ndarray
        The integers ``-h, ..., h`` (``int64``).
    pmf : numpy.ndarray
        Their probabilities, summing to 1.

    {{raises_sigma}}

    {{refs_canonne2020}}

    Examples
    --------
    >>> support, pmf = discrete_gaussian_pmf(1.0)
    >>> int(support[pmf.argmax()]), round(float(pmf.sum()), 12)
    (0, 1.0)
    """
    sigma = _positive("sigma", sigma)
    half = math.ceil(sigma * math.sqrt(2 * 745.2)) + 1
    support = np.arange(-half, half + 1)
    weights = np.exp(-(support.astype(float) ** 2) / (2.0 * sigma * sigma))
    return support, weights / weights.sum()


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
        Each user's scale ``sigma``, positive and finite.
    n : int
        The number of users, a non-negative integer.
    {{size}}
    {{rng}}

    Returns
    -------
    numpy.ndarray or numpy.int64
        ``int64`` totals of shape ``size``.

    Raises
    ------
    ConfigError
        If ``sigma`` is not positive and finite or ``n`` is not a non-negative integer.

    {{refs_kairouz2021_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> discrete_gaussian_sum(1.0, 50, 4, np.random.default_rng(0)).shape
    (4,)
    """
    sigma = _positive("sigma", sigma)
    require(not isinstance(n, bool) and isinstance(n, int | np.integer) and n >= 0, "n", "a non-negative integer", n)
    shape = _shape(size)
    count = int(np.prod(shape, dtype=np.int64))
    support, pmf = discrete_gaussian_pmf(sigma)
    if n <= support.size:
        totals = discrete_gaussian(sigma, (count, n), rng).sum(axis=1)
    else:
        totals = rng.multinomial(n, pmf, size=count) @ support
    return totals.astype(np.int64).reshape(shape)[()]


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

    {{refs_paper004}}

    Examples
    --------
    >>> discrete_laplace_tail(1.0, [0, 1, 2]).round(4)
    array([1.    , 0.5379, 0.1979])
    """
    beta = math.exp(-1.0 / scale)
    k = np.asarray(k, dtype=float)
    return np.where(k <= 0, 1.0, 2.0 * beta ** np.maximum(k, 1.0) / (1.0 + beta))


@fill
def discrete_laplace_radius(scale: float, p: float) -> float:
    """``b log(2/p)``: ``P[|Lap_Z(b)| > b log(2/p)] <= p`` (from the exact tail, Sec. 1.1).

    Parameters
    ----------
    scale : float
        The scale ``b``.
    {{tail_radius}}

    Examples
    --------
    >>> round(discrete_laplace_radius(2.0, 0.05), 4)
    7.3778
    """
    return scale * math.log(2.0 / _check_p(p))


@fill
def skellam_radius(var: float, p: float) -> float:
    """Proposition 1 of paper 004: ``|Sk(0, var)| <= 2 sigma sqrt(log(2/p)) + sqrt(2) log(2/p)`` w.p. 1-p.

    Parameters
    ----------
    var : float
        The variance ``sigma^2`` of the Skellam noise.
    {{tail_radius}}

    Examples
    --------
    >>> round(skellam_radius(4.0, 0.05), 4)
    12.8994
    """
    log_term = math.log(2.0 / _check_p(p))
    return 2.0 * math.sqrt(var) * math.sqrt(log_term) + math.sqrt(2.0) * log_term


@fill
def subgaussian_radius(var: float, p: float) -> float:
    """Lemma 6 of paper 004: a ``var``-sub-Gaussian X (e.g. a discrete Gaussian) has ``|X| <= sqrt(2 var log(2/p))``.

    Parameters
    ----------
    var : float
        The variance proxy.
    {{tail_radius}}

    Examples
    --------
    >>> round(subgaussian_radius(4.0, 0.05), 4)
    5.4324
    """
    return math.sqrt(2.0 * var * math.log(2.0 / _check_p(p)))


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
    {{tail_radius}}

    Examples
    --------
    >>> round(discrete_laplace_sum_radius(1.0, 100, 0.05), 4)
    57.8114
    """
    log_term = math.log(2.0 / _check_p(p))
    return scale * max(3.01 * math.sqrt(n * log_term), 4.0 * log_term)


@fill
def randomized_round(x: np.ndarray, g: int, rng: np.random.Generator) -> np.ndarray:
    """Encode each entry of ``x`` (in [0, 1]) with precision ``g``, as ``int64`` values in {0, ..., g}.

    ``floor(x g) + Bernoulli(frac)`` is drawn as ``floor(x g) + [U < frac]`` with one uniform per entry:
    unbiased (``E[xhat] = x g``) and off by less than one unit of ``1/g`` (Sec. 2.1 of paper 004's
    protocol). Rewards outside [0, 1] must be clipped first.

    Parameters
    ----------
    x : array_like of float
        The values, in [0, 1].
    g : int
        The precision, a positive integer.
    {{rng}}

    Returns
    -------
    numpy.ndarray
        ``int64`` encodings, of the shape of ``x``.

    Raises
    ------
    ConfigError
        If ``g`` is not a positive integer or a value lies outside [0, 1].

    {{refs_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> randomized_round(np.array([0.0, 0.5, 1.0]), 4, np.random.default_rng(0))
    array([0, 2, 4])
    """
    require(int(g) == g and g >= 1, "precision g", "a positive integer", g)
    x = np.asarray(x, dtype=float)
    if x.size and not (np.all(x >= 0.0) and np.all(x <= 1.0)):
        raise ConfigError("randomized rounding needs values in [0, 1]; clip rewards first")
    scaled = x * int(g)
    low = np.floor(scaled)
    up = rng.random(x.shape) < (scaled - low)
    return low.astype(np.int64) + up


@fill
def secure_sum(messages: np.ndarray, m: int) -> int:
    """``(sum of messages) mod m`` as a Python int: secure aggregation's ideal functionality.

    Any integer messages (negative ones too) are allowed. Exact integer arithmetic with intermediate
    reductions, so no overflow whatever the number of messages and ``m < 2^62``.

    Parameters
    ----------
    messages : array_like of int
        The users' messages.
    m : int
        The modulus, an integer in [2, 2^62).

    Returns
    -------
    int
        The sum modulo ``m``, in {0, ..., m-1}.

    Raises
    ------
    ConfigError
        If ``m`` is not an integer in [2, 2^62).

    {{refs_bonawitz2017_paper004}}

    Examples
    --------
    >>> secure_sum([5, -1, 7], 10)
    1
    """
    m = _check_modulus(m)
    y = np.mod(np.asarray(messages, dtype=np.int64).ravel(), m)
    chunk = max(1, (2**63 - 1) // m - 1)  # a chunk of residues sums to less than 2^63
    total = 0
    for start in range(0, y.size, chunk):
        total = (total + int(y[start:start + chunk].sum()) % m) % m
    return total


@fill
def complete_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``i < j`` of ``n`` users: the masking graph of pairwise masking.

    Parameters
    ----------
    n : int
        The number of users.

    Returns
    -------
    i, j : numpy.ndarray
        ``int64`` arrays of the pairs' first and second users.

    {{refs_bonawitz2017}}

    Examples
    --------
    >>> complete_pairs(3)
    (array([0, 0, 1]), array([1, 2, 2]))
    """
    i, j = np.triu_indices(n, k=1)
    return i.astype(np.int64), j.astype(np.int64)


@fill
def ring_pairs(n: int, degree: int) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(i, i + k mod n)`` for ``k = 1..degree``: each user masks with ``2 degree`` neighbours.

    Requires ``2 degree < n`` so that every unordered pair appears at most once.

    Parameters
    ----------
    n : int
        The number of users.
    degree : int
        Masks per user and direction, in [1, n/2).

    Returns
    -------
    i, j : numpy.ndarray
        ``int64`` arrays of the pairs' first and second users.

    Raises
    ------
    ConfigError
        If ``degree`` is outside [1, n/2).

    {{refs_bonawitz2017}}

    Examples
    --------
    >>> ring_pairs(5, 1)
    (array([0, 1, 2, 3, 4]), array([1, 2, 3, 4, 0]))
    """
    require(1 <= degree and 2 * degree < n, "ring masking's degree", f"in [1, n/2) for n = {n}", degree)
    i = np.repeat(np.arange(n, dtype=np.int64), degree)
    k = np.tile(np.arange(1, degree + 1, dtype=np.int64), n)
    return i, (i + k) % n


@fill
def masked_messages(messages: np.ndarray, m: int, rng: np.random.Generator,
                    pairs: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """What each user sends under pairwise masking: ``(y_i + sum_{(i,j)} r_ij - sum_{(j,i)} r_ji) mod m``.

    A simulation of secure aggregation with no real cryptography: :func:`secure_sum` of the result equals
    :func:`secure_sum` of ``messages`` exactly.

    Parameters
    ----------
    {{messages_modulus}}
    {{rng}}
    pairs : tuple of numpy.ndarray, optional
        The masking graph as ``(i, j)``; default :func:`complete_pairs`.

    Returns
    -------
    numpy.ndarray
        The masked ``int64`` messages, in {0, ..., m-1}.

    Raises
    ------
    ConfigError
        If ``m`` is not an integer in [2, 2^62), or a user holds so many masks that their sum could overflow.

    {{refs_bonawitz2017}}

    Examples
    --------
    >>> import numpy as np
    >>> secure_sum(masked_messages(np.array([3, 1, 4]), 11, np.random.default_rng(0)), 11)
    8
    """
    m = _check_modulus(m)
    y = np.mod(np.asarray(messages, dtype=np.int64).ravel(), m)
    i, j = complete_pairs(y.size) if pairs is None else pairs
    if i.size:
        per_user = max(np.bincount(i, minlength=y.size).max(), np.bincount(j, minlength=y.size).max())
        if int(per_user + 1) * m >= 2**63:
            raise ConfigError("too many masks per user for this modulus; use ring_pairs with a smaller degree")
    masks = rng.integers(0, m, size=i.size, dtype=np.int64)
    out = y.copy()
    np.add.at(out, i, masks)
    minus = np.zeros_like(out)
    np.add.at(minus, j, masks)
    return np.mod(np.mod(out, m) - np.mod(minus, m), m)


@fill
def split_and_mix(messages: np.ndarray, m: int, shares: int, rng: np.random.Generator) -> np.ndarray:
    """Split each ``y_i`` into ``shares`` uniform additive shares mod m and shuffle all of them together.

    The shuffle model's stand-in for secure aggregation: the shuffled multiset (length ``n * shares``) has
    the ideal sum.

    Parameters
    ----------
    {{messages_modulus}}
    shares : int
        Shares per message, a positive integer.
    {{rng}}

    Returns
    -------
    numpy.ndarray
        The ``n * shares`` shuffled ``int64`` shares.

    Raises
    ------
    ConfigError
        If ``m`` is not an integer in [2, 2^62) or ``shares`` is not a positive integer.

    {{refs_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> secure_sum(split_and_mix(np.array([3, 1, 4]), 11, 3, np.random.default_rng(0)), 11)
    8
    """
    m = _check_modulus(m)
    require(int(shares) == shares and shares >= 1, "shares", "a positive integer", shares)
    y = np.mod(np.asarray(messages, dtype=np.int64).ravel(), m)
    parts = rng.integers(0, m, size=(y.size, int(shares)), dtype=np.int64)
    last = y
    for col in parts[:, :-1].T:
        last = np.mod(last - col, m)
    parts[:, -1] = last
    return rng.permutation(parts.ravel())


@fill
def modulus(n: int, g: int, tau: int) -> int:
    """``m = n g + 2 tau + 1``: the smallest modulus for which the analyzer is exact on ``|noise| <= tau``.

    Parameters
    ----------
    {{batch_n_g_tau}}

    Returns
    -------
    int
        The modulus ``m``.

    {{refs_paper004}}

    Examples
    --------
    >>> modulus(10, 4, 3)
    47
    """
    return int(n) * int(g) + 2 * int(tau) + 1


@fill
def analyze(yhat: np.ndarray | int, n: int, g: int, tau: int, m: int) -> np.ndarray:
    """Private estimate ``z`` of ``sum_i x_i`` from secure-aggregation output(s) ``yhat`` in {0, ..., m-1}.

    With the underflow correction: ``(yhat - m)/g`` if ``yhat > n g + tau`` (the noisy sum was negative and
    wrapped), ``yhat/g`` otherwise. Whenever ``|sum_i eta_i| <= tau`` the result equals
    ``(sum xhat + sum eta)/g`` exactly (proof of Theorem 1 in paper 004); beyond that the wrap corrupts it.

    Parameters
    ----------
    yhat : int or array_like of int
        The aggregated values, in {0, ..., m-1}.
    {{batch_n_g_tau}}
    m : int
        The modulus, at least ``n g + 2 tau + 1``.

    Returns
    -------
    numpy.ndarray
        The estimates, of the shape of ``yhat``.

    Raises
    ------
    ConfigError
        If ``m`` is below ``n g + 2 tau + 1`` or a value lies outside {0, ..., m-1}.

    {{refs_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> analyze(np.array([5, 46]), n=10, g=4, tau=3, m=47)   # 46 is a wrapped -1
    array([ 1.25, -0.25])
    """
    if m < modulus(n, g, tau):   # no require here: it would build its message at every batch
        raise ConfigError(f"modulus m={m} is smaller than n g + 2 tau + 1 = {modulus(n, g, tau)}")
    y = np.asarray(yhat, dtype=np.int64)
    if np.any((y < 0) | (y >= m)):
        raise ConfigError("SecAgg outputs must lie in {0, ..., m-1}")
    wrapped = y > int(n) * int(g) + int(tau)
    return np.where(wrapped, (y - m) / g, y / g)


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

    {{refs_agarwal2021_paper004}}

    Examples
    --------
    >>> float(skellam_rdp(2, 1.0, 100.0))
    0.010225
    """
    a = np.asarray(alpha, dtype=float)
    d, s2 = float(sensitivity), float(variance)
    return a * d * d / (2 * s2) + np.minimum(((2 * a - 1) * d * d + 6 * d) / (4 * s2 * s2), 3 * d / (2 * s2))


@fill
def dist_rdp_se_rdp(alpha: np.ndarray | float, epsilon: float, scale: float,
                    n: int | None = None) -> np.ndarray:
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

    {{refs_paper004}}

    Examples
    --------
    >>> round(float(dist_rdp_se_rdp(2, 1.0, 10.0, 1)), 6)
    1.009
    """
    a = np.asarray(alpha, dtype=float)
    nn = 1.0 if n is None else float(n)
    e, s = float(epsilon), float(scale)
    return a * e * e / 2 + np.minimum((2 * a - 1) * e * e / (4 * s * s * nn) + 3 * e / (2 * s**3 * nn**1.5),
                                      3 * e / (2 * s * math.sqrt(nn)))


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
        If ``sigma`` is below 1/2.

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


@fill
def rdp_to_dp(rdp: Callable[[np.ndarray], np.ndarray] | np.ndarray, delta: float,
              orders: np.ndarray = DEFAULT_ORDERS) -> float:
    """Lemma 10 of paper 004: RDP at the given orders implies ``(eps', delta)``-DP.

    ``eps' = min_alpha eps(alpha) + log(1/(alpha delta))/(alpha - 1) + log(1 - 1/alpha)``.

    Parameters
    ----------
    rdp : callable or numpy.ndarray
        ``eps(alpha)``: a function of the orders, or its values aligned with ``orders``.
    {{rdp_delta_orders}}

    {{returns_eps}}

    Raises
    ------
    ConfigError
        If ``delta`` is outside (0, 1) or an order is at most 1.

    {{refs_canonne2020_paper004}}

    Examples
    --------
    >>> round(rdp_to_dp(lambda alpha: 0.5 * alpha, 1e-6), 4)   # 0.5-zCDP
    5.2224
    """
    delta = _check_delta(delta)
    a = np.asarray(orders, dtype=float)
    require(np.all(a > 1), "RDP orders", "> 1", a[a <= 1])
    values = np.asarray(rdp(a) if callable(rdp) else rdp, dtype=float)
    return float(np.min(values + np.log(1.0 / (a * delta)) / (a - 1) + np.log1p(-1.0 / a)))


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
        If ``delta`` is outside (0, 1).

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
    return min(simple, rdp_to_dp(lambda a: rho * a, delta, orders))


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

    {{refs_bun2016_paper004}}

    Examples
    --------
    >>> pure_dp_to_rdp(0.1, [2, 4])
    array([0.01, 0.02])
    """
    eps = np.asarray(epsilon, dtype=float)
    return np.minimum(eps, np.asarray(alpha, dtype=float) * eps**2 / 2)


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
        If ``delta_prime`` is outside (0, 1).

    {{refs_dwork2010_paper004}}

    Examples
    --------
    >>> round(advanced_composition_epsilon(1.0, 100, 1e-6), 6)
    0.009512
    """
    _check_delta(delta_prime)
    return epsilon_total / (2.0 * math.sqrt(2.0 * k * math.log(1.0 / delta_prime)))


@fill
def returning_users_dp(rdp: Callable[[np.ndarray], np.ndarray], batches: int, delta: float,
                       orders: np.ndarray = DEFAULT_ORDERS) -> float:
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
        If ``batches`` is not a positive integer, ``delta`` is outside (0, 1) or an order is at most 1.

    {{refs_paper004}}

    Examples
    --------
    >>> round(returning_users_dp(lambda alpha: 0.01 * alpha, 10, 1e-6), 4)
    2.143
    """
    require(int(batches) == batches and batches >= 1, "batches", "a positive integer", batches)
    return rdp_to_dp(lambda a: batches * np.asarray(rdp(a)), delta, orders)
