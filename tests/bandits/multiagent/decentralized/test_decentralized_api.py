"""The simulator's view of paper 002 (registry, CLI, table columns), input checks, reproducibility and the
options of the run functions (``draw_only_active``, the consensus stopping rule)."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from anonbandits import registry
from anonbandits.cli.main import main
from anonbandits.errors import ConfigError
from anonbandits.multiagent.decentralized import (
    run_decentralized_elimination,
    run_dser4,
    run_full_sharing,
    run_no_sharing,
)

REQUIRED = [
    "algorithm",
    "seed",
    "users",
    "samples",
    "messages",
    "recommended",
    "best_arm_found",
    "approx_optimal",
    "wall_time",
]


def test_registered_with_the_papers_subroutines() -> None:
    algos = registry.all_algorithms()
    for name in ("decentralized-elimination", "no-sharing", "full-sharing"):
        assert algos[name].family == "decentralized"
    params = {p.name: p for p in algos["decentralized-elimination"].params}
    assert set(params["subroutine"].choices) == {"naive", "median", "se", "ser3", "ser4", "ugapec"}
    assert set(params["activity"].choices) == {"uniform", "skewed"}


def test_defaults_run_paper_002s_problem_1() -> None:
    """Given only N, the simulator runs Problem 1 (Sec. 5: means 0.7, 0.5, 0.3 and seven arms at 0.1; eps = 0.25,
    delta = 0.05, eta = 0.9, uniform players) with Decentralized SER3: the run equals the library call with those
    values, and an arm leaves at its 29th vote (M = ceil(log delta / log eta), Sec. 3.2)."""
    spec = registry.get("decentralized-elimination")
    out = spec.run(spec.resolve({"users": 32}), 6)
    res = run_decentralized_elimination(
        [0.7, 0.5, 0.3] + [0.1] * 7,
        32,
        rng=np.random.default_rng(6),
        delta=0.05,
        eta=0.9,
        eps=0.25,
        subroutine="ser3",
        activity="uniform",
    )
    assert out.metrics == res.metrics and out.curve_axes == res.curve_axes == spec.curve_axes
    assert res.metrics["vote_threshold"] == 29 and res.info["votes"].max() == 29 and res.info["votes"][0] == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["--algorithm", "decentralized-elimination", "--users", "40", "--means", "0.9,0.8,0.7"],
        ["--algorithm", "decentralized-elimination", "--users", "40", "--subroutine", "ugapec", "--activity", "skewed"],
        [
            "--algorithm",
            "decentralized-elimination",
            "--users",
            "8",
            "--subroutine",
            "ser4",
            "--eta",
            "0.5",
            "--delta",
            "0.25",
            "--horizon",
            "20000",
            "--phi",
            "0.0005",
            "--means",
            "0.9,0.5,0.1",
        ],
        ["--algorithm", "no-sharing", "--users", "16", "--draw-only-active", "true"],
        ["--algorithm", "no-sharing", "--users", "16", "--draw-only-active"],
        ["--algorithm", "full-sharing", "--users", "16", "--subroutine", "median"],
    ],
)
def test_cli_table(tmp_path, argv) -> None:
    out = tmp_path / "r.csv"
    assert main(["simulate", *argv, "--seeds", "2", "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 2 and all(col in rows[0] for col in REQUIRED)
    assert rows[0]["best_arm_found"] in ("0", "1") and int(rows[0]["samples"]) > 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--users", "20"], "delta must be >= eta"),
        (["--approx", "0"], "--approx must be in (0, 1], got 0.0"),
        (["--epsilon", "0"], "--approx must be in (0, 1], got 0.0"),  # the deprecated name, refused: no notice
        (["--users", "41", "--activity", "skewed"], "agents must be even"),
        (["--means", "0.5"], "at least two arms"),
        (["--drift", "1e-5", "--draw-only-active", "yes"], "--draw-only-active needs stationary"),
        (["--switch-at", "100"], "--switch-at > 0 needs --means-after"),
    ],
)
def test_cli_rejects_bad_parameters(capsys, argv, message) -> None:
    code = main(
        [
            "simulate",
            "--algorithm",
            "decentralized-elimination",
            *argv,
            "--seeds",
            "1",
            "--workers",
            "1",
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1


def test_same_seed_same_run() -> None:
    kw = {"delta": 0.1, "eta": 0.6, "eps": 0.3, "subroutine": "ser3", "activity": "skewed"}
    a, b, c = (
        run_decentralized_elimination([0.7, 0.5, 0.4], 10, rng=np.random.default_rng(s), **kw) for s in (4, 4, 5)
    )
    assert a.metrics["samples"] == b.metrics["samples"] and np.array_equal(a.info["log"].time, b.info["log"].time)
    assert np.array_equal(a.info["agent_arms"], b.info["agent_arms"])
    assert a.metrics["t_consensus"] == b.metrics["t_consensus"]
    assert (a.metrics["samples"], a.metrics["t_consensus"]) != (c.metrics["samples"], c.metrics["t_consensus"])


def test_draw_only_active_counts_only_unfinished_players() -> None:
    """``draw_only_active``: finished players leave the pool, so the steps they would have taken are not counted."""
    kw = {"delta": 0.1, "eta": 0.6, "eps": 0.3}
    drawn = [
        run_decentralized_elimination([0.7, 0.5, 0.4], 10, rng=np.random.default_rng(s), **kw).metrics["samples"]
        for s in range(6)
    ]
    leave = [
        run_decentralized_elimination([0.7, 0.5, 0.4], 10, rng=np.random.default_rng(s), draw_only_active=True, **kw)
        for s in range(6)
    ]
    for res in leave:
        samples = res.metrics["samples"]
        assert samples == res.info["agent_pulls"].sum() and res.info["log"].time.max() <= samples
        assert res.metrics["t_consensus"] is None or res.metrics["t_consensus"] <= res.metrics["samples"]
    assert np.mean([r.metrics["samples"] for r in leave]) < np.mean(drawn)
    alone = run_no_sharing([0.7, 0.5, 0.4], 10, rng=np.random.default_rng(0), delta=0.1, eps=0.3, draw_only_active=True)
    # paper 003's INDEPENDENT: the sum of the players' own runs
    assert alone.metrics["samples"] == alone.info["agent_pulls"].sum()


def test_consensus_stopping_rule() -> None:
    kw = {"delta": 0.1, "eta": 0.6, "eps": 0.3}
    res = run_decentralized_elimination([0.7, 0.5, 0.4], 10, rng=np.random.default_rng(1), stop="consensus", **kw)
    assert res.metrics["samples"] == res.metrics["t_consensus"] and res.metrics["recommended"] == 0
    with pytest.raises(ConfigError, match="stop must be"):
        run_decentralized_elimination([0.7, 0.5], 10, rng=np.random.default_rng(1), stop="never", **kw)
    with pytest.raises(ConfigError, match="per_activation 'round'"):
        run_decentralized_elimination(
            [0.7, 0.5], 10, rng=np.random.default_rng(1), subroutine="ugapec", per_activation="round", **kw
        )
    with pytest.raises(ConfigError, match="stop must be 'all' without a vote board"):  # nothing to agree on
        run_no_sharing([0.7, 0.5], 10, rng=np.random.default_rng(1), stop="consensus")


def test_options_the_baselines_cannot_honour_are_refused() -> None:
    """0-PRIVACY has one learner pulling at every step (a round per activation would miscount its samples);
    DSER4 restarts every player at a reset and runs to its horizon (no stopping rule, no retired players)."""
    rng = np.random.default_rng(1)
    with pytest.raises(ConfigError, match="per_activation must be 'pull' with full sharing"):
        run_full_sharing([0.7, 0.5, 0.3], 8, rng=rng, subroutine="se", eps=0.0, per_activation="round")
    with pytest.raises(ConfigError, match="draw_only_active must be false for DSER4"):
        run_dser4([0.7, 0.5], 40, rng=rng, horizon=1000, phi=0.01, draw_only_active=True)
    with pytest.raises(ConfigError, match="stop must be left out for DSER4"):
        run_dser4([0.7, 0.5], 40, rng=rng, horizon=1000, phi=0.01, stop="consensus")
