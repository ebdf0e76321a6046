"""The protocols of paper 004: worked parameter values, exact aggregate laws of the users' noise, and
agreement in distribution of the per-user (faithful) and aggregate (fast) releases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from anonbandits.envs.rewards import draw_rewards, encoded_sums, encoding_pmf
from anonbandits.errors import ConfigError
from anonbandits.privacy import discrete_laplace, randomized_round
from anonbandits.privacy.protocols import (
    PROTOCOLS,
    CentralProtocol,
    DiscreteGaussianProtocol,
    LocalProtocol,
    Protocol,
    ShuffleProtocol,
    SkellamProtocol,
)

ALPHA = 1e-3


def two_sample_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """Chi-square test that two integer samples share one law (cells pooled to expected counts >= 5)."""
    lo = min(a.min(), b.min())
    ca = np.bincount(a - lo)
    cb = np.bincount(b - lo, minlength=ca.size)
    ca = np.pad(ca, (0, cb.size - ca.size))
    edges, acc = [0], 0
    for k in range(ca.size):
        acc += ca[k] + cb[k]
        if acc >= 20:
            edges.append(k + 1)
            acc = 0
    edges[-1] = ca.size
    table = np.vstack([np.add.reduceat(ca, edges[:-1]), np.add.reduceat(cb, edges[:-1])])
    return float(stats.chi2_contingency(table).pvalue)


def gof_pvalue(samples: np.ndarray, support: np.ndarray, pmf: np.ndarray) -> float:
    observed = np.bincount(samples - support[0], minlength=support.size).astype(float)
    assert observed.size == support.size
    expected = pmf / pmf.sum() * samples.size
    keep = expected >= 5
    obs, exp = observed[keep], expected[keep]
    if expected[~keep].sum() > 0:  # pool the sparse cells (tails) into one
        obs, exp = np.append(obs, observed[~keep].sum()), np.append(exp, expected[~keep].sum())
    return float(stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue)


@pytest.mark.parametrize(
    ("eps", "n", "p_tau", "g", "tau", "m"),
    [
        (1.0, 32, 0.1, 6, 18, 229),
        (1.0, 1024, 0.1, 32, 96, 32961),
        (0.1, 2, 0.1, 1, 30, 63),
        (0.1, 1024, 0.1, 4, 120, 4337),
        (1.0, 1024, 1e-6, 32, 465, 33699),
    ],
)
def test_dist_dp_se_parameters_match_worked_values(eps, n, p_tau, g, tau, m):
    bp = Protocol(eps, p_tau).batch_params(n)
    assert (bp.g, bp.tau, bp.m) == (g, tau, m)


def test_bits_of_a_worked_example():
    assert Protocol(1.0, 0.1).batch_params(1024).bits == 16


def test_dist_rdp_se_parameters_match_worked_values():
    proto = SkellamProtocol(1.0, 1e-6, scale=10)
    bp = proto.batch_params(1024)
    assert (bp.g, bp.tau, bp.m, bp.bits) == (320, 2459, 332599, 19)
    assert proto.total_variance(bp) / bp.n == pytest.approx(100.0)


def test_shuffle_uses_half_epsilon_and_half_confidence():
    bp = ShuffleProtocol(1.0, 0.1).batch_params(1024)
    assert bp.g == 16  # ceil(0.5 * 32)
    assert bp.tau == math.ceil((16 / 0.5) * math.log(2 / 0.05))


def test_local_and_gaussian_accuracy_formulas():
    n, p = 400, 0.1
    loc = LocalProtocol(0.5, p).batch_params(n)
    assert loc.g == 10 and loc.tau == math.ceil(20 * max(3.01 * math.sqrt(n * math.log(20)), 4 * math.log(20)))
    dg = DiscreteGaussianProtocol(0.5, p, scale=2).batch_params(n)
    assert dg.g == 20 and dg.tau == math.ceil(40 * math.sqrt(2 * math.log(20)))


def test_invalid_protocol_parameters():
    with pytest.raises(ConfigError):
        Protocol(0.0, 0.1)
    with pytest.raises(ConfigError):
        SkellamProtocol(1.0, 0.1, scale=0.5)
    with pytest.raises(ConfigError):
        Protocol(1.0, 0.0)


def total_user_noise(proto: Protocol, n: int, reps: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    bp = proto.batch_params(n)
    return np.array([proto.user_noise(bp, rng).sum() for _ in range(reps)])


def test_polya_users_sum_to_discrete_laplace_at_a_papers_size():
    """Fact 1 of paper 004 at work: with eps = 1, n = 1024 (g = 32), the users' total noise is Lap_Z(32)."""
    proto = Protocol(1.0, 0.1)
    total = total_user_noise(proto, 1024, 2500, seed=0)
    support = np.arange(-1200, 1201)
    assert gof_pvalue(total, support, stats.dlaplace.pmf(support, 1 / 32)) > ALPHA
    agg = proto.aggregate_noise(proto.batch_params(1024), 2500, np.random.default_rng(1))
    assert gof_pvalue(agg, support, stats.dlaplace.pmf(support, 1 / 32)) > ALPHA


def test_skellam_users_sum_to_skellam():
    proto = SkellamProtocol(0.5, 0.1, scale=3)
    bp = proto.batch_params(100)
    var = (bp.g / 0.5) ** 2
    support = np.arange(-int(12 * math.sqrt(var)), int(12 * math.sqrt(var)) + 1)
    pmf = stats.skellam.pmf(support, var / 2, var / 2)
    assert gof_pvalue(total_user_noise(proto, 100, 3000, seed=2), support, pmf) > ALPHA
    assert gof_pvalue(proto.aggregate_noise(bp, 3000, np.random.default_rng(3)), support, pmf) > ALPHA


def test_local_users_sum_to_difference_of_negative_binomials():
    """n i.i.d. Lap_Z(B) sum to Polya(n, beta) - Polya(n, beta); pmf by exact convolution."""
    proto = LocalProtocol(0.8, 0.1)
    n = 30
    bp = proto.batch_params(n)
    beta = math.exp(-0.8 / bp.g)
    k = np.arange(0, 4000)
    nb = stats.nbinom.pmf(k, n, 1 - beta)
    diff = np.convolve(nb, nb[::-1])  # index i <-> value i - (len - 1)
    support = np.arange(-(k.size - 1), k.size)
    window = np.abs(support) <= 1500
    assert gof_pvalue(total_user_noise(proto, n, 3000, seed=4), support[window], diff[window]) > ALPHA
    agg = proto.aggregate_noise(bp, 3000, np.random.default_rng(5))
    assert gof_pvalue(agg, support[window], diff[window]) > ALPHA


def same_law(a: np.ndarray, b: np.ndarray, center: float) -> bool:
    """Chi-square on the values, and Welch's t-test on the distances to the (known) centre, which is
    sensitive to a wrong noise scale."""
    shape = two_sample_pvalue(a, b)
    spread = stats.ttest_ind(np.abs(a - center), np.abs(b - center), equal_var=False).pvalue
    return shape > ALPHA and spread > ALPHA


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_per_user_and_aggregate_releases_agree(name):
    """The same users' encodings released 5000 times each way: the analyzer outputs share one law."""
    proto = PROTOCOLS[name](0.5, 0.1, 2.0)
    n, reps = 64, 5000
    bp = proto.batch_params(n)
    rng = np.random.default_rng(6)
    xhat = rng.integers(0, bp.g + 1, size=n)
    per_user = np.array([proto.release_users(xhat, bp, "ideal", rng).z[0] for _ in range(reps)])
    aggregate = proto.release_sums(np.full(reps, xhat.sum()), bp, rng).z
    assert same_law(
        np.rint(per_user * bp.g).astype(np.int64), np.rint(aggregate * bp.g).astype(np.int64), center=float(xhat.sum())
    )


def test_agreement_test_detects_a_fifteen_percent_noise_scale_error():
    rng = np.random.default_rng(7)
    a = 100 + discrete_laplace(8.0, 5000, rng)
    b = 100 + discrete_laplace(8.0 * 1.15, 5000, rng)
    assert not same_law(a, b, center=100.0)


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_simulated_secure_computations_equal_the_ideal_sum(name):
    proto = PROTOCOLS[name](0.5, 0.1, 2.0)
    rng = np.random.default_rng(8)
    for n in (3, 64, 700):  # 700 users: ring masking instead of all pairs
        bp = proto.batch_params(n)
        messages = rng.integers(0, bp.m, size=n)
        ideal = proto.secure(messages, bp, "ideal", rng)
        assert proto.secure(messages, bp, "masked", rng) == ideal
        assert proto.secure(messages, bp, "split-and-mix", rng) == ideal


def test_central_protocol_adds_noise_only_at_the_analyzer():
    proto = CentralProtocol(0.5, 0.1)
    bp = proto.batch_params(50)
    rng = np.random.default_rng(8)
    assert not proto.user_noise(bp, rng).any()
    rel = proto.release_users(np.full(50, 2), bp, "ideal", rng)
    assert rel.yhat[0] == 100  # SecAgg sees the plain encoded sum
    assert rel.z[0] == rel.exact[0]


@pytest.mark.parametrize(
    ("model", "mu", "g", "sigma"),
    [
        ("gaussian", 0.3, 5, 0.1),
        ("gaussian", 0.05, 3, 0.5),
        ("gaussian", 0.5, 40, 0.1),
        ("beta", 0.3, 4, 0.5),
        ("beta", 0.8, 7, 0.5),
        ("bernoulli", 0.35, 6, 0.5),
    ],
)
def test_encoding_pmf_matches_randomized_rounding_of_rewards(model, mu, g, sigma):
    rng = np.random.default_rng(9)
    xhat = randomized_round(draw_rewards(model, np.full(30_000, mu), rng, sigma=sigma), g, rng)
    q = encoding_pmf(model, mu, g, sigma)
    assert abs(q.sum() - 1) < 1e-12
    assert gof_pvalue(xhat, np.arange(g + 1), q) > ALPHA


def test_encoded_block_sums_follow_the_n_fold_convolution():
    """One multinomial draw per block gives the law of the sum of n users' encodings."""
    model, mu, g, n, sigma = "gaussian", 0.4, 3, 6, 0.2
    q = encoding_pmf(model, mu, g, sigma)
    exact = np.array([1.0])
    for _ in range(n):
        exact = np.convolve(exact, q)
    rng = np.random.default_rng(10)
    sums = np.concatenate([encoded_sums(model, np.full(10, mu), g, n, rng, sigma) for _ in range(300)])
    assert gof_pvalue(sums, np.arange(n * g + 1), exact) > ALPHA
    bern = encoded_sums("bernoulli", np.array([0.3, 0.7]), 5, 100, rng, sigma)
    assert np.all(bern % 5 == 0)


def lemma2_radius(length: int, active: int, batch: int, p: float, sigma: float, h: float) -> float:
    l4 = math.log(4 * active * batch**2 / p)
    l2 = math.log(2 * active * batch**2 / p)
    return math.sqrt(l4 / (2 * length)) + sigma * math.sqrt(l2) / length + h * l2 / length


@pytest.mark.parametrize(
    ("proto", "sigma", "h"),
    [
        (Protocol(0.5, 0.1), math.sqrt(2) / 0.5, 1 / 0.5),
        (CentralProtocol(0.5, 0.1), math.sqrt(2) / 0.5, 1 / 0.5),
        (ShuffleProtocol(0.5, 0.1), math.sqrt(2) / 0.25, 1 / 0.25),
        (SkellamProtocol(0.5, 0.1, scale=10), 2 / 0.5 + math.sqrt(2) / 5, 1 / 5),
        (DiscreteGaussianProtocol(0.5, 0.1, scale=10), math.sqrt(2) / 0.5 + math.sqrt(2) / 5, 0.0),
    ],
)
def test_radius_is_lemma2_with_the_variant_constants(proto, sigma, h):
    for length, active, batch in [(2, 10, 1), (4096, 3, 12)]:
        assert proto.radius(length, active, batch, 0.1) == pytest.approx(
            lemma2_radius(length, active, batch, 0.1, sigma, h), rel=1e-12
        )


def test_local_radius_uses_the_derived_constant():
    eps, length, active, batch, p = 0.5, 1024, 4, 10, 0.1
    l2 = math.log(2 * active * batch**2 / p)
    expected = lemma2_radius(length, active, batch, p, math.sqrt(2) / eps, 0.0) + (1 / eps) * max(
        3.01 * math.sqrt(l2 / length), 4 * l2 / length
    )
    assert LocalProtocol(eps, p).radius(length, active, batch, p) == pytest.approx(expected, rel=1e-12)
