"""Carathéodory decomposition of a point of P_C(S) into integral vertices (Carathéodory's theorem as used by
Lemma 3 and Corollaries 1 and 2, Section 3.4.2; the paper points to Hoeksma, Manthey and Uetz, 2016, for an efficient
implementation and gives no procedure: the one below is a choice of this implementation).

Procedure. Keep the part of x still to be written as ``z`` with weight ``rho`` (``z / rho`` is in P_C(S);
at the start z = x, rho = 1), and the set T of constraints of P_C(S) known to be tight at ``z / rho``:
zero entries, full entries (z_ij = rho), full rows (sum_j z_ij = rho) and tight columns
(sum_i z_ij = (C+1) rho). T defines a face F(T) of P_C(S). Each step

1. takes an integral vertex v of F(T): a bounded flow (users in full rows must be placed, tight columns hold
   exactly C+1 users, no user on a zero entry), exact because the constraint matrix is totally unimodular;
2. runs the ratio test: the largest mu with (z - mu v, rho - mu) still satisfying every constraint
   g_c(z, rho) >= 0 is the minimum of g_c(z, rho) / g_c(v, 1) over the constraints with g_c(v, 1) > 0;
3. if mu reaches rho, z / rho is v: v gets the remaining weight rho and the procedure stops; otherwise the
   minimising constraint c joins T (with what it implies: a full entry fills its row and empties the rest of
   it), provided F(T + c) still has a vertex (the next step's flow); among near-ties the first such c is taken.
   v gets weight mu, z -= mu v, rho -= mu.

Termination within dim + 1 steps (dim = number of positive coordinates of x), whatever the rounding.
The argument uses only exact, combinatorial facts: T is a set of constraints, never a tolerance applied to
floats, and the vertices are integral flows. (a) F(T) only shrinks: T only grows. (b) Each step that does not
stop strictly lowers the dimension of F(T): c has g_c(v, 1) > 0 at the vertex v of F(T), so c is not tight
on all of F(T), and F(T + c) is a nonempty (a vertex was found) proper face of F(T). (c) dim F(T) starts at
most at dim (the zero entries of x are in T from the start) and a nonempty face has dimension >= 0, so at
most dim steps lower it and the next one stops. Floating-point rounding only affects the weights (by
rounding error, absolute: z is never rescaled, which is what let errors grow as 1 / rho and the tight set
be lost in the former renormalising version) and, in a near-tie, which of the tied constraints joins T. If
none of the near-tied constraints leaves a nonempty face, exact arithmetic would have stopped here
(mu = rho): the step stops, after checking that z is within rounding of rho * v (else
:class:`~anondecomp.errors.SolverError`, never a loop).

Reference: Hoeksma, Manthey, Uetz, "Efficient implementation of Carathéodory's theorem for the single
machine scheduling polytope", Discrete Applied Mathematics 215 (2016).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from anondecomp.errors import InvalidInputError, SolverError
from anondecomp.flows import bounded_assignment
from anondecomp.polytope import arm_mask, check_membership
from anondecomp.validation import DENSE_CELLS, checked, freeze_arrays

TOL = 1e-9
_ZERO, _FULL, _ROW, _COL = range(4)  # kinds of constraint of P_C(S), see _ratio_test


@dataclass(frozen=True)
class CaratheodoryResult:
    """``x = sum_k weights[k] * vertex_k`` where vertex k puts user i on arm ``vertices[k, i]`` (-1: none).

    Parameters
    ----------
    weights : numpy.ndarray
        (n,) convex weights, summing to 1.
    vertices : numpy.ndarray
        (n, N) integer: ``vertices[k, i]`` is user i's arm in vertex k, -1 for none.
    dimension : int
        The number of free coordinates of x's polytope: ``len(weights) <= dimension + 1``.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> res = caratheodory(np.full((4, 2), 0.5), C=1)
    >>> bool(np.allclose(res.reconstruct(2), 0.5))
    True
    """

    weights: np.ndarray
    vertices: np.ndarray
    dimension: int

    def __post_init__(self) -> None:
        freeze_arrays(self)

    def _check_dense(self, n_arms: int) -> None:
        """Refuse an ``n_arms`` that misses a vertex's arm, or a dense (N, n_arms) matrix above DENSE_CELLS."""
        if self.vertices.size and n_arms <= int(self.vertices.max()):
            raise InvalidInputError(
                f"n_arms must exceed every vertex's arm index {int(self.vertices.max())}, got {n_arms}"
            )
        if self.vertices.shape[1] * n_arms > DENSE_CELLS:
            raise InvalidInputError(
                f"n_arms = {n_arms} makes a {self.vertices.shape[1]} x {n_arms} matrix, above "
                f"DENSE_CELLS = {DENSE_CELLS:.0e} cells"
            )

    @checked()
    def vertex_matrix(self, k: int, n_arms: int) -> np.ndarray:
        """Vertex k as an (N, K) 0/1 matrix.

        Parameters
        ----------
        k : int
            The vertex's index, ``0 <= k < len(weights)``.
        n_arms : int
            K, the number of arms.

        Returns
        -------
        numpy.ndarray
            (N, K) float: 1 at (i, ``vertices[k, i]``) for every user i with an arm, 0 elsewhere.

        Raises
        ------
        InvalidInputError
            For ``k`` outside the vertices, an ``n_arms`` that misses a vertex's arm, or an (N, n_arms)
            matrix above :data:`~anondecomp.validation.DENSE_CELLS` cells.

        Examples
        --------
        >>> import numpy as np
        >>> res = caratheodory(np.full((4, 2), 0.5), C=1)
        >>> res.vertex_matrix(0, 2).sum(axis=0).tolist()  # each arm gets C+1 = 2 users
        [2.0, 2.0]
        """
        self._check_dense(n_arms)
        if k >= len(self.weights):
            raise InvalidInputError(f"k must be a vertex index in [0, {len(self.weights)}), got {k}")
        v = np.zeros((self.vertices.shape[1], n_arms))
        on = self.vertices[k] >= 0
        v[np.flatnonzero(on), self.vertices[k, on]] = 1.0
        return v

    @checked()
    def reconstruct(self, n_arms: int) -> np.ndarray:
        """The convex combination ``sum_k weights[k] * vertex_k`` as an (N, K) matrix (x, up to rounding).

        Parameters
        ----------
        n_arms : int
            K, the number of arms.

        Returns
        -------
        numpy.ndarray
            (N, K) float, the weighted sum of the vertices' 0/1 matrices (see :meth:`vertex_matrix`).

        Raises
        ------
        InvalidInputError
            As :meth:`vertex_matrix` for ``n_arms``.

        Examples
        --------
        >>> import numpy as np
        >>> res = caratheodory(np.full((4, 2), 0.5), C=1)
        >>> res.reconstruct(2).tolist()
        [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5], [0.5, 0.5]]
        """
        self._check_dense(n_arms)
        out = np.zeros((self.vertices.shape[1], n_arms))
        for k, lam in enumerate(self.weights):
            on = self.vertices[k] >= 0
            out[np.flatnonzero(on), self.vertices[k, on]] += lam
        return out


@checked()
def caratheodory(x: np.ndarray, C: int, S=None) -> CaratheodoryResult:
    """Write x, a point of P_C(S), as a convex combination of at most dim + 1 integral vertices.

    Parameters
    ----------
    x : numpy.ndarray
        (N, K) point of P_C(S): rows sum to at most 1, columns in S sum to at least C+1, the others to 0.
    C : int
        The anonymity parameter (>= 1): an arm is informative only with at least C+1 users on it.
    S : array_like of int or bool, optional
        The open arms (indices or a boolean mask); default every arm with a positive column.

    Returns
    -------
    CaratheodoryResult
        The weights and the vertices.

    Raises
    ------
    InvalidInputError
        If x is not in P_C(S) (the message names the failing constraint).
    SolverError
        If a numerical step breaks down.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

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
    z = np.clip(np.where(open_arms[None, :], x, 0.0), 0.0, 1.0)
    zero = z <= TOL
    face = _Face(
        zero=zero,
        full_row=z.sum(axis=1) >= 1 - TOL,
        tight_col=open_arms & (z.sum(axis=0) <= C + 1 + TOL),
        open_arms=open_arms,
        C=C,
        full=np.zeros_like(zero),
    )
    face.fill(z >= 1 - TOL)
    z[face.zero] = 0.0
    z[face.full] = 1.0
    dimension = int((~face.zero).sum())
    rho = 1.0
    weights: list[float] = []
    vertices: list[np.ndarray] = []
    v = face.vertex()
    if v is None:
        raise SolverError(
            "Carathéodory: the point's minimal face has no vertex (the point lies within "
            f"{TOL:g} of P_C(S)'s boundary in a way rounding cannot settle)"
        )
    for _ in range(dimension + 1):  # (b) and (c) of the module docstring: never more steps than this
        vm = np.zeros_like(z)
        on = v >= 0
        vm[np.flatnonzero(on), v[on]] = 1.0
        ratios, constraints = _ratio_test(z, rho, vm, face, C)
        mu_min = max(float(ratios.min()), 0.0) if len(ratios) else rho
        step = None
        if mu_min < rho * (1 - TOL):
            # near-ties within rounding (absolute: z carries absolute rounding error, never rescaled)
            near = np.flatnonzero(ratios <= mu_min + max(TOL * rho, 1e-11))
            for k in near[np.argsort(ratios[near], kind="stable")]:
                trial = face.with_constraint(constraints[:, k])
                v_next = trial.vertex()
                if v_next is not None:
                    step = (min(max(float(ratios[k]), 0.0), rho), trial, v_next)
                    break
        if step is None:  # mu = rho: what is left is rho * v (up to rounding, which we check)
            err = float(np.abs(z - rho * vm).max())
            if err > 1e-7:
                raise SolverError(
                    f"Carathéodory: the remainder is {err:.3g} away from its last vertex (numerical breakdown)"
                )
            if rho > 0:
                weights.append(rho)
                vertices.append(v)
            break
        mu, face, v_next = step
        if mu > 0:
            weights.append(mu)
            vertices.append(v)
        z -= mu * vm
        rho -= mu
        z[face.zero] = 0.0
        z[face.full] = rho
        v = v_next
    else:  # unreachable by the argument in the module docstring; reported, never looped on
        raise SolverError("Carathéodory did not terminate within dim + 1 steps")
    return CaratheodoryResult(np.array(weights), np.array(vertices, dtype=np.int64), dimension)


@dataclass
class _Face:
    """The tight set T (module docstring) as masks; ``full`` entries imply a full row and zeros beside them."""

    zero: np.ndarray
    full_row: np.ndarray
    tight_col: np.ndarray
    open_arms: np.ndarray
    C: int
    full: np.ndarray  # (N, K) bool; all False for a new face (no entry full yet)

    def __post_init__(self) -> None:
        self.zero = self.zero | ~self.open_arms[None, :]

    def fill(self, entries: np.ndarray) -> None:
        """Make ``entries`` (a boolean mask, at most one per row) full: their rows full, the rest zero."""
        rows = entries.any(axis=1)
        self.full |= entries
        self.full_row |= rows
        self.zero[rows] = True
        self.zero[self.full] = False

    def with_constraint(self, c: np.ndarray) -> _Face:
        """A copy with constraint ``c`` = (kind, i, j) added to T (kinds: ``_ZERO``, ``_FULL``, ``_ROW``, ``_COL``)."""
        new = _Face(
            self.zero.copy(), self.full_row.copy(), self.tight_col.copy(), self.open_arms, self.C, self.full.copy()
        )
        kind, i, j = (int(c_) for c_ in c)
        if kind == _ZERO:
            new.zero[i, j] = True
        elif kind == _FULL:
            entry = np.zeros_like(new.full)
            entry[i, j] = True
            new.fill(entry)
        elif kind == _ROW:
            new.full_row[i] = True
        else:
            new.tight_col[j] = True
        return new

    def vertex(self) -> np.ndarray | None:
        """An integral vertex of the face (users on arms, -1 for none), or ``None`` when the face is empty."""
        N = self.zero.shape[0]
        col_hi = np.where(self.tight_col, self.C + 1, np.where(self.open_arms, N, 0))
        return bounded_assignment(
            ~self.zero, self.full_row.astype(np.int64), np.where(self.open_arms, self.C + 1, 0), col_hi
        )


def _ratio_test(z, rho, v, face: _Face, C: int) -> tuple[np.ndarray, np.ndarray]:
    """Ratios g_c(z, rho) / g_c(v, 1) of every constraint c with g_c(v, 1) > 0, and those constraints as a
    (3, n) array of (kind, i, j).

    The constraints: z_ij >= 0 where v_ij = 1; z_ij <= rho where v_ij = 0 on a free entry; a row sum <= rho
    for rows v leaves empty; a column sum >= (C+1) rho where v puts more than C+1 users. Constraints in T
    never appear: v lies on F(T), so g_c(v, 1) = 0 for them.
    """
    on = v > 0
    free = ~face.zero & ~face.full
    oi, oj = np.nonzero(on & free)
    fi, fj = np.nonzero(~on & free)
    idle = np.flatnonzero((v.sum(axis=1) == 0) & ~face.full_row)
    size = v.sum(axis=0)
    big = np.flatnonzero(face.open_arms & (size > C + 1) & ~face.tight_col)
    ratios = np.concatenate(
        [
            z[oi, oj],
            rho - z[fi, fj],
            rho - z[idle].sum(axis=1),
            (z[:, big].sum(axis=0) - (C + 1) * rho) / (size[big] - (C + 1)),
        ]
    )
    kinds = np.repeat([_ZERO, _FULL, _ROW, _COL], [len(oi), len(fi), len(idle), len(big)])
    constraints = np.stack(
        [
            kinds,
            np.concatenate([oi, fi, idle, np.zeros(len(big), np.int64)]),
            np.concatenate([oj, fj, np.zeros(len(idle), np.int64), big]),
        ]
    )
    return ratios, constraints
