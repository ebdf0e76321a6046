"""Randomized rounding and the analyzer's underflow correction, including SecAgg round trips that wrap."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from anonbandits.errors import ConfigError
from anonbandits.privacy import analyze, discrete_laplace, modulus, randomized_round, secure_sum


def test_randomized_round_is_unbiased_and_adjacent():
    rng = np.random.default_rng(0)
    x, g, reps = 0.37, 5, 20_000
    xhat = randomized_round(np.full(reps, x), g, rng)
    assert set(np.unique(xhat).tolist()) == {1, 2}
    # P[xhat = 2] = frac(0.37 * 5) = 0.85 exactly
    assert stats.binomtest(int((xhat == 2).sum()), reps, 0.85).pvalue > 1e-3


def test_randomized_round_endpoints_and_grid_points_are_exact():
    rng = np.random.default_rng(1)
    x = np.array([0.0, 1.0, 0.25, 0.5, 0.75])
    assert np.array_equal(randomized_round(x, 4, rng), [0, 4, 1, 2, 3])


@pytest.mark.parametrize("bad", [np.array([1.2]), np.array([-0.1])])
def test_randomized_round_rejects_values_outside_unit_interval(bad):
    with pytest.raises(ConfigError):
        randomized_round(bad, 4, np.random.default_rng(0))


def test_analyzer_is_exact_on_the_whole_range_and_only_there():
    """For every noisy sum S in [-tau, n g + tau], analyze(S mod m) = S/g (proof of Theorem 1)."""
    n, g, tau = 7, 3, 5
    m = modulus(n, g, tau)
    s = np.arange(-tau, n * g + tau + 1)
    assert np.array_equal(analyze(np.mod(s, m), n, g, tau, m), s / g)
    outside = np.array([-tau - 1, n * g + tau + 1])
    assert not np.any(analyze(np.mod(outside, m), n, g, tau, m) == outside / g)


def test_secagg_round_trip_recovers_a_negative_noisy_sum():
    """Users with zero rewards and noise summing below zero: SecAgg wraps, the analyzer undoes it."""
    n, g, tau = 50, 4, 120
    m = modulus(n, g, tau)
    xhat = np.zeros(n, dtype=np.int64)
    eta = np.zeros(n, dtype=np.int64)
    eta[:3] = [-40, -2, -9]
    yhat = secure_sum(np.mod(xhat + eta, m), m)
    assert yhat > n * g + tau  # it wrapped
    assert analyze(yhat, n, g, tau, m) == -51 / g


def test_secagg_round_trip_with_random_noise_is_exact_when_noise_within_tau():
    rng = np.random.default_rng(2)
    n, g, tau = 200, 6, 60
    m = modulus(n, g, tau)
    for _ in range(200):
        xhat = rng.integers(0, g + 1, size=n)
        eta = discrete_laplace(0.05, n, rng)
        eta[0] += rng.integers(-tau, tau + 1) - eta.sum()  # total noise anywhere in [-tau, tau]
        z = analyze(secure_sum(np.mod(xhat + eta, m), m), n, g, tau, m)
        assert z == (xhat.sum() + eta.sum()) / g


def test_analyzer_rejects_small_modulus_and_out_of_range_outputs():
    with pytest.raises(ConfigError):
        analyze(3, 10, 2, 5, 30)
    with pytest.raises(ConfigError):
        analyze(31, 10, 2, 5, 31)
