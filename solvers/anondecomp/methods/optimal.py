"""Optimal decomposition by column generation and an integer face program (a choice of this implementation).

Beyond paper 000 (which leaves optimal decompositions open: Lemma 3 and Open Problem 1). Steps:

1. **Seed**: ``auto`` (polytope when it applies, else the better of block and time-shared faces). If it meets
   the trivial bound max_i sum_j ceil(w_ij) it is optimal and returned as is. Time-shared faces enter the
   next steps as their integer face solution, read off the filled faces
   (:meth:`~anondecomp.methods.timeshare.TimeSharePlan.face_solution`), and are coloured into assignments only
   if they are the answer: their colouring, one maximum flow per distinct assignment, cost more than the
   rest of the method on batches of a few thousand distinct assignments.
2. **LP bound**: face column generation over user types (:mod:`anondecomp.lower_bound`), the master seeded
   with the seed's faces; its value is a certified lower bound on R for every method.
3. **Integer program**: the same face program with integer face lengths L_S and integer type-level counts
   (an exact model of decompositions: step 4 realises any of its solutions), started from the seed (so it
   never does worse), on HiGHS MIP; over the faces the LP uses plus the seed's, then, while ceil(LP bound)
   is not reached, over every face generated, then (at most 6 wanted arms) over every arm set, where it is
   exact. It usually meets ceil(LP bound), which proves optimality.
4. **Realisation** (:mod:`anondecomp.realize`): exact, on integral flows; R is exactly sum_S L_S. A final
   exact check (and :func:`~anondecomp.methods._common.repair`, never needed in our tests) guarantees the
   result verifies.

A ``time_limit`` (seconds) bounds the whole run; the best decomposition found is returned with its certified
gap ``info["gap"] = R / ceil(bound) - 1``, and a run cut by the limit before it proved optimality says so:
its ``info["status"]`` starts with ``"time limit"``.
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from anondecomp.graph import DemandGraph
from anondecomp.lower_bound import ColumnGeneration, FaceProgram, UserTypes, open_sets
from anondecomp.methods._common import park, repair
from anondecomp.methods.route import TimeShared, auto_choice
from anondecomp.result import Decomposition, compress
from anondecomp.validation import Prepared, prepare
from anondecomp.verify import verify

DEFAULT_IP_SECONDS = 60.0  # for the integer programs when no time limit is given
CG_SHARE = 0.6  # with a time limit: column generation gets at most this share, the IP the rest
ALL_FACES_MAX_ARMS = 6  # up to this many wanted arms, a last integer program runs over every arm set
TIME_LIMIT_STATUS = "time limit"  # opens the status of a run the time limit cut before it proved optimality


def face_solution(
    assignments: np.ndarray, multiplicities: np.ndarray, types: UserTypes, prep: Prepared
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A decomposition as an integer face solution: (faces (F, K), lengths (F,), Y (F, P)).

    Face of an assignment = the wanted arms holding >= C+1 users; Y counts each informative (type, arm) sample.
    """
    K = prep.graph.n_arms
    wanted = _wanted(prep)
    faces, _ = open_sets(assignments, multiplicities, prep.C, wanted)
    index = {f.tobytes(): k for k, f in enumerate(faces)}
    lengths = np.zeros(len(faces), dtype=np.int64)
    Y = np.zeros((len(faces), types.n_pairs), dtype=np.int64)
    for a, m in zip(np.asarray(assignments, np.int64), multiplicities, strict=True):
        counts = np.bincount(a, minlength=K)
        S = (counts >= prep.C + 1) & wanted
        if not S.any():
            continue
        f = index[S.tobytes()]
        lengths[f] += m
        p = types.pair_of(types.of_user, a)
        p = p[(p >= 0) & S[a]]
        Y[f] += m * np.bincount(p, minlength=types.n_pairs)
    return faces, lengths, Y


def _wanted(prep: Prepared) -> np.ndarray:
    """(K,) bool: the arms some user needs a sample of."""
    return np.bincount(prep.graph.edge_arms[prep.edge_required > 0], minlength=prep.graph.n_arms) > 0


def optimal_decomposition(
    graph: DemandGraph,
    C: int,
    *,
    best_effort: bool = False,
    time_limit: float | None = None,
    rng: np.random.Generator | None = None,
    vertices: str = "auto",
) -> Decomposition:
    """A decomposition with the fewest assignments we can find, and a certified lower bound (beyond the paper).

    Parameters
    ----------
    graph, C, best_effort : as for :func:`~anondecomp.decompose`.
    time_limit : seconds for column generation (at most 60% of it) and the integer programs; the exact
        realisation of the solution found comes after. ``None`` runs column generation to convergence and
        gives the integer programs 60 s.
    rng, vertices : passed to the seed method (``auto``).

    Returns
    -------
    Decomposition whose ``info`` holds ``lp_lower_bound`` (certified: no decomposition has fewer
    assignments), ``lp_converged``, ``gap`` (R / ceil(bound) - 1; 0 proves optimality), ``seed`` and
    ``seed_total`` (the seed method and its R), ``faces`` (distinct arm sets used), ``iterations`` and
    ``status``.

    Examples
    --------
    >>> from anondecomp.bench.families import niche_groups
    >>> inst = niche_groups(6, 2, 2, D=60, seed=0)   # 6 groups of 3 users; block needs 100 assignments
    >>> d = optimal_decomposition(inst.graph, C=2)   # the seed (auto: time-shared faces) meets the bound
    >>> d.total_assignments, d.info["gap"], d.info["seed"], d.info["seed_total"], d.info["status"]
    (60, 0.0, 'timeshare', 60, 'seed meets the trivial bound')
    """
    start = time.perf_counter()
    deadline = None if time_limit is None else start + float(time_limit)
    prep = prepare(graph, C, best_effort)
    # time-shared faces stay uncoloured until they are the answer: the integer program usually beats them, and
    # their colouring (one maximum flow per distinct assignment) cost more than everything else
    seed = auto_choice(graph, prep.C, best_effort=best_effort, rng=rng, vertices=vertices)
    trivial = prep.lower_bound
    info = {"seed": seed.method, "seed_total": seed.total_assignments, "iterations": 0}
    if seed.total_assignments <= trivial:  # the seed meets max_i sum_j ceil(w_ij): optimal, LP = trivial
        return _result(
            graph, prep, *_assignments(seed), start, info, float(trivial), True, "seed meets the trivial bound"
        )
    types = UserTypes.from_prepared(prep)
    if isinstance(seed, TimeShared):
        seed_faces, seed_lengths, seed_Y = seed.plan.face_solution(types)
    else:
        seed_faces, seed_lengths, seed_Y = face_solution(seed.assignments, seed.multiplicities, types, prep)
    cg = ColumnGeneration(types, prep.C, graph.n_arms)
    cg.add_initial_faces(seed_faces)
    cg.run(None if time_limit is None else start + CG_SHARE * float(time_limit), floor=float(trivial))
    bound = max(cg.bound, float(trivial))
    info["iterations"], info["user_types"] = cg.iterations, types.n_types
    best: tuple[np.ndarray, np.ndarray] | None = None  # None: the seed
    status = "seed (integer program found nothing better)"
    target = int(np.ceil(bound - 1e-6))
    if seed.total_assignments > target:
        mu, _ = cg.master.solution()
        used = [cg.master.faces[k] for k in np.flatnonzero(mu > 1e-9)]
        tiers = [list(seed_faces) + used, list(seed_faces) + cg.master.faces]
        wanted = np.unique(types.aj)
        if len(wanted) <= ALL_FACES_MAX_ARMS:  # every arm set: the face program is then exact
            tiers.append(
                tiers[1]
                + [
                    np.isin(np.arange(graph.n_arms), wanted[list(c)])
                    for r in range(1, len(wanted) + 1)
                    for c in itertools.combinations(range(len(wanted)), r)
                ]
            )
        incumbent = (list(seed_faces), seed_lengths, seed_Y)
        ip_deadline = deadline if deadline is not None else time.perf_counter() + DEFAULT_IP_SECONDS
        for faces in tiers:
            left = ip_deadline - time.perf_counter()
            if left <= 0:
                break
            found = _integer_program(types, prep.C, faces, incumbent, left)
            if found is not None and found[1].sum() < incumbent[1].sum():
                incumbent = found
            if incumbent[1].sum() <= target:
                break
        if incumbent[1].sum() < seed.total_assignments:
            best = _realize(prep, types, np.array(incumbent[0]), incumbent[1], incumbent[2])
            status = "optimal" if incumbent[1].sum() <= target else "integer program (gap open)"
    elif cg.converged:
        status = "seed is optimal"
    if deadline is not None and time.perf_counter() >= deadline and status not in ("optimal", "seed is optimal"):
        status = f"{TIME_LIMIT_STATUS}: {status}"
    return _result(graph, prep, *(best or _assignments(seed)), start, info, bound, cg.converged, status)


def _assignments(seed) -> tuple[np.ndarray, np.ndarray]:
    """The seed's assignments and multiplicities (time-shared faces coloured here, when they are the answer)."""
    if isinstance(seed, TimeShared):
        seed = seed.decomposition()
    return seed.assignments, seed.multiplicities


def _integer_program(types: UserTypes, C: int, faces: list[np.ndarray], incumbent, seconds: float):
    """The face program with integer lengths and counts over ``faces``, started from ``incumbent``
    (faces, lengths, Y). Returns (faces, lengths, Y) of the best solution HiGHS finds, or ``None``."""
    ip = FaceProgram(types, C)
    for S in faces:
        ip.add_face(S)
    ip.make_integer()
    ip.h.setOptionValue("mip_abs_gap", 1 - 1e-6)  # R is an integer: within 1 of the bound is optimal
    lengths = np.zeros(len(ip.faces))
    Y = np.zeros((len(ip.faces), types.n_pairs))
    for S, length, y in zip(*incumbent, strict=True):
        k = ip.index(S)
        lengths[k], Y[k] = length, y
    ip.set_start(lengths, Y)
    if not ip.solve(seconds):
        return None
    L, Yi = ip.solution()
    return list(ip.faces), np.round(L).astype(np.int64), np.round(Yi).astype(np.int64)


def _realize(prep: Prepared, types: UserTypes, faces, lengths, Y) -> tuple[np.ndarray, np.ndarray]:
    from anondecomp.realize import realize

    a, m = realize(types, faces, lengths, Y, prep.C, park(prep.graph), prep.graph.n_arms)
    return compress(a, m)


def _result(graph, prep, assignments, multiplicities, start, info, bound, converged, status) -> Decomposition:
    report = verify(graph, prep.C, assignments, multiplicities, required=prep.required)
    a, m, repaired = repair(prep, assignments, multiplicities) if not report.valid else (assignments, multiplicities, 0)
    total = int(m.sum())
    target = int(np.ceil(bound - 1e-6))
    faces = open_sets(a, m, prep.C, _wanted(prep))[0] if len(a) else np.empty((0, 0))
    gap = total / target - 1 if target > 0 else 0.0
    info = {
        **info,
        "lp_lower_bound": bound,
        "lp_converged": bool(converged),
        "gap": gap,
        "status": status,
        "faces": len(faces),
        "repaired": repaired,
    }
    return Decomposition(
        graph, prep.C, "optimal", a, m, uncovered=prep.uncovered, wall_time=time.perf_counter() - start, info=info
    )
