"""``anonbandits simulate``: run any registered algorithm over seeds, or a whole grid file.

Two ways in:

* ``anonbandits simulate --algorithm NAME [--PARAM VALUE ...] --seeds 10 --out r.csv --plot r.png``; the
  parameters are the algorithm's own (``anonbandits simulate --algorithm NAME --help`` lists them with
  their defaults).
* ``anonbandits simulate --config grid.toml --out r.csv`` (see :mod:`anonbandits.experiments.grid`).

Runs go to local worker processes by default, or to a Dask cluster with ``--scheduler tcp://HOST:PORT``.
"""

from __future__ import annotations

import argparse
import sys

from anonbandits import registry
from anonbandits.errors import ConfigError
from anonbandits.experiments import load_grid, plot_curves, run_tasks, tasks_from_grid, write_table
from anonbandits.experiments.grid import Task, seed_list


def add_parser(sub) -> None:
    p = sub.add_parser("simulate", help="simulate bandit algorithms over seeds; write a table and a plot",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                       add_help=False)
    p.add_argument("-h", "--help", action="store_true", help="show this help (with --algorithm: its parameters)")
    p.add_argument("--algorithm", help="registered algorithm name")
    p.add_argument("--config", help="grid file (TOML or JSON) instead of --algorithm")
    p.add_argument("--seeds", type=int, default=10, help="number of seeds, 0..n-1 (default 10)")
    p.add_argument("--seed-offset", type=int, default=0, help="first seed (default 0)")
    p.add_argument("--out", help="results table (CSV; .jsonl for JSON lines)")
    p.add_argument("--plot", help="PNG of the mean curve with a 95%% band over seeds")
    p.add_argument("--workers", type=int, default=None, help="local worker processes (default: all cores)")
    p.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://127.0.0.1:8786")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=run, accepts_extra=True, parser=p)


def _algorithm_parser(spec: registry.AlgorithmSpec) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"anonbandits simulate --algorithm {spec.name}", description=spec.summary,
                                add_help=False)
    for param in spec.params:
        p.add_argument(f"--{param.name.replace('_', '-')}", dest=param.name, type=param.type,
                       default=param.default, choices=param.choices,
                       help=f"{param.help} (default: {param.default})")
    return p


def _print_algorithms() -> None:
    print("algorithms:")
    for name, spec in sorted(registry.all_algorithms().items()):
        print(f"  {name:28s} {spec.summary}")


def run(args: argparse.Namespace) -> int:
    if args.help:
        args.parser.print_help()
        if args.algorithm:
            print()
            _algorithm_parser(registry.get(args.algorithm)).print_help()
        else:
            print()
            _print_algorithms()
        return 0
    if bool(args.algorithm) == bool(args.config):
        raise ConfigError("give exactly one of --algorithm NAME or --config GRID")
    if args.config:
        if args.extra:
            raise ConfigError(f"unrecognized arguments with --config: {' '.join(args.extra)}")
        grid = load_grid(args.config)
        grid.setdefault("seeds", args.seeds)
        tasks = tasks_from_grid(grid)
    else:
        spec = registry.get(args.algorithm)
        ns, rest = _algorithm_parser(spec).parse_known_args(args.extra)
        if rest:
            raise ConfigError(f"unrecognized arguments for {spec.name}: {' '.join(rest)}")
        params = spec.resolve(vars(ns))
        tasks = [Task(spec.name, params, s) for s in seed_list(args.seeds, args.seed_offset)]

    results = run_tasks(tasks, workers=args.workers, scheduler=args.scheduler, progress=not args.no_progress)
    rows = [r.row for r in results]
    if args.out:
        write_table(rows, args.out)
    if args.plot:
        spec = registry.get(tasks[0].algorithm)
        plot_curves(results, args.plot, xlabel=spec.curve_axes[0], ylabel=spec.curve_axes[1])
    _summarise(rows, sys.stdout)
    return 0


def _summarise(rows, out) -> None:
    """Mean of each numeric metric per algorithm label, so a run without --out still says something."""
    import numpy as np

    by_alg: dict[str, list[dict]] = {}
    for row in rows:
        by_alg.setdefault(row["algorithm"], []).append(row)
    for alg, group in by_alg.items():
        keys = [k for k in ("regret", "samples", "correct", "observations", "wall_time") if k in group[0]]
        parts = [f"{k}={np.mean([float(g[k]) for g in group]):.4g}" for k in keys]
        print(f"{alg}: {len(group)} runs, mean " + ", ".join(parts), file=out)
