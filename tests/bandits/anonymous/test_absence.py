"""The bandit layer on a platform with absent users (docs/platform.md, "The bandit layer under absence").

Each user misses each block (one assignment, its 2C+2 rounds) with probability A, drawn once per user and block
and known at its start; a block's groups hold its present users only; an absent user gets no reward, is in no sum
and adds no regret; a batch's residual demand is re-planned until every pair has what it asked for. At A = 0
nothing changes (the golden fingerprints check the runs bit for bit; here the parameter's default is checked to
be that run). Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

import anondecomp
from anonbandits import simulate
from anonbandits.anonymous import anon_batched, anon_etc, etc_assignments, identify
from anonbandits.anonymous.batches import EVERY_LEARNER_STOPPED, HORIZON, MAX_ELICITED, run_batches
from anonbandits.channels import AnonymousChannel, ChannelOptions, DirectFeedback, elicitation_rounds
from anonbandits.cli.main import main
from anonbandits.core.learners import BestArmElimination, EpochElimination
from anonbandits.envs import MultiUserInstance, clustered_instance
from anonbandits.errors import ConfigError

# --- A = 0 is the paper's model, bit for bit ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "extra"),
    [("anon-batched", {"horizon": 20_000}), ("anon-etc", {"horizon": 20_000}), ("anon-bai", {"gap": 0.3})],
)
def test_absence_zero_is_the_run_without_it(name, extra):
    params = {"users": 40, "arms": 2, "C": 2, **extra}
    plain, zero = simulate(name, seed=3, **params), simulate(name, seed=3, absence=0.0, **params)
    assert plain.metrics == zero.metrics
    assert all(np.array_equal(x, y) for x, y in zip(plain.curve, zero.curve, strict=True))
    assert plain.records == zero.records and plain.label == zero.label


def test_absence_zero_draws_nothing_and_a_positive_one_draws_presence():
    """Playing without feedback draws no random number at A = 0 (the paper's runs keep their streams); with
    absent users it draws each user's presence (one binomial per user, one Bernoulli for the last short block)."""
    instance = MultiUserInstance(np.array([[0.9, 0.1]] * 4))
    states = []
    for absence in (0.0, 0.5):
        rng = np.random.default_rng(0)
        channel = AnonymousChannel(instance, 1, 100, rng, absence=absence)
        before = rng.bit_generator.state["state"]["state"]
        channel.play(np.ones(4, dtype=int), 42)
        states.append(rng.bit_generator.state["state"]["state"] == before)
    assert states == [True, False]


# --- no released group below C: every decomposer, identification, regret, Algorithm 2 -----------------------------


def _spy_on_the_auditor(channel: AnonymousChannel) -> list[tuple[int, int]]:
    """Record the smallest group of round 0 and of any round that the channel asks the auditor to release."""
    asked: list[tuple[int, int]] = []
    release = channel.auditor.release

    def spy(groups, arms, rewards, repetitions=1):
        g = np.asarray(groups)
        rows = g.reshape(-1, g.shape[-1])
        n_labels = int(rows.max(initial=-1)) + 1
        flat = (rows + np.arange(len(rows))[:, None] * n_labels)[rows >= 0]
        sizes = np.bincount(flat, minlength=len(rows) * n_labels).reshape(*g.shape[:-1], n_labels)
        used = sizes > 0
        asked.append((int(sizes[:, 0][used[:, 0]].min(initial=10**9)), int(sizes[used].min(initial=10**9))))
        return release(groups, arms, rewards, repetitions)

    channel.auditor.release = spy
    return asked


@pytest.mark.parametrize("absence", [0.05, 0.2])
@pytest.mark.parametrize("decomposer", anondecomp.METHODS)
def test_no_group_below_c_is_released_under_absence(decomposer, absence):
    C = 2
    instance = clustered_instance(40, 2, 0, 0.3, np.random.default_rng(0))
    options = ChannelOptions(C=C, decomposer=decomposer, absence=absence, max_elicited=MAX_ELICITED)
    channel = AnonymousChannel.open(instance, 10**8, np.random.default_rng(1), options)
    asked = _spy_on_the_auditor(channel)
    learners = BestArmElimination(
        40, 2, "se", approx=0.3, delta=0.1, rng=np.random.default_rng(2), sigma2=channel.variance_proxy
    )
    loop = run_batches(learners, channel, EVERY_LEARNER_STOPPED)
    assert not learners.exploring.any()  # the re-plans delivered every demand
    assert channel.auditor.group_sizes[:C].sum() == 0 and channel.min_group_size >= C
    # the channel asks for no group of at most C present users: round 0 releases a whole group of C+1 or more
    assert min(first for first, _ in asked) >= C + 1 and min(every for _, every in asked) >= C
    assert all(r.method.startswith("robust:") for r in loop.records)
    assert channel.t == sum(r.assignments for r in loop.records) * elicitation_rounds(C)


@pytest.mark.parametrize("absence", [0.05, 0.2])
def test_no_group_below_c_in_regret_runs_and_algorithm_2(absence):
    C = 2
    instance = clustered_instance(30, 3, 0, 0.3, np.random.default_rng(3))
    channel = AnonymousChannel.open(
        instance, 200_000, np.random.default_rng(4), ChannelOptions(C=C, decomposer="auto", absence=absence)
    )
    asked = _spy_on_the_auditor(channel)
    learners = EpochElimination(30, 3, confidence=0.05, sigma2=channel.variance_proxy)
    run_batches(learners, channel, HORIZON)
    etc = AnonymousChannel(instance, C, 50_000, np.random.default_rng(5), absence=absence)
    asked += _spy_on_the_auditor(etc)
    etc.elicit(etc_assignments(30, 3, C), order=np.arange(1, 3001) % 3)
    for ch in (channel, etc):
        assert ch.auditor.group_sizes[:C].sum() == 0 and ch.min_group_size >= C
    assert min(first for first, _ in asked) >= C + 1 and min(every for _, every in asked) >= C


# --- what absent users receive, and what they cost ------------------------------------------------------------------


def test_absent_users_get_no_reward_are_in_no_sum_and_add_no_regret():
    """Deterministic rewards (arm 0 pays 1, arm 1 pays 0, every user's best is arm 0): six users on arm 0 and
    three on arm 1 (C = 2, so arm 1's group needs all three present). Replaying the channel's draws gives the
    present users: the estimates are theirs exactly (each is 1 on arm 0, 0 on arm 1; an absent user's leaked
    reward or count would show), and the regret is that of the present users on arm 1 only, in the
    elicitation and in the play that follows."""
    N, C, A, m = 9, 2, 0.3, 40
    r = elicitation_rounds(C)
    instance = MultiUserInstance(np.tile([1.0, 0.0], (N, 1)))
    channel = AnonymousChannel(instance, C, 10**6, np.random.default_rng(5), absence=A)
    a = np.array([0] * 6 + [1] * 3)
    fb = channel.elicit(a, np.array([m]))
    replay = np.random.default_rng(5)
    present = replay.random((m, N)) >= A  # the channel's first draw: who is there in each block
    replay.random((m, r, N))  # then the blocks' rewards
    ok = np.zeros((m, N), dtype=bool)
    for users in (slice(0, 6), slice(6, 9)):  # the group of each arm
        ok[:, users] = present[:, users] & (present[:, users].sum(axis=1) >= C + 1)[:, None]
    counts = np.zeros((N, 2), dtype=np.int64)
    counts[np.arange(N), a] = ok.sum(axis=0)
    assert fb.counts.tolist() == counts.tolist()
    assert fb.sums.tolist() == np.where(np.arange(2) == 0, counts, 0).tolist()
    assert 0 < counts.sum() < m * N
    books = channel._ledger
    assert books.regret == r * present[:, 6:].sum()  # gap 1 for the present users on arm 1, nothing else
    # a play of 7 whole blocks and 3 rounds, every user on arm 1: each present user pays 1 a round
    before = books.regret
    channel.play(np.ones(N, dtype=int), 7 * r + 3)
    blocks, last = replay.binomial(7, 1 - A, N), replay.random(N) >= A
    assert math.isclose(books.regret - before, r * blocks.sum() + 3 * last.sum(), rel_tol=1e-12)
    assert channel.auditor.group_sizes[:C].sum() == 0


def test_absent_users_lower_the_regret_by_their_share():
    """Algorithm 2 plays fixed phases and commits: with users absent a fifth of the time, its regret is about four
    fifths of the same run's without (every block's regret is its present users')."""
    instance = clustered_instance(60, 3, 0, 0.2, np.random.default_rng(0))
    full = anon_etc(instance, 2, 60_000, rng=np.random.default_rng(1))
    absent = anon_etc(instance, 2, 60_000, rng=np.random.default_rng(1), absence=0.2)
    assert full.metrics["optimal_fraction"] == absent.metrics["optimal_fraction"] == 1.0
    assert abs(absent.metrics["regret"] / full.metrics["regret"] - 0.8) < 0.01
    assert absent.metrics["observations"] < full.metrics["observations"]


# --- re-planning: the learners get exactly what they asked for, all of it received ----------------------------------


class _Spy:
    """The learners, recording each update's demand, sums and counts."""

    def __init__(self, learners):
        self.learners, self.updates = learners, []

    def __getattr__(self, name):
        return getattr(self.learners, name)

    def update(self, sums, counts, sigma2):
        self.updates.append((self.learners.demand(), sums.copy(), counts.copy()))
        return self.learners.update(sums, counts, sigma2)


def test_replanning_delivers_every_demand_and_the_estimates_are_unbiased(monkeypatch):
    """Each update's counts are its demand, all received in blocks where the user was there (absent users left
    pairs short, and the residual was re-planned); pooled over every pair, the estimates' errors are centred: an
    absent user's missing reward read as 0, or a count of an estimate never received, would bias them by about
    A times the mean (|Z| far above 6)."""
    C, A = 2, 0.3
    replans = []
    replan = anondecomp.replan
    monkeypatch.setattr(anondecomp, "replan", lambda *args, **kw: replans.append(kw) or replan(*args, **kw))
    instance = clustered_instance(30, 3, 0, 0.3, np.random.default_rng(0))
    options = ChannelOptions(C=C, decomposer="auto", absence=A, max_elicited=MAX_ELICITED)
    channel = AnonymousChannel.open(instance, 10**8, np.random.default_rng(1), options)
    learners = _Spy(BestArmElimination(30, 3, "se", approx=0.2, delta=0.1, rng=np.random.default_rng(2), sigma2=2.25))
    run_batches(learners, channel, EVERY_LEARNER_STOPPED)
    error, count = 0.0, 0
    for demand, sums, counts in learners.updates:
        assert np.array_equal(counts, demand)
        error += float((sums - counts * instance.mu).sum())
        count += int(counts.sum())
    assert replans and all(kw["absence"] == A for kw in replans)
    # an estimate sums at most 2C+1 rewards of round 0 and 2C of round k: variance <= ((2C+1)^2 + 2C) / 4 per
    # estimate, correlations within a group included
    assert abs(error) / math.sqrt(count * ((2 * C + 1) ** 2 + 2 * C) / 4) < 6


@pytest.mark.slow
def test_anon_bai_is_pac_under_absence():
    """40 seeds at delta = 0.1 with users absent a fifth of the time: each user's recommendation is
    approx-optimal with probability at least 1 - delta, so user 0's errors over the seeds are at most a
    Binomial(40, 0.1)'s 99.9 % quantile, and so are those of every user on average."""
    delta, seeds, approx = 0.1, 40, 0.2
    wrong = np.zeros(24)
    for seed in range(seeds):
        run = simulate("anon-bai", seed=seed, users=24, arms=3, C=2, gap=0.3, approx=approx, delta=delta, absence=0.2)
        assert run.metrics["users_stopped"] == 1.0 and run.metrics["min_group_size"] >= 2
        wrong += 1.0 - run.metrics["users_approx_optimal"]
    bound = binom.ppf(0.999, seeds, delta)
    assert wrong.mean() <= bound


def test_anon_bai_pays_rounds_for_absence():
    plain = simulate("anon-bai", seed=0, users=24, arms=3, C=2, gap=0.3, approx=0.2)
    absent = simulate("anon-bai", seed=0, users=24, arms=3, C=2, gap=0.3, approx=0.2, absence=0.2)
    assert absent.metrics["rounds"] > plain.metrics["rounds"]
    assert absent.metrics["users_approx_optimal"] == 1.0 and absent.metrics["min_group_size"] >= 2


def test_a_method_the_robust_size_rules_out_gives_way_to_auto_and_the_run_completes(monkeypatch):
    """polytope applies to anon-bai's batches at C + 1 = 3 but not always at the robust size 6 (A = 0.2): those
    batches and re-plans run on auto, and the run ends with every user's recommendation approx-optimal."""
    import anonbandits.channels.anonymous as anonymous

    refused: list[str] = []
    fallback = anonymous.with_robust_fallback

    def spy(decompose, method, absence):
        def watched(**kw):
            try:
                return decompose(**kw)
            except anondecomp.MethodNotApplicableError as exc:
                refused.append(str(exc))
                raise

        return fallback(watched, method, absence)

    monkeypatch.setattr(anonymous, "with_robust_fallback", spy)
    run = simulate("anon-bai", seed=0, users=24, arms=3, C=2, gap=0.3, decomposer="polytope", absence=0.2)
    assert refused and all("robust group size 6, for C = 2" in text for text in refused)
    assert run.metrics["users_stopped"] == 1.0 and run.metrics["users_approx_optimal"] == 1.0
    assert run.metrics["min_group_size"] >= 2


def test_the_fallback_to_auto_is_only_for_a_method_that_does_not_apply_under_absence():
    from anonbandits.channels.anonymous import with_robust_fallback

    def decompose(method):
        if method == "polytope":
            raise anondecomp.MethodNotApplicableError("polytope does not apply")
        return method

    assert with_robust_fallback(decompose, "polytope", 0.1) == "auto"
    assert with_robust_fallback(decompose, "greedy", 0.1) == "greedy"
    with pytest.raises(anondecomp.MethodNotApplicableError):
        with_robust_fallback(decompose, "polytope", 0.0)  # without absence the method's refusal stands


def test_anon_batched_runs_under_absence_with_its_batched_graphs():
    instance = clustered_instance(40, 2, 0, 0.3, np.random.default_rng(0))
    run = anon_batched(instance, 2, 40_000, U=20, rng=np.random.default_rng(1), absence=0.1)
    assert run.metrics["min_group_size"] >= 2 and run.info["horizon"] == 40_000
    assert all(r["method"].startswith("robust:") for r in run.records)


# --- the parameter: one rule, refused where it has no effect -------------------------------------------------------


@pytest.mark.parametrize("bad", [1.0, -0.1, math.nan, True, "0.1"])
def test_absence_is_a_probability_below_one(bad):
    with pytest.raises(ConfigError, match="absence must be a probability in \\[0, 1\\)"):
        ChannelOptions(C=2, absence=bad)
    with pytest.raises(ConfigError, match="absence"):
        identify(
            MultiUserInstance(np.full((4, 2), 0.5)),
            BestArmElimination(4, 2, "naive", approx=0.5, delta=0.1, rng=np.random.default_rng(0), sigma2=1.25),
            rng=np.random.default_rng(0),
            absence=bad,
        )


def test_the_direct_channel_and_a_confidence_without_absence_are_refused():
    instance = MultiUserInstance(np.array([[0.9, 0.1]] * 4))
    with pytest.raises(ConfigError, match="options.absence must be 0 on the direct channel"):
        DirectFeedback.open(instance, 100, np.random.default_rng(0), ChannelOptions(absence=0.1))
    with pytest.raises(ConfigError, match="confidence must be None without absence"):
        AnonymousChannel(instance, 1, 100, np.random.default_rng(0), confidence=0.9)
    with pytest.raises(ConfigError, match="options.absence must be 0 on the direct channel"):
        simulate("anon-bai", seed=0, users=24, arms=3, C=2, channel="direct", absence=0.1)
    with pytest.raises(ConfigError, match="se: --absence only with --channel anonymous"):
        simulate("se", seed=0, absence=0.1)
    channel = AnonymousChannel(instance, 1, 100, np.random.default_rng(0), absence=0.1)
    with pytest.raises(ConfigError, match="labels must be the channel's own with absent users"):
        channel.serve(np.zeros((1, 4), int), np.zeros((1, 4), int), np.arange(1, 5)[None], np.ones(1, int), 4)


def test_every_anonymous_algorithm_takes_absence_on_the_command_line(tmp_path):
    run = ["--absence", "0.1", "--seeds", "1", "--workers", "1", "--no-progress", "--out", str(tmp_path / "r.csv")]
    small = ["--users", "40", "--arms", "2", "--C", "2"]
    for name, extra in (
        ("anon-batched", ["--horizon", "20000"]),
        ("anon-etc", ["--horizon", "20000"]),
        ("anon-bai", ["--gap", "0.3"]),
        ("se", ["--channel", "anonymous", "--horizon", "20000"]),
    ):
        assert main(["simulate", "--algorithm", name, *small, *extra, *run]) == 0, name
        assert "absence" in (tmp_path / "r.csv").read_text().splitlines()[0]
