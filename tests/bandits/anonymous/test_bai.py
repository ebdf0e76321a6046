"""Best-arm identification for every user over the direct and the anonymous channel (anon-bai): exact
sample accounting (surplus discarded), C-anonymity of every release, rounds = sum_b R_b (2C+2), padding by
users who have stopped, and the per-user PAC guarantee."""

from __future__ import annotations

import math

import numpy as np
import pytest

from anonbandits import simulate
from anonbandits.anonymous.bai import error_rate, identify
from anonbandits.channels import elicitation_variance
from anonbandits.channels.anonymous import kept_segments
from anonbandits.core.learners import SUBROUTINES, BestArmElimination
from anonbandits.envs.instances import MultiUserInstance, clustered_instance
from anonbandits.errors import AnonBanditsError


def test_kept_segments_keep_exactly_the_wanted_estimates():
    # two distinct assignments of 4 users on 2 arms, C = 1 (an arm with 2+ users is informative)
    a = np.array([[0, 0, 1, 1], [0, 0, 0, 1]])
    reps = np.array([5, 3])
    wanted = np.array([[2, 0], [7, 0], [0, 5], [0, 1]])
    rows, row_reps, keep, surplus = kept_segments(a, reps, wanted, C=1)
    kept = np.zeros_like(wanted)
    for row, m, k in zip(rows, row_reps, keep, strict=True):
        np.add.at(kept, (np.arange(4)[k], row[k]), m)
    assert kept.tolist() == [[2, 0], [7, 0], [0, 5], [0, 1]]
    # user 2 on arm 0 in row 1 is in a group of 3 (informative) but wants nothing of arm 0; user 3 is alone on
    # arm 1 in row 1 (not informative), so its surplus is row 0's four extra estimates only
    assert surplus.tolist() == [[6, 0], [1, 0], [3, 0], [0, 4]]
    for k in range(2):
        assert row_reps[(rows == a[k]).all(axis=1)].sum() == reps[k]


@pytest.mark.parametrize("decomposer", ["polytope", "block", "greedy", "slack"])
def test_anonymous_run_releases_no_small_group_and_costs_2c_plus_2_rounds_per_assignment(decomposer):
    C = 3
    instance = clustered_instance(48, 3, 0, 0.3, np.random.default_rng(0))
    learners = BestArmElimination(
        48, 3, "se", approx=0.1, delta=0.1, rng=np.random.default_rng(1), sigma2=elicitation_variance(C)
    )
    run = identify(instance, learners, C=C, decomposer=decomposer, rng=np.random.default_rng(2))
    assert run.metrics["min_group_size"] >= C
    assert run.metrics["rounds"] == run.metrics["assignments"] * (2 * C + 2)
    assert not learners.exploring.any() and (run.info["stopped_at"] > 0).all()
    assert run.metrics["samples"] == learners.samples.sum()  # exactly the demanded samples were used


def test_users_who_stopped_fill_groups_for_the_others():
    """Six users with a clear best arm stop after a few samples; the two left need groups of C+1 = 4 on both
    arms, which only the stopped users, playing their recommendation, can fill."""
    mu = np.array([[0.95, 0.05]] * 3 + [[0.05, 0.95]] * 3 + [[0.5, 0.47]] * 2)
    instance = MultiUserInstance(mu=mu)
    learners = BestArmElimination(
        8, 2, "se", approx=0.01, delta=0.1, rng=np.random.default_rng(0), sigma2=elicitation_variance(3)
    )
    run = identify(instance, learners, C=3, decomposer="block", rng=np.random.default_rng(1))
    assert run.metrics["min_group_size"] >= 3
    assert run.info["stopped_at"][:6].max() < run.info["stopped_at"][6:].min()
    assert (run.info["recommendation"][:3] == 0).all() and (run.info["recommendation"][3:6] == 1).all()


def test_stopped_users_are_recruited_onto_an_arm_nobody_else_can_fill():
    """C = 3 needs 4 users on an arm and there are 4 in all: once the two easy users stop on arm 0, arm 1's
    groups for the two still exploring can only be filled by recruiting them as well."""
    mu = np.array([[0.9, 0.1]] * 2 + [[0.5, 0.49]] * 2)
    learners = BestArmElimination(
        4, 2, "se", approx=0.05, delta=0.1, rng=np.random.default_rng(0), sigma2=elicitation_variance(3)
    )
    run = identify(MultiUserInstance(mu=mu), learners, C=3, decomposer="block", rng=np.random.default_rng(1))
    assert run.info["stopped_at"][:2].max() < run.info["stopped_at"][2:].min()  # the easy ones stopped first ...
    assert run.metrics["min_group_size"] >= 3 and not learners.exploring.any()  # ... and the others still finished


def test_an_arm_that_cannot_gather_c_plus_1_users_in_all_is_refused_in_one_line():
    learners = BestArmElimination(
        4, 2, "se", approx=0.05, delta=0.1, rng=np.random.default_rng(0), sigma2=elicitation_variance(4)
    )
    with pytest.raises(AnonBanditsError, match=r"batch 1: arm 0 is wanted but fewer than C \+ 1 = 5 users"):
        identify(
            MultiUserInstance(mu=np.full((4, 2), 0.5)), learners, C=4, decomposer="block", rng=np.random.default_rng(1)
        )


@pytest.mark.slow
@pytest.mark.parametrize("subroutine", SUBROUTINES)
def test_every_user_is_pac_over_the_anonymous_channel(subroutine):
    """The recommendation of each of 300 users is approx-optimal with probability >= 1 - delta (errors below
    delta N plus three binomial standard deviations), with estimates of variance proxy (4C+1)/4."""
    n, approx, delta = 300, 0.1, 0.2
    instance = clustered_instance(n, 3, 0, 0.12, np.random.default_rng(3))
    learners = BestArmElimination(
        n, 3, subroutine, approx=approx, delta=delta, rng=np.random.default_rng(4), sigma2=elicitation_variance(2)
    )
    run = identify(instance, learners, C=2, decomposer="block", rng=np.random.default_rng(5))
    errors = error_rate(run, instance, approx) * n
    assert errors <= delta * n + 3 * math.sqrt(n * delta * (1 - delta))
    assert run.metrics["min_group_size"] >= 2


def test_direct_channel_matches_a_plain_loop():
    """On the direct channel the driver is the learners fed exact Binomial sums, batch after batch: a plain loop
    drawing the same sums from the same stream recommends the same arms after the same rounds."""
    instance = clustered_instance(30, 4, 0, 0.2, np.random.default_rng(0))
    run = identify(
        instance,
        BestArmElimination(30, 4, "ser3", approx=0.05, delta=0.1, rng=np.random.default_rng(1)),
        channel="direct",
        rng=np.random.default_rng(2),
    )
    plain = BestArmElimination(30, 4, "ser3", approx=0.05, delta=0.1, rng=np.random.default_rng(1))
    rng, rounds = np.random.default_rng(2), 0
    while plain.exploring.any():
        d = plain.demand()
        rounds += int(d.sum(axis=1).max())  # users pull in parallel, one sample per round
        plain.update(rng.binomial(d, instance.mu).astype(float), d, 0.25)
    assert run.metrics["rounds"] == rounds and (run.info["recommendation"] == plain.recommendation()).all()
    assert run.metrics["min_group_size"] == 1


def test_the_registry_entry_reports_rounds_and_the_stop_curve():
    r = simulate("anon-bai", seed=0, users=40, arms=2, C=2, gap=0.3, subroutine="naive", decomposer="polytope")
    assert r.metrics["rounds"] == r.metrics["assignments"] * 6 and r.metrics["min_group_size"] >= 2
    assert r.curve_axes == ("round", "users still exploring")
    assert r.curve[1][0] == 40 and r.curve[1][-1] == 0
    direct = simulate("anon-bai", seed=0, users=40, arms=2, C=2, gap=0.3, subroutine="naive", channel="direct")
    assert direct.metrics["rounds"] < r.metrics["rounds"]  # anonymity costs rounds


def test_a_round_cap_below_the_first_batch_reports_nothing_observed():
    r = simulate("anon-bai", seed=0, users=40, arms=2, C=3, max_rounds=5)
    assert r.metrics["rounds"] == 0 and r.metrics["batches"] == 0 and r.metrics["min_group_size"] is None


def test_a_batch_too_large_to_elicit_is_refused_before_the_randomized_decomposer_draws_it(monkeypatch):
    """The driver bounds the distinct user-assignments one batch elicits: randomized is refused on the decomposer's
    own estimate D/p, before it draws (its generator is left untouched); any decomposer is checked after."""
    import anonbandits.anonymous.bai as bai
    from anonbandits.anonymous.batches import decompose_demand

    learners = BestArmElimination(
        12, 3, "naive", approx=0.3, delta=0.1, rng=np.random.default_rng(0), sigma2=elicitation_variance(1)
    )
    demand = learners.demand()
    dec_rng = np.random.default_rng(1)
    before = dec_rng.bit_generator.state
    with pytest.raises(AnonBanditsError, match=r"batch 1: the randomized decomposition would draw about"):
        decompose_demand(learners, demand, 1, "randomized", dec_rng, 1, max_elicited=12 * int(demand.max()))
    assert dec_rng.bit_generator.state == before
    res = decompose_demand(learners, demand, 1, "greedy", dec_rng, 1)  # greedy: 3 distinct assignments
    assert len(res.multiplicities) == 3
    with pytest.raises(AnonBanditsError, match=r"the greedy decomposition has 3 distinct assignments of 12 users"):
        decompose_demand(learners, demand, 1, "greedy", dec_rng, 1, max_elicited=35)
    assert (
        decompose_demand(learners, demand, 1, "greedy", dec_rng, 1, max_elicited=36).total_assignments
        == res.total_assignments
    )
    # identify applies the bound of the module
    instance = clustered_instance(12, 3, 0, 0.4, np.random.default_rng(2))
    monkeypatch.setattr(bai, "MAX_ELICITED", 12 * int(demand.max()))
    with pytest.raises(AnonBanditsError, match=r"randomized decomposition would draw"):
        identify(instance, learners, C=1, decomposer="randomized", rng=np.random.default_rng(3))
