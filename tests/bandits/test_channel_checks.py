"""The channels' boundary: every argument checked by its rule, every relation between arguments (shapes, arm
indices below K, a demand of the channel's N x K) refused in one line naming the argument, and the value objects
(:class:`~anonbandits.channels.Served`, :class:`~anonbandits.channels.Batch`,
:class:`~anonbandits.channels.ChannelOptions`) checked however built."""

from __future__ import annotations

import numpy as np
import pytest

from anonbandits.channels import (
    AnonymousChannel,
    Batch,
    ChannelOptions,
    DirectChannel,
    DirectFeedback,
    Served,
    channel_named,
    check_decomposer,
    elicitation_rounds,
)
from anonbandits.channels.anonymous import noisy_variance, partition_groups
from anonbandits.core.learners import EpochElimination
from anonbandits.envs import MultiUserInstance
from anonbandits.errors import ConfigError

MU = np.array([[0.9, 0.1]] * 4)


def _refused(call, name: str) -> str:
    with pytest.raises(ConfigError) as info:
        call()
    message = str(info.value)
    assert name in message and "\n" not in message, message
    return message


def _direct_channel(reward="bernoulli"):
    return DirectChannel(np.array([0.9, 0.1]), reward, np.random.default_rng(0))


def _feedback():
    return DirectFeedback(MultiUserInstance(MU), 100, np.random.default_rng(0))


def _anonymous(users: int = 4, horizon: int = 100):
    return AnonymousChannel(MultiUserInstance(MU[:1].repeat(users, axis=0)), 1, horizon, np.random.default_rng(0))


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: _direct_channel().request(np.array([0, 2]), np.array([1, 1])), "arms"),  # K = 2
        (lambda: _direct_channel().request(np.array([0, -1]), np.array([1, 1])), "arms"),  # -1 does not wrap
        (lambda: _direct_channel().request(np.array([0, 1]), np.array([1, 1, 1])), "counts"),
        (lambda: _direct_channel().request(np.array([0, 1]), np.array([1.0, 2.0])), "counts"),  # not truncated
        (lambda: _direct_channel().sums(np.array([0.5, 0.2]), np.array([1, 2, 3])), "counts"),
        (lambda: _direct_channel().sums(np.array([1.5]), np.array([1])), "mu"),  # a Bernoulli mean above 1
        (lambda: _direct_channel().draw(np.array([0.5, 0.2]), (3,)), "size"),
        (lambda: _direct_channel().encoded(np.array([0, 1]), 2**40, 2**40), "n"),
        (lambda: _direct_channel(lambda mu, n, rng: mu * n).encoded(np.array([0]), 4, 8), "encoded"),
        (lambda: DirectChannel(np.array([0.5, 1.5]), "bernoulli", np.random.default_rng(0)), "means"),
        (lambda: DirectChannel(np.array([0.5]), "poisson", np.random.default_rng(0)), "reward"),
        (lambda: DirectChannel.of(MultiUserInstance(MU), np.random.default_rng(0)), "instance"),
    ],
)
def test_the_direct_channel_refuses_what_its_arms_and_model_cannot_serve(call, name):
    _refused(call, name)


def test_a_model_without_bounds_takes_any_finite_parameter():
    channel = DirectChannel(np.array([11.0, 10.5]), "gaussian-unclipped", np.random.default_rng(0))
    assert channel.request(np.array([0, 1]), np.array([3, 3])).sums.shape == (2,)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: _feedback().play(np.array([0, 0, 2, 0]), 5), "arms"),
        (lambda: _feedback().play(np.array([0, 0, -1, 0]), 5), "arms"),
        (lambda: _feedback().play(np.zeros(3, dtype=int), 5), "arms"),
        (lambda: _feedback().play(np.zeros(4, dtype=int), 1.7), "rounds"),
        (
            lambda: _feedback().serve_batch(
                EpochElimination(3, 2, confidence=0.1), np.ones((4, 2), int), 1, partial=True
            ),
            "learners",
        ),
        (
            lambda: _feedback().serve_batch(
                EpochElimination(4, 2, confidence=0.1), np.ones((4, 3), int), 1, partial=True
            ),
            "demand",
        ),
        (
            lambda: _feedback().serve_batch(EpochElimination(4, 2, confidence=0.1), np.ones((4, 2)), 1, partial=True),
            "demand",
        ),
        (
            lambda: _feedback().serve_batch(EpochElimination(4, 2, confidence=0.1), np.ones((4, 2), int), 1, partial=1),
            "partial",
        ),
        (lambda: _feedback().regret_curve(0), "points"),
        (lambda: DirectFeedback.open(MultiUserInstance(MU), 100, np.random.default_rng(0), {"C": 2}), "options"),
    ],
)
def test_the_feedback_channels_refuse_a_batch_or_a_play_that_is_not_theirs(call, name):
    _refused(call, name)


def test_the_anonymous_channel_refuses_assignments_groups_and_rounds_it_cannot_play():
    channel = _anonymous()
    a = np.array([[0, 0, 1, 1]])
    labels, positions = partition_groups(a, 2, 1)
    ones = np.ones(1, np.int64)
    _refused(lambda: channel.elicit(np.array([0, 0, 0, 2]), np.array([1])), "assignments")
    _refused(lambda: channel.elicit(np.zeros(4, int), np.array([1]), wanted=np.ones((4, 3), int)), "wanted")
    _refused(lambda: channel.elicit(np.zeros(4, int)), "multiplicities")
    # a label past N - 1 would size the auditor's bins by it: refused before anything is allocated
    _refused(lambda: channel.serve(a, np.array([[0, 0, 10**12, 1]]), positions, ones, 4), "labels")
    _refused(lambda: channel.serve(a, labels, positions, ones, elicitation_rounds(1) + 1), "rounds")
    _refused(lambda: channel.serve(a, labels, positions, np.array([1, 1]), 4), "reps")
    _refused(lambda: channel.serve(a, labels, positions, np.array([2**62]), 4), "reps")
    assert channel.t == 0  # nothing refused was played


def test_the_anonymous_channel_checks_its_decomposer_when_it_opens():
    _refused(
        lambda: AnonymousChannel.open(
            MultiUserInstance(MU), 100, np.random.default_rng(0), ChannelOptions(C=1, decomposer="magic")
        ),
        "decomposer",
    )
    assert check_decomposer(decomposer="polytope") == "polytope"


@pytest.mark.parametrize(
    "fields",
    [
        {"C": 0},
        {"C": 2.0},
        {"decomposer": 3},
        {"use_surplus": 1},
        {"max_elicited": 0},
        {"mechanism": "laplace"},
        {"noise_rng": 7},
        {"batch_graph": "graph"},
    ],
)
def test_channel_options_are_checked_when_built(fields):
    _refused(lambda: ChannelOptions(**fields), next(iter(fields)))


def test_the_value_objects_are_checked_however_built():
    served = Served(np.ones((1, 2)), np.ones((1, 2), np.int64), 0.25, 2, 2, 0, 0, "direct", 0, 0)
    _refused(lambda: served._replace(sigma2=float("nan")), "sigma2")
    _refused(lambda: served._replace(sums=np.ones((2, 2))), "sums")
    _refused(lambda: Served._make([None, np.ones((1, 2), int), 0.25, -1, 2, 0, 0, "direct", 0, 0]), "rounds")
    _refused(lambda: Served(None, np.ones((1, 2), int), 0.25, 2, 2, 0, 0, "direct", 0, None), "surplus")
    batch = Batch(np.array([1.0, 2.0]), np.array([1, 2]))
    _refused(lambda: batch._replace(counts=np.array([1, 2, 3])), "sums")
    _refused(lambda: Batch(np.array([1.0, np.inf]), np.array([1, 2])), "sums")


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: channel_named(3), "channel"),
        (lambda: channel_named(DirectChannel), "channel"),  # no open: not a feedback channel
        (lambda: elicitation_rounds(True), "C"),
        (lambda: AnonymousChannel.min_group(2.5), "C"),
        (lambda: noisy_variance(0.25, np.ones((2, 2)), np.ones((2, 3), int), np.ones((2, 2), bool)), "counts"),
        (lambda: noisy_variance(0.25, np.ones((2, 2)), np.ones((2, 2), int), np.ones((2, 2))), "where"),
    ],
)
def test_the_channel_helpers_refuse_what_they_cannot_take(call, name):
    _refused(call, name)


def test_the_direct_channel_ignores_C_but_takes_an_integer():
    assert DirectFeedback.min_group(0) == 1 and DirectFeedback.sample_variance(0) == 0.25
    _refused(lambda: DirectFeedback.min_group(float("nan")), "C")
