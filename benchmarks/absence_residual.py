"""Why a scattered residual is long: the first re-plan of robust-then-replan on one graph, against two bounds.

``benchmarks/absence.py`` runs robust-then-replan (a robust plan, then re-plans of what absent users left
short). On the ``real`` family's 3000 x 1000 log at C = 50 it misses the goal at A = 10 %; this script shows
where: it runs the robust first plan once (seed 0, as the first of that benchmark's seeds), re-plans the
residual exactly as the benchmark does (:func:`absence.replan_residual`), and sets that re-plan's length beside

* ``residual_user_bound``: ``max_i sum_j ceil(r_ij)`` of the residual, the most samples one user still needs;
* ``counting_bound``: a bound for any decomposition of the residual whose groups hold at least the robust size
  s of users (an item of fewer users: all of them). Take H, the k users of largest support. Every item j with a
  residual needs a group, and that group holds at least ``max(min(s, |B_j|) - |B_j minus H|, r_j(H))`` users of
  H (``B_j`` the item's users, ``r_j(H)`` those of H who still need it); an assignment seats each user of H
  once, so it takes at least the sum of those over the items, divided by k, assignments. Reported for several k
  (the table's rows), the largest is the bound.

When the counting bound is well above the users' own bound, the residual's items are thin and share the same
heavy users, so its groups queue for them: that is a property of the residual with groups of the robust size,
not of the method that decomposes it.

Usage: python benchmarks/absence_residual.py [--quick] [--graph NAME] [--C C] [--absence A]
A full run (the 3000 x 1000 log at C = 50, A = 10 %, about a minute) writes docs/results/absence_residual.csv;
``--quick`` (the 1500 x 500 log at C = 10) writes build/benchmarks/.
"""

from __future__ import annotations

import argparse
import csv

import numpy as np
from _output import results_dir
from absence import CONFIDENCE, build, open_demand, play, replan_residual

import anondecomp

HEAVY = (10, 20, 50, 100, 150, 200, 300, 500, 1000)
COLUMNS = (
    "graph",
    "C",
    "absence",
    "first_R",
    "lower_bound",
    "residual_pairs",
    "residual_items",
    "residual_user_bound",
    "robust_size",
    "replan_R",
    "replan_method",
    "heavy_users",
    "places",
    "counting_bound",
)


def counting_bound(residual: anondecomp.DemandGraph, size: int, k: int) -> tuple[int, float]:
    """(places, places / k): the places the ``k`` users of largest support must fill in groups of ``size`` users
    of every item with a residual (module docstring)."""
    heavy = np.zeros(residual.n_users, dtype=bool)
    heavy[np.argsort(-np.diff(residual.indptr), kind="stable")[:k]] = True
    on_heavy = heavy[residual.edge_users]
    K = residual.n_arms
    short = residual.edge_required > 0
    outside = residual.arm_degrees - np.bincount(residual.edge_arms, weights=on_heavy, minlength=K)
    needing = np.bincount(residual.edge_arms, weights=on_heavy & short, minlength=K)
    has = np.bincount(residual.edge_arms, weights=short, minlength=K) > 0
    # an item of fewer than `size` users (at risk) has groups of its whole support
    held = np.minimum(size, residual.arm_degrees)
    places = int(np.where(has, np.maximum(held - outside, needing), 0).sum())
    return places, places / k


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the real 1500x500 log at C = 10; in build/benchmarks/")
    parser.add_argument("--graph", help='the graph (default "real 3000x1000", "real 1500x500" with --quick)')
    parser.add_argument("--C", type=int, help="C (default 50, 10 with --quick)")
    parser.add_argument("--absence", type=float, default=0.1, help="A (default 0.1)")
    args = parser.parse_args()
    name = args.graph or ("real 1500x500" if args.quick else "real 3000x1000")
    C = args.C or (10 if args.quick else 50)
    A = args.absence
    graph, _, _ = open_demand(build(name, C), C, A)
    first = anondecomp.decompose(graph, C, absence=A, confidence=CONFIDENCE, improve=False)
    received = np.zeros(graph.nnz, dtype=np.int64)
    for _ in play(graph, C, A, first, np.random.default_rng(0), received):
        pass
    replan = replan_residual(graph, C, A, received)
    residual = replan.graph
    size = int(replan.info["robust_size"])
    short = residual.edge_required > 0
    common = {
        "graph": name,
        "C": C,
        "absence": A,
        "first_R": first.total_assignments,
        "lower_bound": graph.lower_bound,
        "residual_pairs": int(short.sum()),
        "residual_items": len(np.unique(residual.edge_arms[short])),
        "residual_user_bound": residual.lower_bound,
        "robust_size": size,
        "replan_R": replan.total_assignments,
        "replan_method": replan.method,
    }
    rows = []
    for k in (k for k in HEAVY if k <= graph.n_users):
        places, bound = counting_bound(residual, size, k)
        rows.append(common | {"heavy_users": k, "places": places, "counting_bound": round(bound, 2)})
    out = results_dir(args.quick) / "absence_residual.csv"
    with open(out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    best = max(rows, key=lambda r: r["counting_bound"])
    print(
        f"{name} C={C} A={A}: first plan {first.total_assignments} (lower bound {graph.lower_bound}); residual "
        f"{common['residual_pairs']} pairs on {common['residual_items']} items, its users' bound "
        f"{residual.lower_bound}; re-planned in {replan.total_assignments} ({replan.method}); counting bound "
        f"{best['counting_bound']} (the {best['heavy_users']} users of largest support, {best['places']} places)"
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
