"""Pieces the methods share: vertices to assignments, repair, faces (input checks: :mod:`anondecomp.validation`)."""

from __future__ import annotations

import numpy as np

from anondecomp.caratheodory import caratheodory
from anondecomp.graph import DemandGraph
from anondecomp.result import arm_dtype, compress
from anondecomp.schedule import phase_schedule
from anondecomp.validation import Prepared, check_vertices
from anondecomp.validation import prepare as prepare  # re-exported: methods/greedy.py imports it from here
from anondecomp.verify import coverage

SCHEDULE_RETRIES = 3


def park(graph: DemandGraph) -> np.ndarray:
    """The arm a user sits on when an assignment has nothing for it: its first support arm."""
    return np.argmax(graph.support, axis=1)


def vertices_to_assignments(vertices: np.ndarray, graph: DemandGraph) -> np.ndarray:
    """Carathéodory vertices (-1 = user not on any arm) -> total assignments (idle users parked)."""
    return np.where(vertices >= 0, vertices, park(graph)[None, :]).astype(arm_dtype(graph.n_arms))


def greedy_assignments(graph: DemandGraph, arms: np.ndarray) -> np.ndarray:
    """For each arm j: every user who may play j is on j, the others parked (spec 4.1's M_j)."""
    base = park(graph)
    out = np.repeat(base[None, :], len(arms), axis=0)
    for r, j in enumerate(arms):
        out[r, graph.support[:, j]] = j
    return out.astype(arm_dtype(graph.n_arms))


def repair(prep: Prepared, assignments: np.ndarray, mult: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Add greedy assignments for any pair left short (floating-point rounding in Carathéodory weights).

    Returns the compressed decomposition and the number of assignments the repair added.
    """
    got = coverage(assignments, mult, prep.C, prep.graph.n_arms)
    short = np.maximum(prep.required - got, 0)
    arms = np.flatnonzero(short.max(axis=0) > 0)
    if len(arms) == 0:
        return assignments, mult, 0
    extra_m = short[:, arms].max(axis=0).astype(np.int64)
    assignments = np.concatenate([assignments, greedy_assignments(prep.graph, arms)])
    mult = np.concatenate([mult, extra_m])
    return assignments, mult, int(extra_m.sum())


def decompose_face(prep: Prepared, required: np.ndarray, x: np.ndarray, open_arms: np.ndarray,
                   rng: np.random.Generator | None, vertices: str = "auto") -> tuple[np.ndarray, np.ndarray, str]:
    """Decompose demand ``required`` whose normalised point ``x`` lies in P_C(open_arms).

    ``vertices="auto"`` tries the phase schedule (deterministic, then a few randomised rotations) and falls
    back to the exact Carathéodory procedure, with multiplicities ``ceil(lambda_k * L)`` where L scales x up
    to the demand; ``"caratheodory"`` goes straight to it; ``"schedule"`` never falls back (a thin slot is
    then left to the final repair). Returns assignments, multiplicities and the route taken.
    """
    check_vertices(vertices)
    tries = 0 if vertices == "caratheodory" else SCHEDULE_RETRIES + 1
    for attempt in range(tries):
        sched = phase_schedule(required, prep.graph.support, prep.C,
                               rng=None if attempt == 0 else (rng or np.random.default_rng(attempt)))
        if sched.valid or vertices == "schedule":
            return sched.assignments, sched.multiplicities, "schedule"
    res = caratheodory(x, prep.C, open_arms)
    pos = x > 0
    scale = float((required[pos] / x[pos]).max()) if pos.any() else 0.0
    mult = np.ceil(res.weights * scale - 1e-9).astype(np.int64)
    keep = mult > 0
    a, m = compress(vertices_to_assignments(res.vertices[keep], prep.graph), mult[keep])
    return a, m, "caratheodory"
