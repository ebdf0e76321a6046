"""Time-shared faces: near the lower bound on dense graphs where the polytope method does not apply.

Beyond paper 000 (its block method, Corollary 2, runs arm blocks one after the other, so a user whose arms
fall mostly in one block idles in the others: R ~ 1.5 D on dense graphs with N < K(C+1)). Here the faces
*overlap* and every user spreads each arm's demand over all the faces that open that arm:

1. **Faces.** G faces sharing a target length T (from the lower bound up) equally, up to one. Arm j, with
   total demand d_j, can fill C+1 users in at most d_j / (C+1) assignments, so it is open in
   n_j = floor(G d_j / ((C+1) T)) faces (clipped to 1..G); arms are dealt to faces by McNaughton's
   wrap-around rule, so every face opens floor or ceil(sum_j n_j / G) arms.
2. **Split.** Each user's demand r_ij is spread over the n_j faces of arm j, at most the face's share per
   user and face, so that every (face, arm) gets C+1 times the share where possible (:func:`split_demand`: an LP,
   rounded by one integral flow).
3. **Faces realised exactly**: each face's integer demand is coloured by
   :func:`~anondecomp.methods._common.colour_demand` (padding users onto open arms where an arm falls short,
   and lengthening the face only if that is not enough), so R is the sum of the face lengths and every pair
   gets its demand.

Several (G, T) are tried within a time budget and the shortest result is kept; ``auto`` uses it only when
it beats block. A trial's length is known once its faces are filled (:func:`~anondecomp.methods._common.fill_face`,
a few flows a face), so only the kept trial is coloured (one flow per distinct assignment: most of the cost).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from anondecomp.flows import transport
from anondecomp.graph import DemandGraph
from anondecomp.methods._common import Prepared, colour_filled, fill_face
from anondecomp.validation import DENSE_CELLS

FACE_COUNTS = (3, 4, 6, 8)  # tried in increasing order (raised to the fewest faces that can work)
TARGETS = (1.0, 1.03, 1.06, 1.1, 1.2, 1.35, 1.5)  # target length T, a multiple of the lower bound
BUDGET = 30.0  # seconds after which no new trial starts
MAX_LP_EDGES = 2_000_000  # larger splits are skipped: one LP would outlast the budget
CROSSOVER_EDGES = 50_000  # up to this size the LP's point is made a vertex: it rounds better


def arm_faces(demand: np.ndarray, C: int, G: int, T: int) -> np.ndarray:
    """(G, K) bool: which faces open which arm (step 1 of the module docstring)."""
    wanted = demand > 0
    n = np.where(wanted, np.clip(np.floor(G * demand / ((C + 1) * T)), 1, G), 0).astype(np.int64)
    order = np.argsort(-n, kind="stable")
    start = (np.cumsum(n[order]) - n[order]) % G  # wrap-around: each arm continues where the last ended
    faces = np.zeros((G, len(demand)), dtype=bool)
    k = np.arange(G)
    faces[:, order] = ((k[:, None] - start[None, :]) % G) < n[order][None, :]
    return faces


def split_demand(
    graph: DemandGraph, required: np.ndarray, faces: np.ndarray, caps: np.ndarray, C: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Integer per-face demands summing to ``required`` (per edge of ``graph``; step 2), as entries (face, edge,
    demand) with one entry per (face, pair) of positive demand, or ``None`` if none fits ``caps`` (or the LP
    would have more than ``MAX_LP_EDGES`` variables).

    An LP on HiGHS spreads each pair over its arm's faces with at most ``caps[g]`` per user in face g, and
    minimises the coverage shortfall below (C+1) ``caps[g]`` per (face, arm); its solution is then rounded by
    one integral bounded flow that keeps every entry within floor / ceil of the LP value (the user and pair
    constraints form a bipartite, totally unimodular system that the LP point satisfies). The LP runs on the
    interior-point solver, without crossover above ``CROSSOVER_EDGES`` variables: any feasible point rounds,
    and that is 10x faster than simplex there; smaller LPs get a vertex, which rounds with less loss.
    """
    import highspy
    import scipy.sparse as sp

    from anondecomp.highs import load_model, new_highs

    G, (N, K) = len(faces), graph.shape
    pe = np.flatnonzero(required > 0)  # the pairs with demand, row-major
    pi, pj = graph.edge_users[pe].astype(np.int64), graph.edge_arms[pe].astype(np.int64)
    r = np.asarray(required, dtype=np.int64)[pe]
    p, g = np.nonzero(faces[:, pj].T)  # (pair, face) edges
    E, P = len(p), len(r)
    if E > MAX_LP_EDGES:
        return None
    node = pi[p] * G + g  # the (user, face) row of each edge
    cover = g * K + pj[p]  # the (face, arm) row of each edge
    used = np.unique(cover)
    cover_row = np.searchsorted(used, cover)
    n_rows = P + N * G + len(used)
    rows = np.concatenate([p, P + node, P + N * G + cover_row, P + N * G + np.arange(len(used))])
    cols = np.concatenate([np.arange(E)] * 3 + [E + np.arange(len(used))])
    A = sp.csc_matrix((np.ones(3 * E + len(used)), (rows, cols)), shape=(n_rows, E + len(used)))
    need = (C + 1) * caps[used // K].astype(float)
    h = new_highs()
    h.setOptionValue("solver", "ipm")
    h.setOptionValue("run_crossover", "on" if E <= CROSSOVER_EDGES else "off")
    load_model(
        h,
        A,
        np.concatenate([np.zeros(E), np.ones(len(used))]),
        np.zeros(E + len(used)),
        np.concatenate([r[p].astype(float), need]),
        np.concatenate([r, np.full(N * G, -np.inf), need]),
        np.concatenate([r, np.tile(caps.astype(float), N), np.full(len(used), np.inf)]),
    )
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    y = np.asarray(h.getSolution().col_value)[:E]
    lo = np.floor(y + 1e-9).astype(np.int64)
    hi = np.ceil(y - 1e-9).astype(np.int64)
    row_hi = np.tile(caps, N) - np.bincount(node, weights=lo, minlength=N * G).astype(np.int64)
    col = r - np.bincount(p, weights=lo, minlength=P).astype(np.int64)
    flow = transport(N * G, P, node, p, hi - lo, np.zeros(N * G, np.int64), row_hi, col, col)
    if flow is None:
        return None
    return g, pe[p], lo + flow


@dataclass(frozen=True)
class TimeSharePlan:
    """The kept trial of :func:`timeshare_plan`, filled but not yet coloured.

    ``faces`` holds one :func:`~anondecomp.methods._common.fill_face` result ``(L, H, users, arms)`` per face;
    ``total`` = sum of the L, the number of assignments :meth:`colour` makes.
    """

    prep: Prepared
    total: int
    faces: list
    info: dict

    def colour(self) -> tuple[np.ndarray, np.ndarray, dict]:
        """The plan's assignments, multiplicities and info (the colouring is most of a trial's cost)."""
        found = [colour_filled(self.prep, f) for f in self.faces]
        return np.concatenate([f[0] for f in found]), np.concatenate([f[1] for f in found]), self.info

    def face_solution(self, types) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The plan as an integer face solution (faces (F, K), lengths (F,), Y (F, P)) over ``types`` (a
        :class:`~anondecomp.lower_bound.UserTypes` of the same demand), without colouring: face k opens its
        arms for L_k assignments; its users take H_k's samples, and sit parked for the rest of its assignments,
        which counts where the parking arm is one of its open arms. A feasible point of the face program.

        It is :func:`~anondecomp.methods.optimal.face_solution` of :meth:`colour`'s assignments (faces merged
        and listed as :func:`~anondecomp.lower_bound.open_sets` does, longest first) except where parked users
        fill an arm outside a face to C+1 in some assignments, which that count adds as further faces.
        """
        from anondecomp.methods._common import park

        graph = self.prep.graph
        K, N = graph.n_arms, graph.n_users
        pair = np.full((types.n_types, K), -1, dtype=np.int64)
        pair[types.ti, types.aj] = np.arange(types.n_pairs)
        parked = pair[types.of_user, park(graph)]  # (N,) the pair of each user's parking arm
        masks = np.zeros((len(self.faces), K), dtype=bool)
        lengths = np.zeros(len(self.faces), dtype=np.int64)
        Y = np.zeros((len(self.faces), types.n_pairs), dtype=np.int64)
        for k, (L, H, users, arms) in enumerate(self.faces):
            masks[k, arms] = True
            lengths[k] = L
            ui, aj = np.nonzero(H)
            Y[k] = np.bincount(pair[types.of_user[users[ui]], arms[aj]], weights=H[ui, aj], minlength=types.n_pairs)
            idle = np.full(N, int(L), dtype=np.int64)
            idle[users] -= H.sum(axis=1)
            on = (parked >= 0) & masks[k][park(graph)] & (idle > 0)
            Y[k] += np.bincount(parked[on], weights=idle[on], minlength=types.n_pairs).astype(np.int64)
        faces, inverse = np.unique(masks, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        weight = np.bincount(inverse, weights=lengths, minlength=len(faces)).astype(np.int64)
        merged = np.zeros((len(faces), types.n_pairs), dtype=np.int64)
        np.add.at(merged, inverse, Y)
        order = np.argsort(-weight, kind="stable")
        return faces[order], weight[order], merged[order]


def timeshare(
    prep: Prepared, budget: float | None = None, stop_at: int | None = None
) -> tuple[np.ndarray, np.ndarray, dict] | None:
    """The shortest time-shared decomposition found (assignments, multiplicities, info), or ``None`` when no
    trial succeeds. No new trial starts after ``budget`` seconds (default ``BUDGET``) or once R <= ``stop_at``.
    """
    plan = timeshare_plan(prep, budget, stop_at)
    return None if plan is None else plan.colour()


def timeshare_plan(prep: Prepared, budget: float | None = None, stop_at: int | None = None) -> TimeSharePlan | None:
    """:func:`timeshare` before its colouring: the shortest trial's filled faces, or ``None``."""
    start = time.perf_counter()
    budget = BUDGET if budget is None else budget
    graph = prep.graph
    req = prep.edge_required
    if not (req > 0).any():  # no demand (every user pads): nothing to time-share
        return None
    LB = prep.lower_bound
    demand = np.zeros(graph.n_arms, dtype=np.int64)
    np.add.at(demand, graph.edge_arms, req)
    # a face opens at most N / (C+1) arms, and every wanted arm needs a face: at least this many faces
    fewest = -(-int((demand > 0).sum()) // max(graph.n_users // (prep.C + 1), 1))
    counts = sorted({max(G, fewest) for G in FACE_COUNTS} | {k * fewest + 1 for k in range(1, 5)})
    best = None  # each trial's faces are filled (a few flows a face), and only the kept one is coloured
    for factor in TARGETS:
        T = int(np.ceil(factor * LB))
        if best is not None and best.total <= T:  # a longer target would not do better
            return best
        for G in counts:
            if time.perf_counter() - start > budget or (best is not None and best.total <= (stop_at or 0)):
                return best
            if G * graph.n_arms > DENSE_CELLS:  # (G, K) face masks: skipped, never allocated (3 GB at G = K = 20,000)
                continue
            faces = arm_faces(demand, prep.C, G, T)
            caps = T // G + (np.arange(G) < T % G)  # face shares summing to T
            parts = split_demand(graph, req, faces, caps.astype(np.int64), prep.C)
            if parts is None:
                continue
            found = [fill_face(prep, part, faces[k]) for k, part in _face_demands(graph, parts, G)]
            filled = [f for f in found if f is not None]
            if len(filled) < len(found):  # some face has no feasible length
                continue
            total = sum(f[0] for f in filled)  # the colouring makes exactly L assignments of a face
            if best is None or total < best.total:
                best = TimeSharePlan(prep, int(total), filled, {"faces": G, "target": T})
    return best


def _face_demands(graph: DemandGraph, parts: tuple[np.ndarray, np.ndarray, np.ndarray], G: int):
    """Each face with demand, and its demand per edge, from :func:`split_demand`'s entries (one face at a time:
    G demands of all the edges at once would be G x edges)."""
    face, edge, value = parts
    for k in range(G):
        mine = (face == k) & (value > 0)
        if mine.any():
            part = np.zeros(graph.nnz, dtype=np.int64)
            part[edge[mine]] = value[mine]
            yield k, part
