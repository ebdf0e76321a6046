"""UGapEc behind the batch-learner protocol (anonbandits.core.learners.UGapEc): the same per-pull choices as a
plain sequential UGapEc loop written from the paper (Gabillon, Ghavamzadeh, Lazaric, NeurIPS 2012, a subroutine
of paper 002, Sec. 5.1), one pull per user and batch over the anonymous channel (R_b = 1, no group below
C), and its (epsilon, delta)-PAC guarantee per user."""

from __future__ import annotations

import math

import numpy as np
import pytest

from anonbandits import simulate
from anonbandits.anonymous.bai import error_rate, identify
from anonbandits.channels import CHANNELS, AnonymousChannel, elicitation_variance
from anonbandits.core.learners import BAI_SCHEMES, SUBROUTINES, BatchLearner, UGapEc
from anonbandits.envs.instances import clustered_instance
from anonbandits.errors import ConfigError


def _plain_ugapec(k: int, approx: float, delta: float, draw) -> tuple[list[int], int]:
    """One UGapEc learner, pull by pull, for rewards in [0, 1] (b - a = 1, so beta_k(t) = sqrt(log(4 K t^3 /
    delta) / (2 T_k)) after t pulls); ``draw(arm)`` returns the arm's next reward. Every arm once (in index
    order: the indices after the first K pulls do not depend on their order), then the more uncertain of
    J = argmin B and u = argmax_{k != J} U until B_J < approx. Returns the arms pulled and the recommendation."""
    sums, pulls, arms = [0.0] * k, [0] * k, []

    def pull(a: int) -> None:
        sums[a] += draw(a)
        pulls[a] += 1
        arms.append(a)

    for a in range(k):
        pull(a)
    while True:
        t = len(arms)
        beta = [math.sqrt(math.log(4 * k * t**3 / delta) / (2 * pulls[a])) for a in range(k)]
        mean = [sums[a] / pulls[a] for a in range(k)]
        upper = [mean[a] + beta[a] for a in range(k)]
        b = [max(upper[x] for x in range(k) if x != a) - (mean[a] - beta[a]) for a in range(k)]
        j = min(range(k), key=b.__getitem__)
        if b[j] < approx:
            return arms, j
        u = max((x for x in range(k) if x != j), key=upper.__getitem__)
        pull(j if beta[j] >= beta[u] else u)


def test_ugapec_makes_the_plain_loops_choices_on_the_same_rewards():
    """Continuous rewards (no ties): every learner pulls the arms the plain loop pulls, in the same order after
    the first K pulls (UGapEc's initial order is random), and recommends the same arm."""
    n, k, approx, delta = 15, 4, 0.2, 0.1
    rng = np.random.default_rng(0)
    mu = rng.uniform(0.3, 0.7, size=(n, k))
    table = np.clip(mu[:, :, None] + rng.uniform(-0.3, 0.3, size=(n, k, 6000)), 0.0, 1.0)
    learners = UGapEc(n, k, approx=approx, delta=delta, rng=np.random.default_rng(1))
    assert isinstance(learners, BatchLearner)
    chosen: list[list[int]] = [[] for _ in range(n)]
    while learners.exploring.any():
        wanted = learners.demand()
        rows, arms = np.nonzero(wanted)
        assert rows.tolist() == np.flatnonzero(learners.exploring).tolist()  # one pull per exploring learner
        sums = np.zeros((n, k))
        sums[rows, arms] = table[rows, arms, learners.counts[rows, arms]]
        for i, a in zip(rows, arms, strict=True):
            chosen[i].append(int(a))
        learners.update(sums, wanted, 0.25)
    for i in range(n):
        seen = dict.fromkeys(range(k), 0)

        def draw(a: int, i: int = i, seen: dict = seen) -> float:
            seen[a] += 1
            return float(table[i, a, seen[a] - 1])

        arms, best = _plain_ugapec(k, approx, delta, draw)
        assert sorted(chosen[i][:k]) == list(range(k)), i
        assert chosen[i][k:] == arms[k:], i
        assert learners.recommendation()[i] == best and learners.samples[i] == len(arms), i
    assert not learners.exploring.any() and (learners.active.sum(axis=1) == 1).all()


def test_the_variance_proxy_widens_the_radii():
    """The same rewards, told to have proxy 1 instead of 1/4: every squared radius is 4 sigma2 = 4 times
    larger, so the learner needs more than twice the pulls to stop."""
    pulls = {}
    for sigma2 in (0.25, 1.0):
        learners = UGapEc(1, 2, approx=0.2, delta=0.1, rng=np.random.default_rng(0))
        while learners.exploring.any():
            wanted = learners.demand()
            learners.update(wanted * np.array([0.8, 0.2]), wanted, sigma2)
        pulls[sigma2] = int(learners.samples[0])
    assert pulls[1.0] > 2 * pulls[0.25]


def test_ugapec_takes_exactly_one_pull_and_checks_its_arguments():
    learners = UGapEc(2, 3, approx=0.1, delta=0.1, rng=np.random.default_rng(0))
    wanted = learners.demand()
    with pytest.raises(ValueError, match="discard surplus samples"):
        learners.update(np.zeros((2, 3)), wanted + 1, 0.25)
    with pytest.raises(ConfigError):
        UGapEc(2, 3, approx=0.0, delta=0.1, rng=np.random.default_rng(0))
    assert "ugapec" in BAI_SCHEMES and "ugapec" not in SUBROUTINES


def _recorded_identify(instance, learners, C: int, decomposer: str, seed: int):
    """``identify`` over the anonymous channel, and the channel it ran on (for its auditor's group sizes)."""
    channels: list[AnonymousChannel] = []

    class Recorded(AnonymousChannel):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            channels.append(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(CHANNELS, "anonymous", Recorded)  # the driver opens the channel the table names
        run = identify(instance, learners, C=C, decomposer=decomposer, rng=np.random.default_rng(seed))
    return run, channels[0]


@pytest.mark.parametrize("decomposer", ["polytope", "auto"])
def test_over_the_anonymous_channel_every_batch_is_one_assignment_and_no_group_is_below_c(decomposer):
    """Every batch wants one sample per user, and here every wanted arm has C+1 users (the others fill), so
    an exact decomposer gives R_b = 1: the rounds are 2C+2 per batch, i.e. per sample of the slowest user."""
    C, n = 1, 6
    instance = clustered_instance(n, 2, 0, 0.7, np.random.default_rng(0))
    learners = UGapEc(n, 2, approx=0.6, delta=0.05, rng=np.random.default_rng(1), sigma2=elicitation_variance(C))
    run, channel = _recorded_identify(instance, learners, C, decomposer, seed=2)
    sizes = channel.auditor.group_sizes
    assert run.metrics["min_group_size"] >= C and np.flatnonzero(sizes).min() >= C
    m = run.metrics
    assert m["batches"] > 50 and m["assignments"] == m["batches"]  # R_b >= 1 for every batch, so each is 1
    assert m["rounds"] == m["batches"] * (2 * C + 2) and m["samples"] == learners.samples.sum()
    assert learners.samples.max() == m["batches"] and error_rate(run, instance, 0.6) == 0.0


def test_anon_bai_runs_ugapec_and_keeps_its_default():
    m = simulate(
        "anon-bai", seed=0, subroutine="ugapec", channel="direct", users=6, arms=2, C=1, gap=0.7, approx=0.6
    ).metrics
    assert m["batches"] == m["rounds"] and m["users_approx_optimal"] == 1.0
    with pytest.raises(ConfigError, match="subroutine"):
        simulate("anon-bai", seed=0, subroutine="ugap")


@pytest.mark.slow
def test_every_user_is_pac_over_the_anonymous_channel():
    """Each of 240 users' recommendations is approx-optimal with probability >= 1 - delta (errors below delta N
    plus three binomial standard deviations), with estimates of variance proxy (4C+1)/4."""
    n, C, approx, delta = 240, 2, 0.2, 0.2
    instance = clustered_instance(n, 3, 0, 0.25, np.random.default_rng(3))
    learners = UGapEc(n, 3, approx=approx, delta=delta, rng=np.random.default_rng(4), sigma2=elicitation_variance(C))
    run, _ = _recorded_identify(instance, learners, C, "auto", seed=5)
    errors = error_rate(run, instance, approx) * n
    assert run.metrics["min_group_size"] >= C and not learners.exploring.any()
    assert errors <= delta * n + 3 * math.sqrt(n * delta * (1 - delta))


@pytest.mark.slow
def test_the_pac_test_has_power():
    """The radius must carry the variance proxy: 1,000 learners on Gaussian samples of variance 13/4 (the
    anonymous estimates' at C = 3) meet the guarantee when told so, and fail the same check when told 1/4."""
    n, approx, delta, sigma2 = 1000, 0.3, 0.1, 13 / 4
    mu = np.array([0.6, 0.28])  # arm 1 is 0.32 > approx below arm 0
    bound = delta * n + 3 * math.sqrt(n * delta * (1 - delta))
    errors = {}
    for told in (sigma2, 0.25):
        rng = np.random.default_rng(6)
        learners = UGapEc(n, 2, approx=approx, delta=delta, rng=np.random.default_rng(7))
        while learners.exploring.any():
            wanted = learners.demand()
            learners.update(wanted * (mu + rng.normal(0.0, math.sqrt(sigma2), size=(n, 1))), wanted, told)
        errors[told] = int((learners.recommendation() != 0).sum())
    assert errors[sigma2] <= bound < errors[0.25]
