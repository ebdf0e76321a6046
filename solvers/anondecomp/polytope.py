"""The C-anonymity polytope P_C(S): its H-representation, membership, and the covering LP on HiGHS.

Paper 000, Section 3.4.2, Lemma 4 (the constraints (1)): x is in P_C(S) iff 0 <= x_ij <= 1, every row sums to at
most 1, every column in S sums to at least C+1 and every column outside S is zero. The constraint matrix is a
bipartite incidence matrix (totally unimodular), so these inequalities describe the convex hull of the 0/1 points
exactly, and LP vertices are integral.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from anondecomp.errors import InvalidInputError, SolverError
from anondecomp.highs import load_model, new_highs
from anondecomp.validation import checked


def arm_mask(S, n_arms: int) -> np.ndarray:
    """Arms S (indices, or a boolean mask, or ``None`` for all) as a boolean mask of length n_arms."""
    if S is None:
        return np.ones(n_arms, dtype=bool)
    S = np.asarray(S)
    if S.dtype == bool:
        if S.shape != (n_arms,):
            raise InvalidInputError(f"arm mask must have length {n_arms}")
        return S.copy()
    mask = np.zeros(n_arms, dtype=bool)
    if S.size and (S.min() < 0 or S.max() >= n_arms):
        raise InvalidInputError(f"arm indices must lie in [0, {n_arms})")
    mask[S.astype(int)] = True
    return mask


@dataclass(frozen=True)
class Membership:
    """Outcome of a membership check.

    Parameters
    ----------
    member : bool
        Whether x is in P_C(S).
    violated : tuple of str
        Every failing H-constraint, one readable line each.
    beta : float or None, optional
        (LP only) the largest beta such that beta * x is dominated by a point of P_C(S); ``beta >= 1`` means
        x's demand can be met by a convex combination of vertices (Lemma 3 with beta).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> check_membership(np.full((4, 2), 0.2), C=3).violated[0]
    'column sum of arm 0 is 0.8 < C+1 = 4'
    """

    member: bool
    violated: tuple[str, ...]
    beta: float | None = None


@checked()
def check_membership(x: np.ndarray, C: int, S=None, tol: float = 1e-9) -> Membership:
    """Exact H-representation test of x in P_C(S) (Lemma 4), naming every violated constraint.

    Parameters
    ----------
    x : numpy.ndarray
        (N, K) point.
    C : int
        The anonymity parameter (>= 1): an arm is informative only with at least C+1 users on it.
    S : array_like of int or bool, optional
        The open arms (indices or a boolean mask); default every arm with a positive column.
    tol : float, optional
        Tolerance of each inequality.

    Returns
    -------
    Membership
        ``member`` and the violated constraints (``beta`` is ``None``).

    Raises
    ------
    InvalidInputError
        If ``S`` is a mask of the wrong length or holds an index outside [0, K).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> check_membership(np.full((4, 2), 0.5), C=1).member
    True
    """
    x = np.asarray(x, dtype=float)
    N, K = x.shape
    S = arm_mask(S, K)
    bad: list[str] = []
    for i, j in np.argwhere(x < -tol)[:5]:
        bad.append(f"x[{i},{j}] = {x[i, j]:.6g} < 0")
    for i, j in np.argwhere(x > 1 + tol)[:5]:
        bad.append(f"x[{i},{j}] = {x[i, j]:.6g} > 1")
    rows = x.sum(axis=1)
    for i in np.flatnonzero(rows > 1 + tol)[:5]:
        bad.append(f"row sum of user {i} is {rows[i]:.6g} > 1")
    cols = x.sum(axis=0)
    for j in np.flatnonzero(S & (cols < C + 1 - tol)):
        bad.append(f"column sum of arm {j} is {cols[j]:.6g} < C+1 = {C + 1}")
    for j in np.flatnonzero(~S & (np.abs(x).sum(axis=0) > tol)):
        bad.append(f"arm {j} is outside S but its column is not zero")
    return Membership(member=not bad, violated=tuple(bad))


def covering_lp(x: np.ndarray, C: int, S=None, support: np.ndarray | None = None, time_limit: float | None = None):
    """Build the covering LP ``max beta : beta * x <= y, y in P_C(S), y = 0 off support`` as a highspy model.

    Variables are one y per support pair plus beta; rows are the N user rows, the |S| arm rows and one
    covering row per pair with x > 0. The constraint matrix is assembled once, as a sparse CSC matrix.
    Returns ``(highspy.Highs, n_pairs)``.
    """
    import scipy.sparse as sp

    x = np.asarray(x, dtype=float)
    N, K = x.shape
    S = arm_mask(S, K)
    supp = (x > 0) if support is None else np.asarray(support, bool)
    supp = supp & S[None, :]
    ui, aj = np.nonzero(supp)
    n = len(ui)
    var = np.full((N, K), -1)
    var[ui, aj] = np.arange(n)
    # one covering row per pair with x > 0; a pair without a variable (off support or outside S) can only
    # be covered with beta = 0
    ci, cj = np.nonzero(x > 0)
    cv = var[ci, cj]
    has = cv >= 0
    s_idx = np.flatnonzero(S)
    arm_row = np.full(K, -1)
    arm_row[s_idx] = N + np.arange(len(s_idx))
    cover_row = N + len(s_idx) + np.arange(len(ci))
    r = np.concatenate([ui, arm_row[aj], cover_row[has], cover_row])
    c = np.concatenate([np.arange(n), np.arange(n), cv[has], np.full(len(ci), n)])
    v = np.concatenate([np.ones(n), np.ones(n), np.ones(int(has.sum())), -x[ci, cj]])
    cover = ci
    n_rows = N + len(s_idx) + len(cover)
    A = sp.csc_matrix((v, (r, c)), shape=(n_rows, n + 1))
    inf = np.inf  # rows and columns without a bound
    h = new_highs(time_limit)
    load_model(
        h,
        A,
        np.concatenate([np.zeros(n), [1.0]]),
        np.zeros(n + 1),
        np.concatenate([np.ones(n), [inf]]),
        np.concatenate([np.full(N, -inf), np.full(len(s_idx), C + 1.0), np.zeros(len(cover))]),
        np.concatenate([np.ones(N), np.full(len(s_idx), inf), np.full(len(cover), inf)]),
        maximize=True,
    )
    return h, n


@checked()
def membership(x: np.ndarray, C: int, S=None) -> Membership:
    """Is x in P_C(S)? Exact H-representation check plus the HiGHS covering LP.

    ``member`` and ``violated`` come from Lemma 4's inequalities; ``beta`` is the covering LP's optimum, the
    largest scaling of x that a point of P_C(S) dominates (0 when no point of P_C(S) fits the support).

    Parameters
    ----------
    x : numpy.ndarray
        (N, K) point.
    C : int
        The anonymity parameter (>= 1): an arm is informative only with at least C+1 users on it.
    S : array_like of int or bool, optional
        The open arms (indices or a boolean mask); default every arm with a positive column.

    Returns
    -------
    Membership
        ``member``, the violated constraints and ``beta``.

    Raises
    ------
    InvalidInputError
        If ``S`` is a mask of the wrong length or holds an index outside [0, K).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> m = membership(np.full((6, 2), 0.5), C=2)
    >>> m.member, round(m.beta, 6)
    (True, 1.0)
    """
    import highspy

    exact = check_membership(x, C, S)
    h, _ = covering_lp(x, C, S)
    h.run()
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kOptimal:
        beta = float(h.getInfo().objective_function_value)
    elif status == highspy.HighsModelStatus.kInfeasible:
        beta = 0.0  # P_C(S) has no point on this support
    elif status == highspy.HighsModelStatus.kUnbounded:
        beta = np.inf  # x = 0: any scaling is covered
    else:
        raise SolverError(f"HiGHS could not solve the covering LP: {h.modelStatusToString(status)}")
    return Membership(exact.member, exact.violated, beta)
