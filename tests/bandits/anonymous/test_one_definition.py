"""One concept, one definition (issue 30, item 7): the decomposer check, the ``means`` parameters and the
library functions the anonymous family exports checked."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import anondecomp
from anonbandits import anonymous, channel_params, registry, spec
from anonbandits.anonymous import algorithm1, algorithm2, identify
from anonbandits.channels import check_decomposer
from anonbandits.core.learners import BestArmElimination
from anonbandits.envs import clustered_instance
from anonbandits.errors import ConfigError


def test_every_decomposer_parameter_is_the_one_definition():
    found = [(s.name, p) for s in registry.all_algorithms().values() for p in s.params if p.name == "decomposer"]
    assert {name for name, _ in found} >= {"anon-batched", "anon-bai", "se", "dp-se"}
    one = channel_params.DECOMPOSER
    for name, p in found:
        assert (p.help, p.default, p.rule) == (one.help, "auto", one.rule), name
        assert p.choices in (None, tuple(anondecomp.METHODS)), name


@pytest.mark.parametrize(
    "call",
    [
        lambda: check_decomposer("magic"),
        lambda: anonymous.guaranteed_ratio("magic", 4, 1, 4),
        lambda: identify(
            clustered_instance(12, 2, 0, 0.3, np.random.default_rng(0)),
            BestArmElimination(12, 2, "naive", approx=0.3, delta=0.1, rng=np.random.default_rng(1)),
            channel="direct",
            decomposer="magic",
            rng=np.random.default_rng(2),
        ),
    ],
)
def test_the_library_refuses_an_unknown_decomposer_in_one_line(call):
    # guaranteed_ratio's argument is its ``method``: its message names it as the caller wrote it
    with pytest.raises(ConfigError, match=r"^(decomposer|method) must be one of auto, .*, got 'magic'$"):
        call()


def test_the_registry_refuses_an_unknown_decomposer_by_the_same_test():
    for name in ("anon-batched", "se"):
        with pytest.raises(ConfigError, match="decomposer"):
            registry.get(name).resolve({"decomposer": "magic", **({"channel": "anonymous"} if name == "se" else {})})
    for method in anondecomp.METHODS:
        assert registry.get("se").resolve({"decomposer": method, "channel": "anonymous"})["decomposer"] == method


def test_each_meaning_of_means_has_one_definition():
    """Three meanings, each one help text: one learner's arms, the arms every agent shares (the default is the
    family's), the anonymous family's N x K means file; se/dp-se add the anonymous reading to the first."""
    meanings = {
        spec.ARM_MEANS.help,
        spec.agent_means("").help,
        channel_params.INSTANCE_MEANS.help,
        channel_params.EPOCH_MEANS.help,
    }
    used = {p.help for s in registry.all_algorithms().values() for p in s.params if p.name == "means"}
    assert used == meanings
    assert channel_params.EPOCH_MEANS.help.startswith(spec.ARM_MEANS.help)


@pytest.mark.parametrize("name", ["anon_batched", "anon_etc", "etc_assignments", "guaranteed_ratio"])
def test_the_exported_function_is_the_modules_own_and_checks_its_arguments(name):
    """No checked wrapper shadows an unchecked function of the same name: the module's public function is the
    checked one, the unchecked body private."""
    module = algorithm1 if hasattr(algorithm1, name) else algorithm2
    assert getattr(anonymous, name) is getattr(module, name)
    assert getattr(module, name).__wrapped__ is getattr(module, f"_{name}")
    assert inspect.signature(getattr(module, name)) == inspect.signature(getattr(module, f"_{name}"))


def test_a_checked_function_refuses_what_the_registry_refuses():
    with pytest.raises(ConfigError, match="n_arms must be at least 2, got 1"):
        algorithm2.etc_assignments(n_users=4, n_arms=1, C=1)
