"""Plain per-user Python loop for paper 004's private batched successive elimination.

Paper: Chowdhury and Zhou, *Distributed Differential Privacy in Multi-Armed Bandits* (ICLR 2023),
Algorithm 1 with the distributed pure-DP protocol of Section 4 (Dist-DP-SE): each user's reward is randomly
rounded to precision g, gets her own Polya-difference share of the noise, and the secure aggregate modulo m is
read by the analyzer. One Python iteration per user; ``benchmarks/distributed_dp_speed.py`` times it against
:mod:`anonbandits.dp.distributed`.
"""

from __future__ import annotations

import math

import numpy as np

from anonbandits.privacy import analyze
from anonbandits.privacy.protocols import Protocol
from anonbandits.reference import oracle


@oracle
def per_round_dist_dp_se(
    means: np.ndarray,
    eps: float,
    horizon: int,
    rng: np.random.Generator,
    base: int = 2,
    p: float = 0.1,
    p_tau: float = 0.1,
) -> float:
    """Dist-DP-SE with Bernoulli rewards, one Python iteration per user; returns the pseudo-regret."""
    proto = Protocol(eps, p_tau)
    gaps, active = means.max() - means, list(range(means.size))
    regret, t, b = 0.0, 0, 0
    while t < horizon:
        if len(active) == 1:
            regret += gaps[active[0]] * (horizon - t)
            break
        b += 1
        length = base**b
        bp = proto.batch_params(length)
        beta = math.exp(-eps / bp.g)
        odds = beta / (1 - beta)
        muhat = []
        for arm in active:
            secure = 0
            for _ in range(length):
                if t == horizon:
                    return regret
                x = 1.0 if rng.random() < means[arm] else 0.0
                scaled = x * bp.g
                xhat = math.floor(scaled) + (1 if rng.random() < scaled - math.floor(scaled) else 0)
                eta = int(rng.poisson(rng.gamma(1 / length, odds))) - int(rng.poisson(rng.gamma(1 / length, odds)))
                secure = (secure + (xhat + eta) % bp.m) % bp.m
                regret += gaps[arm]
                t += 1
            muhat.append(float(analyze(secure, bp.n, bp.g, bp.tau, bp.m)) / length)
        radius = proto.radius(length, len(active), b, p)
        best_lcb = max(m - radius for m in muhat)
        active = [a for a, m in zip(active, muhat, strict=True) if m + radius >= best_lcb]
    return regret
