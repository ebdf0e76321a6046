"""Users' rewards and their fixed-point encodings, per user or as exact block sums.

Rewards follow :mod:`anonbandits.envs.rewards` (Bernoulli, clipped Gaussian, Beta; each user's reward is
``draw_rewards(model, ...)``), with the clipped Gaussian's standard deviation a parameter (paper 004: 0.1).

The protocol only ever sees a block's rewards through the sum of their encodings ``xhat_i = floor(x_i g) +
Bernoulli(frac(x_i g))`` (spec distributed-dp.md, Sec. 2.1). The ``xhat_i`` of one arm are i.i.d. on
{0, ..., g} with pmf ``q_k = E[max(0, 1 - |X g - k|)]`` (the randomized-rounding "tent"), so the sum over a
block of ``n`` users is ``sum_k k C_k`` with ``C ~ Multinomial(n, q)``: one draw per block, exact in law
(up to floating-point evaluation of ``q``), at a cost ``O(g)`` instead of ``O(n)``. For Bernoulli rewards
``xhat = g x`` and the sum is ``g Binomial(n, mu)``.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from anonbandits.envs.rewards import BETA_CONCENTRATION


def encoding_pmf(model: str, mu: float, g: int, sigma: float) -> np.ndarray:
    """pmf of ``xhat = floor(X g) + Bernoulli(frac(X g))`` on {0, ..., g} for one reward X of the arm."""
    q = np.zeros(g + 1)
    if model == "bernoulli":
        q[0], q[g] = 1.0 - mu, mu
        return q
    edges = np.arange(g + 1) / g
    if model == "gaussian":
        z = (edges - mu) / sigma
        cdf, pdf = special.ndtr(z), np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)
        mass = np.diff(cdf)
        # integral over cell j of (x g - j) dN(mu, sigma^2) = g [(mu - j/g) P_j + sigma (pdf(z_j) - pdf(z_j+1))]
        upper = g * ((mu - edges[:-1]) * mass + sigma * (pdf[:-1] - pdf[1:]))
        q[0], q[g] = cdf[0], 1.0 - cdf[-1]       # clipped at 0 -> xhat = 0, clipped at 1 -> xhat = g
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


def encoded_sums(model: str, mus: np.ndarray, g: int, n: int, rng: np.random.Generator,
                 sigma: float) -> np.ndarray:
    """For each arm parameter in ``mus``: the sum of the encodings of ``n`` fresh rewards (exact law)."""
    mus = np.asarray(mus, dtype=float)
    if model == "bernoulli":
        return g * rng.binomial(n, mus).astype(np.int64)
    values = np.arange(g + 1, dtype=np.int64)
    return np.array([int(rng.multinomial(n, encoding_pmf(model, float(mu), g, sigma)) @ values) for mu in mus],
                    dtype=np.int64)
