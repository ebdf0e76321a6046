"""The regret driver of batched learners over either channel (``se``/``dp-se --channel anonymous``), BaSE behind
the learner protocol with Algorithm 1 unchanged, and the one-line refusal of ``--channel`` elsewhere."""

from __future__ import annotations

import numpy as np
import pytest

import anondecomp
from anonbandits import simulate
from anonbandits.anonymous import anon_batched, batched_regret
from anonbandits.anonymous.regret import finish_run
from anonbandits.channels import AnonymousChannel, CentralLaplace, elicitation_rounds, elicitation_variance
from anonbandits.core import BatchedElimination, default_batches, static_grid
from anonbandits.core.learners import BaSEElimination, BatchLearner, EpochElimination
from anonbandits.dp import se
from anonbandits.envs.instances import MultiUserInstance, clustered_instance
from anonbandits.errors import ConfigError
from anonbandits.registry import channel_algorithms


def test_base_satisfies_the_learner_protocol_and_asks_for_whole_samples():
    learner = BaSEElimination(3, 4, np.array([0, 10, 50]))
    assert isinstance(learner, BatchLearner)
    learner.active[1, 1:] = False
    assert learner.demand().tolist() == [[3, 3, 3, 3], [10, 0, 0, 0], [3, 3, 3, 3]]
    assert learner.demand().dtype == np.int64 and learner.exploring.tolist() == [True] * 3
    wanted = learner.demand()
    learner.update(wanted * np.array([0.9, 0.1, 0.1, 0.1]), wanted, 0.25)
    assert not learner.exploring.any() and not learner.demand().any()


def test_anon_batched_is_a_plain_base_loop_over_the_channel():
    """Algorithm 1 through the adapter draws and decides exactly as BaSE driven by hand."""
    C, T = 2, 60_000
    instance = clustered_instance(24, 3, 8, 0.2, np.random.default_rng(5))
    run = anon_batched(
        instance,
        C,
        T,
        U=8,
        decomposer="polytope",
        alpha=1.0,
        rng=np.random.default_rng(6),
        decomposer_rng=np.random.default_rng(0),
    )
    base_horizon = T // elicitation_rounds(C)
    learner = BatchedElimination(
        24, 3, static_grid("minimax", base_horizon, default_batches(base_horizon)), sigma2=(4 * C + 1) / 4
    )
    channel = AnonymousChannel(instance, C, T, np.random.default_rng(6))
    while learner.exploring and not channel.done:
        graph = anondecomp.DemandGraph.from_batched(float(learner.batch_length()), learner.active.copy())
        res = anondecomp.decompose(graph, C, method="polytope", rng=np.random.default_rng(0))
        fb = channel.elicit(res.assignments, res.multiplicities)
        learner.update(fb.sums, fb.counts)
    plain = finish_run(channel, instance, learner.commit, [], {})
    m, p = run.metrics, plain.metrics
    assert m["regret"] == p["regret"] and np.array_equal(run.info["committed"], plain.info["committed"])
    assert m["exploration_rounds"] == p["exploration_rounds"] and m["observations"] == p["observations"]


@pytest.mark.parametrize("decomposer", ["polytope", "greedy", "block"])
def test_se_over_the_anonymous_channel_commits_and_costs_2c_plus_2_rounds_per_assignment(decomposer):
    C = 2
    instance = clustered_instance(24, 3, 0, 0.4, np.random.default_rng(1))
    learners = EpochElimination(24, 3, confidence=0.01, sigma2=elicitation_variance(C))
    run = batched_regret(instance, learners, 10**7, C=C, decomposer=decomposer, rng=np.random.default_rng(2))
    m = run.metrics
    assert m["min_group_size"] >= C
    assert all(b["rounds"] == b["assignments"] * (2 * C + 2) for b in run.records)
    assert m["exploration_rounds"] == sum(b["assignments"] for b in run.records) * (2 * C + 2)
    assert np.array_equal(run.info["committed"], instance.optimal) and run.info["stopped"] == 1.0
    # committed to the best arms: no regret after the exploration
    rounds, regret = run.curve
    assert np.allclose(regret[rounds >= m["exploration_rounds"]], m["regret"]) and m["regret"] > 0


def test_direct_channel_regret_matches_a_per_round_loop():
    """Deterministic rewards (means 0 or 1): the learners' decisions are known, so a per-round loop replays them.
    User 0 stops after one epoch and plays its recommendation; user 1's two tied arms keep it exploring until
    the horizon cuts an epoch."""
    mu = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    instance = MultiUserInstance(mu=mu)
    T = 50_000
    run = batched_regret(
        instance, EpochElimination(2, 3, confidence=0.1), T, channel="direct", rng=np.random.default_rng(0)
    )
    learners, per_round = EpochElimination(2, 3, confidence=0.1), []
    while learners.exploring.any() and len(per_round) < T:
        demand, rec = learners.demand(), learners.recommendation()
        longest = int(demand.sum(axis=1).max())
        sequences = [
            list(np.repeat(np.arange(3), demand[i])) + [rec[i]] * (longest - demand[i].sum()) for i in range(2)
        ]
        for t in range(longest):
            per_round.append(sum(instance.gaps[i, sequences[i][t]] for i in range(2)))
        learners.update(demand * mu, demand, 0.25)
    cumulative = np.concatenate(([0.0], np.cumsum(per_round)))[: T + 1]
    assert run.metrics["min_group_size"] == 1 and run.info["committed"] is None
    assert run.metrics["regret"] == pytest.approx(cumulative[T])
    assert np.allclose(run.curve[1], cumulative[run.curve[0]])


def test_registry_se_channels_keep_the_single_user_engine_and_run_the_anonymous_one():
    direct = simulate("se", seed=3, horizon=20_000)
    assert direct.metrics == se("0.9,0.8,0.7", 20_000, np.random.default_rng(3)).metrics
    anon = simulate(
        "se",
        seed=3,
        channel="anonymous",
        users=24,
        arms=3,
        C=2,
        gap=0.4,
        horizon=10**6,
        confidence="0.01",
        decomposer="polytope",
    )
    m = anon.metrics
    assert m["min_group_size"] >= 2 and m["optimal_fraction"] == 1.0 and m["users_stopped"] == 1.0
    assert m["exploration_rounds"] == m["assignments"] * 6 and m["privacy_epsilon"] is None
    assert anon.label == "se/anonymous/polytope"


def test_dp_se_over_the_anonymous_channel_with_privacy_widens_by_the_noise():
    C, eps = 2, 1.0
    instance = clustered_instance(24, 2, 0, 0.4, np.random.default_rng(4))
    learners = EpochElimination(24, 2, confidence=0.01, epsilon=eps, sigma2=elicitation_variance(C))
    run = batched_regret(
        instance,
        learners,
        10**7,
        C=C,
        decomposer="polytope",
        rng=np.random.default_rng(5),
        mechanism=CentralLaplace(eps),
        noise_rng=np.random.default_rng(6),
        sum_epsilon=eps,
    )
    assert run.metrics["min_group_size"] >= C and run.info["exposure"]
    assert run.info["sigma2"] > (4 * C + 1) / 4  # the released sums' noise raised the variance proxy
    assert np.array_equal(run.info["committed"], instance.optimal)
    m = simulate(
        "dp-se",
        seed=0,
        channel="anonymous",
        users=24,
        arms=2,
        C=C,
        gap=0.4,
        horizon=10**6,
        epsilon=eps,
        privacy="central",
    ).metrics
    assert m["privacy_epsilon"] == eps and m["min_group_size"] >= C and m["privacy_delta"] == 0.0


def test_anon_bai_composes_with_privacy():
    m = simulate("anon-bai", seed=0, users=24, arms=2, C=2, gap=0.4, privacy="central", epsilon=1.0).metrics
    assert m["privacy_epsilon"] == 1.0 and m["min_group_size"] >= 2 and m["users_approx_optimal"] == 1.0
    with pytest.raises(ConfigError, match="needs the anonymous channel"):
        simulate("anon-bai", seed=0, channel="direct", privacy="central", epsilon=1.0)


def test_channel_is_refused_by_every_other_algorithm_naming_those_that_take_it():
    takers = channel_algorithms()
    assert {"anon-bai", "se", "dp-se"} <= set(takers)
    with pytest.raises(ConfigError, match=r"'feraud' has no parameter 'channel'.*taken by .*\bdp-se\b.*\bse\b"):
        simulate("feraud", seed=0, channel="anonymous")
    with pytest.raises(ConfigError, match="se: --users, --C only with --channel anonymous"):
        simulate("se", seed=0, users=10, C=2)
    with pytest.raises(ConfigError, match="dp-se: --order only with --channel direct"):
        simulate("dp-se", seed=0, channel="anonymous", order="blocks")
    with pytest.raises(ConfigError, match="privacy none needs|needs privacy central"):
        simulate("se", seed=0, channel="anonymous", epsilon=1.0)


def test_the_driver_gives_base_the_surplus_only_with_use_surplus():
    """Greedy over-covers (a user fills groups on every arm in turn): with ``use_surplus`` BaSE takes every
    estimate, as Algorithm 1 does; by default the driver keeps each learner's demand and counts the rest. One
    exploration batch, so both runs decompose the same graph."""
    C, T = 2, 60_000
    instance = clustered_instance(24, 3, 8, 0.2, np.random.default_rng(5))
    grid = static_grid("minimax", T // elicitation_rounds(C), 2)
    info = {
        use: batched_regret(
            instance,
            BaSEElimination(24, 3, grid, sigma2=elicitation_variance(C)),
            T,
            C=C,
            decomposer="greedy",
            rng=np.random.default_rng(6),
            use_surplus=use,
        ).info
        for use in (False, True)
    }
    assert info[False]["surplus"] > 0 and info[True]["surplus"] == 0
    assert info[True]["samples"] == info[False]["samples"] + info[False]["surplus"]
    with pytest.raises(ConfigError, match="best_effort"):  # its learners would get fewer samples than asked
        batched_regret(
            instance,
            BaSEElimination(24, 3, grid, sigma2=elicitation_variance(C)),
            T,
            C=C,
            rng=np.random.default_rng(6),
            best_effort=True,
        )
