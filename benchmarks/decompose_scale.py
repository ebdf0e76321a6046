"""Issue 13: decompositions at platform scale, one machine and a Dask LocalCluster, against the fastest plain LP.

Graphs: the generator of ``benchmarks/decompose_speed.py`` (every user has an optimal arm, uniform, and each
other arm joins its active set with probability 1/2), batched demand D = 1000, C = 10, generated in chunks and
written in two forms: a Parquet batched table (``user`` int64, ``arm`` int16; ``demand`` and ``C`` in the
metadata) and a Parquet edge table of the same graph (``user``, ``arm``, ``weight`` = D / |A_i| as float64; ``C``
in the metadata), which the solver reads as a general graph.

Table 1 (scale, 20 arms, both forms): the command a user types, ``anonbandits decompose G.parquet -o
OUT.parquet`` (input and output only, no tuning flag), beside ``--shards N -o OUT/`` (N = one shard per 2^20
users) in this process and on a ``distributed.LocalCluster`` of 2 worker processes (their memory added), and up
to 10^6 users a whole process that reads the same file and solves the plain LP (below). Seconds and peak memory
of whole processes; the commands of one size run in turn, ``REPEATS`` times up to 10^6 users (medians), once
above. The LP value is the plain LP's optimum, D = 1000 on these graphs (:func:`write_graph`).

Table 2 (against the plain LP), every cell of 10^3..10^6 users x 10, 20, 50 arms: the in-process
decomposition (from the support in memory: shard and solve) vs building and solving with HiGHS the LP with
y_j = R (w_ij <= z_ij, sum_j z_ij <= R, sum_i z_ij >= (C+1) R), built once as a sparse matrix, with the fastest
of the HiGHS settings in ``LP_SETTINGS``; and, from 10^5 users, the default command (batched and weighted table)
vs a whole process that reads the same file and solves that LP. The tables of docs/decompositions.md are
generated from the two CSVs (``--docs-only`` rewrites them from the committed files).

Usage: python benchmarks/decompose_scale.py [--quick] [--out DIR] [--max-users N] [--tables scale,lp] [--docs-only]
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _output import results_dir

from anondecomp.io import atomic_open

C, D = 10, 1000


def write_graph(
    path: Path, N: int, K: int, seed: int = 0, chunk: int = 1 << 20, weighted: bool = False
) -> float | None:
    """The decompose_speed.py generator, ``chunk`` users at a time, as a batched Parquet table, or with
    ``weighted`` as an edge table of the same graph (weight D / |A_i|, no ``demand`` in the metadata).

    Returns the optimum of the plain LP when it follows without solving: every user's row of w sums to D, so
    R >= D; when every arm's column of w sums to at least (C+1) D, z = w with R = D is feasible, so the
    optimum is D. Otherwise None."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    fields = [("user", pa.int64()), ("arm", pa.int16())]
    meta = {"C": json.dumps(C)} if weighted else {"demand": json.dumps(D), "C": json.dumps(C)}
    schema = pa.schema(fields + [("weight", pa.float64())] if weighted else fields, metadata=meta)
    columns = np.zeros(K)
    with pq.ParquetWriter(path, schema) as writer:
        for lo in range(0, N, chunk):
            n = min(chunk, N - lo)
            active = rng.random((n, K)) < 0.5
            active[np.arange(n), rng.integers(0, K, n)] = True
            columns += (active * (D / active.sum(axis=1))[:, None]).sum(axis=0)
            u, a = np.nonzero(active)
            data = [u + lo, a.astype(np.int16)] + ([D / active.sum(axis=1)[u]] if weighted else [])
            writer.write_table(pa.table(data, schema=schema))
    return float(D) if columns.min() >= (C + 1) * D else None


# HiGHS settings tried for the plain LP; every cell reports the fastest (the LP baseline is the best of these).
LP_SETTINGS = {
    "dual simplex, no presolve": {"solver": "simplex", "simplex_strategy": 1, "presolve": "off"},
    "primal simplex, no presolve": {"solver": "simplex", "simplex_strategy": 4, "presolve": "off"},
    "dual simplex": {"solver": "simplex", "simplex_strategy": 1},
    "IPM, no crossover, no presolve": {"solver": "ipm", "run_crossover": "off", "presolve": "off"},
    "HiGHS default": {},
}


def simple_lp(data, C: int, setting: str = "dual simplex, no presolve") -> tuple[float, float]:
    """(seconds, optimum) of building (one sparse matrix) and solving with HiGHS the plain LP with y_j = R:
    min R  s.t.  w_ij <= z_ij,  sum_j z_ij <= R,  sum_i z_ij >= (C+1) R  (one z per wanted pair)."""
    import scipy.sparse as sp

    from anondecomp.highs import load_model, new_highs

    t0 = time.perf_counter()
    users, arms = np.nonzero(data.support)
    n, P = len(data.support), len(users)
    K = data.support.shape[1]
    w = data.demand / np.bincount(users, minlength=n)[users]
    rows = np.concatenate([users, n + arms, np.arange(n), n + np.arange(K)])
    cols = np.concatenate([np.arange(P), np.arange(P), np.full(n, P), np.full(K, P)])
    vals = np.concatenate([np.ones(P), -np.ones(P), -np.ones(n), np.full(K, C + 1.0)])
    A = sp.csc_matrix((vals, (rows, cols)), shape=(n + K, P + 1))
    h = new_highs()
    for option, value in LP_SETTINGS[setting].items():
        h.setOptionValue(option, value)
    load_model(
        h, A, np.r_[np.zeros(P), 1.0], np.r_[w, 0.0], np.full(P + 1, np.inf), np.full(n + K, -np.inf), np.zeros(n + K)
    )
    h.run()
    if h.modelStatusToString(h.getModelStatus()) != "Optimal":
        raise RuntimeError(f"plain LP ({setting}): {h.modelStatusToString(h.getModelStatus())}")
    return time.perf_counter() - t0, float(h.getInfo().objective_function_value)


def fastest_lp(data, C: int, settings: list[str], repeats: int) -> tuple[float, float, str, dict]:
    """The fastest of ``settings`` (best of ``repeats`` each): (seconds, optimum, setting, seconds per setting)."""
    times, values = {}, {}
    for setting in settings:
        runs = [simple_lp(data, C, setting) for _ in range(repeats)]
        times[setting] = min(t for t, _ in runs)
        values[setting] = runs[0][1]
    best = min(times, key=times.get)
    return times[best], values[best], best, times


def lp_process(path: str, setting: str) -> None:
    """A whole process's work for the CLI comparison: read the table (the sharded path's streaming reader; an
    edge table's D / |A_i| weights are read as their D) and solve the plain LP."""
    from anondecomp import scale

    data, file_C = scale.read_batched(path)
    seconds, value = simple_lp(data, file_C, setting)
    print(json.dumps({"lp_value": value, "lp_seconds": seconds}))


class Peak:
    """Peak of the summed resident memory of some processes and their children, sampled every 0.05 s."""

    def __init__(self, pids: list[int]) -> None:
        import threading

        import psutil

        self.roots = [psutil.Process(p) for p in pids]
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            total = 0
            for root in self.roots:
                try:
                    for p in [root, *root.children(recursive=True)]:
                        total += p.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self._stop.wait(0.05)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def timed_process(cmd: list[str], extra_pids: list[int]) -> tuple[float, int, str]:
    """(wall seconds, peak RSS bytes, stdout) of one process. Its own peak is the kernel's (``wait4``); with
    ``extra_pids`` (Dask workers) the peak is the sampled sum over it and them."""
    import os

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)  # files: wait4 cannot block on a pipe
        peak = Peak([proc.pid, *extra_pids]) if extra_pids else None
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode:
            raise RuntimeError(f"{cmd} failed: {err.read()}")
        own = usage.ru_maxrss * 1024  # kilobytes on Linux
        return wall, (max(own, peak.stop()) if peak else own), out.read()


def field(text: str, name: str) -> str:
    return next(line[len(name) :].split()[0] for line in text.splitlines() if line.startswith(name))


def shards_for(N: int) -> list[str]:
    """The command line's shard option: 2^20 users per shard (the automatic size, also below 2^25 rows)."""
    return ["--shards", str(max(1, -(-N // (1 << 20))))]


FORMS = ("batched", "weighted")
REPEATS = 3  # runs of every command per size up to 10^6 users, in turn (medians): the machine is shared


def command(path: Path, out: Path, N: int, mode: str, scheduler: str | None = None) -> list[str]:
    """The command line of one ``mode``: ``default`` is what a user types (input and output only); ``shards``
    and ``LocalCluster`` name the shards (one per 2^20 users) and a part directory, the latter a scheduler."""
    cmd = [str(Path(sys.executable).with_name("anonbandits")), "decompose", str(path)]
    if mode == "default":
        return cmd + ["-o", str(out)]
    return cmd + ["-o", f"{out}/", *shards_for(N)] + (["--scheduler", scheduler] if mode == "LocalCluster" else [])


def run_command(cmd: list[str], out: Path, worker_pids: list[int]) -> dict:
    """One timed run: seconds, peak memory, the summary's method, R and lower bound, and the output's size
    (a file or a part directory, removed afterwards)."""
    wall, peak, text = timed_process(cmd, worker_pids)
    if out.is_dir():
        size = sum(f.stat().st_size for f in out.iterdir())
        shutil.rmtree(out)
    else:
        size = out.stat().st_size
        out.unlink()
    method = next(line[len("method") :].strip() for line in text.splitlines() if line.startswith("method"))
    return {
        "seconds": wall,
        "peak": peak,
        "method": method,
        "R": int(field(text, "R (assignments)")),
        "lower_bound": int(field(text, "lower bound")),
        "output_bytes": size,
    }


def lp_setting_for(N: int, K: int) -> str:
    """The HiGHS setting that was fastest in-process for this cell in the committed LP table."""
    path = results_dir(False) / "decompose_scale_lp.csv"
    rows = _read(path) if path.exists() else []
    return next(
        (r["lp_setting"] for r in rows if int(r["users"]) == N and int(r["arms"]) == K), "dual simplex, no presolve"
    )


def lp_row(N: int, K: int, tmp: Path, settings: list[str]) -> dict:
    """In-process decomposition vs the fastest plain LP in-process; from 10^5 users also whole processes: the
    default command on the batched and on the weighted table vs the LP process (with the setting that was
    fastest in-process)."""
    from anondecomp import scale

    path = tmp / f"lp_{N}x{K}.parquet"
    write_graph(path, N, K)
    data, _ = scale.read_batched(path)
    repeats = 3 if N * K <= 10**7 else 1  # best of 3 for every timing up to 10^7 pairs, one run above
    dec, res = np.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = scale.decompose_sharded(data, C)
        dec = min(dec, time.perf_counter() - t0)
    lp_s, lp_value, setting, per_setting = fastest_lp(data, C, settings, repeats)
    row = {
        "users": N,
        "arms": K,
        "C": C,
        "decompose_seconds": round(dec, 5),
        "R": res.total_assignments,
        "lower_bound": res.lower_bound,
        "shard_method": "+".join(sorted(set(res.shard_methods))),
        "lp_seconds": round(lp_s, 5),
        "lp_value": round(lp_value, 3),
        "lp_setting": setting,
        "lp_seconds_per_setting": json.dumps({k: round(v, 5) for k, v in per_setting.items()}),
        "ratio_in_process": round(dec / lp_s, 4),
    }
    if N >= 100_000:  # whole processes: the default command on both forms against the LP process
        weighted = tmp / f"lp_{N}x{K}_weighted.parquet"
        write_graph(weighted, N, K, weighted=True)
        out = tmp / "cli_out.parquet"
        cli = {form: [] for form in FORMS}
        lp_proc = []
        for _ in range(repeats):
            for form, graph in (("batched", path), ("weighted", weighted)):
                cli[form].append(run_command(command(graph, out, N, "default"), out, [])["seconds"])
            lp_proc.append(timed_process([sys.executable, __file__, "--lp-process", str(path), setting], [])[0])
        weighted.unlink()
        lp = min(lp_proc)
        row.update(
            cli_seconds=round(min(cli["batched"]), 2),
            cli_weighted_seconds=round(min(cli["weighted"]), 2),
            lp_process_seconds=round(lp, 2),
            ratio_whole_process=round(min(cli["batched"]) / lp, 4),
            ratio_whole_process_weighted=round(min(cli["weighted"]) / lp, 4),
        )
    path.unlink()
    return row


def lp_table(cells: list[tuple[int, int]], tmp: Path, out: Path) -> None:
    """Table 2: every (users, arms) cell; below 10^6 users every HiGHS setting of ``LP_SETTINGS`` is timed,
    at 10^6 users the two fastest at 10^5 users with the same arms (the others were several times slower)."""
    rows: list[dict] = []
    for N, K in cells:
        settings = list(LP_SETTINGS)
        if N >= 10**6:
            ref = next((r for r in rows if r["users"] == N // 10 and r["arms"] == K), None)
            if ref is not None:
                times = json.loads(ref["lp_seconds_per_setting"])
                settings = sorted(times, key=times.get)[:2]
        rows.append(lp_row(N, K, tmp, settings))
        print(json.dumps(rows[-1]), flush=True)
        write_csv(rows, out / "decompose_scale_lp.csv")
    show([{k: v for k, v in r.items() if k != "lp_seconds_per_setting"} for r in rows])


def show(rows: list[dict]) -> None:
    """Print the rows as an aligned table."""
    cols = list(dict.fromkeys(k for r in rows for k in r))
    cells = [cols] + [["" if r.get(c) is None else str(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cols))]
    for row in cells:
        print("  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)))


def write_csv(rows: list[dict], path: Path) -> None:
    """Write ``rows`` atomically (the solver layer's writer: an interrupted run leaves the old table whole)."""
    cols = list(dict.fromkeys(k for r in rows for k in r))
    with atomic_open(path, newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.5))
    for form, style in zip(FORMS, ("-", "--"), strict=True):
        sel = [r for r in rows if r["form"] == form]
        for mode, label in (("default", "default command"), ("shards", "--shards N"), ("cluster", "LocalCluster")):
            users = [r["users"] for r in sel if r.get(f"{mode}_seconds") not in (None, "")]
            a.loglog(
                users, [r[f"{mode}_seconds"] for r in sel if r["users"] in users], "o" + style, label=f"{label}, {form}"
            )
            b.loglog(
                users,
                [r[f"{mode}_memory_mb"] for r in sel if r["users"] in users],
                "o" + style,
                label=f"{label}, {form}",
            )
    lp = [r for r in rows if r["form"] == FORMS[0] and r.get("lp_process_seconds") not in (None, "")]
    a.loglog([r["users"] for r in lp], [r["lp_process_seconds"] for r in lp], "k^:", label="plain LP process")
    a.set(xlabel="users (20 arms, C = 10, D = 1000)", ylabel="seconds (whole process)")
    b.set(xlabel="users", ylabel="peak memory, all processes (MB)")
    for ax in (a, b):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def scale_table(sizes: list[int], tmp: Path, out: Path, keep: bool = False) -> None:
    """Table 1 and its plot: at every size, both forms, the default command, ``--shards N`` here and on a
    LocalCluster of 2 worker processes, and up to 10^6 users the plain LP process; every command of a size
    runs in turn, ``REPEATS`` times up to 10^6 users (median seconds, largest peak memory), once above.
    With ``keep``, the rows of other sizes already in the output table stay (a size run again on its own)."""
    import distributed

    old = out / "decompose_scale.csv"
    rows = [_typed(r) for r in _read(old) if int(r["users"]) not in sizes] if keep and old.exists() else []
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None, memory_limit="3GiB"
    ) as cluster:
        pids = [w.process.pid for w in cluster.workers.values()]
        for N in sizes:
            paths = {form: tmp / f"graph_{N}_{form}.parquet" for form in FORMS}
            lp_value = write_graph(paths["batched"], N, 20)
            write_graph(paths["weighted"], N, 20, weighted=True)
            setting = lp_setting_for(N, 20)
            runs: dict = {}
            for _ in range(REPEATS if N <= 10**6 else 1):
                for form, path in paths.items():
                    for mode in ("default", "shards", "cluster"):
                        target = tmp / ("out.parquet" if mode == "default" else "out")
                        cmd = command(
                            path, target, N, "LocalCluster" if mode == "cluster" else mode, cluster.scheduler_address
                        )
                        runs.setdefault((form, mode), []).append(
                            run_command(cmd, target, pids if mode == "cluster" else [])
                        )
                if N <= 10**6:  # the same LP for both forms (an edge table's weights are its D / |A_i|)
                    seconds, peak, _ = timed_process(
                        [sys.executable, __file__, "--lp-process", str(paths["batched"]), setting], []
                    )
                    runs.setdefault("lp", []).append({"seconds": seconds, "peak": peak})
            for form in FORMS:
                rows.append(scale_cells(N, form, runs, lp_value, setting))
                print(json.dumps(rows[-1]), flush=True)
                rows.sort(key=lambda r: (r["users"], FORMS.index(r["form"])))
                write_csv(rows, out / "decompose_scale.csv")
            for path in paths.values():
                path.unlink()
    show(rows)
    plot(rows, out / "decompose_scale.png")


def scale_cells(N: int, form: str, runs: dict, lp_value: float | None, setting: str) -> dict:
    """One row of table 1 from the runs of one size: median seconds and largest peak of every command."""
    row: dict = {"users": N, "arms": 20, "C": C, "form": form, "runs": len(runs[form, "default"])}
    for mode in ("default", "shards", "cluster"):
        done = runs[form, mode]
        row[f"{mode}_seconds"] = round(float(np.median([r["seconds"] for r in done])), 2)
        row[f"{mode}_memory_mb"] = round(max(r["peak"] for r in done) / 2**20)
    first = runs[form, "default"][0]
    row.update(
        default_method=first["method"],
        shards=int(shards_for(N)[1]),
        R=first["R"],
        R_shards=runs[form, "shards"][0]["R"],
        lower_bound=first["lower_bound"],
        lp_value=lp_value,
        output_bytes=first["output_bytes"],
        ratio_default_shards=round(row["default_seconds"] / row["shards_seconds"], 3),
    )
    if "lp" in runs:
        lp = float(np.median([r["seconds"] for r in runs["lp"]]))
        row.update(
            lp_process_seconds=round(lp, 2),
            lp_process_memory_mb=round(max(r["peak"] for r in runs["lp"]) / 2**20),
            lp_setting=setting,
            ratio_default_lp=round(row["default_seconds"] / lp, 4),
        )
    return row


def _power(n: int) -> str:
    e = int(round(np.log10(n)))
    return f"10^{e}" if 10**e == n else str(n)


def _seconds(x: float) -> str:
    return f"{1000 * x:.3g} ms" if x < 1 else f"{x:.3g} s"


def _bytes(b: float) -> str:
    for unit, size in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{int(b)} B"


def _cell(row: dict, mode: str) -> str:
    """Seconds and peak memory of one command of a table 1 row."""
    return f"{float(row[mode + '_seconds']):.3g} s, {_bytes(float(row[mode + '_memory_mb']) * 2**20)}"


def _ratio(x: float, target: float) -> str:
    return f"{x:.3f}" if x <= target else f"**{x:.3f}** (missed)"


def _typed(row: dict) -> dict:
    """A row read back from a CSV with its numbers as numbers (empty cells as None)."""

    def value(v: str):
        for kind in (int, float):
            try:
                return kind(v)
            except ValueError:
                pass
        return v if v else None

    return {k: value(v) for k, v in row.items()}


def _read(path: Path) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def docs_tables(out: Path) -> dict[str, str]:
    """The two Markdown tables of docs/decompositions.md ("At platform scale"), from the CSVs in ``out``."""
    tables = {}
    rows = _read(out / "decompose_scale.csv")
    lines = [
        "| users x 20 arms | table | default command: seconds, peak memory (path) | `--shards N`: seconds, "
        "peak memory | default / `--shards N` | LocalCluster: seconds, peak memory (all processes) | plain LP "
        "process (setting) | default / plain LP | R / LB | output |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        path = "sharded" if r["default_method"].startswith("sharded") else f"dense: {r['default_method']}"
        lp = (
            ["(not run)", ""]
            if not r.get("lp_process_seconds")
            else [f"{float(r['lp_process_seconds']):.3g} s ({r['lp_setting']})", f"{float(r['ratio_default_lp']):.3f}"]
        )
        lines.append(
            f"| {_power(int(r['users']))} | {r['form']} | {_cell(r, 'default')} ({path}) | "
            f"{_cell(r, 'shards')} (N = {r['shards']}) | {float(r['ratio_default_shards']):.2f} | "
            f"{_cell(r, 'cluster')} | {lp[0]} | "
            f"{lp[1]} | {r['R']} / {r['lower_bound']} | {_bytes(float(r['output_bytes']))} |"
        )
    tables["decompose_scale.csv"] = "\n".join(lines)
    rows = _read(out / "decompose_scale_lp.csv")
    lines = [
        "| users x arms | decomposition (shard rule) | plain LP (fastest HiGHS setting) | ratio (target <= 0.2) | "
        "R / LB | default command: batched, weighted table | LP process | ratios (target <= 0.5) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        whole = (
            ["", "", ""]
            if not r.get("cli_seconds")
            else [
                f"{float(r['cli_seconds']):.3g} s, {float(r['cli_weighted_seconds']):.3g} s",
                f"{float(r['lp_process_seconds']):.3g} s",
                f"{_ratio(float(r['ratio_whole_process']), 0.5)}, "
                f"{_ratio(float(r['ratio_whole_process_weighted']), 0.5)}",
            ]
        )
        lines.append(
            f"| {_power(int(r['users']))} x {r['arms']} | {_seconds(float(r['decompose_seconds']))} "
            f"({r['shard_method']}) | {_seconds(float(r['lp_seconds']))} ({r['lp_setting']}) | "
            f"{_ratio(float(r['ratio_in_process']), 0.2)} | {r['R']} / {r['lower_bound']} | " + " | ".join(whole) + " |"
        )
    tables["decompose_scale_lp.csv"] = "\n".join(lines)
    return tables


def write_docs(out: Path) -> None:
    """Replace the tables between ``<!-- NAME -->`` and ``<!-- /NAME -->`` in docs/decompositions.md."""
    doc = out.parent / "decompositions.md"
    text = doc.read_text(encoding="utf-8")
    for name, table in docs_tables(out).items():
        head, rest = text.split(f"<!-- {name} -->\n", 1)
        text = f"{head}<!-- {name} -->\n{table}\n<!-- /{name} -->" + rest.split(f"<!-- /{name} -->", 1)[1]
    doc.write_text(text, encoding="utf-8")
    print(f"wrote the tables of {doc}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--out", help="output directory (default docs/results/, build/benchmarks/ with --quick)")
    parser.add_argument("--max-users", type=int, default=None, help="largest size of the scale table")
    parser.add_argument("--tables", default="scale,lp", help="which tables to run (default scale,lp)")
    parser.add_argument(
        "--sizes",
        default=None,
        help="comma-separated users of the scale table to run (the rows of other sizes already in "
        "its CSV stay); default every power of 10 up to --max-users",
    )
    parser.add_argument(
        "--docs-only",
        action="store_true",
        help="only rewrite the tables of docs/decompositions.md from the committed CSVs",
    )
    parser.add_argument("--lp-process", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.lp_process:
        lp_process(*args.lp_process)
        return
    out = Path(args.out) if args.out else results_dir(args.quick)
    if args.docs_only:
        write_docs(results_dir(False))
        return
    top = args.max_users or (10**4 if args.quick else 10**7)
    sizes = (
        [int(float(n)) for n in args.sizes.split(",")]
        if args.sizes
        else [n for n in (10**3, 10**4, 10**5, 10**6, 10**7, 10**8) if n <= top]
    )
    lp_cells = (
        [(10**3, 10), (10**3, 50), (10**4, 20)]
        if args.quick
        else [(n, k) for n in (10**3, 10**4, 10**5, 10**6) for k in (10, 20, 50)]
    )
    with tempfile.TemporaryDirectory() as tmp_name:
        if "scale" in args.tables:
            scale_table(sizes, Path(tmp_name), out, keep=args.sizes is not None)
        if "lp" in args.tables:
            lp_table(lp_cells, Path(tmp_name), out)
    if not args.quick and not args.out:
        write_docs(out)


if __name__ == "__main__":
    main()
