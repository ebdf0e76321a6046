"""Hybrid-UCB (paper 001, Algorithm 4) and its binary-mechanism noise."""

from __future__ import annotations

import numpy as np
import pytest
from dpucb_helpers import exact_sums
from scipy import stats

from anonbandits.dp import hybrid_ucb, hybrid_ucb_batch
from anonbandits.errors import ConfigError
from anonbandits.reference.dp import per_round_hybrid_ucb


class _KnownLaplace:
    """A stand-in generator whose Laplace draws are known (Hybrid-UCB draws nothing else with exact rewards):
    the node noise of round t is t times its scale; array noises are 0, but -1e9 for arm 1's initial one, so
    that only arm 0 is pulled after the initialization."""

    def laplace(self, loc, scale, size=None):
        if size is None:
            return np.where(np.arange(np.size(scale)) == 1, -1e9, 0.0)
        return np.repeat(np.arange(3.0, 3 + size[0])[:, None], size[1], axis=1)  # one chunk from round 3


def test_private_mean_carries_the_binary_mechanisms_dyadic_sum():
    """After O = 2^r - 1 + k pulls (tree r at count k) the private mean's noise is the sum, over the set bits j
    of k, of the node created when the tree's count was (k >> j) << j (at round 2^r + that count, with the
    tree's scale Lap(2r/eps)); a completed tree's nodes leave with it (the new array's noise is 0 here)."""
    for horizon in range(3, 140):
        batch = hybrid_ucb_batch(np.array([0.5, 0.25]), [2.0], horizon, _KnownLaplace(), reward=exact_sums)
        pulls = horizon - 1
        assert batch.pulls[0].tolist() == [pulls, 1]
        r = (pulls + 1).bit_length() - 1
        k = pulls - (2**r - 1)
        if k == 0:  # this pull completed tree r - 1
            r, k = r - 1, 2 ** (r - 1)
        expected = sum(r * (2**r + ((k >> j) << j)) for j in range(r + 1) if k >> j & 1)
        assert (batch.noisy_means[0, 0] - 0.5) * pulls == pytest.approx(expected, rel=1e-12)


def _predicted_noise_var(pulls: np.ndarray, eps: float, shift: int) -> np.ndarray:
    """Variance of the noise in the private mean after O pulls: one Lap(2/eps) per full array (arrays 0..r-1)
    plus popcount(k) tree nodes with Lap(2(r + shift)/eps), where O = 2^r - 1 + k, 1 <= k <= 2^r."""
    out = np.empty(pulls.shape)
    for idx, o in np.ndenumerate(pulls):
        if o == 1:
            out[idx] = 2 * (2 / eps) ** 2
            continue
        r = int(o).bit_length() - 1
        k = int(o) - (2**r - 1)
        out[idx] = r * 2 * (2 / eps) ** 2 + bin(k).count("1") * 2 * (2 * (r + shift) / eps) ** 2
    return out


@pytest.mark.parametrize(("tree_noise", "shift"), [("paper", 0), ("exact", 1)])
def test_laplace_noise_scales_of_arrays_and_tree_nodes(tree_noise, shift):
    # A huge epsilon makes the decisions (almost surely) noise-free, so the private means at the end are
    # not selected on their noise; each pull count's noise is rescaled by its predicted standard deviation.
    mu, eps = np.array([0.75, 0.25]), 1e4
    pulls, z = [], []
    for horizon in (2, 3, 4, 6, 9, 16, 40):
        batch = hybrid_ucb_batch(
            mu, np.full(2000, eps), horizon, np.random.default_rng(horizon), tree_noise=tree_noise, reward=exact_sums
        )
        noise = (batch.noisy_means - mu) * batch.pulls
        z.append((noise / np.sqrt(_predicted_noise_var(batch.pulls, eps, shift))).ravel())
        pulls.append(batch.pulls.ravel())
    pulls, z = np.concatenate(pulls), np.concatenate(z)
    groups = [o for o in np.unique(pulls) if (pulls == o).sum() >= 1000]
    assert {1, 2, 3} <= set(groups) and len(groups) >= 8
    for o in groups:
        g = z[pulls == o]
        assert abs(g.mean()) < 4 / np.sqrt(g.size)
        assert abs(g.var() - 1) < 4 * np.sqrt(5 / g.size)  # Laplace sums: kurtosis at most 6


def test_finds_best_arm_on_easy_instance():
    batch = hybrid_ucb_batch(np.array([0.1, 0.5, 0.9]), np.full(12, 8.0), 20_000, np.random.default_rng(0))
    assert np.all(batch.pulls.argmax(axis=1) == 2) and np.all(batch.best_arm == 2)
    run = hybrid_ucb("0.9,0.5,0.1", 8.0, 20_000, np.random.default_rng(1))
    assert run.metrics["best_arm_found"] and run.metrics["releases"] == 20_000


def test_regret_is_sublinear():
    runs = [hybrid_ucb("0.75,0.5,0.25", 64.0, 2**16, np.random.default_rng(s), checkpoints=8) for s in range(6)]
    curves = np.array([r.curve[1] for r in runs])
    assert np.all(np.diff(curves, axis=1) >= 0)
    np.testing.assert_allclose(curves[:, -1], [r.metrics["regret"] for r in runs])
    assert curves[:, -1].mean() / curves[:, 0].mean() < 3.0  # R(T) / R(T/8); linear regret gives 8


def test_larger_epsilon_gives_less_regret():
    small = [hybrid_ucb("0.75,0.5,0.25", 0.5, 20_000, np.random.default_rng(s)).metrics["regret"] for s in range(8)]
    large = [hybrid_ucb("0.75,0.5,0.25", 64.0, 20_000, np.random.default_rng(s)).metrics["regret"] for s in range(8)]
    assert np.mean(large) < 0.5 * np.mean(small)


def test_inputs():
    with pytest.raises(ConfigError, match="tree_noise"):
        hybrid_ucb("0.5,0.4", 1.0, 10, np.random.default_rng(0), tree_noise="loose")
    with pytest.raises(ConfigError, match="epsilon"):
        hybrid_ucb_batch(np.array([0.5, 0.4]), [1.0, -1.0], 10, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="horizon"):
        hybrid_ucb("0.5,0.4,0.3", 1.0, 2, np.random.default_rng(0))


@pytest.mark.parametrize("tree_noise", ["paper", "exact"])
def test_noise_free_decisions_follow_the_papers_index(tree_noise):
    """With rewards equal to their means and a huge epsilon, every decision is the argmax of Algorithm 4's
    statistical index (noise and privacy width vanish; the law test below covers them): the pulls equal those
    of the plain per-round loop written from the paper, through the per-round (non-Bernoulli) path."""
    mu = np.array([0.75, 0.5, 0.625, 0.25])
    run = hybrid_ucb(mu, 1e9, 3000, np.random.default_rng(0), reward=exact_sums, tree_noise=tree_noise)
    regret, pulls = per_round_hybrid_ucb(
        mu, 1e9, 3000, np.random.default_rng(1), exact_rewards=True, tree_noise=tree_noise
    )
    np.testing.assert_array_equal(run.info["pulls"], pulls)
    assert run.metrics["regret"] == pytest.approx(regret, rel=1e-12)
    assert run.metrics["laplace_draws"] > 3000 and run.metrics["releases"] == 3000


@pytest.mark.slow
def test_batch_has_the_law_of_the_per_round_loop():
    """Private Bernoulli runs: the lockstep batch and the per-round loop from the paper give the same law of
    the regret and of the best arm's pulls (two-sample Kolmogorov-Smirnov tests, independent streams). At these
    settings the test rejects a loop whose tree-node noise is twice the paper's (p ~ 1e-8)."""
    mu, eps, horizon, runs = np.array([0.9, 0.5, 0.4]), 2.0, 2000, 200
    batch = hybrid_ucb_batch(mu, np.full(runs, eps), horizon, np.random.default_rng(2))
    ref = [per_round_hybrid_ucb(mu, eps, horizon, np.random.default_rng(10**6 + s)) for s in range(runs)]
    assert stats.ks_2samp(batch.regret, [r for r, _ in ref]).pvalue > 1e-3
    assert stats.ks_2samp(batch.pulls[:, 0], [p[0] for _, p in ref]).pvalue > 1e-3


def test_library_batch_takes_per_run_means_and_still_checks_them():
    """The public (argument-checking) batch accepts the (runs, arms) means it documents; bad means stay errors."""
    batch = hybrid_ucb_batch(
        np.array([[0.9, 0.1], [0.2, 0.8]]), [1.0, 1.0], 50, np.random.default_rng(0), checkpoints=2
    )
    assert batch.best_arm.tolist() == [0, 1]
    with pytest.raises(ConfigError, match="outside"):
        hybrid_ucb_batch(np.array([[0.9, 1.5]]), [1.0], 50, np.random.default_rng(0))
