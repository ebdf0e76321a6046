"""``anonbandits verify GRAPH OUT.json|OUT.parquet --C 3``: exact check of any decomposition."""

from __future__ import annotations

import argparse
import sys

import anondecomp
from anonbandits.cli.decompose import resolve_C
from anonbandits.cli.options import add_graph_arguments, nonnegative_int, positive_int, silence_stdout
from anonbandits.cli.progress import Progress
from anondecomp.errors import InvalidInputError
from anondecomp.io import absence_from_header, limits_from_header, read_decomposition_document


def add_parser(sub) -> None:
    p = sub.add_parser(
        "verify",
        help="check a decomposition exactly against its graph",
        description="Check a decomposition exactly (integer arithmetic): every assignment "
        "stays on each user's arms and every pair gets ceil(w_ij) informative "
        "samples (with --best-effort, every pair whose arm is wanted by at least "
        "C+1 users; the others are listed as not coverable); a decomposition made "
        "with --absence is checked against the absence and confidence its file "
        "names (docs/platform.md). Exit code 1 when it is not valid.",
    )
    add_graph_arguments(p)
    p.add_argument(
        "decomposition",
        help="decomposition as written by 'decompose -o': JSON, a compact Parquet "
        "schedule, or a directory of Parquet part files",
    )
    p.add_argument("--C", type=positive_int, default=None, help="anonymity parameter (default: the files' 'C')")
    p.add_argument("--limit", type=nonnegative_int, default=20, help="at most this many problems listed (default 20)")
    p.add_argument(
        "--best-effort",
        action="store_true",
        help="check a 'decompose --best-effort' output: a pair whose arm is wanted by at most C users "
        "can never be covered and is not required (listed as not coverable); every other pair "
        "must get its demand, as without this flag",
    )
    p.set_defaults(func=run)


def _choose_C(cli_C: int | None, graph_C: int | None, out_C: int | None) -> int:
    if cli_C is None and None not in (graph_C, out_C) and graph_C != out_C:
        raise InvalidInputError(
            f"the graph file says C = {graph_C} but the decomposition says C = {out_C}; pass --C to choose"
        )
    return resolve_C(cli_C, graph_C if graph_C is not None else out_C)


def phase(label: str, unit: str = "rows") -> Progress:
    """Progress on stderr while a phase runs: a bar (rows of a compact schedule) or a spinner on a terminal, a
    line every 10 s otherwise (:class:`anonbandits.cli.progress.Progress`)."""
    return Progress(label, command="anonbandits verify", unit=unit)


def run(args: argparse.Namespace) -> int:
    from anondecomp import columnar, compact

    with phase(f"reading {args.graph}"):
        graph, graph_C = anondecomp.read_graph(args.graph, demand=args.demand)
    if columnar.file_kind(args.decomposition) == "parquet":
        header = compact.read_header(args.decomposition)
        C = _choose_C(args.C, graph_C, header.get("C"))
        robust = absence_from_header(header, graph, str(args.decomposition))
        with phase("verifying", unit="rows (2 passes)") as progress:  # verify_compact counts rows twice
            report = compact.verify_compact(
                graph, C, args.decomposition, progress=progress, best_effort=args.best_effort, **robust
            )
    else:
        with phase(f"reading {args.decomposition}"):
            assignments, mult, out_C, header = read_decomposition_document(args.decomposition, graph)
        C = _choose_C(args.C, graph_C, out_C)
        robust = absence_from_header(header, graph, str(args.decomposition))
        robust.update(limits_from_header(header, graph, str(args.decomposition)))
        with phase("verifying"):
            report = anondecomp.verify(graph, C, assignments, mult, best_effort=args.best_effort, **robust)
    try:
        print(report.summary(limit=args.limit))
        sys.stdout.flush()
    except BrokenPipeError:  # a reader that stopped early (| head) does not change the verdict
        silence_stdout()
    if not report.valid:
        schedule = f", {report.n_problems} schedule problem(s)" if report.n_problems else ""
        thin = len(graph.thin_arms(C))
        hint = (
            f"; {thin} arm(s) are wanted by at most C = {C} users and can never be covered: --best-effort "
            "checks every other pair"
            if thin and not args.best_effort
            else ""
        )
        limits = (f", {report.n_over_capacity} group(s) above capacity" if report.n_over_capacity else "") + (
            f", {report.n_over_exposure} user(s) above the surplus exposure cap" if report.n_over_exposure else ""
        )
        print(
            f"anonbandits verify: invalid decomposition: {report.n_short} pair(s) short of their "
            f"demand, {report.n_off_support} placement(s) off a user's arms{schedule}{limits}{hint}",
            file=sys.stderr,
        )
    return 0 if report.valid else 1
