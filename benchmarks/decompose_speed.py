"""Issue 2 performance: the polytope decomposition, command line to written output, against one HiGHS LP.

Graph: N users, K arms; every user has an optimal arm (uniform) and each other arm joins its active set with
probability 1/2, so A_i is a random subset containing the optimal arm; batched demand D (default 1000).

Reference: one HiGHS solve of the covering LP over the same user-level P_C([K]) (``max beta : beta*w_hat <=
y, y in P_C([K])``, N*K + 1 variables), its sparse matrix built once; we time the solve alone and report
decomposition time / LP time (target <= 1, aim 0.25). The decomposition is timed as a fresh
``anonbandits decompose --method polytope -o out.json`` process: start-up, read, solve, write.

Also runs a large graph (default 100,000 x 50) through the same command and reports its time and peak
memory (targets: under 60 s and 4 GiB).

Usage: python benchmarks/decompose_speed.py [--quick] [--out PATH]  (default docs/results/decompose_speed.csv;
       build/benchmarks/ with --quick)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _output import results_dir

from anondecomp import DemandGraph
from anondecomp.polytope import covering_lp


def random_batched(N: int, K: int, seed: int) -> tuple[list[str], dict[str, list[str]], np.ndarray]:
    rng = np.random.default_rng(seed)
    active = rng.random((N, K)) < 0.5
    active[np.arange(N), rng.integers(0, K, N)] = True
    arms = [f"arm{j}" for j in range(K)]
    sets = {f"user{i}": [arms[j] for j in np.flatnonzero(row)] for i, row in enumerate(active)}
    return arms, sets, active


def lp_seconds(active: np.ndarray, D: float, C: int) -> tuple[float, float, float]:
    """(build seconds, solve seconds, beta) of the covering LP over P_C([K])."""
    graph = DemandGraph.from_batched(D, active)
    x, _ = graph.normalized()
    t0 = time.perf_counter()
    h, _ = covering_lp(x, C)
    t1 = time.perf_counter()
    h.run()
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, float(h.getInfo().objective_function_value)


def cli_run(graph_path: Path, C: int, out_path: Path) -> tuple[float, float, dict]:
    """(wall seconds, peak RSS MiB, output header) of one ``anonbandits decompose`` process."""
    cmd = [
        str(Path(sys.executable).with_name("anonbandits")),
        "decompose",
        str(graph_path),
        "--C",
        str(C),
        "--method",
        "polytope",
        "-o",
        str(out_path),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(out_path) as fh:  # the header (R, lower bound, ...) is the first line of the output file
        fields = json.loads(fh.readline() + "]}")
    return wall, max(peak, before) / 1024, fields


def case(N: int, K: int, C: int, D: int, seed: int, with_lp: bool, tmp: Path) -> dict:
    arms, sets, active = random_batched(N, K, seed)
    graph_path = tmp / f"graph_{N}x{K}.json"
    graph_path.write_text(json.dumps({"C": C, "demand": D, "arms": arms, "active_sets": sets}))
    out_path = tmp / f"out_{N}x{K}.json"
    wall, peak_mb, fields = cli_run(graph_path, C, out_path)
    row = {
        "users": N,
        "arms": K,
        "C": C,
        "demand": D,
        "cli_seconds": round(wall, 3),
        "peak_mb": round(peak_mb, 1),
        "total_assignments": fields["total_assignments"],
        "lower_bound": fields["lower_bound"],
        "distinct_assignments": fields["distinct_assignments"],
        "output_mb": round(out_path.stat().st_size / 2**20, 1),
    }
    if with_lp:
        build, solve, beta = lp_seconds(active, D, C)
        row.update(
            lp_build_seconds=round(build, 3),
            lp_solve_seconds=round(solve, 3),
            lp_beta=round(beta, 4),
            ratio_cli_over_lp=round(wall / solve, 3),
        )
    out_path.unlink()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument(
        "--out",
        help="table path (default docs/results/decompose_speed.csv; with --quick build/benchmarks/decompose_speed.csv)",
    )
    args = parser.parse_args()
    args.out = args.out or str(results_dir(args.quick) / "decompose_speed.csv")
    sizes = (
        [(2000, 20, 10, 1000, True), (10000, 50, 10, 1000, False)]
        if args.quick
        else [(10_000, 20, 10, 1000, True), (100_000, 50, 10, 1000, False)]
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for N, K, C, D, with_lp in sizes:
            row = case(N, K, C, D, seed=0, with_lp=with_lp, tmp=Path(tmp))
            rows.append(row)
            print(json.dumps(row))
    import csv

    os.makedirs(Path(args.out).parent, exist_ok=True)
    cols = list(dict.fromkeys(k for r in rows for k in r))
    with open(args.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
