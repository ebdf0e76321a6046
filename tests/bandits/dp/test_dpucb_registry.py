"""The paper-001 family as the simulator sees it: names, parameters, metrics, curves, CLI."""

from __future__ import annotations

import csv
from functools import partial

import numpy as np
import pytest

from anonbandits import Result, registry, simulate
from anonbandits.cli.main import main
from anonbandits.core.schedules import checkpoint_grid
from anonbandits.dp import anytime_lazy_ucb, dp_se, ftnl, hybrid_ucb, se
from anonbandits.dp.ledger import Ledger
from anonbandits.envs.rewards import model_means, sum_rewards
from anonbandits.errors import ConfigError

NAMES = ("se", "dp-se", "anytime-lazy-ucb", "hybrid-ucb", "ftnl", "naive-ftnl")


SETTING_1 = "0.75,0.7,0.7,0.7,0.7"  # paper 001, Sec. 6, setting 1
PAPER_T = 2 * 2**21  # "2 x 2^21" rounds, initialization included
PAPER_RUNS = {  # the library call with paper 001's stated settings, for a given generator
    "se": lambda rng: se(SETTING_1, PAPER_T, rng, confidence=1 / PAPER_T, order="round-robin"),
    "dp-se": lambda rng: dp_se(SETTING_1, 0.25, PAPER_T, rng, confidence=1 / PAPER_T, order="round-robin"),
    "hybrid-ucb": lambda rng: hybrid_ucb(SETTING_1, 0.25, 20_000, rng, tree_noise="paper"),
    "ftnl": lambda rng: ftnl(SETTING_1, 0.25, 20_000, rng, noise_multiplier=1.0),
}


@pytest.mark.parametrize("name", sorted(PAPER_RUNS))
def test_defaults_run_paper_001s_settings(name):
    """Given only the means and epsilon (and a short horizon for the per-round algorithms), the simulator runs
    the paper's settings: T = 2 x 2^21 and beta = 1/T with round-robin epochs for (DP-)SE, the paper's tree
    noise Lap(2r/eps) for Hybrid-UCB, Report Noisy Max with Lap(1/eps) for FTNL: the run equals the library
    call with those values on the same seed."""
    given = {"means": SETTING_1} if name == "se" else {"means": SETTING_1, "epsilon": "0.25"}
    if name in ("hybrid-ucb", "ftnl"):
        given["horizon"] = "20000"
    out = simulate(name, seed=4, **given)
    run = PAPER_RUNS[name](np.random.default_rng(4))
    assert out.metrics["regret"] == run.metrics["regret"]
    np.testing.assert_array_equal(out.curve[1], run.curve[1])


@pytest.mark.parametrize("name", NAMES)
def test_every_algorithm_runs_and_reports(name):
    params = {"horizon": "3000", "means": "0.9,0.2,0.1"}
    out = simulate(name, seed=3, **params)
    assert {"regret", "best_arm_found", "releases"} <= set(out.metrics)
    x, y = out.curve
    assert 150 <= x.size <= 200 and x[-1] == 3000
    assert y[-1] == pytest.approx(out.metrics["regret"]) and np.all(np.diff(y) >= -1e-9)
    again = simulate(name, seed=3, **params)
    assert again.metrics == out.metrics  # same seed, same run


def test_bad_parameters_are_config_errors():
    with pytest.raises(ConfigError, match="reward"):
        registry.get("dp-se").resolve({"reward": "cauchy"})
    with pytest.raises(ConfigError, match="epsilon"):
        simulate("anytime-lazy-ucb", seed=0, epsilon="-1", horizon="100")
    with pytest.raises(ConfigError, match="outside"):
        simulate("anytime-lazy-ucb", seed=0, means="0.5,1.5", horizon="100")
    with pytest.raises(ConfigError, match="unknown algorithm"):
        simulate("no-such-algorithm", seed=0)
    with pytest.raises(ConfigError, match="reward_sigma"):
        simulate("dp-se", seed=0, reward="gaussian", reward_sigma="0", horizon="100")
    with pytest.raises(ConfigError, match="spacing"):
        registry.get("se").resolve({"spacing": "log"})


def test_clipped_gaussian_std_and_log_even_curve():
    """``reward_sigma`` and ``spacing`` (paper 004's setting of DP-SE): the run is the library call with the
    clipped Gaussian of that std, that model's exact means as the pseudo-regret's reference (near 0 they
    depend on the std) and the log-even curve points."""
    means, T = "0.05,0.02,0.01", 200_000
    out = simulate(
        "dp-se",
        seed=2,
        means=means,
        epsilon=1.0,
        horizon=T,
        reward="gaussian",
        reward_sigma=0.1,
        confidence=0.1,
        order="blocks",
        spacing="log-even",
    )
    mu = np.array([0.05, 0.02, 0.01])
    run = dp_se(
        means,
        1.0,
        T,
        np.random.default_rng(2),
        confidence=0.1,
        order="blocks",
        reward=partial(sum_rewards, "gaussian", sigma=0.1),
        expected_means=model_means("gaussian", mu, 0.1),
        checkpoints=checkpoint_grid(T, spacing="log-even"),
    )
    assert out.metrics["regret"] == run.metrics["regret"] > 0
    np.testing.assert_array_equal(out.curve[0], checkpoint_grid(T, 200, spacing="log-even"))
    np.testing.assert_array_equal(out.curve[1], run.curve[1])
    wide = simulate(
        "dp-se", seed=2, means=means, epsilon=1.0, horizon=T, reward="gaussian", confidence=0.1, order="blocks"
    )
    assert wide.metrics["regret"] != out.metrics["regret"]  # the default std is 0.5: the named model
    named = dp_se(means, 1.0, T, np.random.default_rng(2), confidence=0.1, order="blocks", reward="gaussian")
    assert wide.metrics["regret"] == named.metrics["regret"]


def test_cli_simulate_writes_the_table(tmp_path, capsys):
    out, plot = tmp_path / "r.csv", tmp_path / "r.png"
    code = main(
        [
            "simulate",
            "--algorithm",
            "dp-se",
            "--means",
            "0.9,0.8,0.7",
            "--epsilon",
            "0.5",
            "--horizon",
            "1000000",
            "--seeds",
            "3",
            "--reward",
            "bernoulli",
            "--confidence",
            "0.1",
            "--workers",
            "1",
            "--no-progress",
            "--out",
            str(out),
            "--plot",
            str(plot),
        ]
    )
    assert code == 0 and plot.stat().st_size > 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 3
    assert {"algorithm", "seed", "epsilon", "horizon", "regret", "wall_time"} <= set(rows[0])
    assert all(r["algorithm"] == "dp-se" and float(r["regret"]) > 0 for r in rows)
    assert (
        main(
            [
                "simulate",
                "--algorithm",
                "dp-se",
                "--epsilon",
                "0",
                "--horizon",
                "10",
                "--seeds",
                "1",
                "--workers",
                "1",
                "--no-progress",
            ]
        )
        == 2
    )
    assert "epsilon" in capsys.readouterr().err


@pytest.mark.parametrize(
    "run",
    [
        lambda rng: se("0.9,0.5", 2000, rng),
        lambda rng: dp_se("0.9,0.5", 1.0, 2000, rng),
        lambda rng: anytime_lazy_ucb("0.9,0.5", 1.0, 2000, rng),
        lambda rng: hybrid_ucb("0.9,0.5", 1.0, 2000, rng),
        lambda rng: ftnl("0.9,0.5", 1.0, 2000, rng),
    ],
)
def test_the_library_functions_return_the_one_result_type(run):
    """What the schema cannot say is in ``info``: the pulls, the best arm and the release ledger (Hybrid-UCB keeps
    none); the registry's run reports the same metrics."""
    res = run(np.random.default_rng(0))
    assert isinstance(res, Result) and {"regret", "best_arm_found", "releases"} <= set(res.metrics)
    assert res.info["pulls"].sum() == 2000 and res.info["best_arm"] == 0
    assert isinstance(res.info["ledger"], Ledger) or res.info["ledger"] is None
    assert res.curve[0][-1] == 2000 and res.curve[1][-1] == pytest.approx(res.metrics["regret"])
