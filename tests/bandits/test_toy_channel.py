"""Adding a channel is one class plus one entry of :data:`anonbandits.channels.CHANNELS`: a toy channel, defined
here and registered by name, runs the elimination drivers (identification and batched regret) unchanged, and
what it answers (its sums, its variance proxy, its clock) is what the learners and the results see."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from anonbandits import channels
from anonbandits.anonymous import batched_regret, identify
from anonbandits.anonymous.batches import channel_variance
from anonbandits.channels import ChannelOptions, DirectFeedback, Served
from anonbandits.core.learners import BestArmElimination, EpochElimination
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import ConfigError

#: the toy's bias: every sample of arm 1 reads this much more than it paid
OFFSET = 1.5
#: the toy's variance proxy of one sample (the direct channel's is 1/4)
TOY_SIGMA2 = 0.5


class OffsetChannel(DirectFeedback):
    """A toy channel: the direct channel's exact sums, each sample of arm 1 read ``OFFSET`` higher, with its own
    variance proxy and a batch that costs twice the direct one's rounds."""

    name = "toy"

    @staticmethod
    def sample_variance(C: int) -> float:
        return TOY_SIGMA2

    @classmethod
    def open(
        cls, instance: MultiUserInstance, horizon: int, rng: np.random.Generator, options: ChannelOptions
    ) -> OffsetChannel:
        return cls(instance, horizon, rng)

    def __init__(self, instance: MultiUserInstance, horizon: int, rng: np.random.Generator) -> None:
        super().__init__(instance, horizon, rng)
        self.variance_proxy = TOY_SIGMA2

    def serve_batch(self, learners, demand: np.ndarray, batch: int, *, partial: bool) -> Served | None:
        served = super().serve_batch(learners, demand, batch, partial=partial)
        if served is None or served.sums is None:
            return served
        self.play(learners.recommendation(), served.rounds)  # every batch costs twice its rounds
        bias = np.zeros(demand.shape)
        bias[:, 1] = OFFSET
        return served._replace(sums=served.sums + bias * demand, sigma2=self.variance_proxy, rounds=2 * served.rounds)


class Spy:
    """Records what each update of the wrapped learners receives."""

    def __init__(self, learners):
        self.learners, self.updates = learners, []

    def __getattr__(self, name):
        return getattr(self.learners, name)

    def update(self, sums, counts, sigma2):
        self.updates.append((sums.copy(), counts.copy(), sigma2))
        return self.learners.update(sums, counts, sigma2)


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(channels.CHANNELS, "toy", OffsetChannel)
    return "toy"


# deterministic rewards: arm 0 is every user's best; the toy's bias makes arm 1 look better
MU = np.array([[1.0, 0.0]] * 4)


def test_the_table_resolves_the_toy_and_its_variance_proxy_sizes_the_learners(toy):
    assert channels.channel_named(toy) is OffsetChannel
    assert channel_variance(toy, 3) == TOY_SIGMA2
    too_small = BestArmElimination(4, 2, "naive", approx=0.3, delta=0.1, rng=np.random.default_rng(0))
    with pytest.raises(ConfigError, match="below the toy channel's 0.5"):
        identify(MultiUserInstance(MU), too_small, channel=toy, rng=np.random.default_rng(1))


def test_identify_runs_through_the_toy(toy):
    learners = Spy(
        BestArmElimination(4, 2, "se", approx=0.1, delta=0.1, rng=np.random.default_rng(0), sigma2=TOY_SIGMA2)
    )
    run = identify(MultiUserInstance(MU), learners, channel=toy, rng=np.random.default_rng(1))
    assert learners.updates and all(sigma2 == TOY_SIGMA2 for *_, sigma2 in learners.updates)
    for sums, counts, _ in learners.updates:  # deterministic rewards: the sums are the means plus the bias
        assert np.allclose(sums, counts * (MU + np.array([0.0, OFFSET])))
    assert run.info["channel"] == "toy" and (run.info["recommendation"] == 1).all()  # fooled by the bias
    samples_per_user = sum(int(c.sum(axis=1).max()) for _, c, _ in learners.updates)
    assert run.metrics["rounds"] == 2 * samples_per_user  # the toy's clock, not the direct channel's
    assert {r["method"] for r in run.records} == {"toy"}


def test_batched_regret_runs_through_the_toy(toy):
    instance = MultiUserInstance(MU)
    learners = Spy(EpochElimination(4, 2, confidence=0.1, sigma2=TOY_SIGMA2))
    run = batched_regret(instance, learners, 100_000, channel=toy, rng=np.random.default_rng(1))
    assert learners.updates and all(sigma2 == TOY_SIGMA2 for *_, sigma2 in learners.updates)
    assert (run.info["committed"] == 1).all() and run.metrics["optimal_fraction"] == 0.0
    # committed to arm 1 (gap 1) after the exploration: the toy's books charged it
    assert run.metrics["regret"] >= 4 * (100_000 - run.metrics["exploration_rounds"])
    assert run.info["horizon"] == 100_000 and sum(r["rounds"] for r in run.records) == run.metrics["exploration_rounds"]
    direct = batched_regret(
        instance,
        EpochElimination(4, 2, confidence=0.1, sigma2=TOY_SIGMA2),
        100_000,
        channel="direct",
        rng=np.random.default_rng(1),
    )
    assert (direct.info["committed"] == 0).all() and direct.metrics["regret"] < run.metrics["regret"]


def test_a_driver_takes_the_channel_itself_too():
    """As networkx takes a ``flow_func``: the class, no name needed."""
    learners = BestArmElimination(4, 2, "naive", approx=0.3, delta=0.1, rng=np.random.default_rng(0), sigma2=TOY_SIGMA2)
    run = identify(MultiUserInstance(MU), learners, channel=OffsetChannel, rng=np.random.default_rng(1))
    assert run.info["channel"] == "toy" and "toy" not in channels.CHANNELS


#: a channel's name compared to a literal, either way round
NAME_COMPARED = re.compile(r"""(==|!=)\s*["'](direct|anonymous)["']|["'](direct|anonymous)["']\s*(==|!=|in\b)""")


def test_no_module_compares_a_channel_name_or_tests_a_channel_class():
    """The differences between channels are their methods: no module of the bandit layer branches on a channel's
    name (the table resolves names) or on a channel's class."""
    src = Path(channels.__file__).resolve().parents[1]
    found = [
        f"{path.relative_to(src)}:{n}: {line.strip()}"
        for path in sorted(src.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if NAME_COMPARED.search(line) or re.search(r"isinstance\([^)]*(Channel|Feedback)\b", line)
    ]
    assert not found, "\n".join(found)
