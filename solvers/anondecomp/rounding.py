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
   satisfies it.
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


def user_split(prep: Prepared, types, faces: np.ndarray, mu: np.ndarray, Y: np.ndarray,
               lengths: np.ndarray) -> np.ndarray | None:
    """(F, N, K) integer per-face demands summing to ``prep.required`` with row sums <= ``lengths`` (step 2),
    or ``None`` when the LP point leaves some pair uncovered (a master that is not a feasible solution)."""
    req = prep.required
    N, K = req.shape
    F = len(faces)
    pair = np.full((types.n_types, K), -1, dtype=np.int64)
    pair[types.ti, types.aj] = np.arange(types.n_pairs)
    ui, uj = np.nonzero(req > 0)                          # user pairs with demand
    p = pair[types.of_user[ui], uj]
    share = Y[:, p] / types.counts[types.of_user[ui]][None, :]   # (F, pairs): one user's LP samples per face
    share = np.where(faces[:, uj], np.maximum(share, 0.0), 0.0)
    total = share.sum(axis=0)
    r = req[ui, uj].astype(np.int64)
    if (total < r - 1e-6).any():
        return None
    z = share * (r / np.maximum(total, 1e-12))[None, :]   # exactly the demand, rows still <= mu_f
    f, e = np.nonzero(z > 1e-12)
    y = z[f, e]
    lo = np.floor(y + 1e-9).astype(np.int64)
    hi = np.ceil(y - 1e-9).astype(np.int64)
    node = ui[e] * F + f                                  # the (user, face) row of each entry
    row_hi = np.repeat(lengths[None, :], N, axis=0).ravel() - np.bincount(node, weights=lo,
                                                                          minlength=N * F).astype(np.int64)
    col = r - np.bincount(e, weights=lo, minlength=len(r)).astype(np.int64)
    flow = transport(N * F, len(r), node, e, hi - lo, np.zeros(N * F, np.int64), row_hi, col, col)
    if flow is None:
        return None
    out = np.zeros((F, N, K), dtype=np.int64)
    np.add.at(out, (f, ui[e], uj[e]), lo + flow)
    return out


def colour_faces(prep: Prepared, parts: np.ndarray, faces: np.ndarray, lengths: np.ndarray
                 ) -> tuple[list[np.ndarray], list[np.ndarray]] | None:
    """Each face's share of the demand (``parts`` (F, N, K)) realised exactly by colouring: the lists of
    assignments and multiplicities, or ``None`` if a face cannot be realised within four times its length."""
    a_parts, m_parts = [], []
    for k in range(len(faces)):
        if not parts[k].any():
            continue
        found = colour_demand(prep, parts[k], faces[k], hi=4 * int(lengths[k]) + 4)
        if found is None:
            return None
        a_parts.append(found[0])
        m_parts.append(found[1])
    return a_parts, m_parts


def round_faces(prep: Prepared, types, faces: np.ndarray, mu: np.ndarray, Y: np.ndarray
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


def round_down(prep: Prepared, types, faces: np.ndarray, mu: np.ndarray, Y: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray] | None:
    """Floor the face lengths, place what fits by a maximum flow, colour the faces, schedule the rest by
    least-slack rounds (module docstring); ``None`` if a face cannot be realised."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import maximum_flow

    from anondecomp.methods.slack import slack_rounds

    keep = mu > MU_TOL
    faces, mu, Y = np.asarray(faces)[keep], mu[keep], Y[keep]
    req = prep.required
    N, K = req.shape
    F = len(faces)
    lengths = np.floor(mu + 1e-9).astype(np.int64)
    pair = np.full((types.n_types, K), -1, dtype=np.int64)
    pair[types.ti, types.aj] = np.arange(types.n_pairs)
    ui, uj = np.nonzero(req > 0)
    p = pair[types.of_user[ui], uj]
    share = np.where(faces[:, uj], np.maximum(Y[:, p] / types.counts[types.of_user[ui]][None, :], 0.0), 0.0)
    r = req[ui, uj].astype(np.int64)
    z = share * (r / np.maximum(share.sum(axis=0), 1e-12))[None, :]
    f, e = np.nonzero(z > 1e-12)
    hi = np.ceil(z[f, e] - 1e-9).astype(np.int64)
    nodes, node = np.unique(ui[e] * F + f, return_inverse=True)      # the (user, face) rows in use
    n, P = len(nodes), len(r)
    source, sink = 0, 1 + n + P
    tail = np.concatenate([np.zeros(n, np.int64), 1 + node, 1 + n + np.arange(P)])
    head = np.concatenate([1 + np.arange(n), 1 + n + e, np.full(P, sink)])
    cap = np.concatenate([lengths[nodes % F], hi, r])
    on = cap > 0
    net = csr_array((cap[on].astype(np.int32), (tail[on], head[on])), shape=(sink + 1, sink + 1))
    flow = np.asarray(maximum_flow(net, source, sink).flow.tocsr()[1 + node, 1 + n + e]).ravel().astype(np.int64)
    parts = np.zeros((F, N, K), dtype=np.int64)
    np.add.at(parts, (f, ui[e], uj[e]), flow)
    coloured = colour_faces(prep, parts, faces, lengths)
    if coloured is None:
        return None
    a_parts, m_parts = coloured
    left = req - parts.sum(axis=0)
    if left.any():
        a, m, _ = slack_rounds(Prepared(prep.graph, prep.C, left, prep.uncovered))
        a_parts.append(a)
        m_parts.append(m)
    if not a_parts:
        return None
    return np.concatenate(a_parts), np.concatenate(m_parts)


def round_master(prep: Prepared, types, faces: np.ndarray, mu: np.ndarray, Y: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray] | None:
    """The shorter of :func:`round_faces` and :func:`round_down` (``None`` if both fail)."""
    found = [x for x in (round_down(prep, types, faces, mu, Y), round_faces(prep, types, faces, mu, Y))
             if x is not None]
    return min(found, key=lambda x: int(x[1].sum())) if found else None
