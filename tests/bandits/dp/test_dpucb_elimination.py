"""SE and DP-SE (Sajed and Sheffet, ICML 2019: the baseline of paper 001, Sec. 6, and of paper 004, Sec. 7)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dpucb_helpers import assert_standard_laplace, check_ledger, exact_sums

from anonbandits.core.schedules import epoch_length, parse_confidence
from anonbandits.dp import dp_se, se
from anonbandits.errors import ConfigError

PAPER_T = 4_194_304


def test_epoch_lengths_match_the_formula_at_the_papers_settings():
    beta = 1 / PAPER_T
    assert [epoch_length(5, e, beta, 0.5) for e in (1, 2, 3)] == [2425, 10407, 43286]
    assert epoch_length(5, 1, beta, 0.1) == 2920
    assert epoch_length(5, 1, beta) == 2425  # SE: statistical term only


def test_epoch_length_is_the_ceiling_paper_003_states_at_every_reachable_length():
    """One R_e serves DP-SE (floor + 1, as paper 004's code) and DP-MASE (the ceiling of paper 003's garbled Algorithm
    4): the two rules differ only at an integer bound, which never occurs over the papers' parameter ranges below 1e12
    pulls."""
    s, e, beta, eps = np.meshgrid(
        np.arange(1, 21),
        np.arange(1, 16),
        np.linspace(0.01, 0.99, 40),
        [0.05, 0.1, 0.25, 0.5, 1.0, 8.0, 128.0],
        indexing="ij",
    )
    delta = 2.0**-e
    bound = np.maximum(32 * np.log(8 * s * e**2 / beta) / delta**2, 8 * np.log(4 * s * e**2 / beta) / (eps * delta))
    length = epoch_length(s, e, beta, eps)
    assert np.all((length > bound) & (length - 1 <= bound))
    reachable = bound < 1e12
    assert reachable.sum() > 0.9 * bound.size
    assert np.array_equal(length[reachable], np.ceil(bound[reachable]))


def _reference_dp_se(mu, eps, horizon, rng, beta):
    """Per-round DP-SE, literally (round-robin, rewards equal to their means)."""
    K = len(mu)
    active, t, e = list(range(K)), 0, 0
    pulls = np.zeros(K, dtype=int)
    while len(active) > 1 and t < horizon:
        e += 1
        d, s = 2.0**-e, len(active)
        l8, l4 = math.log(8 * s * e * e / beta), math.log(4 * s * e * e / beta)
        length = math.floor(max(32 * l8 / d**2, 8 * l4 / (eps * d))) + 1
        sums = dict.fromkeys(active, 0.0)
        for _ in range(length):
            for i in active:
                if t == horizon:
                    return pulls
                t += 1
                pulls[i] += 1
                sums[i] += mu[i]
        noisy = {i: (sums[i] + z) / length for i, z in zip(active, rng.laplace(0, 1 / eps, s), strict=True)}
        best = max(noisy.values())
        width = 2 * (math.sqrt(l8 / (2 * length)) + l4 / (length * eps))
        active = [i for i in active if best - noisy[i] <= width]
    pulls[active[0]] += horizon - t
    return pulls


@pytest.mark.parametrize("horizon", [9_000, 40_000, 150_000])
def test_dp_se_matches_per_round_reference(horizon):
    mu = np.array([0.75, 0.625, 0.5625, 0.5])
    run = dp_se(mu, 1.0, horizon, np.random.default_rng(3), reward=exact_sums)
    ref = _reference_dp_se(mu, 1.0, horizon, np.random.default_rng(3), 1 / horizon)
    np.testing.assert_array_equal(run.info["pulls"], ref)
    assert run.metrics["regret"] == pytest.approx(float(((mu.max() - mu) * ref).sum()))


def test_curve_is_exact_inside_round_robin_epochs():
    mu = np.array([0.75, 0.5, 0.25])
    grid = np.array([1, 2, 3, 4, 5, 7, 100, 101, 1000])
    run = dp_se(mu, 1.0, 1000, np.random.default_rng(0), checkpoints=grid)
    gaps = np.array([0.0, 0.25, 0.5])
    expected = [gaps[np.arange(c) % 3].sum() for c in grid]  # still in epoch 1 (R_1 > 333)
    np.testing.assert_allclose(run.curve[1], expected)


@pytest.mark.parametrize("order", ["round-robin", "blocks"])
def test_finds_best_arm_on_easy_instance(order):
    for seed in range(5):
        for run in (
            dp_se("0.3,0.9,0.5", 0.5, 200_000, np.random.default_rng(seed), order=order),
            se("0.3,0.9,0.5", 200_000, np.random.default_rng(seed), order=order),
        ):
            assert run.metrics["survivors"] == 1 and run.metrics["best_arm_found"] and run.info["best_arm"] == 1


def test_orders_differ_only_inside_epochs():
    kw = dict(reward="bernoulli")
    a = dp_se("0.9,0.5,0.1", 0.5, 500_000, np.random.default_rng(7), **kw)
    b = dp_se("0.9,0.5,0.1", 0.5, 500_000, np.random.default_rng(7), order="blocks", **kw)
    np.testing.assert_array_equal(a.info["pulls"], b.info["pulls"])
    assert a.metrics["regret"] == pytest.approx(b.metrics["regret"])
    assert not np.allclose(a.curve[1], b.curve[1])


def test_each_reward_feeds_at_most_one_release():
    horizon, eps = 2_000_000, 0.5
    for seed in range(3):
        run = dp_se("0.75,0.7,0.7,0.7,0.7", eps, horizon, np.random.default_rng(seed))
        check_ledger(run.info["ledger"], run.info["pulls"])
        counts = np.asarray(run.info["ledger"].block_count)
        rounds = np.asarray(run.info["ledger"].release_round)
        assert run.metrics["releases"] == counts.size > 5  # one noisy mean per arm per completed epoch
        for e, r in enumerate(np.unique(rounds), start=1):  # epoch e: one release per active arm
            in_epoch = counts[rounds == r]
            assert set(in_epoch) == {epoch_length(in_epoch.size, e, 1 / horizon, eps)}


def test_laplace_noise_has_scale_one_over_epsilon():
    z = []
    for seed in range(60):
        run = dp_se("0.5,0.5,0.5,0.5,0.5", 0.25, 200_000, np.random.default_rng(seed))
        z.extend(np.asarray(run.info["ledger"].noise_value) / 4.0)
        assert set(run.info["ledger"].noise_scale) == {4.0}
    assert_standard_laplace(np.array(z))


def test_se_adds_no_noise():
    run = se("0.6,0.5", 100_000, np.random.default_rng(0))
    assert set(run.info["ledger"].noise_value) == {0.0}


def test_regret_is_sublinear():
    ratios = []
    for seed in range(5):
        run = dp_se("0.75,0.625,0.5,0.375,0.25", 1.0, 2**22, np.random.default_rng(seed), checkpoints=8)
        ratios.append(run.curve[1][-1] / run.curve[1][0])  # R(T) / R(T/8)
    assert np.mean(ratios) < 2.5


def test_confidence_and_inputs():
    assert parse_confidence("1/T", 1000) == 1e-3 and parse_confidence("0.1", 10) == 0.1
    with pytest.raises(ConfigError, match="confidence"):
        parse_confidence("2", 10)
    with pytest.raises(ConfigError, match="epsilon"):
        dp_se("0.5,0.4", 0.0, 100, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="order"):
        se("0.5,0.4", 100, np.random.default_rng(0), order="zigzag")
    with pytest.raises(ConfigError, match="horizon"):
        se("0.5,0.4", 0, np.random.default_rng(0))
