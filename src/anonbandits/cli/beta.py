"""``anonbandits beta GRAPH.json --C 3``: beta(G) of Lemma 3 (paper 000), exactly for K <= 12.

beta(G) is the largest beta with beta * w_hat dominated by a point of the C-anonymity polytope P_C
(:mod:`anondecomp.beta`); Lemma 3 then gives a decomposition with at most D / beta + NK + 1 assignments.
Exact by the disjunctive LP over every arm set when at most 12 arms can open; otherwise column generation
returns a certified interval [lower, upper].
"""

from __future__ import annotations

import argparse
import json

import anondecomp
from anonbandits.cli.decompose import resolve_C
from anonbandits.cli.options import add_graph_arguments, check_outputs, positive_int, positive_seconds
from anondecomp.io import atomic_open

#: the extension of --json's file: it holds JSON, so its name says so (anything else is refused before any work)
JSON_SUFFIXES = (".json",)


def add_parser(sub) -> None:
    p = sub.add_parser(
        "beta",
        help="beta(G) of Lemma 3: exact for K <= 12, a certified interval above",
        description="Compute beta(G), the largest beta with beta * w/D in the C-anonymity "
        "polytope (Lemma 3 of paper 000; Open Problem 1).",
    )
    add_graph_arguments(p)
    p.add_argument("--C", type=positive_int, default=None, help="anonymity parameter (overrides the file's 'C')")
    p.add_argument(
        "--method",
        choices=("auto", "disjunctive", "colgen"),
        default="auto",
        help="disjunctive LP over every arm set (exact), column generation, or auto (default)",
    )
    p.add_argument(
        "--sense",
        choices=("dominate", "equal"),
        default="dominate",
        help="beta*w/D dominated by a point of P_C (default; Lemma 3 in both directions) or equal "
        "to one (the literal statement)",
    )
    p.add_argument(
        "--time-limit",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="stop column generation after this long, with the interval found",
    )
    p.add_argument(
        "--json",
        dest="json_out",
        default=None,
        metavar="FILE.json",
        help="also write the result here (JSON; the name must end in .json)",
    )
    p.add_argument(
        "--allow-large",
        action="store_true",
        help="build models above the size limits of docs/errors.md instead of refusing",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_outputs([("--json", args.json_out)], inputs=[args.graph], suffixes={"--json": JSON_SUFFIXES})
    graph, file_C = anondecomp.read_graph(args.graph, demand=args.demand)
    C = resolve_C(args.C, file_C)
    res = anondecomp.beta(
        graph, C, method=args.method, sense=args.sense, time_limit=args.time_limit, allow_large=args.allow_large
    )
    _, D = graph.normalized()
    if res.exact:
        print(f"beta(G)              {res.lower:.6f}   (exact; {res.method}, {res.n_faces} arm sets)")
    else:
        print(
            f"beta(G) in           [{res.lower:.6f}, {res.upper:.6f}]   (certified; {res.method}, "
            f"{res.n_faces} arm sets)"
        )
    print(f"users x arms         {graph.n_users} x {graph.n_arms}, C = {C}, D = {D:g}, sense = {args.sense}")
    if res.lower > 0:
        print(f"1 / beta             {1 / res.lower:.6f}")
        print(f"Lemma 3 bound        D/beta + NK + 1 = {res.lemma3_bound(graph):.1f} assignments")
    print(f"arm sets used        {len(res.faces)}")
    for mask, lam in sorted(zip(res.faces, res.lambdas, strict=True), key=lambda x: -x[1])[:10]:
        print(f"  lambda {lam:.4f}  {{{', '.join(graph.arm_names(mask.nonzero()[0]))}}}")
    print(f"wall time            {res.wall_time:.3f} s")
    if args.json_out:
        doc = {
            "C": C,
            "sense": args.sense,
            "method": res.method,
            "beta_lower": res.lower,
            "beta_upper": res.upper,
            "exact": res.exact,
            "demand": D,
            "lemma3_bound": res.lemma3_bound(graph) if res.lower > 0 else None,
            "arm_sets": [
                {"arms": graph.arm_names(m.nonzero()[0]), "lambda": float(lam)}
                for m, lam in zip(res.faces, res.lambdas, strict=True)
            ],
        }
        with atomic_open(args.json_out) as fh:
            json.dump(doc, fh, indent=1)
    return 0
