"""beta(G) of Lemma 3: the largest beta with beta * w_hat in P_C (paper 000, Lemma 3 and Open Problem 1).

A choice of this implementation (the paper does not say how to compute beta(G)): since P_C = conv(union_S P_C(S))
(Section 3.4.2), membership of beta * w_hat is the *disjunctive LP*

    max beta  s.t.  beta * w_hat <= sum_S y_S,  y_S in lambda_S * P_C(S),  sum_S lambda_S = 1,  lambda >= 0,

over the non-empty arm sets S (Lemma 4 gives each P_C(S) by inequalities). We solve it at the level of user
types (users with identical rows; the LP is symmetric under permuting them, so the type-level optimum is the
same) and report a *certified interval* [lower, upper]:

* lower: the value of a feasible point (the LP's, over all arm sets when K <= 12, else over the arm sets found
  by column generation);
* upper: for the LP's pair duals pi (pi >= 0 under domination), every x in P_C has pi.x <= theta(pi) = the
  best vertex under pi (the pricing MIP of :mod:`anondecomp.lower_bound`), so beta <= theta(pi) / (pi.w_hat).

For K <= 12 both ends meet (up to LP tolerance): beta(G) exactly. Lemma 3 then gives a decomposition with
at most D/beta + NK + 1 assignments.

**Reading of "beta * w_hat in P_C" (a choice of this implementation).** Read literally, Lemma 3 and Open Problem 1
ask for the disjunctive LP with equality, beta * w_hat = sum_S y_S. P_C is not closed downwards (open columns need
C+1 users), and with equality beta(G) is 0 on many U-batched graphs: if a user's only arm j has column mass
sum_i w_hat_ij < C+1 times its own w_hat_ij, no point of P_C serves it *exactly*. Lemma 3's converse (a decomposition
with alpha*D assignments gives beta >= 1/alpha) holds only when beta * w_hat may be *dominated* by a point of P_C
(a decomposition over-covers some pairs). We use domination by default (``sense="dominate"``), with the point of
P_C kept on the demand support, or on the graph's support where it is wider (users never play arms they do not want
or may not pad, Section 3.2, property 1; otherwise users could "fill" arms they have no demand for and beta would
overstate what any decomposition achieves); then beta = 1 / (the covering LP of w_hat), the reading of
:func:`anondecomp.membership`. ``sense="equal"`` keeps the literal reading (equality forces the support anyway).
The zero vertex of P_C is included as the empty face: it never raises the optimum, and keeps the equality LP
feasible (beta = 0).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import numpy as np

from anondecomp.errors import InvalidInputError
from anondecomp.graph import DemandGraph
from anondecomp.highs import new_highs
from anondecomp.lower_bound import PricingResult, UserTypes, VertexPricer, run_within
from anondecomp.validation import DENSE_CELLS, checked, freeze_arrays

EXACT_MAX_ARMS = 12
DISJUNCTIVE_MAX_VARIABLES = 400_000  # "auto" builds the full LP only up to this many face variables
DISJUNCTIVE_MAX_FACES = 2**20 - 1
"""Faces (non-empty sets of openable arms, 2^k - 1 for k arms) above which ``method="disjunctive"`` is refused
unless ``allow_large=True`` (each face is a (K,) mask and an LP column); above 40 arms it is always refused."""
TOL = 1e-7


@dataclass(frozen=True)
class BetaResult:
    """beta(G) in [lower, upper] (both certified). ``exact`` when they agree to 1e-6.

    Parameters
    ----------
    lower : float
        A certified lower bound on beta(G) (from a feasible point); also ``value``.
    upper : float
        A certified upper bound on beta(G).
    method : str
        ``"disjunctive"`` (all 2^K - 1 arm sets) or ``"column generation"``.
    faces : numpy.ndarray
        (F, K) boolean: the arm sets with positive weight in the best point found.
    lambdas : numpy.ndarray
        (F,) their weights.
    n_faces : int
        The number of arm sets the LP held.
    wall_time : float
        Seconds spent.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> b = beta(DemandGraph.from_batched(6, np.ones((4, 2), bool)), C=1)
    >>> b.exact, b.faces.shape
    (True, (2, 2))
    """

    lower: float
    upper: float
    method: str
    faces: np.ndarray
    lambdas: np.ndarray
    n_faces: int
    wall_time: float

    def __post_init__(self) -> None:
        freeze_arrays(self)

    @property
    def exact(self) -> bool:
        return bool(np.isfinite(self.upper)) and self.upper - self.lower <= 1e-6 * max(1.0, self.upper)

    @property
    def value(self) -> float:
        """The best certified value (``lower``); equal to beta(G) when ``exact``."""
        return self.lower

    @checked()
    def lemma3_bound(self, graph: DemandGraph) -> float:
        """Lemma 3's bound: a decomposition with at most ``D / beta + N K + 1`` assignments exists.

        Lemma 3 of Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.
        It uses ``lower`` for beta, so the bound holds whether or not the result is ``exact``.

        Parameters
        ----------
        graph : DemandGraph
            The graph beta was computed for; D is its scale from :meth:`DemandGraph.normalized`.

        Returns
        -------
        float
            ``D / lower + N K + 1``, or ``inf`` when ``lower`` is 0.

        Examples
        --------
        >>> import numpy as np
        >>> g = DemandGraph.from_batched(6, np.ones((4, 2), bool))
        >>> beta(g, C=1).lemma3_bound(g)  # 6 / 1 + 4 * 2 + 1
        15.0
        """
        _, D = graph.normalized()
        return D / self.lower + graph.n_users * graph.n_arms + 1 if self.lower > 0 else np.inf


class _Disjunctive:
    """The type-level disjunctive LP over a list of faces, built in one piece (sparse) or grown face by face."""

    def __init__(self, types: UserTypes, what: np.ndarray, C: int, n_arms: int, sense: str):
        import highspy

        self.types, self.what, self.C, self.K, self.sense = types, what, C, n_arms, sense
        self.inf = highspy.kHighsInf
        self.h = new_highs()
        self.h.setOptionValue("presolve", "off")
        self.h.setOptionValue("simplex_strategy", 4)
        P = types.n_pairs
        e = np.zeros(0, np.int32)
        # rows: per pair sum_S Y - beta * n w_hat >= 0 (or = 0), then the convexity row sum lambda = 1
        upper = np.zeros(P) if sense == "equal" else np.full(P, self.inf)
        self.h.addRows(P, np.zeros(P), upper, 0, e, e, np.zeros(0))
        self.h.addRows(1, np.ones(1), np.ones(1), 0, e, e, np.zeros(0))
        self.conv_row = P
        self.h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.h.addCols(
            1,
            np.ones(1),
            np.zeros(1),
            np.array([self.inf]),
            P,
            np.zeros(1, np.int32),
            np.arange(P, dtype=np.int32),
            -what,
        )
        # the empty face (the zero vertex of P_C): never raises the optimum (rescale the other weights), but
        # keeps the LP feasible with beta = 0 when some wanted arm has at most C users
        self.h.addCols(
            1,
            np.zeros(1),
            np.zeros(1),
            np.array([self.inf]),
            1,
            np.zeros(1, np.int32),
            np.array([self.conv_row], np.int32),
            np.ones(1),
        )
        self.faces: list[np.ndarray] = []
        self.lam_col: list[int] = []
        self._keys: set[bytes] = set()

    def add_faces(self, masks: np.ndarray) -> None:
        """Add many faces at once (one sparse block of rows and columns)."""
        import scipy.sparse as sp

        masks = np.array([m for m in np.asarray(masks, bool) if m.any() and m.tobytes() not in self._keys])
        if not len(masks):
            return
        t, C = self.types, self.C
        F = len(masks)
        inside = masks[:, t.aj]  # (F, P): pair's arm in the face
        # a face whose arm no user wants, or which some type cannot reach, still gets rows: the LP decides
        type_in = np.zeros((F, t.n_types), dtype=bool)
        fi, pi = np.nonzero(inside)
        type_in[fi, t.ti[pi]] = True
        ft, tt = np.nonzero(type_in)
        fa, aa = np.nonzero(masks)
        row0, col0 = self.h.getNumRow(), self.h.getNumCol()
        type_row = np.full((F, t.n_types), -1, dtype=np.int64)
        type_row[ft, tt] = row0 + np.arange(len(ft))
        arm_row = np.full((F, self.K), -1, dtype=np.int64)
        arm_row[fa, aa] = row0 + len(ft) + np.arange(len(fa))
        n_rows = len(ft) + len(fa)
        lower = np.concatenate([np.full(len(ft), -self.inf), np.zeros(len(fa))])
        upper = np.concatenate([np.zeros(len(ft)), np.full(len(fa), self.inf)])
        e = np.zeros(0, np.int32)
        self.h.addRows(n_rows, lower, upper, 0, e, e, np.zeros(0))
        # columns: per face lambda_S, then its Y pairs
        lam_idx = np.arange(F)
        y_idx = F + np.arange(len(fi))
        rows = np.concatenate(
            [
                type_row[ft, tt],
                arm_row[fa, aa],
                np.full(F, self.conv_row),
                pi,
                type_row[fi, t.ti[pi]],
                arm_row[fi, t.aj[pi]],
            ]
        )
        cols = np.concatenate([lam_idx[ft], lam_idx[fa], lam_idx, y_idx, y_idx, y_idx])
        vals = np.concatenate(
            [-t.counts[tt].astype(float), np.full(len(fa), -(C + 1.0)), np.ones(F), np.ones(3 * len(fi))]
        )
        A = sp.csc_matrix((vals, (rows, cols)), shape=(self.h.getNumRow(), F + len(fi)))
        n = F + len(fi)
        self.h.addCols(
            n,
            np.zeros(n),
            np.zeros(n),
            np.full(n, self.inf),
            A.nnz,
            A.indptr[:-1].astype(np.int32),
            A.indices.astype(np.int32),
            A.data,
        )
        for f in range(F):
            self.faces.append(masks[f])
            self.lam_col.append(col0 + f)
            self._keys.add(masks[f].tobytes())

    def solve(self, time_limit: float | None) -> bool:
        import highspy

        run_within(self.h, time_limit)
        self.h.run()
        return self.h.getModelStatus() == highspy.HighsModelStatus.kOptimal

    def value(self) -> float:
        return float(self.h.getInfo().objective_function_value)

    def lambdas(self) -> np.ndarray:
        return np.asarray(self.h.getSolution().col_value)[self.lam_col]

    def prices(self) -> np.ndarray:
        """Pair duals, signed so that pi . w_hat >= 0. Under domination any pi >= 0 certifies an upper bound
        (:func:`_upper`), and the covering rows' duals share one sign, so their magnitudes are taken."""
        pi = np.asarray(self.h.getSolution().row_dual[: self.types.n_pairs])
        if self.sense == "dominate":
            return np.abs(pi)
        return -pi if np.dot(pi, self.what) < 0 else pi


def _upper(
    pricer: VertexPricer, pi: np.ndarray, what: np.ndarray, time_limit: float | None
) -> tuple[float, PricingResult | None]:
    """beta <= theta(pi) / (pi . w_hat) (pi >= 0 under domination); returns (bound, pricing result)."""
    scale = float(np.dot(pi, what))
    if scale <= 1e-12:
        return np.inf, None
    priced = pricer.solve(pi, time_limit)
    if priced is None:
        return np.inf, None
    return max(priced.bound, 0.0) / scale, priced


@checked()
def beta(
    graph: DemandGraph,
    C: int,
    *,
    method: str = "auto",
    sense: str = "dominate",
    time_limit: float | None = None,
    allow_large: bool = False,
) -> BetaResult:
    """beta(G) of Lemma 3 (paper 000), exactly for K <= 12, else a certified interval.

    Parameters
    ----------
    graph : DemandGraph
        The demand graph; w_hat = w / D with D = the largest row sum (for a batched graph, its demand).
    C : int
        The anonymity parameter (>= 1).
    method : {"auto", "disjunctive", "colgen"}, optional
        ``"disjunctive"`` (every non-empty set of openable arms; exact), ``"colgen"`` (faces by column
        generation with the pricing MIP; exact when it converges, which the interval certifies), or
        ``"auto"`` (default): disjunctive when at most 12 arms can open and the LP has at most 400,000 face
        variables (e.g. 100 (type, arm) pairs at K = 12), else column generation.
    sense : {"dominate", "equal"}, optional
        ``"dominate"`` (default): beta * w_hat <= some point of P_C, the reading under which both halves of
        Lemma 3 hold; ``"equal"``: beta * w_hat itself in P_C, as Lemma 3 is printed (often 0: a user whose
        only arm is thin cannot be served exactly; see the module docstring).
    time_limit : float, optional
        Seconds; column generation then stops with the interval found so far.
    allow_large : bool, optional
        Build the dense (users x arms) model above :data:`~anondecomp.validation.DENSE_CELLS` cells, and the
        disjunctive LP above :data:`DISJUNCTIVE_MAX_FACES` faces, instead of refusing (default False).

    Returns
    -------
    BetaResult
        The certified interval [lower, upper] and the best point's faces.

    Raises
    ------
    InvalidInputError
        For an unknown ``method`` or ``sense``, or C < 1; for a graph above the size limits (unless
        ``allow_large``).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> b = beta(DemandGraph.from_batched(6, np.ones((4, 2), bool)), C=1)
    >>> round(b.lower, 6), b.exact
    (1.0, True)
    """
    if method not in ("auto", "disjunctive", "colgen"):
        raise InvalidInputError(f"beta method must be auto, disjunctive or colgen, got {method!r}")
    if sense not in ("dominate", "equal"):
        raise InvalidInputError(f"beta sense must be dominate or equal, got {sense!r}")
    if isinstance(C, bool) or not isinstance(C, int | np.integer) or C < 1:
        raise InvalidInputError(f"C must be an integer >= 1, got {C!r}")
    if graph.n_users * graph.n_arms > DENSE_CELLS and not allow_large:
        raise InvalidInputError(
            f"beta builds dense (users x arms) arrays: {graph.n_users} x {graph.n_arms} is above "
            f"DENSE_CELLS = {DENSE_CELLS:.0e} cells; pass allow_large=True to build them anyway"
        )
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    w_hat, _ = graph.normalized()
    K = graph.n_arms
    # pairs: the demand, and the wanted arms a user may play without demand (it pads there, with w_hat = 0);
    # users are one type when both agree (a support equal to the demand gives the demand's types and pairs)
    may = (w_hat > 0) | (graph.support & np.any(w_hat > 0, axis=0)[None, :])
    padded = not np.array_equal(may, w_hat > 0)
    keys, of_user, counts = np.unique(
        np.concatenate([w_hat, may], axis=1) if padded else w_hat, axis=0, return_inverse=True, return_counts=True
    )
    keys = keys if padded else np.concatenate([keys, keys > 0], axis=1)
    rows = keys[:, :K]
    ti, aj = np.nonzero(keys[:, K:] > 0)
    types = UserTypes(counts.astype(np.int64), of_user.ravel(), ti, aj, (rows[ti, aj] > 0).astype(np.int64), K)
    what = counts[ti] * rows[ti, aj]  # n_t * w_hat_tj per pair (0 for a padding pair)
    # arms that can open at all (>= C+1 users want them); pairs elsewhere force beta = 0
    usable = np.flatnonzero(graph.arm_degrees >= C + 1)
    if method == "auto":  # compared in integers: 2.0 ** 1100 overflows a float
        size = types.n_pairs * 2 ** max(len(usable) - 1, 0)
        method = "disjunctive" if len(usable) <= EXACT_MAX_ARMS and size <= DISJUNCTIVE_MAX_VARIABLES else "colgen"
    n_faces = 2 ** len(usable) - 1
    if method == "disjunctive" and (n_faces > DISJUNCTIVE_MAX_FACES and not allow_large or len(usable) > 40):
        raise InvalidInputError(
            f"beta method 'disjunctive' would build every non-empty set of the {len(usable)} "
            f"openable arms, 2^{len(usable)} - 1 faces, above DISJUNCTIVE_MAX_FACES = "
            f"{DISJUNCTIVE_MAX_FACES}"
            + ("" if len(usable) > 40 else "; pass allow_large=True")
            + ", or use method 'colgen'"
        )
    lp = _Disjunctive(types, what, int(C), K, sense)
    pricer = VertexPricer(types, int(C), K) if types.n_pairs else None
    if method == "disjunctive":
        masks = np.zeros((2 ** len(usable) - 1, K), dtype=bool)
        for k, combo in enumerate(c for r in range(1, len(usable) + 1) for c in itertools.combinations(usable, r)):
            masks[k, list(combo)] = True
        lp.add_faces(masks)
        lp.h.setOptionValue("solver", "ipm")  # one large LP: interior point (then crossover) is ~40x faster
        lp.h.setOptionValue("presolve", "on")
        lp.solve(None if deadline is None else deadline - time.perf_counter())
        lower = lp.value()
        upper = _upper(pricer, lp.prices(), what, None)[0] if pricer is not None else lower
        upper = max(upper, lower)
    else:
        lower, upper = _column_generation(lp, pricer, usable, what, K, deadline)
    lam = lp.lambdas()
    keep = lam > 1e-12
    return BetaResult(
        float(lower),
        float(upper),
        "disjunctive" if method == "disjunctive" else "column generation",
        np.array(lp.faces)[keep] if keep.any() else np.empty((0, K), bool),
        lam[keep],
        len(lp.faces),
        time.perf_counter() - start,
    )


def _column_generation(lp: _Disjunctive, pricer, usable, what, K, deadline) -> tuple[float, float]:
    """Grow the face list by pricing until the interval closes or time runs out; returns (lower, upper)."""
    singles = np.zeros((len(usable), K), dtype=bool)
    singles[np.arange(len(usable)), usable] = True
    every = np.zeros((1, K), dtype=bool)
    every[0, usable] = True
    lp.add_faces(np.concatenate([singles, every]))
    # beta <= 1 always: the user with the largest row sum has sum_j w_hat_ij = 1 and a point of P_C has row
    # sums <= 1, so an interrupted search still reports a finite, certified interval
    lower, upper = 0.0, 1.0
    while True:
        left = None if deadline is None else deadline - time.perf_counter()
        if (left is not None and left <= 0) or not lp.solve(left):
            break
        lower = max(lower, lp.value())
        if pricer is None:
            upper = lower
            break
        left = None if deadline is None else deadline - time.perf_counter()
        bound, priced = _upper(pricer, lp.prices(), what, left)
        upper = min(upper, bound)
        if priced is None or upper <= lower + TOL:
            break
        before = len(lp.faces)
        lp.add_faces(np.array([priced.open_arms(lp.types, K, x) for x in (priced.x, *priced.others)]))
        if len(lp.faces) == before:
            break
    return lower, max(upper, lower)
