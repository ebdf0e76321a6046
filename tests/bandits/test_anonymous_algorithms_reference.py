"""Algorithm 1 (``anon_batched``) and Algorithm 2 (``anon_etc``) of paper 000 against the plain per-round loops
written from the papers (anonbandits.reference.anonymous_algorithms), and the record of the group sizes their
runs released."""

from __future__ import annotations

import numpy as np
import pytest

import anonbandits.anonymous.algorithm2 as algorithm2
import anonbandits.anonymous.regret as regret
import anonbandits.channels.anonymous as channel_module
import anonbandits.reference.anonymous_bai as plain_module
from anonbandits import simulate
from anonbandits.anonymous import anon_batched, anon_etc
from anonbandits.channels import CHANNELS, AnonymousChannel
from anonbandits.core import GRIDS, static_grid
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import AnonymityViolation
from anonbandits.reference.anonymous_algorithms import plain_grid, reference_batched, reference_etc
from tests.bandits.test_anonymous_bai_reference import _z

C, U = 2, 3


def _deterministic(n: int, k: int, *, tie: bool) -> np.ndarray:
    """Bernoulli means 0/1 (every estimate is exact): user i's best arm is i mod k; with ``tie`` user 0 has a
    second best arm, which BaSE never eliminates (it commits to the lower index)."""
    mu = np.zeros((n, k))
    mu[np.arange(n), np.arange(n) % k] = 1.0
    if tie:
        mu[0, 1] = 1.0
    return mu


def _recorded(monkeypatch, module) -> list[AnonymousChannel]:
    """The channels the algorithm's module creates, kept for their auditor's record."""
    channels: list[AnonymousChannel] = []

    class Recorded(AnonymousChannel):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            channels.append(self)

    monkeypatch.setitem(CHANNELS, "anonymous", Recorded)  # the drivers open the channel the table names
    if hasattr(module, "AnonymousChannel"):  # Algorithm 2 builds its channel itself
        monkeypatch.setattr(module, "AnonymousChannel", Recorded)
    return channels


def _histogram(channel: AnonymousChannel) -> dict[int, int]:
    sizes = channel.auditor.group_sizes
    return {int(s): int(sizes[s]) for s in np.flatnonzero(sizes)}


def _assert_same(run, channel, ref) -> None:
    assert run.metrics["regret"] == ref.regret and run.info["horizon"] == ref.horizon
    assert dict(zip(run.curve[0].tolist(), run.curve[1].tolist(), strict=True)) == ref.curve
    assert run.metrics["exploration_rounds"] == ref.exploration_rounds
    assert [(b["demand"], b["assignments"], b["rounds"], b["eliminated"]) for b in run.records] == ref.batches
    assert (None if run.info["committed"] is None else run.info["committed"].tolist()) == ref.committed
    assert run.metrics["optimal_fraction"] == ref.optimal_fraction
    assert run.metrics["min_group_size"] == ref.min_group_size
    assert _histogram(channel) == ref.group_sizes
    assert run.metrics["observations"] == sum(ref.group_sizes.values())


def _batched(monkeypatch, mu: np.ndarray, horizon: int, decomposer: str, **kwargs):
    channels = _recorded(monkeypatch, regret)  # Algorithm 1 runs on the regret driver
    run = anon_batched(
        MultiUserInstance(mu=mu),
        C,
        horizon,
        U=U,
        decomposer=decomposer,
        gamma=1.0,
        rng=np.random.default_rng(0),
        decomposer_rng=np.random.default_rng(1),
        **kwargs,
    )
    ref = reference_batched(
        mu,
        C,
        horizon,
        U=U,
        decomposer=decomposer,
        gamma=1.0,
        reward_rng=np.random.default_rng(2),
        decomposer_rng=np.random.default_rng(1),
        record_at=run.curve[0].tolist(),
        **kwargs,
    )
    for key in ("alpha", "base_horizon", "grid", "batches"):
        assert run.info[key] == ref.info[key]
    return run, channels[0], ref


@pytest.mark.parametrize("decomposer", ["polytope", "greedy", "randomized"])
def test_algorithm1_equals_the_plain_loop(monkeypatch, decomposer):
    """Means 0/1: the first batch eliminates every second arm but user 0's (a tie); the second batch serves the
    single arms and user 0's two; both runs take the same decompositions (randomized: the same decomposer
    stream), rounds and regret, release the same groups and commit every user to a best arm."""
    mu = _deterministic(8, 2, tie=True)
    run, channel, ref = _batched(monkeypatch, mu, 40_000, decomposer)
    _assert_same(run, channel, ref)
    assert ref.committed == [i % 2 for i in range(8)] and ref.optimal_fraction == 1.0
    assert [b[3] for b in ref.batches] == [7, 0] and ref.exploration_rounds < ref.horizon
    assert ref.min_group_size == C
    demand, assignments = ref.batches[0][:2]
    if decomposer == "polytope":
        assert assignments == 2 * -(-demand // 2)  # R = the largest demand of a user, 2 ceil(D/2) here
    if decomposer == "greedy":  # one assignment per arm: greedy over-covers, and BaSE keeps the surplus
        assert assignments == 2 * demand


@pytest.mark.parametrize(("grid", "threshold"), [("geometric", "gao"), ("arithmetic", "log")])
def test_algorithm1_equals_the_plain_loop_on_other_grids_and_radii(monkeypatch, grid, threshold):
    """Gao et al.'s radius at the grid point and the other two static grids, three batches: same run."""
    run, channel, ref = _batched(
        monkeypatch, _deterministic(8, 2, tie=True), 40_000, "polytope", grid=grid, threshold=threshold, batches=3
    )
    _assert_same(run, channel, ref)
    assert sum(b[3] for b in ref.batches) == 7 and ref.committed == [i % 2 for i in range(8)]


def test_algorithm1_equals_the_plain_loop_when_the_horizon_cuts_a_batch(monkeypatch):
    """alpha set by hand to 1/10 (the guarantee is 2) budgets T' twenty times too long: the horizon cuts the
    second batch (played and audited, no update), nobody commits, and the recommendation is scored."""
    run, channel, ref = _batched(monkeypatch, _deterministic(8, 2, tie=True), 20_000, "polytope", alpha=0.1)
    _assert_same(run, channel, ref)
    assert ref.committed is None and ref.exploration_rounds == ref.horizon == 20_000
    assert len(ref.batches) == 2 and ref.batches[1][2] < ref.batches[1][1] * (2 * C + 2)
    assert ref.recommendation == [i % 2 for i in range(8)]


def _etc(monkeypatch, mu: np.ndarray, horizon: int, **kwargs):
    channels = _recorded(monkeypatch, algorithm2)
    run = anon_etc(MultiUserInstance(mu=mu), C, horizon, rng=np.random.default_rng(0), **kwargs)
    ref = reference_etc(mu, C, horizon, reward_rng=np.random.default_rng(2), record_at=run.curve[0].tolist(), **kwargs)
    assert run.info["phases"] == ref.info["phases"]
    return run, channels[0], ref


@pytest.mark.parametrize("arm_offset", [True, False])
def test_algorithm2_equals_the_plain_loop(monkeypatch, arm_offset):
    """Means 0/1, 7 users (the last group of C+1 takes the one left): the phases, their groups (one arm per group
    with ``arm_offset``, every user on the phase's arm without), the regret and the commitments agree."""
    mu = _deterministic(7, 3, tie=True)
    run, channel, ref = _etc(monkeypatch, mu, 40_000, explore_scale=1.0, arm_offset=arm_offset)
    _assert_same(run, channel, ref)
    assert ref.committed == [i % 3 for i in range(7)] and ref.exploration_rounds < ref.horizon
    assert ref.exploration_rounds == ref.info["phases"] * (2 * C + 2)
    # groups of 3 and 4 users either way (two ETC groups, or the 7 users of one arm split in two): their sums
    # over every member (round 0) and over all but one (rounds k > 0)
    assert set(ref.group_sizes) == {2, 3, 4}


def test_algorithm2_equals_the_plain_loop_when_the_horizon_cuts_the_exploration(monkeypatch):
    """The paper's scale explores longer than a short horizon: the cut phase is played and audited, nobody
    commits, and the recommendation of the complete phases is scored."""
    run, channel, ref = _etc(monkeypatch, _deterministic(6, 2, tie=False), 5_000)
    _assert_same(run, channel, ref)
    assert ref.committed is None and ref.exploration_rounds == ref.horizon == 5_000
    assert ref.info["phases"] * (2 * C + 2) > 5_000 and ref.optimal_fraction == 1.0


@pytest.mark.parametrize("kind", GRIDS)
def test_the_plain_grid_is_the_library_grid(kind):
    """Gao et al.'s grids written out here give the library's static grid, tiny and large horizons alike."""
    for horizon in (1, 7, 100, 5000, 83_333, 10**7):
        for batches in (1, 2, 3, 5):
            assert plain_grid(kind, horizon, batches) == static_grid(kind, horizon, batches).tolist()


@pytest.mark.parametrize(
    ("name", "decomposer"), [("anon-batched", "block"), ("anon-batched", "randomized"), ("anon-etc", None)]
)
def test_no_anonymous_algorithm_run_releases_a_group_below_c(monkeypatch, name, decomposer):
    """The auditor's record of every group an ``anon-batched`` or ``anon-etc`` run released: none below C, it
    accounts for every observation, and its smallest entry is the run's min_group_size."""
    channels = _recorded(monkeypatch, regret if name == "anon-batched" else algorithm2)
    extra = {"decomposer": decomposer} if decomposer else {}
    m = simulate(name, seed=1, users=15, arms=3, C=C, horizon=200_000, **extra).metrics
    sizes = channels[0].auditor.group_sizes
    assert sizes.sum() == channels[0].observations > 0
    assert sizes[:C].sum() == 0
    assert int(np.flatnonzero(sizes)[0]) == m["min_group_size"] >= C


@pytest.mark.parametrize("algorithm", ["anon-batched", "anon-etc"])
def test_groups_of_c_are_stopped_by_the_auditor_in_both_runs(monkeypatch, algorithm):
    """A sub-algorithm forming groups of C users instead of C+1 would release, in rounds k > 0, sums over C-1
    users: the library's channel and the plain loop both refuse them, for either algorithm."""
    partition, plain_groups = channel_module.partition_groups, plain_module.plain_groups
    monkeypatch.setattr(channel_module, "partition_groups", lambda a, n_arms, C: partition(a, n_arms, C - 1))
    monkeypatch.setattr(plain_module, "plain_groups", lambda row, C: plain_groups(row, C - 1))
    mu = _deterministic(8, 2, tie=False)  # 4 users on an arm make two groups of 2
    rng = np.random.default_rng
    if algorithm == "anon-batched":
        fast = lambda: anon_batched(MultiUserInstance(mu=mu), C, 60_000, U=U, decomposer="polytope", rng=rng(0))  # noqa: E731
        plain = lambda: reference_batched(  # noqa: E731
            mu, C, 60_000, U=U, decomposer="polytope", reward_rng=rng(0), decomposer_rng=rng(1)
        )
    else:
        fast = lambda: anon_etc(MultiUserInstance(mu=mu), C, 60_000, arm_offset=False, rng=rng(0))  # noqa: E731
        plain = lambda: reference_etc(mu, C, 60_000, arm_offset=False, reward_rng=rng(0))  # noqa: E731
    with pytest.raises(AnonymityViolation, match="users, fewer than C = 2"):
        fast()
    with pytest.raises(AnonymityViolation, match="has 1 users, fewer than C = 2"):
        plain()


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["anon-batched", "anon-etc"])
def test_commitments_and_regret_agree_in_law_on_random_rewards(algorithm):
    """Random rewards (gap 0.1, short explorations: a share of the users commit to the wrong arm), 24 seeds: the
    optimal fraction and the regret have the same mean in the library's run and the plain loop (Welch |z| < 4).
    Exact agreement needs deterministic rewards: the fast channel draws a sum of many repetitions at once."""
    mu = np.array([[0.55, 0.45], [0.45, 0.55]] * 4)
    rng = np.random.default_rng
    fast, plain = [], []
    for seed in range(24):
        if algorithm == "anon-batched":
            run = anon_batched(
                MultiUserInstance(mu=mu), C, 40_000, U=U, gamma=1.0, rng=rng(seed), decomposer_rng=rng(seed + 1)
            )
            ref = reference_batched(
                mu,
                C,
                40_000,
                U=U,
                gamma=1.0,
                decomposer="auto",
                reward_rng=rng(seed + 500),
                decomposer_rng=rng(seed + 1),
            )
        else:
            run = anon_etc(MultiUserInstance(mu=mu), C, 20_000, explore_scale=0.3, rng=rng(seed))
            ref = reference_etc(mu, C, 20_000, explore_scale=0.3, reward_rng=rng(seed + 500))
        fast.append((run.metrics["optimal_fraction"], run.metrics["regret"]))
        plain.append((ref.optimal_fraction, ref.regret))
    fast_a, plain_a = np.array(fast), np.array(plain)
    assert 0 < fast_a[:, 0].mean() < 1 and 0 < plain_a[:, 0].mean() < 1  # the commitments are left to chance
    assert _z(fast_a[:, 0], plain_a[:, 0]) < 4 and _z(fast_a[:, 1], plain_a[:, 1]) < 4
