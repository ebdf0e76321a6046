"""The elimination core (radii, rules) and the feedback channels, checked against the papers' formulas and
exact distributions."""

import math

import numpy as np
import pytest
from scipy import stats

from anonbandits import simulate
from anonbandits.channels import CentralLaplace, DirectChannel, Distributed
from anonbandits.core import gap_survivors, interval_survivors
from anonbandits.core.radii import (
    HYBRID_PRIVACY_WIDTH,
    base_gao_radius,
    base_log_radius,
    dpse_threshold,
    hybrid_ucb_widths,
    lazy_ucb_index,
    lazy_ucb_widths,
    lemma2_radius,
    lemma5_radius,
    ugapec_log_term,
)
from anonbandits.core.schedules import (
    batch_length,
    exploration_length,
    median_elimination_pulls,
    naive_elimination_pulls,
)
from anonbandits.core.votes import removal_steps, vote_threshold
from anonbandits.envs.rewards import model_means, sum_rewards
from anonbandits.privacy.protocols import PROTOCOLS


def test_radii_match_the_papers_formulas_at_hand_computed_points():
    # BaSE (paper 000): sqrt(4 * 0.25 * ln(1000 * 5) / 50)
    assert base_log_radius(4.0, 0.25, 1000, 5, np.array([50]))[0] == pytest.approx(math.sqrt(math.log(5000) / 50))
    assert base_log_radius(4.0, 0.25, 1000, 5, np.array([0]))[0] == math.inf
    assert base_gao_radius(1.0, 1.0, 1000, 5, 100.0) == pytest.approx(math.sqrt(5 * math.log(50) / 100))
    # DP-SE (paper 001): 2 (sqrt(ln(8*3*4/0.01)/(2*200)) + ln(4*3*4/0.01)/(200*0.5))
    h, c = math.sqrt(math.log(9600) / 400), math.log(4800) / 100
    assert dpse_threshold(3, 2, 200, 0.01, 0.5) == pytest.approx(2 * (h + c))
    assert dpse_threshold(3, 2, 200, 0.01) == pytest.approx(2 * h)
    # paper 004, Lemma 2 with (sigma, h) = (1, 2) and the local model's Lemma 5 constant
    l4, l2 = math.log(4 * 2 * 9 / 0.1), math.log(2 * 2 * 9 / 0.1)
    assert lemma2_radius(64, 2, 3, 0.1, 1.0, 2.0) == pytest.approx(
        math.sqrt(l4 / 128) + math.sqrt(l2) / 64 + 2 * l2 / 64
    )
    assert lemma5_radius(64, 2, 3, 0.1, 1.0) == pytest.approx(
        math.sqrt(l4 / 128) + math.sqrt(2) * math.sqrt(l2) / 64 + max(3.01 * math.sqrt(l2 / 64), 4 * l2 / 64)
    )
    assert batch_length(4, 3) == 64
    # paper 001: eq. (4) at t = e^2, and Hybrid-UCB's index at t = 16 after O = 7 pulls (floor(log2 8) = 3)
    assert lazy_ucb_index(np.array([0.5]), np.array([4]), 0.5, math.e**2)[0] == pytest.approx(3.5 + math.sqrt(1.5))
    a, b = lazy_ucb_widths(np.array([4.0]), 0.5)
    assert a[0] * math.sqrt(2) + b[0] * 2 == pytest.approx(3 + math.sqrt(1.5))
    a, b = hybrid_ucb_widths(7, 3, HYBRID_PRIVACY_WIDTH / 0.5)
    assert a * 2 + b * 4 == pytest.approx(math.sqrt(3 * 4 / 7) + 6 * math.sqrt(8) * 4 * 3 / (0.5 * 7))
    assert ugapec_log_term(10.0, 5, 0.1) == pytest.approx(0.5 * math.log(4 * 5 * 1000 / 0.1))
    # paper 002's naive and median elimination: ceil(16 ln 80) = 71; phase 1: ceil(4 ln 60 / 0.125^2) = 1049
    assert naive_elimination_pulls(0.5, 0.1, 4) == 71 and median_elimination_pulls(0.5, 0.1, 1) == 1049
    assert median_elimination_pulls(0.5, 0.1, 2) == math.ceil(4 * math.log(3 / 0.025) / (0.125 * 0.75) ** 2)
    # paper 000's Algorithm 2: 10 C^(2/3) K^(1/3) T^(2/3) log(NKT)^(1/3)
    assert exploration_length(10, 3, 2, 1000) == pytest.approx(
        10 * 4 ** (1 / 3) * 3 ** (1 / 3) * 100 * math.log(30_000) ** (1 / 3)
    )


def test_elimination_rules_keep_exactly_the_arms_the_papers_keep():
    means = np.array([[0.75, 0.5, 0.25], [0.25, 0.5, -np.inf]])  # binary fractions: the gaps are exact
    widths = np.array([0.25, 0.125])
    assert gap_survivors(means, widths).tolist() == [[True, True, False], [False, True, False]]
    assert gap_survivors(means, widths, ties="eliminate").tolist() == [[True, False, False], [False, True, False]]
    # UCB >= max LCB: 0.5 + 0.1 < 0.9 - 0.1, 0.75 + 0.1 >= 0.8
    assert interval_survivors(np.array([0.9, 0.75, 0.5]), 0.1).tolist() == [True, True, False]


def test_direct_channel_sums_are_exactly_binomial():
    rng = np.random.default_rng(0)
    channel = DirectChannel(np.array([0.3, 0.7]), "bernoulli", rng)
    draws = np.array([channel.request(np.array([0, 1]), np.array([20, 20])).sums for _ in range(4000)])
    for k, mu in enumerate((0.3, 0.7)):
        observed = np.bincount(draws[:, k].astype(int), minlength=21)
        expected = stats.binom.pmf(np.arange(21), 20, mu) * draws.shape[0]
        keep = expected > 5
        chi2 = ((observed[keep] - expected[keep]) ** 2 / expected[keep]).sum()
        assert (
            stats.chi2.sf(
                chi2 + ((observed[~keep].sum() - expected[~keep].sum()) ** 2 / max(expected[~keep].sum(), 1e-9)),
                keep.sum(),
            )
            > 1e-3
        )


def test_clipped_gaussian_sums_follow_the_clipped_law_of_the_given_std():
    """Single rewards (counts 1) are clip(N(mu, sigma^2), 0, 1): an atom Phi(-mu/sigma) at 0 and the normal law
    inside; sums of 50 have the clipped law's mean (``model_means``) and 50 times its variance."""
    rng, mu, sigma = np.random.default_rng(3), 0.1, 0.2
    one = sum_rewards("gaussian", np.full(20_000, mu), np.ones(20_000, np.int64), rng, sigma=sigma)
    assert stats.binomtest(int((one == 0).sum()), one.size, stats.norm.cdf(-mu / sigma)).pvalue > 1e-3
    inside = one[(one > 0) & (one < 1)]
    law = stats.truncnorm(-mu / sigma, (1 - mu) / sigma, loc=mu, scale=sigma)
    assert stats.kstest(inside, law.cdf).pvalue > 1e-3
    sums = sum_rewards("gaussian", np.full(4000, mu), np.full(4000, 50), rng, sigma=sigma)
    clipped = model_means("gaussian", np.array([mu]), sigma)[0]
    second = law.moment(2) * (1 - stats.norm.cdf(-mu / sigma))  # E[clip(X)^2]: the atom at 0 adds nothing
    assert stats.ttest_1samp(sums, 50 * clipped).pvalue > 1e-3
    assert sums.var(ddof=1) == pytest.approx(50 * (second - clipped**2), rel=0.1)


def test_central_laplace_noise_is_laplace_of_scale_one_over_epsilon():
    release = CentralLaplace(0.5).release(np.zeros(20_000), np.ones(20_000, np.int64), np.random.default_rng(1))
    assert stats.kstest(release.noise, stats.laplace(scale=2.0).cdf).pvalue > 1e-3
    assert np.array_equal(release.values, release.noise)
    assert release.accounting["epsilon"] == 0.5


def test_distributed_mechanism_is_the_protocols_aggregate_release():
    protocol = PROTOCOLS["dist-dp-se"](1.0, 0.01)
    bp = protocol.batch_params(64)
    encoded = np.array([30 * bp.g, 50 * bp.g])
    mine = Distributed(protocol).release(encoded, 64, np.random.default_rng(5))
    theirs = protocol.release_sums(encoded, bp, np.random.default_rng(5))
    assert np.array_equal(mine.values, theirs.z)
    assert mine.accounting["params"] == bp and np.array_equal(mine.accounting["release"].yhat, theirs.yhat)


def test_vote_board_removes_each_arm_at_the_vote_that_reaches_the_threshold():
    rng = np.random.default_rng(2)
    for _ in range(200):
        before = rng.integers(0, 4, 5)
        cast = rng.random((12, 5)) < 0.3
        alive = rng.random(5) < 0.8
        got = removal_steps(before, cast, 4, alive)
        for arm in range(5):  # the plain loop: count votes in time order
            expected, votes = 12, before[arm]
            for i in range(12):
                votes += cast[i, arm]
                if alive[arm] and cast[i, arm] and votes >= 4:
                    expected = i
                    break
            assert got[arm] == expected
    assert vote_threshold(0.05, 0.9) == 29  # ceil(log 0.05 / log 0.9) = ceil(28.43)


def test_simulate_returns_per_batch_records_and_the_same_run_for_a_seed():
    run = simulate("anon-batched", seed=5, users=60, arms=3, horizon=20_000, decomposer="greedy")
    assert len(run.records) >= 1 and all(r["assignments"] >= 1 for r in run.records)
    assert (
        run.curve[0][-1] == 20_000
        and run.metrics
        == simulate("anon-batched", seed=5, users=60, arms=3, horizon=20_000, decomposer="greedy").metrics
    )
