"""Reward models, sampled per draw or as exact sums of many draws.

Models (all with support in [0, 1] and mean ``mu``):

* ``bernoulli``: reward 1 with probability mu. A sum of n draws is one Binomial(n, mu) draw (exact).
* ``gaussian``: clipped Gaussian, ``clip(N(mu, sigma^2), 0, 1)``; its mean is not exactly mu near the ends,
  so pseudo-regret uses :func:`model_means`. Sums are drawn draw by draw (vectorised): no closed form.
* ``beta``: Beta(mu*k, (1-mu)*k) with concentration k (default 2); sums drawn draw by draw (vectorised).

Every function takes an explicit ``numpy.random.Generator``.
"""

from __future__ import annotations

import numpy as np

from anonbandits.errors import ConfigError, require

REWARD_MODELS = ("bernoulli", "gaussian", "beta")
GAUSSIAN_SIGMA = 0.5
BETA_CONCENTRATION = 2.0


def parse_means(text: str | list | tuple) -> np.ndarray:
    """``"0.9,0.8,0.7"`` (or a sequence) -> array of means, each in [0, 1]; :class:`ConfigError` otherwise."""
    items = text.split(",") if isinstance(text, str) else list(text)
    try:
        means = np.array([float(x) for x in items], dtype=float)
    except ValueError:
        raise ConfigError(f"means must be comma-separated numbers, got {text!r}") from None
    if means.size < 2:
        raise ConfigError(f"need at least two arms, got means {text!r}")
    bad = np.flatnonzero(~((means >= 0) & (means <= 1)))
    if bad.size:
        raise ConfigError(f"mean of arm {bad[0]} is {means[bad[0]]}, outside [0, 1]")
    return means


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
        return np.exp(-x**2 / 2.0) / np.sqrt(2 * np.pi)

    # E[clip(X, 0, 1)] for X ~ N(mu, sigma^2): integrate the clipped identity against the normal law.
    a, b = (0 - mu) / sigma, (1 - mu) / sigma
    inner = mu * (cdf(b) - cdf(a)) + sigma * (pdf(a) - pdf(b))
    return inner + (1 - cdf(b))


def draw_rewards(model: str, mu: np.ndarray, rng: np.random.Generator, size=None,
                 sigma: float = GAUSSIAN_SIGMA) -> np.ndarray:
    """One reward per entry of ``mu`` (broadcast to ``size`` if given); ``sigma``: the Gaussian's std."""
    require(model in REWARD_MODELS, "reward model", f"one of {', '.join(REWARD_MODELS)}", model)
    mu = np.asarray(mu, dtype=float)
    shape = mu.shape if size is None else size
    if model == "bernoulli":
        return (rng.random(shape) < mu).astype(float)
    if model == "gaussian":
        return np.clip(rng.normal(mu, sigma, shape), 0.0, 1.0)
    m = np.clip(mu, 1e-9, 1 - 1e-9)
    return rng.beta(m * BETA_CONCENTRATION, (1 - m) * BETA_CONCENTRATION, shape)


def sum_rewards(model: str, mu: np.ndarray, counts: np.ndarray, rng: np.random.Generator,
                sigma: float = GAUSSIAN_SIGMA) -> np.ndarray:
    """Sum of ``counts[k]`` independent rewards of mean ``mu[k]``, for every k (arrays broadcast); ``sigma``:
    the Gaussian's std.

    Bernoulli sums are a single Binomial draw each (exact, O(1) per entry whatever the count); the other
    models draw every reward, vectorised across entries.
    """
    mu, counts = np.broadcast_arrays(np.asarray(mu, dtype=float), np.asarray(counts, dtype=np.int64))
    if np.any(counts < 0):
        raise ValueError("counts must be non-negative")
    if model == "bernoulli":
        return rng.binomial(counts, mu).astype(float)
    flat_n = counts.ravel()
    draws = draw_rewards(model, np.repeat(mu.ravel(), flat_n), rng, sigma=sigma)
    sums = np.zeros(flat_n.size)
    nz = flat_n > 0
    starts = np.concatenate(([0], np.cumsum(flat_n)[:-1]))[nz]
    if starts.size:
        sums[nz] = np.add.reduceat(draws, starts)
    return sums.reshape(counts.shape)
