"""Names that say what they hold in papers 002 and 003: every public function is defined once, checked, in the
module where it lives (its unchecked body private beside it), and the packages only re-export it; the registry
entries run the unchecked bodies; the schedule of paper 002 has one name, ``MeansSchedule``, its earlier second
name ``Environment`` still found for one release with a ``DeprecationWarning``."""

from __future__ import annotations

import ast
import importlib
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from anonbandits.errors import ConfigError
from anonbandits.multiagent.decentralized.environment import MeansSchedule

SRC = Path(__file__).resolve().parents[3] / "src" / "anonbandits" / "multiagent"

#: (package, module that defines the function, function name) of every public function the packages re-export
PAIRS = [
    *[
        ("anonbandits.multiagent.mase", "anonbandits.multiagent.mase.voting", name)
        for name in ("mase", "central", "corrupted_elimination", "independent")
    ],
    *[
        ("anonbandits.multiagent.mase", "anonbandits.multiagent.mase.dp_mase", name)
        for name in ("dp_mase", "dp_mase_local_elimination")
    ],
    ("anonbandits.multiagent.mase", "anonbandits.multiagent.shared", "activity_probabilities"),
    *[
        ("anonbandits.multiagent.decentralized", "anonbandits.multiagent.decentralized.algorithms", name)
        for name in ("run_decentralized_elimination", "run_dser4", "run_full_sharing", "run_no_sharing")
    ],
]


@pytest.mark.parametrize(("package", "module", "name"), PAIRS)
def test_the_package_re_exports_the_checked_function_of_its_module(package: str, module: str, name: str) -> None:
    found = getattr(importlib.import_module(package), name)
    defined = importlib.import_module(module)
    assert found is getattr(defined, name)
    body = getattr(defined, f"_{name}")  # the unchecked body, private, beside it
    # the public function holds the name and the docstring (its examples run once); the body gives them up
    assert found.__wrapped__ is body and found.__name__ == name and found.__doc__ and body.__doc__ is None


@pytest.mark.parametrize("package", ["mase", "decentralized"])
def test_the_packages_define_no_function_of_their_own(package: str) -> None:
    """No ``validated(...)`` wrapper (nor any other function) is made in a package ``__init__``: one name, one
    object, wherever it is imported from."""
    tree = ast.parse((SRC / package / "__init__.py").read_text(encoding="utf-8"))
    calls = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert "validated" not in calls


def test_the_public_functions_check_their_arguments() -> None:
    from anonbandits.multiagent.decentralized import run_no_sharing
    from anonbandits.multiagent.mase import activity_probabilities, mase, problem

    with pytest.raises(ConfigError, match="^n_agents must be at least 1, got 0$"):
        run_no_sharing([0.9, 0.1], 0, rng=np.random.default_rng(0))
    with pytest.raises(ConfigError, match="^agents must be at least 1, got 0$"):
        activity_probabilities(0)
    with pytest.raises(ConfigError, match="^rng must be a numpy.random.Generator, got 0$"):
        mase(problem("1"), activity_probabilities(8), 0)


def _called(run: object) -> list[object]:
    """The functions a registry entry's ``run`` (nested ``functools.partial``) holds, outermost first."""
    found: list[object] = []
    while isinstance(run, partial):
        found.append(run.func)
        found += [arg for arg in run.args if callable(arg) and not isinstance(arg, partial)]
        run = next((arg for arg in run.args if isinstance(arg, partial)), None)
    return found


def test_the_registry_entries_run_the_unchecked_bodies() -> None:
    """As before the checked functions took the public names: the registry's parameters are checked by resolve."""
    from anonbandits.multiagent.mase import ALGORITHMS, voting

    runs = {spec.name: _called(spec.run) for spec in ALGORITHMS}
    for name, body in [
        ("mase", voting._mase),
        ("central", voting._central),
        ("independent", voting._independent),
        ("corrupted-elimination", voting._corrupted_elimination),
        ("feraud", voting._corrupted_elimination),
    ]:
        assert body in runs[name], name
        assert getattr(voting, body.__name__[1:]) not in runs[name], name


@pytest.mark.parametrize(
    "old", ["anonbandits.multiagent.decentralized", "anonbandits.multiagent.decentralized.environment"]
)
def test_environment_still_gives_the_means_schedule_with_a_warning(old: str) -> None:
    module = importlib.import_module(old)
    new = "anonbandits.multiagent.decentralized.MeansSchedule"
    with pytest.warns(DeprecationWarning, match=rf"^{old}\.Environment is deprecated, use {new} ") as caught:
        found = module.Environment
    assert found is MeansSchedule
    assert caught[0].filename == __file__  # the warning points at the line using the old name
    namespace: dict = {}
    with pytest.warns(DeprecationWarning, match=new):
        exec(f"from {old} import Environment", namespace)
    assert namespace["Environment"] is MeansSchedule
    assert "Environment" not in vars(module)  # no copy left behind: every use goes through the warning
    assert "Environment" not in getattr(module, "__all__", ())


def test_the_package_exports_the_means_schedule() -> None:
    package = importlib.import_module("anonbandits.multiagent.decentralized")
    assert package.MeansSchedule is MeansSchedule and "MeansSchedule" in package.__all__
