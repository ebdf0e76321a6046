"""Algorithm 1 (anon-batched) and Algorithm 2 (anon-etc) of paper 000 on small instances."""

import numpy as np
import pytest

import anondecomp
from anonbandits import registry
from anonbandits.anonymous import NotUBatchedError, anon_batched, anon_etc, etc_assignments
from anonbandits.channels import elicitation_rounds
from anonbandits.envs import MultiUserInstance, clustered_instance
from anonbandits.errors import ConfigError


def _instance(seed=0, n_users=60, n_arms=3, cluster=15, gap=0.2, model="bernoulli"):
    return clustered_instance(n_users, n_arms, cluster, gap, np.random.default_rng(seed), model=model)


def test_clustered_instance_respects_cluster_and_gap():
    inst = _instance(seed=3, n_users=50, n_arms=4, cluster=11, gap=0.15)
    assert inst.cluster_sizes.min() >= 11 and inst.min_cluster >= 11
    top2 = np.sort(inst.means, axis=1)[:, -2:]
    assert np.allclose(top2[:, 1] - top2[:, 0], 0.15)
    with pytest.raises(ConfigError, match="exceeds users"):
        _instance(n_users=20, n_arms=3, cluster=7)
    balanced = _instance(n_users=31, n_arms=3, cluster=0)
    assert balanced.min_cluster >= 10
    narrow = clustered_instance(40, 4, 5, 0.1, np.random.default_rng(0), low=0.3, high=0.6)
    assert narrow.mu.min() >= 0.3 and narrow.mu.max() <= 0.6 + 1e-12
    with pytest.raises(ConfigError, match=r"gap must lie in \(0, 0.3\)"):
        clustered_instance(40, 4, 5, 0.3, np.random.default_rng(0), low=0.3, high=0.6)


@pytest.mark.parametrize("method", list(anondecomp.METHODS))
def test_every_decomposer_runs_anonymously_to_the_horizon(method):
    inst = _instance(seed=1)
    T = 30_000
    run = anon_batched(
        inst, 3, T, U=15, decomposer=method, rng=np.random.default_rng(2), decomposer_rng=np.random.default_rng(3)
    )
    assert run.info["horizon"] == T
    assert run.metrics["min_group_size"] >= 3  # the anonymity parameter C
    assert run.metrics["observations"] > 0
    assert run.info["committed"] is not None and run.metrics["optimal_fraction"] > 0.5  # 1/3 by chance
    r = elicitation_rounds(3)
    assert run.metrics["exploration_rounds"] == sum(b["rounds"] for b in run.records)
    assert all(b["rounds"] == b["assignments"] * r for b in run.records)
    assert run.curve[0][-1] == T and run.curve[1][-1] == pytest.approx(run.metrics["regret"])
    # regret counts every round: exploration (at least its rounds x min regret) + commit
    assert run.metrics["regret"] > 0


def test_same_seed_same_run_and_exact_regret_accounting():
    inst = _instance(seed=4, gap=0.3)
    a = anon_batched(inst, 2, 20_000, U=15, decomposer="polytope", rng=np.random.default_rng(9))
    b = anon_batched(inst, 2, 20_000, U=15, decomposer="polytope", rng=np.random.default_rng(9))
    assert a.metrics["regret"] == b.metrics["regret"] and a.metrics["observations"] == b.metrics["observations"]
    assert np.array_equal(a.info["committed"], b.info["committed"])
    # the commit phase's regret is exactly the committed arms' gaps times its length
    commit_rounds = 20_000 - a.metrics["exploration_rounds"]
    x, y = a.curve
    tail = inst.gaps[np.arange(inst.n_users), a.info["committed"]].sum() * commit_rounds
    assert a.metrics["regret"] - np.interp(a.metrics["exploration_rounds"], x, y) == pytest.approx(tail)


def test_regret_is_sublinear():
    """regret / T falls as T grows (Algorithm 1, polytope, fixed instance, mean of 3 seeds)."""
    inst = _instance(seed=5, n_users=40, n_arms=2, cluster=20, gap=0.2)
    per_round = []
    for T in (10_000, 100_000, 1_000_000):
        regrets = [
            anon_batched(inst, 2, T, U=20, decomposer="polytope", rng=np.random.default_rng(s)).metrics["regret"]
            for s in range(3)
        ]
        per_round.append(np.mean(regrets) / T)
    assert per_round[0] > per_round[1] > per_round[2]
    # a 3-batch minimax grid explores for ~T'^(6/7) rounds: regret/T ~ T^(-1/7), 100^(-1/7) = 0.52
    assert per_round[2] < 0.6 * per_round[0]


def test_run_stops_exactly_at_the_horizon_mid_batch():
    inst = _instance(seed=6)
    # alpha far below the true ratio: the exploration batches overrun T, which cuts the run mid-batch
    run = anon_batched(inst, 3, 9_999, U=15, decomposer="polytope", alpha=0.05, rng=np.random.default_rng(0))
    assert run.info["horizon"] == 9_999 and run.info["committed"] is None
    assert run.records[-1]["rounds"] < run.records[-1]["assignments"] * elicitation_rounds(3)


def test_lost_support_raises_unless_best_effort():
    # one arm is optimal for exactly U users; a tiny gamma eliminates arms on noise, losing its support
    inst = _instance(seed=7, n_users=24, n_arms=3, cluster=8, gap=0.05)
    kwargs = dict(U=8, decomposer="auto", gamma=1e-4, batches=4, grid="geometric")
    with pytest.raises(NotUBatchedError, match="not 8-batched") as err:
        anon_batched(inst, 1, 40_000, rng=np.random.default_rng(1), **kwargs)
    assert err.value.arms and err.value.batch >= 2
    run = anon_batched(inst, 1, 40_000, best_effort=True, rng=np.random.default_rng(1), **kwargs)
    assert run.info["horizon"] == 40_000 and run.metrics["min_group_size"] >= 1


def test_anon_batched_input_checks():
    inst = _instance()
    with pytest.raises(ConfigError, match="at least C \\+ 1"):
        anon_batched(inst, 15, 10_000, U=15, rng=np.random.default_rng(0))
    with pytest.raises(ConfigError, match="optimal for only"):
        anon_batched(inst, 3, 10_000, U=25, rng=np.random.default_rng(0))
    with pytest.raises(ConfigError, match="decomposer must be one of"):
        anon_batched(inst, 3, 10_000, U=15, decomposer="magic", rng=np.random.default_rng(0))


def test_etc_groups_and_arm_offsets():
    a = etc_assignments(n_users=11, n_arms=4, C=2, arm_offset=True)
    # groups {0,1,2}, {3,4,5}, {6,7,8,9,10} (the remainder joins the last group); group s plays (q + s) mod K
    assert a[0].tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2]
    assert a[3].tolist() == [3, 3, 3, 0, 0, 0, 1, 1, 1, 1, 1]
    b = etc_assignments(n_users=11, n_arms=4, C=2, arm_offset=False)
    assert np.all(b == np.arange(4)[:, None])


@pytest.mark.parametrize("offset", [True, False])
def test_etc_commits_to_the_best_arms(offset):
    inst = _instance(seed=8, n_users=30, n_arms=3, cluster=10, gap=0.3)
    run = anon_etc(inst, 2, 300_000, arm_offset=offset, explore_scale=1.0, rng=np.random.default_rng(4))
    assert run.info["horizon"] == 300_000 and run.info["committed"] is not None
    assert run.metrics["optimal_fraction"] == 1.0
    assert run.metrics["min_group_size"] >= 2
    assert run.metrics["exploration_rounds"] < 300_000


def test_etc_needs_more_users_than_c():
    inst = MultiUserInstance(np.tile([0.3, 0.6], (3, 1)))
    with pytest.raises(ConfigError, match="more users than C"):
        anon_etc(inst, 3, 1000, rng=np.random.default_rng(0))


def test_registry_runs_both_algorithms_with_documented_metrics():
    for name, label in (("anon-batched", "anon-batched/polytope"), ("anon-etc", "anon-etc")):
        spec = registry.get(name)
        given = {"users": 40, "arms": 2, "C": 2, "horizon": 5_000}
        if name == "anon-batched":
            given["decomposer"] = "polytope"
        out = spec.run(spec.resolve(given), seed=0)
        assert {"regret", "observations", "min_group_size"} <= set(out.metrics)
        assert out.curve is not None and out.curve[0][-1] == 5_000
        assert out.label == label
    with pytest.raises(ConfigError, match="decomposer"):
        registry.get("anon-batched").resolve({"decomposer": "nope"})
    assert registry.get("anon-batched").resolve({"best_effort": "true"})["best_effort"] is True
