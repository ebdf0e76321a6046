"""Time of a new process's first call: the import and the first ``simulate`` of every algorithm.

Two targets (issue "A fast first call", docs/architecture.md):

* ``import anonbandits; anonbandits.simulate("se", seed=0)`` within 1.0 s beyond ``import numpy``, with warm
  caches (the bytecode and numba caches filled by one run before the timed ones);
* the first ``simulate(name, seed=0)`` of every registered algorithm at its default parameters within 10 s
  with an empty numba cache (``NUMBA_CACHE_DIR`` a fresh temporary directory): numba compiles every kernel the
  call needs. The algorithms are those of ``registry.all_algorithms()``, so one added later is measured too.

Each measurement is a fresh interpreter; the times are taken inside it (from before ``import numpy`` to the
return of ``simulate``; the interpreter's own start-up is left out) and the median of the repetitions is
reported (3, or 1 with ``--quick``). The per-algorithm rows also give the warm time: the same call again with
the cache the cold run filled. Writes docs/results/first_call.csv (build/benchmarks/ with --quick).

    .venv/bin/python benchmarks/first_call.py [--quick] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from _output import results_dir

from anonbandits.experiments import write_table
from anonbandits.registry import all_algorithms

IMPORT_TARGET = 1.0  # seconds beyond ``import numpy``
COLD_TARGET = 10.0  # seconds for the first call with an empty numba cache

# Run in the child: the clock starts before numpy, so that numpy's own import is measured apart.
# The CPU times (the process's, from its start) hardly depend on what else runs on the machine: on a busy
# one the wall times are several times longer.
CHILD = """
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
import numpy
t1, c1 = time.perf_counter(), time.process_time()
import anonbandits
t2 = time.perf_counter()
anonbandits.simulate(sys.argv[1], seed=0)
t3, c3 = time.perf_counter(), time.process_time()
print(json.dumps({"numpy": t1 - t0, "import": t2 - t1, "simulate": t3 - t2, "beyond_numpy": t3 - t1,
                  "total": t3 - t0, "cpu_beyond_numpy": c3 - c1, "cpu_total": c3,
                  "modules": len(sys.modules)}))
"""


def _run(name: str, cache_dir: str) -> dict[str, float]:
    """One fresh interpreter calling ``simulate(name, seed=0)`` with numba's cache in ``cache_dir``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, name], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"simulate({name!r}) failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repetition, written to build/benchmarks/")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these algorithms only (a quick check)")
    args = parser.parse_args(argv)
    out_dir = results_dir(args.quick or bool(args.only))
    repeat = 1 if args.quick else 3
    rows = []
    with tempfile.TemporaryDirectory(prefix="first-call-") as warm_cache:
        _run("se", warm_cache)  # fills the bytecode and numba caches
        runs = [_run("se", warm_cache) for _ in range(repeat)]
    beyond = _median(runs, "beyond_numpy")
    rows.append(
        {
            "case": "import + se, warm",
            "algorithm": "se",
            "numpy_s": _median(runs, "numpy"),
            "import_s": _median(runs, "import"),
            "simulate_s": _median(runs, "simulate"),
            "beyond_numpy_s": beyond,
            "cpu_beyond_numpy_s": _median(runs, "cpu_beyond_numpy"),
            "target_s": IMPORT_TARGET,
            "met": beyond <= IMPORT_TARGET,
            "modules": int(_median(runs, "modules")),
            "repeats": repeat,
        }
    )
    print(f"import anonbandits + simulate('se'), warm: {beyond:.2f} s beyond numpy (target {IMPORT_TARGET} s)")
    print(f"{'algorithm':28s} {'cold s':>8s} {'cold cpu':>8s} {'warm s':>8s} {'target':>7s}")
    names = args.only or list(all_algorithms())
    for name in names:
        cold, warm = [], []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory(prefix="first-call-") as cache:
                cold.append(_run(name, cache))  # an empty cache: every kernel compiles
                warm.append(_run(name, cache))
        cold_s, warm_s = _median(cold, "total"), _median(warm, "total")
        rows.append(
            {
                "case": "first simulate, cold numba cache",
                "algorithm": name,
                "numpy_s": _median(cold, "numpy"),
                "import_s": _median(cold, "import"),
                "simulate_s": _median(cold, "simulate"),
                "total_s": cold_s,
                "cpu_total_s": _median(cold, "cpu_total"),
                "warm_total_s": warm_s,
                "warm_cpu_total_s": _median(warm, "cpu_total"),
                "target_s": COLD_TARGET,
                "met": cold_s <= COLD_TARGET,
                "repeats": repeat,
            }
        )
        print(
            f"{name:28s} {cold_s:8.2f} {rows[-1]['cpu_total_s']:8.2f} {warm_s:8.2f} "
            f"{'ok' if cold_s <= COLD_TARGET else 'MISSED':>7s}",
            flush=True,
        )
    path = write_table(rows, out_dir / "first_call.csv")
    print(f"wrote {path}")
    return 0 if all(r["met"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
