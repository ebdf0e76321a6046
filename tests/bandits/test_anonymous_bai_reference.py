"""anon-bai's vectorised driver (anonbandits.anonymous.bai.identify) against the plain per-round loop written
from papers 000 and 002 (anonbandits.reference.anonymous_bai), for every subroutine; the record of released
group sizes; and the auditor's refusal of a group below C."""

from __future__ import annotations

import math

import numpy as np
import pytest

import anonbandits.channels.anonymous as channel_module
import anonbandits.reference.anonymous_bai as ref_module
from anonbandits.anonymous.bai import identify
from anonbandits.channels import CHANNELS, AnonymousChannel, elicitation_variance
from anonbandits.channels.anonymous import partition_groups
from anonbandits.core.learners import SUBROUTINES, BestArmElimination
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import AnonymityViolation
from anonbandits.reference.anonymous_bai import reference_identify

# small enough for the plain loop: approx per subroutine (naive and median take far more samples than SE)
APPROX = {"naive": 1.0, "median": 1.0, "se": 0.5, "ser3": 0.5}


def _deterministic(n: int, k: int) -> np.ndarray:
    """Bernoulli means 0/1 (rewards, hence every estimate, are exact): user i's best arm is i mod k, and user
    0 has a second best arm (a tie, broken by the learners' random stream)."""
    mu = np.zeros((n, k))
    mu[np.arange(n), np.arange(n) % k] = 1.0
    mu[0, 1] = 1.0
    return mu


def _recorded(mu: np.ndarray, learners, **options):
    """``identify`` on ``mu`` with the anonymous channel it builds kept: (run, channel)."""
    channels = []

    class Recorded(AnonymousChannel):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            channels.append(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(CHANNELS, "anonymous", Recorded)  # the driver opens the channel the table names
        run = identify(MultiUserInstance(mu=mu), learners, **options)
    return run, channels[0]


def _both(
    mu: np.ndarray,
    subroutine: str,
    C: int,
    decomposer: str,
    seed: int,
    *,
    approx: float | None = None,
    reference_subroutine: str | None = None,
):
    """The vectorised run (with its channel, recorded) and the plain loop on the same streams."""
    approx = APPROX[subroutine] if approx is None else approx
    n, k = mu.shape
    sigma2 = (4 * C + 1) / 4  # the anonymous estimates' variance proxy, from the first batch on
    learners = BestArmElimination(
        n, k, subroutine, approx=approx, delta=0.2, sigma2=sigma2, rng=np.random.default_rng(seed)
    )
    run, channel = _recorded(
        mu,
        learners,
        C=C,
        decomposer=decomposer,
        rng=np.random.default_rng(seed + 1),
        decomposer_rng=np.random.default_rng(seed + 2),
    )
    ref = reference_identify(
        mu,
        reference_subroutine or subroutine,
        C=C,
        approx=approx,
        delta=0.2,
        decomposer=decomposer,
        reward_rng=np.random.default_rng(seed + 3),
        learner_rng=np.random.default_rng(seed),
        decomposer_rng=np.random.default_rng(seed + 2),
    )
    return run, channel, ref


@pytest.mark.parametrize("subroutine", SUBROUTINES)
@pytest.mark.parametrize("decomposer", ["auto", "greedy"])
def test_identify_equals_the_plain_loop_on_deterministic_rewards(subroutine, decomposer):
    """Means 0/1: every estimate is exact, so both runs take the same decisions, the same decompositions and the
    same rounds, and release the same groups."""
    C = 1 if subroutine == "median" else 2
    run, channel, ref = _both(_deterministic(9, 3), subroutine, C, decomposer, seed=4)
    keys = ("rounds", "samples", "surplus", "batches", "assignments")
    assert tuple(run.metrics[key] for key in keys) == tuple(getattr(ref, key) for key in keys)
    assert run.info["stopped_at"].tolist() == ref.stopped_at
    assert run.info["recommendation"].tolist() == ref.recommendation
    assert run.metrics["min_group_size"] == ref.min_group_size
    sizes = channel.auditor.group_sizes
    assert {s: int(sizes[s]) for s in np.flatnonzero(sizes)} == ref.group_sizes
    assert run.metrics["rounds"] == run.metrics["assignments"] * (2 * C + 2) and run.metrics["batches"] >= 1
    if decomposer == "greedy":  # greedy over-covers: the surplus is discarded on both sides alike
        assert run.metrics["surplus"] > 0


@pytest.mark.parametrize("subroutine", SUBROUTINES)
def test_a_tie_is_broken_the_same_way(subroutine):
    """User 0 has two best arms; over seeds both runs pick the same one, and both arms occur."""
    picks = []
    for seed in range(6):
        run, _, ref = _both(_deterministic(6, 2), subroutine, 1, "auto", seed=10 * seed)
        assert run.info["recommendation"].tolist() == ref.recommendation
        picks.append(int(run.info["recommendation"][0]))
    assert set(picks) == {0, 1}


def _samples(subroutine: str, reference_subroutine: str, seeds: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-user samples to stop of both runs over ``seeds`` seeds of one random instance (Bernoulli rewards)."""
    mu = np.array([[0.8, 0.45, 0.2], [0.45, 0.8, 0.2], [0.2, 0.45, 0.8]] * 2)
    fast, plain = [], []
    for seed in range(seeds):
        run, _, ref = _both(
            mu, subroutine, 1, "auto", seed=100 + seed, approx=0.1, reference_subroutine=reference_subroutine
        )
        assert run.metrics["rounds"] == run.metrics["assignments"] * 4 and ref.rounds == ref.assignments * 4
        fast.append(run.metrics["samples"])
        plain.append(ref.samples)
    return np.array(fast, dtype=float), np.array(plain, dtype=float)


def _z(a: np.ndarray, b: np.ndarray) -> float:
    """Welch's statistic for equal means (a difference with no variance at all counts as infinite)."""
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    diff = abs(a.mean() - b.mean())
    return diff / se if se > 0 else (0.0 if diff == 0 else math.inf)


@pytest.mark.slow
@pytest.mark.parametrize("subroutine", ["se", "ser3"])
def test_samples_to_stop_agree_in_law_on_random_rewards(subroutine):
    """Random rewards, 12 seeds each: the samples successive elimination takes to stop have the same mean in both
    runs (Welch |z| < 4), and the same test tells SE's radius from SER3's (sqrt(2) apart), so it can fail."""
    fast, plain = _samples(subroutine, subroutine, 12)
    assert _z(fast, plain) < 4
    other = "ser3" if subroutine == "se" else "se"
    _, wrong = _samples(subroutine, other, 12)
    assert _z(fast, wrong) > 4


@pytest.mark.parametrize("subroutine", ["naive", "median"])
def test_fixed_design_samples_are_equal_on_random_rewards(subroutine):
    """Naive and median elimination take a number of samples that no reward changes: on random
    rewards both runs take exactly as many, and naive's one batch has the same decomposition and rounds."""
    mu = np.array([[0.7, 0.5, 0.2], [0.5, 0.7, 0.2], [0.2, 0.5, 0.7]] * 2)
    run, _, ref = _both(mu, subroutine, 1, "auto", seed=7)
    assert run.metrics["samples"] == ref.samples and run.metrics["batches"] == ref.batches
    if subroutine == "naive":
        assert run.metrics["rounds"] == ref.rounds and run.metrics["assignments"] == ref.assignments
    # the count formula matters: another approx gives another count
    other, _, _ = _both(mu, subroutine, 1, "auto", seed=7, approx=0.9)
    assert other.metrics["samples"] != run.metrics["samples"]


@pytest.mark.parametrize("subroutine", SUBROUTINES)
@pytest.mark.parametrize("decomposer", ["block", "randomized"])
def test_no_anonymous_run_releases_a_group_below_c(subroutine, decomposer):
    """The auditor's record of every released group: none below C, it accounts for every observation, and its
    smallest entry is the run's min_group_size."""
    C = 2
    mu = np.random.default_rng(0).uniform(0.1, 0.9, size=(15, 3))
    learners = BestArmElimination(
        15, 3, subroutine, approx=1.0, delta=0.2, rng=np.random.default_rng(1), sigma2=elicitation_variance(C)
    )
    run, channel = _recorded(mu, learners, C=C, decomposer=decomposer, rng=np.random.default_rng(2), max_rounds=200_000)
    sizes = channel.auditor.group_sizes
    assert sizes.sum() == channel.observations > 0
    assert sizes[:C].sum() == 0
    assert int(np.flatnonzero(sizes)[0]) == run.metrics["min_group_size"] >= C


def test_the_auditor_refuses_a_group_of_c_minus_1_users():
    C = 3
    instance = MultiUserInstance(mu=np.full((6, 2), 0.5))
    channel = AnonymousChannel(instance, C, 1000, np.random.default_rng(0))
    a = np.zeros((1, 6), dtype=np.int64)
    labels = np.array([[0, 0, 0, 0, 1, 1]])  # group 1 holds C - 1 = 2 users
    positions = np.array([[1, 2, 3, 4, 1, 2]])
    with pytest.raises(AnonymityViolation, match="group 1 of round 0 has 2 users, fewer than C = 3"):
        channel.serve(a, labels, positions, np.ones(1, np.int64), 1)
    assert channel.auditor.group_sizes.sum() == 0 and channel.min_group_size is None


def test_a_sub_algorithm_forming_groups_of_c_is_stopped_by_the_auditor(monkeypatch):
    """Groups of C users instead of C+1: each round k > 0 would release a sum over C-1 users. Both the driver's
    channel and the plain loop refuse it."""
    C = 2

    def groups_of_c(assignments, n_arms, C):
        labels, positions = partition_groups(assignments, n_arms, C - 1)
        return labels, positions

    def ref_groups_of_c(assignment, C):
        return ref_module_groups(assignment, C - 1)

    ref_module_groups = ref_module.plain_groups
    monkeypatch.setattr(channel_module, "partition_groups", groups_of_c)
    monkeypatch.setattr(ref_module, "plain_groups", ref_groups_of_c)
    mu = _deterministic(9, 3)
    learners = BestArmElimination(
        9, 3, "se", approx=0.5, delta=0.2, rng=np.random.default_rng(0), sigma2=elicitation_variance(C)
    )
    with pytest.raises(AnonymityViolation, match="users, fewer than C = 2"):
        identify(MultiUserInstance(mu=mu), learners, C=C, decomposer="auto", rng=np.random.default_rng(1))
    with pytest.raises(AnonymityViolation, match="has 1 users, fewer than C = 2"):
        reference_identify(
            mu,
            "se",
            C=C,
            approx=0.5,
            delta=0.2,
            decomposer="auto",
            reward_rng=np.random.default_rng(1),
            learner_rng=np.random.default_rng(0),
        )


def test_kept_segments_keep_the_first_wanted_estimates_like_a_plain_loop():
    """The vectorised cut of repeated assignments against one estimate at a time: each (user, arm) pair keeps its
    first ``wanted`` informative estimates in row order, the rest are surplus."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        n, users, arms, C = int(rng.integers(1, 6)), int(rng.integers(2, 9)), int(rng.integers(1, 4)), 1
        a = rng.integers(0, arms, size=(n, users))
        reps = rng.integers(1, 5, size=n)
        wanted = rng.integers(0, 8, size=(users, arms))
        kept = np.zeros((n, users), dtype=np.int64)
        surplus = np.zeros((users, arms), dtype=np.int64)
        got = np.zeros((users, arms), dtype=np.int64)
        for k in range(n):
            on_arm = np.bincount(a[k], minlength=arms)
            for _ in range(reps[k]):
                for i in range(users):
                    j = a[k, i]
                    if on_arm[j] < C + 1:
                        continue
                    if got[i, j] < wanted[i, j]:
                        got[i, j] += 1
                        kept[k, i] += 1
                    else:
                        surplus[i, j] += 1
        rows, row_reps, keep, extra = channel_module.kept_segments(a, reps, wanted, C)
        fast = np.zeros((n, users), dtype=np.int64)
        k = done = 0  # the pieces come row by row, each row's pieces summing to its repetitions
        for row, m, kp in zip(rows, row_reps, keep, strict=True):
            assert (row == a[k]).all()
            fast[k] += m * kp
            done += m
            if done == reps[k]:
                k, done = k + 1, 0
        assert k == n
        assert fast.tolist() == kept.tolist() and extra.tolist() == surplus.tolist()
