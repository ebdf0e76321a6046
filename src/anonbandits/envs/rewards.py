"""Reward models, sampled per draw or as exact sums of many draws.

Models (the first three with support in [0, 1]; all of parameter ``mu``):

* ``bernoulli``: reward 1 with probability mu. A sum of n draws is one Binomial(n, mu) draw (exact).
* ``gaussian``: clipped Gaussian, ``clip(N(mu, sigma^2), 0, 1)``; its mean is not exactly mu near the ends,
  so pseudo-regret uses :func:`model_means`. Sums are drawn draw by draw (vectorised): no closed form.
* ``beta``: Beta(mu*k, (1-mu)*k) with concentration k (default 2); sums drawn draw by draw (vectorised).
* ``gaussian-unclipped``: ``N(mu, sigma^2)`` on the real line, mean exactly mu (Problem 2 of "Multi-Agent Best Arm
  Identification with Private Communications", ICML 2023, has means around 11). A sum of n draws is one
  ``N(n mu, n sigma^2)`` draw (exact).

The randomized-rounding encodings of "Distributed Differential Privacy in Multi-Armed Bandits" (ICLR 2023, Sec. 3: the
local randomizer's fixed-point encoding) are a law of the bounded models too: :func:`encoded_sums` draws the sum of a
block's encoded rewards. Every function takes an explicit ``numpy.random.Generator``.
"""

from __future__ import annotations

import numbers

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.core.limits import MAX_REWARD_DRAWS, check_size
from anonbandits.errors import ConfigError, _shown, require
from anonbandits.validation import FINITE_ARRAY, POSITIVE_FINITE, RNG, SIZE, Rule, array_of, checks

REWARD_MODELS = ("bernoulli", "gaussian", "beta", "gaussian-unclipped")
#: The models whose rewards lie in [0, 1] (what a privacy mechanism's sensitivity and the encodings assume).
BOUNDED_MODELS = ("bernoulli", "gaussian", "beta")
GAUSSIAN_SIGMA = 0.5
BETA_CONCENTRATION = 2.0
#: the ``model`` argument: a name of :data:`REWARD_MODELS`
MODEL = Rule(lambda v: isinstance(v, str) and v in REWARD_MODELS, f"one of {', '.join(REWARD_MODELS)}")
#: how many rewards each sum adds up: non-negative integers (a number or an array of any shape)
COUNT_ARRAY = array_of("iu", "a non-negative integer or an array of them", ndim=None, low=0)


@checks(
    text=Rule(
        lambda v: isinstance(v, str | list | tuple) and _arm_means(v).size >= 2,
        "at least two arm means in [0, 1] (comma-separated text or a list)",
    )
)
def parse_means(text: str | list | tuple) -> np.ndarray:
    """The arm means written ``"0.9,0.8,0.7"`` (or given as a sequence), as an array.

    Parameters
    ----------
    text : str or list or tuple
        Comma-separated numbers, or a sequence of numbers: at least two, each in [0, 1].

    Returns
    -------
    numpy.ndarray
        (K,) float array of the means.

    Raises
    ------
    ConfigError
        For ``text`` that is neither a str nor a list or tuple, items that are not numbers, fewer than two arms,
        or a mean outside [0, 1] (called directly, the message names ``text``; a registry run's messages name
        the means).

    References
    ----------
    Sajed, Sheffet, "An Optimal Private Stochastic-MAB Algorithm Based on an Optimal Private Stopping Rule",
    ICML 2019 (DP-SE, which takes its instance as arm means).

    Examples
    --------
    >>> parse_means("0.9, 0.5,0.1").tolist()
    [0.9, 0.5, 0.1]
    >>> parse_means("0.9,1.5")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: text must be at least two arm means in [0, 1] ..., got '0.9,1.5'
    """
    return _arm_means(text)


def _arm_means(text: str | list | tuple) -> np.ndarray:
    """:func:`parse_means`'s body: its messages name the means (a registry run's ``--means``, trusted)."""
    if not isinstance(text, str | list | tuple):
        raise ConfigError(f"means must be comma-separated numbers or a list of them, got {_shown(text)}")
    items = text.split(",") if isinstance(text, str) else list(text)
    try:
        means = np.array([_real(x) for x in items], dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"means must be comma-separated numbers, got {_shown(text)}") from None
    if means.size < 2:
        raise ConfigError(f"need at least two arms, got means {_shown(text)}")
    bad = np.flatnonzero(~((means >= 0) & (means <= 1)))
    if bad.size:
        raise ConfigError(f"means: the mean of arm {bad[0]} is {means[bad[0]]}, outside [0, 1]")
    return means


def _real(item: object) -> float:
    """One arm mean of :func:`parse_means`: text or a real number (a bool, a complex or a list is not one)."""
    if isinstance(item, bool | np.bool_) or not isinstance(item, str | numbers.Real):
        raise TypeError("not a mean")
    return float(item)


def model_means(model: str, mu: np.ndarray, sigma: float = GAUSSIAN_SIGMA) -> np.ndarray:
    """The true expected reward of each arm under ``model`` (differs from ``mu`` only for clipping)."""
    require(model in REWARD_MODELS, "reward model", f"one of {', '.join(REWARD_MODELS)}", model)
    mu = np.asarray(mu, dtype=float)
    if model != "gaussian":
        return mu
    # The normal cdf is scipy.special's ndtr, imported here: scipy.stats.norm computes with the same ndtr and
    # pdf expression, but importing scipy.stats costs a second of every process's start.
    from scipy.special import ndtr as cdf

    def pdf(x: np.ndarray) -> np.ndarray:
        return np.exp(-(x**2) / 2.0) / np.sqrt(2 * np.pi)

    # E[clip(X, 0, 1)] for X ~ N(mu, sigma^2): integrate the clipped identity against the normal law.
    a, b = (0 - mu) / sigma, (1 - mu) / sigma
    inner = mu * (cdf(b) - cdf(a)) + sigma * (pdf(a) - pdf(b))
    return inner + (1 - cdf(b))


@fill
def bernoulli_reward(u, mu):
    """Bernoulli rewards from uniform draws: 1 where ``u < mu``, else 0 (scalars or arrays, float).

    The one form of a Bernoulli draw: :func:`draw_rewards` applies it to arrays of uniforms, and the compiled
    engines (MASE's and the decentralized family's loops) to one uniform at a time, through
    :mod:`anonbandits.channels.compiled`, so every Bernoulli reward is drawn the same way from its generator.

    Parameters
    ----------
    u : float or numpy.ndarray
        Uniform draws in [0, 1) (``rng.random()``).
    mu : float or numpy.ndarray
        The means, in [0, 1].

    Returns
    -------
    float or numpy.ndarray
        1.0 where ``u < mu``, else 0.0.

    {{refs_paper003}}

    Examples
    --------
    >>> bernoulli_reward(np.array([0.2, 0.7]), 0.5).tolist()
    [1.0, 0.0]
    """
    return (u < mu) * 1.0


@checks(model=MODEL, mu=FINITE_ARRAY, rng=RNG, size=SIZE, sigma=POSITIVE_FINITE)
def draw_rewards(
    model: str, mu: np.ndarray, rng: np.random.Generator, size=None, sigma: float = GAUSSIAN_SIGMA
) -> np.ndarray:
    """One reward per entry of ``mu`` (broadcast to ``size`` if given).

    Parameters
    ----------
    model : str
        One of ``REWARD_MODELS``: ``"bernoulli"``, ``"gaussian"`` (clipped to [0, 1]), ``"beta"`` or
        ``"gaussian-unclipped"``.
    mu : array_like
        The arms' parameters (means of the Bernoulli, Beta and unclipped Gaussian models; centres of the
        clipped Gaussian).
    rng : numpy.random.Generator
        Source of randomness.
    size : int or tuple of int, optional
        Shape of the output, which ``mu`` broadcasts to; ``None`` (default): the shape of ``mu``.
    sigma : float, optional
        Standard deviation of the Gaussian models; default 0.5.

    Returns
    -------
    numpy.ndarray
        Float rewards, one per entry.

    Raises
    ------
    ConfigError
        For an unknown model, ``mu`` that is not a number or an array of finite numbers, an ``rng`` that is not
        a generator, a ``size`` that is not a shape (or above ``MAX_DRAWS`` draws) or that ``mu`` does not
        broadcast to, or a ``sigma`` that is not a finite positive number.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm Identification with Private Communications", ICML 2023
    (the unclipped Gaussian rewards of its Problem 2).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> draw_rewards("bernoulli", [0.0, 1.0], rng).tolist()
    [0.0, 1.0]
    >>> draw_rewards("gaussian", 0.5, rng, size=(2, 3)).shape
    (2, 3)
    """
    require(model in REWARD_MODELS, "reward model", f"one of {', '.join(REWARD_MODELS)}", model)
    mu = np.asarray(mu, dtype=float)
    shape = mu.shape if size is None else ((size,) if np.ndim(size) == 0 else tuple(size))
    if size is not None and mu.ndim and mu.shape != shape and not _broadcasts(mu.shape, shape):
        raise ConfigError(f"size must be a shape mu {mu.shape} broadcasts to, got {_shown(size)}")
    if model == "bernoulli":
        return bernoulli_reward(rng.random(shape), mu)
    if model == "gaussian":
        return np.clip(rng.normal(mu, sigma, shape), 0.0, 1.0)
    if model == "gaussian-unclipped":
        return rng.normal(mu, sigma, shape)
    m = np.clip(mu, 1e-9, 1 - 1e-9)
    return rng.beta(m * BETA_CONCENTRATION, (1 - m) * BETA_CONCENTRATION, shape)


@checks(model=MODEL, mu=FINITE_ARRAY, counts=COUNT_ARRAY, rng=RNG, sigma=POSITIVE_FINITE)
def sum_rewards(
    model: str, mu: np.ndarray, counts: np.ndarray, rng: np.random.Generator, sigma: float = GAUSSIAN_SIGMA
) -> np.ndarray:
    """Sum of ``counts[k]`` independent rewards of parameter ``mu[k]``, for every k (arrays broadcast).

    Bernoulli sums are a single Binomial draw each (exact, O(1) per entry whatever the count); the other
    models draw every reward, vectorised across entries, except the unclipped Gaussian's: one ``N(n mu, n sigma^2)``
    draw per entry (exact).

    Parameters
    ----------
    model : str
        One of ``REWARD_MODELS`` (as in :func:`draw_rewards`).
    mu : array_like
        The arms' parameters.
    counts : array_like
        Non-negative integers: how many rewards each sum adds up.
    rng : numpy.random.Generator
        Source of randomness.
    sigma : float, optional
        Standard deviation of the Gaussian models; default 0.5.

    Returns
    -------
    numpy.ndarray
        Float sums, of the broadcast shape of ``mu`` and ``counts`` (0 where the count is 0).

    Raises
    ------
    ConfigError
        (A ``ValueError``.) For an unknown model, ``mu`` that is not a number or an array of finite numbers (in
        [0, 1] for the Bernoulli model), counts that are not non-negative integers (at most 2^62 each), ``mu``
        and ``counts`` that do not broadcast, an ``rng`` that is not a generator, a ``sigma`` that is not a
        finite positive number, or (models drawn one by one) more rewards than
        :data:`~anonbandits.core.limits.MAX_REWARD_DRAWS` (10^8) without an enclosing
        :func:`~anonbandits.core.limits.allowing_large`.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (a group's
    sum is all an anonymous learner observes).

    Chowdhury, Zhou, "Distributed Differential Privacy in Multi-Armed Bandits", ICLR 2023.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> sum_rewards("bernoulli", [0.0, 1.0, 0.5], [5, 7, 0], rng).tolist()
    [0.0, 7.0, 0.0]
    >>> sum_rewards("gaussian", 0.5, [[3], [4]], rng).shape
    (2, 1)
    """
    mu, counts = np.asarray(mu, dtype=float), np.asarray(counts, dtype=np.int64)
    try:
        mu, counts = np.broadcast_arrays(mu, counts)
    except ValueError:
        raise ConfigError(f"mu {mu.shape} and counts {counts.shape} must broadcast to one shape") from None
    if np.any(counts < 0):
        raise ConfigError("counts must be non-negative")
    if model == "bernoulli":
        try:
            return rng.binomial(counts, mu).astype(float)
        except ValueError:  # numpy's "p < 0, p > 1 or p contains NaNs": no Binomial(n, mu) then
            raise ConfigError(f"mu must lie in [0, 1] for the bernoulli model, got {_shown(mu)}") from None
    if model == "gaussian-unclipped":
        return rng.normal(counts * mu, sigma * np.sqrt(counts))
    flat_n = counts.ravel()
    check_size(
        "rewards drawn (the counts' sum)",
        int(flat_n.sum()),
        MAX_REWARD_DRAWS,
        "MAX_REWARD_DRAWS",
        f"rewards of the {model} model drawn one by one",
    )
    draws = draw_rewards(model, np.repeat(mu.ravel(), flat_n), rng, sigma=sigma)
    sums = np.zeros(flat_n.size)
    nz = flat_n > 0
    starts = np.concatenate(([0], np.cumsum(flat_n)[:-1]))[nz]
    if starts.size:
        sums[nz] = np.add.reduceat(draws, starts)
    return sums.reshape(counts.shape)


def _broadcasts(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``target``."""
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


def encoding_pmf(model: str, mu: float, g: int, sigma: float) -> np.ndarray:
    """pmf of ``xhat = floor(X g) + Bernoulli(frac(X g))`` on {0, ..., g} for one reward X of the arm (a model of
    :data:`BOUNDED_MODELS`).

    The ``xhat`` of one arm are i.i.d. on {0, ..., g} with pmf ``q_k = E[max(0, 1 - |X g - k|)]`` (the randomized
    rounding "tent"), so the sum over a block of ``n`` users is ``sum_k k C_k`` with ``C ~ Multinomial(n, q)``: one
    draw per block, exact in law (up to floating-point evaluation of ``q``), at a cost ``O(g)`` instead of
    ``O(n)``. For Bernoulli rewards ``xhat = g x`` and the sum is ``g Binomial(n, mu)``.
    """
    require(model in BOUNDED_MODELS, "reward model of an encoding", f"one of {', '.join(BOUNDED_MODELS)}", model)
    q = np.zeros(g + 1)
    if model == "bernoulli":
        q[0], q[g] = 1.0 - mu, mu
        return q
    from scipy import special, stats  # here: importing the package must not load scipy.stats

    edges = np.arange(g + 1) / g
    if model == "gaussian":
        z = (edges - mu) / sigma
        cdf, pdf = special.ndtr(z), np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)
        mass = np.diff(cdf)
        # integral over cell j of (x g - j) dN(mu, sigma^2) = g [(mu - j/g) P_j + sigma (pdf(z_j) - pdf(z_j+1))]
        upper = g * ((mu - edges[:-1]) * mass + sigma * (pdf[:-1] - pdf[1:]))
        q[0], q[g] = cdf[0], 1.0 - cdf[-1]  # clipped at 0 -> xhat = 0, clipped at 1 -> xhat = g
    else:  # beta, parametrised as in anonbandits.envs.rewards
        m = min(max(mu, 1e-9), 1 - 1e-9)
        a, b = m * BETA_CONCENTRATION, (1 - m) * BETA_CONCENTRATION
        cdf = stats.beta.cdf(edges, a, b)
        first = m * stats.beta.cdf(edges, a + 1, b)  # integral of x dF from 0 to the edge
        mass = np.diff(cdf)
        upper = g * np.diff(first) - np.arange(g) * mass
    # spread each cell [j/g, (j+1)/g] onto its two end points: (1 - u) to j and u to j + 1, where u = x g - j
    # and upper[j] is the integral of u over cell j
    q[:-1] += mass - upper
    q[1:] += upper
    q = np.clip(q, 0.0, None)
    return q / q.sum()


def encoded_sums(model: str, mus: np.ndarray, g: int, n: int, rng: np.random.Generator, sigma: float) -> np.ndarray:
    """For each arm parameter in ``mus``: the sum of the encodings of ``n`` fresh rewards (exact law)."""
    mus = np.asarray(mus, dtype=float)
    if model == "bernoulli":
        return g * rng.binomial(n, mus).astype(np.int64)
    values = np.arange(g + 1, dtype=np.int64)
    return np.array(
        [int(rng.multinomial(n, encoding_pmf(model, float(mu), g, sigma)) @ values) for mu in mus], dtype=np.int64
    )
