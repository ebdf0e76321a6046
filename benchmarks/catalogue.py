"""Sparse logs of a real catalogue's size: the default command against its floor, time and peak memory.

The catalogue family (:data:`FAMILY`): :func:`anondecomp.bench.real.powerlaw_log` with OBD's fitted exponents
(user activity a discrete Pareto law of tail 1.82, item popularity rank^-0.63) from a minimum of
:data:`MIN_ACTIVITY` items per user (OBD's; median 12, mean about 35), each user's activity capped at
:data:`MAX_ACTIVITY` items, C = 50, seed 0; items with at most C users are dropped. Each graph is written as a
Parquet edge table (``user``, ``arm``, ``weight``), then, as whole processes:

* ``default``: ``anonbandits decompose G.parquet --C 50 -o OUT.parquet``, what a user types;
* ``certify``: the same with ``--certify`` (it prints ``LP lower bound V (certified; how)``);
* ``floor``: a Python process that only reads the edge table and writes an R x N int32 schedule of arm indices
  (R the command's) as Parquet: what any implementation must at least do;
* ``cluster`` (with ``--modes cluster``): ``--certify --scheduler ADDRESS -o OUT/`` on a Dask
  ``distributed.LocalCluster`` of 2 worker processes (1 thread each) started here; its peak memory is the sampled
  sum over the command and the workers.

Seconds and peak resident memory (the kernel's ``wait4`` figure for the whole process) go to
``docs/results/catalogue.csv`` and a log-log plot ``catalogue.png`` against the interactions.

The quality sweep (``catalogue_quality.csv``): the library's default (``anondecomp.decompose``, which the
command calls) on the family's smallest size over C in :data:`SWEEP_C`, seeds :data:`SWEEP_SEEDS`, user tail
exponents :data:`SWEEP_TAILS` and item exponents :data:`SWEEP_ITEMS`: R, the certified bound (the trivial one,
or the LP's below the dense limit) and R / bound, every decomposition through the exact verifier.

``--quick`` runs the smallest size and a corner of the sweep, into build/benchmarks/.

Usage: python benchmarks/catalogue.py [--quick] [--max-users N] [--min-users N] [--tables scale,quality]
[--modes default,certify,floor,cluster] [--out catalogue.csv]
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
from pathlib import Path

import numpy as np
from _output import results_dir
from decompose_scale import field, timed_process

from anondecomp.io import atomic_open

C = 50
MIN_ACTIVITY = 5
MAX_ACTIVITY = 300
SEED = 0
FAMILY = ((30_000, 3_000), (100_000, 10_000), (1_000_000, 100_000))
"""(users, items) before the items with at most C users are dropped."""
SWEEP_C = (10, 25, 50)
SWEEP_SEEDS = (0, 1, 2)
SWEEP_TAILS = (1.5, 1.82, 2.5)
SWEEP_ITEMS = (0.4, 0.63, 1.0)
QUALITY_COLUMNS = (
    "users",
    "items",
    "interactions",
    "C",
    "seed",
    "user_tail",
    "item_exponent",
    "method",
    "R",
    "lower_bound",
    "certified_bound",
    "how",
    "ratio",
    "seconds",
    "verified",
)
COLUMNS = (
    "users",
    "items",
    "interactions",
    "C",
    "seed",
    "mode",
    "seconds",
    "peak_bytes",
    "R",
    "lower_bound",
    "certified_bound",
    "how",
    "x_floor_seconds",
    "x_floor_memory",
)


def write_log(path: Path, n_users: int, n_items: int) -> tuple[int, int, int]:
    """The family's log of this size as a Parquet edge table; (users, items, interactions) kept."""
    from anondecomp.bench.real import powerlaw_log, write_edge_table

    g = powerlaw_log(n_users, n_items, C, SEED, max_share=MAX_ACTIVITY / n_items, min_activity=MIN_ACTIVITY)
    write_edge_table(g, path, C)
    return g.n_users, g.n_arms, g.nnz


def floor(edge_table: str, rounds: int, out: str) -> None:
    """Read the edge table and write an R x N int32 schedule (every user on its first arm) as Parquet."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(edge_table, columns=["user", "arm"])
    users = pc.unique(table.column("user"))
    arms = pc.index_in(table.column("arm"), pc.unique(table.column("arm"))).to_numpy()
    first = np.zeros(len(users), dtype=np.int32)
    first[pc.index_in(table.column("user"), users).to_numpy()[::-1]] = arms[::-1]
    schedule = np.broadcast_to(first, (rounds, len(users)))
    pq.write_table(pa.table({"arm": pa.array(np.ascontiguousarray(schedule).ravel())}), out)


def run_size(n_users: int, n_items: int, tmp: Path, modes: list[str], cluster=None) -> list[dict]:
    """The rows of one size, one per mode (``floor`` after the others: it writes the R they found)."""
    import shutil

    log = tmp / f"log_{n_users}.parquet"
    users, items, edges = write_log(log, n_users, n_items)
    exe = str(Path(sys.executable).with_name("anonbandits"))
    base = {"users": users, "items": items, "interactions": edges, "C": C, "seed": SEED}
    rows = []
    for mode in (m for m in modes if m != "floor"):
        out = tmp / ("out" if mode == "cluster" else f"out_{mode}.parquet")
        extra = {
            "default": [],
            "certify": ["--certify"],
            "cluster": ["--certify", "--scheduler", cluster.scheduler_address] if cluster else [],
        }[mode]
        pids = [w.process.pid for w in cluster.workers.values()] if mode == "cluster" else []
        target = f"{out}/" if mode == "cluster" else str(out)  # a part directory on the cluster
        seconds, peak, text = timed_process([exe, "decompose", str(log), "--C", str(C), "-o", target, *extra], pids)
        shutil.rmtree(out) if mode == "cluster" else out.unlink()
        certified = "(certified; " in text
        rows.append(
            {
                **base,
                "mode": mode,
                "seconds": seconds,
                "peak_bytes": peak,
                "R": int(field(text, "R (assignments)")),
                "lower_bound": int(field(text, "lower bound")),
                "certified_bound": field(text, "LP lower bound") if certified else "",
                "how": text.split("(certified; ")[1].split("\n")[0].rstrip(")") if certified else "",
            }
        )
    floor_row = None
    if "floor" in modes:
        out = tmp / "floor.parquet"
        R = rows[0]["R"] if rows else n_users  # the R the command found, when it ran
        seconds, peak, _ = timed_process([sys.executable, __file__, "--floor", str(log), str(R), str(out)], [])
        out.unlink()
        floor_row = {
            **base,
            "mode": "floor",
            "seconds": seconds,
            "peak_bytes": peak,
            "R": R,
            "lower_bound": rows[0]["lower_bound"] if rows else "",
            "certified_bound": "",
            "how": "",
        }
        rows.append(floor_row)
    for row in rows:
        row["x_floor_seconds"] = round(row["seconds"] / floor_row["seconds"], 2) if floor_row else ""
        row["x_floor_memory"] = round(row["peak_bytes"] / floor_row["peak_bytes"], 2) if floor_row else ""
        row["seconds"] = round(row["seconds"], 2)
        print(
            f"{users:>8} x {items:<7} {row['mode']:<8} {row['seconds']:>8.2f} s {row['peak_bytes'] / 2**30:6.2f} GiB"
            f"  R = {row['R']} (bound {row['lower_bound']})  x floor {row['x_floor_seconds'] or '-'}",
            flush=True,
        )
    log.unlink()
    return rows


def quality_rows(quick: bool) -> list[dict]:
    """The sweep: one in-process decomposition per (C, seed, tail, item exponent) on the smallest size."""
    import time

    import anondecomp
    from anondecomp.bench.real import powerlaw_log

    n_users, n_items = FAMILY[0]
    grid = [
        (C_, seed, tail, item) for C_ in SWEEP_C for seed in SWEEP_SEEDS for tail in SWEEP_TAILS for item in SWEEP_ITEMS
    ]
    rows = []
    for C_, seed, tail, item in grid[:2] if quick else grid:
        g = powerlaw_log(
            n_users,
            n_items,
            C_,
            seed,
            max_share=MAX_ACTIVITY / n_items,
            min_activity=MIN_ACTIVITY,
            user_tail=tail,
            item_exponent=item,
        )
        start = time.perf_counter()
        res = anondecomp.decompose(g, C_)
        seconds = time.perf_counter() - start
        bound = anondecomp.lp_lower_bound(g, C_, seed=res)
        rows.append(
            {
                "users": g.n_users,
                "items": g.n_arms,
                "interactions": g.nnz,
                "C": C_,
                "seed": seed,
                "user_tail": tail,
                "item_exponent": item,
                "method": res.method,
                "R": res.total_assignments,
                "lower_bound": g.lower_bound,
                "certified_bound": bound.value,
                "how": bound.how,
                "ratio": round(res.total_assignments / bound.value, 4),
                "seconds": round(seconds, 2),
                "verified": anondecomp.verify(g, C_, res).valid,
            }
        )
        print(" ".join(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
    return rows


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key, label in ((axes[0], "seconds", "wall time (s)"), (axes[1], "peak_bytes", "peak memory (GiB)")):
        for mode, marker in (("default", "o"), ("certify", "s"), ("cluster", "D"), ("floor", "^")):
            pts = sorted(
                (r["interactions"], float(r[key]) / (2**30 if key == "peak_bytes" else 1))
                for r in rows
                if r["mode"] == mode
            )
            if pts:
                ax.plot(*zip(*pts, strict=True), marker=marker, label=mode)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("interactions (edges)")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend()
    fig.suptitle(f"decompose on catalogue logs (C = {C}, Parquet in and out)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--floor":
        floor(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the smallest size only, into build/benchmarks/")
    parser.add_argument("--max-users", type=int, default=max(n for n, _ in FAMILY))
    parser.add_argument("--min-users", type=int, default=0)
    parser.add_argument("--tables", default="scale,quality", help="which tables: scale, quality or both")
    parser.add_argument(
        "--modes",
        default="default,certify,floor",
        help="commands per size: default, certify, floor, cluster (a Dask LocalCluster)",
    )
    parser.add_argument("--out", default="catalogue.csv", help="the scale table's file name (and its plot's)")
    args = parser.parse_args()
    tables = set(args.tables.split(","))
    out = results_dir(args.quick)
    if "scale" in tables:
        sizes = FAMILY[:1] if args.quick else [s for s in FAMILY if args.min_users <= s[0] <= args.max_users]
        modes = args.modes.split(",")
        rows = []
        with tempfile.TemporaryDirectory() as tmp, local_cluster("cluster" in modes) as cluster:
            for n_users, n_items in sizes:
                rows += run_size(n_users, n_items, Path(tmp), modes, cluster)
        write_csv(rows, COLUMNS, out / args.out)
        if len(sizes) > 1:  # a log-log plot of one size says nothing
            plot(rows, (out / args.out).with_suffix(".png"))
    if "quality" in tables:
        write_csv(quality_rows(args.quick), QUALITY_COLUMNS, out / "catalogue_quality.csv")


def local_cluster(wanted: bool):
    """A Dask LocalCluster of 2 single-threaded worker processes (8 GiB each) when ``wanted``, else nothing."""
    import contextlib

    if not wanted:
        return contextlib.nullcontext()
    import distributed

    return distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None, memory_limit="8GiB"
    )


def write_csv(rows: list[dict], columns: tuple[str, ...], path: Path) -> None:
    with atomic_open(path, newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
