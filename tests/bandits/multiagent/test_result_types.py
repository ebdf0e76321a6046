"""One result type and small kernels for papers 002 and 003: every library function returns
:class:`anonbandits.results.Result` (what the schema cannot say in ``info``), the result types of earlier
releases are still found under their old names with a ``DeprecationWarning``, and no function of the compiled
kernels or of their drivers takes more than 15 parameters (the state travels as named tuples of arrays)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import numpy as np
import pytest

from anonbandits.multiagent.decentralized import run_dser4, run_full_sharing, run_no_sharing
from anonbandits.multiagent.mase import DPMASEConfig, activity_probabilities, central, dp_mase, independent, mase
from anonbandits.multiagent.mase import problem as mase_problem
from anonbandits.results import Result

SRC = Path(__file__).resolve().parents[3] / "src" / "anonbandits" / "multiagent"
MAX_PARAMETERS = 15


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("anonbandits.multiagent.decentralized", "DecentralizedResult"),
        ("anonbandits.multiagent.decentralized.algorithms", "DecentralizedResult"),
        ("anonbandits.multiagent.mase", "MaseResult"),
        ("anonbandits.multiagent.mase.model", "MaseResult"),
    ],
)
def test_old_result_names_give_result_with_a_warning(module: str, name: str) -> None:
    mod = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=f"{name} is deprecated.*anonbandits.results.Result"):
        assert getattr(mod, name) is Result


def test_decentralized_functions_return_results() -> None:
    rng = np.random.default_rng
    runs = [
        run_no_sharing([0.9, 0.1], 4, rng=rng(0)),
        run_full_sharing([0.9, 0.1], 4, rng=rng(0)),
        run_dser4([0.9, 0.1], 8, rng=rng(0), horizon=2000, phi=0.001, eta=0.5),
    ]
    for res in runs:
        assert type(res) is Result and res.label and res.curve_axes is not None
        assert {"agent_arms", "agent_pulls", "votes", "elimination_steps", "log", "releases"} <= set(res.info)
        assert res.info["agent_pulls"].sum() == res.metrics["samples"]


def test_mase_functions_return_results() -> None:
    inst, probs = mase_problem("1"), activity_probabilities(8)
    runs = {
        "mase": mase(inst, probs, np.random.default_rng(0)),
        "dp-mase": dp_mase(inst, probs, DPMASEConfig(eps=1.0), np.random.default_rng(0)),
        "independent": independent(inst, probs, np.random.default_rng(0)),
        "central": central(inst, probs, np.random.default_rng(0)),
    }
    for name, res in runs.items():
        assert type(res) is Result and res.label == name and res.info["instance"] == "problem1"
        assert res.info["messages"].count == res.metrics["messages"]
        assert len(res.info["votes"]) == inst.arms
    assert runs["independent"].metrics["vote_threshold"] is None and runs["independent"].info["exit_rounds"].size
    assert runs["dp-mase"].info["noise"] is not None


def _parameters(node: ast.FunctionDef) -> int:
    a = node.args
    return len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)


@pytest.mark.parametrize(
    "path",
    [
        "decentralized/kernel.py",
        "decentralized/algorithms.py",
        "decentralized/anonymous_sharing.py",
        "mase/se_kernel.py",
        "mase/voting.py",
        "mase/dp_mase.py",
        "mase/model.py",
    ],
)
def test_no_kernel_or_driver_function_takes_more_than_15_parameters(path: str) -> None:
    tree = ast.parse((SRC / path).read_text(encoding="utf-8"))
    long = {
        node.name: _parameters(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and _parameters(node) > MAX_PARAMETERS
    }
    assert not long, f"{path}: {long}"
