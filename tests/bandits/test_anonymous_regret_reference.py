"""``se``/``dp-se --channel anonymous`` (anonbandits.anonymous.batched_regret with EpochElimination) against the
plain per-round loop written from the papers (anonbandits.reference.anonymous_regret), and the record of the
group sizes their runs released."""

from __future__ import annotations

import math

import numpy as np
import pytest

import anonbandits.channels.anonymous as channel_module
from anonbandits import simulate
from anonbandits.anonymous import batched_regret
from anonbandits.anonymous.batches import channel_variance
from anonbandits.channels import CHANNELS, AnonymousChannel
from anonbandits.core.learners import EpochElimination
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import AnonymityViolation
from anonbandits.reference.anonymous_regret import reference_regret
from tests.bandits.test_anonymous_bai_reference import _z

C, BETA = 2, 0.5


def _deterministic(n: int, k: int, *, tie: bool) -> np.ndarray:
    """Bernoulli means 0/1 (every estimate is exact): user i's best arm is i mod k; with ``tie`` user 0 has two
    best arms, so it never stops and the horizon cuts its second epoch."""
    mu = np.zeros((n, k))
    mu[np.arange(n), np.arange(n) % k] = 1.0
    if tie:
        mu[0, 1] = 1.0
    return mu


def _recorded(monkeypatch) -> list[AnonymousChannel]:
    """The channels the regret driver creates, kept for their auditor's record."""
    channels = []

    class Recorded(AnonymousChannel):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            channels.append(self)

    monkeypatch.setitem(CHANNELS, "anonymous", Recorded)  # the driver opens the channel the table names
    return channels


def _histogram(channel: AnonymousChannel) -> dict[int, int]:
    sizes = channel.auditor.group_sizes
    return {int(s): int(sizes[s]) for s in np.flatnonzero(sizes)}


def _both(monkeypatch, mu: np.ndarray, horizon: int, decomposer: str, epsilon: float = math.inf, seed: int = 0):
    n, k = mu.shape
    channels = _recorded(monkeypatch)
    learners = EpochElimination(n, k, confidence=BETA, epsilon=epsilon, sigma2=channel_variance("anonymous", C))
    run = batched_regret(
        MultiUserInstance(mu=mu),
        learners,
        horizon,
        C=C,
        decomposer=decomposer,
        rng=np.random.default_rng(seed),
        decomposer_rng=np.random.default_rng(seed + 1),
        noise_rng=np.random.default_rng(seed + 2),
        sum_epsilon=epsilon,
    )
    ref = reference_regret(
        mu,
        horizon,
        C=C,
        confidence=BETA,
        decomposer=decomposer,
        epsilon=epsilon,
        reward_rng=np.random.default_rng(seed + 3),
        decomposer_rng=np.random.default_rng(seed + 1),
        noise_rng=np.random.default_rng(seed + 2),
        record_at=run.curve[0].tolist(),
    )
    assert learners.recommendation().tolist() == ref.recommendation
    return run, channels[0], ref


def _assert_same(run, channel, ref) -> None:
    assert run.metrics["regret"] == ref.regret and run.info["horizon"] == ref.horizon
    assert dict(zip(run.curve[0].tolist(), run.curve[1].tolist(), strict=True)) == ref.curve
    assert run.metrics["exploration_rounds"] == ref.exploration_rounds
    assert [(b["assignments"], b["rounds"], b["eliminated"]) for b in run.records] == ref.batches
    assert (run.info["samples"], run.info["surplus"], run.info["stopped"]) == (ref.samples, ref.surplus, ref.stopped)
    assert (None if run.info["committed"] is None else run.info["committed"].tolist()) == ref.committed
    assert run.metrics["min_group_size"] == ref.min_group_size
    assert _histogram(channel) == ref.group_sizes


@pytest.mark.parametrize("decomposer", ["auto", "greedy", "randomized"])
def test_se_regret_equals_the_plain_loop_when_every_user_commits(monkeypatch, decomposer):
    """Means 0/1: one epoch decides every user; both runs take the same decompositions, rounds and regret, release
    the same groups and commit every user to its best arm for the rest of the horizon."""
    mu = _deterministic(6, 2, tie=False)
    run, channel, ref = _both(monkeypatch, mu, 100_000, decomposer)
    _assert_same(run, channel, ref)
    assert ref.committed == [i % 2 for i in range(6)] and len(ref.batches) == 1 and ref.stopped == 1.0
    assert run.metrics["regret"] == run.curve[1][-1] > 0 and ref.exploration_rounds < ref.horizon
    if decomposer == "greedy":  # greedy over-covers: the surplus is discarded on both sides alike
        assert ref.surplus > 0


@pytest.mark.parametrize("epsilon", [math.inf, 0.01])
def test_se_and_dp_se_regret_equal_the_plain_loop_when_the_horizon_cuts_an_epoch(monkeypatch, epsilon):
    """User 0's two best arms keep it exploring (users who stopped fill its groups) until the horizon cuts its
    second epoch: no commitment, the cut epoch counted in regret and released groups but not in samples. With
    DP-SE at epsilon 0.01 the privacy term sets R_e and the noise stream is matched."""
    mu = _deterministic(6, 2, tie=True)
    run, channel, ref = _both(monkeypatch, mu, 150_000, "auto", epsilon)
    _assert_same(run, channel, ref)
    assert ref.committed is None and len(ref.batches) == 2 and ref.stopped == 5 / 6
    assert ref.exploration_rounds == ref.horizon == 150_000 and ref.batches[1][1] < ref.batches[1][0] * (2 * C + 2)
    assert ref.batches[0][0] == (4437 if epsilon < 1 else 3996) * 2  # polytope: R = D, 2 arms of R_1 samples


def test_dp_se_noise_picks_the_same_recommendation(monkeypatch):
    """User 0's two best arms: its recommendation after the first epoch is the best noisy mean, so it follows the
    Laplace stream; both runs pick the same arm on every seed, and both arms occur."""
    picks = set()
    for seed in range(4):
        _, _, ref = _both(monkeypatch, _deterministic(6, 2, tie=True), 60_000, "auto", 0.01, seed=10 * seed)
        assert ref.committed is None and len(ref.batches) == 2
        picks.add(ref.recommendation[0])
    assert picks == {0, 1}


@pytest.mark.parametrize(
    ("sigma2", "epsilon"),
    [(0.25, math.inf), (channel_variance("anonymous", C), math.inf), (channel_variance("anonymous", C), 0.5)],
)
def test_the_plain_learner_keeps_the_same_arms_on_random_sums(sigma2, epsilon):
    """Epoch by epoch on random sums whose means fall on both sides of the elimination width: the plain learner's
    R_e, width (scaled by the variance proxy, with DP-SE's c_e) and ties kept give the same arms as EpochElimination."""
    from anonbandits.reference.anonymous_regret import RefEpochLearner

    rng = np.random.default_rng(0)
    n, k = 200, 4
    fast = EpochElimination(n, k, confidence=0.1, epsilon=epsilon, sigma2=sigma2)
    plain = [RefEpochLearner(k, 0.1, epsilon, sigma2) for _ in range(n)]
    kept = []
    for _ in range(3):
        wanted = fast.demand()
        assert wanted.tolist() == [lr.demand() for lr in plain]
        means = 0.5 + rng.uniform(-0.3, 0.3, size=(n, k)) * 2.0 ** -np.minimum(fast.epoch, 2)[:, None]
        sums = wanted * means
        fast.update(sums, wanted, sigma2)
        for i in np.flatnonzero(wanted.any(axis=1)):
            plain[i].update(sums[i].tolist(), sigma2)
        assert fast.active.tolist() == [[a in lr.S for a in range(k)] for lr in plain]
        assert fast.recommendation().tolist() == [lr.recommendation() for lr in plain]
        kept.append(int(fast.active.sum()))
    assert n * k > kept[0] > kept[-1] > n  # some arms leave, not all: the width is tested from both sides


def test_epoch_lengths_are_the_papers():
    """R_e of DP-SE's published parameter tables (papers 001 and 003), from the plain learner's own formula."""
    from anonbandits.reference.anonymous_regret import RefEpochLearner

    assert RefEpochLearner(5, 1 / 4_194_304, 0.5, 0.25).length() == 2425
    assert RefEpochLearner(10, 0.5, 0.1, 0.25).length() == 702
    # the statistical term (650 there) is 4 sigma2 times longer and now exceeds the privacy term
    assert RefEpochLearner(10, 0.5, 0.1, 2.25).length() == 9 * 650


@pytest.mark.parametrize("name", ["se", "dp-se"])
@pytest.mark.parametrize("decomposer", ["block", "randomized"])
def test_no_anonymous_se_run_releases_a_group_below_c(monkeypatch, name, decomposer):
    """The auditor's record of every group a ``--channel anonymous`` run released: none below C, it accounts for
    every observation, and its smallest entry is the run's min_group_size."""
    channels = _recorded(monkeypatch)
    extra = {"epsilon": 1.0} if name == "dp-se" else {}
    m = simulate(
        name,
        seed=1,
        channel="anonymous",
        users=15,
        arms=3,
        C=C,
        gap=0.4,
        horizon=200_000,
        confidence="0.1",
        decomposer=decomposer,
        **extra,
    ).metrics
    sizes = channels[0].auditor.group_sizes
    assert sizes.sum() == channels[0].observations > 0
    assert sizes[:C].sum() == 0
    assert int(np.flatnonzero(sizes)[0]) == m["min_group_size"] >= C


def test_groups_of_c_are_stopped_by_the_auditor_in_both_runs(monkeypatch):
    """A sub-algorithm forming groups of C users instead of C+1 would release, in rounds k > 0, sums over C-1
    users: the driver's channel and the plain loop both refuse them."""
    import anonbandits.reference.anonymous_bai as plain_module

    partition, plain_groups = channel_module.partition_groups, plain_module.plain_groups
    monkeypatch.setattr(channel_module, "partition_groups", lambda a, n_arms, C: partition(a, n_arms, C - 1))
    monkeypatch.setattr(plain_module, "plain_groups", lambda row, C: plain_groups(row, C - 1))
    mu = _deterministic(8, 2, tie=False)  # 4 users on an arm make two groups of 2
    learners = EpochElimination(8, 2, confidence=BETA, sigma2=channel_variance("anonymous", C))
    with pytest.raises(AnonymityViolation, match="users, fewer than C = 2"):
        batched_regret(
            MultiUserInstance(mu=mu), learners, 100_000, C=C, decomposer="auto", rng=np.random.default_rng(0)
        )
    with pytest.raises(AnonymityViolation, match="has 1 users, fewer than C = 2"):
        reference_regret(
            mu,
            100_000,
            C=C,
            confidence=BETA,
            decomposer="auto",
            reward_rng=np.random.default_rng(0),
            decomposer_rng=np.random.default_rng(1),
        )


def _stopped_and_regret(monkeypatch, seeds: range) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Share of users stopped at the horizon and regret of both runs on random rewards (gap 0.12, about the first
    epoch's width: whether a user stops after it is random)."""
    mu = np.array([[0.6, 0.48], [0.48, 0.6]] * 3)
    out = []
    for seed in seeds:
        learners = EpochElimination(6, 2, confidence=BETA, sigma2=channel_variance("anonymous", C))
        run = batched_regret(
            MultiUserInstance(mu=mu),
            learners,
            150_000,
            C=C,
            decomposer="auto",
            rng=np.random.default_rng(seed),
            decomposer_rng=np.random.default_rng(seed + 1),
        )
        ref = reference_regret(
            mu,
            150_000,
            C=C,
            confidence=BETA,
            decomposer="auto",
            reward_rng=np.random.default_rng(seed),
            decomposer_rng=np.random.default_rng(seed + 1),
        )
        out.append((run.info["stopped"], ref.stopped, run.metrics["regret"], ref.regret))
    return tuple(np.array(col, dtype=float) for col in zip(*out, strict=True))


@pytest.mark.slow
def test_stopping_and_regret_agree_in_law_on_random_rewards(monkeypatch):
    """Random rewards, 12 seeds: the share of users that stop and the regret have the same mean in both runs
    (Welch |z| < 4); a plain loop whose width ignores the anonymous estimates' variance proxy (the width of
    rewards in [0, 1], three times narrower) stops every user after one epoch, with less regret, and is told
    apart."""
    from anonbandits.reference.anonymous_regret import RefEpochLearner

    fast_stop, plain_stop, fast_regret, plain_regret = _stopped_and_regret(monkeypatch, range(12))
    assert 0 < fast_stop.mean() < 1  # the instance leaves the stopping to chance
    assert _z(fast_stop, plain_stop) < 4 and _z(fast_regret, plain_regret) < 4
    update = RefEpochLearner.update
    monkeypatch.setattr(RefEpochLearner, "update", lambda self, sums, sigma2: update(self, sums, 0.25))
    _, narrow_stop, _, narrow_regret = _stopped_and_regret(monkeypatch, range(12))
    assert _z(fast_stop, narrow_stop) > 4 and narrow_regret.mean() < fast_regret.mean()
