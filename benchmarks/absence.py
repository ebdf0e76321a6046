"""Absent users on the Open Bandit Dataset: assignments until every demand is met, planned robustly or not.

Each user misses a block (one assignment) with probability A, independently (:mod:`anondecomp.absence`): the
present users of an arm form its group, which releases when at least C+1 of them are present, and an absent user
gets nothing. A schedule is run block by block (:func:`anondecomp.absence.simulate_received`) until every demand
on the arms not at risk is met; when a plan ends first, the residual demand is re-planned
(:func:`anondecomp.replan`, from an empty plan, with the same absence, so that both strategies re-plan alike) and
run in turn. Strategies, at A = 1 %, 5 %, 10 % and C = 10, 50 on the pooled OBD type x item graph
(:func:`anondecomp.bench.real.obd_graph`, the ``obp`` source archive fetched by ``real_graphs.obd_archive``):

* ``plan-once-then-replan``: today's decomposition (``decompose(graph, C)``), then re-plans;
* ``robust-then-replan``: ``decompose(graph, C, absence=A)`` (robust groups at confidence 0.95), then re-plans;
* ``lower bound``: ``max_i (sum_j ceil(w_ij)) / (1 - A_i)``, the blocks the neediest user must be scheduled for
  in expectation (:func:`anondecomp.absence.user_demand_bound`).

The first plans are computed once per (C, A) (``auto`` with its improvement step); the re-plans run ``auto``
without it (``improve=False``: a re-plan is meant to be quick). Each strategy is run with 20 seeds (the
presence draws); the table holds the mean assignments, the 95 % interval of the mean, the ratio to the bound,
the re-plans and the unmet share of the demanded pairs after the first plan alone.

Usage: python benchmarks/absence.py [--quick] [--seeds N] [--out DIR] [--plot-only]
A full run writes docs/results/absence.csv and absence.png (assignments / lower bound against A, with the 95 %
intervals); ``--quick`` (C = 10, A = 10 %, 3 seeds) writes build/benchmarks/; ``--plot-only`` redraws the plot
from the table in the output directory.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _output import results_dir
from _stats import half_width
from real_graphs import obd_archive

import anondecomp
from anondecomp.absence import presence, simulate_received, user_demand_bound
from anondecomp.bench.real import obd_graph
from anondecomp.io import atomic_open

CONFIDENCE = 0.95
STEP = 8  # blocks simulated between two checks of the demand
MAX_ROUNDS = 50  # plans (the first and its re-plans) after which a run is recorded as unfinished
COLUMNS = (
    "C",
    "absence",
    "strategy",
    "seeds",
    "first_R",
    "assignments",
    "ci95",
    "ratio_to_bound",
    "replans",
    "unmet_after_first_plan",
    "finished",
    "seconds",
)


def run(graph, C: int, A: float, first: anondecomp.Decomposition, open_edges: np.ndarray, seed: int) -> dict:
    """Blocks run until every demand on ``open_edges`` is met, re-planning when a plan ends; and the unmet
    share of the demanded pairs after the first plan."""
    rng = np.random.default_rng(seed)
    need = graph.edge_required
    demanded = need > 0
    received = np.zeros(graph.nnz, dtype=np.int64)
    empty = anondecomp.Decomposition(graph, C, "done", np.empty((0, graph.n_users), int), np.empty(0, int))
    plan, blocks, unmet = first, 0, None
    for rounds in range(1, MAX_ROUNDS + 1):
        rows = np.repeat(np.arange(plan.n_distinct), plan.multiplicities)
        for lo in range(0, len(rows), STEP):
            chunk = rows[lo : lo + STEP]
            received += simulate_received(graph, plan.assignments[chunk], np.ones(len(chunk), int), C, A, rng)
            blocks += len(chunk)
            if not ((received < need) & open_edges).any():
                return {"assignments": blocks, "replans": rounds - 1, "unmet": unmet or 0.0, "finished": True}
        if unmet is None:
            unmet = float(np.mean(received[demanded] < need[demanded]))
        counts = sp.csr_array((received, (graph.edge_users, graph.edge_arms)), shape=graph.shape)
        plan = anondecomp.replan(
            graph, empty, counts, absence=A, confidence=CONFIDENCE, improve=False, best_effort=True
        )
    return {"assignments": blocks, "replans": MAX_ROUNDS - 1, "unmet": unmet or 0.0, "finished": False}


def cases(quick: bool) -> list[tuple[int, float]]:
    return [(10, 0.10)] if quick else [(C, A) for C in (10, 50) for A in (0.01, 0.05, 0.10)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="C = 10, A = 10 %%, 3 seeds; output in build/benchmarks/")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per strategy (default 20, 3 with --quick)")
    parser.add_argument("--out", help="output directory (default docs/results/, build/benchmarks/ with --quick)")
    parser.add_argument("--plot-only", action="store_true", help="redraw absence.png from the output's absence.csv")
    args = parser.parse_args()
    seeds = args.seeds or (3 if args.quick else 20)
    out = Path(args.out) if args.out else results_dir(args.quick)
    if args.plot_only:
        plot(out / "absence.csv", out / "absence.png")
        return
    out.mkdir(parents=True, exist_ok=True)
    archive = obd_archive()
    rows, graphs, today = [], {}, {}
    for C, A in cases(args.quick):
        if C not in graphs:
            graphs[C] = obd_graph(archive, C)
            today[C] = anondecomp.decompose(graphs[C], C)
        graph = graphs[C]
        robust = anondecomp.decompose(graph, C, absence=A, confidence=CONFIDENCE)
        assert anondecomp.verify(graph, C, robust).valid
        open_edges = ~presence(graph, C, A, CONFIDENCE).at_risk[graph.edge_arms]
        bound = user_demand_bound(graph, A)
        for name, first in (("plan-once-then-replan", today[C]), ("robust-then-replan", robust)):
            start = time.perf_counter()
            runs = [run(graph, C, A, first, open_edges, seed) for seed in range(seeds)]
            total = np.array([r["assignments"] for r in runs], dtype=float)
            rows.append(
                {
                    "C": C,
                    "absence": A,
                    "strategy": name,
                    "seeds": seeds,
                    "first_R": first.total_assignments,
                    "assignments": round(total.mean(), 1),
                    "ci95": round(float(half_width(total)), 1),
                    "ratio_to_bound": round(total.mean() / bound, 3),
                    "replans": round(float(np.mean([r["replans"] for r in runs])), 2),
                    "unmet_after_first_plan": round(float(np.mean([r["unmet"] for r in runs])), 4),
                    "finished": sum(r["finished"] for r in runs),
                    "seconds": round(time.perf_counter() - start, 1),
                }
            )
            print(", ".join(f"{k}={rows[-1][k]}" for k in COLUMNS), flush=True)
        rows.append(
            {"C": C, "absence": A, "strategy": "lower bound", "assignments": round(bound, 1), "ratio_to_bound": 1.0}
        )
        print(f"C={C}, absence={A}, lower bound={bound:.1f}", flush=True)
    with atomic_open(out / "absence.csv", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, restval="")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {out / 'absence.csv'}")
    plot(out / "absence.csv", out / "absence.png")


def plot(table: Path, path: Path) -> None:
    """Assignments / lower bound against the absence, one panel per C, one line per strategy (95 % intervals)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(table, newline="") as fh:
        rows = list(csv.DictReader(fh))
    Cs = sorted({int(r["C"]) for r in rows})
    fig, axes = plt.subplots(1, len(Cs), figsize=(5 * len(Cs), 3.8), sharey=True, squeeze=False)
    for ax, C in zip(axes[0], Cs, strict=True):
        for strategy, style in (("plan-once-then-replan", "o--"), ("robust-then-replan", "s-")):
            mine = [r for r in rows if int(r["C"]) == C and r["strategy"] == strategy]
            A = np.array([100 * float(r["absence"]) for r in mine])
            ratio = np.array([float(r["ratio_to_bound"]) for r in mine])
            # the interval of the mean, in units of the bound (assignments / ratio is the bound)
            err = np.array([float(r["ci95"]) * float(r["ratio_to_bound"]) / float(r["assignments"]) for r in mine])
            ax.errorbar(A, ratio, yerr=err, fmt=style, capsize=3, label=strategy)
        ax.axhline(1.0, color="grey", lw=0.8, label="lower bound")
        ax.axhline(1.15, color="grey", lw=0.8, ls=":", label="goal 1.15")
        ax.set(title=f"OBD, C = {C}", xlabel="absence A (%)", xticks=[1, 5, 10])
    axes[0][0].set_ylabel("assignments / lower bound")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
