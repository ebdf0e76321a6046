"""Speed of paper 003's simulators against a plain per-round, per-pull Python loop.

For each algorithm on Problem 1 (delta = 0.05): rounds and pulls per second of the package's simulator
(:mod:`anonbandits.multiagent.mase`: the compiled round loop for MASE, CORRUPTED ELIMINATION and INDEPENDENT,
the event-driven engine for DP-MASE) at N = 64 and N = 1024 agents, and of the literal reference loop of
:mod:`anonbandits.reference.mase` at N = 64 (one round per iteration, one reward per pull). The speed-up is
the ratio of pulls per second (the target is >= 100x). Each simulator runs once before it is timed, so the
one-off numba compilation (or cache load) is not counted. Writes docs/results/mase_speed.csv and .png
(build/benchmarks/ with --quick).

    .venv/bin/python benchmarks/mase_speed.py [--quick]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _output import results_dir

from anonbandits.experiments import write_table
from anonbandits.multiagent.mase import (
    DPMASEConfig,
    activity_probabilities,
    central,
    corrupted_elimination,
    dp_mase,
    independent,
    mase,
    problem,
)
from anonbandits.reference.mase import reference_dp_mase, reference_se_voting

INSTANCE = problem("1")

FAST = {
    "corrupted-elimination": lambda p, rng: corrupted_elimination(INSTANCE, p, rng, eta=0.9, xi=0.05, record=False),
    "dp-mase": lambda p, rng: dp_mase(INSTANCE, p, DPMASEConfig(eps=0.1, beta=0.5), rng, record=False),
    "mase": lambda p, rng: mase(INSTANCE, p, rng, beta=0.5, record=False),
    "independent": lambda p, rng: independent(INSTANCE, p, rng, record=False),
    "central": lambda p, rng: central(INSTANCE, p, rng, record=False),
}
REFERENCE = {
    "corrupted-elimination": lambda p, s: reference_se_voting(INSTANCE.row, p, s, kind="ce", eta=0.9, xi=0.05),
    "dp-mase": lambda p, s: reference_dp_mase(INSTANCE.row, p, s, eps=0.1, beta=0.5),
    "mase": lambda p, s: reference_se_voting(INSTANCE.row, p, s, kind="mase", beta=0.5),
    "independent": lambda p, s: reference_se_voting(INSTANCE.row, p, s, kind="independent"),
}


def _time(fn, seeds) -> tuple[float, float, float]:
    """Total rounds, total pulls and wall time over ``seeds``."""
    rounds = pulls = 0
    start = time.perf_counter()
    for s in seeds:
        out = fn(s)  # the library's Result, or the per-pull loop's record
        counts = out.metrics if hasattr(out, "metrics") else {"rounds": out.rounds, "samples": out.pulls}
        rounds += counts["rounds"]
        pulls += counts["samples"]
    return rounds, pulls, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    out_dir = results_dir(args.quick)
    small, large = activity_probabilities(64), activity_probabilities(1024)
    fast_seeds_small = range(3 if args.quick else 10)
    fast_seeds_large = range(1 if args.quick else 3)
    ref_seeds = range(1 if args.quick else 2)
    rows = []
    print(f"{'algorithm':24s} {'engine':>10s} {'N':>5s} {'rounds/s':>12s} {'pulls/s':>12s} {'speed-up':>9s}")
    for name, fast in FAST.items():
        ref_rate = None
        if name in REFERENCE:
            r, p, t = _time(lambda s, name=name: REFERENCE[name](small, 10_000 + s), ref_seeds)
            ref_rate = p / t
            rows.append(
                {
                    "algorithm": name,
                    "engine": "per-pull loop",
                    "agents": 64,
                    "rounds": r,
                    "pulls": p,
                    "seconds": t,
                    "rounds_per_s": r / t,
                    "pulls_per_s": p / t,
                    "speedup": 1.0,
                }
            )
            print(f"{name:24s} {'reference':>10s} {64:5d} {r / t:12.3g} {p / t:12.3g} {1.0:9.1f}")
        fast(small, np.random.default_rng(123))  # warm-up: compilation happens once per process
        for n_agents, probs, seeds in ((64, small, fast_seeds_small), (1024, large, fast_seeds_large)):
            r, p, t = _time(lambda s, fast=fast, probs=probs: fast(probs, np.random.default_rng(s)), seeds)
            speedup = (p / t) / ref_rate if ref_rate else float("nan")
            rows.append(
                {
                    "algorithm": name,
                    "engine": "simulator",
                    "agents": n_agents,
                    "rounds": r,
                    "pulls": p,
                    "seconds": t,
                    "rounds_per_s": r / t,
                    "pulls_per_s": p / t,
                    "speedup": speedup,
                }
            )
            print(f"{name:24s} {'fast':>10s} {n_agents:5d} {r / t:12.3g} {p / t:12.3g} {speedup:9.1f}")
    write_table(rows, out_dir / "mase_speed.csv")
    _plot(rows, out_dir / "mase_speed.png")
    print(f"wrote {out_dir / 'mase_speed.csv'} and {out_dir / 'mase_speed.png'}")
    return 0


def _plot(rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in REFERENCE]
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.38
    for j, n_agents in enumerate((64, 1024)):
        vals = [
            next(
                r["speedup"]
                for r in rows
                if r["algorithm"] == name and r["engine"] == "simulator" and r["agents"] == n_agents
            )
            for name in names
        ]
        ax.bar(np.arange(len(names)) + (j - 0.5) * width, vals, width, label=f"simulator, N = {n_agents}")
    ax.axhline(100, color="k", ls="--", lw=1, label="target 100x")
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(names)), names)
    ax.set_ylabel("pulls/s relative to the per-pull loop (N = 64)")
    ax.set_title("Paper 003 simulators, Problem 1")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
