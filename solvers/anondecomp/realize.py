"""Integer face solutions -> explicit assignments, exactly (used by the ``optimal`` method, a choice of this
implementation: the paper does not say how to find optimal decompositions, Lemma 3 and Open Problem 1).

An integer *face solution* gives, for faces S_1..S_F (arm sets), lengths L_f and type-level counts
Y[f, (t, j)] (samples users of type t take on arm j in face f) with

    sum_j Y[f, (t, j)] <= n_t L_f,   sum_t Y[f, (t, j)] >= (C+1) L_f (j in S_f),   sum_f Y[f, (t, j)] >= n_t q_tj.

It is realised in two exact steps, both on integral flows (bipartite, totally unimodular):

1. **Per type** (users with identical demand rows are interchangeable): Y[:, t] is split into one integer profile
   per user, each with face rows <= L_f and arm totals >= q_tj. The per-user polytope is a transportation polytope,
   which has the integer decomposition property (Baum and Trotter, 1977: a point of n*T that is integral is a sum
   of n integral points of T); we peel profiles off one flow at a time, several users at once when they can share
   one.
2. **Per face**: the users x arms multigraph with user degrees <= L_f and arm degrees >= (C+1) L_f is cut
   into L_f assignments in which every user takes at most one arm and every arm of S_f holds >= C+1 users:
   an equitable edge colouring (de Werra, 1971: every bipartite multigraph has an L-colouring in which every
   vertex meets each colour floor or ceil(degree / L) times). We peel colour classes by flows, each with the
   largest multiplicity that keeps the remaining graph colourable, so a face needs few distinct assignments.

The total number of assignments is exactly sum_f L_f.
"""

from __future__ import annotations

import numpy as np

from anondecomp.errors import SolverError
from anondecomp.flows import transport
from anondecomp.result import arm_dtype


def _halvings(start: int) -> list[int]:
    out = []
    c = max(int(start), 1)
    while c > 1:
        out.append(c)
        c //= 2
    return out + [1]


def split_type(
    Y: np.ndarray, allowed: np.ndarray, lengths: np.ndarray, q: np.ndarray, k: int
) -> list[tuple[np.ndarray, int]]:
    """Split a type's face totals ``Y`` (F, K) into ``k`` integer per-user profiles (step 1 above).

    Each profile P has P >= 0 only where ``allowed``, face rows ``P.sum(1) <= lengths`` and arm totals
    ``P.sum(0) >= q``; the profiles, with their counts, sum to Y exactly. Requires ``Y.sum(1) <= k*lengths``
    and ``Y.sum(0) >= k*q``. Returns ``[(profile, count), ...]``.
    """
    Y = np.asarray(Y, dtype=np.int64).copy()
    F, K = Y.shape
    fr, ac = np.nonzero(allowed)
    out: list[tuple[np.ndarray, int]] = []
    c_try = k
    while k > 0:
        for c in _halvings(min(c_try, k)):
            rest = k - c
            row_lo = np.maximum(0, -((-(Y.sum(axis=1) - rest * lengths)) // c))
            col_hi = (Y.sum(axis=0) - rest * q) // c
            flow = transport(F, K, fr, ac, Y[fr, ac] // c, row_lo, lengths, q, col_hi)
            if flow is not None:
                break
        else:  # c = 1 is always feasible (integer decomposition property); reaching here is a bug
            raise SolverError("profile split failed: the type's totals are not a sum of feasible profiles")
        P = np.zeros((F, K), dtype=np.int64)
        P[fr, ac] = flow
        out.append((P, c))
        Y -= c * P
        k -= c
        c_try = 2 * c
    return out


def colour_face(H: np.ndarray, L: int, C: int) -> list[tuple[np.ndarray, int]]:
    """Cut the users x arms multigraph ``H`` (n, m) into ``L`` assignments (step 2 above).

    Requires ``H.sum(1) <= L`` and ``H.sum(0) >= (C+1) L``. Returns ``[(arm of each user or -1, count), ...]``
    with counts summing to L: in each, every arm holds >= C+1 users, and every user u takes arm j in exactly
    ``H[u, j]`` of the L assignments.
    """
    H = np.asarray(H, dtype=np.int64).copy()
    n, m = H.shape
    out: list[tuple[np.ndarray, int]] = []
    c_try = L
    while L > 0:
        rows = H.sum(axis=1)
        D = H.sum(axis=0)
        slack = D - (C + 1) * L
        for c in _halvings(min(c_try, L)):
            ui, aj = np.nonzero(H >= c)
            must = (rows > L - c).astype(np.int64)  # cannot sit out c assignments
            if _plainly_infeasible(n, m, ui, aj, must, C):
                continue
            col_hi = C + 1 + slack // c  # keeps every arm >= (C+1) per remaining assignment
            flow = transport(
                n,
                m,
                ui,
                aj,
                np.ones(len(ui), np.int64),
                must,
                np.ones(n, np.int64),
                np.full(m, C + 1),
                np.minimum(col_hi, n),
            )
            if flow is not None:
                break
        else:  # c = 1 is always feasible (equitable edge colouring); reaching here is a bug
            raise SolverError("face colouring failed: the face's degrees admit no colour class")
        arm = np.full(n, -1, dtype=np.int64)
        arm[ui[flow > 0]] = aj[flow > 0]
        c = _max_copies(H, arm, rows, slack, L, C)
        out.append((arm, c))
        on = arm >= 0
        H[np.flatnonzero(on), arm[on]] -= c
        L -= c
        c_try = 2 * c
    return out


def colour_assignments(
    H: np.ndarray, L: int, C: int, users: np.ndarray, arms: np.ndarray, park: np.ndarray
) -> tuple[list[np.ndarray], list[int]]:
    """:func:`colour_face` of ``H`` (rows: ``users``, columns: ``arms``) as whole assignments (the other users
    parked on ``park``) with their counts."""
    assignments, counts = [], []
    for arm, count in colour_face(H, L, C):
        a = park.copy()
        on = arm >= 0
        a[users[on]] = arms[arm[on]]
        assignments.append(a)
        counts.append(count)
    return assignments, counts


def _plainly_infeasible(n: int, m: int, ui: np.ndarray, aj: np.ndarray, must: np.ndarray, C: int) -> bool:
    """A colour class on edges (ui, aj) plainly impossible: an arm with fewer than C+1 users to take it, or a
    user who must play with no arm. Half the classes tried fail, most for these reasons, and the test costs
    far less than the flow that would find it out (the class found is the same)."""
    return bool((np.bincount(aj, minlength=m) < C + 1).any() or (must > np.bincount(ui, minlength=n)).any())


def _max_copies(H, arm, rows, slack, L, C) -> int:
    """Largest c with the remainder (H - c*class, L - c) still colourable (ratio test over the invariants)."""
    on = arm >= 0
    c = L
    if on.any():
        c = min(c, int(H[np.flatnonzero(on), arm[on]].min()))
    if (~on).any():
        c = min(c, int((L - rows[~on]).min()))
    size = np.bincount(arm[on], minlength=H.shape[1])
    over = size > C + 1
    if over.any():
        c = min(c, int((slack[over] // (size[over] - (C + 1))).min()))
    return max(c, 1)


def realize(
    types, faces: np.ndarray, lengths: np.ndarray, Y: np.ndarray, C: int, park: np.ndarray, n_arms: int
) -> tuple[np.ndarray, np.ndarray]:
    """Assignments (n, N) and multiplicities for an integer face solution (module docstring).

    ``types`` is a :class:`~anondecomp.lower_bound.UserTypes`; ``faces`` (F, K) arm masks; ``lengths`` (F,)
    integers; ``Y`` (F, P) integers over the types' pairs; ``park`` (N,) the arm of a user with nothing to do.
    """
    keep = lengths > 0
    faces, lengths, Y = faces[keep], np.asarray(lengths[keep], np.int64), np.asarray(Y[keep], np.int64)
    F, N = len(faces), len(types.of_user)
    # step 1: per-user profiles, as blocks (users, profile) sharing one profile
    blocks: list[tuple[np.ndarray, np.ndarray]] = []
    for t in range(types.n_types):
        mine = np.flatnonzero(types.ti == t)
        if len(mine) == 0:
            continue
        arms = types.aj[mine]
        users = np.flatnonzero(types.of_user == t)
        Yt = np.zeros((F, n_arms), dtype=np.int64)
        Yt[:, arms] = Y[:, mine]
        q = np.zeros(n_arms, dtype=np.int64)
        q[arms] = types.q[mine]
        allowed = faces & np.isin(np.arange(n_arms), arms)[None, :]
        pos = 0
        for P, count in split_type(Yt, allowed, lengths, q, int(types.counts[t])):
            blocks.append((users[pos : pos + count], P))
            pos += count
    # step 2: colour each face
    assignments, mults = [], []
    for f in range(F):
        S = np.flatnonzero(faces[f])
        H_all = np.zeros((N, len(S)), dtype=np.int64)
        for users, P in blocks:
            H_all[users] = P[f, S]
        users = np.flatnonzero(H_all.sum(axis=1) > 0)
        a, m = colour_assignments(H_all[users], int(lengths[f]), C, users, S, park)
        assignments += a
        mults += m
    if not assignments:
        return np.empty((0, N), dtype=arm_dtype(n_arms)), np.empty(0, np.int64)
    return np.array(assignments, dtype=arm_dtype(n_arms)), np.array(mults, dtype=np.int64)
