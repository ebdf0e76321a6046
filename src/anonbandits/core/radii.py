"""Every confidence radius of the bandit layer, each named after the paper equation it implements.

The elimination rules of :mod:`anonbandits.core.elimination` compare sample means with these radii; no other
module of the bandit layer computes one.

* BaSE (Gao, Han, Ren, Zhou, "Batched Multi-armed Bandits Problem", NeurIPS 2019), run per user by
  Algorithm 1 of "Anonymous Bandits for Multi-User Systems" (Esfandiari, Mirrokni, Schneider, NeurIPS 2022;
  paper 000, Sections 2.2 and 3.3): :func:`base_log_radius`, :func:`base_gao_radius`;
* DP-SE (Sajed and Sheffet, ICML 2019), the baseline of "Near-Optimal Algorithms for Private Online Learning
  in a Stochastic Environment" (Hu, Huang, Mehta; paper 001, Section 6) and of paper 004:
  :func:`dpse_threshold`;
* private batch-based successive elimination ("Distributed Differential Privacy in Multi-Armed Bandits",
  Chowdhury and Zhou, ICLR 2023; paper 004): :func:`lemma2_radius` (Lemma 2) and :func:`lemma5_radius`
  (the local model's radius with the derived constant of Lemma 5).
"""

from __future__ import annotations

import math

import numpy as np


def base_log_radius(gamma: float, sigma2: float, horizon: int, n_arms: int, tau: np.ndarray) -> np.ndarray:
    """BaSE radius ``r = sqrt(gamma sigma2 log(T K) / tau)`` (paper 000 Sec. 2.2; Gao et al.'s analysis).

    ``tau`` holds each learner's fewest samples on an active arm; ``tau = 0`` gives an infinite radius. With
    this form a fixed optimal arm survives one comparison with probability at least ``1 - (TK)^(-gamma/4)``
    (sub-Gaussian tail of a difference of two means), hence BaSE's default gamma = 4.
    """
    with np.errstate(divide="ignore"):
        return np.sqrt(gamma * sigma2 * np.log(horizon * n_arms) / np.asarray(tau, dtype=float))


def base_gao_radius(gamma: float, sigma2: float, horizon: int, n_arms: int, t_m: float) -> float:
    """BaSE radius ``r = sqrt(gamma sigma2 K log(T K / t_m) / t_m)`` after grid point ``t_m`` (> 0).

    The shape used by Gao et al.'s public code, ``gamma_code * sqrt(K log(TK/t_m) / t_m)``, i.e.
    ``gamma = gamma_code^2`` for ``sigma2 = 1`` (paper 000's BaSE, spec Sec. 5.1).
    """
    return float(np.sqrt(gamma * sigma2 * n_arms * np.log(horizon * n_arms / t_m) / t_m))


def dpse_threshold(active: int, epoch: int, length: int, beta: float, epsilon: float = math.inf) -> float:
    """DP-SE's elimination width ``2 (h_e + c_e)`` (Sajed and Sheffet, Algorithm 1; paper 001 Sec. 6).

    ``h_e = sqrt(ln(8 s e^2/beta) / (2 R_e))`` and ``c_e = ln(4 s e^2/beta) / (R_e eps)`` with ``s`` active
    arms at the start of epoch ``e`` of ``R_e = length`` pulls per arm; ``c_e = 0`` when ``eps = inf`` (SE).
    An arm whose noisy mean is further than this below the best one is eliminated.
    """
    h = math.sqrt(math.log(8 * active * epoch**2 / beta) / (2 * length))
    c = math.log(4 * active * epoch**2 / beta) / (length * epsilon) if math.isfinite(epsilon) else 0.0
    return 2 * (h + c)


def lemma2_radius(length: int, active: int, batch: int, p: float, sigma: float, h: float) -> float:
    """``beta(b)`` of Lemma 2 of paper 004 (spec distributed-dp.md Sec. 2.4) for batch length ``l(b)``.

    ``beta(b) = sqrt(ln(4 s b^2/p) / (2 l)) + sigma sqrt(ln(2 s b^2/p)) / l + h ln(2 s b^2/p) / l``, where
    ``(sigma, h)`` are the protocol's noise-tail constants of Assumption 1 and ``s`` the active arms.
    """
    log4 = math.log(4 * active * batch * batch / p)
    log2 = math.log(2 * active * batch * batch / p)
    return math.sqrt(log4 / (2 * length)) + sigma * math.sqrt(log2) / length + h * log2 / length


def lemma5_radius(length: int, active: int, batch: int, p: float, epsilon: float) -> float:
    """``beta(b)`` of LDP-SE (paper 004 Sec. 3.6): Lemma 2's statistical term plus the local noise's tail.

    The total of ``l`` users' ``Lap_Z(g/eps)`` noises is bounded with the derived constant of Lemma 5:
    ``(sqrt 2/eps) sqrt(L2)/l + (1/eps) max(3.01 sqrt(L2/l), 4 L2/l)`` with ``L2 = ln(2 s b^2/p)``.
    """
    log4 = math.log(4 * active * batch * batch / p)
    log2 = math.log(2 * active * batch * batch / p)
    return (math.sqrt(log4 / (2 * length)) + (math.sqrt(2.0) / epsilon) * math.sqrt(log2) / length
            + (1.0 / epsilon) * max(3.01 * math.sqrt(log2 / length), 4.0 * log2 / length))
