"""Anytime regret over the anonymous channel: SE with doubling epochs (no horizon) against Algorithm 1 (BaSE, which
is given the horizon T), for T = 10^4 .. 10^6, and beyond to 10^7 to find where the two cross.

Setting (fixed before any result was seen): paper 000's Section 4 setting with U above K(C+1), N = 300 users,
K = 5 arms, balanced clusters U = 60, Bernoulli rewards, best-vs-second-best gap 0.1 (other means uniform in
[0.1, 0.8]); C in {1, 2, 3}; decomposers ``polytope`` and the paper's ``greedy``.

* Algorithm 1 (``anon-batched`` at its defaults: minimax grid, gamma = 4, the paper's alpha) needs T: it is
  re-run for every T.
* SE epochs (``se --channel anonymous``, :class:`~anonbandits.core.learners.EpochElimination` sized for the
  channel's variance proxy (4C+1)/4) take no horizon: its confidence is a fixed beta = 0.01, not 1/T. One run per
  seed to T = 10^6 is read at every T up to 10^6 on its regret curve, and one to 10^7 at 3 x 10^6 and 10^7. That
  this is the regret SE would have with horizon T is checked for seed 0 at every T and both runs (a run to T
  against the long run's curve; the script stops if they differ).

Both use the registry's streams of a seed (``default_rng(seed).spawn(4)``: instance, rewards, decomposer,
noise), so a seed gives both methods the same instance and the same reward source (paired seeds). Reported per
(C, decomposer, T): mean regret (summed over users) with a Student-t 95% CI over the seeds, the paired
difference SE - BaSE with its 95% CI and a verdict, BaSE's exploration rounds and share of users committed to
their optimal arm, the SE epochs completed by T, and at the end of SE's run the share of users it had stopped
(with the rounds until then) and the share whose recommendation is their optimal arm.

Usage: python benchmarks/anonymous_anytime.py [--quick]
A full run (30 seeds, about a minute) writes docs/results/anonymous_anytime{.csv,_summary.csv,.png};
``--quick`` (3 seeds, T up to 10^5) writes to build/benchmarks/ instead.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from _output import results_dir
from _stats import half_width

from anonbandits import Result, simulate
from anonbandits.experiments import write_table

SETTING = {"users": 300, "arms": 5, "cluster": 60, "gap": 0.1, "reward": "bernoulli"}
CS = (1, 2, 3)
DECOMPOSERS = ("polytope", "greedy")
HORIZONS = (10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000)
#: SE's runs per seed: every T up to 10^6 is read from one run to 10^6 (its curve has a point every 5,000
#: rounds), the two beyond from one run to 10^7
SPANS = (1_000_000, 10_000_000)
#: SE's failure probability: a constant, so that no horizon enters the learners
CONFIDENCE = 0.01
METHODS = ("base", "se-epochs")


def base_run(C: int, decomposer: str, horizon: int, seed: int, setting: Mapping = SETTING) -> Result:
    """Algorithm 1 (BaSE given ``horizon``) at its registry defaults."""
    return simulate("anon-batched", seed=seed, C=C, decomposer=decomposer, horizon=horizon, **setting)


def se_run(
    C: int, decomposer: str, horizon: int, seed: int, setting: Mapping = SETTING, confidence: float = CONFIDENCE
) -> Result:
    """SE with doubling epochs over the anonymous channel, played for ``horizon`` rounds."""
    return simulate(
        "se",
        channel="anonymous",
        seed=seed,
        C=C,
        decomposer=decomposer,
        horizon=horizon,
        confidence=confidence,
        **setting,
    )


def curve_at(curve: tuple[np.ndarray, np.ndarray], horizons: Sequence[int]) -> np.ndarray:
    """The cumulative regret of ``curve`` at each of ``horizons``, which must be rounds of the curve (the curve is
    exact there; between its points it would be interpolated)."""
    rounds, regret = curve
    at = np.searchsorted(rounds, horizons)
    if np.any(at >= rounds.size) or np.any(rounds[np.minimum(at, rounds.size - 1)] != horizons):
        raise ValueError(f"horizons {list(horizons)} are not all rounds of the regret curve")
    return regret[at]


def epochs_done(result: Result, horizons: Sequence[int], C: int) -> np.ndarray:
    """How many of the run's batches (SE epochs) were complete by each of ``horizons``: a batch lasts
    ``R_b (2C+2)`` rounds, one cut by the run's horizon fewer (and gives no update)."""
    rounds = np.array([r["rounds"] for r in result.records], dtype=np.int64)
    complete = rounds == np.array([r["assignments"] for r in result.records], dtype=np.int64) * (2 * C + 2)
    return np.searchsorted(np.cumsum(rounds)[complete], horizons, side="right")


def prefix_gaps(
    C: int,
    decomposer: str,
    span: int,
    horizons: Sequence[int],
    seed: int,
    setting: Mapping = SETTING,
    confidence: float = CONFIDENCE,
) -> dict[int, float]:
    """For each of ``horizons`` that is a round of the curve of SE's run to ``span``: the relative difference between
    SE's regret in a run to T and that curve at T (0 up to rounding when no horizon enters the learners)."""
    rounds, regret = se_run(C, decomposer, span, seed, setting, confidence).curve
    read = [T for T in horizons if T in set(rounds.tolist())]
    own = np.array([se_run(C, decomposer, T, seed, setting, confidence).metrics["regret"] for T in read])
    gaps = np.abs(own - curve_at((rounds, regret), read)) / np.maximum(curve_at((rounds, regret), read), 1.0)
    return dict(zip(read, gaps.tolist(), strict=True))


def experiment(
    seeds: int,
    horizons: Sequence[int] = HORIZONS,
    spans: Sequence[int] = SPANS,
    cs: Sequence[int] = CS,
    decomposers: Sequence[str] = DECOMPOSERS,
    setting: Mapping = SETTING,
    confidence: float = CONFIDENCE,
) -> tuple[list[dict], dict[tuple[int, str], list[np.ndarray]]]:
    """Every run: one row per (method, C, decomposer, T, seed), SE's regret at T read from the shortest of its runs
    to ``spans`` that reaches T; and per (C, decomposer) SE's curves for the plot, one (1 + seeds, points) array a
    span (the curve's rounds in row 0)."""
    horizons, spans = sorted(horizons), sorted(spans)
    if horizons[-1] > spans[-1]:
        raise ValueError(f"horizon {horizons[-1]} beyond the longest SE run {spans[-1]}")
    rows, curves = [], {}
    for C in cs:
        for dec in decomposers:
            key = {"C": C, "decomposer": dec}
            runs: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in spans]
            for seed in range(seeds):
                for i, span in enumerate(spans):
                    se = se_run(C, dec, span, seed, setting, confidence)
                    runs[i].append(se.curve)
                    read = [T for T in horizons if (spans[i - 1] if i else 0) < T <= span]
                    for T, regret, epochs in zip(read, curve_at(se.curve, read), epochs_done(se, read, C), strict=True):
                        rows.append(
                            {
                                "method": "se-epochs",
                                **key,
                                "horizon": T,
                                "seed": seed,
                                "regret": float(regret),
                                "se_epochs_done": int(epochs),
                                "se_run_to": span,
                                "se_run_users_stopped": se.metrics["users_stopped"],
                                "se_run_optimal_fraction": se.metrics["optimal_fraction"],
                                "se_run_exploration_rounds": se.metrics["exploration_rounds"],
                            }
                        )
                for T in horizons:
                    m = base_run(C, dec, T, seed, setting).metrics
                    rows.append(
                        {
                            "method": "base",
                            **key,
                            "horizon": T,
                            "seed": seed,
                            "regret": m["regret"],
                            "exploration_rounds": m["exploration_rounds"],
                            "optimal_fraction": m["optimal_fraction"],
                        }
                    )
            curves[C, dec] = [np.vstack([r[0][0], *(c[1] for c in r)]) for r in runs]
    return rows, curves


def interval(values: np.ndarray) -> tuple[float, float, float]:
    """Mean and Student-t 95% CI of ``values``."""
    half = float(half_width(values))
    return float(values.mean()), float(values.mean() - half), float(values.mean() + half)


def summarise(rows: list[dict]) -> list[dict]:
    """Per (C, decomposer, T): both methods' mean regret with 95% CIs and the paired difference SE - BaSE."""
    cells: dict[tuple, dict[str, dict[int, dict]]] = {}
    for r in rows:
        cells.setdefault((r["C"], r["decomposer"], r["horizon"]), {m: {} for m in METHODS})[r["method"]][r["seed"]] = r
    summary = []
    for (C, dec, T), by in sorted(cells.items()):
        seeds = sorted(set(by["base"]) & set(by["se-epochs"]))
        base = np.array([by["base"][s]["regret"] for s in seeds])
        se = np.array([by["se-epochs"][s]["regret"] for s in seeds])
        row = {"C": C, "decomposer": dec, "horizon": T, "seeds": len(seeds)}
        for name, values in (("base", base), ("se", se), ("diff", se - base)):
            row.update(zip((f"{name}_mean", f"{name}_ci_low", f"{name}_ci_high"), interval(values), strict=True))
        row["ratio"] = row["se_mean"] / row["base_mean"]
        row["verdict"] = "base lower" if row["diff_ci_low"] > 0 else "se lower" if row["diff_ci_high"] < 0 else "tie"
        row["base_exploration_rounds"] = float(np.mean([by["base"][s]["exploration_rounds"] for s in seeds]))
        row["base_optimal_fraction"] = float(np.mean([by["base"][s]["optimal_fraction"] for s in seeds]))
        for name in ("se_epochs_done", "se_run_users_stopped", "se_run_optimal_fraction", "se_run_exploration_rounds"):
            row[name] = float(np.mean([by["se-epochs"][s][name] for s in seeds]))
        summary.append(row)
    return summary


def plot(
    summary: list[dict], curves: dict[tuple[int, str], list[np.ndarray]], path: Path, setting: Mapping = SETTING
) -> None:
    """Regret against T (log-log), one panel per (decomposer, C): SE's whole curve and BaSE at each T, with
    95% bands over the seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cs = sorted({s["C"] for s in summary})
    decs = list(dict.fromkeys(s["decomposer"] for s in summary))
    fig, axes = plt.subplots(
        len(decs), len(cs), figsize=(4.2 * len(cs), 3.6 * len(decs)), squeeze=False, sharex=True, sharey=True
    )
    for (i, dec), (j, C) in ((a, b) for a in enumerate(decs) for b in enumerate(cs)):
        ax = axes[i, j]
        cells = [s for s in summary if s["C"] == C and s["decomposer"] == dec]
        T = np.array([s["horizon"] for s in cells])
        start = T.min() / 2
        for n, span in enumerate(curves[C, dec]):  # each longer run drawn beyond the shorter one's end
            rounds, per_seed = span[0], span[1:]
            keep = rounds >= start
            mean, half = per_seed.mean(axis=0), half_width(per_seed)
            ax.plot(rounds[keep], mean[keep], color="C1", label=None if n else "SE epochs (no T)")
            ax.fill_between(
                rounds[keep], np.maximum(mean - half, 1.0)[keep], (mean + half)[keep], color="C1", alpha=0.25
            )
            start = rounds[-1]
        ax.plot(T, [s["se_mean"] for s in cells], "s", color="C1", ms=4)
        ax.plot(T, [s["base_mean"] for s in cells], "o-", color="C0", label="Algorithm 1 (BaSE, re-run per T)")
        ax.fill_between(
            T, [max(s["base_ci_low"], 1.0) for s in cells], [s["base_ci_high"] for s in cells], color="C0", alpha=0.25
        )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{dec}, C = {C}", fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        if i == len(decs) - 1:
            ax.set_xlabel("horizon T")
        if j == 0:
            ax.set_ylabel("regret (sum over users)")
    axes[0, 0].legend(fontsize=8, loc="upper left")
    seeds = summary[0]["seeds"]
    fig.suptitle(
        f"Anytime regret over the anonymous channel (N = {setting['users']}, K = {setting['arms']}, "
        f"U = {setting['cluster']}, gap {setting['gap']}; {seeds} paired seeds, 95% bands)"
    )
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 seeds, T up to 10^5, output in build/benchmarks/")
    args = parser.parse_args()
    seeds, horizons, spans = (3, HORIZONS[:3], (HORIZONS[2],)) if args.quick else (30, HORIZONS, SPANS)
    out = results_dir(args.quick)
    start = time.perf_counter()
    gaps = {
        (C, dec, span, T): gap
        for C in CS
        for dec in DECOMPOSERS
        for span in spans
        for T, gap in prefix_gaps(C, dec, span, horizons, 0).items()
    }
    worst = max(gaps.values())
    if worst > 1e-9:
        raise SystemExit(f"SE's regret depends on the horizon: relative gaps {gaps}")
    print(
        f"anytime check (seed 0, every C and decomposer, {len(gaps)} (run, T) pairs): largest relative gap {worst:.1e}"
    )
    rows, curves = experiment(seeds, horizons, spans)
    print(f"{len(rows)} rows in {time.perf_counter() - start:.1f} s")
    summary = summarise(rows)
    write_table(rows, out / "anonymous_anytime.csv")
    write_table(summary, out / "anonymous_anytime_summary.csv")
    plot(summary, curves, out / "anonymous_anytime.png")
    print(
        "\n".join(
            f"C={s['C']} {s['decomposer']:8s} T={s['horizon']:>8d} BaSE {s['base_mean']:11.4g} SE "
            f"{s['se_mean']:11.4g}  SE-BaSE [{s['diff_ci_low']:10.4g}, {s['diff_ci_high']:10.4g}] "
            f"x{s['ratio']:.2f} {s['verdict']}"
            for s in summary
        )
        + f"\nwrote {out}/anonymous_anytime*"
    )


if __name__ == "__main__":
    main()
