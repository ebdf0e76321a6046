"""FTNL with Report Noisy Max and naive FTNL (paper 001, Algorithms 2-3, Sec. 5), experts setting."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dpucb_helpers import assert_standard_laplace, check_ledger, exact_sums

from anonbandits.dp import ftnl
from anonbandits.errors import ConfigError


def _reference_ftnl(mu, eps, horizon, rng, scale):
    """Algorithms 2-3 round by round (reward vectors equal to the means), initial action 0."""
    K, action, played, s = len(mu), 0, [], 0
    while len(played) < horizon:
        gains = np.zeros(K)
        for _ in range(2**s):
            if len(played) == horizon:
                return np.array(played)
            played.append(action)
            gains += mu
        if len(played) < horizon:
            action = int(np.argmax(gains + rng.laplace(0, scale, K)))
        s += 1
    return np.array(played)


@pytest.mark.parametrize(("naive", "mult", "horizon"), [(False, 1.0, 5000), (False, 2.0, 4095), (True, 1.0, 3000)])
def test_epoch_simulation_matches_per_round_algorithm(naive, mult, horizon):
    mu = np.array([0.5, 0.5078125, 0.5, 0.49609375])
    eps = 0.05
    grid = np.arange(1, horizon + 1)
    run = ftnl(
        mu,
        eps,
        horizon,
        np.random.default_rng(5),
        naive=naive,
        noise_multiplier=mult,
        initial=0,
        reward=exact_sums,
        checkpoints=grid,
    )
    scale = mu.size / eps if naive else mult / eps
    played = _reference_ftnl(mu, eps, horizon, np.random.default_rng(5), scale)
    np.testing.assert_allclose(run.curve[1], np.cumsum(mu.max() - mu[played]), rtol=0, atol=1e-9)
    assert run.metrics["releases"] == math.floor(math.log2(horizon))  # one RNM per epoch that ends before T


def _lower_bound_instance(K, delta, best):
    """Paper 001's lower-bound instance (Appendix H): K independent Bernoulli components, component ``best`` at 1/2 +
    delta, others 1/2."""
    mu = np.full(K, 0.5)
    mu[best] += delta
    return mu


@pytest.mark.parametrize("naive", [False, True])
def test_regret_is_bounded_on_the_lower_bound_instance(naive):
    K, delta, eps, horizon = 10, 0.1, 1.0, 2**20
    rng = np.random.default_rng(8)
    final, late = [], []
    for seed in range(40):
        mu = _lower_bound_instance(K, delta, int(rng.integers(K)))
        run = ftnl(mu, eps, horizon, np.random.default_rng(seed), naive=naive, checkpoints=2)
        final.append(run.metrics["regret"])
        late.append(run.curve[1][1] - run.curve[1][0])  # regret over rounds T/2 .. T
    # Theorem 7 (App. G) with one bracket J_1 of K - 1 actions; K ln K-type bound for the naive variant.
    bound = 1 + 256 * (1 + math.log(K - 1)) / min(delta, eps)
    if naive:
        bound *= K
    assert np.mean(final) <= bound
    assert np.mean(late) < 1.0  # no regret after convergence: bounded, not growing with T
    assert np.mean(final) < 0.01 * delta * horizon


def test_rnm_releases_use_each_epoch_once_and_forget():
    run = ftnl("0.6,0.5,0.55,0.4", 0.5, 100_000, np.random.default_rng(2))
    check_ledger(run.info["ledger"], run.info["pulls"], experts=True)
    counts = np.asarray(run.info["ledger"].block_count)
    np.testing.assert_array_equal(counts, 2 ** np.arange(counts.size))  # epoch s: 2^s rounds, once
    assert np.bincount(run.info["ledger"].noise_release).tolist() == [4] * run.metrics["releases"]


@pytest.mark.parametrize(("naive", "mult", "scale"), [(False, 1.0, 2.0), (False, 2.0, 4.0), (True, 1.0, 8.0)])
def test_laplace_noise_scale(naive, mult, scale):
    z = []
    for seed in range(8):
        run = ftnl("0.6,0.5,0.55,0.4", 0.5, 2**16, np.random.default_rng(seed), naive=naive, noise_multiplier=mult)
        assert set(run.info["ledger"].noise_scale) == {scale}
        z.extend(np.asarray(run.info["ledger"].noise_value) / scale)
    assert_standard_laplace(np.array(z))


def test_inputs():
    with pytest.raises(ConfigError, match="initial"):
        ftnl("0.5,0.4", 1.0, 10, np.random.default_rng(0), initial=2)
    with pytest.raises(ConfigError, match="initial"):
        ftnl("0.5,0.4", 1.0, 10, np.random.default_rng(0), initial="first")
    with pytest.raises(ConfigError, match="noise_multiplier"):
        ftnl("0.5,0.4", 1.0, 10, np.random.default_rng(0), noise_multiplier=0)
