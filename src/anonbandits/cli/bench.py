"""``anonbandits bench --suite quick|full --out bench.csv --plot bench.png``: the solver benchmark (issue 6).

Runs every decomposition method of ``decompose --method`` (:data:`anondecomp.METHODS`, ``auto`` included) on
every graph of the suite (:mod:`anondecomp.bench`): random U-batched graphs with U above and below K(C+1),
niche-group graphs where block is loose, graphs recorded from real Algorithm 1 runs and synthetic
Algorithm-1-shaped graphs, from 18 to 100,000 users. One row per (graph, method); every decomposition goes
through the exact verifier. The plot shows R / (LP lower bound) per family and method.

Outputs: ``--out`` is a CSV table (``.csv``) or JSON lines (``.jsonl``), ``--plot`` an image whose extension
gives its format; any other extension is refused before the first graph, and so is an existing output unless
``--force`` is given. Ctrl-C (or SIGTERM) writes the rows finished so far to ``--out`` and exits with 130 (143).
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

import numpy as np

import anondecomp
from anonbandits.cli.options import Terminated, check_outputs, positive_seconds, stop_signals_ignored
from anonbandits.errors import ConfigError
from anonbandits.experiments import write_table
from anonbandits.experiments.plot import save_figure
from anonbandits.experiments.table import TABLE_SUFFIXES
from anondecomp.bench import suite as bench

PLOT_FORMATS = (".png", ".pdf", ".svg")


#: the methods bench runs: every method of ``decompose --method``
METHODS = tuple(anondecomp.METHODS)
DEFAULT_OUT = "bench.csv"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "bench",
        help="run the decomposition benchmark suite",
        description="Run every decomposition method on the benchmark graphs; write one row per "
        "(graph, method) with R, the lower bounds, time, memory and the exact check. "
        "Ctrl-C writes the rows finished so far, then exits with 130.",
    )
    p.add_argument(
        "--suite",
        choices=bench.SUITES,
        default="quick",
        help="quick (under 5 minutes on 2 cores) or full (default quick)",
    )
    p.add_argument(
        "--out", default=DEFAULT_OUT, help=f"table of rows: CSV for .csv, JSON lines for .jsonl (default {DEFAULT_OUT})"
    )
    p.add_argument(
        "--plot",
        default=None,
        help=f"bar chart of R / LP lower bound per family and method ({', '.join(PLOT_FORMATS)}; default none)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace --out or --plot when it exists already (without it, an existing output is refused)",
    )
    p.add_argument(
        "--methods", default=",".join(METHODS), help=f"comma-separated methods (default all: {', '.join(METHODS)})"
    )
    p.add_argument("--families", default=None, help="comma-separated families to keep (default all)")
    p.add_argument(
        "--time-limit",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="per graph, for 'optimal' and the LP bound (default: 20 quick, 120 full)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="hide progress (a bar on a terminal, otherwise a line at least every 10 s on stderr, with an ETA)",
    )
    p.set_defaults(func=run)


def _choose(text: str | None, allowed, what: str) -> list[str] | None:
    if text is None:
        return None
    chosen = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in chosen if x not in allowed]
    if bad or not chosen:
        raise ConfigError(f"unknown {what} {', '.join(bad) or '(none given)'}; choose from {', '.join(allowed)}")
    return chosen


def run(args: argparse.Namespace) -> int:
    from anonbandits.experiments.runner import Progress

    methods = _choose(args.methods, METHODS, "method") or list(METHODS)  # --methods defaults to all of them
    cases = bench.cases(args.suite)
    families = _choose(args.families, sorted({c.family for c in cases}), "family")
    if families is not None:
        cases = [c for c in cases if c.family in families]
    if args.plot is not None and Path(args.plot).suffix.lower() not in PLOT_FORMATS:
        raise ConfigError(f"--plot {args.plot}: unknown image format; use one of {', '.join(PLOT_FORMATS)}")
    if args.plot is not None:
        import matplotlib  # noqa: F401  (before the runs: a base install without it learns so at once)
    # the table and the plot create missing directories; everything else must be writable before the runs
    check_outputs([("--out", args.out), ("--plot", args.plot)], make_parents=True, suffixes={"--out": TABLE_SUFFIXES})
    for flag, path in (("--out", args.out), ("--plot", args.plot)):
        if path is not None and Path(path).exists() and not args.force:
            raise ConfigError(f"{flag} {path} exists; give --force to replace it, or another {flag}")
    limit = args.time_limit or bench.TIME_LIMIT[args.suite]
    start = time.perf_counter()
    rows: list[dict] = []  # every finished row, as soon as it is finished (its graph's LP bound comes later)
    progress = Progress(len(cases) * len(methods), label="rows", enabled=not args.no_progress)
    progress.start()

    def finished(row: dict) -> None:
        rows.append(row)
        progress.update()

    try:
        for case in cases:
            bench.run_case(case, methods, time_limit=limit, on_row=finished)
    except (KeyboardInterrupt, Terminated) as exc:
        progress.close()
        code = 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)
        with stop_signals_ignored():  # a second Ctrl-C must not cut the writing short
            if rows:
                write_table(rows, args.out)
                kept = f"{len(rows)} finished rows are in {args.out}"
            else:
                kept = "no row had finished; nothing written"
        print(
            f"anonbandits bench: interrupted (after {len(rows)} of {len(cases) * len(methods)} rows; {kept})",
            file=sys.stderr,
        )
        return code
    finally:
        progress.close()
    write_table(rows, args.out)
    print(format_summary(rows))
    if args.plot:
        plot_ratios(rows, args.plot)
    bad = [r for r in rows if r["status"] in bench.SOLVED and not r["verified"]]
    print(
        f"{len(rows)} rows in {time.perf_counter() - start:.1f} s; {len(bad)} failed verification; "
        f"table {args.out}" + (f", plot {args.plot}" if args.plot else "")
    )
    return 1 if bad else 0


def format_summary(rows: list[dict]) -> str:
    """R / LP bound and R / D against the paper's alpha per family and method, and how often optimal beats
    block on scarce-cluster graphs."""
    summary = bench.summarize(rows)
    lines = [
        f"{'family':14} {'method':11} {'graphs':>6} {'mean R/LP':>10} {'max R/LP':>9} {'mean R/D':>9} "
        f"{'alpha':>6} {'seconds':>8}"
    ]
    for (family, method), s in sorted(summary.items()):
        alpha = "-" if np.isnan(s["mean_alpha"]) else f"{s['mean_alpha']:.2f}"
        lines.append(
            f"{family:14} {method:11} {s['graphs']:>6} {s['mean_ratio']:>10.4f} {s['max_ratio']:>9.4f} "
            f"{s['mean_r_over_d']:>9.3f} {alpha:>6} {s['seconds']:>8.2f}"
        )
    wins = beats(rows, "optimal", "block", "scarce")
    if wins is not None:
        lines.append(f"optimal < block on {wins[0]} of {wins[1]} scarce-cluster graphs")
    return "\n".join(lines)


def beats(rows: list[dict], a: str, b: str, family: str) -> tuple[int, int] | None:
    """(graphs of ``family`` where method a used strictly fewer assignments than b, graphs with both)."""
    by_graph: dict[tuple, dict] = {}
    for r in rows:
        if r["family"] == family and r["status"] in bench.SOLVED:
            by_graph.setdefault((r["label"], r["users"], r["arms"]), {})[r["method"]] = r["total_assignments"]
    pairs = [g for g in by_graph.values() if a in g and b in g]
    return (sum(g[a] < g[b] for g in pairs), len(pairs)) if pairs else None


def plot_ratios(rows: list[dict], path: str | Path) -> None:
    """Two panels of grouped bars per family (groups) and method (bars): R / LP lower bound (mean, bar to the
    max), and R / D with the paper's alpha for the method marked (how loose the guarantee is)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = bench.summarize(rows)
    families = sorted({f for f, _ in summary})
    methods = [m for m in METHODS if any(m == mm for _, mm in summary)]
    width = 0.8 / max(len(methods), 1)
    fig, axes = plt.subplots(1, 2, figsize=(3.0 + 3.0 * len(families), 4.4))
    for k, m in enumerate(methods):
        x = np.arange(len(families)) + (k - (len(methods) - 1) / 2) * width
        get = [summary.get((f, m), {}) for f in families]
        mean = np.array([s.get("mean_ratio", np.nan) for s in get])
        top = np.array([s.get("max_ratio", np.nan) for s in get])
        bars = axes[0].bar(x, mean, width, label=m, yerr=[np.zeros(len(x)), top - mean], capsize=2)
        axes[1].bar(x, [s.get("mean_r_over_d", np.nan) for s in get], width, color=bars[0].get_facecolor())
        axes[1].scatter(
            x,
            [s.get("mean_alpha", np.nan) for s in get],
            marker="_",
            s=200,
            color="k",
            zorder=3,
            label="paper's alpha" if k == 0 else None,
        )
    for ax, label in zip(
        axes, ["R / LP lower bound (mean; bar to max)", "R / D (bars) and the paper's alpha (-)"], strict=True
    ):
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(np.arange(len(families)), families, rotation=20)
        ax.set_yscale("log")
        ax.set_ylabel(label)
    axes[0].set_title("Length relative to the certified LP bound")
    axes[1].set_title("Length in units of D against the guarantee")
    axes[0].legend(fontsize=8, ncol=2)
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)
