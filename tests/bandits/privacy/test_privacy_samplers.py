"""Every noise sampler against its exact law: chi-square goodness of fit with fixed seeds.

Each sample is compared with the exact pmf (scipy's reference implementations where they exist); cells are
merged until every expected count is at least 5. A wrong scale, a wrong parametrisation or a biased
sampler gives p-values far below the 1e-3 threshold (the last tests show such cases being rejected).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from anonbandits.errors import ConfigError
from anonbandits.privacy import (
    discrete_gaussian,
    discrete_gaussian_pmf,
    discrete_gaussian_sum,
    discrete_laplace,
    laplace,
    polya,
    skellam,
)

ALPHA = 1e-3


def chi_square_pvalue(samples: np.ndarray, support: np.ndarray, pmf: np.ndarray) -> float:
    """Goodness of fit of integer ``samples`` to ``pmf`` on ``support`` (which must hold all the mass)."""
    samples = np.asarray(samples).ravel()
    assert np.all((samples >= support[0]) & (samples <= support[-1])), "sample outside the support"
    assert abs(pmf.sum() - 1) < 1e-9
    expected = pmf * samples.size
    observed = np.bincount(samples - support[0], minlength=support.size).astype(float)
    # merge consecutive cells until each has expected count >= 5
    edges, acc = [0], 0.0
    for k, e in enumerate(expected):
        acc += e
        if acc >= 5:
            edges.append(k + 1)
            acc = 0.0
    edges[-1] = support.size
    exp_b = np.add.reduceat(expected, edges[:-1])
    obs_b = np.add.reduceat(observed, edges[:-1])
    assert exp_b.size >= 3
    return float(stats.chisquare(obs_b, exp_b).pvalue)


def dlaplace_pmf(scale: float, half_width: int) -> tuple[np.ndarray, np.ndarray]:
    support = np.arange(-half_width, half_width + 1)
    pmf = stats.dlaplace.pmf(support, 1.0 / scale)
    return support, pmf / pmf.sum()


@pytest.mark.parametrize("scale", [0.7, 3.0, 25.0])
def test_discrete_laplace_matches_pmf(scale):
    x = discrete_laplace(scale, 20_000, np.random.default_rng(1))
    support, pmf = dlaplace_pmf(scale, int(60 * scale) + 30)
    assert chi_square_pvalue(x, support, pmf) > ALPHA


@pytest.mark.parametrize(("r", "beta"), [(0.3, 0.8), (2.5, 0.5), (1.0, 0.95)])
def test_polya_matches_negative_binomial(r, beta):
    x = polya(r, beta, 20_000, np.random.default_rng(2))
    support = np.arange(0, 2000)
    pmf = stats.nbinom.pmf(support, r, 1 - beta)
    assert chi_square_pvalue(x, support, pmf / pmf.sum()) > ALPHA
    assert abs(x.mean() - r * beta / (1 - beta)) < 5 * np.sqrt(r * beta / (1 - beta) ** 2 / x.size)


@pytest.mark.parametrize(("n", "g", "eps"), [(64, 8, 1.0), (256, 2, 0.1), (1024, 32, 1.0)])
def test_sum_of_users_polya_differences_is_discrete_laplace(n, g, eps):
    """Fact 1: n users' Polya(1/n, e^{-eps/g}) differences sum to Lap_Z(g/eps) exactly."""
    rng = np.random.default_rng(3)
    beta = np.exp(-eps / g)
    reps = 3000
    total = (polya(1 / n, beta, (reps, n), rng) - polya(1 / n, beta, (reps, n), rng)).sum(axis=1)
    support, pmf = dlaplace_pmf(g / eps, int(40 * g / eps) + 30)
    assert chi_square_pvalue(total, support, pmf) > ALPHA


def test_reference_code_polya_parametrisation_is_rejected():
    """The public reference code samples Polya(1/n, 1-beta): its total noise is far too small (Fact 1 of paper 004 needs
    Polya(1/n, beta))."""
    rng = np.random.default_rng(4)
    n, g, eps = 1024, 32, 1.0
    beta = np.exp(-eps / g)
    wrong = (polya(1 / n, 1 - beta, (2000, n), rng) - polya(1 / n, 1 - beta, (2000, n), rng)).sum(axis=1)
    assert wrong.var() < 1.0  # measured 0.06, against 2 beta/(1-beta)^2 = 2047 needed
    support, pmf = dlaplace_pmf(g / eps, 2000)
    assert chi_square_pvalue(wrong, support, pmf) < 1e-12


@pytest.mark.parametrize(("mu", "var"), [(0, 3.0), (5, 40.0), (-2, 0.5)])
def test_skellam_matches_pmf(mu, var):
    x = skellam(mu, var, 20_000, np.random.default_rng(5))
    support = np.arange(mu - 400, mu + 401)
    pmf = stats.skellam.pmf(support, var / 2, var / 2, loc=mu)
    assert chi_square_pvalue(x, support, pmf / pmf.sum()) > ALPHA


def test_sum_of_users_skellam_is_skellam():
    rng = np.random.default_rng(6)
    n, total_var = 128, 90.0
    total = skellam(0, total_var / n, (3000, n), rng).sum(axis=1)
    support = np.arange(-300, 301)
    pmf = stats.skellam.pmf(support, total_var / 2, total_var / 2)
    assert chi_square_pvalue(total, support, pmf / pmf.sum()) > ALPHA


@pytest.mark.parametrize("sigma", [0.4, 1.0, 2.5, 12.0])
def test_discrete_gaussian_matches_pmf(sigma):
    x = discrete_gaussian(sigma, 20_000, np.random.default_rng(7))
    support = np.arange(-int(40 * sigma) - 10, int(40 * sigma) + 11)
    weights = np.exp(-(support.astype(float) ** 2) / (2 * sigma**2))
    assert chi_square_pvalue(x, support, weights / weights.sum()) > ALPHA


@pytest.mark.parametrize(("sigma", "n"), [(0.6, 5), (1.0, 40), (1.0, 300), (2.5, 500)])
def test_discrete_gaussian_sum_matches_the_convolution_of_n_users(sigma, n):
    """Both paths (users one by one for small n, the users' histogram otherwise) against the exact n-fold
    convolution of the discrete Gaussian pmf; and not the discrete Gaussian of the total variance."""
    support, pmf = discrete_gaussian_pmf(sigma)
    total = np.array([1.0])
    for _ in range(n):
        total = np.convolve(total, pmf)
    values = np.arange(total.size) + n * support[0]
    window = np.abs(values) <= 12 * sigma * np.sqrt(n) + 5
    x = discrete_gaussian_sum(sigma, n, 20_000, np.random.default_rng(11))
    assert chi_square_pvalue(x, values[window], total[window] / total[window].sum()) > ALPHA
    assert x.var() == pytest.approx(n * (support**2 * pmf).sum(), rel=0.05)


def test_discrete_gaussian_sum_paths_agree_and_differ_from_total_variance_law():
    rng = np.random.default_rng(12)
    sigma, n = 0.5, 200  # per-user variance below sigma^2: the sum is narrower than N_Z(0, n sigma^2)
    support, pmf = discrete_gaussian_pmf(sigma)
    one_by_one = discrete_gaussian(sigma, (4000, n), rng).sum(axis=1)
    histogram = discrete_gaussian_sum(sigma, n, 4000, rng)
    assert stats.ks_2samp(one_by_one, histogram).pvalue > ALPHA
    user_var = (support**2 * pmf).sum()
    assert user_var < 0.9 * sigma**2
    assert histogram.var() == pytest.approx(n * user_var, rel=0.08)
    assert discrete_gaussian_sum(sigma, n, (2, 3), rng).shape == (2, 3)
    assert np.ndim(discrete_gaussian_sum(sigma, n, None, rng)) == 0


def test_discrete_gaussian_shape_and_scalar():
    rng = np.random.default_rng(8)
    assert discrete_gaussian(3.0, (4, 5), rng).shape == (4, 5)
    assert np.ndim(discrete_gaussian(3.0, None, rng)) == 0


def test_laplace_matches_cdf():
    x = laplace(2.5, 20_000, np.random.default_rng(9))
    assert stats.kstest(x, stats.laplace(scale=2.5).cdf).pvalue > ALPHA
    assert stats.kstest(x, stats.laplace(scale=2.0).cdf).pvalue < 1e-6  # the test has power


def test_wrong_scale_is_rejected():
    """The goodness-of-fit helper itself detects a 10% scale error."""
    x = discrete_laplace(11.0, 20_000, np.random.default_rng(10))
    support, pmf = dlaplace_pmf(10.0, 800)
    assert chi_square_pvalue(x, support, pmf) < 1e-6


@pytest.mark.parametrize(
    "draw",
    [
        lambda size, rng: discrete_laplace(2.0, size, rng),
        lambda size, rng: polya(0.5, 0.9, size, rng),
        lambda size, rng: polya(0.5, 0.0, size, rng),
        lambda size, rng: skellam(3, 4.0, size, rng),
        lambda size, rng: discrete_gaussian(1.5, size, rng),
        lambda size, rng: discrete_gaussian_sum(1.5, 4, size, rng),
    ],
)
def test_discrete_samplers_give_an_int64_scalar_for_size_none_and_arrays_of_the_shape(draw):
    """``size=None`` is one draw (the first of the same stream's array), a tuple an array of that shape."""
    one = draw(None, np.random.default_rng(12))
    assert isinstance(one, np.int64)
    many = draw((2, 3), np.random.default_rng(12))
    assert many.shape == (2, 3) and many.dtype == np.int64
    assert one == draw(1, np.random.default_rng(12))[0]


def test_same_seed_same_draws():
    a = polya(0.5, 0.9, 100, np.random.default_rng(11))
    b = polya(0.5, 0.9, 100, np.random.default_rng(11))
    assert np.array_equal(a, b)


@pytest.mark.parametrize(
    "call",
    [
        lambda rng: discrete_laplace(0.0, 3, rng),
        lambda rng: laplace(-1.0, 3, rng),
        lambda rng: polya(1.0, 1.0, 3, rng),
        lambda rng: polya(0.0, 0.5, 3, rng),
        lambda rng: skellam(0.5, 1.0, 3, rng),
        lambda rng: discrete_gaussian(float("nan"), 3, rng),
    ],
)
def test_bad_parameters_raise(call):
    with pytest.raises(ConfigError):
        call(np.random.default_rng(0))
