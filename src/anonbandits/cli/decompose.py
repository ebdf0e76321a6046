"""``anonbandits decompose GRAPH.json --C 3 [--method ...] [-o OUT.json]``: solve and summarise."""

from __future__ import annotations

import argparse
import time

import anondecomp
from anondecomp.errors import InvalidInputError


def add_parser(sub) -> None:
    p = sub.add_parser("decompose", help="solve a C-anonymous decomposition of a JSON demand graph",
                       description="Solve a C-anonymous decomposition of a demand graph (node-link JSON or "
                                   "batched form; see docs/formats.md) and print its summary.")
    p.add_argument("graph", help="graph file (JSON)")
    p.add_argument("--C", type=int, default=None, help="anonymity parameter (overrides the file's 'C')")
    p.add_argument("--method", default="auto", choices=anondecomp.METHODS, help="decomposition method (default auto)")
    p.add_argument("-o", "--output", help="write the decomposition here (JSON)")
    p.add_argument("--seed", type=int, default=0, help="seed for randomized choices (default 0)")
    p.add_argument("--best-effort", action="store_true",
                   help="cover every pair that can be covered and report the rest instead of failing")
    p.set_defaults(func=run)


def resolve_C(cli_C: int | None, file_C: int | None) -> int:
    """The command line's C wins over the file's; one of them must be given."""
    C = cli_C if cli_C is not None else file_C
    if C is None:
        raise InvalidInputError("no C given: pass --C or put \"C\" in the graph file")
    if C < 1:
        raise InvalidInputError(f"C must be at least 1, got {C}")
    return C


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    graph, file_C = anondecomp.read_graph(args.graph)
    C = resolve_C(args.C, file_C)
    result = anondecomp.decompose(graph, C, method=args.method, seed=args.seed, best_effort=args.best_effort)
    if args.output:
        anondecomp.write_decomposition(result, args.output)
    print(result.summary())
    print(f"total wall time      {time.perf_counter() - start:.3f} s (read, solve, write)")
    if len(result.uncovered):
        shown = ", ".join(f"({graph.users[i]}, {graph.arms[j]})" for i, j in result.uncovered[:10])
        print(f"not coverable (arm wanted by <= C users): {shown}{' ...' if len(result.uncovered) > 10 else ''}")
    return 0
