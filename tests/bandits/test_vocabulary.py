"""One parameter vocabulary (deprecated aliases, shared checks, seeds) and one results schema for every algorithm."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from anonbandits import registry, results, simulate, vocabulary
from anonbandits.cli.main import main
from anonbandits.dp.distributed import PROTOCOLS, run_elimination
from anonbandits.errors import ConfigError
from anonbandits.multiagent.decentralized import run_no_sharing
from anonbandits.multiagent.mase import mase, problem
from anonbandits.results import Result
from anonbandits.spec import DeprecatedParameterWarning

DOCS = Path(__file__).resolve().parents[2] / "docs" / "parameters.md"
RUN = ["--seeds", "1", "--workers", "1", "--no-progress"]

#: small parameters of every algorithm, so that each runs in well under a second
SMALL = {
    "anonymous": {"users": 40, "arms": 2, "C": 2, "horizon": 20_000},
    "dp": {"horizon": 20_000},
    "distributed-dp": {"horizon": 20_000},
    "multi-agent BAI (paper 003)": {"users": 8, "means": "0.9,0.4,0.3"},
    "decentralized": {"users": 8, "means": "0.9,0.4,0.3"},
}
EXTRA = {
    "decentralized-elimination": {"eta": 0.5, "delta": 0.25, "horizon": 5_000},
    "corrupted-elimination": {"eta": 0.6, "xi": 0.1},
    "feraud": {"eta": 0.6},
    "anon-bai": {"horizon": None, "gap": 0.3},
}


def small(name: str) -> dict:
    merged = {**SMALL[registry.get(name).family], **EXTRA.get(name, {})}
    return {k: v for k, v in merged.items() if v is not None}  # None: a shared setting this one does not take


# --- the names -------------------------------------------------------------------------------------------------


def test_one_name_one_meaning_across_families():
    """The renamed meanings have their own names, and the old names exist only as deprecated aliases."""
    specs = registry.all_algorithms()
    names = {spec.name: {p.name for p in spec.params} for spec in specs.values()}
    for old in ("agents", "sigma", "max_steps"):
        assert not any(old in n for n in names.values()), old
    assert {a for a, n in names.items() if "gamma" in n} == {"anon-batched"}  # BaSE's constant only
    for family in ("multi-agent BAI (paper 003)", "decentralized"):  # delta: a failure probability
        assert all(
            "delta" in names[s.name] and "dp_delta" not in names[s.name] for s in specs.values() if s.family == family
        )
    # the DP delta is dp_delta wherever there is one; delta, where present beside it, would be ambiguous
    private = {a for a, n in names.items() if "dp_delta" in n}
    assert {"anon-batched", "anon-etc", "dist-rdp-se", "dist-cdp-se"} <= private
    assert all("delta" not in n for n in names.values() if "dp_delta" in n)
    assert all(
        "epsilon" not in names[s.name] and "approx" in names[s.name]
        for s in specs.values()
        if s.family == "decentralized"
    )


@pytest.mark.parametrize(
    ("name", "old", "new", "value"),
    [
        ("mase", "agents", "users", 16),
        ("dp-mase", "sigma", "reward_sigma", 0.3),
        ("central", "gamma", "activity_exponent", 1.2),
        ("no-sharing", "max_steps", "max_rounds", 5000),
        ("decentralized-elimination", "epsilon", "approx", 0.5),
        ("full-sharing", "agents", "users", 12),
        ("anon-etc", "delta", "dp_delta", 1e-5),
        ("dist-rdp-se", "delta", "dp_delta", 1e-7),
    ],
)
def test_a_deprecated_name_is_its_new_name_with_a_warning(name, old, new, value):
    spec = registry.get(name)
    with pytest.warns(DeprecatedParameterWarning, match=f"parameter '{old}' is deprecated, use parameter '{new}'"):
        resolved = spec.resolve({old: value})
    assert resolved == spec.resolve({new: value}) and old not in resolved
    notes: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # collected, not warned
        spec.resolve({old: str(value)}, as_flags=True, deprecated=notes)
    assert notes == [f"--{old.replace('_', '-')} is deprecated, use --{new.replace('_', '-')}"]


def test_old_and_new_name_together_and_a_refused_call_say_only_why():
    spec = registry.get("mase")
    with pytest.raises(ConfigError, match="'agents' is the deprecated name of parameter 'users'"):
        spec.resolve({"agents": 4, "users": 4})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a DeprecatedParameterWarning would fail here
        with pytest.raises(ConfigError, match="delta must be in"):
            spec.resolve({"agents": 4, "delta": 2.0})


def test_simulate_takes_a_deprecated_name_and_warns():
    with pytest.warns(FutureWarning, match="'agents' is deprecated"):
        old = simulate("central", seed=0, agents=8, means="0.9,0.4,0.3")
    assert old.metrics == simulate("central", seed=0, users=8, means="0.9,0.4,0.3").metrics


def test_cli_says_a_deprecated_flag_once_and_not_when_refused(tmp_path, capsys):
    argv = ["simulate", "--algorithm", "mase", "--agents", "8", "--sigma", "0.4", "--means", "0.9,0.4,0.3"]
    assert main([*argv, "--seeds", "2", "--workers", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "anonbandits simulate: --agents is deprecated, use --users",
        "anonbandits simulate: --sigma is deprecated, use --reward-sigma",
    ]
    assert main([*argv, *RUN, "--out", str(tmp_path / "r.txt")]) == 2  # refused: only why
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "unsupported extension" in err[0]


def test_a_grid_file_with_deprecated_keys_says_each_once(tmp_path, capsys):
    grid = tmp_path / "g.toml"
    grid.write_text(
        'seeds = 2\n[[runs]]\nalgorithm = "central"\nagents = [6, 8]\nmeans = "0.9,0.4,0.3"\n'
        '[[runs]]\nalgorithm = "mase"\nagents = 8\nmeans = "0.9,0.4,0.3"\n'
    )
    out = tmp_path / "g.csv"
    assert main(["simulate", "--config", str(grid), "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "anonbandits simulate: parameter 'agents' is deprecated, use parameter 'users'"
    ]
    header = out.read_text().splitlines()[0].split(",")
    assert "users" in header and "agents" not in header


def test_bool_parameters_are_plain_flags(tmp_path):
    base = [
        "simulate",
        "--algorithm",
        "anon-batched",
        "--users",
        "40",
        "--arms",
        "2",
        "--C",
        "2",
        "--horizon",
        "20000",
        *RUN,
    ]
    rows = []
    for flag in (["--best-effort"], ["--best-effort", "true"], ["--best-effort", "false"], []):
        out = tmp_path / f"r{len(rows)}.csv"
        assert main([*base, *flag, "--out", str(out)]) == 0
        rows.append(
            out.read_text()
            .splitlines()[1]
            .split(",")[list(registry.get("anon-batched").defaults()).index("best_effort") + 1]
        )
    assert rows == ["True", "True", "False", "False"]


# --- seeds and library checks ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1.7, True, -1, "3", None, 2.0])
def test_a_seed_is_a_non_negative_integer(seed):
    with pytest.raises(ConfigError, match="seed must be a non-negative integer"):
        simulate("se", seed=seed, horizon=1000)


def test_numpy_integer_seeds_are_seeds():
    assert simulate("se", seed=np.int64(3), horizon=1000).metrics == simulate("se", seed=3, horizon=1000).metrics


def test_library_functions_check_their_arguments_like_the_registry():
    rng = np.random.default_rng(0)
    probs = [0.125] * 8
    assert (
        mase(problem("1"), probs, rng).metrics == mase(problem("1"), np.array(probs), np.random.default_rng(0)).metrics
    )
    with pytest.raises(ConfigError, match=r"^probs must be a positive probability vector"):
        mase(problem("1"), [0.5, 0.6], rng)
    protocol = PROTOCOLS["dist-dp-se"](0.5, 0.1, 1.0)
    kw = dict(reward="bernoulli", reward_sigma=0.5, horizon=1000, confidence=0.1, crs=1.0, rng=rng)
    with pytest.raises(ConfigError, match=r"^batch_base must be at least 2, got 0$"):
        run_elimination(protocol, [0.9, 0.5], batch_base=0, **kw)
    with pytest.raises(ConfigError, match=r"^horizon must be at least 1, got 0$"):
        run_elimination(protocol, [0.9, 0.5], batch_base=2, **{**kw, "horizon": 0})
    with pytest.raises(ConfigError, match=r"^n_agents must be at least 1, got 0$"):
        run_no_sharing([0.9, 0.5], 0, rng=rng)
    with pytest.raises(ConfigError, match=r"^rng must be a numpy.random.Generator"):
        run_no_sharing([0.9, 0.5], 4, rng=0)
    # the registry says the same of the same value
    with pytest.raises(ConfigError, match=r"^batch_base must be at least 2, got 0$"):
        simulate("dist-dp-se", seed=0, batch_base=0)


def test_every_horizon_has_the_one_hard_bound():
    """The vocabulary's horizon rule and the channels' clock share MAX_HORIZON (10^9 rounds): a library call and
    a registry run refuse a larger horizon in the same line, before any work (a horizon of 10^30 once ran for
    minutes or overflowed deep inside)."""
    from anonbandits.channels.feedback import MAX_HORIZON
    from anonbandits.multiagent.decentralized import run_dser4
    from anonbandits.validation import MAX_HORIZON as RULE_BOUND

    assert MAX_HORIZON == RULE_BOUND == 10**9
    message = r"^horizon must be .*1e\+09 rounds.*, got 1000000000000000000000000000000$"
    with pytest.raises(ConfigError, match=message):
        run_dser4([0.9, 0.5], 4, rng=np.random.default_rng(0), horizon=10**30, phi=0.01, eta=0.5)
    for name in ("se", "decentralized-elimination"):
        with pytest.raises(ConfigError, match=message):
            simulate(name, seed=0, horizon=10**30)


# --- the results schema ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(registry.all_algorithms()))
def test_every_algorithm_reports_by_the_schema(name):
    spec = registry.get(name)
    out = simulate(name, seed=0, **small(name))
    assert out.metrics and out.label and out.curve is not None and out.curve_axes == spec.curve_axes
    # a table row holds the run's parameters and metrics side by side: no metric has one of its parameters' names
    assert not set(out.metrics) & set(spec.defaults())
    for key, value in out.metrics.items():
        m = results.metric(key)
        assert m is not None, key
        if value is None:
            assert m.empty, key
        else:
            assert type(value) is (float if m.kind == "float" else int) or (m.kind == "float" and type(value) is int)
            assert math.isfinite(value) and (m.kind != "flag" or value in (0, 1)), key
    x, y = out.curve
    assert len(x) == len(y)


def test_privacy_metrics_are_empty_without_privacy_and_numbers_with_it():
    quiet = simulate("anon-etc", seed=0, **small("anon-etc"))
    noisy = simulate("anon-etc", seed=0, privacy="central", epsilon=1.0, **small("anon-etc"))
    keys = ("privacy_epsilon", "privacy_epsilon_per_user", "privacy_delta")
    assert all(quiet.metrics[k] is None for k in keys) and noisy.metrics["privacy_epsilon"] == 1.0


def test_the_schema_refuses_what_is_not_a_metric():
    for bad in (
        {"regret": math.nan},
        {"regret": math.inf},
        {"votes": "0,1"},
        {"no_such_metric": 1},
        {"samples": 1.5},
        {"best_arm_found": 2},
        {"regret": None},
    ):
        with pytest.raises(ValueError):
            Result(metrics=bad)
    ok = Result(metrics={"best_arm_found": True, "samples": np.int64(4), "R_over_D_b2": 1.5, "min_group_size": None})
    assert ok.metrics == {"best_arm_found": 1, "samples": 4, "R_over_D_b2": 1.5, "min_group_size": None}
    assert type(ok.metrics["samples"]) is int


def test_empty_metrics_are_empty_cells(tmp_path):
    out = tmp_path / "r.csv"
    assert (
        main(
            [
                "simulate",
                "--algorithm",
                "anon-etc",
                "--users",
                "40",
                "--arms",
                "2",
                "--C",
                "2",
                "--horizon",
                "3000",
                *RUN,
                "--out",
                str(out),
            ]
        )
        == 0
    )
    header, row = (line.split(",") for line in out.read_text().splitlines())
    cells = dict(zip(header, row, strict=True))
    assert cells["privacy_epsilon"] == "" and "nan" not in row
    assert 0 <= float(cells["optimal_fraction"]) <= 1  # never empty: the recommendations when nobody committed


def test_the_docs_page_matches_the_registry_and_the_schema():
    text = DOCS.read_text(encoding="utf-8")
    assert vocabulary.render(text) == text, "run: python -m anonbandits.vocabulary docs/parameters.md"
