"""``anonbandits stream LOG --window W --C C -o OUTDIR [--step S]``: cut a timestamped interaction log into
sliding windows and decompose each window's demand graph, warm-started from the previous window's plan
(:func:`anondecomp.write_stream`).

LOG is a Parquet or CSV table with columns ``user``, ``item`` (or ``arm``), ``timestamp`` and optionally
``weight`` (docs/formats.md, "Interaction logs"). OUTDIR (new, or an empty directory) gets one compact schedule
per window that has one, as ``decompose -o OUT.parquet`` writes it, the window's graph under ``graphs/`` (so that
``verify OUTDIR/graphs/window-00003.parquet OUTDIR/window-00003.parquet`` checks it) and ``summary.csv``; all of it
is written under a temporary name beside OUTDIR and renamed when the last window is done.
"""

from __future__ import annotations

import argparse
import math
import time
from collections import Counter

import anondecomp
from anonbandits.cli.options import check_outputs, positive_int
from anonbandits.cli.progress import Progress
from anondecomp.errors import InvalidInputError
from anondecomp.stream import DEFAULT_TOLERANCE, DURATION_HELP, parse_duration

#: the columns of summary.csv printed on stdout, one line per window
COLUMNS = ("window", "start", "users", "items", "dropped", "R", "bound", "seconds", "plan")


def duration(text: str) -> float:
    """A window or step: ``90s``, ``30min`` (or ``30m``), ``1h``, ``1d``, ``1w`` or a number of seconds (argparse's
    one-line error otherwise)."""
    try:
        return parse_duration(text, "duration")
    except InvalidInputError:
        raise argparse.ArgumentTypeError(f"expected {DURATION_HELP}, got {text!r}") from None


def tolerance_value(text: str) -> float:
    """A finite number >= 0 (a share of the lower bound: 0.02 is 2 %)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return value


def add_parser(sub) -> None:
    p = sub.add_parser(
        "stream",
        help="decompose the sliding windows of a timestamped interaction log, each warm-started from the last",
        description="Cut a timestamped interaction log (Parquet or CSV: user, item or arm, timestamp, optional "
        "weight; docs/formats.md) into sliding windows and decompose each window's demand graph, warm-started "
        "from the previous window's plan; write one schedule per window and summary.csv to OUTDIR "
        "(docs/platform.md).",
    )
    p.add_argument("log", help="the log: a Parquet or CSV table with columns user, item (or arm), timestamp, weight")
    p.add_argument(
        "--window",
        type=duration,
        required=True,
        metavar="W",
        help=f"the windows' length: {DURATION_HELP}",
    )
    p.add_argument(
        "--step",
        type=duration,
        default=None,
        metavar="S",
        help="time between two windows' starts, at most the window (default: the window, windows that do not overlap)",
    )
    p.add_argument(
        "--C",
        type=positive_int,
        required=True,
        help="anonymity parameter; items with at most C users in a window are dropped from it (and counted)",
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUTDIR",
        help="a new or empty directory: window-NNNNN.parquet (schedules), graphs/, summary.csv",
    )
    p.add_argument(
        "--tolerance",
        type=tolerance_value,
        default=DEFAULT_TOLERANCE,
        metavar="T",
        help="keep a warm result when its R is at most (1 + T) times the window's lower bound (default "
        f"{DEFAULT_TOLERANCE}); else decompose the window cold too and keep the shorter",
    )
    p.add_argument(
        "--no-fallback",
        action="store_true",
        help="keep the best warm result even when it is above the tolerance (no cold decomposition)",
    )
    p.add_argument(
        "--cold",
        action="store_true",
        help="decompose every window cold (the default decompose), for comparison",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    check_outputs([("-o", args.output)], inputs=[args.log], directories=["-o"])
    with Progress(f"reading {args.log}", command="anonbandits stream"):
        log = anondecomp.read_log(args.log)
    with Progress("windows", command="anonbandits stream", unit="windows") as progress:
        rows = anondecomp.write_stream(
            log,
            args.output,
            args.C,
            args.window,
            step=args.step,
            tolerance=args.tolerance,
            fallback=not args.no_fallback,
            cold=args.cold,
            progress=progress,
        )
    widths = {name: max(len(name), *(len(str(row[name])) for row in rows)) for name in COLUMNS}
    print("  ".join(name.ljust(widths[name]) for name in COLUMNS).rstrip())
    for row in rows:
        print("  ".join(str(row[name]).rjust(widths[name]) for name in COLUMNS).rstrip())
    plans = Counter(row["plan"] for row in rows)
    print(
        f"{len(rows)} windows ({', '.join(f'{plans[p]} {p}' for p in ('warm', 'cold', 'empty'))}) written to "
        f"{args.output} with summary.csv; total wall time {time.perf_counter() - start:.3f} s"
    )
    return 0
