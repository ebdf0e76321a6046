"""The 2C+2-round sub-algorithm, the anonymity auditor and the audited channel (paper 000, Section 3.1)."""

import numpy as np
import pytest
from scipy import stats

from anonbandits.channels import AnonymousChannel
from anonbandits.channels.anonymous import (
    AnonymityAuditor,
    elicitation_rounds,
    partition_groups,
    round_labels,
)
from anonbandits.envs import MultiUserInstance
from anonbandits.errors import AnonymityViolation


def _estimate_variance(mu_user: np.ndarray, labels: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Exact variance of one estimate r_{s,0} - r_{s,k}: Bernoulli variances of G (round 0) and G \\ {k}."""
    v = mu_user * (1 - mu_user)
    group_var = np.bincount(labels[labels >= 0], weights=v[labels >= 0])
    out = np.full(labels.shape, np.nan)
    ok = labels >= 0
    out[ok] = 2 * group_var[labels[ok]] - v[ok]
    return out


@pytest.mark.parametrize("C,n_users", [(1, 7), (2, 9), (3, 30), (5, 13)])
def test_groups_have_sizes_c_plus_1_to_2c_plus_1(C, n_users):
    rng = np.random.default_rng(C)
    a = rng.integers(0, 3, size=(50, n_users))
    labels, positions = partition_groups(a, 3, C)
    for row in range(len(a)):
        counts = np.bincount(a[row], minlength=3)
        for arm in range(3):
            on_arm = a[row] == arm
            if counts[arm] <= C:
                assert np.all(labels[row, on_arm] == -1)
                continue
            lab = labels[row, on_arm]
            assert np.all(lab >= 0)
            sizes = np.bincount(lab)[np.unique(lab)]
            assert len(sizes) == counts[arm] // (C + 1)
            assert sizes.min() >= C + 1 and sizes.max() <= 2 * C + 1
            for g in np.unique(lab):
                pos = np.sort(positions[row][labels[row] == g])
                assert np.array_equal(pos, np.arange(1, len(pos) + 1))
        # groups are numbered 0..S-1 within the row, never shared between arms
        for g in np.unique(labels[row][labels[row] >= 0]):
            assert len(np.unique(a[row][labels[row] == g])) == 1
    # every observed group of every round has at least C users
    rl = round_labels(labels, positions, C)
    assert rl.shape[1] == elicitation_rounds(C)
    for row in range(len(a)):
        for k in range(rl.shape[1]):
            lab = rl[row, k][rl[row, k] >= 0]
            if lab.size:
                assert np.bincount(lab)[np.unique(lab)].min() >= C


def test_auditor_rejects_group_of_c_minus_1_users():
    C = 4
    auditor = AnonymityAuditor(C)
    groups = np.array([[0, 0, 0, -1, 1, 1, 1, 1]])  # group 0 has C - 1 = 3 users
    with pytest.raises(AnonymityViolation, match="3 users, fewer than C = 4"):
        auditor.release(groups, np.zeros((1, 8), int), np.ones((1, 8)))
    assert auditor.observations == 0 and auditor.min_group_size is None


def test_auditor_rejects_mixed_arms_and_counts_what_it_serves():
    auditor = AnonymityAuditor(2)
    with pytest.raises(AnonymityViolation, match="different arms"):
        auditor.release(np.array([[0, 0, 0]]), np.array([[1, 1, 2]]), np.ones((1, 3)))
    groups = np.array([[0, 0, 1, 1, 1], [0, 0, 0, 0, -1]])
    rewards = np.array([[1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 1.0, 1.0, 1.0, 9.0]])
    sums = auditor.release(groups, np.zeros((2, 5), int), rewards, repetitions=np.array([3, 7]))
    assert sums[0].tolist() == [3.0, 12.0]
    assert sums[1, 0] == 4.0 and np.isnan(sums[1, 1])
    assert auditor.observations == 2 * 3 + 1 * 7
    assert auditor.min_group_size == 2


def test_estimate_is_unbiased_with_its_exact_variance():
    """Mean of m estimates per user against mu; z-scores from the exact variance, chi-square test."""
    rng = np.random.default_rng(12345)
    n_users, C, m = 23, 3, 4000
    mu = rng.uniform(0.1, 0.9, size=(n_users, 2))
    inst = MultiUserInstance(mu)
    assignment = np.r_[np.zeros(15, int), np.ones(8, int)]
    channel = AnonymousChannel(inst, C, 10**9, np.random.default_rng(7))
    fb = channel.elicit(assignment, [m])
    labels, positions = partition_groups(assignment[None], 2, C)
    mu_user = mu[np.arange(n_users), assignment]
    var = _estimate_variance(mu_user, labels[0], positions[0])
    assert np.array_equal(fb.counts[np.arange(n_users), assignment], np.full(n_users, m))
    mean = fb.sums[np.arange(n_users), assignment] / m
    z = (mean - mu_user) / np.sqrt(var / m)
    assert np.all(np.abs(z) < 4.5)
    assert stats.chi2.sf(np.sum(z**2), df=n_users) > 1e-3
    # the other arm got no estimate at all
    assert np.all(fb.counts[np.arange(n_users), 1 - assignment] == 0)


def test_single_estimates_have_the_lemma_2_variance():
    """m = 1 repetitions one at a time: sample variance of each user's estimate matches its exact value."""
    rng = np.random.default_rng(99)
    n_users, C, reps = 6, 2, 3000
    mu = rng.uniform(0.2, 0.8, size=(n_users, 2))
    channel = AnonymousChannel(MultiUserInstance(mu), C, 10**9, np.random.default_rng(3))
    assignment = np.zeros(n_users, int)
    est = np.array([channel.elicit(assignment, [1]).sums[:, 0] for _ in range(reps)])
    labels, positions = partition_groups(assignment[None], 2, C)
    var = _estimate_variance(mu[:, 0], labels[0], positions[0])
    # sample variance of n near-normal draws: relative sd sqrt(2/(n-1)); allow 5 sd
    assert np.all(np.abs(est.var(axis=0, ddof=1) / var - 1) < 5 * np.sqrt(2 / (reps - 1)))
    # 6 users, C = 2: two groups of 3 observed in each of the 2C+2 rounds; rounds k drop one user
    assert channel.observations == reps * elicitation_rounds(C) * 2
    assert channel.min_group_size == C


def test_gaussian_rewards_estimate_the_clipped_mean():
    rng = np.random.default_rng(5)
    n_users, C, m = 8, 1, 3000
    mu = rng.uniform(0.0, 1.0, size=(n_users, 2))
    inst = MultiUserInstance(mu, model="gaussian")
    channel = AnonymousChannel(inst, C, 10**9, np.random.default_rng(8))
    fb = channel.elicit(np.zeros(n_users, int), [m])
    mean = fb.sums[:, 0] / m
    # each estimate is a difference of two sums of at most 2C+1 values in [0, 1]: variance <= (4C+1)/4
    assert np.all(np.abs(mean - inst.means[:, 0]) < 4.5 * np.sqrt((4 * C + 1) / 4 / m))


def test_channel_stops_exactly_at_the_horizon_mid_repetition():
    mu = np.tile([0.8, 0.2], (10, 1))
    inst = MultiUserInstance(mu)
    C = 2
    r = elicitation_rounds(C)
    horizon = 5 * r + 3  # five full repetitions and 3 rounds of a sixth
    channel = AnonymousChannel(inst, C, horizon, np.random.default_rng(0))
    bad = np.ones(10, int)  # everyone on the 0.2 arm: regret 0.6 per user-round
    fb = channel.elicit(bad, [100])
    assert channel.t == horizon and channel.done
    assert fb.counts[:, 1].tolist() == [5] * 10  # the cut repetition yields no estimate
    books = channel._ledger  # the simulator's books, out of the learner's view
    assert books.regret == pytest.approx(horizon * 10 * 0.6)
    # 10 users on one arm: 3 groups (4, 3, 3 users); 3 observations per round, all played rounds served
    assert channel.observations == 3 * horizon
    assert channel.play(np.zeros(10, int)) == 0
    x, y = books.curve(50)
    assert x[-1] == horizon and y[-1] == pytest.approx(books.regret)
    assert np.allclose(y, x * 6.0)
