"""Record the batched graphs that real Algorithm 1 runs decompose, as the fixture of the solver benchmark.

Runs ``anonbandits.anonymous.anon_batched`` (Algorithm 1 of paper 000) on clustered instances and records
every batch's graph (demand D_b and the users' active sets) handed to ``anondecomp.decompose``. Writes
``solvers/anondecomp/bench/data/alg1_graphs.json`` (active sets as one bitmask integer per user).

Usage: python benchmarks/record_alg1_graphs.py [--out PATH]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from unittest import mock

import numpy as np

import anondecomp
from anonbandits.anonymous import anon_batched
from anonbandits.envs.instances import clustered_instance

ROOT = Path(__file__).resolve().parents[1]
# (users, arms, C, cluster U, horizon, gap, BaSE gamma, seed): scarce (U < K(C+1)) and abundant clusters.
# Six batches on the geometric grid, so that active sets shrink over several batches (with the defaults,
# BaSE keeps every arm for two batches and then commits).
RUNS = [
    (60, 4, 3, 12, 2_000_000, 0.1, 1.0, 0),
    (120, 6, 3, 14, 4_000_000, 0.1, 0.5, 1),
    (600, 8, 5, 40, 4_000_000, 0.05, 1.0, 2),
    (2000, 10, 5, 150, 4_000_000, 0.05, 0.5, 3),
]
BATCHES, GRID = 6, "geometric"


def record(users: int, arms: int, C: int, U: int, horizon: int, gap: float, gamma: float, seed: int) -> list[dict]:
    graphs: list[dict] = []
    real = anondecomp.decompose

    def spy(graph, C_, *args, **kwargs):
        active = graph.support.astype(np.int64)
        masks = (active << np.arange(graph.n_arms)[None, :]).sum(axis=1)
        graphs.append(
            {
                "label": f"N={users} K={arms} C={C} U={U} seed={seed} batch={len(graphs) + 1}",
                "C": int(C_),
                "U": U,
                "arms": graph.n_arms,
                "demand": graph.demand,
                "active": [int(m) for m in masks],
            }
        )
        return real(graph, C_, *args, **kwargs)

    rng = np.random.default_rng(seed)
    instance = clustered_instance(users, arms, U, gap, rng)
    with mock.patch.object(anondecomp, "decompose", spy):
        anon_batched(
            instance,
            C,
            horizon,
            U=U,
            decomposer="auto",
            rng=rng,
            batches=BATCHES,
            grid=GRID,
            gamma=gamma,
            best_effort=True,
        )
    return graphs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "solvers/anondecomp/bench/data/alg1_graphs.json"))
    args = parser.parse_args()
    graphs = [g for run in RUNS for g in record(*run)]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps({"source": "benchmarks/record_alg1_graphs.py (Algorithm 1, paper 000)", "graphs": graphs}) + "\n"
    )
    for g in graphs:
        sizes = [bin(m).count("1") for m in g["active"]]
        print(f"{g['label']}: D = {g['demand']:g}, mean |A_i| = {np.mean(sizes):.2f}")
    print(f"wrote {len(graphs)} graphs to {args.out}")


if __name__ == "__main__":
    main()
