"""Issue 6 benchmark: the solver suite, and the performance figures of the ``optimal`` method.

1. ``anonbandits bench --suite quick`` as a fresh process, timed (target: under 5 minutes on this 2-core
   machine) -> docs/results/solver_suite_quick.csv/.png;
2. unless ``--quick``: ``anonbandits bench --suite full`` -> docs/results/solver_suite.csv/.png and the
   per-(family, method) summary docs/results/solver_suite_summary.csv (R / LP lower bound);
3. ``optimal`` on 1,000-user, 10-arm, C = 5 scarce-cluster graphs (U = 20 < K(C+1) = 60), five seeds:
   seconds (target < 60 s), R against block and the LP bound -> docs/results/solver_perf.csv;
4. the share of the quick suite's scarce-cluster graphs on which optimal uses strictly fewer assignments
   than block (target >= 90%).

Usage: python benchmarks/solver_suite.py [--quick]   (--quick writes to build/benchmarks/, not docs/results/)
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import time
from pathlib import Path

from _output import results_dir

from anonbandits.cli.bench import beats
from anonbandits.experiments import write_table
from anondecomp import decompose, verify
from anondecomp.bench.families import scarce
from anondecomp.bench.suite import summarize


def bench(suite: str, name: str, out_dir: Path) -> tuple[float, list[dict]]:
    """Run ``anonbandits bench`` in a fresh process; (wall seconds, rows)."""
    out, png = out_dir / f"{name}.csv", out_dir / f"{name}.png"
    cmd = [
        str(Path(sys.executable).with_name("anonbandits")),
        "bench",
        "--suite",
        suite,
        "--out",
        str(out),
        "--plot",
        str(png),
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    print(proc.stdout)
    if proc.returncode != 0:
        raise SystemExit(f"bench {suite} failed:\n{proc.stderr[-2000:]}")
    with open(out) as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        for k in ("total_assignments", "lp_lower_bound", "seconds"):
            r[k] = float(r[k]) if r[k] not in ("", None) else ""
        r["verified"] = r["verified"] == "True"
    return wall, rows


def perf_1000(seeds=range(5)) -> list[dict]:
    rows = []
    for seed in seeds:
        inst = scarce(1000, 10, 5, 20, 500, seed=seed, niche=2)
        blk = decompose(inst.graph, inst.C, "block")
        t0 = time.perf_counter()
        opt = decompose(inst.graph, inst.C, "optimal")
        sec = time.perf_counter() - t0
        rows.append(
            {
                "users": 1000,
                "arms": 10,
                "C": 5,
                "U": inst.U,
                "seed": seed,
                "optimal_seconds": round(sec, 2),
                "optimal_R": opt.total_assignments,
                "block_R": blk.total_assignments,
                "lp_lower_bound": round(opt.info["lp_lower_bound"], 4),
                "gap": round(opt.info["gap"], 5),
                "status": opt.info["status"],
                "verified": verify(inst.graph, inst.C, opt).valid,
            }
        )
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="quick suite and the performance checks only")
    args = parser.parse_args()
    out_dir = results_dir(args.quick)
    wall, quick_rows = bench("quick", "solver_suite_quick", out_dir)
    wins, total = beats(quick_rows, "optimal", "block", "scarce")
    print(
        f"quick suite: {wall:.1f} s wall (target < 300 s); optimal < block on {wins}/{total} scarce-cluster "
        f"graphs ({100 * wins / total:.0f}%, target >= 90%)"
    )
    figures = [
        {"figure": "quick suite wall seconds", "value": round(wall, 1)},
        {"figure": "optimal < block on scarce graphs (quick)", "value": f"{wins}/{total}"},
    ]
    if not args.quick:
        wall_full, rows = bench("full", "solver_suite", out_dir)
        print(f"full suite: {wall_full:.1f} s wall")
        figures.append({"figure": "full suite wall seconds", "value": round(wall_full, 1)})
        wins_f, total_f = beats(rows, "optimal", "block", "scarce")
        figures.append({"figure": "optimal < block on scarce graphs (full)", "value": f"{wins_f}/{total_f}"})
        summary = [
            {"family": f, "method": m, **{k: (round(v, 4) if isinstance(v, float) else v) for k, v in s.items()}}
            for (f, m), s in sorted(summarize(rows).items())
        ]
        write_table(summary, out_dir / "solver_suite_summary.csv")
    perf = perf_1000()
    write_table(perf, out_dir / "solver_perf.csv")
    worst = max(r["optimal_seconds"] for r in perf)
    figures.append({"figure": "optimal 1000x10 C=5 scarce: max seconds over 5 seeds", "value": worst})
    write_table(figures, out_dir / "solver_figures.csv")
    print(f"optimal on 1000 x 10, C = 5, U = 20: at most {worst:.1f} s (target < 60 s)")


if __name__ == "__main__":
    main()
