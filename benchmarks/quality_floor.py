"""The quality floor: R of the default command and of --certify on every benchmark graph (later code: no higher).

A table that later code must not fall below in quality (R no higher, certified bound no lower, same graphs).

Measures, on every graph of the ``real`` family (the Open Bandit Dataset sample at every C of
``anondecomp.bench.suite.REAL_C`` and the synthetic logs of ``REAL_SYNTHETIC``) and of the solver benchmark
suite (``anondecomp.bench.suite.cases``, ``--suite full`` by default, ``quick`` on request), each graph
written as a Parquet edge table (:func:`anondecomp.bench.real.write_edge_table`) and solved by the commands a
user types, each a fresh process, timed (wall seconds):

* ``default``: ``anonbandits decompose G.parquet --C C`` (the CLI may route a large batched graph to its
  sharded path, so this is what the command gives, not ``anondecomp.decompose(g, C)``): method, ``R
  (assignments)`` and the trivial ``lower bound`` max_i sum_j ceil(w_ij) it prints;
* ``certify``: the same with ``--certify``: method, R, the ``LP lower bound`` and how it was certified (the
  text after ``certified;``).

The committed floor, docs/results/quality_floor.csv, was measured against the code of commit 0cf86d8 (the dense
solver layer, before the sparse rewrite): run it with that commit's ``anonbandits`` (a worktree of 0cf86d8 and a
venv with it installed). Run it against newer code with ``--out`` to another path and compare row by row (the
``graph`` column names the graph stably; ``code`` says which code was measured). Graphs are built by the
Python beside ANONBANDITS (the measured code's own generators, in a fresh process per graph); ``--graphs DIR``
keeps them, and a later run given the same DIR reuses those files, so both runs solve the very same tables.

No ``--time-limit`` is given to either command unless ``--time-limit`` is passed here (for ``--certify`` of the
graphs matching ``--limit-graphs``); the ``how`` column then ends with ``[--time-limit S]``. A command still
running after ``--process-limit`` seconds, or whose process group holds more than ``--memory-limit`` GiB (the
machine is shared), is killed, and its method column says so (no R). With ``--only``, the other graphs' rows
already in the output are kept, so one graph can be measured again.

Usage: python benchmarks/quality_floor.py ANONBANDITS OBP_ARCHIVE [--suite full|quick] [--out CSV]
       [--graphs DIR] [--only REGEX] [--time-limit S [--limit-graphs REGEX]] [--process-limit S]
       [--memory-limit GIB] [--code LABEL]
(OBP_ARCHIVE: ``pip download --no-deps --no-binary :all: --ignore-requires-python obp==0.5.7``.)

The committed table: the full suite and the real family, 96 graphs, on the shared 2-core machine (seconds are
indicative), with ``--time-limit 300 --limit-graphs "power-law N=3000 items=1000 C=50" --process-limit 1800``:
that graph's ``--certify`` runs past 5 minutes without a limit, and its default command grew past 12 GiB in 10
minutes and was killed (a first run had it at 17 GiB after 17 minutes). Re-measure one graph with ``--only``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _output import results_dir

COLUMNS = (
    "family",
    "graph",
    "users",
    "arms",
    "C",
    "seed",
    "lower_bound",
    "default_method",
    "default_R",
    "default_seconds",
    "certify_method",
    "certify_R",
    "certified_bound",
    "how",
    "certify_seconds",
    "code",
)
SUITES = ("full", "quick")
PROCESS_LIMIT = 3600.0  # seconds after which a command is killed (with its process group) and recorded as such
MEMORY_LIMIT = 12.0  # GiB resident (the process group) above which a command is killed: half of this machine
MEMORY_POLL = 2.0  # seconds between looks at a command's memory
SEED_RULE = {"abundant": "N", "niche-groups": "K", "alg1-synth": "N"}
"""Seed of the suite's graphs whose label names none: the parameter of the label it equals (in
``anondecomp.bench.suite.cases``: ``abundant(..., seed=N)``, ``niche_groups(..., seed=K)``,
``alg1_synth(N, K, C, 300, N, b)``); the other labels say ``seed=``, and OBD is data (no seed)."""


# ---- the worker: run by the Python beside ANONBANDITS, so graphs come from the measured code -------------------


def _cases(suite_name: str, archive: str) -> list:
    from anondecomp.bench import suite

    return suite.real_cases(archive) + suite.cases(suite_name)


def _graph_name(case, graph) -> str:
    """The label; the suite's graphs also name their demand D (the quick and full suites share labels of
    graphs that differ only in D)."""
    if case.family == "real":
        return case.label
    return f"{case.label} D={float(graph.normalized()[1]):g}"


def _seed(family: str, label: str) -> str:
    found = re.search(r"\bseed=(\d+)", label)
    if found:
        return found.group(1)
    if family in SEED_RULE:
        return re.search(rf"\b{SEED_RULE[family]}=(\d+)", label).group(1)
    return ""


def worker_list(suite_name: str, archive: str) -> None:
    """Print the cases as JSON: [[family, label], ...], and where anondecomp was imported from."""
    import anondecomp

    print(
        json.dumps(
            {"cases": [[c.family, c.label] for c in _cases(suite_name, archive)], "anondecomp": anondecomp.__file__}
        )
    )


def worker_write(suite_name: str, archive: str, index: int, path: str) -> None:
    """Build case ``index``, write it as a Parquet edge table at ``path`` and print its metadata as JSON."""
    from anondecomp.bench import real

    case = _cases(suite_name, archive)[index]
    inst = case.make()
    g = inst.graph
    real.write_edge_table(g, path, inst.C)
    print(
        json.dumps(
            {
                "family": case.family,
                "graph": _graph_name(case, g),
                "users": g.n_users,
                "arms": g.n_arms,
                "C": inst.C,
                "seed": _seed(case.family, case.label),
            }
        )
    )


# ---- the driver ------------------------------------------------------------------------------------------------


def python_of(anonbandits: Path) -> str:
    """The Python of the environment ANONBANDITS belongs to (a venv's ``bin/``), else this one."""
    candidate = anonbandits.with_name("python")
    return str(candidate) if candidate.exists() else sys.executable


def code_label(package_file: str) -> str:
    """Short commit of the checkout holding the measured anondecomp, ``+dirty`` if its code differs from it."""
    where = Path(package_file).parent
    try:
        head = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        # --no-optional-locks: a read-only look, even at a checkout someone is working in
        dirty = subprocess.run(
            [
                "git",
                "--no-optional-locks",
                "-C",
                str(where),
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ":/solvers",
                ":/src",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def group_rss(pgid: int) -> int:
    """Resident bytes of the processes of process group ``pgid`` (Linux /proc; 0 elsewhere)."""
    total, page = 0, os.sysconf("SC_PAGE_SIZE")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after the command name: state, ppid, pgrp, ...
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid:
            total += int(fields[21]) * page  # field 24 of stat, rss in pages
    return total


def timed(cmd: list[str], limit: float, memory_limit: float | None) -> tuple[float, int | str, str, str]:
    """(wall seconds, exit code, stdout, stderr) of one process; instead of the exit code, why it was killed
    (after ``limit`` seconds, or above ``memory_limit`` resident bytes of its process group)."""
    start = time.perf_counter()
    # its own session, so that a kill takes the whole process group
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    while True:
        try:
            out, err = proc.communicate(timeout=min(MEMORY_POLL, max(start + limit - time.perf_counter(), 0.01)))
            return time.perf_counter() - start, proc.returncode, out, err
        except subprocess.TimeoutExpired:
            rss = group_rss(proc.pid) if memory_limit else 0
            if memory_limit and rss > memory_limit:
                why = f"killed at {rss / 2**30:.1f} GiB resident"
            elif time.perf_counter() - start >= limit:
                why = f"killed after {limit:g} s"
            else:
                continue
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return time.perf_counter() - start, why, out, err


def field(text: str, name: str) -> str:
    """The first word after ``name`` on the line of ``text`` starting with it."""
    return next(line[len(name) :].split()[0] for line in text.splitlines() if line.startswith(name))


def solve(
    anonbandits: Path,
    path: Path,
    C: int,
    certify: bool,
    time_limit: float | None,
    process_limit: float,
    memory_limit: float | None,
) -> dict:
    """One command on one graph; its fields (prefix ``default_`` or ``certify_``) and seconds."""
    mode = "certify" if certify else "default"
    cmd = [str(anonbandits), "decompose", str(path), "--C", str(C)]
    if certify:
        cmd.append("--certify")
        if time_limit is not None:
            cmd += ["--time-limit", str(time_limit)]
    seconds, code, out, err = timed(cmd, process_limit, memory_limit)
    row = {f"{mode}_seconds": round(seconds, 2)}
    if isinstance(code, str):
        return {**row, f"{mode}_method": code}
    if code != 0:
        last = (err.strip().splitlines() or ["(no message)"])[-1]
        return {**row, f"{mode}_method": f"error {code}: {last}"}
    row.update(
        {
            f"{mode}_method": re.search(r"^method\s+(.+?)\s*$", out, re.M).group(1),
            f"{mode}_R": int(field(out, "R (assignments)")),
            "lower_bound": int(field(out, "lower bound")),
        }
    )
    if certify:
        bound = re.search(r"^LP lower bound\s+([\d.]+)\s+\(certified; (.*)\)\s*$", out, re.M)
        row.update(
            certified_bound=float(bound.group(1)),
            how=bound.group(2) + ("" if time_limit is None else f" [--time-limit {time_limit:g}]"),
        )
    return row


def write_csv(rows: list[dict], path: Path) -> None:
    """Write the table atomically (a temporary file beside it, then renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", newline="", dir=path.parent, prefix=f".{path.name}.", delete=False) as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, restval="")
        writer.writeheader()
        writer.writerows(rows)
    os.replace(fh.name, path)


def merge(kept: list[dict], rows: list[dict]) -> list[dict]:
    """``kept`` (rows read back from OUT) with the rows of the same (family, graph) replaced by ``rows``, in
    their place; the rows of graphs not in ``kept`` at the end."""
    new = {(r["family"], r["graph"]): r for r in rows}
    merged = [new.pop((r["family"], r["graph"]), r) for r in kept]
    return merged + list(new.values())


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9.=-]+", "_", name).strip("_")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("anonbandits", type=Path, help="the anonbandits executable of the code to measure")
    parser.add_argument("obp_archive", type=Path, help="the obp 0.5.7 source archive (.tar.gz) holding OBD")
    parser.add_argument("--suite", choices=SUITES, default="full", help="solver suite besides the real family")
    parser.add_argument("--out", type=Path, help="output CSV (default docs/results/quality_floor.csv)")
    parser.add_argument("--graphs", type=Path, help="keep the graphs here; graphs already there are reused")
    parser.add_argument("--only", help="only the graphs whose 'family graph' matches this regular expression")
    parser.add_argument("--time-limit", type=float, help="--time-limit for --certify (see --limit-graphs)")
    parser.add_argument(
        "--limit-graphs",
        default="",
        help="regular expression of the graphs ('family graph') that get --time-limit (default: all)",
    )
    parser.add_argument("--process-limit", type=float, default=PROCESS_LIMIT, help="seconds before a kill")
    parser.add_argument("--memory-limit", type=float, default=MEMORY_LIMIT, help="GiB resident before a kill (0: none)")
    parser.add_argument("--code", help="the code column (default: the measured checkout's short commit)")
    parser.add_argument("--worker-list", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--worker-write", nargs=2, metavar=("INDEX", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker_list:
        return worker_list(args.suite, str(args.obp_archive))
    if args.worker_write:
        return worker_write(args.suite, str(args.obp_archive), int(args.worker_write[0]), args.worker_write[1])

    anonbandits, archive = args.anonbandits.absolute(), args.obp_archive.absolute()
    if not archive.exists():
        sys.exit(
            f"{archive}: no such archive (pip download --no-deps --no-binary :all: --ignore-requires-python obp==0.5.7)"
        )
    python = python_of(anonbandits)
    worker = [python, str(Path(__file__).resolve()), str(anonbandits), str(archive), "--suite", args.suite]
    listing = json.loads(subprocess.run(worker + ["--worker-list"], capture_output=True, text=True, check=True).stdout)
    code = args.code or code_label(listing["anondecomp"])
    print(
        f"measuring {anonbandits} (anondecomp {listing['anondecomp']}, code {code}); graphs built by {python}",
        flush=True,
    )
    out = args.out or results_dir(False) / "quality_floor.csv"
    memory = args.memory_limit * 2**30 if args.memory_limit else None
    # with --only, the rows of the other graphs already in OUT are kept (a graph measured again replaces its row)
    kept = []
    if args.only and out.exists():
        with open(out, newline="") as fh:
            kept = list(csv.DictReader(fh))
    rows: list[dict] = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.graphs or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for index, (family, label) in enumerate(listing["cases"]):
            if args.only and not re.search(args.only, f"{family} {label}"):
                continue
            # the suites share labels of different graphs (see _graph_name); the real family is in both
            base = folder / slug(f"{family} {label}" if family == "real" else f"{args.suite} {family} {label}")
            path, meta_path = base.with_name(base.name + ".parquet"), base.with_name(base.name + ".json")
            if path.exists() and meta_path.exists():
                meta = json.loads(meta_path.read_text())
            else:
                made = subprocess.run(
                    worker + ["--worker-write", str(index), str(path)], capture_output=True, text=True, check=True
                )
                meta = json.loads(made.stdout)
                meta_path.write_text(json.dumps(meta))
            limited = args.time_limit is not None and re.search(args.limit_graphs, f"{family} {meta['graph']}")
            default = solve(anonbandits, path, meta["C"], False, None, args.process_limit, memory)
            certify = solve(
                anonbandits, path, meta["C"], True, args.time_limit if limited else None, args.process_limit, memory
            )
            # both print the trivial lower bound: the default command's, or --certify's if the former failed
            row = {**meta, "code": code, **certify, **default}
            rows.append(row)
            print(", ".join(f"{k}={row.get(k, '')}" for k in COLUMNS), flush=True)
            write_csv(merge(kept, rows), out)  # after every graph: an interrupted run keeps what it measured
    print(f"{len(rows)} graphs in {time.perf_counter() - start:.0f} s; wrote {out}")


if __name__ == "__main__":
    main()
