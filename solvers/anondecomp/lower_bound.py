"""The column-generation LP: a certified lower bound on R for any decomposition (spec 4.7 [DECISION]).

The LP ``min sum_r m_r  s.t.  sum_r m_r v_r >= ceil(w),  m >= 0`` over the vertices v_r of P_C has a value no
decomposition can beat (every decomposition is an integral point of it). We solve it at the level of user
*types* (users with identical demand rows are interchangeable, spec 4.7: by symmetry the type-level LP has
the same value) and over *faces* instead of vertices: since P_C = conv(union_S P_C(S)), the LP equals

    min sum_S mu_S  s.t.  sum_S Y^S >= n * q  (every type t, arm j: sum_S Y^S_tj >= n_t q_tj),
                          Y^S in mu_S * P_C(S)  (type level: sum_j Y^S_tj <= n_t mu_S,
                                                 sum_t Y^S_tj >= (C+1) mu_S for j in S, Y^S = 0 off S),

and a face S enters the restricted master with its whole polytope, so few faces are ever needed. Pricing
finds the best vertex of P_C under the covering duals with a HiGHS MIP (open arms z_j; each open arm gets
>= C+1 users; each user at most one arm; users only on arms they want); its arm set is the next face.
Farley's bound ``LP_restricted / max(1, best vertex value)`` is a valid lower bound at every iteration, so a
time limit still returns a certified bound. A greedy heuristic (:class:`GreedyPricer`) prices before the MIP,
which runs only when the heuristic finds no improving face. Given a seed decomposition above the trivial
bound, :func:`lp_lower_bound` also tries arm-first rounds on logs (:mod:`anondecomp.armfirst`), removes rounds
from the shortest of them by rerouting their samples (:func:`anondecomp.improve.shorten_long`), rounds the
master's last solution (:mod:`anondecomp.rounding`) and returns the shortest result when it beats the seed.
Every phase honours the time limit: a seed that cannot finish in its share gives up, the master and the MIP
stop at the deadline, and the rounding starts only within it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from anondecomp.graph import DemandGraph
from anondecomp.highs import load_model, new_highs
from anondecomp.validation import DENSE_CELLS

PRICING_TOL = 1e-7
TIMESHARE_SHARE = 0.3  # of a time limit, for the time-shared seed of lp_lower_bound
SEED_COLUMNS = 40_000  # the seed's faces enter the master while their columns stay within this many...
MIN_SEED_FACES = 64    # ...but at least this many faces (the master's size before this budget existed)
TRIVIAL = "trivial bound max_i sum_j ceil(w_ij), met by R"
TOO_LARGE = "trivial bound max_i sum_j ceil(w_ij); no LP above DENSE_CELLS users x arms"
ROUNDING_SHARE = 0.2   # of a time limit, kept for rounding the master when the seed is above the trivial bound
ARMFIRST_SHARE = 0.5   # of a time limit, after which arm-first rounds give up (a log's seed above the trivial bound)
ARMFIRST_RESTARTS = 2  # ... and their restarts with noisy scores
REROUTE_SHARE = 0.3     # ... and then, until this share more has passed, rounds removed from the shortest of them
REROUTE_SECONDS = 10.0  # ... or so many seconds without a time limit
_EMPTY_I = np.empty(0, dtype=np.int32)
_EMPTY_F = np.empty(0, dtype=np.float64)


@dataclass(frozen=True)
class UserTypes:
    """Users grouped by identical demand rows (and support rows, when a support is given).

    ``required`` (T, K) the demand row of each type, ``counts`` (T,) its number of users, ``of_user`` (N,) the
    type of every user; ``ti``, ``aj`` list the (type, arm) pairs a type may play on a wanted arm (the
    covering rows; a pair with zero demand there only pads groups: its row asks for 0).
    """

    required: np.ndarray
    counts: np.ndarray
    of_user: np.ndarray
    ti: np.ndarray
    aj: np.ndarray

    @classmethod
    def from_required(cls, required: np.ndarray, support: np.ndarray | None = None) -> UserTypes:
        """Types of the demand ``required`` (N, K); ``support`` (N, K bool) adds the pairs users may play
        without demand on arms someone wants (padding), and users differing there are different types."""
        req = np.asarray(required, dtype=np.int64)
        K = req.shape[1]
        # users are interchangeable when both their demand and the wanted arms they may play agree; when the
        # support adds nothing, these pairs are exactly the demand's and the types those of the demand alone
        want = req > 0
        may = want if support is None else want | (np.asarray(support, bool) & want.any(axis=0)[None, :])
        if may is want or np.array_equal(may, want):  # no padding pair: the demand alone defines the types
            rows, of_user, counts = np.unique(req, axis=0, return_inverse=True, return_counts=True)
            ti, aj = np.nonzero(rows > 0)
            return cls(rows, counts.astype(np.int64), of_user.ravel(), ti, aj)
        key = np.concatenate([req, may.astype(np.int64)], axis=1)
        rows, of_user, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
        ti, aj = np.nonzero(rows[:, K:] > 0)
        return cls(rows[:, :K], counts.astype(np.int64), of_user.ravel(), ti, aj)

    @property
    def n_covering(self) -> int:
        """Pairs with positive demand (the others only pad groups)."""
        return int((self.required[self.ti, self.aj] > 0).sum())

    @property
    def n_types(self) -> int:
        return len(self.counts)

    @property
    def n_pairs(self) -> int:
        return len(self.ti)

    @property
    def demand(self) -> np.ndarray:
        """Right-hand sides of the covering rows: ``n_t * q_tj`` per pair."""
        return (self.counts[self.ti] * self.required[self.ti, self.aj]).astype(np.float64)


class FaceProgram:
    """The covering LP (or, with :meth:`make_integer`, IP) over a growing list of faces, on HiGHS.

    Columns: per face S one ``mu_S`` (cost 1; the face's length) and one ``Y^S_p`` per pair p with arm in S.
    Rows: one covering row per pair, then per face one row per participating type and one per arm of S.
    """

    def __init__(self, types: UserTypes, C: int):
        import highspy

        self.types, self.C = types, C
        self.inf = highspy.kHighsInf
        self.h = new_highs()
        self.h.setOptionValue("simplex_strategy", 4)  # primal simplex: the old basis stays feasible
        self.h.setOptionValue("presolve", "off")      # keep the warm start between solves
        P = types.n_pairs
        self.h.addRows(P, types.demand, np.full(P, self.inf), 0, _EMPTY_I, _EMPTY_I, _EMPTY_F)
        self.faces: list[np.ndarray] = []
        self.mu_col: list[int] = []
        self.y_cols: list[tuple[int, np.ndarray]] = []  # (first column, pair indices)
        self._keys: dict[bytes, int] = {}
        self._cold = True  # no basis yet: the first LP solve runs on the interior-point solver

    def index(self, mask: np.ndarray) -> int | None:
        return self._keys.get(np.asarray(mask, bool).tobytes())

    def add_face(self, mask: np.ndarray) -> int | None:
        """Add face S (boolean arm mask); returns its index, or ``None`` if it is already present or empty."""
        S = np.asarray(mask, dtype=bool)
        key = S.tobytes()
        if key in self._keys or not S.any():
            return None
        t = self.types
        pairs = np.flatnonzero(S[t.aj])
        arms = np.flatnonzero(S)
        if len(np.setdiff1d(arms, t.aj[pairs])):
            return None  # an arm of S nobody wants: P_C(S) has no point with demand support
        tt = np.unique(t.ti[pairs])
        h = self.h
        row0, col0 = h.getNumRow(), h.getNumCol()
        n_t, n_a = len(tt), len(arms)
        h.addRows(n_t, np.full(n_t, -self.inf), np.zeros(n_t), 0, _EMPTY_I, _EMPTY_I, _EMPTY_F)
        h.addRows(n_a, np.zeros(n_a), np.full(n_a, self.inf), 0, _EMPTY_I, _EMPTY_I, _EMPTY_F)
        type_row = np.full(t.n_types, -1, dtype=np.int64)
        type_row[tt] = row0 + np.arange(n_t)
        arm_row = np.full(len(S), -1, dtype=np.int64)
        arm_row[arms] = row0 + n_t + np.arange(n_a)
        # mu_S: -n_t in each type row, -(C+1) in each arm row
        idx = np.concatenate([type_row[tt], arm_row[arms]]).astype(np.int32)
        val = np.concatenate([-t.counts[tt].astype(float), np.full(n_a, -(self.C + 1.0))])
        h.addCols(1, np.ones(1), np.zeros(1), np.array([self.inf]), len(idx),
                  np.zeros(1, np.int32), idx, val)
        # Y^S_p: +1 in its covering row, its type row and its arm row
        n = len(pairs)
        index = np.stack([pairs, type_row[t.ti[pairs]], arm_row[t.aj[pairs]]], axis=1).ravel().astype(np.int32)
        h.addCols(n, np.zeros(n), np.zeros(n), np.full(n, self.inf), 3 * n, (3 * np.arange(n)).astype(np.int32),
                  index, np.ones(3 * n))
        self.faces.append(S)
        self.mu_col.append(col0)
        self.y_cols.append((col0 + 1, pairs))
        self._keys[key] = len(self.faces) - 1
        return len(self.faces) - 1

    def make_integer(self) -> None:
        import highspy

        self._cold = False
        n = self.h.getNumCol()
        self.h.changeColsIntegrality(n, np.arange(n, dtype=np.int32),
                                     np.full(n, highspy.HighsVarType.kInteger, dtype=np.uint8))

    def set_start(self, lengths: np.ndarray, Y: np.ndarray) -> None:
        """A starting (integer) solution: ``lengths`` (F,) and ``Y`` (F, P) in face order."""
        x = np.zeros(self.h.getNumCol())
        for f, (mu, (start, pairs)) in enumerate(zip(self.mu_col, self.y_cols, strict=True)):
            x[mu] = lengths[f]
            x[start:start + len(pairs)] = Y[f, pairs]
        self.h.setSolution(len(x), np.arange(len(x), dtype=np.int32), x)

    def solve(self, time_limit: float | None = None) -> bool:
        """Solve; True when HiGHS has a feasible solution (optimal, or the IP's best at the time limit).

        A cold LP (a master seeded with many faces has ~10^4-10^5 columns) goes to the interior-point solver
        with crossover, 5-10x faster than simplex from scratch here; the basis it leaves warm-starts the primal
        simplex of the later column-generation rounds.
        """
        self.h.setOptionValue("time_limit", 1e6 if time_limit is None else max(float(time_limit), 1e-3))
        if self._cold:
            self.h.setOptionValue("solver", "ipm")
        self.h.run()
        if self._cold:
            self.h.setOptionValue("solver", "simplex")
            self._cold = False
        return self.h.getInfo().primal_solution_status == 2

    @property
    def optimal(self) -> bool:
        import highspy

        return self.h.getModelStatus() == highspy.HighsModelStatus.kOptimal

    @property
    def value(self) -> float:
        return float(self.h.getInfo().objective_function_value)

    def duals(self) -> np.ndarray:
        """Covering duals, one per pair (0 for a padding pair: its row asks for nothing, so a price there
        would only loosen Farley's bound)."""
        t = self.types
        pi = np.maximum(np.asarray(self.h.getSolution().row_dual[:t.n_pairs]), 0.0)
        return np.where(t.required[t.ti, t.aj] > 0, pi, 0.0)

    def solution(self) -> tuple[np.ndarray, np.ndarray]:
        """(mu (F,), Y (F, P)): face lengths and type-level face points (Y^S_p = users x samples)."""
        x = np.asarray(self.h.getSolution().col_value)
        mu = x[self.mu_col] if self.mu_col else np.zeros(0)
        Y = np.zeros((len(self.faces), self.types.n_pairs))
        for f, (start, pairs) in enumerate(self.y_cols):
            Y[f, pairs] = x[start:start + len(pairs)]
        return mu, Y


@dataclass(frozen=True)
class PricingResult:
    """Best type-level vertex found: ``x`` users of each pair's type on its arm; ``value`` its price;
    ``bound`` an upper bound on the best price over all vertices (the MIP's dual bound)."""

    x: np.ndarray
    value: float
    bound: float
    others: tuple[np.ndarray, ...] = ()  # further improving vertices HiGHS met on the way

    def open_arms(self, types: UserTypes, n_arms: int, x: np.ndarray | None = None) -> np.ndarray:
        mask = np.zeros(n_arms, dtype=bool)
        mask[types.aj[(self.x if x is None else x) > 0]] = True
        return mask


class VertexPricer:
    """max sum_p price_p x_p over the type-level vertices of P_C, as a HiGHS MIP built once.

    Variables: x_p in {0..n_t} per pair (users of type t on arm j), z_j in {0, 1} per arm (open).
    Rows: sum_j x_tj <= n_t (a user is on at most one arm); sum_t x_tj >= (C+1) z_j (an open arm holds
    C+1 users); x_tj <= n_t z_j (users only on open arms). For fixed z the rest is a bipartite transportation
    problem (totally unimodular), so the MIP branches on the K arm variables only.
    """

    def __init__(self, types: UserTypes, C: int, n_arms: int):
        import scipy.sparse as sp

        self.types = types
        ti, aj = types.ti, types.aj
        P, T = types.n_pairs, types.n_types
        arms = np.unique(aj)
        z = P + np.searchsorted(arms, aj)  # z column of each pair's arm
        nv, n_a = P + len(arms), len(arms)
        r = np.concatenate([ti, T + np.searchsorted(arms, aj), T + n_a + np.arange(P),
                            T + np.arange(n_a), T + n_a + np.arange(P)])
        c = np.concatenate([np.arange(P), np.arange(P), np.arange(P), P + np.arange(n_a), z])
        v = np.concatenate([np.ones(3 * P), np.full(n_a, -(C + 1.0)), -types.counts[ti].astype(float)])
        nr = T + n_a + P
        A = sp.csc_matrix((v, (r, c)), shape=(nr, nv))
        self.h = new_highs()
        self.h.setOptionValue("mip_rel_gap", 1e-7)
        self.h.setOptionValue("presolve", "off")  # 3-4x faster here: the model is already tight and tiny
        self.h.setOptionValue("mip_improving_solution_save", True)
        load_model(self.h, A, np.zeros(nv), np.zeros(nv), np.concatenate([types.counts[ti], np.ones(n_a)]),
                   np.concatenate([np.full(T, -np.inf), np.zeros(n_a), np.full(P, -np.inf)]),
                   np.concatenate([types.counts, np.full(n_a, np.inf), np.zeros(P)]),
                   maximize=True, integer=True)
        self.P = P

    def solve(self, prices: np.ndarray, time_limit: float | None = None) -> PricingResult | None:
        """Best vertex for ``prices`` (one per pair, any sign); ``None`` if HiGHS found no solution in time."""
        import highspy

        self.h.changeColsCost(self.P, np.arange(self.P, dtype=np.int32), np.asarray(prices, dtype=np.float64))
        self.h.setOptionValue("time_limit", 1e6 if time_limit is None else max(float(time_limit), 1e-3))
        self.h.run()
        info = self.h.getInfo()
        if info.primal_solution_status != 2:
            return None
        x = np.round(np.asarray(self.h.getSolution().col_value[:self.P])).astype(np.int64)
        value = float(np.dot(prices, x))
        others = tuple(np.round(np.asarray(s.col_value[:self.P])).astype(np.int64)
                       for s in self.h.getSavedMipSolutions())
        bound = float(info.mip_dual_bound)
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal and not np.isfinite(bound):
            bound = np.inf
        return PricingResult(x, value, max(value, bound), others)


class GreedyPricer:
    """A fast heuristic for the pricing problem, tried before the MIP: users (each type's users one by one)
    go to their most valuable open arm, users with nothing to gain pad the arms short of C+1, and arms still
    short close, the weakest first (:func:`anondecomp.methods.slack.open_arms`). Its vertex is exact (every
    open arm holds C+1 users), so a price above 1 is a valid improving face; it proves nothing when it finds
    none, which is left to :class:`VertexPricer`."""

    def __init__(self, types: UserTypes, C: int, n_arms: int):
        counts = np.bincount(types.ti, minlength=types.n_types)
        order = np.argsort(types.ti, kind="stable")
        first = np.concatenate([[0], np.cumsum(counts)[:-1]])
        t = types.of_user
        reps = counts[t]
        offset = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
        self.pair = order[np.repeat(first[t], reps) + offset]   # one edge per (user, pair of its type)
        self.user = np.repeat(np.arange(len(t)), reps)
        self.arm = types.aj[self.pair]
        self.N, self.K, self.C, self.P = len(t), n_arms, C, types.n_pairs
        self.start = np.searchsorted(self.user, np.arange(self.N))
        self.has = reps > 0
        self.degree = np.bincount(self.arm, minlength=n_arms)

    def best(self, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per user: (best value, its edge index), as slack's edges give it (the interface ``open_arms`` reads)."""
        from anondecomp.methods.slack import Edges  # imported here: the methods package imports this module

        return Edges.best(self, value)

    def solve(self, prices: np.ndarray) -> np.ndarray:
        """A type-level vertex (users per pair) of high value under ``prices`` (>= 0)."""
        from anondecomp.methods.slack import open_arms

        arm = open_arms(self, np.maximum(prices, 0.0)[self.pair], self.C)
        on = arm[self.user] == self.arm
        return np.bincount(self.pair[on], minlength=self.P).astype(np.int64)


@dataclass(frozen=True)
class LPBound:
    """Outcome of :func:`lp_lower_bound`.

    Parameters
    ----------
    value : float
        A certified lower bound on R for every C-anonymous decomposition (the LP optimum when
        ``converged``; Farley's bound otherwise).
    lp_value : float
        The restricted master's value (an upper bound on the LP optimum).
    converged : bool
        Whether column generation converged.
    iterations : int
        Pricing rounds.
    faces : numpy.ndarray
        (F, K) boolean: the arm sets in the master.
    mu : numpy.ndarray
        (F,) their LP lengths.
    wall_time : float
        Seconds spent.
    decomposition : tuple of numpy.ndarray or None
        (assignments, multiplicities) of a decomposition shorter than the given seed, found on the way (it
        verifies): a fast seed that meets the trivial bound, or the master's solution rounded
        (:mod:`anondecomp.rounding`); ``None`` otherwise.
    decomposition_from : str
        Where ``decomposition`` comes from: ``"polytope"``, ``"timeshare"``, ``"armfirst"``
        (:mod:`anondecomp.armfirst`, tried on logs), ``"armfirst+improve"`` (with rounds removed by
        :func:`anondecomp.improve.shorten_long`) or ``"lp"`` (rounding).
    how : str
        How ``value`` is certified: :data:`TRIVIAL` when the seed meets the trivial bound max_i sum_j ceil(w_ij)
        (no LP is solved), :data:`TOO_LARGE` when the graph has more than
        :data:`~anondecomp.validation.DENSE_CELLS` users x arms (the LP's model is dense), ``"LP optimum"``,
        ``"time limit: Farley bound"`` or, when the time limit left nothing better, ``"time limit: trivial
        bound"``.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> bound = lp_lower_bound(DemandGraph.from_batched(10, np.ones((8, 2), bool)), 3)
    >>> bound.converged, round(bound.value, 6)
    (True, 10.0)
    """

    value: float
    lp_value: float
    converged: bool
    iterations: int
    faces: np.ndarray
    mu: np.ndarray
    wall_time: float
    decomposition: tuple[np.ndarray, np.ndarray] | None = None
    decomposition_from: str = ""
    how: str = "LP optimum"


class ColumnGeneration:
    """Face column generation for the covering LP; keeps the master, pricer and types for reuse."""

    def __init__(self, types: UserTypes, C: int, n_arms: int):
        self.types, self.C, self.n_arms = types, C, n_arms
        self.master = FaceProgram(types, C)
        self.pricer = VertexPricer(types, C, n_arms) if types.n_covering else None
        self.greedy = GreedyPricer(types, C, n_arms) if types.n_covering else None
        self.bound = 0.0
        self.iterations = 0
        self.converged = types.n_covering == 0
        self.point: tuple[int, np.ndarray] | None = None  # (faces, column values) of the last solved master

    def add_initial_faces(self, faces) -> None:
        """Singleton faces (always feasible after the thin-arm check), the all-arms face, then ``faces``."""
        wanted = np.unique(self.types.aj)
        for j in wanted:
            S = np.zeros(self.n_arms, dtype=bool)
            S[j] = True
            self.master.add_face(S)
        all_arms = np.zeros(self.n_arms, dtype=bool)
        all_arms[wanted] = True
        if len(wanted) * (self.C + 1) <= self.types.counts.sum():  # else P_C(all arms) is empty: no columns
            self.master.add_face(all_arms)
        for S in faces:
            self.master.add_face(S)

    def run(self, deadline: float | None = None, max_iter: int = 100_000, floor: float | None = None) -> None:
        """Price until no face improves the master (converged) or the deadline passes.

        ``floor`` is a known lower bound on the LP optimum (the trivial bound max_i sum_j ceil(w_ij)): once the
        restricted master's value, an upper bound on the optimum, comes down to it, the optimum is known and
        no pricing is needed (this settles dense graphs whose LP bound is the trivial one at once, when the
        master starts with a good decomposition's faces).
        """
        if self.pricer is None:
            return
        for _ in range(max_iter):
            left = None if deadline is None else deadline - time.perf_counter()
            if left is not None and left <= 0:
                return
            if not self.master.solve(left) or not self.master.optimal:
                return
            self.point = (len(self.master.faces), np.array(self.master.h.getSolution().col_value))
            value = self.master.value
            if floor is not None and value <= floor * (1 + 1e-9):
                self.bound, self.converged = max(self.bound, floor), True
                return
            prices = self.master.duals()
            x = self.greedy.solve(prices)
            if float(np.dot(prices, x)) > 1 + PRICING_TOL:  # the heuristic found an improving face: no MIP
                self.iterations += 1
                if self.master.add_face(PricingResult(x, 0.0, np.inf).open_arms(self.types, self.n_arms)) \
                        is not None:
                    continue
            left = None if deadline is None else deadline - time.perf_counter()
            priced = self.pricer.solve(prices, left)
            self.iterations += 1
            if priced is None:
                return
            self.bound = max(self.bound, value / max(1.0, priced.bound))
            if priced.value <= 1 + PRICING_TOL:
                self.converged = priced.bound <= 1 + PRICING_TOL
                if self.converged:
                    self.bound = max(self.bound, value)
                return
            added = self.master.add_face(priced.open_arms(self.types, self.n_arms)) is not None
            for x in priced.others:  # other improving vertices the MIP met on the way: their faces help too
                if float(np.dot(prices, x)) > 1 + PRICING_TOL:
                    added |= self.master.add_face(priced.open_arms(self.types, self.n_arms, x)) is not None
            if not added:
                return  # numerical stall: every improving face is already in the master

    def last_solution(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(faces (F, K), mu (F,), Y (F, P)) of the last master solved to optimality (faces added after it
        get length 0), or ``None`` if none was."""
        if self.point is None:
            return None
        n_faces, x = self.point
        m = self.master
        mu = np.array([x[c] for c in m.mu_col[:n_faces]])
        Y = np.zeros((n_faces, self.types.n_pairs))
        for f, (first, pairs) in enumerate(m.y_cols[:n_faces]):
            Y[f, pairs] = x[first:first + len(pairs)]
        return np.array(m.faces[:n_faces]), mu, Y

    def result(self, start: float) -> LPBound:
        # the face lengths only: the (faces x pairs) points would take 1 GB on a 3000 x 1000 log's master
        mu = np.asarray(self.master.h.getSolution().col_value)[self.master.mu_col] if self.master.faces \
            else np.zeros(0)
        lp_value = self.master.value if self.pricer is not None else 0.0
        return LPBound(self.bound, lp_value, self.converged, self.iterations, np.array(self.master.faces),
                       mu, time.perf_counter() - start)


def open_sets(assignments: np.ndarray, multiplicities: np.ndarray, C: int, wanted: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """Faces used by a decomposition: per distinct assignment, the wanted arms holding >= C+1 users.

    Returns (faces (F, K) bool, total multiplicity of each face), most used first.
    """
    a = np.asarray(assignments, dtype=np.int64)
    K = len(wanted)
    rows = np.arange(len(a), dtype=np.int64)[:, None] * K
    counts = np.bincount((rows + a).ravel(), minlength=len(a) * K).reshape(len(a), K)
    masks = (counts >= C + 1) & wanted[None, :]
    faces, inverse = np.unique(masks, axis=0, return_inverse=True)
    weight = np.bincount(inverse.ravel(), weights=multiplicities, minlength=len(faces))
    order = np.argsort(-weight, kind="stable")
    keep = faces[order].any(axis=1)
    return faces[order][keep], weight[order][keep]


def lp_lower_bound(graph: DemandGraph, C: int, *, seed=None, best_effort: bool = False,
                   time_limit: float | None = None, max_seed_faces: int = 1000) -> LPBound:
    """Certified lower bound on R for every C-anonymous decomposition of ``graph``.

    Parameters
    ----------
    graph : DemandGraph
        The demand graph.
    C : int
        The anonymity parameter (>= 1): an arm is informative only with at least C+1 users on it.
    seed : Decomposition, optional
        A decomposition of this graph; its faces start the master. If it verifies and meets the trivial
        bound ``max_i sum_j ceil(w_ij)``, that is the LP value (no LP solved). Without such a seed, a
        polytope decomposition (when polytope applies) or else a time-shared one
        (:mod:`anondecomp.methods.timeshare`) is built first and used the same way: it usually meets the
        trivial bound, or its faces carry the LP optimum, so the bound comes without pricing.
    best_effort : bool, optional
        Bound the demand that can be covered (arms wanted by <= C users dropped).
    time_limit : float, optional
        Seconds; the bound is then Farley's bound from the last pricing round.
    max_seed_faces : int, optional
        The most faces taken from the seed into the master, most used first; fewer when their columns would
        exceed :data:`SEED_COLUMNS`, but at least :data:`MIN_SEED_FACES`.

    Returns
    -------
    LPBound
        The certified bound and the master's faces.

    Raises
    ------
    InvalidInputError
        If C < 1.
    InfeasibleError
        If an arm is wanted by at most C users and ``best_effort`` is false.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> g = DemandGraph.from_batched(10, np.ones((8, 2), bool))
    >>> round(lp_lower_bound(g, 3).value, 6)
    10.0
    """
    from anondecomp.armfirst import armfirst_rounds  # imported here: it imports the methods package
    from anondecomp.improve import shorten_long
    from anondecomp.validation import prepare
    from anondecomp.verify import verify

    start = time.perf_counter()
    prep = prepare(graph, C, best_effort)
    trivial = prep.lower_bound
    if seed is not None and seed.total_assignments <= trivial:
        # the trivial bound max_i sum_j ceil(w_ij) bounds every decomposition, and the seed meets it: no LP
        return LPBound(float(trivial), float(trivial), True, 0, np.empty((0, graph.n_arms), bool), np.zeros(0),
                       time.perf_counter() - start, how=TRIVIAL)
    if graph.n_users * graph.n_arms > DENSE_CELLS:  # its user types and faces are dense: only the trivial bound
        return LPBound(float(trivial), np.inf, False, 0, np.empty((0, graph.n_arms), bool), np.zeros(0),
                       time.perf_counter() - start, how=TOO_LARGE)
    wanted = (prep.required > 0).any(axis=0)
    seeds = [] if seed is None else [(seed.assignments, seed.multiplicities, seed.method)]
    if seed is not None and seed.total_assignments > trivial and graph.demand is None:
        # a log: arm-first rounds, often much shorter than the given seed there (module anondecomp.armfirst)
        # plain, users without slack first, then restarts of the latter with noisy scores (fixed seeds)
        # a restart runs only while the time left for them is twice the last run: one that would be cut, or
        # barely finish, is worth less than the same time spent rerouting below (3000 x 1000 log at C = 50:
        # a restart gives R = 524-540 in 3-4 s, rerouting about one round less per second)
        last = 0.0
        for tight_first, restart in ((False, None), (True, None), *((True, r) for r in range(ARMFIRST_RESTARTS))):
            deadline = None if time_limit is None else start + ARMFIRST_SHARE * time_limit
            if deadline is not None and restart is not None and deadline - time.perf_counter() < 2 * last:
                break
            began = time.perf_counter()
            found = armfirst_rounds(prep, deadline, tight_first,
                                    None if restart is None else np.random.default_rng(restart))
            last = time.perf_counter() - began
            if found is not None:
                seeds.append((*found, "armfirst"))
                if int(found[1].sum()) <= trivial:
                    break
        # the shortest, with rounds removed by rerouting their samples (anondecomp.improve.shorten_long)
        found = min(seeds[1:], key=lambda x: int(x[1].sum()), default=None)
        if found is not None and int(found[1].sum()) > trivial:
            budget = REROUTE_SECONDS if time_limit is None else \
                (ARMFIRST_SHARE + REROUTE_SHARE) * time_limit - (time.perf_counter() - start)
            shorter = shorten_long(prep, found[0], found[1], time_limit=budget) if budget > 0 else None
            if shorter is not None:
                seeds.append((*shorter, "armfirst+improve"))
    met = any(int(x[1].sum()) <= trivial for x in seeds[1:])   # an arm-first seed meets the bound already
    if not met and (seed is None or (seed.total_assignments > trivial
                                     and seed.method not in ("polytope", "timeshare"))):
        # its share of the time limit, within what the arm-first seeds left
        seeds += _fast_seed(prep, best_effort, None if time_limit is None else
                            min(time_limit, max(start + time_limit - time.perf_counter(), 0.0) / TIMESHARE_SHARE))
    faces: list[np.ndarray] = []
    arm_pairs = np.bincount(np.nonzero(prep.required > 0)[1], minlength=graph.n_arms)
    used = 0  # columns of the faces taken so far: seeds after the first only fill what is left of the budget
    for k, (a, m, how) in enumerate(seeds):
        if int(m.sum()) == trivial and verify(graph, prep.C, a, m, required=prep.required).valid:
            # a fast seed that meets the bound is also a shorter decomposition than a longer given seed
            shorter = seed is not None and trivial < seed.total_assignments
            return LPBound(float(trivial), float(trivial), True, 0, np.empty((0, graph.n_arms), bool),
                           np.zeros(0), time.perf_counter() - start, (a, m) if shorter else None,
                           how if shorter else "")
        found = open_sets(a, m, prep.C, wanted)[0]
        # the seed's faces, most used first, while their columns (pairs on the face's arms) fit the budget:
        # all of them make the master at least as good as the seed itself, which the rounding then improves
        size = np.cumsum(found @ arm_pairs)
        fit = int(np.searchsorted(size, SEED_COLUMNS - used, side="right"))
        n = max(min(max_seed_faces, fit), min(len(found), MIN_SEED_FACES)) if k == 0 else min(max_seed_faces, fit)
        faces += list(found[:n])
        used += int(size[n - 1]) if n else 0
    if time_limit is not None and time.perf_counter() >= start + time_limit:  # the seeds took it all
        return LPBound(float(trivial), np.inf, False, 0, np.empty((0, graph.n_arms), bool), np.zeros(0),
                       time.perf_counter() - start, *_shorter_seed(seeds, seed, graph, prep),
                       how="time limit: trivial bound")
    types = UserTypes.from_required(prep.required, graph.support)
    cg = ColumnGeneration(types, prep.C, graph.n_arms)
    cg.add_initial_faces(faces)
    # with a seed above the trivial bound, part of the time is kept for rounding the master into a shorter one
    share = 1.0 if seed is None or seed.total_assignments <= trivial else 1.0 - ROUNDING_SHARE
    cg.run(None if time_limit is None else start + share * time_limit, floor=float(trivial))
    res = cg.result(start)
    # max_i sum_j ceil(w_ij) bounds R and the LP optimum from below too; it only helps before convergence
    value = max(res.value, float(trivial))
    how = "LP optimum" if res.converged else \
        "time limit: Farley bound" if res.value > trivial else "time limit: trivial bound"
    rounded = None
    in_time = time_limit is None or time.perf_counter() < start + time_limit
    shorter, source = _shorter_seed(seeds, seed, graph, prep)  # a fast seed that beats the given one
    best_total = None if seed is None else int(seed.total_assignments if shorter is None else shorter[1].sum())
    if seed is not None and best_total > int(np.ceil(value - 1e-6)) and in_time:
        rounded = _rounded(cg, prep, graph, best_total)
    if rounded is not None:
        source = "lp"
    else:
        rounded = shorter
    return LPBound(value, res.lp_value, res.converged, res.iterations, res.faces, res.mu,
                   time.perf_counter() - start, rounded, source, how)


def _shorter_seed(seeds, seed, graph: DemandGraph, prep) -> tuple[tuple[np.ndarray, np.ndarray] | None, str]:
    """(decomposition, source) of the shortest of ``seeds[1:]`` that beats ``seed`` and verifies, else
    ``(None, "")``."""
    from anondecomp.verify import verify

    if seed is None:
        return None, ""
    for a, m, src in sorted(seeds[1:], key=lambda x: int(x[1].sum())):
        if int(m.sum()) < seed.total_assignments and verify(graph, prep.C, a, m, required=prep.required).valid:
            return (a, m), src
    return None, ""


def _rounded(cg: ColumnGeneration, prep, graph: DemandGraph, seed_total: int
             ) -> tuple[np.ndarray, np.ndarray] | None:
    """The master's last solution rounded into a decomposition (:mod:`anondecomp.rounding`), when that is
    shorter than ``seed_total`` and verifies."""
    from anondecomp.result import compress
    from anondecomp.rounding import round_master
    from anondecomp.verify import verify

    point = cg.last_solution()
    if point is None:
        return None
    found = round_master(prep, cg.types, *point)
    if found is None or int(found[1].sum()) >= seed_total:
        return None
    a, m = compress(*found)
    return (a, m) if verify(graph, prep.C, a, m, required=prep.required).valid else None


def _fast_seed(prep, best_effort: bool, time_limit: float | None) -> list[tuple[np.ndarray, np.ndarray, str]]:
    """An extra seed that often meets the trivial bound: the polytope method when it applies, else
    time-shared faces (``[]`` if those find nothing); (assignments, multiplicities, method)."""
    from anondecomp.methods.polytope import polytope_applies, polytope_decomposition
    from anondecomp.methods.timeshare import timeshare

    if not prep.required.any():
        return []
    if not len(polytope_applies(prep.graph, prep.C, prep.required)):
        res = polytope_decomposition(prep.graph, prep.C, best_effort=best_effort)
        return [(res.assignments, res.multiplicities, "polytope")]
    budget = TIMESHARE_SHARE * time_limit if time_limit is not None else None
    found = timeshare(prep, budget, stop_at=prep.lower_bound)
    return [] if found is None else [(*found[:2], "timeshare")]
