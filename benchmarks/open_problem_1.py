"""Open Problem 1 of paper 000: how small can beta(G) be over U-batched graphs? (issue 6)

For small K, C and U: N = K*U users, every arm the optimal arm of exactly U users (so the graph is U-batched
whatever the other active arms are); each user's active set is its optimal arm plus any other arms. We
search for the graph with the smallest beta(G) (Lemma 3, exact by the disjunctive LP of
:func:`anondecomp.beta`, domination reading; the interval is certified):

1. random phase: graphs whose users add each other arm with probability p, p drawn per graph;
2. local search from the best random graphs: toggle one (user, non-optimal arm) membership, keep any change
   that lowers beta, until no single toggle helps or the evaluation budget is spent.

Block's guarantee (Lemma 6 / Corollary 2) gives beta >= 1 / ceil(K(C+1)/U); Lemma 5 gives beta = 1 when
U >= K(C+1). For each (K, C), U rises from C+1 until the search finds only beta = 1 for two U in a row.

Writes docs/results/open_problem_1.csv, open_problem_1.md and the attaining graphs (batched JSON, usable as
``anonbandits beta FILE``) under docs/results/open_problem_1_graphs/ (a --quick run writes to build/benchmarks/
instead).

Usage: python benchmarks/open_problem_1.py [--quick] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
from _output import results_dir

from anondecomp import DemandGraph, beta

KC = [(2, 1), (2, 2), (2, 3), (3, 1), (3, 2), (3, 3), (4, 1), (4, 2), (4, 3), (5, 1), (5, 2), (6, 1), (6, 2)]
STARTS = 5  # local searches, from the best random graphs
STOP_AFTER = 2  # per (K, C): stop raising U after this many consecutive U where the search found only beta = 1


def beta_of(active: np.ndarray, C: int) -> tuple[float, bool]:
    res = beta(DemandGraph.from_batched(100, active), C)
    return res.lower, res.exact


def search(K: int, C: int, U: int, rng: np.random.Generator, n_random: int, budget: int) -> dict:
    N = K * U
    opt = np.repeat(np.arange(K), U)
    base = np.zeros((N, K), dtype=bool)
    base[np.arange(N), opt] = True
    pool = []
    for _ in range(n_random):
        active = base | (rng.random((N, K)) < rng.random())
        pool.append((beta_of(active, C)[0], active))
    pool.sort(key=lambda x: x[0])
    random_best = pool[0][0]
    evals = n_random
    best_value, best = pool[0]
    free = np.argwhere(~base)
    for value, active in pool[:STARTS]:
        improved = True
        while improved and evals < budget:
            improved = False
            for i, j in free[rng.permutation(len(free))]:
                trial = active.copy()
                trial[i, j] = ~trial[i, j]
                b, _ = beta_of(trial, C)
                evals += 1
                if b < value - 1e-9:
                    value, active, improved = b, trial, True
                    break
                if evals >= budget:
                    break
        if value < best_value:
            best_value, best = value, active
    final, exact = beta_of(best, C)
    alpha = math.ceil(K * (C + 1) / U)
    return {
        "K": K,
        "C": C,
        "U": U,
        "users": N,
        "block_alpha": alpha,
        "one_over_alpha": round(1 / alpha, 6),
        "beta_random": round(random_best, 6),
        "beta_min": round(final, 6),
        "exact": exact,
        "evaluations": evals,
        "active": best,
    }


def write_graph(row: dict, path: Path) -> None:
    arms = [f"a{j}" for j in range(row["K"])]
    sets = {f"u{i}": [arms[j] for j in np.flatnonzero(a)] for i, a in enumerate(row["active"])}
    path.write_text(
        json.dumps(
            {"C": row["C"], "U": row["U"], "beta": row["beta_min"], "demand": 100, "arms": arms, "active_sets": sets},
            indent=0,
        )
        + "\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer settings and evaluations (a smoke run)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out_dir = results_dir(args.quick)
    kc = KC[:2] if args.quick else KC
    n_random, budget = (20, 60) if args.quick else (300, 4000)
    gdir = out_dir / "open_problem_1_graphs"
    gdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for K, C in kc:
        ones = 0
        for U in range(C + 1, K * (C + 1)):  # U >= K(C+1) gives beta = 1 (Lemma 5)
            t0 = time.perf_counter()
            rng = np.random.default_rng([args.seed, K, C, U])  # each row reproducible on its own
            row = search(K, C, U, rng, n_random, budget)
            row["seconds"] = round(time.perf_counter() - t0, 1)
            name = f"K{K}_C{C}_U{U}.json"
            write_graph(row, gdir / name)
            row["graph"] = f"open_problem_1_graphs/{name}"
            rows.append(row)
            print(
                f"K={K} C={C} U={U}: min beta {row['beta_min']:.4f} (random {row['beta_random']:.4f}, "
                f"block 1/alpha = {row['one_over_alpha']:.4f}, exact={row['exact']}) in {row['seconds']} s",
                flush=True,
            )
            ones = ones + 1 if row["beta_min"] >= 1 - 1e-9 else 0
            if ones >= STOP_AFTER:
                break
    cols = [
        "K",
        "C",
        "U",
        "users",
        "block_alpha",
        "one_over_alpha",
        "beta_random",
        "beta_min",
        "exact",
        "evaluations",
        "seconds",
        "graph",
    ]
    suffix = "_quick" if args.quick else ""
    with open(out_dir / f"open_problem_1{suffix}.csv", "w") as fh:
        fh.write(",".join(cols) + "\n")
        for r in rows:
            fh.write(",".join(str(r[c]) for c in cols) + "\n")
    lines = [
        "| K | C | U | N | block alpha | 1/alpha | min beta (random) | min beta (local search) | exact |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['K']} | {r['C']} | {r['U']} | {r['users']} | {r['block_alpha']} "
            f"| {r['one_over_alpha']:.4f} | {r['beta_random']:.4f} | {r['beta_min']:.4f} | {r['exact']} |"
        )
    (out_dir / f"open_problem_1{suffix}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out_dir / f'open_problem_1{suffix}.csv'} and {len(rows)} graphs under {gdir}")


if __name__ == "__main__":
    main()
