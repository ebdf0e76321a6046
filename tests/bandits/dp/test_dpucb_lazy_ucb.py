"""Anytime-Lazy-UCB (paper 001, Algorithm 1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dpucb_helpers import assert_standard_laplace, check_ledger, exact_sums

from anonbandits.dp import anytime_lazy_ucb
from anonbandits.errors import ConfigError


def _reference_alu(mu, eps, horizon, rng):
    """Algorithm 1 round by round with explicit arrays (rewards equal to their means)."""
    K = len(mu)
    mean = [mu[j] + z for j, z in enumerate(rng.laplace(0, 1 / eps, K))]
    size = [1] * K
    arrays = [[] for _ in range(K)]
    played = list(range(K))
    for t in range(K + 1, horizon + 1):
        log_t = math.log(t)
        index = [mean[j] + math.sqrt(3 * log_t / size[j]) + 3 * log_t / (eps * size[j]) for j in range(K)]
        j = index.index(max(index))
        arrays[j].append(mu[j])
        played.append(j)
        if len(arrays[j]) == 2 * size[j]:
            mean[j] = (sum(arrays[j]) + rng.laplace(0, 1 / eps)) / (2 * size[j])
            size[j] *= 2
            arrays[j] = []
    return np.array(played)


@pytest.mark.parametrize("storage", ["o1", "arrays"])
@pytest.mark.parametrize(("eps", "seed"), [(1.0, 0), (0.25, 1), (8.0, 2)])
def test_event_simulation_matches_per_round_algorithm(storage, eps, seed):
    mu = np.array([0.75, 0.5, 0.625, 0.25])
    horizon = 40_000
    every_round = np.arange(1, horizon + 1)
    run = anytime_lazy_ucb(
        mu, eps, horizon, np.random.default_rng(seed), storage=storage, reward=exact_sums, checkpoints=every_round
    )
    played = _reference_alu(mu, eps, horizon, np.random.default_rng(seed))
    np.testing.assert_array_equal(run.info["pulls"], np.bincount(played, minlength=mu.size))
    # The gaps are distinct, so the per-round regret increments name the arm played in every round.
    np.testing.assert_allclose(run.curve[1], np.cumsum(mu.max() - mu[played]), rtol=0, atol=1e-9)
    assert run.metrics["events"] < horizon / 20  # blocks, not rounds


def test_finds_best_arm_on_easy_instance():
    for seed in range(10):
        run = anytime_lazy_ucb("0.2,0.5,0.9,0.4", 0.5, 10**6, np.random.default_rng(seed))
        assert run.info["best_arm"] == 2 and run.metrics["best_arm_found"]
        assert run.info["pulls"][2] > 0.97 * 10**6


def test_each_reward_feeds_exactly_one_release_of_its_array():
    run = anytime_lazy_ucb("0.75,0.7,0.7,0.7,0.7", 0.5, 2_000_000, np.random.default_rng(4))
    ledger = run.info["ledger"]
    check_ledger(ledger, run.info["pulls"])
    arms = np.asarray(ledger.noise_arm)
    released = np.zeros(5, dtype=np.int64)
    for rid, arm in enumerate(arms):
        fed = np.flatnonzero(np.asarray(ledger.block_release) == rid)
        released[arm] += sum(ledger.block_count[b] for b in fed)
    for arm in range(5):
        sizes = [
            sum(ledger.block_count[b] for b in np.flatnonzero(np.asarray(ledger.block_release) == rid))
            for rid in np.flatnonzero(arms == arm)
        ]
        assert sizes == [2**r for r in range(len(sizes))]  # arrays 1, 2, 4, ... in order
        unreleased = run.info["pulls"][arm] - released[arm]
        assert 0 <= unreleased < 2 ** len(sizes)  # only the filling array is pending
    assert run.metrics["releases"] == len(arms)


def test_storage_forms_agree_in_law_and_differ_in_space():
    o1 = [anytime_lazy_ucb("0.7,0.6,0.5", 1.0, 200_000, np.random.default_rng(s)) for s in range(40)]
    arr = [
        anytime_lazy_ucb("0.7,0.6,0.5", 1.0, 200_000, np.random.default_rng(100 + s), storage="arrays")
        for s in range(40)
    ]
    a, b = np.array([r.metrics["regret"] for r in o1]), np.array([r.metrics["regret"] for r in arr])
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert abs(a.mean() - b.mean()) < 4 * se
    assert max(r.metrics["stored_values"] for r in o1) == 15
    assert min(r.metrics["stored_values"] for r in arr) > 10_000


def test_laplace_noise_has_scale_one_over_epsilon():
    z = []
    for seed in range(10):
        run = anytime_lazy_ucb("0.6,0.5,0.5", 0.5, 100_000, np.random.default_rng(seed))
        assert set(run.info["ledger"].noise_scale) == {2.0}
        z.extend(np.asarray(run.info["ledger"].noise_value) / 2.0)
    assert_standard_laplace(np.array(z))


def test_regret_is_sublinear_and_curve_consistent():
    ratios = []
    for seed in range(5):
        run = anytime_lazy_ucb("0.75,0.625,0.5,0.375,0.25", 1.0, 2**22, np.random.default_rng(seed), checkpoints=8)
        assert run.curve[1][-1] == pytest.approx(run.metrics["regret"])
        assert np.all(np.diff(run.curve[1]) >= 0)
        ratios.append(run.curve[1][-1] / run.curve[1][0])
    assert np.mean(ratios) < 2.5


def test_inputs():
    with pytest.raises(ConfigError, match="horizon"):
        anytime_lazy_ucb("0.5,0.4,0.3", 1.0, 2, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="storage"):
        anytime_lazy_ucb("0.5,0.4", 1.0, 10, np.random.default_rng(0), storage="disk")
    with pytest.raises(ConfigError, match="reward"):
        anytime_lazy_ucb("0.5,0.4", 1.0, 10, np.random.default_rng(0), reward="cauchy")
