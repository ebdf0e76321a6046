"""Issue 5 (paper 002 half) performance: rounds (global steps, one pull each) per second of the simulation
against a plain per-pull loop.

* ``engine``: :func:`run_decentralized_elimination` / :func:`run_no_sharing` of
  :mod:`anonbandits.multiagent.decentralized`, on its compiled per-step kernel (:mod:`.kernel`: one loop
  iteration per global step; for these configurations, stationary Bernoulli rewards, rewards of a round drawn
  at its end);
* ``reference``: :mod:`anonbandits.reference.decentralized`, one Python iteration per global step (draw the
  player, read the board, one subroutine call, one reward draw), timed on at most ``REF_CAP`` steps of the
  same configuration (its rate does not depend on the run length: within 5% of a full run's).

Both are timed ``REPEATS`` times in the same process (the engine after one untimed warm-up run that fills
its caches and loads the compiled kernel) and the best rate of each is kept: the machine is shared, and the
best of a few repeats is the least disturbed measurement of either.

Configurations: paper 002's Problem 1 (K = 10, means 0.7, 0.5, 0.3, 0.1 x 7; eps = 0.25, delta = 0.05,
eta = 0.9) for Decentralized SER3 / UGapEc / median elimination and 1-PRIVACY-SER3 at several N, plus the
issue's example (N = 1000, means 0.9, 0.8, 0.7). Target ratio: >= 100x.

Usage: python benchmarks/decentralized_speed.py [--quick]
Writes docs/results/decentralized_speed.csv and .png (a --quick run writes to build/benchmarks/ instead).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _output import results_dir

from anonbandits.experiments import write_table
from anonbandits.multiagent.decentralized import run_decentralized_elimination, run_no_sharing
from anonbandits.reference.decentralized import reference_decentralized, reference_no_sharing

PAPER = [0.7, 0.5, 0.3] + [0.1] * 7
ISSUE = [0.9, 0.8, 0.7]
REF_CAP = 150_000
TARGET = 100.0
REPEATS = 2


def cases(quick: bool) -> list[tuple[str, str, list[float], int, str]]:
    """(label, algorithm, means, agents, subroutine)."""
    out = [("DE-SER3", "de", PAPER, n, "ser3") for n in ((256, 1024) if quick else (256, 1024, 4096))]
    out += [("1-PRIVACY-SER3", "none", PAPER, n, "ser3") for n in ((256, 1024) if quick else (256, 1024, 4096))]
    out += [("DE-UGapEc", "de", PAPER, n, "ugapec") for n in ((256,) if quick else (256, 1024))]
    out += [("DE-median", "de", PAPER, 64, "median"), ("DE-SER3 issue example", "de", ISSUE, 1000, "ser3")]
    return out


def _engine_run(algorithm: str, means, n: int, subroutine: str, seed: int) -> int:
    rng = np.random.default_rng(seed)
    if algorithm == "de":
        return run_decentralized_elimination(means, n, rng=rng, subroutine=subroutine).metrics["samples"]
    return run_no_sharing(means, n, rng=rng, subroutine=subroutine).metrics["samples"]


def engine_rate(algorithm: str, means, n: int, subroutine: str, seeds: int) -> tuple[int, float]:
    """Steps of ``seeds`` runs and the least time they took over ``REPEATS`` timings."""
    _engine_run(algorithm, means, n, subroutine, 10**6)
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        steps = sum(_engine_run(algorithm, means, n, subroutine, seed) for seed in range(seeds))
        best = min(best, time.perf_counter() - start)
    return steps, best


def reference_rate(algorithm: str, means, n: int, subroutine: str) -> tuple[int, float]:
    """Steps of one capped run and the least time it took over ``REPEATS`` timings."""
    best = float("inf")
    for _ in range(REPEATS):
        rng = np.random.default_rng(123)
        kw = {"delta": 0.05, "eps": 0.25, "subroutine": subroutine, "activity": "uniform", "rng": rng}
        start = time.perf_counter()
        if algorithm == "de":
            res = reference_decentralized(means, n, eta=0.9, max_steps=REF_CAP, **kw)
        else:
            res = reference_no_sharing(means, n, max_steps=REF_CAP, **kw)
        best = min(best, time.perf_counter() - start)
    return res["samples"], best


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['case']}\nN={r['agents']}" for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(max(7, 1.1 * len(rows)), 4.5))
    ax.bar(x - 0.2, [r["engine_rate"] for r in rows], 0.4, label="simulation (compiled kernel)")
    ax.bar(x + 0.2, [r["reference_rate"] for r in rows], 0.4, label="per-pull loop")
    for xi, r in zip(x, rows, strict=True):
        ax.text(xi, r["engine_rate"] * 1.15, f"{r['ratio']:.0f}x", ha="center", fontsize=8)
    ax.set_yscale("log")
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylabel("global steps (pulls) per second")
    ax.set_title("Paper 002 simulation speed (ratio over the per-pull loop above the bars)")
    ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer configurations and seeds")
    args = parser.parse_args()
    seeds = 2 if args.quick else 5
    rows = []
    for label, algorithm, means, n, subroutine in cases(args.quick):
        e_steps, e_time = engine_rate(algorithm, means, n, subroutine, seeds)
        r_steps, r_time = reference_rate(algorithm, means, n, subroutine)
        row = {
            "case": label,
            "agents": n,
            "arms": len(means),
            "subroutine": subroutine,
            "seeds": seeds,
            "engine_steps": e_steps,
            "engine_seconds": round(e_time, 3),
            "engine_rate": e_steps / e_time,
            "reference_steps": r_steps,
            "reference_seconds": round(r_time, 3),
            "reference_rate": r_steps / r_time,
        }
        row["ratio"] = row["engine_rate"] / row["reference_rate"]
        rows.append(row)
        print(
            f"{label:24s} N={n:5d}: engine {row['engine_rate']:12,.0f} steps/s ({e_steps / seeds:11,.0f} "
            f"steps/run, {e_time / seeds:6.2f} s/run); per-pull loop {row['reference_rate']:9,.0f} steps/s; "
            f"ratio {row['ratio']:6.1f}x",
            flush=True,
        )
    out = results_dir(args.quick)
    write_table(rows, out / "decentralized_speed.csv")
    plot(rows, out / "decentralized_speed.png")
    met = [r for r in rows if r["ratio"] >= TARGET]
    print(
        f"ratio >= {TARGET:.0f}x in {len(met)} of {len(rows)} configurations; "
        f"median ratio {np.median([r['ratio'] for r in rows]):.1f}x"
    )
    print(f"wrote {out / 'decentralized_speed.csv'} and {out / 'decentralized_speed.png'}")


if __name__ == "__main__":
    main()
