"""Absent users on OBD, the real and the catalogue families: assignments until every demand is met, planned
robustly or not.

Each user misses a block (one assignment) with probability A, independently (:mod:`anondecomp.absence`): the
present users of an arm form its group, which releases when at least C+1 of them are present, and an absent user
gets nothing. The demand measured is that on the arms not at risk (an arm is at risk when even every user of
its support holds C+1 present with probability below the confidence 0.95): it is what the plans are made for,
and the arms at risk, with the share of the demanded pairs on them, are reported apart (``at_risk_arms``,
``at_risk_pairs``; their users still pad). A schedule is run block by block
(:func:`anondecomp.absence.simulate_received`) until every demand is met; when a plan ends first, the residual
demand is re-planned (:func:`anondecomp.replan`, from an empty plan, with the same absence, so that both
strategies re-plan alike) and run in turn. The graphs (:data:`GRAPHS`, the table's ``graph`` column), each at
A = 1 %, 5 %, 10 %:

* ``obd``: the pooled OBD type x item graph at C = 10 and C = 50 (:func:`anondecomp.bench.real.obd_graph`, the
  ``obp`` source archive fetched by ``real_graphs.obd_archive``): few users, each with a demand of over a
  thousand samples; at C = 50 and A = 10 %, 17 of its 77 items are at risk;
* ``real NxM``: the ``real`` family's synthetic logs shaped like OBD (:func:`anondecomp.bench.real.powerlaw_log`,
  seed 0, unit demands): 1500 users x 500 items at C = 10 and 10,000 x 100 at C = 50 (sizes of
  :data:`anondecomp.bench.suite.REAL_SYNTHETIC`). Not 3000 x 1000 at C = 50 in the full run: its residual after
  a plan is scattered over about 900 arms, and there the calendar misses the re-plan's bound and ``auto``'s
  own route runs to its time limit (:data:`REPLAN_SECONDS`) in every re-plan; ``--graph "real 3000x1000" --C 50
  --seeds 3`` measures it alone;
* ``catalogue NxM``: the catalogue family (``catalogue.FAMILY``: the same law with ``catalogue.MIN_ACTIVITY``
  and the ``catalogue.MAX_ACTIVITY`` cap, C = 50, seed 0) at its smallest size, 30,000 users x 3,000 items
  (about 10^6 demanded pairs).

Strategies:

* ``plan-once-then-replan``: today's default decomposition (``decompose(graph, C)``, method ``auto``, which
  re-seats its groups to lower exposure: padders only up to C+1 per group), then re-plans;
* ``robust-then-replan``: ``decompose(graph, C, absence=A)`` (robust groups at confidence 0.95, not re-seated;
  without the improvement step, as every re-plan: on the 3000 x 1000 log it runs for over ten minutes and
  shortens nothing on OBD), then re-plans.

Bounds, over the same demand:

* ``lower bound``: ``max_i (sum_j ceil(w_ij)) / (1 - A_i)``, the blocks the neediest user must be scheduled for
  in expectation (:func:`anondecomp.absence.user_demand_bound`; the issue's yardstick, ``ratio_to_bound``);
* ``completion bound``: ``E[max_i T_i]``, ``T_i`` the block of user i's ``d_i``-th presence
  (:func:`anondecomp.absence.completion_bound`, exact): no schedule, however adaptive, finishes sooner on
  average, since a user takes at most one sample per block and only when present. It is the lower bound when
  one user's demand stands out (OBD), and well above it when many users share the largest demand (on
  ``real 10000x100`` about 1500 users need 50 samples: at A = 10 % the last of them to be present 50 times
  takes 65.8 blocks on average, 1.18x the lower bound of 55.6).

Each strategy is run with 20 seeds (the presence draws) on every graph; the table holds the mean assignments,
the 95 % interval of the mean, the ratios to both bounds, the re-plans and the unmet share of the demanded pairs
after the first plan.

Usage: python benchmarks/absence.py [--quick] [--seeds N] [--out DIR] [--plot-only] [--graph NAME [--C C]]
A full run writes docs/results/absence.csv and absence.png (assignments / lower bound against A, one panel per
graph and C, with the 95 % intervals and the completion bound); ``--quick`` (OBD and real 1500x500 at C = 10,
A = 10 %, 3 seeds) and ``--graph`` write build/benchmarks/; ``--plot-only`` redraws the plot from the table in
the output directory. A full run takes 19 to 30 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import catalogue
import numpy as np
import scipy.sparse as sp
from _output import results_dir
from _stats import half_width
from real_graphs import obd_archive

import anondecomp
from anondecomp.absence import completion_bound, graph_with_demand, presence, simulate_received, user_demand_bound
from anondecomp.bench.real import obd_graph, powerlaw_log
from anondecomp.io import atomic_open

CONFIDENCE = 0.95
STEP = 8  # blocks simulated between two checks of the demand
REPLAN_SECONDS = 10  # auto's time limit in a re-plan (reached only on the 3000 x 1000 log: see the docstring)
MAX_ROUNDS = 50  # plans (the first and its re-plans) after which a run is recorded as unfinished
ABSENCES = (0.01, 0.05, 0.10)
SEEDS = 20
CATALOGUE_USERS, CATALOGUE_ITEMS = catalogue.FAMILY[0]
GRAPHS = (
    ("obd", 10),
    ("obd", 50),
    ("real 1500x500", 10),
    ("real 10000x100", 50),
    (f"catalogue {CATALOGUE_USERS}x{CATALOGUE_ITEMS}", catalogue.C),
)
"""(graph, C) of a full run, in the table's order."""
COLUMNS = (
    "graph",
    "C",
    "absence",
    "strategy",
    "seeds",
    "first_R",
    "assignments",
    "ci95",
    "ratio_to_bound",
    "ratio_to_completion_bound",
    "replans",
    "unmet_after_first_plan",
    "finished",
    "seconds",
    "at_risk_arms",
    "at_risk_pairs",
)


def build(name: str, C: int):
    """The demand graph called ``name`` at ``C``."""
    if name == "obd":
        return obd_graph(obd_archive(), C)
    family, size = name.split()
    n_users, n_items = (int(n) for n in size.split("x"))
    if family == "real":
        return powerlaw_log(n_users, n_items, C, 0)
    if family == "catalogue":
        return powerlaw_log(
            n_users,
            n_items,
            C,
            catalogue.SEED,
            max_share=catalogue.MAX_ACTIVITY / n_items,
            min_activity=catalogue.MIN_ACTIVITY,
        )
    raise ValueError(f"unknown graph {name!r}")


def open_demand(graph, C: int, A: float):
    """``graph`` with the demand on the arms at risk (:func:`anondecomp.absence.presence`) set to zero (they stay
    in the support: their users still pad), and the number of those arms and the share of the demanded pairs on
    them."""
    at_risk = presence(graph, C, A, CONFIDENCE).at_risk
    off = at_risk[graph.edge_arms]
    demanded = graph.edge_required > 0
    share = float((off & demanded).sum() / max(demanded.sum(), 1))
    weights, required = np.where(off, 0.0, graph.edge_weights), np.where(off, 0, graph.edge_required)
    return graph_with_demand(graph, weights, required), int(at_risk.sum()), share


def play(graph, C: int, A: float, plan: anondecomp.Decomposition, rng: np.random.Generator, received: np.ndarray):
    """Run ``plan``'s blocks in order, :data:`STEP` at a time, adding each pair's samples to ``received`` ((E,),
    in place); yields the blocks run after each step."""
    rows = np.repeat(np.arange(plan.n_distinct), plan.multiplicities)
    for lo in range(0, len(rows), STEP):
        chunk = rows[lo : lo + STEP]
        received += simulate_received(graph, plan.assignments[chunk], np.ones(len(chunk), int), C, A, rng)
        yield len(chunk)


def replan_residual(graph, C: int, A: float, received: np.ndarray) -> anondecomp.Decomposition:
    """The re-plan of what ``received`` ((E,)) leaves short, from an empty plan (both strategies alike)."""
    empty = anondecomp.Decomposition(graph, C, "done", np.empty((0, graph.n_users), int), np.empty(0, int))
    counts = sp.csr_array((received, (graph.edge_users, graph.edge_arms)), shape=graph.shape)
    return anondecomp.replan(
        graph,
        empty,
        counts,
        absence=A,
        confidence=CONFIDENCE,
        improve=False,
        best_effort=True,
        time_limit=REPLAN_SECONDS,
    )


def run(graph, C: int, A: float, first: anondecomp.Decomposition, seed: int) -> dict:
    """Blocks run until every demand of ``graph`` is met, re-planning when a plan ends; and the unmet share of
    the demanded pairs after the first plan."""
    rng = np.random.default_rng(seed)
    need = graph.edge_required
    demanded = need > 0
    received = np.zeros(graph.nnz, dtype=np.int64)
    plan, blocks, unmet = first, 0, None
    for rounds in range(1, MAX_ROUNDS + 1):
        for n in play(graph, C, A, plan, rng, received):
            blocks += n
            if not (received < need).any():
                return {"assignments": blocks, "replans": rounds - 1, "unmet": unmet or 0.0, "finished": True}
        if unmet is None:
            unmet = float(np.mean(received[demanded] < need[demanded]))
        plan = replan_residual(graph, C, A, received)
    return {"assignments": blocks, "replans": MAX_ROUNDS - 1, "unmet": unmet or 0.0, "finished": False}


def cases(quick: bool, graph: str | None = None, C: int | None = None) -> list[tuple[str, int, float]]:
    """(graph, C, A) of a run, grouped by graph."""
    if graph is not None:
        return [(graph, C or 50, A) for A in ABSENCES]
    if quick:
        return [("obd", 10, 0.10), ("real 1500x500", 10, 0.10)]
    return [(name, C, A) for name, C in GRAPHS for A in ABSENCES]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="OBD and real 1500x500 at C = 10, A = 10 %%, 3 seeds; in build/benchmarks/"
    )
    parser.add_argument("--seeds", type=int, default=None, help=f"seeds per strategy (default {SEEDS}, 3 with --quick)")
    parser.add_argument("--out", help="output directory (default docs/results/, build/benchmarks/ with --quick)")
    parser.add_argument("--plot-only", action="store_true", help="redraw absence.png from the output's absence.csv")
    parser.add_argument("--graph", help='one graph alone, e.g. "real 3000x1000" (into build/benchmarks/ by default)')
    parser.add_argument("--C", type=int, help="C of --graph (default 50)")
    args = parser.parse_args()
    seeds = args.seeds or (3 if args.quick else SEEDS)
    out = Path(args.out) if args.out else results_dir(args.quick or args.graph is not None)
    if args.plot_only:
        plot(out / "absence.csv", out / "absence.png")
        return
    out.mkdir(parents=True, exist_ok=True)
    rows, graph, key = [], None, None
    for name, C, A in cases(args.quick, args.graph, args.C):
        if (name, C) != key:
            start = time.perf_counter()
            key, graph = (name, C), build(name, C)
            print(
                f"{name} C={C}: {graph.n_users} users x {graph.n_arms} arms, {graph.nnz} pairs "
                f"({time.perf_counter() - start:.1f} s)",
                flush=True,
            )
        target, at_risk_arms, at_risk_pairs = open_demand(graph, C, A)
        today = anondecomp.decompose(target, C)
        robust = anondecomp.decompose(target, C, absence=A, confidence=CONFIDENCE, improve=False)
        assert anondecomp.verify(target, C, robust).valid
        bound, exact = user_demand_bound(target, A), completion_bound(target, A)
        for strategy, first in (("plan-once-then-replan", today), ("robust-then-replan", robust)):
            start = time.perf_counter()
            runs = [run(target, C, A, first, seed) for seed in range(seeds)]
            total = np.array([r["assignments"] for r in runs], dtype=float)
            rows.append(
                {
                    "graph": name,
                    "C": C,
                    "absence": A,
                    "strategy": strategy,
                    "seeds": seeds,
                    "first_R": first.total_assignments,
                    "assignments": round(total.mean(), 1),
                    "ci95": round(float(half_width(total)), 1),
                    "ratio_to_bound": round(total.mean() / bound, 3),
                    "ratio_to_completion_bound": round(total.mean() / exact, 3),
                    "replans": round(float(np.mean([r["replans"] for r in runs])), 2),
                    "unmet_after_first_plan": round(float(np.mean([r["unmet"] for r in runs])), 4),
                    "finished": sum(r["finished"] for r in runs),
                    "seconds": round(time.perf_counter() - start, 1),
                    "at_risk_arms": at_risk_arms,
                    "at_risk_pairs": round(at_risk_pairs, 4),
                }
            )
            print(", ".join(f"{k}={rows[-1][k]}" for k in COLUMNS), flush=True)
        for strategy, value in (("lower bound", bound), ("completion bound", exact)):
            rows.append(
                {
                    "graph": name,
                    "C": C,
                    "absence": A,
                    "strategy": strategy,
                    "assignments": round(value, 1),
                    "ratio_to_bound": round(value / bound, 3),
                    "ratio_to_completion_bound": round(value / exact, 3),
                    "at_risk_arms": at_risk_arms,
                    "at_risk_pairs": round(at_risk_pairs, 4),
                }
            )
        print(f"{name} C={C}, absence={A}, lower bound={bound:.1f}, completion bound={exact:.1f}", flush=True)
    with atomic_open(out / "absence.csv", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, restval="")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {out / 'absence.csv'}")
    plot(out / "absence.csv", out / "absence.png")


def plot(table: Path, path: Path) -> None:
    """Assignments / lower bound against the absence, one panel per (graph, C), one line per strategy (95 %
    intervals)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(table, newline="") as fh:
        rows = list(csv.DictReader(fh))
    panels = list(dict.fromkeys((r.get("graph", "obd"), int(r["C"])) for r in rows))
    ncols = min(3, len(panels))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.6 * nrows), sharey=True, squeeze=False)
    for ax, (name, C) in zip(axes.flat, panels, strict=False):
        panel = [r for r in rows if (r.get("graph", "obd"), int(r["C"])) == (name, C)]
        for strategy, style in (("plan-once-then-replan", "o--"), ("robust-then-replan", "s-")):
            mine = [r for r in panel if r["strategy"] == strategy]
            A = np.array([100 * float(r["absence"]) for r in mine])
            ratio = np.array([float(r["ratio_to_bound"]) for r in mine])
            # the interval of the mean, in units of the bound (assignments / ratio is the bound)
            err = np.array([float(r["ci95"]) * float(r["ratio_to_bound"]) / float(r["assignments"]) for r in mine])
            ax.errorbar(A, ratio, yerr=err, fmt=style, capsize=3, label=strategy)
        exact = [r for r in panel if r["strategy"] == "completion bound"]
        if exact:
            A = np.array([100 * float(r["absence"]) for r in exact])
            ratio = np.array([float(r["ratio_to_bound"]) for r in exact])
            ax.plot(A, ratio, "k^:", ms=4, label="completion bound (any schedule)")
        ax.axhline(1.0, color="grey", lw=0.8, label="lower bound")
        ax.axhline(1.15, color="grey", lw=0.8, ls=":", label="goal 1.15")
        title = "OBD" if name == "obd" else name
        ax.set(title=f"{title}, C = {C}", xlabel="absence A (%)", xticks=[1, 5, 10])
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for row in axes:
        row[0].set_ylabel("assignments / lower bound")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
