"""Tail bounds of the privacy noises (spec distributed-dp.md, Secs. 1.1-1.5).

Each ``*_radius`` returns a ``v`` with ``P[|X| > v] <= p`` for the stated law; the protocols set their
accuracy parameter ``tau = ceil(radius)`` from these, and the tests check them by simulation.
"""

from __future__ import annotations

import math

import numpy as np

from anonbandits.errors import ConfigError


def _check_p(p: float) -> float:
    if not 0.0 < p <= 1.0:
        raise ConfigError(f"tail probability p must be in (0, 1], got {p!r}")
    return float(p)


def discrete_laplace_tail(scale: float, k: np.ndarray | int) -> np.ndarray:
    """Exact ``P[|X| >= k]`` for ``X ~ Lap_Z(scale)``: ``2 beta^k/(1+beta)`` for k >= 1, and 1 for k <= 0."""
    beta = math.exp(-1.0 / scale)
    k = np.asarray(k, dtype=float)
    return np.where(k <= 0, 1.0, 2.0 * beta ** np.maximum(k, 1.0) / (1.0 + beta))


def discrete_laplace_radius(scale: float, p: float) -> float:
    """``b log(2/p)``: ``P[|Lap_Z(b)| > b log(2/p)] <= p`` (from the exact tail, Sec. 1.1)."""
    return scale * math.log(2.0 / _check_p(p))


def skellam_radius(var: float, p: float) -> float:
    """Proposition 1 of paper 004: ``|Sk(0, var)| <= 2 sigma sqrt(log(2/p)) + sqrt(2) log(2/p)`` w.p. 1-p."""
    log_term = math.log(2.0 / _check_p(p))
    return 2.0 * math.sqrt(var) * math.sqrt(log_term) + math.sqrt(2.0) * log_term


def subgaussian_radius(var: float, p: float) -> float:
    """Lemma 6: a ``var``-sub-Gaussian X (e.g. a discrete Gaussian) has ``|X| <= sqrt(2 var log(2/p))``."""
    return math.sqrt(2.0 * var * math.log(2.0 / _check_p(p)))


def discrete_laplace_sum_radius(scale: float, n: int, p: float) -> float:
    """Sum of ``n`` i.i.d. ``Lap_Z(B)``, B >= 1: ``B max(3.01 sqrt(n log(2/p)), 4 log(2/p))`` (Lemma 5, derived).

    From ``Lap_Z(B)`` being ``(4.52 B^2, 2B)``-sub-exponential and Lemma 9 (spec Sec. 1.5).
    """
    log_term = math.log(2.0 / _check_p(p))
    return scale * max(3.01 * math.sqrt(n * log_term), 4.0 * log_term)
