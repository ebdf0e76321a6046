"""Decompositions from a fractional face solution of the covering LP (:mod:`anondecomp.lower_bound`).

The column-generation master holds faces S (arm sets) with fractional lengths mu_S and type-level points
Y^S in mu_S P_C(S). Rounding it:

1. **Lengths.** Every face with mu_S > 0 gets an integer length L_S >= mu_S (``ceil``), so the fractional
   point, scaled per face, still fits.
2. **Split.** Each user's demand r_ij is spread over the faces that open arm j in proportion to the LP's
   samples there (a type's samples shared evenly by its users), so that user i takes at most mu_S <= L_S
   samples in face S. This fractional split is rounded by one integral bipartite flow (rows: (user, face)
   with capacity L_S; columns: the user's pairs with their exact demand; every entry between floor and ceil
   of the LP's), which exists because the constraint system is totally unimodular and the fractional point
   satisfies it. The split is a sparse list of (face, edge, demand) entries: only a face's open arms take
   demand, and no (faces x users x arms) or users x arms array is built.
3. **Faces realised exactly** by :func:`~anondecomp.methods._common.colour_demand`: the shortest length >=
   the face's busiest user at which users padding the arms that fall short of C+1 (within their row
   budget) fill every arm, then an equitable edge colouring into that many assignments.

R is the sum of the realised lengths, at most sum_S ceil(mu_S) plus what the padding of step 3 adds; the
result covers every pair exactly as the split says, so it verifies.

:func:`round_down` is the other rounding: lengths floor(mu_S), as much demand as fits placed by one maximum
flow (entries at most the ceiling of the LP's), the faces realised as above, and the demand left over
scheduled by least-slack rounds (:mod:`anondecomp.methods.slack`). A face's fractional part then costs only
what the busiest users left over need, not a whole assignment per face: on OBD at C = 50 (a master of 215
faces, 90 with fractional lengths, value 1,392) ceil rounding gives R = 1,412 and this one 1,393.
:func:`round_master` returns the shorter of the two.
"""

from __future__ import annotations

import numpy as np

from anondecomp.flows import transport
from anondecomp.methods._common import colour_demand
from anondecomp.validation import Prepared

MU_TOL = 1e-7  # face lengths below this are LP noise: the face is dropped


def _shares(
    prep: Prepared, types, faces: np.ndarray, Y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each demanded edge's demand spread over the faces that open its arm, in proportion to the LP's samples
    there (a type's samples shared evenly by its users).

    Held as a sparse list of (face, edge) entries, never as (faces, users, arms) or (faces, edges) arrays:
    only the entries of a face's open arms can be positive.

    Returns
    -------
    dem : numpy.ndarray
        (n,) the graph's edges with demand (by user, then arm).
    r : numpy.ndarray
        (n,) int64 their demand.
    total : numpy.ndarray
        (n,) the LP's samples of one user of the edge, summed over the faces.
    f, e : numpy.ndarray
        The (face, position in ``dem``) entries with a positive share, by face, then edge.
    z : numpy.ndarray
        Their share of the demand (each edge's sums to its demand where ``total`` > 0).
    """
    g = prep.graph
    K = g.n_arms
    dem = np.flatnonzero(prep.edge_required > 0)
    ui, uj = g.edge_users[dem].astype(np.int64), g.edge_arms[dem].astype(np.int64)
    r = prep.edge_required[dem].astype(np.int64)
    # the LP pair of each demanded edge: its user's type and its arm, found among the types' pairs (sorted by
    # type, then arm, so their keys type * K + arm are sorted); -1 (the last column, as an index) if absent
    tu = types.of_user[ui].astype(np.int64)
    pair_keys = types.ti.astype(np.int64) * K + types.aj
    q = tu * K + uj
    at = np.minimum(np.searchsorted(pair_keys, q), max(len(pair_keys) - 1, 0))
    p = np.where(pair_keys[at] == q, at, -1) if len(pair_keys) else np.full(len(q), -1)
    # the (face, edge) entries whose arm the face opens: each open (face, arm) pair expanded to the arm's
    # demanded edges, then sorted by face and edge (the order of a dense (F, n) array's non-zeros)
    by_arm = np.argsort(uj, kind="stable")
    arm_start = np.zeros(K + 1, dtype=np.int64)
    np.cumsum(np.bincount(uj, minlength=K), out=arm_start[1:])
    fa, aa = np.nonzero(np.asarray(faces, bool))
    size = arm_start[aa + 1] - arm_start[aa]
    offsets = np.cumsum(size) - size
    f = np.repeat(fa.astype(np.int64), size)
    e = by_arm[np.repeat(arm_start[aa] - offsets, size) + np.arange(int(size.sum()))]
    order = np.lexsort((e, f))
    f, e = f[order], e[order]
    share = np.maximum(Y[f, p[e]] / types.counts[tu[e]], 0.0)  # one user's LP samples on the edge in face f
    # summed over the faces in increasing order, as a dense column sum over the faces would add them
    total = np.bincount(e, weights=share, minlength=len(dem))
    z = share * (r / np.maximum(total, 1e-12))[e]  # exactly the demand, rows still <= mu_f
    big = z > 1e-12
    return dem, r, total, f[big], e[big], z[big]


def user_split(
    prep: Prepared, types, faces: np.ndarray, mu: np.ndarray, Y: np.ndarray, lengths: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Integer per-face demands summing to ``prep.edge_required`` with each user's total in face f at most
    ``lengths[f]`` (step 2), as a sparse list ``(face, edge, demand)`` (edges of ``prep.graph``, by face then
    edge), or ``None`` when the LP point leaves some pair uncovered (a master that is not a feasible solution)."""
    g = prep.graph
    F = len(faces)
    dem, r, total, f, e, y = _shares(prep, types, faces, Y)
    if (total < r - 1e-6).any():
        return None
    lo = np.floor(y + 1e-9).astype(np.int64)
    hi = np.ceil(y - 1e-9).astype(np.int64)
    # the (user, face) rows in use, numbered in increasing order of user * F + face (rows without an entry
    # would only be dead ends of the flow: no users x faces table is built)
    nodes, node = np.unique(g.edge_users[dem[e]].astype(np.int64) * F + f, return_inverse=True)
    row_hi = lengths[nodes % F] - np.bincount(node, weights=lo, minlength=len(nodes)).astype(np.int64)
    col = r - np.bincount(e, weights=lo, minlength=len(r)).astype(np.int64)
    flow = transport(len(nodes), len(r), node, e, hi - lo, np.zeros(len(nodes), np.int64), row_hi, col, col)
    if flow is None:
        return None
    return f, dem[e], lo + flow


def colour_faces(
    prep: Prepared, parts: tuple[np.ndarray, np.ndarray, np.ndarray], faces: np.ndarray, lengths: np.ndarray
) -> tuple[list[np.ndarray], list[np.ndarray]] | None:
    """Each face's share of the demand (``parts``: ``(face, edge, demand)`` entries) realised exactly by
    colouring: the lists of assignments and multiplicities, or ``None`` if a face cannot be realised within
    four times its length. Each face's demand is an (E,) per-edge vector, built one face at a time."""
    f, e, v = parts
    order = np.argsort(f, kind="stable")
    f, e, v = f[order], e[order], v[order]
    start = np.searchsorted(f, np.arange(len(faces) + 1))
    a_parts, m_parts = [], []
    for k in range(len(faces)):
        at = slice(start[k], start[k + 1])
        if not v[at].any():
            continue
        demand = np.zeros(prep.graph.nnz, dtype=np.int64)
        np.add.at(demand, e[at], v[at])
        found = colour_demand(prep, demand, faces[k], hi=4 * int(lengths[k]) + 4)
        if found is None:
            return None
        a_parts.append(found[0])
        m_parts.append(found[1])
    return a_parts, m_parts


def round_faces(
    prep: Prepared, types, faces: np.ndarray, mu: np.ndarray, Y: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """Assignments and multiplicities from the master's solution (faces (F, K), mu (F,), Y (F, P)), or
    ``None`` if some step fails (module docstring)."""
    keep = mu > MU_TOL
    faces, mu, Y = np.asarray(faces)[keep], mu[keep], Y[keep]
    if not len(faces):
        return None
    lengths = np.ceil(mu - 1e-9).astype(np.int64)
    parts = user_split(prep, types, faces, mu, Y, lengths)
    if parts is None:
        return None
    coloured = colour_faces(prep, parts, faces, lengths)
    if coloured is None or not coloured[0]:
        return None
    return np.concatenate(coloured[0]), np.concatenate(coloured[1])


def round_down(
    prep: Prepared, types, faces: np.ndarray, mu: np.ndarray, Y: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """Floor the face lengths, place what fits by a maximum flow, colour the faces, schedule the rest by
    least-slack rounds (module docstring); ``None`` if a face cannot be realised."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import maximum_flow

    from anondecomp.methods.slack import slack_rounds

    keep = mu > MU_TOL
    faces, mu, Y = np.asarray(faces)[keep], mu[keep], Y[keep]
    g = prep.graph
    F = len(faces)
    lengths = np.floor(mu + 1e-9).astype(np.int64)
    dem, r, _, f, e, z = _shares(prep, types, faces, Y)
    hi = np.ceil(z - 1e-9).astype(np.int64)
    nodes, node = np.unique(g.edge_users[dem[e]].astype(np.int64) * F + f, return_inverse=True)  # rows in use
    n, P = len(nodes), len(r)
    source, sink = 0, 1 + n + P
    tail = np.concatenate([np.zeros(n, np.int64), 1 + node, 1 + n + np.arange(P)])
    head = np.concatenate([1 + np.arange(n), 1 + n + e, np.full(P, sink)])
    cap = np.concatenate([lengths[nodes % F], hi, r])
    on = cap > 0
    net = csr_array((cap[on].astype(np.int32), (tail[on], head[on])), shape=(sink + 1, sink + 1))
    flow = np.asarray(maximum_flow(net, source, sink).flow.tocsr()[1 + node, 1 + n + e]).ravel().astype(np.int64)
    coloured = colour_faces(prep, (f, dem[e], flow), faces, lengths)
    if coloured is None:
        return None
    a_parts, m_parts = coloured
    left = prep.edge_required.astype(np.int64).copy()  # per edge: the demand no face took
    np.subtract.at(left, dem[e], flow)
    if left.any():
        a, m, _ = slack_rounds(Prepared(prep.graph, prep.C, left, prep.uncovered))
        a_parts.append(a)
        m_parts.append(m)
    if not a_parts:
        return None
    return np.concatenate(a_parts), np.concatenate(m_parts)


def round_master(
    prep: Prepared, types, faces: np.ndarray, mu: np.ndarray, Y: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """The shorter of :func:`round_faces` and :func:`round_down` (``None`` if both fail)."""
    found = [
        x for x in (round_down(prep, types, faces, mu, Y), round_faces(prep, types, faces, mu, Y)) if x is not None
    ]
    return min(found, key=lambda x: int(x[1].sum())) if found else None
