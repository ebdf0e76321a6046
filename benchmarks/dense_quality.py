"""Issue 11 quality: every method on dense many-arm graphs, against the certified LP lower bound.

Graphs: the generator of ``benchmarks/decompose_speed.py`` (each arm active with probability 1/2 plus one
optimal arm per user), batched demand D = 1000, fixed seeds; K from 30 to 60, C from 8 to 15, 400 to 1000
users, almost all with N < K(C+1), where the polytope method does not apply. For each graph and method we
record R, the certified LP lower bound (:func:`anondecomp.lp_lower_bound` seeded with that method's
decomposition, as ``--certify`` does), R / LP bound, R / trivial bound (max_i sum_j ceil(w_ij)), the seconds
of the decomposition and of the certification, and whether the decomposition verifies (exact check).

Usage: python benchmarks/dense_quality.py [--quick] [--out FILE]
(full run: docs/results/dense_quality.csv; --quick: two graphs, written to build/benchmarks/)
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from _output import results_dir
from decompose_speed import random_batched

import anondecomp
from anonbandits.experiments import write_table
from anondecomp import DemandGraph

# randomized is left out: on these graphs an arm draws C+1 of its users too rarely (minutes per graph)
METHODS = ("greedy", "block", "auto", "optimal")
OPTIMAL_SECONDS = 60.0
# (users, arms, C, seed); the last one is the graph where Carathéodory used to stall (polytope applies)
GRAPHS = [
    (400, 30, 15, 0),
    (400, 60, 8, 0),
    (600, 50, 12, 0),
    (800, 40, 10, 1),
    (1000, 60, 15, 1),
    (1000, 60, 8, 2),
    (1000, 50, 10, 0),
]
QUICK = [(400, 30, 15, 0), (400, 60, 8, 0)]
D = 1000


def run(N: int, K: int, C: int, seed: int, method: str) -> dict:
    _, _, active = random_batched(N, K, seed)
    graph = DemandGraph.from_batched(D, active)
    row = {
        "users": N,
        "arms": K,
        "C": C,
        "seed": seed,
        "demand": D,
        "method": method,
        "trivial_bound": graph.lower_bound,
    }
    t0 = time.perf_counter()
    try:
        res = anondecomp.decompose(graph, C, method, time_limit=OPTIMAL_SECONDS if method == "optimal" else None)
    except anondecomp.AnonDecompError as exc:  # recorded, not fatal: the table shows which method refused
        return {**row, "used": "refused", "note": str(exc)[:80]}
    t1 = time.perf_counter()
    bound = anondecomp.lp_lower_bound(graph, C, seed=res)
    t2 = time.perf_counter()
    R = res.total_assignments
    return {
        **row,
        "used": res.method,
        "R": R,
        "lp_bound": round(bound.value, 3),
        "lp_converged": bound.converged,
        "R_over_lp": round(R / bound.value, 4),
        "R_over_trivial": round(R / graph.lower_bound, 4),
        "decompose_seconds": round(t1 - t0, 2),
        "certify_seconds": round(t2 - t1, 2),
        "valid": anondecomp.verify(graph, C, res).valid,
        "note": "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two of the graphs (a smoke run)")
    parser.add_argument("--out", default=None, help="CSV to write (default: see the module docstring)")
    args = parser.parse_args()
    out = Path(args.out) if args.out else results_dir(args.quick) / "dense_quality.csv"
    rows = []
    for N, K, C, seed in QUICK if args.quick else GRAPHS:
        for method in METHODS:
            row = run(N, K, C, seed, method)
            rows.append(row)
            print(", ".join(f"{k}={v}" for k, v in row.items() if k != "demand"), flush=True)
    write_table(rows, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
