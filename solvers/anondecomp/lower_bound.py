"""The column-generation LP: a certified lower bound on R for any decomposition (a choice of this implementation:
the paper does not say how to bound R from below beyond max_i sum_j w_ij, Section 3.2).

The LP ``min sum_r m_r  s.t.  sum_r m_r v_r >= ceil(w),  m >= 0`` over the vertices v_r of P_C has a value no
decomposition can beat (every decomposition is an integral point of it). We solve it at the level of user *types*
(users with identical demand rows are interchangeable: by symmetry the type-level LP has the same value; working on
types is a choice of this implementation) and over *faces* instead of vertices: since P_C = conv(union_S P_C(S)),
the LP equals

    min sum_S mu_S  s.t.  sum_S Y^S >= n * q  (every type t, arm j: sum_S Y^S_tj >= n_t q_tj),
                          Y^S in mu_S * P_C(S)  (type level: sum_j Y^S_tj <= n_t mu_S,
                                                 sum_t Y^S_tj >= (C+1) mu_S for j in S, Y^S = 0 off S),

and a face S enters the restricted master with its whole polytope, so few faces are ever needed. Pricing
finds the best vertex of P_C under the covering duals with a HiGHS MIP (open arms z_j; each open arm gets
>= C+1 users; each user at most one arm; users only on arms they want); its arm set is the next face.
Farley's bound ``LP_restricted / max(1, best vertex value)`` is a valid lower bound at every iteration, so a
time limit still returns a certified bound. A greedy heuristic (:class:`GreedyPricer`) prices before the MIP,
which runs only when the heuristic finds no improving face, or when :data:`STALL_ITERATIONS` heuristic faces in a
row left the master's value unchanged (a degenerate master, whose Farley bound only the MIP can certify).

The types come from the graph's edges (:meth:`UserTypes.from_prepared`), never from a users x arms array, and
the model holds one row per (type, arm) pair: memory grows with the interactions and the number of distinct
users, so the LP runs at any graph size within its time limit. Only a type-level model of more than
:data:`MAX_PAIRS` pairs falls back to the trivial bound (:data:`TOO_LARGE`).

:func:`lp_lower_bound` only bounds: the seed decomposition it is given, a fast seed it builds (polytope or
time-shared faces on graphs small enough for dense models, sessions above) and extra faces only feed the
master. Searching for shorter decompositions with the same master (arm-first rounds, rerouting, the master
rounded) is :func:`anondecomp.improve.polish`'s work, which shares the column generation through
:func:`column_generation`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from anondecomp.flows import ranges
from anondecomp.graph import DemandGraph
from anondecomp.highs import load_model, new_highs
from anondecomp.validation import DENSE_CELLS, Prepared, checked, freeze_arrays

PRICING_TOL = 1e-7
TIMESHARE_SHARE = 0.3  # of a time limit, for the time-shared seed of lp_lower_bound
SEED_COLUMNS = 40_000  # the seeds' faces enter the master while their columns stay within this many...
MIN_SEED_FACES = 64  # ...but at least this many faces (the master's size before this budget existed)
FAST_METHODS = ("polytope", "timeshare")  # a seed of these is the fast seed already: none is built besides it
MAX_PAIRS = 1_000_000
"""(type, arm) pairs above which :func:`lp_lower_bound` builds no LP and returns the trivial bound
(:data:`TOO_LARGE`). The master (one covering row per pair, a column per pair and face), the pricing MIP and
the greedy pricer grow with the pairs. Measured over whole time-limited runs (types, pricers and the master of
the singleton and all-arms faces built, then solved; its cold interior-point solve is the peak) on power-law
logs of 4 x 10^4 to 2 x 10^5 distinct users at C = 40: 2,300, 1,400, 1,700 and 1,800 bytes of peak resident
memory per pair at 1.5 x 10^5, 3.9 x 10^5, 8 x 10^5 and 10^6 pairs (60-120 s; 1.97 GB in all at 10^6). A model
at this limit thus takes about 2 GB."""
STALL_ITERATIONS = 20  # heuristic faces in a row that leave the master's value unchanged before the MIP prices
SPLIT_ROUNDS = 64  # rows still unchecked after this many splits of a hash group become types of their own
TRIVIAL = "trivial bound max_i sum_j ceil(w_ij), met by R"
MET_BY = "trivial bound max_i sum_j ceil(w_ij), met by a {} decomposition"
TOO_LARGE = (
    f"trivial bound max_i sum_j ceil(w_ij); no LP above MAX_PAIRS = {MAX_PAIRS:,} (type, arm) pairs "
    "(anondecomp.lower_bound.MAX_PAIRS)"
)
LP_OPTIMUM = "LP optimum over {} user types"
FARLEY = "time limit: Farley bound"
TIME_TRIVIAL = "time limit: trivial bound"
_EMPTY_I = np.empty(0, dtype=np.int32)
_EMPTY_F = np.empty(0, dtype=np.float64)


def run_within(h, seconds: float | None) -> None:
    """Let the next ``h.run()`` take at most ``seconds`` (``None``: no limit).

    HiGHS compares its ``time_limit`` with the run time summed over every run of the instance (HiGHS issue
    1477, still so in highspy 1.16), so a master or pricer solved hundreds of times would stop early with the
    remaining time as its limit: the limit is set past the time already run.
    """
    h.setOptionValue("time_limit", 1e6 if seconds is None else h.getRunTime() + max(float(seconds), 1e-3))


@dataclass(frozen=True)
class UserTypes:
    """Users grouped by identical demand rows (and padding pairs, when a support adds some).

    Parameters
    ----------
    counts : numpy.ndarray
        (T,) the number of users of each type.
    of_user : numpy.ndarray
        (N,) the type of every user.
    ti, aj : numpy.ndarray
        (P,) the (type, arm) pairs a type may play on a wanted arm, sorted by type, then arm: the covering
        rows of the LP (a pair without demand only pads groups: its row asks for 0).
    q : numpy.ndarray
        (P,) int64 the samples one user of the pair's type needs from its arm (0 on a padding pair).
    n_arms : int
        K, the graph's arms.

    Types are ordered as the dense rows (demand, then the wanted arms a user may play) sort
    lexicographically, whichever constructor built them.
    """

    counts: np.ndarray
    of_user: np.ndarray
    ti: np.ndarray
    aj: np.ndarray
    q: np.ndarray
    n_arms: int

    @classmethod
    def from_prepared(cls, prep: Prepared) -> UserTypes:
        """The types of ``prep``'s demand, read from the graph's edges (memory linear in them).

        A user's pairs are its edges with demand and, on the arms someone wants, its support edges without
        demand (padding): ``may = want | (support & wanted arm)``. Users share a type when their sorted
        (arm, demand) pair lists are equal (:func:`_group_rows`: a random hash, then a check pair by pair).

        Parameters
        ----------
        prep : Prepared
            The demand (:func:`anondecomp.validation.prepare`), thin arms already dropped in best-effort mode.

        Returns
        -------
        UserTypes
            The same types, counts and order as :meth:`from_required` of the dense demand and support.

        Examples
        --------
        >>> import numpy as np
        >>> from anondecomp.validation import prepare
        >>> g = DemandGraph.from_batched(6, np.array([[1, 1], [1, 0], [1, 1], [1, 0], [0, 1]], bool))
        >>> t = UserTypes.from_prepared(prepare(g, 1, False))
        >>> t.counts.tolist(), t.of_user.tolist()
        ([1, 2, 2], [1, 2, 1, 2, 0])
        >>> t.ti.tolist(), t.aj.tolist(), t.q.tolist()
        ([0, 1, 1, 2], [1, 0, 1, 0], [6, 3, 3, 6])
        """
        g = prep.graph
        N, K = g.shape
        r = np.asarray(prep.edge_required, dtype=np.int64)
        want = r > 0
        wanted = np.bincount(g.edge_arms[want], minlength=K) > 0
        keep = np.flatnonzero(want | wanted[g.edge_arms])
        return cls._from_rows(N, K, g.edge_users[keep], g.edge_arms[keep].astype(np.int64), r[keep])

    @classmethod
    def from_required(cls, required: np.ndarray, support: np.ndarray | None = None) -> UserTypes:
        """Types of the dense demand ``required`` (N, K); ``support`` (N, K bool) adds the pairs users may play
        without demand on arms someone wants (padding), and users differing there are different types.

        Dense (N x K) arrays: for small graphs (the reference :meth:`from_prepared` is checked against).
        """
        req = np.asarray(required, dtype=np.int64)
        K = req.shape[1]
        # users are interchangeable when both their demand and the wanted arms they may play agree; when the
        # support adds nothing, these pairs are exactly the demand's and the types those of the demand alone
        want = req > 0
        may = want if support is None else want | (np.asarray(support, bool) & np.any(want, axis=0)[None, :])
        if may is want or np.array_equal(may, want):  # no padding pair: the demand alone defines the types
            rows, of_user, counts = np.unique(req, axis=0, return_inverse=True, return_counts=True)
            ti, aj = np.nonzero(rows > 0)
        else:
            key = np.concatenate([req, may.astype(np.int64)], axis=1)
            rows, of_user, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
            ti, aj = np.nonzero(rows[:, K:] > 0)
        return cls(counts.astype(np.int64), of_user.ravel(), ti, aj, rows[ti, aj].astype(np.int64), K)

    @classmethod
    def _from_rows(cls, N: int, K: int, users: np.ndarray, arms: np.ndarray, values: np.ndarray) -> UserTypes:
        """Types of the rows given as pairs (``users``, ``arms``, ``values``) sorted by user, then arm."""
        ptr = np.zeros(N + 1, dtype=np.int64)
        np.cumsum(np.bincount(users, minlength=N), out=ptr[1:])
        length = np.diff(ptr)
        # labels 0..T-1 in any order; the first user of each group stands for it
        _, rep, group = np.unique(_group_rows(ptr, arms, values), return_index=True, return_inverse=True)
        group = group.ravel()
        T = len(rep)
        # each group's sequence (demand pairs, a separator, every pair) orders it as its dense row would sort
        n_rep = length[rep]
        idx = ranges(ptr[rep], n_rep)
        tid = np.repeat(np.arange(T), n_rep)
        a, v = arms[idx], values[idx]
        need = v > 0
        order = np.argsort(np.concatenate([3 * tid[need], 3 * np.arange(T) + 1, 3 * tid + 2]), kind="stable")
        key = np.concatenate([_pair_ranks(a[need], v[need]), np.ones(T, np.int64), K - a + 1])[order]
        seq = np.zeros(T + 1, dtype=np.int64)
        np.cumsum(np.bincount(tid[need], minlength=T) + 1 + n_rep, out=seq[1:])
        rank = np.empty(T, dtype=np.int64)
        rank[_lex_order(seq, key)] = np.arange(T)
        of_user = rank[group]
        by_rank = np.empty(T, dtype=np.int64)
        by_rank[rank] = np.arange(T)
        rep = rep[by_rank]
        idx = ranges(ptr[rep], length[rep])
        return cls(
            np.bincount(of_user, minlength=T).astype(np.int64),
            of_user,
            np.repeat(np.arange(T), length[rep]),
            arms[idx],
            values[idx].astype(np.int64),
            K,
        )

    @property
    def n_covering(self) -> int:
        """Pairs with positive demand (the others only pad groups)."""
        return int((self.q > 0).sum())

    @property
    def n_types(self) -> int:
        return len(self.counts)

    @property
    def n_pairs(self) -> int:
        return len(self.ti)

    @property
    def demand(self) -> np.ndarray:
        """Right-hand sides of the covering rows: ``n_t * q_tj`` per pair."""
        return (self.counts[self.ti] * self.q).astype(np.float64)

    @property
    def required(self) -> np.ndarray:
        """(T, K) int64 the demand row of each type, dense: for small models only (tests, inspection)."""
        out = np.zeros((self.n_types, self.n_arms), dtype=np.int64)
        out[self.ti, self.aj] = self.q
        return out

    @cached_property
    def _pair_keys(self) -> np.ndarray:
        return self.ti.astype(np.int64) * self.n_arms + self.aj  # increasing: pairs sorted by type, then arm

    def pair_of(self, types: np.ndarray, arms: np.ndarray) -> np.ndarray:
        """The pair index of each (type, arm), -1 where the type has no such pair."""
        keys = np.asarray(types, dtype=np.int64) * self.n_arms + np.asarray(arms, dtype=np.int64)
        at = np.minimum(np.searchsorted(self._pair_keys, keys), max(self.n_pairs - 1, 0))
        hit = self._pair_keys[at] == keys if self.n_pairs else np.zeros(keys.shape, bool)
        return np.where(hit, at, -1)


def _row_hash(ptr: np.ndarray, arms: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(N,) uint64 hash of each row's (arm, value) pairs: equal rows hash equal, others almost never.

    Each pair hashes to its arm's random key times an odd random key of its value, and a row to the sum of its
    pairs' hashes (mod 2^64); fixed keys keep the types, and everything built on them, reproducible.
    """
    rng = np.random.default_rng(0x5EED)
    n_arms = int(arms.max()) + 1 if len(arms) else 0
    distinct, which = np.unique(values, return_inverse=True)
    arm_key = rng.integers(0, 2**64, size=n_arms, dtype=np.uint64)
    value_key = rng.integers(0, 2**64, size=len(distinct), dtype=np.uint64) | np.uint64(1)
    total = np.zeros(len(arms) + 1, dtype=np.uint64)
    np.cumsum(arm_key[arms] * value_key[which.ravel()], out=total[1:])
    return total[ptr[1:]] - total[ptr[:-1]]


def _group_rows(ptr: np.ndarray, arms: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(N,) a group per row (CSR ``ptr`` over ``arms``, ``values``): rows share one only if their pairs agree.

    Rows are grouped by (hash, length) (:func:`_row_hash`), then every row is compared pair by pair with its
    group's first row; those that differ (a hash collision) form a new group with their own first row and are
    checked again, until every row matches. Splitting identical rows would still be valid (the LP over finer
    types has the same value), merging different ones never is; after :data:`SPLIT_ROUNDS` splits the rows
    still unchecked become groups of their own.
    """
    N = len(ptr) - 1
    length = np.diff(ptr)
    h = _row_hash(ptr, arms, values)
    order = np.lexsort((length, h))
    new = np.ones(N, dtype=bool)
    new[1:] = (h[order][1:] != h[order][:-1]) | (length[order][1:] != length[order][:-1])
    group = np.empty(N, dtype=np.int64)
    group[order] = np.cumsum(new) - 1
    n_groups = int(new.sum())
    pending = np.arange(N)
    for _ in range(SPLIT_ROUNDS):
        _, first, which = np.unique(group[pending], return_index=True, return_inverse=True)
        rep = pending[first][which.ravel()]
        n = length[pending]
        mine, theirs = ranges(ptr[pending], n), ranges(ptr[rep], n)
        differs = (arms[mine] != arms[theirs]) | (values[mine] != values[theirs])
        bad = np.bincount(np.repeat(np.arange(len(pending)), n)[differs], minlength=len(pending)) > 0
        pending = pending[bad]
        if not len(pending):
            return group
        _, split = np.unique(group[pending], return_inverse=True)
        group[pending] = n_groups + split.ravel()
        n_groups += int(split.max()) + 1
    group[pending] = n_groups + np.arange(len(pending))
    return group


def _pair_ranks(arms: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Ranks >= 2 of the (arm, value) pairs in the order that sorts dense rows: a later arm ranks lower (a row
    with a value at an earlier column is the larger one), then by value."""
    if not len(arms):
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((values, -arms))
    a, v = arms[order], values[order]
    step = np.ones(len(a), dtype=np.int64)
    step[1:] = (a[1:] != a[:-1]) | (v[1:] != v[:-1])
    out = np.empty(len(a), dtype=np.int64)
    out[order] = np.cumsum(step) + 1
    return out


def _lex_order(ptr: np.ndarray, key: np.ndarray) -> np.ndarray:
    """The rows (CSR ``ptr`` over ``key``, every key >= 1) in lexicographic order of their key sequences, a
    sequence before every longer one it begins.

    Sorts position by position (most significant first), each step only the rows still tied with another: the
    work is linear in the tied prefixes, not in the number of rows times the longest row.
    """
    T = len(ptr) - 1
    length = np.diff(ptr)
    order = np.arange(T)
    head = np.zeros(T, dtype=np.int64)  # per position in ``order``: the first position of its tie group
    active = np.arange(T) if T > 1 else np.zeros(0, dtype=np.int64)
    last = max(len(key) - 1, 0)
    p = 0
    while len(active):
        rows = order[active]
        k = np.where(length[rows] > p, key[np.minimum(ptr[rows] + p, last)], 0)
        s = np.lexsort((k, head[active]))
        order[active] = rows[s]
        k, grp = k[s], head[active][s]
        new = np.ones(len(k), dtype=bool)
        new[1:] = (grp[1:] != grp[:-1]) | (k[1:] != k[:-1])
        first = np.maximum.accumulate(np.where(new, np.arange(len(k)), 0))
        head[active] = active[first]
        size = np.bincount(first, minlength=len(k))[first]
        active = active[(size > 1) & (k > 0)]
        p += 1
    return order


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
        self.h.setOptionValue("presolve", "off")  # keep the warm start between solves
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
        h.addCols(1, np.ones(1), np.zeros(1), np.array([self.inf]), len(idx), np.zeros(1, np.int32), idx, val)
        # Y^S_p: +1 in its covering row, its type row and its arm row
        n = len(pairs)
        index = np.stack([pairs, type_row[t.ti[pairs]], arm_row[t.aj[pairs]]], axis=1).ravel().astype(np.int32)
        h.addCols(
            n,
            np.zeros(n),
            np.zeros(n),
            np.full(n, self.inf),
            3 * n,
            (3 * np.arange(n)).astype(np.int32),
            index,
            np.ones(3 * n),
        )
        self.faces.append(S)
        self.mu_col.append(col0)
        self.y_cols.append((col0 + 1, pairs))
        self._keys[key] = len(self.faces) - 1
        return len(self.faces) - 1

    def make_integer(self) -> None:
        import highspy

        self._cold = False
        n = self.h.getNumCol()
        self.h.changeColsIntegrality(
            n, np.arange(n, dtype=np.int32), np.full(n, highspy.HighsVarType.kInteger, dtype=np.uint8)
        )

    def set_start(self, lengths: np.ndarray, Y: np.ndarray) -> None:
        """A starting (integer) solution: ``lengths`` (F,) and ``Y`` (F, P) in face order."""
        x = np.zeros(self.h.getNumCol())
        for f, (mu, (start, pairs)) in enumerate(zip(self.mu_col, self.y_cols, strict=True)):
            x[mu] = lengths[f]
            x[start : start + len(pairs)] = Y[f, pairs]
        self.h.setSolution(len(x), np.arange(len(x), dtype=np.int32), x)

    def solve(self, time_limit: float | None = None) -> bool:
        """Solve; True when HiGHS has a feasible solution (optimal, or the IP's best at the time limit).

        A cold LP (a master seeded with many faces has ~10^4-10^5 columns) goes to the interior-point solver
        with crossover, 5-10x faster than simplex from scratch here; the basis it leaves warm-starts the primal
        simplex of the later column-generation rounds.
        """
        run_within(self.h, time_limit)
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
        pi = np.maximum(np.asarray(self.h.getSolution().row_dual[: t.n_pairs]), 0.0)
        return np.where(t.q > 0, pi, 0.0)

    def solution(self) -> tuple[np.ndarray, np.ndarray]:
        """(mu (F,), Y (F, P)): face lengths and type-level face points (Y^S_p = users x samples)."""
        x = np.asarray(self.h.getSolution().col_value)
        mu = x[self.mu_col] if self.mu_col else np.zeros(0)
        Y = np.zeros((len(self.faces), self.types.n_pairs))
        for f, (start, pairs) in enumerate(self.y_cols):
            Y[f, pairs] = x[start : start + len(pairs)]
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
        r = np.concatenate(
            [ti, T + np.searchsorted(arms, aj), T + n_a + np.arange(P), T + np.arange(n_a), T + n_a + np.arange(P)]
        )
        c = np.concatenate([np.arange(P), np.arange(P), np.arange(P), P + np.arange(n_a), z])
        v = np.concatenate([np.ones(3 * P), np.full(n_a, -(C + 1.0)), -types.counts[ti].astype(float)])
        nr = T + n_a + P
        A = sp.csc_matrix((v, (r, c)), shape=(nr, nv))
        self.h = new_highs()
        self.h.setOptionValue("mip_rel_gap", 1e-7)
        self.h.setOptionValue("presolve", "off")  # 3-4x faster here: the model is already tight and tiny
        self.h.setOptionValue("mip_improving_solution_save", True)
        load_model(
            self.h,
            A,
            np.zeros(nv),
            np.zeros(nv),
            np.concatenate([types.counts[ti], np.ones(n_a)]),
            np.concatenate([np.full(T, -np.inf), np.zeros(n_a), np.full(P, -np.inf)]),
            np.concatenate([types.counts, np.full(n_a, np.inf), np.zeros(P)]),
            maximize=True,
            integer=True,
        )
        self.P = P

    def solve(self, prices: np.ndarray, time_limit: float | None = None) -> PricingResult | None:
        """Best vertex for ``prices`` (one per pair, any sign); ``None`` if HiGHS found no solution in time."""
        import highspy

        self.h.changeColsCost(self.P, np.arange(self.P, dtype=np.int32), np.asarray(prices, dtype=np.float64))
        run_within(self.h, time_limit)
        self.h.run()
        info = self.h.getInfo()
        if info.primal_solution_status != 2:
            return None
        x = np.round(np.asarray(self.h.getSolution().col_value[: self.P])).astype(np.int64)
        value = float(np.dot(prices, x))
        others = tuple(
            np.round(np.asarray(s.col_value[: self.P])).astype(np.int64) for s in self.h.getSavedMipSolutions()
        )
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
        self.pair = order[np.repeat(first[t], reps) + offset]  # one edge per (user, pair of its type)
        self.user = np.repeat(np.arange(len(t)), reps)
        self.arm = types.aj[self.pair]
        self.N, self.K, self.C, self.P = len(t), n_arms, C, types.n_pairs
        self.start = np.searchsorted(self.user, np.arange(self.N))
        self.has = reps > 0
        self.degree = np.bincount(self.arm, minlength=n_arms)

    def best(self, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per user: (best value, its edge index), as slack's edges give it (the interface ``open_arms`` reads)."""
        from anondecomp.methods.slack import segment_best  # imported here: the methods package imports this module

        return segment_best(self, value)

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
    how : str
        What certifies ``value``: :data:`TRIVIAL` when the seed meets the trivial bound max_i sum_j ceil(w_ij)
        (no LP is solved), :data:`MET_BY` naming the fast seed that meets it, ``"LP optimum over T user
        types"`` (:data:`LP_OPTIMUM`), :data:`FARLEY` when the time limit stopped the pricing,
        :data:`TIME_TRIVIAL` when the time limit left nothing better, or :data:`TOO_LARGE` when the type-level
        model would have more than :data:`MAX_PAIRS` (type, arm) pairs.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    User 4 wants arm 0 alone, 10 times: each of those rounds holds users 0-3 on arm 0 too (C + 1 = 4), and they
    need 5 more rounds for arm 1, above the trivial bound 10.

    >>> import numpy as np
    >>> g = DemandGraph.from_batched(10, np.array([[1, 1]] * 4 + [[1, 0]], bool))
    >>> bound = lp_lower_bound(g, 3)
    >>> bound.converged, round(bound.value, 6), bound.how
    (True, 15.0, 'LP optimum over 2 user types')
    """

    value: float
    lp_value: float
    converged: bool
    iterations: int
    faces: np.ndarray
    mu: np.ndarray
    wall_time: float
    how: str = "LP optimum"

    def __post_init__(self) -> None:
        freeze_arrays(self)


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
        if self.pricer is None or self.greedy is None:  # both or neither: no covering pair, nothing to price
            return
        stalled, last = 0, np.inf
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
            stalled = stalled + 1 if value >= last * (1 - 1e-9) else 0
            last = value
            prices = self.master.duals()
            x = self.greedy.solve(prices)
            # the heuristic found an improving face: no MIP, unless the master has stalled (a degenerate master
            # takes face after face at the same value, and only the MIP's dual bound certifies Farley's bound)
            if float(np.dot(prices, x)) > 1 + PRICING_TOL and stalled < STALL_ITERATIONS:
                self.iterations += 1
                if self.master.add_face(PricingResult(x, 0.0, np.inf).open_arms(self.types, self.n_arms)) is not None:
                    continue
            left = None if deadline is None else deadline - time.perf_counter()
            priced = self.pricer.solve(prices, left)
            self.iterations += 1
            stalled = 0
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
            Y[f, pairs] = x[first : first + len(pairs)]
        return np.array(m.faces[:n_faces]), mu, Y

    def certificate(self, floor: float = 0.0) -> tuple[float, str]:
        """(bound, how it is certified): the LP optimum once converged, else Farley's bound, never below
        ``floor`` (the trivial bound max_i sum_j ceil(w_ij), which bounds R and the LP optimum too)."""
        if self.converged:
            return max(self.bound, floor), LP_OPTIMUM.format(self.types.n_types)
        return max(self.bound, floor), FARLEY if self.bound > floor else TIME_TRIVIAL

    def result(self, start: float, floor: float = 0.0) -> LPBound:
        """The :class:`LPBound` of the master as it stands (``start``: the :func:`time.perf_counter` value the
        wall time counts from; ``floor`` as for :meth:`certificate`)."""
        # the face lengths only: the (faces x pairs) points would take 1 GB on a 3000 x 1000 log's master
        mu = np.asarray(self.master.h.getSolution().col_value)[self.master.mu_col] if self.master.faces else np.zeros(0)
        lp_value = self.master.value if self.pricer is not None else 0.0
        value, how = self.certificate(floor)
        faces = np.array(self.master.faces) if self.master.faces else np.empty((0, self.n_arms), bool)
        return LPBound(value, lp_value, self.converged, self.iterations, faces, mu, time.perf_counter() - start, how)


def open_sets(
    assignments: np.ndarray, multiplicities: np.ndarray, C: int, wanted: np.ndarray, limit: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Faces used by a decomposition: per distinct assignment, the wanted arms holding >= C+1 users.

    Returns (faces (F, K) bool, total multiplicity of each face), most used first; the first ``limit`` only
    when given. Up to :data:`~anondecomp.validation.DENSE_CELLS` assignments x arms the count is dense; above
    (e.g. greedy's K assignments of K arms: K x K) it is sparse, and only the faces returned are made masks
    (ties in use are then kept in first-seen order).
    """
    a = np.asarray(assignments, dtype=np.int64)
    K = len(wanted)
    if len(a) * K > DENSE_CELLS:
        return _open_sets_sparse(a, np.asarray(multiplicities), C, wanted, limit)
    rows = np.arange(len(a), dtype=np.int64)[:, None] * K
    counts = np.bincount((rows + a).ravel(), minlength=len(a) * K).reshape(len(a), K)
    masks = (counts >= C + 1) & wanted[None, :]
    faces, inverse = np.unique(masks, axis=0, return_inverse=True)
    weight = np.bincount(inverse.ravel(), weights=multiplicities, minlength=len(faces))
    order = np.argsort(-weight, kind="stable")
    keep = faces[order].any(axis=1)
    return faces[order][keep][:limit], weight[order][keep][:limit]


def _open_sets_sparse(
    a: np.ndarray, m: np.ndarray, C: int, wanted: np.ndarray, limit: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`open_sets` without an assignments x arms array: each row's open arms from its sorted arms."""
    K = len(wanted)
    use: dict[tuple[int, ...], float] = {}
    for r in range(len(a)):
        arms, counts = np.unique(a[r], return_counts=True)
        face = tuple(int(j) for j in arms[(counts >= C + 1) & wanted[arms]])
        if face:
            use[face] = use.get(face, 0.0) + float(m[r])
    ranked = sorted(use.items(), key=lambda kv: -kv[1])[:limit]
    masks = np.zeros((len(ranked), K), dtype=bool)
    for k, (face, _) in enumerate(ranked):
        masks[k, list(face)] = True
    return masks, np.array([w for _, w in ranked], dtype=float)


def seed_faces(prep: Prepared, seeds, max_seed_faces: int = 1000) -> list[np.ndarray]:
    """The faces of decompositions that start the master (:func:`open_sets`), as many as the budget allows.

    Parameters
    ----------
    prep : Prepared
        The demand.
    seeds : sequence of (assignments, multiplicities)
        Decompositions of it; each gives its faces most used first while their columns stay within what is
        left of :data:`SEED_COLUMNS`, the first at least :data:`MIN_SEED_FACES` of them (all of the first's
        faces make the master at least as good as that decomposition). A face's columns are counted as the
        users with demand on its arms, which bounds its (type, arm) columns from above.
    max_seed_faces : int, optional
        The most faces taken from one decomposition.

    Returns
    -------
    list of numpy.ndarray
        (K,) boolean arm masks.
    """
    g = prep.graph
    arm_pairs = np.bincount(g.edge_arms[prep.edge_required > 0], minlength=g.n_arms)
    faces: list[np.ndarray] = []
    used = 0  # columns of the faces taken so far: seeds after the first only fill what is left of the budget
    for k, (a, m) in enumerate(seeds):
        found = open_sets(a, m, prep.C, arm_pairs > 0, limit=max(max_seed_faces, MIN_SEED_FACES))[0]
        size = np.cumsum(found @ arm_pairs)
        fit = int(np.searchsorted(size, SEED_COLUMNS - used, side="right"))
        n = max(min(max_seed_faces, fit), min(len(found), MIN_SEED_FACES)) if k == 0 else min(max_seed_faces, fit)
        faces += list(found[:n])
        used += int(size[n - 1]) if n else 0
    return faces


def column_generation(
    prep: Prepared, faces=(), deadline: float | None = None, floor: float | None = None, types: UserTypes | None = None
) -> ColumnGeneration | None:
    """The master over ``prep``'s user types (:meth:`UserTypes.from_prepared`), started with ``faces`` and
    priced until it converges or ``deadline`` passes (:meth:`ColumnGeneration.run`).

    Parameters
    ----------
    prep : Prepared
        The demand.
    faces : sequence of numpy.ndarray, optional
        (K,) boolean arm masks added after the singletons and the all-arms face.
    deadline : float, optional
        A :func:`time.perf_counter` value after which no solve or pricing starts.
    floor : float, optional
        A known lower bound on the LP optimum (the trivial bound): the master stops once it comes down to it.
    types : UserTypes, optional
        ``prep``'s types, when built already.

    Returns
    -------
    ColumnGeneration or None
        The column generation, its master, types and pricers kept for reuse (its :meth:`~ColumnGeneration.
        certificate` is the bound, its :meth:`~ColumnGeneration.last_solution` the point to round); ``None``
        when the types have more than :data:`MAX_PAIRS` (type, arm) pairs (no model is built).
    """
    types = UserTypes.from_prepared(prep) if types is None else types
    if types.n_pairs > MAX_PAIRS:
        return None
    cg = ColumnGeneration(types, prep.C, prep.graph.n_arms)
    cg.add_initial_faces(faces)
    cg.run(deadline, floor=floor)
    return cg


@checked()
def lp_lower_bound(
    graph: DemandGraph,
    C: int,
    *,
    seed=None,
    best_effort: bool = False,
    time_limit: float | None = None,
    max_seed_faces: int = 1000,
    faces=None,
) -> LPBound:
    """Certified lower bound on R for every C-anonymous decomposition of ``graph``.

    It only bounds: no decomposition is built for its own sake, the seeds only feed the master (shorter
    decompositions from the same master are :func:`anondecomp.improve.polish`'s). Memory grows with the
    graph's edges and its distinct users, not with users x arms, so the LP runs at any size within
    ``time_limit``; a type-level model above :data:`MAX_PAIRS` pairs gets the trivial bound (:data:`TOO_LARGE`).

    Parameters
    ----------
    graph : DemandGraph
        The demand graph.
    C : int
        The anonymity parameter (>= 1): an arm is informative only with at least C+1 users on it.
    seed : Decomposition, optional
        A decomposition of this graph; its faces start the master. If it meets the trivial bound
        ``max_i sum_j ceil(w_ij)``, that is the LP value (no LP solved). On a graph within
        :data:`~anondecomp.validation.DENSE_CELLS` users x arms, unless the seed is one already, a polytope
        decomposition (when polytope applies) or else a time-shared one (:mod:`anondecomp.methods.timeshare`)
        is built first and used the same way: it usually meets the trivial bound, or its faces carry the LP
        optimum, so the bound comes without pricing. Above that size the fast seed is sessions
        (:mod:`anondecomp.methods.sessions`, unless the seed is one), when its users x rounds calendar fits in
        as many cells.
    best_effort : bool, optional
        Bound the demand that can be covered (arms wanted by <= C users dropped).
    time_limit : float, optional
        Seconds; the bound is then Farley's bound from the last pricing round.
    max_seed_faces : int, optional
        The most faces taken from one seed into the master, most used first; fewer when their columns would
        exceed :data:`SEED_COLUMNS`, but at least :data:`MIN_SEED_FACES` of the first seed's.
    faces : sequence of numpy.ndarray, optional
        Further (K,) boolean arm sets for the master, after the seeds'.

    Returns
    -------
    LPBound
        The certified bound, how it is certified (``how``) and the master's faces.

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
    from anondecomp.validation import prepare
    from anondecomp.verify import verify

    start = time.perf_counter()
    prep = prepare(graph, C, best_effort)
    trivial = float(prep.lower_bound)
    deadline = None if time_limit is None else start + time_limit

    def trivial_bound(how: str, converged: bool) -> LPBound:
        return LPBound(
            trivial,
            trivial if converged else np.inf,
            converged,
            0,
            np.empty((0, graph.n_arms), bool),
            np.zeros(0),
            time.perf_counter() - start,
            how,
        )

    if seed is not None and seed.total_assignments <= trivial:
        # the trivial bound max_i sum_j ceil(w_ij) bounds every decomposition, and the seed meets it: no LP
        return trivial_bound(TRIVIAL, True)
    seeds = [] if seed is None else [(seed.assignments, seed.multiplicities)]
    for a, m, method in fast_seed(prep, best_effort, time_limit, None if seed is None else seed.method):
        if int(m.sum()) <= trivial and verify(graph, prep.C, a, m, best_effort=best_effort).valid:
            return trivial_bound(MET_BY.format(method), True)
        seeds.append((a, m))
    types = UserTypes.from_prepared(prep)
    if types.n_pairs > MAX_PAIRS:
        return trivial_bound(TOO_LARGE, False)
    initial = seed_faces(prep, seeds, max_seed_faces) + ([] if faces is None else list(faces))
    if deadline is not None and time.perf_counter() >= deadline:  # the fast seed took it all
        return trivial_bound(TIME_TRIVIAL, False)
    cg = column_generation(prep, initial, deadline, floor=trivial, types=types)
    if cg is None:  # not reached: column_generation declines exactly the types refused above
        return trivial_bound(TOO_LARGE, False)
    return cg.result(start, trivial)


def fast_seed(
    prep: Prepared, best_effort: bool, time_limit: float | None, given: str | None = None
) -> list[tuple[np.ndarray, np.ndarray, str]]:
    """An extra seed that often meets the trivial bound, unless ``given`` (the seed's method) is it already;
    (assignments, multiplicities, method), ``[]`` when none is built.

    Within :data:`~anondecomp.validation.DENSE_CELLS` users x arms: the polytope method when it applies, else
    time-shared faces (dense models). Above: sessions (:mod:`anondecomp.methods.sessions`, linear in the
    edges), when their users x rounds calendar, at least users x the trivial bound, fits in as many cells.
    """
    from anondecomp.methods.polytope import polytope_applies, polytope_decomposition
    from anondecomp.methods.sessions import sessions_decomposition
    from anondecomp.methods.timeshare import timeshare

    g = prep.graph
    if not prep.edge_required.any():
        return []
    if g.n_users * g.n_arms > DENSE_CELLS:
        if given == "sessions" or g.n_users * prep.lower_bound > DENSE_CELLS:
            return []
        res = sessions_decomposition(g, prep.C, best_effort=best_effort)
        return [(res.assignments, res.multiplicities, "sessions")]
    if given in FAST_METHODS:
        return []
    if not len(polytope_applies(g, prep.C, prep.edge_required)):
        res = polytope_decomposition(g, prep.C, best_effort=best_effort)
        return [(res.assignments, res.multiplicities, "polytope")]
    budget = TIMESHARE_SHARE * time_limit if time_limit is not None else None
    found = timeshare(prep, budget, stop_at=prep.lower_bound)
    return [] if found is None else [(*found[:2], "timeshare")]
