"""Carathéodory decomposition of a point of P_C(S) into integral vertices (spec 4.3).

Procedure: while x is not a vertex, take a vertex v of the minimal face of P_C(S) containing x (found as an
integral bounded flow that keeps every constraint tight at x tight), step as far as possible away from v
(ratio test), and recurse on the new point, which lies on a strictly smaller face. At most dim + 1 vertices.

Reference: Hoeksma, Manthey, Uetz, "Efficient implementation of Carathéodory's theorem for the single
machine scheduling polytope", Discrete Applied Mathematics 215 (2016).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from anondecomp.errors import InvalidInputError
from anondecomp.flows import bounded_assignment
from anondecomp.polytope import arm_mask, check_membership

TOL = 1e-9


@dataclass(frozen=True)
class CaratheodoryResult:
    """``x = sum_k weights[k] * vertex_k`` where vertex k puts user i on arm ``vertices[k, i]`` (-1: none).

    ``dimension`` is the number of free coordinates of x's polytope: ``len(weights) <= dimension + 1``.
    """

    weights: np.ndarray
    vertices: np.ndarray
    dimension: int

    def vertex_matrix(self, k: int, n_arms: int) -> np.ndarray:
        """Vertex k as an (N, K) 0/1 matrix."""
        v = np.zeros((self.vertices.shape[1], n_arms))
        on = self.vertices[k] >= 0
        v[np.flatnonzero(on), self.vertices[k, on]] = 1.0
        return v

    def reconstruct(self, n_arms: int) -> np.ndarray:
        """``sum_k weights[k] * vertex_k`` as an (N, K) matrix."""
        out = np.zeros((self.vertices.shape[1], n_arms))
        for k, lam in enumerate(self.weights):
            on = self.vertices[k] >= 0
            out[np.flatnonzero(on), self.vertices[k, on]] += lam
        return out


def caratheodory(x: np.ndarray, C: int, S=None) -> CaratheodoryResult:
    """Write x, a point of P_C(S), as a convex combination of at most dim + 1 integral vertices.

    Parameters
    ----------
    x : (N, K) array in P_C(S) (rows sum to at most 1, columns in S sum to at least C+1, others 0).
    C : anonymity parameter.
    S : open arms (indices or a boolean mask); default every arm with a positive column.

    Raises
    ------
    InvalidInputError if x is not in P_C(S) (the message names the failing constraint).

    Examples
    --------
    >>> import numpy as np
    >>> res = caratheodory(np.full((4, 2), 0.5), C=1)
    >>> float(res.weights.sum()), res.vertices.shape[1]
    (1.0, 4)
    """
    x = np.array(x, dtype=float)
    N, K = x.shape
    open_arms = arm_mask(S, K) if S is not None else x.sum(axis=0) > TOL
    report = check_membership(x, C, open_arms, tol=TOL)
    if not report.member:
        raise InvalidInputError(f"point is not in P_C(S): {report.violated[0]}")
    x = np.clip(np.where(open_arms[None, :], x, 0.0), 0.0, 1.0)
    free = (x > TOL)
    dimension = int(free.sum())
    weights: list[float] = []
    vertices: list[np.ndarray] = []
    remaining = 1.0  # share of the original point still to be written
    for _ in range(dimension + 2):
        x[x < TOL] = 0.0
        x[x > 1 - TOL] = 1.0
        rows, cols = x.sum(axis=1), x.sum(axis=0)
        allowed = x > 0
        row_tight = rows >= 1 - TOL
        col_tight = open_arms & (cols <= C + 1 + TOL)
        col_lo = np.where(open_arms, C + 1, 0)
        col_hi = np.where(col_tight, C + 1, np.where(open_arms, N, 0))
        v = bounded_assignment(allowed, row_tight.astype(np.int64), col_lo, col_hi)
        if v is None:  # cannot happen for a point of P_C(S) up to rounding; report loudly, never guess
            raise RuntimeError("no vertex on the minimal face: the point drifted out of P_C(S)")
        vm = np.zeros_like(x)
        on = v >= 0
        vm[np.flatnonzero(on), v[on]] = 1.0
        lam = _max_step(x, vm, rows, cols, open_arms, C)
        if lam >= 1 - TOL:
            weights.append(remaining)
            vertices.append(v)
            break
        weights.append(remaining * lam)
        vertices.append(v)
        remaining *= 1 - lam
        x = (x - lam * vm) / (1 - lam)
    else:
        raise RuntimeError("Carathéodory did not terminate within dim + 1 steps")
    return CaratheodoryResult(np.array(weights), np.array(vertices, dtype=np.int64), dimension)


def _max_step(x, v, rows, cols, open_arms, C) -> float:
    """Largest lambda with (x - lambda v) / (1 - lambda) still in P_C(S) (ratio test over constraints)."""
    bounds = [1.0]
    on = v > 0
    if on.any():
        bounds.append(x[on].min())  # y_ij >= 0 where v_ij = 1
    off = (~on) & (x > 0)
    if off.any():
        bounds.append((1 - x[off]).min())  # y_ij <= 1 where v_ij = 0
    idle = v.sum(axis=1) == 0
    if idle.any():
        bounds.append((1 - rows[idle]).min())  # row sum <= 1 for rows v leaves empty
    size = v.sum(axis=0)
    big = open_arms & (size > C + 1)
    if big.any():
        bounds.append(((cols[big] - (C + 1)) / (size[big] - (C + 1))).min())  # column >= C+1
    return float(max(min(bounds), 0.0))
