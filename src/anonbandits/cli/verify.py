"""``anonbandits verify GRAPH.json OUT.json --C 3``: exact check of any decomposition."""

from __future__ import annotations

import argparse
import sys

import anondecomp
from anonbandits.cli.decompose import resolve_C
from anonbandits.cli.options import nonnegative_int, positive_int, silence_stdout
from anondecomp.errors import InvalidInputError


def add_parser(sub) -> None:
    p = sub.add_parser("verify", help="check a decomposition exactly against its graph",
                       description="Check a decomposition exactly (integer arithmetic): every assignment "
                                   "stays on each user's arms and every pair gets ceil(w_ij) informative "
                                   "samples. Exit code 1 when it is not valid.")
    p.add_argument("graph", help="graph file (JSON)")
    p.add_argument("decomposition", help="decomposition file (JSON, as written by 'decompose -o')")
    p.add_argument("--C", type=positive_int, default=None, help="anonymity parameter (default: the files' 'C')")
    p.add_argument("--limit", type=nonnegative_int, default=20, help="at most this many problems listed (default 20)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    graph, graph_C = anondecomp.read_graph(args.graph)
    assignments, mult, out_C = anondecomp.read_decomposition(args.decomposition, graph)
    if args.C is None and None not in (graph_C, out_C) and graph_C != out_C:
        raise InvalidInputError(f"the graph file says C = {graph_C} but the decomposition says C = {out_C}; "
                                "pass --C to choose")
    C = resolve_C(args.C, graph_C if graph_C is not None else out_C)
    report = anondecomp.verify(graph, C, assignments, mult)
    try:
        print(report.summary(limit=args.limit))
        sys.stdout.flush()
    except BrokenPipeError:  # a reader that stopped early (| head) does not change the verdict
        silence_stdout()
    if not report.valid:
        print(f"anonbandits verify: invalid decomposition: {len(report.deficits)} pair(s) short of their "
              f"demand, {len(report.off_support)} placement(s) off a user's arms", file=sys.stderr)
    return 0 if report.valid else 1
