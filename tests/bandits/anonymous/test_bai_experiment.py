"""The best-arm identification experiment (benchmarks/anonymous_bai.py) on a tiny grid: its run table and
summary have their columns, rounds are assignments x (2C+2), error rates are shares, ratios name their
baseline (polytope, else the exact decomposer that ran)."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCHMARKS))  # the script imports its helpers (_output, _stats) by their names
    try:
        spec = importlib.util.spec_from_file_location("anonymous_bai", BENCHMARKS / "anonymous_bai.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["anonymous_bai"] = module  # its dataclass looks its module up there
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("anonymous_bai", None)
        sys.path.remove(str(BENCHMARKS))


def test_tiny_grid_rows_and_summary(bench, tmp_path):
    means = tmp_path / "means.csv"
    rng = np.random.default_rng(0)
    rows = rng.uniform(0.1, 0.4, (12, 3))
    rows[np.arange(12), np.arange(12) % 3] = 0.9  # every arm best for 4 users
    means.write_text("\n".join(",".join(f"{x:.3f}" for x in r) for r in rows) + "\n")
    settings = [
        bench.Setting("tiny", C=1, users=12, arms=3, cluster=0, gap=0.5),
        bench.Setting("data", C=1, means_file=str(means)),
    ]
    decomposers = ("polytope", "randomized", "greedy")
    table = bench.run_grid(settings, ("naive", "se"), decomposers, seeds=2, approx=0.4, delta=0.1)
    assert len(table) == 2 * 2 * 2 * len(decomposers)
    for r in table:
        assert r["status"] == "ok", r.get("reason")
        assert r["rounds"] == r["assignments"] * (2 * r["C"] + 2)
        assert 0.0 <= r["error_rate"] <= 1.0
        assert r["min_group_size"] >= r["C"]
        assert r["role"] == ("control" if r["scheme"] == "naive" else "scheme")
    summary = bench.summarise(table)
    assert len(summary) == 2 * 2 * len(decomposers)
    for s in summary:
        assert s["ratio_baseline"] == "polytope" and s["paired_seeds"] == 2
        assert 0.0 <= s["error_rate_mean"] <= 1.0
        assert s["rounds_ci_low"] <= s["rounds_mean"] <= s["rounds_ci_high"]
        if s["decomposer"] == "polytope":
            assert s["rounds_ratio_mean"] == 1.0
        if s["decomposer"] == "greedy":  # greedy plays one arm per assignment: never fewer rounds than polytope
            assert s["rounds_ratio_mean"] >= 1.0
    md = bench.markdown(summary, ["note"])
    assert md.count("vs polytope") == len(summary) and "naive (control)" in md


def test_quick_mode_skips_the_data_instance_and_writes_outside_docs(bench, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "results_dir", lambda quick: tmp_path)
    monkeypatch.setattr(bench, "CLUSTERED", (bench.Setting("tiny", C=1, users=12, arms=3, gap=0.5),))
    monkeypatch.setattr(bench, "DECOMPOSERS", ("polytope", "block"))
    bench.main(["--quick", "--seeds", "2"])
    assert "skipped (no --means-file" in capsys.readouterr().out
    assert {p.name for p in tmp_path.iterdir()} >= {
        "anonymous_bai.csv",
        "anonymous_bai_summary.csv",
        "anonymous_bai_table.md",
        "anonymous_bai.png",
    }
    assert "skipped" in (tmp_path / "anonymous_bai_table.md").read_text()


def test_refused_runs_are_counted_and_leave_cells_empty(bench, tmp_path):
    """Three users, C = 2: polytope is off its domain (column sums of w/D below C+1); block runs, recruiting the
    easy user once it has stopped onto the arm the other two still want. Refusals are counted, never NaN."""
    means = tmp_path / "means.csv"
    means.write_text("0.95,0.05\n0.55,0.45\n0.45,0.55\n")
    table = bench.run_grid(
        [bench.Setting("data", C=2, means_file=str(means))],
        ("naive", "se"),
        ("polytope", "block"),
        seeds=2,
        approx=0.05,
        delta=0.1,
    )
    status = {(r["scheme"], r["decomposer"]): r["status"] for r in table}
    assert status == {
        ("naive", "polytope"): "refused",
        ("naive", "block"): "ok",
        ("se", "polytope"): "refused",
        ("se", "block"): "ok",
    }
    assert all(
        r["reason"].startswith(("MethodNotApplicableError", "AnonBanditsError"))
        for r in table
        if r["status"] == "refused"
    )
    summary = bench.summarise(table)
    for s in summary:
        assert s["refused"] == (0 if s["decomposer"] == "block" else 2)
        assert not any(isinstance(v, float) and np.isnan(v) for v in s.values())
    md = bench.markdown(summary, [])
    assert "nan" not in md.lower() and md.count("| no finished run | - | - | 2 / 0 of 2 |") == 2
    # polytope refused: block, the only exact decomposer left, is the baseline, and the table says so
    assert {s["ratio_baseline"] for s in summary} == {"block"}
    assert md.count("1.000 [1.000, 1.000] vs block (polytope refused)") == 2


def test_the_ratio_falls_back_to_optimal_where_polytope_is_refused(bench):
    rows = []
    for seed in range(2):
        for dec, status, rounds in (
            ("polytope", "refused", None),
            ("block", "censored", None),
            ("greedy", "ok", 300 + seed),
            ("optimal", "ok", 100 + seed),
        ):
            rows.append(
                {
                    "instance": "data",
                    "users": 3,
                    "arms": 2,
                    "C": 2,
                    "U": 1,
                    "K_C_plus_1": 6,
                    "scheme": "se",
                    "role": "scheme",
                    "decomposer": dec,
                    "seed": seed,
                    "approx": 0.1,
                    "delta": 0.1,
                    "status": status,
                    "rounds": rounds,
                    "assignments": 1,
                    "batches": 1,
                    "error_rate": 0.0,
                }
            )
    summary = {s["decomposer"]: s for s in bench.summarise(rows)}
    assert {s["ratio_baseline"] for s in summary.values()} == {"optimal"}
    assert summary["optimal"]["rounds_ratio_mean"] == 1.0
    assert summary["greedy"]["rounds_ratio_mean"] == pytest.approx((300 / 100 + 301 / 101) / 2)
    assert summary["block"]["censored"] == 2 and summary["block"]["rounds_mean"] is None
    md = bench.markdown(list(summary.values()), [])
    assert "| block | no finished run |" in md and "vs optimal (polytope refused)" in md


def test_a_run_stopped_by_the_horizon_is_censored_not_averaged(bench):
    setting = bench.Setting("tiny", C=1, users=12, arms=3, gap=0.5)
    instance = setting.instance(0)
    row = bench.run_one(setting, instance, "se", "polytope", 0, approx=0.05, max_rounds=2_000)
    assert row["status"] == "censored" and row["unfinished_users"] > 0
    done = bench.run_one(setting, instance, "se", "polytope", 0, approx=0.05)
    summary = bench.summarise([row | {"seed": 1}, done])
    assert summary[0]["censored"] == 1 and summary[0]["refused"] == 0 and summary[0]["rounds_mean"] == done["rounds"]
