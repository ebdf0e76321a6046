"""``anonbandits replan GRAPH PLAN RECEIVED -o OUT``: decompose the demand left after the samples received so
far, warm-started from the blocks not yet run (:func:`anondecomp.replan`).

GRAPH is read as ``decompose`` reads it; PLAN is a JSON decomposition of it (``decompose -o PLAN.json``), whose
C, absence and confidence it keeps unless ``--absence`` or ``--confidence`` say otherwise; RECEIVED is a CSV or
Parquet table ``user, arm, count`` (docs/formats.md). OUT is written as ``decompose -o`` writes it: a
decomposition of the residual graph, over the same users and arms, which ``verify`` checks against the residual.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import anondecomp
from anonbandits.cli.decompose import warn_json_size
from anonbandits.cli.options import (
    DECOMPOSITION_SUFFIXES,
    add_absence_arguments,
    add_graph_arguments,
    check_outputs,
    nonnegative_int,
)
from anonbandits.cli.progress import Progress
from anondecomp import columnar
from anondecomp.compact import is_compact_output
from anondecomp.errors import InvalidInputError
from anondecomp.io import absence_from_header, read_decomposition_document, write_graph_table


def add_parser(sub) -> None:
    p = sub.add_parser(
        "replan",
        help="decompose the demand left after the samples received so far",
        description="Decompose the residual demand max(w - received, 0) of a graph, warm-started from "
        "the blocks of a plan not yet run: the plan's assignments are kept as far as they still serve it "
        "and what they leave short is decomposed; never longer than a cold decomposition of the residual "
        "(docs/platform.md).",
    )
    add_graph_arguments(p)
    p.add_argument("plan", help="the blocks not yet run: a JSON decomposition of GRAPH (decompose -o PLAN.json)")
    p.add_argument("received", help="samples received so far: a CSV or Parquet table with columns user, arm, count")
    p.add_argument("-o", "--output", required=True, help="write the new decomposition here (JSON, or compact Parquet)")
    p.add_argument(
        "--residual",
        default=None,
        metavar="PATH",
        help="also write the residual graph, an edge table (CSV, or Parquet for PATH.parquet) that verify reads "
        "with the new decomposition",
    )
    add_absence_arguments(p, "the plan's")
    p.add_argument("--method", default="auto", choices=anondecomp.METHODS, help="decomposition method (default auto)")
    p.add_argument("--seed", type=nonnegative_int, default=None, help="seed of the method's randomized choices")
    p.add_argument(
        "--best-effort",
        action="store_true",
        help="cover every pair that can be covered and report the rest instead of failing",
    )
    p.add_argument(
        "--compare-cold",
        action="store_true",
        help="also decompose the residual cold and keep the shorter (default: the warm start only, never slower)",
    )
    p.set_defaults(func=run)


def phase(label: str) -> Progress:
    """Progress on stderr while a phase runs (:class:`anonbandits.cli.progress.Progress`)."""
    return Progress(label, command="anonbandits replan")


def read_plan(path: str, graph: anondecomp.DemandGraph) -> anondecomp.Decomposition:
    """The plan file as a :class:`~anondecomp.Decomposition` of ``graph``, its absence model in ``info``."""
    if columnar.file_kind(path) != "json":
        raise InvalidInputError(f"{path}: PLAN must be a JSON decomposition (decompose -o PLAN.json)")
    assignments, mult, C, header = read_decomposition_document(path, graph)
    if C is None:
        raise InvalidInputError(f"{path}: the plan has no 'C'")
    if mult.dtype == object:
        raise InvalidInputError(f"{path}: a multiplicity does not fit a 64-bit integer")
    robust = absence_from_header(header, graph, path)
    if robust and robust["confidence"] is None:
        robust["confidence"] = 0.95
    return anondecomp.Decomposition(graph, C, str(header.get("method", "plan")), assignments, mult, info=robust)


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    check_outputs(
        [("-o", args.output), ("--residual", args.residual)],
        inputs=[args.graph, args.plan, args.received],
        parts=["-o"],
        suffixes={"-o": DECOMPOSITION_SUFFIXES, "--residual": (".csv", ".parquet", ".pq")},
    )
    with phase(f"reading {args.graph}"):
        graph, _ = anondecomp.read_graph(args.graph, demand=args.demand)
    with phase(f"reading {args.plan} and {args.received}"):
        plan = read_plan(args.plan, graph)
        received = columnar.read_received(args.received, graph)
    absence = args.absence if args.absence is not None else plan.info.get("absence")
    if absence is not None and np.ndim(absence) and is_compact_output(args.output):
        raise InvalidInputError(
            f"-o {args.output}: one absence per user is written (and verified) as JSON, whose groups are named; "
            "give -o OUT.json"
        )
    options = {} if args.seed is None else {"seed": args.seed}
    with phase("solving"):
        result = anondecomp.replan(
            graph,
            plan,
            received,
            absence=args.absence,
            confidence=args.confidence,
            method=args.method,
            best_effort=args.best_effort,
            compare_cold=args.compare_cold,
            **options,
        )
    warn_json_size(result, args.output)
    with phase(f"writing {args.output}"):
        anondecomp.write_decomposition(result, args.output)
    if args.residual:
        with phase(f"writing {args.residual}"):
            write_graph_table(result.graph, args.residual, C=result.C)
    print(result.summary())
    demand = result.graph.edge_required
    print(f"residual demand      {int(demand.sum())} samples over {int((demand > 0).sum())} pairs")
    info = result.info
    print(
        f"plan kept            {info['plan_kept']} of {plan.total_assignments} assignments (warm start: R = "
        f"{info['warm_total']}"
        + (f", cold decomposition: R = {info['cold_total']}" if info["cold_total"] is not None else "")
        + f"; {info['replan']} returned)"
    )
    print(f"total wall time      {time.perf_counter() - start:.3f} s (read, solve, write)")
    return 0
