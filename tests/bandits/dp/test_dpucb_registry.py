"""The paper-001 family as the simulator sees it: names, parameters, metrics, curves, CLI."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from anonbandits import registry
from anonbandits.cli.main import main
from anonbandits.errors import ConfigError

NAMES = ("se", "dp-se", "anytime-lazy-ucb", "hybrid-ucb", "ftnl", "naive-ftnl")


def test_family_is_registered_with_the_spec_defaults():
    algorithms = registry.all_algorithms()
    for name in NAMES:
        spec = algorithms[name]
        defaults = spec.defaults()
        assert defaults["means"] == "0.9,0.8,0.7" and defaults["reward"] == "bernoulli"
        assert defaults["horizon"] == 4_194_304
        if name != "se":
            assert defaults["epsilon"] == 0.5
    assert registry.get("dp-se").defaults()["confidence"] == "1/T"
    assert registry.get("dp-se").defaults()["order"] == "round-robin"
    assert registry.get("ftnl").defaults()["noise_multiplier"] == 1.0
    assert registry.get("hybrid-ucb").defaults()["tree_noise"] == "paper"


@pytest.mark.parametrize("name", NAMES)
def test_every_algorithm_runs_and_reports(name):
    spec = registry.get(name)
    params = spec.resolve({"horizon": "3000", "means": "0.9,0.2,0.1"})
    out = spec.run(params, 3)
    assert {"regret", "best_arm_found", "releases"} <= set(out.metrics)
    x, y = out.curve
    assert 150 <= x.size <= 200 and x[-1] == 3000
    assert y[-1] == pytest.approx(out.metrics["regret"]) and np.all(np.diff(y) >= -1e-9)
    again = spec.run(params, 3)
    assert again.metrics == out.metrics                       # same seed, same run


def test_bad_parameters_are_config_errors():
    with pytest.raises(ConfigError, match="reward"):
        registry.get("dp-se").resolve({"reward": "cauchy"})
    spec = registry.get("anytime-lazy-ucb")
    with pytest.raises(ConfigError, match="epsilon"):
        spec.run(spec.resolve({"epsilon": "-1", "horizon": "100"}), 0)
    with pytest.raises(ConfigError, match="outside"):
        spec.run(spec.resolve({"means": "0.5,1.5", "horizon": "100"}), 0)


def test_cli_simulate_writes_the_table(tmp_path, capsys):
    out, plot = tmp_path / "r.csv", tmp_path / "r.png"
    code = main(["simulate", "--algorithm", "dp-se", "--means", "0.9,0.8,0.7", "--epsilon", "0.5",
                 "--horizon", "1000000", "--seeds", "3", "--reward", "bernoulli", "--confidence", "0.1",
                 "--workers", "1", "--no-progress", "--out", str(out), "--plot", str(plot)])
    assert code == 0 and plot.stat().st_size > 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 3
    assert {"algorithm", "seed", "epsilon", "horizon", "regret", "wall_time"} <= set(rows[0])
    assert all(r["algorithm"] == "dp-se" and float(r["regret"]) > 0 for r in rows)
    assert main(["simulate", "--algorithm", "dp-se", "--epsilon", "0", "--horizon", "10", "--seeds", "1",
                 "--workers", "1", "--no-progress"]) == 2
    assert "epsilon" in capsys.readouterr().err
