"""Registration, parameters with the paper's defaults (paper 003, Sec. 6), the results table, and one-line
errors."""

import csv

import numpy as np
import pytest

from anonbandits import registry
from anonbandits.cli.main import main
from anonbandits.envs import MultiUserInstance
from anonbandits.multiagent.mase import DPMASEConfig, corrupted_elimination, dp_mase, independent, mase

NAMES = ["central", "corrupted-elimination", "dp-mase", "feraud", "independent", "mase"]


PROBLEM_1 = MultiUserInstance(np.array([0.7, 0.5, 0.3] + [0.1] * 7), "bernoulli", 0.5, "problem1")  # paper 003, C.1
PAPER_RUNS = {  # the library call with paper 003's stated settings (delta = 0.05, uniform activity)
    "mase": lambda p, rng: mase(PROBLEM_1, p, rng, beta=0.5, delta=0.05),
    "corrupted-elimination": lambda p, rng: corrupted_elimination(PROBLEM_1, p, rng, eta=0.9, xi=0.05, delta=0.05),
    "dp-mase": lambda p, rng: dp_mase(PROBLEM_1, p, DPMASEConfig(eps=0.1, beta=0.5, delta=0.05), rng),
    "independent": lambda p, rng: independent(PROBLEM_1, p, rng, delta=0.05),
}


@pytest.mark.parametrize("name", sorted(PAPER_RUNS))
def test_defaults_run_paper_003s_problem_1(name):
    """Given only the number of agents, the simulator runs Problem 1 with the paper's settings (delta = 0.05,
    beta = 0.5, eta = 0.9, uniform activity; xi = 0.05 and eps_dp = 0.1 from Fig. 6): the run equals the library
    call with those values on the same seed."""
    spec = registry.get(name)
    out = spec.run(spec.resolve({"users": 32}), 5)
    result = PAPER_RUNS[name](np.full(32, 1 / 32), np.random.default_rng(5))
    assert out.info["instance"] == "problem1" and out.info["votes"] == result.info["votes"].tolist()
    # the library function's Result has the registry's metrics and curve (its info has the logs too)
    assert out.metrics == result.metrics and out.label == name and out.curve_axes == spec.curve_axes
    assert all(np.array_equal(x, y) for x, y in zip(out.curve, result.curve, strict=True))


@pytest.mark.parametrize("name", NAMES)
def test_cli_table_has_required_columns(tmp_path, name):
    out = tmp_path / "r.csv"
    code = main(
        [
            "simulate",
            "--algorithm",
            name,
            "--users",
            "8",
            "--means",
            "0.9,0.4,0.3",
            "--seeds",
            "2",
            "--workers",
            "1",
            "--no-progress",
            "--out",
            str(out),
            "--eta",
            "0.6",
        ]
        + (["--xi", "0.1"] if name == "corrupted-elimination" else [])
        if name in ("corrupted-elimination", "feraud")
        else [
            "simulate",
            "--algorithm",
            name,
            "--users",
            "8",
            "--means",
            "0.9,0.4,0.3",
            "--seeds",
            "2",
            "--workers",
            "1",
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    rows = list(csv.DictReader(open(out)))
    assert len(rows) == 2
    for col in (
        "algorithm",
        "seed",
        "users",
        "samples",
        "rounds",
        "messages",
        "recommended",
        "best_arm_found",
        "wall_time",
    ):
        assert col in rows[0]
    for row in rows:
        assert row["best_arm_found"] == "1" and row["recommended"] == "0" and int(row["samples"]) > 0


def test_feraud_is_corrupted_elimination_without_corruption():
    feraud, ce = registry.get("feraud"), registry.get("corrupted-elimination")
    assert "xi" not in feraud.defaults() and feraud.defaults()["eta"] == 0.9
    params = {"users": 12, "means": "0.9,0.5,0.4", "eta": 0.6}
    a = feraud.run(feraud.resolve(params), 3).metrics
    b = ce.run(ce.resolve({**params, "xi": 0.0}), 3).metrics
    c = ce.run(ce.resolve({**params, "xi": 0.3}), 3).metrics
    assert (a["rounds"], a["messages"]) == (b["rounds"], b["messages"]) != (c["rounds"], c["messages"])


def test_problem_two_and_skewed_activity_run(tmp_path):
    spec = registry.get("dp-mase")
    out = spec.run(spec.resolve({"problem": "2", "users": 16, "activity": "skewed"}), 0)
    assert out.info["instance"] == "problem2" and out.metrics["best_arm_found"] == 1
    x, y = out.curve
    assert y[0] == 10 and y[-1] == 1 and x[-1] == out.metrics["rounds"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--algorithm", "corrupted-elimination", "--xi", "0.5"], "xi must be below"),
        (["--algorithm", "corrupted-elimination", "--users", "10"], "exceeds the 10 agents"),
        (["--algorithm", "corrupted-elimination", "--agents", "10"], "exceeds the 10 agents"),  # no deprecation line
        (["--algorithm", "dp-mase", "--epsilon", "0"], "--epsilon must be a finite positive number, got 0.0"),
        (["--algorithm", "central", "--means", "0.5,1.5"], "outside [0, 1]"),
        (["--algorithm", "mase", "--beta", "1.2"], "--beta must be in (0, 1), got 1.2"),
        (["--algorithm", "mase", "--agents", "0"], "--users must be at least 1, got 0"),
    ],
)
def test_bad_parameters_give_one_line_errors(capsys, argv, message):
    assert main(["simulate", *argv, "--seeds", "1", "--workers", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_library_local_elimination_takes_a_batch_of_epoch_ends():
    """The public (argument-checking) DP-MASE local elimination accepts its (epoch ends, arms) means."""
    from anonbandits.multiagent.mase import dp_mase_local_elimination

    eliminated, noisy = dp_mase_local_elimination(
        1.0,
        np.array([1, 1]),
        np.array([[0.9, 0.1], [0.5, 0.5]]),
        np.ones((2, 2), bool),
        0.5,
        np.array([400, 400]),
        np.random.default_rng(0),
    )
    assert eliminated.tolist() == [[False, True], [False, False]] and noisy.shape == (2, 2)
