"""The anonymous family's library calls return :class:`anonbandits.results.Result`; the result types before it
(``AnonymousRun``, ``IdentificationRun``), their attributes and the two tuples of channel names still work for
one release, each with a ``DeprecationWarning`` naming what replaces it."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from anonbandits.anonymous import anon_etc, batched_regret, error_rate, identify, stop_curve
from anonbandits.channels import CHANNELS
from anonbandits.core.learners import BestArmElimination, EpochElimination
from anonbandits.envs import clustered_instance
from anonbandits.results import Result


@pytest.fixture(scope="module")
def instance():
    return clustered_instance(12, 2, 0, 0.4, np.random.default_rng(0))


def test_the_drivers_return_results(instance):
    regret = batched_regret(
        instance, EpochElimination(12, 2, confidence=0.1), 10**5, channel="direct", rng=np.random.default_rng(1)
    )
    learners = BestArmElimination(12, 2, "naive", approx=0.3, delta=0.1, rng=np.random.default_rng(1))
    found = identify(instance, learners, channel="direct", rng=np.random.default_rng(2))
    etc = anon_etc(instance, 2, 10_000, explore_scale=0.5, rng=np.random.default_rng(3))
    for run in (regret, found, etc):
        assert isinstance(run, Result) and run.records and run.curve is not None
    assert regret.info["channel"] == found.info["channel"] == "direct" and etc.info["channel"] == "anonymous"
    assert found.metrics["batches"] == len(found.records) == 1 and found.metrics["min_group_size"] == 1
    assert all(np.array_equal(a, b) for a, b in zip(stop_curve(found), found.curve, strict=True))
    assert error_rate(found, instance, 0.3) == 0.0


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("anonbandits.anonymous", "AnonymousRun"),
        ("anonbandits.anonymous", "IdentificationRun"),
        ("anonbandits.anonymous.regret", "AnonymousRun"),
        ("anonbandits.anonymous.bai", "IdentificationRun"),
        ("anonbandits.anonymous.algorithm1", "AnonymousRun"),
        ("anonbandits.anonymous.algorithm2", "AnonymousRun"),
    ],
)
def test_the_old_result_types_still_import_with_a_warning(module, name):
    with pytest.warns(DeprecationWarning, match=rf"{module}\.{name} is deprecated.*anonbandits.results.Result"):
        old = getattr(importlib.import_module(module), name)
    assert issubclass(old, Result)


def test_the_old_attributes_still_answer_with_a_warning(instance):
    run = batched_regret(
        instance, EpochElimination(12, 2, confidence=0.1), 10**5, channel="direct", rng=np.random.default_rng(1)
    )
    with pytest.warns(DeprecationWarning, match=r'read result.metrics\["regret"\]'):
        assert run.regret == run.metrics["regret"]
    with pytest.warns(DeprecationWarning, match="read result.records"):
        assert run.batches[0].rounds == run.records[0]["rounds"]
    learners = BestArmElimination(12, 2, "naive", approx=0.3, delta=0.1, rng=np.random.default_rng(1))
    found = identify(instance, learners, channel="direct", rng=np.random.default_rng(2))
    with pytest.warns(DeprecationWarning, match=r'read result.info\["stopped_at"\]'):
        assert found.stopped_at is found.info["stopped_at"]
    with pytest.warns(DeprecationWarning, match="error_rate"):
        assert found.error_rate(instance, 0.3) == error_rate(found, instance, 0.3)
    with pytest.raises(AttributeError):
        _ = found.no_such_field


@pytest.mark.parametrize("module", ["anonbandits.channel_flags", "anonbandits.core.votes"])
def test_the_tuples_of_channel_names_still_import_with_a_warning(module):
    with pytest.warns(DeprecationWarning, match="anonbandits.channels.CHANNELS"):
        names = importlib.import_module(module).CHANNELS
    assert names == tuple(CHANNELS) == ("direct", "anonymous")
