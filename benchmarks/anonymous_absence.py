"""The bandit layer under absence: regret (anon-batched) and rounds to identify (anon-bai) against the absence A.

Each user misses each block (one assignment, its 2C+2 rounds) with probability A, drawn once per user and block
(docs/platform.md, "The bandit layer under absence"): an absent user gets no reward, is in no sum and adds no
regret; every batch is decomposed with groups robust to A (``anondecomp.decompose(absence=A)``, confidence 0.95)
and its residual demand re-planned (``anondecomp.replan``) until every (user, arm) pair has received its
demand. The experiment asks what absence costs the two anonymous drivers that re-plan, with the grid fixed before
any result was seen:

* A in {0, 0.01, 0.05, 0.1, 0.2} (A = 0 is the paper's model, the runs of today bit for bit);
* ``anon-batched`` (Algorithm 1 of Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems*,
  NeurIPS 2022) at the registry's defaults: N = 300 users, K = 5 arms, C = 3, horizon 200,000, gap 0.1,
  decomposer ``auto``; reported: the regret at the horizon (summed over users), the optimal fraction, the
  assignments and the exploration rounds;
* ``anon-bai`` (every user's (epsilon, delta)-PAC identification, successive elimination) on N = 60 users,
  K = 3 arms, C = 2, gap 0.2, epsilon 0.1, delta 0.05, decomposer ``auto``; reported: the rounds until the last
  user stopped, the assignments, and the share of users not epsilon-optimal (to compare with delta);
* 20 seeds per A. A seed fixes the instance and its streams for every A, so the runs are paired by seed: each
  ratio to A = 0 is the mean of the per-seed ratios. Means with 95 % t intervals (benchmarks/_stats.py). The
  reference ``1 / (1 - A)`` is the factor by which a user's blocks must grow, in expectation, for it to receive
  its demand when it misses each with probability A.

Usage: python benchmarks/anonymous_absence.py [--quick] [--seeds N] [--replot]
A full run writes docs/results/anonymous_absence.csv (one line per algorithm and A), anonymous_absence_runs.csv
(every run) and anonymous_absence.png; ``--quick`` (A in {0, 0.1}, 2 seeds, smaller instances) writes to
build/benchmarks/ instead, so it never overwrites them.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from _output import results_dir
from _stats import half_width

from anonbandits import simulate
from anonbandits.experiments import write_table

ABSENCES = (0.0, 0.01, 0.05, 0.1, 0.2)
SEEDS = 20
#: each algorithm's parameters (the registry's defaults otherwise) and the metrics the tables keep
SETTINGS = {
    "anon-batched": ({}, ("regret", "optimal_fraction", "assignments", "exploration_rounds")),
    "anon-bai": (
        {"users": 60, "arms": 3, "C": 2, "gap": 0.2, "approx": 0.1, "delta": 0.05, "subroutine": "se"},
        ("rounds", "assignments", "batches", "users_approx_optimal"),
    ),
}
#: --quick: smaller instances, so a smoke run takes seconds
QUICK = {
    "anon-batched": {"users": 60, "arms": 3, "C": 2, "horizon": 50_000},
    "anon-bai": {"users": 24, "arms": 3, "C": 2, "gap": 0.3, "approx": 0.2},
}
#: the headline figure of each algorithm (the plot's left panels)
HEADLINE = {"anon-batched": "regret", "anon-bai": "rounds"}


def run_grid(absences: Sequence[float], seeds: int, quick: bool) -> list[dict]:
    """Every (algorithm, A, seed) run through the registry (``anonbandits.simulate``): its row."""
    rows = []
    for name, (params, keep) in SETTINGS.items():
        params = {**params, **(QUICK[name] if quick else {})}
        for absence in absences:
            start = time.perf_counter()
            for seed in range(seeds):
                t0 = time.perf_counter()
                metrics = simulate(name, seed=seed, absence=absence, **params).metrics
                rows.append(
                    {"algorithm": name, "absence": absence, "seed": seed, **params}
                    | {key: metrics[key] for key in keep}
                    | {"wall_s": round(time.perf_counter() - t0, 3)}
                )
            print(f"{name} A={absence:g}: {seeds} seeds, {time.perf_counter() - start:.0f} s", flush=True)
    return rows


def _interval(values: np.ndarray) -> tuple[float, float, float]:
    half, mean = float(half_width(values)), float(values.mean())
    return mean, mean - half, mean + half


def summarise(rows: list[dict]) -> list[dict]:
    """One line per (algorithm, A): each metric's mean and 95 % interval, and the paired ratio of the headline
    figure (and of the assignments) to the same seed's run at A = 0."""
    out = []
    for name, (_, keep) in SETTINGS.items():
        runs = [r for r in rows if r["algorithm"] == name]
        base = {r["seed"]: r for r in runs if r["absence"] == 0}
        for absence in dict.fromkeys(r["absence"] for r in runs):
            cell = [r for r in runs if r["absence"] == absence]
            line: dict = {"algorithm": name, "absence": absence, "seeds": len(cell), "reference": 1 / (1 - absence)}
            for key in (*keep, "wall_s"):
                mean, lo, hi = _interval(np.array([r[key] for r in cell], dtype=float))
                line |= {f"{key}_mean": mean, f"{key}_ci_low": lo, f"{key}_ci_high": hi}
            for key in (HEADLINE[name], "assignments"):
                paired = np.array([r[key] / base[r["seed"]][key] for r in cell if r["seed"] in base], dtype=float)
                mean, lo, hi = _interval(paired) if len(paired) else (None, None, None)
                line |= {f"{key}_ratio_mean": mean, f"{key}_ratio_ci_low": lo, f"{key}_ratio_ci_high": hi}
            out.append(line)
    return out


def plot(summary: list[dict], path: Path, title: str) -> None:
    """Per algorithm: the headline figure against A (95 % CIs), and the paired ratios to A = 0 of it and of the
    assignments, against the reference 1 / (1 - A)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(s["algorithm"] for s in summary))
    fig, axes = plt.subplots(2, len(names), figsize=(6 * len(names), 7.5), squeeze=False)
    for col, name in enumerate(names):
        cells = [s for s in summary if s["algorithm"] == name]
        a = np.array([s["absence"] for s in cells])
        key = HEADLINE[name]
        y, lo, hi = (np.array([s[f"{key}_{p}"] for s in cells]) for p in ("mean", "ci_low", "ci_high"))
        axes[0, col].errorbar(a, y, yerr=[y - lo, hi - y], marker="o", capsize=3)
        axes[0, col].set_ylabel({"regret": "regret at the horizon", "rounds": "rounds until every user stopped"}[key])
        axes[0, col].set_title(f"{name}: {key} against absence", fontsize=10)
        for what, marker in ((key, "o"), ("assignments", "s")):
            r = [s[f"{what}_ratio_mean"] for s in cells]
            rl = [s[f"{what}_ratio_ci_low"] for s in cells]
            rh = [s[f"{what}_ratio_ci_high"] for s in cells]
            y = np.array(r, dtype=float)
            axes[1, col].errorbar(
                a, y, yerr=[y - np.array(rl, float), np.array(rh, float) - y], marker=marker, capsize=3, label=what
            )
        grid = np.linspace(0, a.max(), 50)
        axes[1, col].plot(grid, 1 / (1 - grid), "k--", label="1 / (1 - A)")
        axes[1, col].set_ylabel("ratio to the same seed at A = 0")
        for row in range(2):
            axes[row, col].set_xlabel("absence A")
        axes[1, col].legend(fontsize=8)
    fig.suptitle(title, y=1.0)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _cell(text: str) -> object:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="A in {0, 0.1}, 2 seeds, output in build/benchmarks/")
    parser.add_argument("--seeds", type=int, default=0, help="override the number of seeds")
    parser.add_argument("--replot", action="store_true", help="summary and plot from the run table already written")
    args = parser.parse_args(argv)
    out = results_dir(args.quick)
    seeds = args.seeds or (2 if args.quick else SEEDS)
    start = time.perf_counter()
    if args.replot:
        with open(out / "anonymous_absence_runs.csv", newline="") as fh:
            rows = [{k: _cell(v) for k, v in r.items()} for r in csv.DictReader(fh)]
    else:
        rows = run_grid((0.0, 0.1) if args.quick else ABSENCES, seeds, args.quick)
        write_table(rows, out / "anonymous_absence_runs.csv")
    summary = summarise(rows)
    write_table(summary, out / "anonymous_absence.csv")
    plot(summary, out / "anonymous_absence.png", f"Absent users: {seeds} paired seeds, 95% CIs")
    for s in summary:
        key = HEADLINE[s["algorithm"]]
        print(
            f"{s['algorithm']:12s} A={s['absence']:<5g} {key} {s[f'{key}_mean']:,.0f} "
            f"[{s[f'{key}_ci_low']:,.0f}, {s[f'{key}_ci_high']:,.0f}]  ratio to A=0 "
            f"{s[f'{key}_ratio_mean']:.3f} (1/(1-A) = {s['reference']:.3f})"
        )
    print(f"{time.perf_counter() - start:.0f} s -> {out}")


if __name__ == "__main__":
    sys.exit(main())
