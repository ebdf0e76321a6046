"""benchmarks/anonymous_anytime.py on a tiny case: SE's epochs take no horizon (a run to T is the prefix of a
longer run), the tables have their columns, and every CI contains its mean."""

import importlib
import math
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
TINY = {"users": 24, "arms": 3, "cluster": 8, "gap": 0.3, "reward": "bernoulli"}
HORIZONS = (10_000, 30_000, 100_000, 300_000, 1_000_000)
SPANS = (100_000, 1_000_000)


@pytest.fixture(scope="module")
def bench():
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(ROOT / "benchmarks"))
        yield importlib.import_module("anonymous_anytime")


@pytest.fixture(scope="module")
def runs(bench):
    return bench.experiment(4, HORIZONS, SPANS, cs=(1, 2), decomposers=("polytope",), setting=TINY)


@pytest.mark.parametrize("C", [1, 2])
def test_se_with_horizon_T_is_the_prefix_of_the_long_run(bench, C):
    for span in SPANS:
        gaps = bench.prefix_gaps(C, "polytope", span, HORIZONS, 0, TINY)
        assert set(gaps) == {T for T in HORIZONS if T <= span}
        assert max(gaps.values()) < 1e-12
    # not vacuous: epochs end (and arms leave) inside the span, so a horizon in the learners would show
    long = bench.se_run(C, "polytope", SPANS[-1], 0, TINY)
    done = bench.epochs_done(long, HORIZONS, C)
    assert done[0] == 0 and 0 < done[-2] and long.metrics["users_stopped"] == 1.0
    # a batch cut by the horizon is not a completed epoch
    cut = bench.se_run(C, "polytope", HORIZONS[0], 0, TINY)
    assert len(cut.records) == 1 and bench.epochs_done(cut, [HORIZONS[0]], C).tolist() == [0]
    # and the two runs agree where both are read: the long run passes through the short run's end
    short, long = (bench.se_run(C, "polytope", span, 1, TINY) for span in SPANS)
    assert bench.curve_at(long.curve, [SPANS[0]])[0] == pytest.approx(short.metrics["regret"], rel=1e-12)


def test_the_check_catches_a_horizon_in_the_learners(bench, monkeypatch):
    # SE with confidence 1/T sizes its epochs by T: its runs to T are no longer prefixes of the long run
    from anonbandits import simulate

    monkeypatch.setattr(
        bench,
        "se_run",
        lambda C, dec, horizon, seed, setting, confidence: simulate(
            "se", channel="anonymous", seed=seed, C=C, decomposer=dec, horizon=horizon, confidence="1/T", **setting
        ),
    )
    assert max(bench.prefix_gaps(1, "polytope", SPANS[-1], HORIZONS, 0, TINY).values()) > 1e-3


def test_base_needs_the_horizon(bench):
    # the contrast: Algorithm 1 run to 10^6 is not Algorithm 1 run to 10^5 read at 10^5
    short, long = (bench.base_run(1, "polytope", span, 0, TINY) for span in SPANS)
    assert bench.curve_at(long.curve, [SPANS[0]])[0] != pytest.approx(short.metrics["regret"], rel=1e-6)


def test_curve_at_refuses_rounds_off_the_curve(bench):
    curve = (np.array([0, 10, 20]), np.array([0.0, 1.0, 3.0]))
    assert bench.curve_at(curve, [10, 20]).tolist() == [1.0, 3.0]
    with pytest.raises(ValueError, match="not all rounds"):
        bench.curve_at(curve, [15])
    with pytest.raises(ValueError, match="not all rounds"):
        bench.curve_at(curve, [30])


def test_rows_pair_every_seed_and_horizon(runs):
    rows, curves = runs
    assert len(rows) == 2 * 2 * len(HORIZONS) * 4  # methods x C x T x seeds
    se = [r for r in rows if r["method"] == "se-epochs"]
    assert {(r["C"], r["horizon"], r["seed"]) for r in se} == {
        (r["C"], r["horizon"], r["seed"]) for r in rows if r["method"] == "base"
    }
    # each T is read from the shortest SE run that reaches it
    assert all(r["se_run_to"] == min(s for s in SPANS if s >= r["horizon"]) for r in se)
    # SE's regret is cumulative: nondecreasing in T for every seed
    for C in (1, 2):
        for seed in range(4):
            reg = [r["regret"] for r in sorted(se, key=lambda r: r["horizon"]) if (r["C"], r["seed"]) == (C, seed)]
            assert np.all(np.diff(reg) >= 0)
    assert [c.shape[0] for c in curves[1, "polytope"]] == [5, 5]  # rounds + 4 seeds, per span


def test_summary_columns_and_ordered_intervals(bench, runs):
    summary = bench.summarise(runs[0])
    assert len(summary) == 2 * len(HORIZONS)
    for s in summary:
        assert s["seeds"] == 4
        for name in ("base", "se", "diff"):
            assert s[f"{name}_ci_low"] <= s[f"{name}_mean"] <= s[f"{name}_ci_high"]
            assert all(math.isfinite(s[f"{name}_{k}"]) for k in ("mean", "ci_low", "ci_high"))
        assert s["diff_mean"] == pytest.approx(s["se_mean"] - s["base_mean"])
        assert s["verdict"] == (
            "base lower" if s["diff_ci_low"] > 0 else "se lower" if s["diff_ci_high"] < 0 else "tie"
        )
        assert 0 <= s["base_optimal_fraction"] <= 1 and 0 <= s["se_run_users_stopped"] <= 1
        assert s["base_exploration_rounds"] <= s["horizon"]


def test_plot_writes_a_png(bench, runs, tmp_path):
    summary = bench.summarise(runs[0])
    path = tmp_path / "anytime.png"
    bench.plot(summary, runs[1], path, TINY)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
