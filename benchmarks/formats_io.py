"""Columnar formats at scale: reading graph tables, writing and verifying compact Parquet decompositions.

For each size (users x 20 arms, random batched graphs: every user wants 1 to 5 arms, D = 1000) one child
process per step measures wall time and peak memory (ru_maxrss of the child):

* ``read``: a batched Parquet table (``user``, ``arm`` rows, ids as strings ``u123``) into a DemandGraph;
* ``read_csv``: the same table as CSV;
* ``write``: the paper's greedy decomposition (fast at any size, K D rounds) as a compact Parquet schedule,
  with the file's size and rows, against the size of the JSON form (computed, not written, above 10^5 users);
* ``verify``: the streaming exact check of that file.

Usage: python benchmarks/formats_io.py [--quick] [--sizes 10000,100000,...]
A full run writes docs/results/formats_io.csv; ``--quick`` (10^4 and 10^5 users) writes build/benchmarks/.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _output import results_dir

ROOT = Path(__file__).resolve().parents[1]
ARMS, DEMAND, C = 20, 1000, 10


def make_table(n_users: int, path: Path, seed: int = 0) -> None:
    """A batched table: each user wants 1..5 distinct arms (every arm has about n/8 users, so C = 10 is
    feasible well above 100 users)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, size=n_users)
    # distinct arms per user: the first |A_i| of a random rotation of a fixed random permutation
    start = rng.integers(0, ARMS, size=n_users)
    user = np.repeat(np.arange(n_users), sizes)
    offset = np.arange(len(user)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    arm = (start[user] + offset) % ARMS
    names = pa.array(np.char.add("u", np.arange(n_users).astype(str)))
    table = pa.table({"user": names.take(pa.array(user)), "arm": pa.array(np.char.add("a", arm.astype(str)))})
    pq.write_table(
        table.replace_schema_metadata({"demand": json.dumps(DEMAND), "C": json.dumps(C)}), path / "g.parquet"
    )
    pacsv.write_csv(table, path / "g.csv")


def step(name: str, path: Path) -> dict:
    """Run one step in this (child) process and return its measurements."""
    import anondecomp
    from anondecomp import compact

    t0 = time.perf_counter()
    out: dict = {}
    if name == "read":
        graph, _ = anondecomp.read_graph(path / "g.parquet")
        out["pairs"] = int(graph.support.sum())
    elif name == "read_csv":
        anondecomp.read_graph(path / "g.csv", demand=DEMAND)
    elif name == "write":
        graph, _ = anondecomp.read_graph(path / "g.parquet")
        res = anondecomp.decompose(graph, C, "greedy")
        t0 = time.perf_counter()
        anondecomp.write_decomposition(res, path / "d.parquet")
        # JSON: every assignment names every user ('"u123": "a7", ' per user and assignment)
        per_user = np.char.str_len(np.array(graph.users)).mean() + 4 + 6
        out.update(
            rows=_rows(path),
            parquet_bytes=(path / "d.parquet").stat().st_size,
            json_bytes=int(res.n_distinct * graph.n_users * per_user),
            R=res.total_assignments,
        )
    elif name == "verify":
        graph, _ = anondecomp.read_graph(path / "g.parquet")
        t0 = time.perf_counter()
        report = compact.verify_compact(graph, C, path / "d.parquet")
        assert report.valid, report.summary()
        out["R"] = report.total_assignments
    out["seconds"] = round(time.perf_counter() - t0, 3)
    out["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def _rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return pq.ParquetFile(path / "d.parquet").metadata.num_rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--sizes", default=None, help="comma-separated user counts")
    p.add_argument("--step", default=None, help=argparse.SUPPRESS)
    p.add_argument("--dir", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.step:
        print(json.dumps(step(args.step, Path(args.dir))))
        return
    sizes = (
        [int(s) for s in args.sizes.split(",")]
        if args.sizes
        else ([10**4, 10**5] if args.quick else [10**4, 10**5, 10**6, 10**7])
    )
    out_dir = results_dir(args.quick)
    work = ROOT / "build" / "formats_io"
    rows = []
    for n in sizes:
        work.mkdir(parents=True, exist_ok=True)
        make_table(n, work)
        row = {"users": n, "arms": ARMS, "parquet_input_bytes": (work / "g.parquet").stat().st_size}
        for name in ("read", "read_csv", "write", "verify"):
            res = subprocess.run(
                [sys.executable, __file__, "--step", name, "--dir", str(work)],
                capture_output=True,
                text=True,
                check=True,
            )
            m = json.loads(res.stdout.strip().splitlines()[-1])
            row.update({f"{name}_s": m.pop("seconds"), f"{name}_peak_mb": m.pop("peak_mb"), **m})
        print(json.dumps(row), flush=True)
        rows.append(row)
    keys = list(dict.fromkeys(k for r in rows for k in r))
    lines = [",".join(keys)] + [",".join(str(r.get(k, "")) for k in keys) for r in rows]
    (out_dir / "formats_io.csv").write_text("\n".join(lines) + "\n")
    print(f"wrote {out_dir / 'formats_io.csv'}")


if __name__ == "__main__":
    main()
