"""The solver benchmark: every method on every graph of a suite, one row per (graph, method) (issue 6).

Row columns (:data:`COLUMNS`): ``family, users, arms, C, U, method, total_assignments, lower_bound,
lp_lower_bound, distinct_assignments, seconds, peak_mb, verified``, plus ``status`` and ``label``.

* ``demand`` is D = max_i sum_j w_ij (the paper's alpha bounds are R <= alpha D + NK + 1, see :func:`alpha`);
* ``lower_bound`` is max_i sum_j ceil(w_ij); ``lp_lower_bound`` the certified column-generation LP bound of
  the graph (:func:`anondecomp.lp_lower_bound`, seeded with the best decomposition of the row's graph; the
  ``optimal`` method's own bound when it ran), the same for every method of a graph;
* ``seconds`` is the method's wall time; ``peak_mb`` the peak resident memory of the process during the call
  above the memory in use when it started (Linux ``VmHWM`` after resetting it; blank elsewhere);
* ``verified`` is the exact integer check of :func:`anondecomp.verify` (not timed);
* ``status``: ``ok``, ``time limit`` (``optimal`` stopped by the suite's time limit before it proved its
  result optimal: R may be far from the bound), ``not applicable`` (polytope on a graph whose columns of w/D
  fall below C+1), or the error's class name.

Progress is reported through a callback, so the solver layer stays free of progress-bar libraries.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from anondecomp.bench import families as fam
from anondecomp.decompose import decompose
from anondecomp.errors import AnonDecompError, MethodNotApplicableError
from anondecomp.lower_bound import lp_lower_bound
from anondecomp.methods.optimal import TIME_LIMIT_STATUS
from anondecomp.verify import verify

COLUMNS = (
    "family",
    "users",
    "arms",
    "C",
    "U",
    "method",
    "total_assignments",
    "lower_bound",
    "lp_lower_bound",
    "distinct_assignments",
    "seconds",
    "peak_mb",
    "verified",
    "status",
    "label",
    "demand",
)
METHODS = ("greedy", "block", "polytope", "randomized", "optimal")
SUITES = ("quick", "full", "real")
SOLVED = ("ok", TIME_LIMIT_STATUS)  # statuses of rows that carry a decomposition
TIME_LIMIT = {"quick": 20.0, "full": 120.0, "real": 50.0}  # seconds for ``optimal`` and for the LP bound, per graph


@dataclass(frozen=True)
class Case:
    """A graph of the suite, built on demand (large graphs are not all held in memory at once)."""

    family: str
    label: str
    make: Callable[[], fam.Instance]


def _scarce_params(full: bool) -> list[tuple]:
    """(N, K, C, U, D, seed): U < K(C+1) with one or two niche arms."""
    base = [
        (30, 4, 2, 6, 60),
        (40, 5, 2, 8, 100),
        (60, 6, 3, 6, 100),
        (80, 6, 3, 8, 120),
        (120, 6, 3, 10, 200),
        (150, 8, 3, 10, 300),
        (200, 8, 3, 12, 300),
        (300, 8, 4, 12, 400),
        (500, 10, 4, 15, 500),
        (1000, 10, 5, 20, 500),
    ]
    seeds = range(5) if full else range(3)
    big = [(10_000, 10, 5, 20, 500, 0)] + ([(10_000, 10, 5, 20, 500, 1), (100_000, 10, 5, 20, 300, 0)] if full else [])
    return [(*p, s) for s in seeds for p in base] + big


REAL_C = (3, 10, 20, 50)
"""Anonymity thresholds of the ``real`` family's OBD graphs (browsers' k-anonymity for ads is about k = 50)."""
REAL_SYNTHETIC = (
    (1000, 100, 10, 0),
    (1000, 100, 50, 0),
    (10_000, 100, 10, 0),
    (10_000, 100, 50, 0),
    (3000, 1000, 10, 0),
    (3000, 1000, 50, 0),
)
"""(users, items, C, seed) of the ``real`` family's synthetic logs (:func:`anondecomp.bench.real.powerlaw_log`)."""
OBD_ARCHIVE_ENV = "ANONDECOMP_OBD_ARCHIVE"
"""Environment variable naming the ``obp`` source archive; without it the ``real`` suite has no OBD graphs."""


def real_cases(obd_archive: str | None = None) -> list[Case]:
    """The ``real`` family: OBD at every C of :data:`REAL_C` (when ``obd_archive`` names the ``obp`` source
    archive) and the synthetic logs of :data:`REAL_SYNTHETIC`."""
    out = []
    if obd_archive:
        out += [Case("real", f"OBD C={C}", partial(_obd_instance, obd_archive, C)) for C in REAL_C]
    for N, M, C, s in REAL_SYNTHETIC:
        label = f"power-law N={N} items={M} C={C} seed={s}"
        out.append(Case("real", label, partial(_log_instance, N, M, C, s, label)))
    return out


def _obd_instance(archive: str, C: int) -> fam.Instance:
    """The OBD graph at ``C`` (built when its case runs: the archive is read then)."""
    from anondecomp.bench import real

    return fam.Instance("real", real.obd_graph(archive, C), C, C + 1, f"OBD C={C}")


def _log_instance(N: int, M: int, C: int, seed: int, label: str) -> fam.Instance:
    """A synthetic log of :data:`REAL_SYNTHETIC` (built when its case runs)."""
    from anondecomp.bench import real

    return fam.Instance("real", real.powerlaw_log(N, M, C, seed), C, C + 1, label)


def cases(suite: str) -> list[Case]:
    """The graphs of ``suite`` (``"quick"``: under 5 minutes on 2 cores; ``"full"``: larger and more seeds;
    ``"real"``: :func:`real_cases`, with OBD when the environment variable :data:`OBD_ARCHIVE_ENV` names the
    ``obp`` source archive)."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; choose one of {', '.join(SUITES)}")
    if suite == "real":
        return real_cases(os.environ.get(OBD_ARCHIVE_ENV))
    full = suite == "full"
    out: list[Case] = []

    def add(family, label, make):
        out.append(Case(family, label, make))

    for N, K, C, D in [(18, 3, 1, 30), (1000, 6, 3, 500), (10_000, 8, 5, 500)] + (
        [(100_000, 8, 5, 200), (100_000, 10, 5, 1000)] if full else [(100_000, 8, 5, 100)]
    ):
        add("abundant", f"N={N} K={K}", lambda N=N, K=K, C=C, D=D: fam.abundant(N, K, C, D, seed=N))
    for N, K, C, U, D, s in _scarce_params(full):
        add(
            "scarce",
            f"N={N} K={K} U={U} seed={s}",
            lambda N=N, K=K, C=C, U=U, D=D, s=s: fam.scarce(N, K, C, U, D, seed=s, niche=1 + (K >= 8)),
        )
    for K, C, m in [(6, 2, 2), (8, 3, 3), (10, 3, 4)] + ([(12, 4, 4), (16, 5, 6)] if full else []):
        add("niche-groups", f"K={K} m={m}", lambda K=K, C=C, m=m: fam.niche_groups(K, C, m, D=120, seed=K))
    for k, doc in enumerate(fam.recorded_documents()):
        if full or 300 <= doc["demand"] <= 5000:
            add("alg1", doc["label"], lambda k=k: fam.recorded(k)[0])
    for N, K, C, b in [(1000, 8, 3, 2), (10_000, 10, 5, 2)] + ([(100_000, 10, 5, 3)] if full else []):
        add("alg1-synth", f"N={N} K={K} batch={b}", lambda N=N, K=K, C=C, b=b: fam.alg1_synth(N, K, C, 300, N, b))
    return out


def _rss_reset() -> float | None:
    """Reset the peak-RSS counter; returns the current RSS in MB (``None`` where unsupported)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return _status_mb("VmRSS")
    except OSError:
        return None


def _status_mb(key: str) -> float | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def run_method(inst: fam.Instance, method: str, time_limit: float | None = None, seed: int = 0):
    """(row without ``lp_lower_bound``, decomposition or ``None``) for one method on one graph."""
    g = inst.graph
    row = {
        "family": inst.family,
        "users": g.n_users,
        "arms": g.n_arms,
        "C": inst.C,
        "U": inst.U,
        "method": method,
        "total_assignments": "",
        "lower_bound": g.lower_bound,
        "lp_lower_bound": "",
        "distinct_assignments": "",
        "seconds": "",
        "peak_mb": "",
        "verified": "",
        "status": "ok",
        "label": inst.label,
        "demand": g.normalized()[1],
    }
    base = _rss_reset()
    start = time.perf_counter()
    try:
        res = decompose(g, inst.C, method, seed=seed, time_limit=time_limit if method == "optimal" else None)
    except MethodNotApplicableError:
        row["status"] = "not applicable"
        return row, None
    except AnonDecompError as exc:
        row["status"] = type(exc).__name__
        return row, None
    row["seconds"] = round(time.perf_counter() - start, 4)
    peak = _status_mb("VmHWM")
    if base is not None and peak is not None:
        row["peak_mb"] = round(max(peak - base, 0.0), 1)
    row.update(
        total_assignments=res.total_assignments,
        distinct_assignments=res.n_distinct,
        verified=bool(verify(g, inst.C, res).valid),
    )
    if str(res.info.get("status", "")).startswith(TIME_LIMIT_STATUS):
        row["status"] = TIME_LIMIT_STATUS
    return row, res


def run_case(
    case: Case,
    methods=METHODS,
    time_limit: float | None = None,
    seed: int = 0,
    on_row: Callable[[dict], None] | None = None,
) -> list[dict]:
    """All ``methods`` on one graph, then its LP bound; ``on_row`` is called after each method (progress)."""
    inst = case.make()
    rows, results = [], []
    for method in methods:
        row, res = run_method(inst, method, time_limit, seed)
        rows.append(row)
        if res is not None and row["verified"]:
            results.append(res)
        if on_row is not None:
            on_row(row)
    bound = _graph_bound(inst, results, time_limit)
    for row in rows:
        row["lp_lower_bound"] = round(bound, 4) if bound is not None else ""
    return rows


def _graph_bound(inst: fam.Instance, results, time_limit) -> float | None:
    opt = [r for r in results if r.method == "optimal"]
    if opt:
        return float(opt[0].info["lp_lower_bound"])
    if not results:
        return None
    best = min(results, key=lambda r: r.total_assignments)
    return lp_lower_bound(inst.graph, inst.C, seed=best, time_limit=time_limit).value


def alpha(method: str, K: int, C: int, U: int) -> float | None:
    """The paper's multiplicative guarantee R <= alpha D (+ NK + 1) of ``method`` on a U-batched graph
    (greedy K, Section 3.4; block ceil(K(C+1)/U), Corollary 2; polytope 1, Corollary 1); ``None`` if none."""
    return {"greedy": K, "block": -(-K * (C + 1) // U), "polytope": 1}.get(method)


def summarize(rows: list[dict]) -> dict[tuple[str, str], dict]:
    """Per (family, method): graphs, mean and max of R / lp_lower_bound, mean R / D against the mean of the
    paper's alpha (:func:`alpha`), all verified, total seconds."""
    out: dict[tuple[str, str], dict] = {}
    for row in rows:
        if row["status"] not in SOLVED or row["lp_lower_bound"] in ("", 0):
            continue
        d = out.setdefault(
            (row["family"], row["method"]),
            {"ratios": [], "r_over_d": [], "alphas": [], "verified": True, "seconds": 0.0},
        )
        d["ratios"].append(row["total_assignments"] / row["lp_lower_bound"])
        d["r_over_d"].append(row["total_assignments"] / float(row["demand"]))
        a = alpha(row["method"], int(row["arms"]), int(row["C"]), int(row["U"]))
        d["alphas"].append(np.nan if a is None else a)
        d["verified"] &= bool(row["verified"])
        d["seconds"] += row["seconds"]
    return {
        k: {
            "graphs": len(v["ratios"]),
            "mean_ratio": float(np.mean(v["ratios"])),
            "max_ratio": float(np.max(v["ratios"])),
            "mean_r_over_d": float(np.mean(v["r_over_d"])),
            "max_r_over_d": float(np.max(v["r_over_d"])),
            "mean_alpha": float(np.mean(v["alphas"])),
            "verified": v["verified"],
            "seconds": v["seconds"],
        }
        for k, v in out.items()
    }
