"""``anonbandits decompose GRAPH --C 3 [--method ...] [-o OUT.json|OUT.parquet|OUT/] [--certify]``: solve and
summarise. The decomposition is :func:`anondecomp.decompose`'s, as the library returns it for the same graph and
options. ``--shards N`` or ``--scheduler tcp://HOST:PORT`` split the users into feasible shards
(:mod:`anondecomp.scale`), decomposed locally or on a Dask cluster and written as a part directory. With no
tuning flag, a Parquet table of more than :data:`FAST_PAIRS` rows whose demands are batched is streamed into
its support and sharded by itself: the same shards and phase schedule as ``auto``'s phase route
(:mod:`anondecomp.methods.phase`), without ever holding the graph's edges.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import anondecomp
from anonbandits.cli.options import (
    DECOMPOSITION_SUFFIXES,
    add_absence_arguments,
    add_graph_arguments,
    check_outputs,
    nonnegative_int,
    positive_int,
    positive_seconds,
)
from anonbandits.cli.progress import Progress
from anonbandits.errors import ConfigError
from anondecomp import columnar, scale
from anondecomp.compact import is_compact_output
from anondecomp.errors import InvalidInputError
from anondecomp.improve import POLISH_SECONDS
from anondecomp.lower_bound import TRIVIAL
from anondecomp.methods.phase import PHASE_ARMS, PHASE_PAIRS
from anondecomp.scale import BatchedSupport
from anondecomp.validation import thin_arms_error

# rows of a Parquet table above which the default command streams it into its support (auto's phase route
# takes graphs of as many edges, anondecomp.methods.phase.PHASE_PAIRS)
FAST_PAIRS = PHASE_PAIRS
# --time-limit is the decomposition's time_limit, as in the library (--certify changes nothing of it); a bound
# not computed by the decomposition itself gets what is left of CERTIFY_END of the limit, counted from the start
# of the command (the rest is for writing the output and the phases that cannot stop mid-way)
CERTIFY_END = 0.9
# assignment cells (distinct assignments x users) of a JSON output above which -o X.json warns and names X.parquet
JSON_CELLS_WARNING = 10**7


def add_parser(sub) -> None:
    p = sub.add_parser(
        "decompose",
        help="solve a C-anonymous decomposition of a demand graph",
        description="Solve a C-anonymous decomposition of a demand graph (node-link JSON, "
        "batched form, or a Parquet or CSV table; see docs/formats.md) and print "
        "its summary.",
    )
    add_graph_arguments(p)
    p.add_argument("--C", type=positive_int, default=None, help="anonymity parameter (overrides the file's 'C')")
    p.add_argument("--method", default="auto", choices=anondecomp.METHODS, help="decomposition method (default auto)")
    add_absence_arguments(p, "the graph table's 'absence' column, else 0")
    p.add_argument(
        "--max-surplus-exposure",
        type=nonnegative_int,
        default=None,
        metavar="S",
        help="no user's exposure (blocks in which its arm holds C+1 users or more) may exceed its demand by more "
        "than S; the shortest decomposition found that meets it, or a one-line refusal (docs/platform.md)",
    )
    p.add_argument(
        "--reseat",
        choices=("yes", "no"),
        default=None,
        help="re-seat the decomposition so that each user is released as little as it can at the same R "
        "(default: yes for --method auto up to RESEAT_CELLS distinct assignments x users, no for the other methods)",
    )
    p.add_argument(
        "--capacity",
        type=positive_int,
        default=None,
        metavar="M",
        help="at most M users on an item in one assignment, padders included (default: the graph table's "
        "'capacity' column, else none)",
    )
    p.add_argument(
        "-o",
        "--output",
        help="write the decomposition here: JSON (every assignment), or a compact "
        "Parquet schedule for OUT.parquet, or part files for OUT/ (with "
        "--shards or --scheduler, OUT.parquet is a part directory too)",
    )
    p.add_argument(
        "--seed",
        type=nonnegative_int,
        default=None,
        help="seed for randomized choices of randomized, block, polytope, auto, optimal (default 0)",
    )
    p.add_argument(
        "--best-effort",
        action="store_true",
        help="cover every pair that can be covered and report the rest instead of failing",
    )
    p.add_argument(
        "--certify",
        action="store_true",
        help="also compute the column-generation LP lower bound on R (valid for every method) and "
        "report it as lp_lower_bound",
    )
    p.add_argument(
        "--time-limit",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="time limit for 'optimal' (best decomposition found, with its gap), 'auto' (no phase "
        "starts after it) and --certify (with auto, the whole solve: half for the decomposition, "
        "the rest for the bound; with --shards or --scheduler, the bound only, default 60 s)",
    )
    p.add_argument(
        "--shards",
        type=positive_int,
        default=None,
        metavar="N",
        help="split the users into N feasible shards, decomposed one by one; the "
        "merged R is the largest shard's (taken by itself, with one shard per 2^20 users, for a "
        f"batched graph of more than {FAST_PAIRS} pairs when no tuning flag is given)",
    )
    p.add_argument(
        "--allow-large",
        action="store_true",
        help="build a method's dense model or output above its size limit (DENSE_CELLS, OUTPUT_CELLS "
        "of docs/errors.md) instead of refusing; no effect on auto, sessions and slack, which have "
        "no such limit",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run the shards on a Dask distributed cluster, e.g. tcp://127.0.0.1:8786 (its workers "
        "must see the output directory)",
    )
    p.set_defaults(func=run)


def resolve_C(cli_C: int | None, file_C: int | None) -> int:
    """The command line's C wins over the file's; one of them must be given."""
    C = cli_C if cli_C is not None else file_C
    if C is None:
        raise InvalidInputError('no C given: pass --C or put "C" in the graph file')
    if C < 1:
        raise InvalidInputError(f"C must be at least 1, got {C}")
    return C


def certify(
    result: anondecomp.Decomposition, args: argparse.Namespace, time_limit: float | None = None
) -> tuple[dict, list[str]]:
    """The certified lower bound on R for ``result``'s graph: (extra output fields, summary lines). It only
    bounds: the decomposition is ``anondecomp.decompose``'s, as the library returns it. The bound is the one
    ``auto``'s improvement step computed (kept in ``result.info``) or the optimal method's, else
    :func:`anondecomp.lp_lower_bound` is solved here within ``time_limit``."""
    if result.method == "optimal":
        value, converged = result.info["lp_lower_bound"], result.info["lp_converged"]
        how = "LP optimum" if converged else "time limit: Farley bound"
    elif "lp_lower_bound" in result.info:
        value, converged, how = result.info["lp_lower_bound"], result.info["lp_converged"], result.info["lp_how"]
    else:
        bound = anondecomp.lp_lower_bound(
            result.graph, result.C, seed=result, best_effort=args.best_effort, time_limit=time_limit
        )
        value, converged, how = bound.value, bound.converged, bound.how
    # the decomposition was cut, or the bound (either may still close the gap)
    cut = bool(result.info.get("time_limit_reached")) or not converged
    lines = certificate_lines(result.total_assignments, value, how, cut)
    if result.method == "optimal":
        lines = [
            lines[0],
            lines[1],
            f"status               {result.info['status']} (seed {result.info['seed']}: "
            f"R = {result.info['seed_total']})",
        ]
    return {"lp_lower_bound": value}, lines


def certify_sharded(
    result: scale.ShardedResult, data: BatchedSupport | anondecomp.DemandGraph, time_limit: float | None = None
) -> list[str]:
    """The certificate lines of a sharded decomposition: the trivial bound when the merged R meets it, else
    :func:`anondecomp.lp_lower_bound` of the whole graph (held sparse) within ``time_limit``."""
    if result.total_assignments <= result.lower_bound:
        return certificate_lines(result.total_assignments, float(result.lower_bound), TRIVIAL, False)
    graph = data if isinstance(data, anondecomp.DemandGraph) else data.graph()
    bound = anondecomp.lp_lower_bound(graph, result.C, time_limit=time_limit)
    return certificate_lines(result.total_assignments, bound.value, bound.how, not bound.converged)


def certificate_lines(R: int, value: float, how: str, cut: bool) -> list[str]:
    """The summary lines of a certified bound ``value`` on a decomposition of length ``R``."""
    lines = [f"LP lower bound       {value:.4f}   (certified; {how})"]
    if value > 0:
        lines.append(f"R / LP lower bound   {R / value:.4f}")
    if cut and R > math.ceil(value - 1e-6):  # R = ceil(bound) is optimal, cut or not
        lines.append("status               time limit reached (R and the bound are the best found in time)")
    return lines


def method_options(args: argparse.Namespace) -> dict:
    """The options given on the command line, for :func:`anondecomp.decompose`, which warns about those the
    method ignores; --time-limit also serves --certify, so it is passed only to a method that reads it, whole
    (the command and the library give the same decomposition, with or without --certify)."""
    options = {} if args.seed is None else {"seed": args.seed}
    if args.allow_large:
        options["allow_large"] = True
    if args.reseat is not None:
        options["reseat"] = args.reseat == "yes"
    if args.time_limit is not None:
        if "time_limit" in anondecomp.method_info(args.method).options:
            options["time_limit"] = args.time_limit
        elif not args.certify:
            warnings.warn(
                f"--time-limit is read only by --method auto, optimal and --certify; ignored for "
                f"--method {args.method}",
                anondecomp.AnonDecompWarning,
                stacklevel=2,
            )
    return options


def sharded(args: argparse.Namespace) -> bool:
    """Whether the sharded path was asked for (--shards or --scheduler); refuses what it cannot honour. The
    default command may take it too (:func:`read_input`)."""
    if args.shards is not None or args.scheduler is not None:
        for flag, given in (
            ("--method", args.method != "auto"),
            ("--best-effort", args.best_effort),
            ("--absence", args.absence is not None),
            ("--max-surplus-exposure", args.max_surplus_exposure is not None),
            ("--capacity", args.capacity is not None),
        ):
            if given:
                raise ConfigError(f"{flag} does not apply with --shards/--scheduler (each shard runs auto)")
        if args.output and not is_compact_output(args.output):
            raise ConfigError(
                f"-o {args.output}: a sharded decomposition is written as a Parquet part directory; "
                "give -o OUT.parquet or -o OUT/"
            )
        return True
    return False


def untuned(args: argparse.Namespace) -> bool:
    """Whether the default command may take the sharded path: no tuning flag (only the dense path honours
    them) and no output or a compact Parquet one (a JSON output lists the distinct assignments)."""
    return (
        args.method == "auto"
        and not (args.best_effort or args.time_limit is not None or args.absence is not None)
        and args.max_surplus_exposure is None
        and args.capacity is None
        and (not args.output or is_compact_output(args.output))
        and not {"absence", "capacity"} & set(columnar.table_columns(args.graph))
    )


def read_input(args: argparse.Namespace) -> tuple[anondecomp.DemandGraph | BatchedSupport, int | None]:
    """The graph, read once: a Parquet table of more than :data:`FAST_PAIRS` rows with integer user ids is
    streamed straight into its support (:func:`scale.read_support`) when :func:`untuned` allows it, so a
    batched graph of 10^8 users never becomes a :class:`DemandGraph`; any other input is read whole."""
    if untuned(args) and scale.streamed_rows(args.graph) > FAST_PAIRS:
        return scale.read_support(args.graph, demand=args.demand)
    return anondecomp.read_graph(args.graph, demand=args.demand)


def run_sharded(
    args: argparse.Namespace,
    start: float,
    data: BatchedSupport | anondecomp.DemandGraph | None = None,
    file_C: int | None = None,
) -> int:
    """Decompose shard by shard (one shard per 2^20 users unless --shards says) and print the summary;
    ``data`` is the graph when already read: a batched support, or a sparse general graph (sharded by the
    rule of :func:`anondecomp.scale.graph_shards`)."""
    if data is None:
        with phase(f"reading {args.graph}"):
            data, file_C = scale.read_support(args.graph, demand=args.demand)
    C = resolve_C(args.C, file_C)
    try:
        with phase("solving" + (f" and writing {args.output}" if args.output else "")):
            result = scale.decompose_sharded(
                data,
                C,
                args.output,
                n_shards=args.shards,
                scheduler=args.scheduler,
                seed=args.seed or 0,
                parts=args.shards is not None,
            )
    except anondecomp.InfeasibleError as exc:
        if args.shards is None and args.scheduler is None:  # the default command: as the dense path says it
            raise thin_arms_error(list(exc.arms), C, "; use best_effort to cover everything else") from None
        raise
    certificate = []
    if args.certify:  # the shards are solved whole; --time-limit (default POLISH_SECONDS) bounds the LP only
        left = max(CERTIFY_END * (args.time_limit or POLISH_SECONDS) - (time.perf_counter() - start), 0.1)
        with phase("certifying (LP lower bound)"):
            certificate = certify_sharded(result, data, left)
    print(result.summary())
    for line in certificate:
        print(line)
    print(f"total wall time      {time.perf_counter() - start:.3f} s (read, solve, write)")
    return 0


def phase(label: str) -> Progress:
    """Progress on stderr while a phase of the command runs (:class:`anonbandits.cli.progress.Progress`)."""
    return Progress(label, command="anonbandits decompose")


def warn_json_size(result: anondecomp.Decomposition, output: str) -> None:
    """One line on stderr when a JSON output would hold more than :data:`JSON_CELLS_WARNING` assignment cells
    (every distinct assignment lists every user), naming the compact Parquet schedule; the JSON is still written."""
    cells = result.n_distinct * result.graph.n_users
    if is_compact_output(output) or cells <= JSON_CELLS_WARNING:
        return
    parquet = Path(output).with_suffix(".parquet") if Path(output).suffix else Path(f"{output}.parquet")
    print(
        f"anonbandits: warning: {output} will hold {cells:.1e} assignment cells ({result.n_distinct:,} "
        f"distinct assignments x {result.graph.n_users:,} users); -o {parquet} writes the compact schedule "
        "(docs/formats.md)",
        file=sys.stderr,
        flush=True,
    )


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    # a sharded decomposition is a part directory whether -o is OUT/ or OUT.parquet (sharded() refuses others)
    as_directory = (
        (args.shards is not None or args.scheduler is not None) and bool(args.output) and is_compact_output(args.output)
    )
    check_outputs(
        [("-o", args.output)],
        inputs=[args.graph],
        parts=["-o"],
        directories=["-o"] if as_directory else [],
        suffixes={"-o": DECOMPOSITION_SUFFIXES},
    )
    if sharded(args):
        return run_sharded(args, start)
    with phase(f"reading {args.graph}"):
        graph, file_C = read_input(args)
    C = resolve_C(args.C, file_C)
    if isinstance(graph, BatchedSupport):
        if len(graph.arms) <= PHASE_ARMS or graph.phase_fits(C):
            return run_sharded(args, start, graph, file_C)
        graph = graph.graph()  # a log that only looks batched (unit weights): its sparse graph, for auto
    absence = args.absence if args.absence is not None else columnar.read_absence(args.graph, graph)
    if absence is not None and np.ndim(absence) and args.output and is_compact_output(args.output):
        raise ConfigError(
            f"-o {args.output}: one absence per user is written (and verified) as JSON, whose groups are named; "
            "give -o OUT.json"
        )
    capacity = args.capacity if args.capacity is not None else columnar.read_capacity(args.graph, graph)
    limited = [
        f for f, v in (("--capacity", capacity), ("--max-surplus-exposure", args.max_surplus_exposure)) if v is not None
    ]
    if limited and args.output and is_compact_output(args.output):
        raise ConfigError(
            f"-o {args.output}: a decomposition made with {limited[0]} is written (and verified) as JSON; "
            "give -o OUT.json"
        )
    with phase("solving"):
        result = anondecomp.decompose(
            graph,
            C,
            method=args.method,
            best_effort=args.best_effort,
            absence=absence,
            confidence=args.confidence,
            max_surplus_exposure=args.max_surplus_exposure,
            capacity=capacity,
            **method_options(args),
        )
    left = None if args.time_limit is None else max(CERTIFY_END * args.time_limit - (time.perf_counter() - start), 0.1)
    if args.certify or result.method == "optimal":
        with phase("certifying (LP lower bound)"):
            extra, certificate = certify(result, args, left)
    else:
        extra, certificate = {}, []
    if args.output:
        warn_json_size(result, args.output)
        with phase(f"writing {args.output}"):
            anondecomp.write_decomposition(result, args.output, extra=extra)
    print(result.summary())
    for line in certificate:
        print(line)
    print(f"total wall time      {time.perf_counter() - start:.3f} s (read, solve, write)")
    if len(result.uncovered):
        shown = ", ".join(f"({graph.users[i]}, {graph.arms[j]})" for i, j in result.uncovered[:10])
        print(f"not coverable (arm wanted by <= C users): {shown}{' ...' if len(result.uncovered) > 10 else ''}")
    return 0
