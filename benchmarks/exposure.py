"""Exposure caps and capacity: what capping each user's surplus exposure, or each item's users per assignment, costs
in assignments.

A user's *exposure* is the number of blocks (assignments, with multiplicity) in which its arm holds at least C+1
users, so that a released group sum holds its reward; its *surplus* is the exposure beyond its demand
``sum_j ceil(w_ij)`` (:mod:`anondecomp.exposure`). A *capacity* M allows at most M users on an item in one
assignment (:mod:`anondecomp.capacity`). Graphs: the pooled OBD type x item graph at C = 50 and C = 10
(:func:`anondecomp.bench.real.obd_graph`, the ``obp`` source archive fetched by ``real_graphs.obd_archive``),
and the ``real`` family's synthetic logs with OBD's fitted power laws (:func:`anondecomp.bench.real.powerlaw_log`,
unit weights): 3,000 users x 1,000 items at C = 50 and 1,500 x 500 at C = 10, seed 0.

* **Exposure** (exposure.csv): for each graph, the method's own seating (``decompose(graph, C, reseat=False)``),
  the default (``decompose(graph, C)``, re-seated), and caps S (``max_surplus_exposure=S``) on a grid of
  :data:`GRID` values from the certified bound (:func:`anondecomp.exposure.exposure_bounds`) up to the default's
  largest surplus, plus the frontier traced from the default down (each S one below the largest surplus the last
  cap gave, until refused), plus one S below the bound (refused as infeasible). A refused cap is recorded with
  its reason (the error's class). The certified bounds on the total exposure and on the largest surplus are on
  every row.
* **Capacity** (capacity.csv): R against M = ceil(f (C+1)) for the factors of :data:`FACTORS` below the largest
  arm degree, then M = the largest arm degree (a capacity that cannot bind: no arm has more users), and the
  default without a capacity; with the capacity lower bound ``max(max_i sum_j ceil(w_ij), max_j ceil(sum_i
  ceil(w_ij) / M_j))``.

Every decomposition kept goes through the exact verifier (:func:`anondecomp.verify`, which reads the cap and the
capacity from the decomposition's ``info``). Seconds are wall time of ``decompose`` (the machine is shared).

Usage: python benchmarks/exposure.py [--quick] [--out DIR] [--plot-only]
A full run writes docs/results/exposure.csv, exposure.png (R against the largest surplus exposure per graph, the
certified bound as a vertical line), capacity.csv and capacity.png (R / lower bound against M / (C+1)), in about 4
minutes on two shared cores; ``--quick`` (a 600 x 200 power-law log at C = 10, a few caps and capacities; OBD not
needed) writes build/benchmarks/; ``--plot-only`` redraws both plots from the tables in the output directory.
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from pathlib import Path

import numpy as np
from _output import results_dir

import anondecomp
from anondecomp.bench.real import obd_graph, powerlaw_log
from anondecomp.capacity import capacity_lower_bound
from anondecomp.errors import AnonDecompError
from anondecomp.exposure import exposure_bounds, exposure_info
from anondecomp.io import atomic_open

GRID = 6
"""Caps S spread evenly from the certified bound to the default's largest surplus (both included)."""
FACTORS = (1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
"""Capacities M = ceil(f (C+1)), those below the largest arm degree."""
FIGURES = (
    "exposure_max",
    "exposure_mean",
    "surplus_max",
    "surplus_bound",
    "exposure_total",
    "exposure_total_bound",
    "exposure_per_demand_mean",
)
EXPOSURE_COLUMNS = (
    "graph",
    "C",
    "users",
    "items",
    "strategy",
    "S",
    "R",
    "lower_bound",
    "method",
    *FIGURES,
    "seconds",
    "status",
    "reason",
    "verified",
)
CAPACITY_COLUMNS = (
    "graph",
    "C",
    "users",
    "items",
    "M",
    "M_over_C1",
    "R",
    "lower_bound",
    "R_over_bound",
    "method",
    "passes",
    "surplus_max",
    "exposure_total",
    "seconds",
    "status",
    "reason",
    "verified",
)


def graphs(quick: bool) -> list[tuple[str, int, anondecomp.DemandGraph]]:
    """(name, C, graph) of every graph measured."""
    if quick:
        return [("power-law 600x200 seed 0", 10, powerlaw_log(600, 200, 10, 0))]
    from real_graphs import obd_archive

    archive = obd_archive()
    return [
        ("OBD", 50, obd_graph(archive, 50)),
        ("OBD", 10, obd_graph(archive, 10)),
        ("power-law 3000x1000 seed 0", 50, powerlaw_log(3000, 1000, 50, 0)),
        ("power-law 1500x500 seed 0", 10, powerlaw_log(1500, 500, 10, 0)),
    ]


def solve(graph, C: int, **kwargs) -> tuple[anondecomp.Decomposition | None, float, str]:
    """(decomposition or None, seconds, refusal class or "") of ``decompose(graph, C, **kwargs)``, verified."""
    start = time.perf_counter()
    try:
        d = anondecomp.decompose(graph, C, **kwargs)
    except AnonDecompError as error:
        return None, time.perf_counter() - start, type(error).__name__
    seconds = time.perf_counter() - start
    report = anondecomp.verify(graph, C, d)
    assert report.valid, (kwargs, report.summary())
    return d, seconds, ""


def exposure_row(base: dict, strategy: str, S, d, seconds: float, reason: str, bounds) -> dict:
    row = {**base, "strategy": strategy, "S": "" if S is None else S, "seconds": round(seconds, 2)}
    row["surplus_bound"], row["exposure_total_bound"] = bounds.surplus, bounds.total
    if d is None:
        return {**row, "status": "refused", "reason": reason}
    figures = d.info.get("exposure") or exposure_info(d)
    row.update({k: round(figures[k], 3) if isinstance(figures[k], float) else figures[k] for k in FIGURES})
    return {**row, "R": d.total_assignments, "lower_bound": d.lower_bound, "method": d.method, "status": "ok"}


def measure_exposure(name: str, C: int, graph, quick: bool) -> list[dict]:
    """Own seating, the default, and the caps (module docstring) on one graph."""
    base = {"graph": name, "C": C, "users": graph.n_users, "items": graph.n_arms, "lower_bound": graph.lower_bound}
    bounds = exposure_bounds(graph, C)
    rows = []
    for strategy, kwargs in (("own seating", {"reseat": False}), ("default", {})):
        d, seconds, reason = solve(graph, C, **kwargs)
        assert d is not None, reason
        rows.append(exposure_row(base, strategy, None, d, seconds, reason, bounds))
        report(rows[-1])
    top = rows[-1]["surplus_max"]
    done: dict[int, dict] = {}

    def cap(S: int) -> dict:
        if S not in done:
            d, seconds, reason = solve(graph, C, max_surplus_exposure=S)
            done[S] = exposure_row(base, "cap", S, d, seconds, reason, bounds)
            report(done[S])
        return done[S]

    S = top - 1  # the frontier, from the default down
    while S >= bounds.surplus:
        got = cap(S)
        if got["status"] != "ok":
            break
        S = got["surplus_max"] - 1
    for S in np.unique(np.round(np.linspace(bounds.surplus, top, 3 if quick else GRID)).astype(int)):
        cap(int(S))
    if bounds.surplus > 0:
        cap(bounds.surplus - 1)
    return rows + [done[S] for S in sorted(done, reverse=True)]


def measure_capacity(name: str, C: int, graph, quick: bool) -> list[dict]:
    """R against the capacity M on one graph (module docstring)."""
    base = {"graph": name, "C": C, "users": graph.n_users, "items": graph.n_arms}
    widest = int(graph.arm_degrees.max())
    factors = FACTORS[:3] if quick else FACTORS
    Ms = [m for m in dict.fromkeys(math.ceil(f * (C + 1)) for f in factors) if m < widest] + [widest]
    rows = []
    for M in [*Ms, None]:
        d, seconds, reason = solve(graph, C) if M is None else solve(graph, C, capacity=M)
        row = {**base, "M": "" if M is None else M, "seconds": round(seconds, 2)}
        row["M_over_C1"] = "" if M is None else round(M / (C + 1), 3)
        if d is None:
            row.update(status="refused", reason=reason)
            row["lower_bound"] = capacity_lower_bound(graph, np.full(graph.n_arms, M))
        else:
            figures = d.info["exposure"]
            row.update(
                R=d.total_assignments,
                lower_bound=d.lower_bound,
                R_over_bound=round(d.ratio, 4),
                method=d.method,
                passes=d.info.get("passes", ""),
                surplus_max=figures["surplus_max"],
                exposure_total=figures["exposure_total"],
                status="ok",
            )
        rows.append(row)
        report(row)
    return rows


def report(row: dict) -> None:
    print(", ".join(f"{k}={v}" for k, v in row.items() if k not in ("users", "items")), flush=True)


def write(path: Path, columns, rows: list[dict]) -> None:
    with atomic_open(path, newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows([{**r, "verified": True} if r.get("status") == "ok" else r for r in rows])
    print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 600 x 200 log at C = 10; output in build/benchmarks/")
    parser.add_argument("--out", help="output directory (default docs/results/, build/benchmarks/ with --quick)")
    parser.add_argument("--plot-only", action="store_true", help="redraw the plots from the output's tables")
    args = parser.parse_args()
    out = Path(args.out) if args.out else results_dir(args.quick)
    if not args.plot_only:
        out.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        exposure, capacity = [], []
        for name, C, graph in graphs(args.quick):
            print(f"{name}, C = {C}: {graph.n_users} users x {graph.n_arms} items, {graph.nnz} edges", flush=True)
            exposure += measure_exposure(name, C, graph, args.quick)
            capacity += measure_capacity(name, C, graph, args.quick)
        write(out / "exposure.csv", EXPOSURE_COLUMNS, exposure)
        write(out / "capacity.csv", CAPACITY_COLUMNS, capacity)
        print(f"total {time.perf_counter() - start:.0f} s")
    plot_exposure(out / "exposure.csv", out / "exposure.png")
    plot_capacity(out / "capacity.csv", out / "capacity.png")


def _read(table: Path) -> list[dict]:
    with open(table, newline="") as fh:
        return list(csv.DictReader(fh))


def _panels(rows: list[dict]) -> list[tuple[str, int]]:
    return list(dict.fromkeys((r["graph"], int(r["C"])) for r in rows))


def plot_exposure(table: Path, path: Path) -> None:
    """R against the largest surplus exposure, one panel per graph: own seating, the default and the caps met (the
    frontier), the caps refused between the certified bound and the least surplus found (shaded), the bound."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = _read(table)
    panels = _panels(rows)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.8), squeeze=False)
    for ax, (graph, C) in zip(axes[0], panels, strict=True):
        mine = [r for r in rows if r["graph"] == graph and int(r["C"]) == C]
        met = [r for r in mine if r["strategy"] in ("default", "cap") and r["status"] == "ok"]
        frontier = sorted({(int(r["surplus_max"]), int(r["R"])) for r in met})
        x, y = zip(*frontier, strict=True)
        ax.step(x, y, "s-", where="post", color="C2", ms=4, label="caps met (frontier)")
        for strategy, style in (("own seating", "C3x"), ("default", "C0o")):
            r = next(r for r in mine if r["strategy"] == strategy)
            ax.plot(int(r["surplus_max"]), int(r["R"]), style, ms=9, mew=2, label=strategy)
        bound = int(mine[0]["surplus_bound"])
        if min(x) > bound:
            ax.axvspan(bound, min(x), color="grey", alpha=0.15, lw=0, label="caps refused")
        ax.axvline(bound, color="grey", ls="--", lw=1, label=f"certified bound ({bound})")
        lower = int(mine[0]["lower_bound"])
        ax.axhline(lower, color="grey", ls=":", lw=1, label=f"R lower bound ({lower})")
        ax.set(title=f"{graph}, C = {C}", xlabel="largest surplus exposure", xlim=(0, None))
    axes[0][0].set_ylabel("assignments R")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")


def plot_capacity(table: Path, path: Path) -> None:
    """R / lower bound against M / (C+1), one line per graph; refused capacities marked on the axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in _read(table) if r["M"]]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for k, (graph, C) in enumerate(_panels(rows)):
        mine = [r for r in rows if r["graph"] == graph and int(r["C"]) == C]
        ok = [r for r in mine if r["status"] == "ok"]
        ax.plot(
            [float(r["M_over_C1"]) for r in ok],
            [float(r["R_over_bound"]) for r in ok],
            "o-",
            color=f"C{k}",
            label=f"{graph}, C = {C}",
        )
        refused = [float(r["M_over_C1"]) for r in mine if r["status"] != "ok"]
        if refused:
            ax.plot(refused, [1.0] * len(refused), "x", color=f"C{k}", ms=9, mew=2, label=f"refused ({graph}, C = {C})")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set(xscale="log", xlabel="capacity M / (C+1)", ylabel="R / capacity lower bound")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
