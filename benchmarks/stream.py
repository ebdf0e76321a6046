"""Logs that stream: each window warm-started from the previous window's plan against a cold decomposition.

Two logs, each cut into windows and every window decomposed three ways (:mod:`anondecomp.stream`):

* ``warm``: warm-started from the previous window's warm plan, kept whatever its R (``fallback=False``): the
  warm start's own quality and time;
* ``stream``: what ``anonbandits stream`` returns (the default ``fallback=True``: the warm result when it is
  within 2 % of the window's lower bound, else the shorter of it and the cold one), carrying its own plans;
* ``cold``: the default :func:`anondecomp.decompose` of the window's graph.

Logs:

* **OBD**: the Open Bandit Dataset sample (Saito et al., NeurIPS 2021 Datasets and Benchmarks; the ``random`` and
  ``bts`` logs of campaign ``all``, 20,000 impressions over 7 days), on its own timestamps: user = user type
  (``user_feature_0..3``), item = ``item_id``, one interaction per impression, windows of 1 day every 6 hours
  (25 windows), C = 10. The data is not redistributed: ``benchmarks/real_graphs.py``'s ``obd_archive`` fetches
  the ``obp`` source archive into build/obd/ with pip;
* **catalogue**: the catalogue family (``benchmarks/catalogue.py``: OBD's fitted power laws, 5 to 300 items per
  user, C = 50) at its smallest size, 30,000 users of 3,000 items per window, unit weights, 12 one-hour
  windows; each hour 10 % of the users are replaced by new ones (drawn from the same law), the others keep
  their items.

Every decomposition goes through the exact verifier (:func:`anondecomp.verify`). Seconds are the solver's own
(building a window's graph is common to all three and not counted), wall time and process CPU time (the machine
is shared: CPU time varies less). The total exposure of the cold and warm results
(:func:`anondecomp.exposure.exposure_info`: user-blocks in a group of C+1 or more) is recorded beside them (the
cold one is re-seated by the default, the warm one hides its free users itself). Written to
``docs/results/stream.csv`` and ``stream.png``; ``--quick`` runs 3,000 users of 300 items over 4 windows and
OBD's first 2 days (a window a day; only when build/obd/ holds the archive already: a quick run never downloads)
into build/benchmarks/, never docs/results/.

Usage: python benchmarks/stream.py [--quick] [--skip-obd]
"""

from __future__ import annotations

import argparse
import csv
import datetime
import tempfile
import time
from pathlib import Path

import numpy as np
from _output import ROOT, results_dir

import anondecomp
from anondecomp.exposure import exposure_info
from anondecomp.io import atomic_open
from anondecomp.stream import InteractionLog, decompose_window, read_log, window_bounds, window_graph

CHURN = 0.1
COLUMNS = (
    "log",
    "window",
    "interactions",
    "users",
    "items",
    "dropped",
    "bound",
    "cold_R",
    "cold_seconds",
    "cold_cpu",
    "warm_R",
    "warm_seconds",
    "warm_cpu",
    "stream_R",
    "stream_seconds",
    "stream_cpu",
    "stream_plan",
    "cold_exposure",
    "warm_exposure",
    "verified",
)


def obd_archive_present() -> bool:
    """Whether the ``obp`` archive is in build/obd/ already (``--quick`` never downloads it)."""
    from real_graphs import OBP_VERSION

    return (ROOT / "build" / "obd" / f"obp-{OBP_VERSION}.tar.gz").exists()


def obd_log(path: Path, days: int | None = None) -> Path:
    """The OBD sample as a Parquet log (user type, item, timestamp), its first ``days`` days only if given."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from real_graphs import obd_archive

    from anondecomp.bench.real import obd_rows, obd_type

    rows = list(obd_rows(obd_archive()))
    stamps = np.array([datetime.datetime.fromisoformat(r["timestamp"]).timestamp() for r in rows])
    keep = stamps < stamps.min() + 86400 * days if days else np.ones(len(rows), dtype=bool)
    table = pa.table(
        {
            "user": [obd_type(r) for r, k in zip(rows, keep, strict=True) if k],
            "item": np.array([int(r["item_id"]) for r in rows])[keep],
            "timestamp": pa.array((stamps[keep] * 1e6).astype(np.int64), pa.timestamp("us", tz="UTC")),
        }
    )
    pq.write_table(table, path)
    return path


def catalogue_log(path: Path, n_users: int, n_items: int, windows: int, seed: int = 0) -> Path:
    """A log of ``windows`` hours of the catalogue family: ``n_users`` active users each hour, each interacting
    once with each of its items at a uniform time of the hour; each hour :data:`CHURN` of them are replaced by
    new users of the same law. Vectorised over users (a user's items are a CSR row of the pool's graph)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from catalogue import MAX_ACTIVITY, MIN_ACTIVITY

    from anondecomp.bench.real import powerlaw_log

    replaced = int(CHURN * n_users)
    pool = powerlaw_log(
        n_users + replaced * windows, n_items, 0, seed, max_share=MAX_ACTIVITY / n_items, min_activity=MIN_ACTIVITY
    )
    rng = np.random.default_rng(seed + 1)
    indptr, arms = pool.indptr, pool.edge_arms
    active, fresh = np.arange(n_users), n_users
    users, items, times = [], [], []
    for w in range(windows):
        if w:
            active = active.copy()
            active[rng.choice(n_users, replaced, replace=False)] = np.arange(fresh, fresh + replaced)
            fresh += replaced
        degree = indptr[active + 1] - indptr[active]
        owner = np.repeat(active, degree)
        edge = (
            np.repeat(indptr[active], degree)
            + np.arange(int(degree.sum()))
            - np.repeat(np.cumsum(degree) - degree, degree)
        )
        users.append(owner)
        items.append(arms[edge])
        times.append(3600.0 * w + 3600.0 * rng.random(len(owner)))
    pq.write_table(
        pa.table({"user": np.concatenate(users), "item": np.concatenate(items), "timestamp": np.concatenate(times)}),
        path,
    )
    return path


def timed(fn, *args, **kwargs):
    """(result, wall seconds, CPU seconds) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def run_log(name: str, log: InteractionLog, C: int, window: float, step: float) -> list[dict]:
    """Every window of ``log`` decomposed warm (no fallback), as the stream (fallback) and cold."""
    starts, ends = window_bounds(log.times, window, step)
    lo, hi = np.searchsorted(log.times, starts), np.searchsorted(log.times, ends)
    warm_seats = stream_seats = None
    rows = []
    for k in range(len(starts)):
        graph, users, items, dropped = window_graph(log, int(lo[k]), int(hi[k]), C)
        if graph is None:
            continue
        cold, cold_s, cold_cpu = timed(anondecomp.decompose, graph, C)
        (warm, warm_seats), warm_s, warm_cpu = timed(
            decompose_window, graph, C, warm_seats, users, items, fallback=False
        )
        (stream, stream_seats), stream_s, stream_cpu = timed(decompose_window, graph, C, stream_seats, users, items)
        verified = all(anondecomp.verify(graph, C, d).valid for d in (cold, warm, stream))
        rows.append(
            {
                "log": name,
                "window": k,
                "interactions": int(hi[k] - lo[k]),
                "users": graph.n_users,
                "items": graph.n_arms,
                "dropped": dropped,
                "bound": graph.lower_bound,
                "cold_R": cold.total_assignments,
                "cold_seconds": round(cold_s, 4),
                "cold_cpu": round(cold_cpu, 4),
                "warm_R": warm.total_assignments,
                "warm_seconds": round(warm_s, 4),
                "warm_cpu": round(warm_cpu, 4),
                "stream_R": stream.total_assignments,
                "stream_seconds": round(stream_s, 4),
                "stream_cpu": round(stream_cpu, 4),
                "stream_plan": stream.info["stream"],
                "cold_exposure": exposure_info(cold)["exposure_total"],
                "warm_exposure": exposure_info(warm)["exposure_total"],
                "verified": verified,
            }
        )
        print(
            f"{name} window {k}: {graph.n_users} users x {graph.n_arms} items, bound {graph.lower_bound}; cold R = "
            f"{cold.total_assignments} in {cold_s:.2f} s, warm R = {warm.total_assignments} in {warm_s:.2f} s, "
            f"stream R = {stream.total_assignments} ({stream.info['stream']}) in {stream_s:.2f} s, verified "
            f"{verified}",
            flush=True,
        )
    return rows


def summary(rows: list[dict]) -> list[str]:
    """One line per log, over the windows after the first (the first has no plan to start from): the median of the
    warm/cold time ratios and that of the totals, the largest R ratios, and how often the stream kept warm."""
    lines = []
    for name in dict.fromkeys(r["log"] for r in rows):
        later = [r for r in rows if r["log"] == name][1:]
        if not later:
            continue
        ratio = {
            f"{how}_{x}": np.array([float(r[f"{how}_{x}"]) / max(float(r[f"cold_{x}"]), 1e-9) for r in later])
            for how in ("warm", "stream")
            for x in ("seconds", "cpu", "R")
        }
        kept = sum(r["stream_plan"] == "warm" for r in later)
        exposure = sum(int(r["warm_exposure"]) for r in later) / sum(int(r["cold_exposure"]) for r in later)
        total = {how: sum(float(r[f"{how}_seconds"]) for r in later) for how in ("warm", "stream", "cold")}
        lines.append(
            f"{name}: {len(later)} warm-started windows; warm/cold time median "
            f"{np.median(ratio['warm_seconds']):.3f} (CPU {np.median(ratio['warm_cpu']):.3f}, all windows "
            f"{total['warm'] / total['cold']:.3f}), R warm/cold max {ratio['warm_R'].max():.4f} (mean "
            f"{ratio['warm_R'].mean():.4f}); stream/cold time median {np.median(ratio['stream_seconds']):.3f} (CPU "
            f"{np.median(ratio['stream_cpu']):.3f}, all windows {total['stream'] / total['cold']:.3f}), R stream/cold "
            f"max {ratio['stream_R'].max():.4f}; the stream kept the warm result in {kept} of {len(later)}; total "
            f"exposure warm/cold {exposure:.3f}"
        )
    return lines


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    logs = list(dict.fromkeys(r["log"] for r in rows))
    fig, axes = plt.subplots(2, len(logs), figsize=(6 * len(logs), 7), squeeze=False)
    for col, name in enumerate(logs):
        mine = [r for r in rows if r["log"] == name]
        x = [r["window"] for r in mine]
        top, bottom = axes[0][col], axes[1][col]
        for key, label, style in (
            ("cold", "cold (decompose)", "o-"),
            ("warm", "warm", "s-"),
            ("stream", "stream", "^--"),
        ):
            top.plot(x, [max(float(r[f"{key}_seconds"]), 1e-3) for r in mine], style, label=label, ms=4)
            bottom.plot(x, [r[f"{key}_R"] / r["bound"] for r in mine], style, label=label, ms=4)
        top.set_yscale("log")
        top.set_title(name)
        top.set_ylabel("seconds (solver)")
        bottom.axhline(1.02, color="grey", lw=0.8, ls=":")
        bottom.set_ylabel("R / lower bound")
        bottom.set_xlabel("window")
        top.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def write_csv(rows: list[dict], path: Path) -> None:
    with atomic_open(path, newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, into build/benchmarks/")
    parser.add_argument("--skip-obd", action="store_true", help="only the catalogue log (no download)")
    args = parser.parse_args()
    out = results_dir(args.quick)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.skip_obd or (args.quick and not obd_archive_present()):
            print("OBD skipped (--skip-obd, or --quick without build/obd/: the full run downloads it)", flush=True)
        else:
            path = obd_log(Path(tmp) / "obd.parquet", days=2 if args.quick else None)
            step = 86400.0 if args.quick else 6 * 3600.0
            rows += run_log("OBD", read_log(path), 10, 86400.0, step)
        size = (3_000, 300, 4) if args.quick else (30_000, 3_000, 12)
        path = catalogue_log(Path(tmp) / "catalogue.parquet", *size)
        rows += run_log("catalogue", read_log(path), 50, 3600.0, 3600.0)
    write_csv(rows, out / "stream.csv")
    plot(rows, out / "stream.png")
    for line in summary(rows):
        print(line)


if __name__ == "__main__":
    main()
