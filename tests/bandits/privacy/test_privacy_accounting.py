"""Privacy accounting: worked values, Lemma 3 against Theorem 2, Lemma 4's xi, and the conversions
checked against the exact privacy profile of the Gaussian mechanism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from anonbandits.errors import ConfigError
from anonbandits.privacy import (
    DEFAULT_ORDERS,
    advanced_composition_epsilon,
    discrete_gaussian_sum_cdp,
    discrete_gaussian_sum_xi,
    dist_rdp_se_rdp,
    pure_dp_to_rdp,
    rdp_to_dp,
    returning_users_dp,
    skellam_rdp,
    zcdp_to_dp,
)


def test_theorem2_rdp_matches_worked_values():
    assert dist_rdp_se_rdp(2, 0.1, 10) == pytest.approx(0.010225, rel=1e-9)
    assert dist_rdp_se_rdp(2, 1.0, 10) == pytest.approx(1.009, rel=1e-9)


@pytest.mark.parametrize(("eps", "s", "n"), [(0.1, 10, 4), (1.0, 10, 1024), (0.5, 1, 64), (1.0, 100, 16)])
def test_lemma3_with_integer_g_is_within_theorem2_bounds(eps, s, n):
    g = math.ceil(s * eps * math.sqrt(n))
    exact = skellam_rdp(DEFAULT_ORDERS, g, (g / eps) ** 2)
    assert np.all(exact <= dist_rdp_se_rdp(DEFAULT_ORDERS, eps, s, n) + 1e-12)
    assert np.all(dist_rdp_se_rdp(DEFAULT_ORDERS, eps, s, n) <= dist_rdp_se_rdp(DEFAULT_ORDERS, eps, s) + 1e-12)
    assert np.all(exact >= DEFAULT_ORDERS * eps**2 / 2)  # never better than the Gaussian curve


def test_xi_matches_worked_values_for_a_million_rounds():
    n = 10**6 // 2  # Lemma 4's sum over k up to T/2 - 1
    assert discrete_gaussian_sum_xi(n, 1.0) == pytest.approx(1.4e-2, rel=0.05)
    assert discrete_gaussian_sum_xi(n, 2.0) == pytest.approx(7e-17, rel=0.05)
    assert discrete_gaussian_sum_xi(n, 10.0) == 0.0


def test_xi_equals_the_direct_sum():
    k = np.arange(1, 999)
    direct = 10 * np.sum(np.exp(-2 * np.pi**2 * 0.7**2 * k / (k + 1)))
    assert discrete_gaussian_sum_xi(999, 0.7) == pytest.approx(direct, rel=1e-12)


def test_lemma4_reduces_to_gaussian_when_xi_vanishes():
    assert discrete_gaussian_sum_cdp(100, 10.0, 30.0) == pytest.approx(30 / (10 * 10))
    assert discrete_gaussian_sum_cdp(100, 1.0, 5.0) > 0.5  # xi > 0 makes it worse than 5/(10*1)
    with pytest.raises(ConfigError):
        discrete_gaussian_sum_cdp(10, 0.3, 1.0)


def gaussian_delta(eps: float, sigma: float) -> float:
    """Exact delta(eps) of the Gaussian mechanism with sensitivity 1 and noise std sigma (Balle & Wang 2018)."""
    shift = 1 / (2 * sigma)
    return stats.norm.cdf(-eps * sigma + shift) - math.exp(eps) * stats.norm.cdf(-eps * sigma - shift)


@pytest.mark.parametrize("rho", [0.05, 0.5, 2.0])
def test_zcdp_conversion_is_valid_and_tighter_than_the_standard_one(rho):
    delta = 1e-6
    eps = zcdp_to_dp(rho, delta)
    assert eps < rho + 2 * math.sqrt(rho * math.log(1 / delta))
    sigma = 1 / math.sqrt(2 * rho)  # the Gaussian mechanism is exactly rho-zCDP
    assert gaussian_delta(eps, sigma) <= delta  # the conversion is valid for the mechanism attaining it
    assert gaussian_delta(0.75 * eps, sigma) > delta  # and not absurdly loose


def test_rdp_to_dp_accepts_arrays_and_is_monotone_in_delta():
    curve = skellam_rdp(DEFAULT_ORDERS, 50, 2500.0)
    a = rdp_to_dp(curve, 1e-5)
    assert a == rdp_to_dp(lambda o: skellam_rdp(o, 50, 2500.0), 1e-5)
    assert rdp_to_dp(curve, 1e-8) > a > rdp_to_dp(curve, 1e-2)
    with pytest.raises(ConfigError):
        rdp_to_dp(curve, 0.0)


def test_pure_dp_to_rdp():
    assert np.allclose(pure_dp_to_rdp(0.5, np.array([2.0, 100.0])), [0.25, 0.5])


def test_returning_users_compose_better_than_advanced_composition_needs():
    """B batches of a Gaussian-like mechanism: RDP accounting gives a smaller total eps than B * eps."""
    rho, batches, delta = 0.01, 100, 1e-6
    total = returning_users_dp(lambda a: rho * np.asarray(a), batches, delta)
    per_batch = zcdp_to_dp(rho, delta / batches)
    assert total < batches * per_batch
    assert returning_users_dp(lambda a: rho * np.asarray(a), 1, delta) == rdp_to_dp(lambda a: rho * a, delta)


def test_advanced_composition_formula():
    assert advanced_composition_epsilon(0.5, 8, 1e-6) == pytest.approx(0.5 / (2 * math.sqrt(16 * math.log(1e6))))
