"""``anonbandits simulate``: run any registered algorithm over seeds, or a whole grid file.

The command-line help (:data:`DESCRIPTION`) says how to use it; this module also checks every flag, grid
entry and output path before the first run, and turns Ctrl-C or SIGTERM into a saved partial table.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import signal
import sys
import warnings
from pathlib import Path
from typing import Any, NoReturn

from anonbandits import registry
from anonbandits.cli.options import Terminated, check_outputs, nonnegative_int, positive_int, stop_signals_ignored
from anonbandits.errors import AnonBanditsError, ConfigError
from anonbandits.experiments import count_runs, load_grid, plot_curves, tasks_from_grid, write_table
from anonbandits.experiments.grid import MAX_RUNS, MAX_SEEDS, Task, seed_list
from anonbandits.experiments.runner import RUN_ERRORS, TaskResult, collect
from anonbandits.experiments.table import TABLE_SUFFIXES, configuration_labels, read_resumable, run_key, task_key
from anonbandits.spec import AlgorithmSpec, DeprecatedParameterWarning
from anondecomp.errors import AnonDecompError

EXIT_USER_ERROR = 2

DESCRIPTION = """\
Run any registered algorithm over seeds, or a whole grid file.

  anonbandits simulate --algorithm NAME [--PARAM VALUE ...] --seeds 10 --out r.csv --plot r.png
  anonbandits simulate --config grid.toml --out r.csv

The parameters are the algorithm's own: 'anonbandits simulate --help --algorithm NAME' lists them with
their defaults. A grid file (TOML or JSON) lists runs; a list value expands into one run per value, and
every configuration runs once per seed (see examples/grid.toml). A grid of more than --max-runs runs
(default 1000000) is refused before anything runs; a larger --max-runs confirms a larger grid. A flag given
on the command line beats the grid file: --seeds N runs seeds offset..offset+N-1 whatever the file's 'seeds'
says, and --seed-offset replaces its 'seed_offset' (refused when the file lists its seeds explicitly).

The table records the instance that ran (with --means FILE, the file's users and arms). The plot has one
panel per quantity and one line per configuration, the parameters that vary named in its label; the
summary on stdout has one line per configuration too. --out, --plot: the extension gives the format.

Runs go to local worker processes (--workers) or to a Dask cluster (--scheduler tcp://HOST:PORT). Every
flag, grid entry and output path is checked before the first run. Ctrl-C or SIGTERM, to this process or to
its whole process group, stops every worker within seconds and writes the runs already finished to --out
(exit code 130 or 143); the same command with --resume then runs only the missing ones and appends them.
"""


def add_parser(sub) -> None:
    p = sub.add_parser(
        "simulate",
        help="simulate bandit algorithms over seeds; write a table and a plot",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
        allow_abbrev=False,
    )
    p.add_argument("-h", "--help", action="store_true", help="show this help (with --algorithm: its parameters)")
    p.add_argument("--algorithm", help="registered algorithm name")
    p.add_argument("--config", help="grid file (.toml or .json) instead of --algorithm")
    p.add_argument(
        "--seeds",
        type=positive_int,
        default=None,
        help="number of seeds, offset..offset+n-1 (default 10, or a grid file's own 'seeds'; given, it "
        "beats the grid file's)",
    )
    p.add_argument(
        "--seed-offset",
        type=nonnegative_int,
        default=None,
        help="first seed (default 0, or a grid file's 'seed_offset'; given, it beats the grid file's)",
    )
    p.add_argument("--out", help="results table (.csv, or .jsonl for JSON lines)")
    p.add_argument("--plot", help="image of the mean curve with a 95%% band over seeds (.png, .pdf, .svg, ...)")
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the runs already in --out and run only the missing ones (same arguments); the "
        "table is checked row by row first: a damaged row is refused, an incomplete last line "
        "re-run (docs/experiments.md)",
    )
    p.add_argument(
        "--max-runs",
        type=positive_int,
        default=MAX_RUNS,
        metavar="N",
        help=f"refuse a --config grid of more than N runs, configurations x seeds (default {MAX_RUNS})",
    )
    p.add_argument(
        "--allow-large",
        action="store_true",
        help="run sizes past the documented limits (anonbandits.core.limits: (2C+2) x users of one "
        "elicitation, users x arms of an instance or a means file's counts); without it such a "
        "run is refused before it allocates anything",
    )
    p.add_argument("--workers", type=positive_int, default=None, help="local worker processes (default: all cores)")
    p.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://127.0.0.1:8786")
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="hide progress (a bar on a terminal, otherwise a line at least every 10 s on stderr, with an ETA)",
    )
    p.set_defaults(func=run, accepts_extra=True, parser=p)


class _AlgorithmParser(argparse.ArgumentParser):
    """An algorithm's flags; a mistake is one line naming the flag (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        raise ConfigError(f"{message} (see {self.prog} --help)")


def _flag(name: str) -> str:
    return f"--{name.replace('_', '-')}"


def _algorithm_parser(spec: AlgorithmSpec) -> argparse.ArgumentParser:
    # Values stay text here: spec.resolve converts them, so a bad value gets the same message as in a grid.
    # A deprecated name keeps its own dest, so that resolve maps it (and says it is deprecated).
    p = _AlgorithmParser(
        prog=f"anonbandits simulate --algorithm {spec.name}",
        description=spec.summary,
        add_help=False,
        allow_abbrev=False,
    )
    for param in spec.params:
        choices = f"; one of {', '.join(map(str, param.choices))}" if param.choices else ""
        formerly = f"; formerly {', '.join(map(_flag, param.aliases))}" if param.aliases else ""
        # a bool is a plain flag (--best-effort), as in decompose; a value (true/false) is still accepted
        nargs, const = ("?", "true") if param.is_flag else (None, None)
        p.add_argument(
            _flag(param.name),
            dest=param.name,
            default=argparse.SUPPRESS,
            nargs=nargs,
            const=const,
            metavar="BOOL" if param.is_flag else param.name.upper(),
            help=f"{param.help} (default: {param.default}{choices}{formerly})",
        )
        for alias in param.aliases:
            p.add_argument(
                _flag(alias), dest=alias, default=argparse.SUPPRESS, help=argparse.SUPPRESS, nargs=nargs, const=const
            )
    return p


def _print_algorithms() -> None:
    print("algorithms:")
    for name, spec in sorted(registry.all_algorithms().items()):
        print(f"  {name:28s} {spec.summary}")


def _tasks(args: argparse.Namespace) -> list[Task]:
    if args.seeds is not None and args.seeds > MAX_SEEDS:
        raise ConfigError(f"--seeds must be at most {MAX_SEEDS}, got {args.seeds}")
    if args.config:
        if args.extra:
            raise ConfigError(f"unrecognized arguments with --config: {' '.join(args.extra)}")
        grid = _flags_over_grid(load_grid(args.config), args)
        # counted from the list lengths before anything is expanded: a huge grid is refused at once
        total = count_runs(grid)
        if total > args.max_runs:
            raise ConfigError(
                f"grid file {args.config} expands to {total} runs, more than --max-runs "
                f"{args.max_runs}; give --max-runs {total} to run it anyway"
            )
        with warnings.catch_warnings(record=True) as caught:  # deprecated names: said once, after every check
            warnings.simplefilter("always", DeprecatedParameterWarning)
            tasks = tasks_from_grid(grid, max_runs=None)
        for w in caught:
            if issubclass(w.category, DeprecatedParameterWarning):
                if str(w.message) not in args.deprecated:
                    args.deprecated.append(str(w.message))
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return tasks
    spec = registry.get(args.algorithm)
    parser = _algorithm_parser(spec)
    ns, rest = parser.parse_known_args(args.extra)
    if rest:
        k = next((i for i, token in enumerate(rest) if token.startswith("-")), None)
        if k is None:
            raise ConfigError(f"algorithm {spec.name!r} takes --FLAG VALUE pairs, got a stray {rest[0]!r}")
        value = rest[k + 1] if k + 1 < len(rest) and not rest[k + 1].startswith("-") else None
        if rest[k].partition("=")[0] == "--channel":  # the registry's one line naming the algorithms taking it
            spec.resolve({"channel": value}, as_flags=True)
        given = f" (given {value!r})" if value is not None else ""
        raise ConfigError(f"algorithm {spec.name!r} has no flag {rest[k]}{given}; see {parser.prog} --help")
    params = spec.resolve(vars(ns), as_flags=True, deprecated=args.__dict__.setdefault("deprecated", []))
    return [
        Task(spec.name, params, s) for s in seed_list(10 if args.seeds is None else args.seeds, args.seed_offset or 0)
    ]


def _flags_over_grid(grid: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The grid with the seed flags given on the command line in place of the file's own values (an explicit
    flag beats the file; the file's values are still checked). ``--seed-offset`` with a file that lists its seeds
    and no ``--seeds`` is refused: an offset applies to a count of seeds only."""
    seed_list(grid.get("seeds", 1), grid.get("seed_offset", 0))  # the file's own values are checked all the same
    if args.seeds is not None:
        grid["seeds"] = args.seeds
    grid.setdefault("seeds", 10)
    if args.seed_offset is not None:
        if isinstance(grid["seeds"], list):
            raise ConfigError(
                f"--seed-offset {args.seed_offset} does not apply: grid file {args.config} lists its "
                f"seeds ({grid['seeds']!r}); give --seeds N as well to run N seeds from "
                f"{args.seed_offset}"
            )
        grid["seed_offset"] = args.seed_offset
    return grid


def _plot_suffixes() -> tuple[str, ...]:
    from matplotlib.backend_bases import FigureCanvasBase

    return tuple(f".{ext}" for ext in sorted(FigureCanvasBase.get_supported_filetypes()))


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before any run, an output that could not be written at the end (or would replace the grid)."""
    for flag, path, given in (("--out", args.out, TABLE_SUFFIXES), ("--plot", args.plot, None)):
        if path is None:
            continue
        suffixes = given or _plot_suffixes()
        if Path(path).suffix.lower() not in suffixes:
            raise ConfigError(
                f"{flag} {path}: unsupported extension {Path(path).suffix or '(none)'!r}; "
                f"use one of {', '.join(suffixes)}"
            )
    check_outputs([("--out", args.out), ("--plot", args.plot)], inputs=[args.config] if args.config else [])
    if args.resume and not args.out:
        raise ConfigError("--resume needs --out: the table whose runs are kept")


def run(args: argparse.Namespace) -> int:
    if args.help:
        args.parser.print_help()
        print()
        if args.algorithm:
            _algorithm_parser(registry.get(args.algorithm)).print_help()
        else:
            _print_algorithms()
        return 0
    if bool(args.algorithm) == bool(args.config):
        raise ConfigError("give exactly one of --algorithm NAME or --config GRID")
    args.deprecated = []
    tasks = _tasks(args)
    if args.allow_large:
        tasks = [dataclasses.replace(t, allow_large=True) for t in tasks]
    _check_outputs(args)
    kept: list[dict[str, Any]] = []
    if args.resume and Path(args.out).exists():
        kept, note = read_resumable(args.out)  # validated row by row before anything runs or is written
        if note:
            print(f"anonbandits simulate: warning: {note}", file=sys.stderr)
        done = {run_key(row) for row in kept}
        tasks = [t for t in tasks if task_key(t) not in done]
    return _run_and_save(args, tasks, kept)


def _say_deprecated(args: argparse.Namespace) -> None:
    """The deprecated names the command used, one line each, once the runs went through: a command refused
    (by a check or by a run's own check) says only why it is refused."""
    for note in getattr(args, "deprecated", ()):
        print(f"anonbandits simulate: {note}", file=sys.stderr)


def _run_and_save(args: argparse.Namespace, tasks: list[Task], kept: list[dict[str, Any]]) -> int:
    finished: dict[int, TaskResult] = {}
    try:
        collect(tasks, finished, workers=args.workers, scheduler=args.scheduler, progress=not args.no_progress)
    except (KeyboardInterrupt, Terminated) as exc:  # SIGTERM (main's handler raises Terminated) like Ctrl-C
        signum = signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT
        with stop_signals_ignored():
            return _stop(args, kept, finished, len(tasks), "interrupted", 128 + signum)
    except (AnonBanditsError, AnonDecompError) as exc:
        message = _in_flag_words(str(exc), args.algorithm) if args.algorithm else str(exc)
        return _stop(args, kept, finished, len(tasks), f"error: {message}", EXIT_USER_ERROR)
    except RUN_ERRORS as exc:  # a failing run (a bug, the machine) is reported in one line, the finished ones kept
        return _stop(args, kept, finished, len(tasks), f"error: a run failed: {type(exc).__name__}: {exc}", 1)

    new = [finished[i] for i in sorted(finished)]
    rows = kept + [r.row for r in new]
    if args.out:
        write_table(rows, args.out)
    if args.plot:
        _plot(new, args.plot, resumed=len(kept))
    if kept:
        print(f"resumed: {len(kept)} runs were already in {args.out}, {len(new)} run now")
    _say_deprecated(args)
    _summarise(rows, sys.stdout)
    return 0


def _in_flag_words(message: str, algorithm: str) -> str:
    """``explore_scale must be positive`` -> ``--explore-scale must be positive``: the algorithms check their
    parameters under their Python names, but on the command line the user typed flags."""
    names = [p.name for p in registry.get(algorithm).params if "_" in p.name]
    if not names:
        return message
    pattern = r"(?<![\w-])(" + "|".join(map(re.escape, names)) + r")(?!\w)"
    return re.sub(pattern, lambda m: "--" + m.group(1).replace("_", "-"), message)


def _stop(
    args: argparse.Namespace,
    kept: list[dict[str, Any]],
    finished: dict[int, TaskResult],
    total: int,
    what: str,
    code: int,
) -> int:
    """Save the finished runs (if there is a table to save them to) and say in one line how to go on."""
    rows = kept + [finished[i].row for i in sorted(finished)]
    if args.out and rows:
        write_table(rows, args.out)
        how = (
            f"{len(rows)} finished runs are in {args.out}; "
            "run the same command with --resume to run only the missing ones"
        )
    else:
        how = "nothing saved (no --out)" if finished else "no run had finished"
    if rows or code > 128:
        what += f" (after {len(finished)} of {total} runs; {how})"
    if code > 128:  # interrupted, not refused
        _say_deprecated(args)
    print(f"anonbandits simulate: {what}", file=sys.stderr)
    return code


def _plot(results: list[TaskResult], path: str, *, resumed: int) -> None:
    if not results:
        print(f"plot {path}: not drawn, every run was already in the table")
        return
    try:
        plot_curves(results, path)  # axes named by the results (Result.curve_axes)
    except ValueError as exc:
        raise ConfigError(f"--plot {path}: {exc}") from None
    if resumed:
        print(
            f"plot {path}: the {len(results)} runs of this invocation (curves of the {resumed} resumed "
            "runs are not stored in the table)"
        )


def _number(value: Any) -> float:
    # rows read back from a CSV table hold text, booleans included
    return float(value == "True") if value in ("True", "False") else float(value)


def _summarise(rows, out) -> None:
    """Mean of each numeric metric per configuration, so a run without --out still says something: one line per
    algorithm, with the parameters that vary between its runs in the label (``anon-etc [C=5]: 3 runs, mean ...``;
    :func:`~anonbandits.experiments.table.configuration_labels`)."""
    import numpy as np

    by_alg: dict[str, list[dict]] = {}
    for row, label in zip(rows, configuration_labels(rows, [str(row["algorithm"]) for row in rows]), strict=True):
        by_alg.setdefault(label, []).append(row)
    for alg, group in by_alg.items():
        parts = []
        for key in ("regret", "samples", "best_arm_found", "observations", "wall_time"):
            # a resumed CSV table has every column in every row, empty where an algorithm has no such metric
            values = [_number(g[key]) for g in group if g.get(key) not in (None, "")]
            if values:
                parts.append(f"{key}={np.mean(values):.4g}")
        print(f"{alg}: {len(group)} runs, mean " + ", ".join(parts), file=out)
