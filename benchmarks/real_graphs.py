"""The ``real`` family: certified decompositions of real logs at real thresholds (issue 20).

Graphs (:mod:`anondecomp.bench.real`, sizes and seeds in ``anondecomp.bench.suite.REAL_C`` and
``REAL_SYNTHETIC``):

* the Open Bandit Dataset sample (Saito et al., NeurIPS 2021 Datasets and Benchmarks): user type x item,
  weight = impressions, ``random`` and ``bts`` logs of campaign ``all`` pooled, items wanted by >= C+1 types,
  at C = 3, 10, 20, 50. The data is not redistributed: this script fetches the ``obp`` source archive with
  ``pip download --no-deps --no-binary :all: --ignore-requires-python obp==0.5.7`` into build/obd/ (once);
* synthetic logs with OBD's fitted power laws, unit weights.

Each graph is written as a Parquet edge table and solved by the command a user types,
``anonbandits decompose GRAPH --C C --certify --time-limit 50 -o OUT.json``, in its own process under
``/usr/bin/time -v`` (wall time and peak memory of the whole process). The table
(docs/results/real_graphs.csv) holds R, the trivial bound max_i sum_j ceil(w_ij), the certified bound and
how it was obtained, the certified gap R / ceil(bound) - 1, seconds and peak MB (``status``: ``ok``, ``time
limit`` when the bound's column generation was cut by the time limit, or ``killed`` after ``PROCESS_LIMIT``
seconds, the whole process group); the plot
(real_graphs.png) shows the gaps against the 5 % target.

Usage: python benchmarks/real_graphs.py [--quick] [--out DIR] [--write-graphs DIR]
(``--write-graphs`` only writes the graphs: the recipe for using OBD elsewhere.)
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _output import ROOT, results_dir

from anondecomp.bench import real, suite
from anondecomp.io import atomic_open

OBP_VERSION = "0.5.7"
TIME_LIMIT = 50.0  # seconds for --certify (the whole process must stay within 60 s)
TARGET_GAP = 0.05
PROCESS_LIMIT = 300.0  # seconds after which a run is killed and recorded as unfinished
COLUMNS = (
    "graph",
    "users",
    "arms",
    "C",
    "edges",
    "status",
    "method",
    "R",
    "trivial_bound",
    "certified_bound",
    "how",
    "gap",
    "seconds",
    "peak_mb",
    "verified",
)


def obd_archive() -> Path:
    """The ``obp`` source archive in build/obd/, downloaded with pip on first use."""
    folder = ROOT / "build" / "obd"
    archive = folder / f"obp-{OBP_VERSION}.tar.gz"
    if not archive.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-binary",
                ":all:",
                "--ignore-requires-python",
                f"obp=={OBP_VERSION}",
                "-d",
                str(folder),
            ],
            check=True,
        )
    return archive


def solve(path: Path, C: int, out: Path) -> dict:
    """Run the user's command on one graph; its summary fields, seconds and peak MB."""
    cli = Path(sys.executable).with_name("anonbandits")
    cmd = [
        "/usr/bin/time",
        "-v",
        str(cli),
        "decompose",
        str(path),
        "--C",
        str(C),
        "--certify",
        "--time-limit",
        str(TIME_LIMIT),
        "-o",
        str(out),
    ]
    start = time.perf_counter()
    # its own session, so that a timeout kills the whole process group (the CLI under /usr/bin/time too)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        text, err = proc.communicate(timeout=PROCESS_LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"status": f"killed after {PROCESS_LIMIT:.0f} s", "seconds": PROCESS_LIMIT}
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err.strip().splitlines()[-1]}")
    bound = re.search(r"LP lower bound\s+([\d.]+)\s+\(certified; (.*)\)", text)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    verify = subprocess.run([str(cli), "verify", str(path), str(out), "--C", str(C)], capture_output=True)
    # a bound cut by the time limit is still certified, but the status says the run was cut
    status = "time limit" if bound.group(2).startswith("time limit") else "ok"
    return {
        "status": status,
        "method": re.search(r"^method\s+(\S+)", text, re.M).group(1),
        "R": int(re.search(r"^R \(assignments\)\s+(\d+)", text, re.M).group(1)),
        "certified_bound": float(bound.group(1)),
        "how": bound.group(2),
        "seconds": round(seconds, 2),
        "peak_mb": round(int(peak.group(1)) / 1024, 1) if peak else "",
        "verified": verify.returncode == 0,
    }


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in rows if r.get("R") not in (None, "")]
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(rows) + 1.5))
    labels = [f"{r['graph']} C={r['C']}" for r in rows]
    gaps = [100 * float(r["gap"]) for r in rows]
    ax.barh(labels, gaps, color=["tab:green" if g <= 100 * TARGET_GAP else "tab:red" for g in gaps])
    ax.axvline(100 * TARGET_GAP, color="k", ls="--", lw=1, label="5 % target")
    ax.invert_yaxis()
    ax.set_xlabel("certified gap R / ceil(certified bound) - 1 (%)")
    ax.set_title("decompose --certify on real and log-shaped graphs")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the two smallest synthetic graphs (a smoke run)")
    parser.add_argument("--out", help="output directory (default docs/results/, build/benchmarks/ with --quick)")
    parser.add_argument("--write-graphs", metavar="DIR", help="only write the OBD graphs as Parquet tables here")
    args = parser.parse_args()
    if args.write_graphs:
        folder = Path(args.write_graphs)
        folder.mkdir(parents=True, exist_ok=True)
        for C in suite.REAL_C:
            real.write_edge_table(real.obd_graph(obd_archive(), C), folder / f"obd_C{C}.parquet", C)
            print(folder / f"obd_C{C}.parquet")
        return
    if not Path("/usr/bin/time").exists():
        sys.exit("real_graphs.py measures each process with /usr/bin/time -v: install it (apt-get install time)")
    out = Path(args.out) if args.out else results_dir(args.quick)
    out.mkdir(parents=True, exist_ok=True)
    cases = suite.real_cases(None if args.quick else str(obd_archive()))
    if args.quick:
        cases = [c for c in cases if c.label.startswith("power-law N=1000 ")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            inst = case.make()
            g = inst.graph
            path = Path(tmp) / "graph.parquet"
            real.write_edge_table(g, path, inst.C)
            row = {
                "graph": case.label.replace(f" C={inst.C}", ""),
                "users": g.n_users,
                "arms": g.n_arms,
                "C": inst.C,
                "edges": g.nnz,
                "trivial_bound": g.lower_bound,
                **solve(path, inst.C, Path(tmp) / "out.json"),
            }
            if "R" in row:
                row["gap"] = round(row["R"] / max(int(-(-row["certified_bound"] // 1)), 1) - 1, 4)
            rows.append(row)
            print(", ".join(f"{k}={row.get(k, '')}" for k in COLUMNS), flush=True)
    with atomic_open(out / "real_graphs.csv", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, restval="")
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, out / "real_graphs.png")
    print(f"wrote {out / 'real_graphs.csv'} and {out / 'real_graphs.png'}")


if __name__ == "__main__":
    main()
