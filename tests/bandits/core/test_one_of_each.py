"""The parts every family shares: the drivers' formulas of core.indices, the one regret trace, the one Laplace
draw, the one instance model and the one reward path (reward models, the direct channel)."""

import math

import numpy as np
import pytest
from scipy import stats

from anonbandits.channels import CentralLaplace, DirectChannel, laplace_noise
from anonbandits.core.indices import (
    dp_mase_laplace_scale,
    dp_mase_threshold,
    hybrid_ucb_array_scale,
    hybrid_ucb_index,
    hybrid_ucb_node_scale,
    lazy_ucb_capacity,
    lazy_ucb_crossing,
    vote_ratio,
)
from anonbandits.core.radii import dpse_threshold, lazy_ucb_index, lazy_ucb_widths
from anonbandits.core.regret import RegretTrace
from anonbandits.core.schedules import ftnl_epoch_length
from anonbandits.core.votes import vote_threshold
from anonbandits.dp.distributed import PROTOCOLS, run_elimination
from anonbandits.dp.hybrid_kernel import choose_arms
from anonbandits.envs import MultiUserInstance
from anonbandits.envs.rewards import draw_rewards, encoded_sums, model_means, sum_rewards
from anonbandits.errors import ConfigError
from anonbandits.multiagent.mase import activity_probabilities, central, mase


def test_lazy_ucb_crossing_is_where_the_two_indices_meet():
    rng = np.random.default_rng(0)
    for _ in range(50):
        size = np.array([4.0, 64.0])  # the rival (0) has the smaller last array
        mean = np.array([rng.uniform(0.1, 0.5), rng.uniform(0.6, 0.9)])
        a, b = lazy_ucb_widths(size, 0.5)
        s = lazy_ucb_crossing(mean[:1] - mean[1], a[:1] - a[1], b[:1] - b[1])[0]
        t = math.exp(s * s)
        below, above = lazy_ucb_index(mean, size, 0.5, t * 0.999), lazy_ucb_index(mean, size, 0.5, t * 1.001)
        assert below[0] < below[1] and above[0] > above[1]
    assert lazy_ucb_crossing(np.array([0.1]), np.array([1.0]), np.array([1.0]))[0] == 0.0  # ahead already
    assert lazy_ucb_capacity(8.0) == 16.0


def test_hybrid_index_is_the_kernels_choice_and_its_scales_the_papers():
    rng = np.random.default_rng(1)
    mean, a, b = rng.random(12), rng.random(12), rng.random(12) / 10
    arm = np.empty(3, np.int64)
    for t in (2, 77, 10**6):
        choose_arms(t, 4, mean, a, b, arm)
        index = hybrid_ucb_index(mean, a, b, t).reshape(3, 4)
        assert arm.tolist() == (np.argmax(index, axis=1) + [0, 4, 8]).tolist()
    assert hybrid_ucb_index(np.array([0.5]), np.array([1.0]), np.array([2.0]), 16)[0] == 0.5 + 2.0 + 8.0
    assert hybrid_ucb_array_scale(0.5) == 4.0
    assert hybrid_ucb_node_scale(3, 0.5) == 12.0 and hybrid_ucb_node_scale(3, 0.5, exact=True) == 16.0


def test_dp_mase_scale_and_threshold_are_dpse_s_at_one_epoch_end():
    assert dp_mase_laplace_scale(0.1, 50) == pytest.approx(0.2)
    width = dp_mase_threshold(np.array([5, 3]), np.array([1, 2]), np.array([700, 3000]), 0.5, 0.1)
    assert width.tolist() == pytest.approx([dpse_threshold(5, 1, 700, 0.5, 0.1), dpse_threshold(3, 2, 3000, 0.5, 0.1)])


def test_vote_ratio_is_rounded_into_the_threshold():
    assert vote_ratio(0.25, 0.5) == pytest.approx(2.0)
    assert vote_threshold(0.05, 0.9) == math.ceil(vote_ratio(0.05, 0.9)) == 29
    assert 0.9 ** vote_ratio(0.05, 0.9) == pytest.approx(0.05)


def test_ftnl_epochs_double_from_one_round():
    assert [ftnl_epoch_length(s) for s in range(5)] == [1, 2, 4, 8, 16]


def test_regret_trace_is_exact_at_every_round_of_played_and_charged_blocks():
    gaps = np.array([0.0, 0.3, 0.5])
    trace = RegretTrace(gaps)
    per_round = []
    for arms, rounds in (([0, 1, 2], 7), (1, 4), ([2, 0], 5), (0, 3)):
        trace.play(arms, rounds)
        cycle = gaps[np.atleast_1d(arms)]
        per_round += [cycle[i % cycle.size] for i in range(rounds)]
    x = np.arange(trace.rounds + 1)
    np.testing.assert_allclose(trace.curve(x), np.concatenate(([0.0], np.cumsum(per_round))), atol=1e-12)
    assert trace.pulls.tolist() == [3 + 2 + 3, 2 + 4, 2 + 3]
    assert trace.regret == pytest.approx(sum(per_round))
    charged = RegretTrace()
    charged.charge(np.array([3, 2]), np.array([1.5, 0.25]))
    charged.charge(np.array([4]), np.array([2.0]))
    expected = np.cumsum([0.0] + [1.5] * 3 + [0.25] * 2 + [2.0] * 4)
    np.testing.assert_allclose(charged.curve(np.arange(10)), expected, atol=1e-12)
    assert charged.rounds == 9 and charged.regret == pytest.approx(expected[-1])
    with pytest.raises(ValueError, match="rounds must lie"):
        charged.curve(np.array([10]))


def test_every_laplace_draw_is_the_generators_own():
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    mech = CentralLaplace(0.5, sensitivity=3)
    assert mech.scale == 6.0 and mech.variance(np.ones(2)).tolist() == [72.0, 72.0]
    np.testing.assert_array_equal(mech.noise(a, 4), b.laplace(0.0, 6.0, 4))
    np.testing.assert_array_equal(laplace_noise(np.array([1.0, 2.0]), a), b.laplace(0.0, np.array([1.0, 2.0])))
    draws = CentralLaplace(2.0).noise(np.random.default_rng(4), 20_000)
    assert stats.kstest(draws, stats.laplace(scale=0.5).cdf).pvalue > 1e-3


def test_one_instance_model_for_many_users_and_for_a_shared_row():
    shared = MultiUserInstance([11.0, 10.8, 10.4], "gaussian-unclipped", 0.5, "problem2")
    assert shared.n_users == 1 and shared.arms == 3 and shared.best == 0 and shared.is_best(0)
    assert shared.row.tolist() == [11.0, 10.8, 10.4] and shared.means.tolist() == [[11.0, 10.8, 10.4]]
    clipped = MultiUserInstance([0.2, 0.95], "gaussian")
    assert clipped.means[0].tolist() == pytest.approx(model_means("gaussian", np.array([0.2, 0.95])).tolist())
    many = MultiUserInstance(np.array([[0.1, 0.9], [0.8, 0.3]]))
    assert many.optimal.tolist() == [1, 0] and many.cluster_sizes.tolist() == [1, 1]
    with pytest.raises(ConfigError, match="2 rows"):
        _ = many.row
    with pytest.raises(ConfigError, match=r"\[0, 1\]"):
        MultiUserInstance([11.0, 10.8], "gaussian")
    with pytest.raises(ConfigError, match="reward"):
        MultiUserInstance([0.1, 0.2], "poisson")


def test_unclipped_gaussian_is_a_named_model_with_exact_sums():
    rng = np.random.default_rng(5)
    mu = np.array([0.9, 11.0])
    assert model_means("gaussian-unclipped", mu).tolist() == mu.tolist()
    draws = draw_rewards("gaussian-unclipped", np.full(50_000, 0.9), rng, sigma=0.5)
    assert draws.max() > 1.0 and abs(draws.mean() - 0.9) < 0.02  # not clipped, mean exactly mu
    sums = sum_rewards("gaussian-unclipped", np.full(20_000, 11.0), np.full(20_000, 9), rng, sigma=0.5)
    assert stats.kstest(sums, stats.norm(99.0, 1.5).cdf).pvalue > 1e-3
    with pytest.raises(ConfigError, match="encoding"):
        encoded_sums("gaussian-unclipped", np.array([0.5]), 4, 10, rng, 0.5)


def test_the_direct_channel_draws_every_reward_the_drivers_need():
    inst = MultiUserInstance([0.3, 0.7], "bernoulli")
    a, b = np.random.default_rng(6), np.random.default_rng(6)
    channel = DirectChannel.of(inst, a)
    np.testing.assert_array_equal(channel.draw(inst.row, (4, 2)), (b.random((4, 2)) < inst.row).astype(float))
    np.testing.assert_array_equal(
        channel.request(np.array([1, 0]), np.array([5, 6])).sums,
        b.binomial(np.array([5, 6]), np.array([0.7, 0.3])).astype(float),
    )
    np.testing.assert_array_equal(channel.encoded(np.array([0, 1]), 3, 10), 3 * b.binomial(10, inst.row))
    calls = []

    def unit(mu, counts, rng):
        calls.append(counts.tolist())
        return mu + counts

    assert DirectChannel(np.zeros(2), unit, a).draw(np.array([1.0, 2.0])).tolist() == [2.0, 3.0]
    assert calls == [[1, 1]]


def test_families_refuse_the_reward_models_they_cannot_draw():
    probs = activity_probabilities(8)
    clipped = MultiUserInstance([0.9, 0.2, 0.1], "gaussian")
    with pytest.raises(ConfigError, match="gaussian-unclipped"):
        mase(clipped, probs, np.random.default_rng(0), delta=0.25, beta=0.5)
    assert central(clipped, probs, np.random.default_rng(0)).metrics["recommended"] == 0  # drawn through the channel
    with pytest.raises(ConfigError, match="encodings"):
        run_elimination(
            PROTOCOLS["dist-dp-se"](0.5, 0.1),
            np.array([0.9, 0.5]),
            reward="gaussian-unclipped",
            reward_sigma=0.5,
            horizon=1000,
            batch_base=2,
            confidence=0.1,
            crs=1.0,
            rng=np.random.default_rng(0),
        )
