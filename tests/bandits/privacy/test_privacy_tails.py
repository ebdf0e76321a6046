"""Tail bounds used to set tau: the exact discrete Laplace tail, and each radius checked by simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from anonbandits.errors import ConfigError
from anonbandits.privacy import (
    discrete_gaussian,
    discrete_laplace,
    discrete_laplace_radius,
    discrete_laplace_sum_radius,
    discrete_laplace_tail,
    skellam,
    skellam_radius,
    subgaussian_radius,
)


@pytest.mark.parametrize("scale", [0.5, 4.0, 30.0])
def test_discrete_laplace_tail_is_exact(scale):
    k = np.arange(-2, 60)
    pmf = stats.dlaplace.pmf(np.arange(0, 20_000), 1 / scale)
    upper = np.cumsum(pmf[::-1])[::-1]  # P[X >= j] for j >= 0, summed from the far tail up
    ref = np.where(k <= 0, 1.0, 2 * upper[np.maximum(k, 0)])
    assert np.allclose(discrete_laplace_tail(scale, k), ref, rtol=1e-9, atol=0)


def exceed_fraction(x: np.ndarray, radius: float) -> float:
    return float(np.mean(np.abs(x) > radius))


P, N = 0.05, 20_000
SLACK = 3 * np.sqrt(P * (1 - P) / N)


def test_discrete_laplace_radius_holds():
    x = discrete_laplace(7.0, N, np.random.default_rng(0))
    assert exceed_fraction(x, discrete_laplace_radius(7.0, P)) <= P + SLACK


def test_skellam_radius_holds():
    x = skellam(0, 50.0, N, np.random.default_rng(1))
    assert exceed_fraction(x, skellam_radius(50.0, P)) <= P + SLACK


def test_subgaussian_radius_holds_for_discrete_gaussian():
    x = discrete_gaussian(6.0, N, np.random.default_rng(2))
    assert exceed_fraction(x, subgaussian_radius(36.0, P)) <= P + SLACK


def test_discrete_laplace_sum_radius_holds():
    rng = np.random.default_rng(3)
    x = discrete_laplace(3.0, (N, 40), rng).sum(axis=1)
    assert exceed_fraction(x, discrete_laplace_sum_radius(3.0, 40, P)) <= P + SLACK


def test_radius_rejects_bad_probability():
    with pytest.raises(ConfigError):
        skellam_radius(1.0, 0.0)
