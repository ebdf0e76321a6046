"""Batched graphs held as their support, and the phase schedule that meets their lower bound.

Paper: Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems*, NeurIPS 2022, Section 3
(batched graphs: demand D spread over every arm of A_i, Lemma 3 / Corollary 1). A batched graph is held as its
support (N x K booleans) and D (:class:`BatchedSupport`), its users dealt into shards in which every arm holds
0 or at least C+1 users (:func:`make_shards`), and each shard scheduled by phases written directly as schedule
rows (:func:`phase_rows`, repaired by :func:`recruit_rows` where a phase crosses a thin stretch). The method
``phase`` (:mod:`anondecomp.methods.phase`) and the sharded path (:mod:`anondecomp.scale`) both build on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from anondecomp.graph import MAX_DEMAND, DemandGraph

SHARD_USERS = 1 << 20  # users per shard when the caller does not choose: about 20 MB of support at K = 20


@dataclass(frozen=True, eq=False)
class BatchedSupport:
    """A batched graph as its support: ``support[i, j]`` when user i wants arm j; total demand D per user
    (``w_ij = D / |A_i|``, as :meth:`~anondecomp.DemandGraph.from_batched`). A general demand graph also
    carries its ``weights`` (and no D; :func:`from_graph`); :func:`decompose_sharded` makes it the sparse
    graph and shards that (:func:`graph_shards`). Its ``support`` may then be wider than ``weights > 0``
    (users with zero demand pad groups, :class:`~anondecomp.DemandGraph`).

    ``users`` holds the user ids (int64 when the table's ids are integers, else strings), ``arms`` the arm
    names. 1 byte per (user, arm) instead of the 16 of :class:`~anondecomp.DemandGraph`'s float64 weights and
    int64 requirements.
    """

    support: np.ndarray
    demand: int | float | None
    users: np.ndarray
    arms: tuple[str, ...]
    weights: np.ndarray | None = None  # a general demand graph's (N, K) weights; then ``demand`` is None

    def rows_of(self, members: np.ndarray) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """What a shard task receives for these users: their support, or their weights (general graph), with
        their support beside when it is wider than the weights."""
        if self.weights is None:
            return self.support[members]
        w = self.weights[members]
        return (w, self.support[members]) if self.explicit_support else w

    @property
    def explicit_support(self) -> bool:
        """Whether a general graph's support is wider than its weights (some user may pad an arm)."""
        return self.weights is not None and bool((self.support & ~(self.weights > 0)).any())

    @property
    def wanted(self) -> np.ndarray:
        """(K,) bool, the arms some user has demand for (every arm with users, for a batched graph)."""
        return np.any(self.support if self.weights is None else self.weights > 0, axis=0)

    @property
    def total_demand(self) -> int | float:
        """D, the total demand of every user of a batched graph; a general graph (``weights`` set) has none."""
        if self.demand is None:  # only the batched paths ask, after checking the graph is batched
            raise TypeError("a general demand graph's support has no total demand D")
        return self.demand

    def required(self, sizes: np.ndarray) -> np.ndarray:
        """ceil(D / k) for every active-set size k in ``sizes``, exact (rational), int64."""
        return required_per_arm(self.total_demand, sizes)

    def phase_fits(self, C: int) -> bool:
        """Whether the phase schedule suits this batched graph: every arm's column of w / D sums to >= C+1
        (sum over its users of 1 / |A_i|, the polytope condition of Corollary 1). Where it fails (a log whose
        thin items need most of their users at once), the phase schedule and its repair rarely work and the
        command line decomposes the sparse graph instead (:meth:`graph`)."""
        sizes = np.maximum(self.support.sum(axis=1), 1)
        cols = (1.0 / sizes) @ self.support
        return self.demand is not None and bool((cols[self.wanted] >= C + 1 - 1e-12).all())

    def graph(self) -> DemandGraph:
        """The graph as a sparse general :class:`~anondecomp.DemandGraph` (users named by their ids), weights
        D / |A_i|: the same demand, ceil(D / |A_i|) per pair, decomposed as a log (no ``demand`` is set)."""
        from scipy.sparse import csr_array

        sizes = np.maximum(self.support.sum(axis=1), 1)
        rows, cols = np.nonzero(self.support)
        weights = csr_array((self.required(sizes)[rows].astype(np.float64), (rows, cols)), shape=self.support.shape)
        return DemandGraph.from_weights(weights, [str(u) for u in self.users], self.arms)

    @property
    def lower_bound(self) -> int:
        """max_i |A_i| ceil(D / |A_i|) = max_i sum_j ceil(w_ij), the trivial lower bound on R."""
        if self.weights is not None:
            return int(np.ceil(self.weights).sum(axis=1).max())
        k = np.unique(self.support.sum(axis=1))
        return int((k * self.required(k)).max())


def required_per_arm(demand: int | float, sizes: np.ndarray) -> np.ndarray:
    """ceil(D / k) per entry of ``sizes`` in rational arithmetic (no floating error), as from_batched."""
    d = Fraction(demand)
    if d.denominator == 1 and abs(d.numerator) < 2**62:  # an integer demand: exact in int64, vectorised
        return -(-d.numerator // np.maximum(np.asarray(sizes, dtype=np.int64), 1))
    k, inverse = np.unique(np.asarray(sizes, dtype=np.int64), return_inverse=True)
    table = np.array([-((-d.numerator) // (d.denominator * max(int(s), 1))) for s in k], dtype=np.int64)
    return table[inverse.reshape(np.shape(sizes))]


def batched_demand(sizes: np.ndarray, rounds: np.ndarray) -> int | None:
    """An integer total demand D with ceil(D / |A_i|) = r_i for every user i, or None when there is none.

    ``sizes`` holds |A_i| and ``rounds`` the r_i = ceil(w_ij) that all of user i's wanted pairs require. Such
    a D makes the batched graph on the same support require exactly what the weights require, pair by pair,
    which is all a decomposition's validity and the lower bound depend on. ceil(D / k) = r means
    (r - 1) k < D <= r k; the largest D common to every user is min_i r_i k_i. None also when some user's
    sum_j ceil(w_ij) = r_i k_i exceeds 2^53 (the general reader refuses it by name).
    """
    k = np.asarray(sizes, dtype=np.int64)
    r = np.asarray(rounds, dtype=np.int64)
    if len(k) == 0 or (k < 1).any() or (r < 1).any() or (r > MAX_DEMAND // k).any():
        return None
    D = int((r * k).min())
    return D if D > int(((r - 1) * k).max()) else None


DENSE_SUPPORT_CELLS = 1 << 26
"""A batched graph of at most this many (user, arm) cells may always be held as its dense support (64 MB)."""
DENSE_SUPPORT_FACTOR = 32
"""Else only when its cells are at most this many times its edges: the dense support (1 byte a cell) then costs
at most about what the graph's edges do (24 bytes an edge), so a sparse log is never made dense."""


def batched_total(graph: DemandGraph) -> int | float | None:
    """The total demand D of ``graph`` when it is batched or its weights require what a batched graph requires
    (:func:`batched_demand`), else ``None`` (also when its support is wider than its demand).

    Computed from the graph's edges: every user's ``ceil(w_ij)`` must be the same on all its edges."""
    if graph.explicit_support:  # users play arms they want nothing from: not the batched form
        return None
    if graph.demand is not None:
        return graph.demand
    req, sizes = graph.edge_required, np.diff(graph.indptr)
    top = np.zeros(graph.n_users, dtype=np.int64)  # each user's largest ceil(w_ij)
    has = sizes > 0  # a user without edges (none, unless built so) has no D: batched_demand says None
    if has.any():
        top[has] = np.maximum.reduceat(req, graph.indptr[:-1][has])
    if not (req == np.repeat(top, sizes)).all():
        return None
    return batched_demand(sizes, top)


def batched_support(graph: DemandGraph) -> BatchedSupport | None:
    """The sharded path's form of ``graph`` when it is batched (:func:`batched_total`) and its dense support is
    small (at most :data:`DENSE_SUPPORT_CELLS` cells, or :data:`DENSE_SUPPORT_FACTOR` cells per edge), else
    ``None``: a general graph, or a sparse batched one, stays a :class:`~anondecomp.DemandGraph`."""
    demand = batched_total(graph)
    cells = graph.n_users * graph.n_arms
    if demand is None or cells > max(DENSE_SUPPORT_CELLS, DENSE_SUPPORT_FACTOR * graph.nnz):
        return None
    return BatchedSupport(_dense(graph, True, bool), demand, np.asarray(graph.users, dtype=object), tuple(graph.arms))


def from_graph(graph: DemandGraph) -> BatchedSupport:
    """The shardable form of a :class:`~anondecomp.DemandGraph`: its support and D when it is batched or its
    weights require what a batched graph requires (:func:`batched_total`), else its weights.

    :class:`BatchedSupport` is dense (N x K): the support, and a general graph's float64 weights too, are built
    here from the graph's edges (the graph itself keeps no dense copy). :func:`decompose_sharded` takes the
    :class:`~anondecomp.DemandGraph` itself, and builds the dense support only when :func:`batched_support`
    finds the graph batched and small enough; a general graph is sharded on its edges."""
    users = np.asarray(graph.users, dtype=object)
    demand = batched_total(graph)
    support = _dense(graph, True, bool)
    if demand is None:  # general weights: shards are decomposed as general graphs (no phase rule)
        return BatchedSupport(support, None, users, tuple(graph.arms), _dense(graph, graph.edge_weights, np.float64))
    return BatchedSupport(support, demand, users, tuple(graph.arms))


def _dense(graph: DemandGraph, values, dtype) -> np.ndarray:
    """(N, K) array of ``values`` on the graph's edges, 0 elsewhere (not cached on the graph)."""
    out = np.zeros(graph.shape, dtype=dtype)
    out[graph.edge_users, graph.edge_arms] = values
    return out


def make_shards(support: np.ndarray, C: int, n_shards: int, seed: int | np.random.Generator = 0) -> np.ndarray:
    """Shard id (0..n_shards-1) of every user, such that every arm holds 0 or at least C+1 users per shard
    (``support`` must be feasible: no arm wanted by 1..C users; :func:`decompose_sharded` checks, and passes
    only the wanted arms' columns).

    Users are dealt at random (balanced), then repaired towards shard 0, the *sink*: a user of shard s >= 1
    on an arm that holds 1..C users in s moves to shard 0; an arm that holds 1..C users in shard 0 pulls all
    its users into shard 0. Users only ever move into shard 0, so this stops after at most N moves, and at the
    fixed point no shard has a thin arm (an arm thin in shard 0 would have all its |B_j| >= C+1 users there).
    Thin arms (wanted by few users) thus keep their users together in shard 0. ``seed`` seeds the deal (a
    :class:`numpy.random.Generator` is drawn from as it is).
    """
    N, K = support.shape
    if n_shards <= 1:  # one shard: every arm holds 0 or |B_j| >= C+1 users
        return np.zeros(N, dtype=np.int32)
    rng = np.random.default_rng(seed)
    shard = (rng.permutation(N) % n_shards).astype(np.int32)
    while True:
        counts = shard_counts(support, shard, n_shards)
        bad = (counts > 0) & (counts <= C)
        if not bad.any():
            return shard
        move = (support & bad[shard]).any(axis=1)
        move |= support[:, bad[0]].any(axis=1)
        shard[move] = 0


def shard_counts(support: np.ndarray, shard: np.ndarray, n_shards: int) -> np.ndarray:
    """(n_shards, K) users per shard and arm."""
    return np.stack([np.bincount(shard[support[:, j]], minlength=n_shards) for j in range(support.shape[1])], axis=1)


def phase_rows(support: np.ndarray, D: int | float, L: int, C: int) -> tuple[tuple[np.ndarray, ...], bool]:
    """The phase schedule of a batched shard written directly as schedule rows, and whether it is valid.

    User i takes its |A_i| = k arms one after the other in index order rotated by an offset that cycles over
    the users with the same k (as :func:`anondecomp.schedule.phase_schedule`), each phase r = ceil(D / k)
    rounds plus an even share of the idle time L - k r, so every user's rows tile [0, L). Valid when every pair
    still gets r informative rounds (its arm holds at least C+1 users in them): a phase stretched beyond r
    may cross a thin stretch of its arm. Then R = L.
    Returns (user, arm, first_round, rounds) with users local to ``support`` and user-major order.
    """
    N, K = support.shape
    users, arms = np.divmod(np.flatnonzero(support), K)  # each user's arms in index order, users consecutive
    k = np.bincount(users, minlength=N)
    base = np.cumsum(k) - k  # first row of each user
    by_k = np.argsort(k, kind="stable")
    rank = np.empty(N, dtype=np.int64)
    rank[by_k] = np.arange(N) - np.searchsorted(k[by_k], k[by_k], side="left")
    kk = np.maximum(k, 1)
    offset = rank % kk
    # phase p of user i: its arm number (p + offset_i) mod k_i; lengths and starts depend on (k, p) only
    first_row = base[users]
    phase = np.arange(len(users)) - first_row
    ku = k[users]
    arm = arms[first_row + (phase + offset[users]) % ku]
    del first_row
    sizes = np.arange(K + 1)
    r = required_per_arm(D, np.maximum(sizes, 1))
    idle = L - sizes * r
    p = np.arange(K)[None, :]
    length = np.where(
        p < sizes[:, None],
        r[:, None] + idle[:, None] // np.maximum(sizes, 1)[:, None] + (p < (idle % np.maximum(sizes, 1))[:, None]),
        0,
    )
    start = np.cumsum(length, axis=1) - length
    kp = ku * K + phase  # each row's (k, phase) in the flattened (K+1, K) tables
    del phase
    # occupancy: +1 where a phase starts, -1 where it ends, per (arm, boundary); every user works in every row
    cuts = np.unique(np.concatenate([start[length > 0], [L]]))
    n = len(cuts)
    s_row = np.searchsorted(cuts, start).ravel()[kp]
    e_row = np.searchsorted(cuts, start + length).ravel()[kp]
    delta = np.bincount(arm * n + s_row, minlength=K * n) - np.bincount(arm * n + e_row, minlength=K * n)
    occupancy = np.cumsum(delta.reshape(K, n), axis=1)
    # rounds up to each boundary in which the arm is thin (1..C users): a row loses those inside it; with no
    # thin boundary every row is informative throughout, and every phase lasts at least r rounds (idle >= 0)
    thin = (occupancy[:, :-1] > 0) & (occupancy[:, :-1] <= C)
    rounds = length.ravel()[kp]
    ok = True
    if thin.any():
        lost_table = np.zeros((K, n), dtype=np.int64)
        np.cumsum(thin * np.diff(cuts), axis=1, out=lost_table[:, 1:])
        at = arm * n  # flat indices: cheaper than (arm, boundary) pairs
        lost = lost_table.ravel()
        ok = bool((rounds - (lost[at + e_row] - lost[at + s_row]) >= r[ku]).all())
    return (users, arm, start.ravel()[kp], rounds), ok


REPAIR_CELLS = 1 << 22  # arms x rounds up to which a thin phase schedule is repaired (round-level arrays)
PIECE = 12  # rounds of a thin stretch one recruit covers (phases last about D / k rounds)
REPAIR_PASSES = 12


def _occupancy(arm: np.ndarray, first: np.ndarray, rounds: np.ndarray, K: int, L: int) -> np.ndarray:
    """(K, L+1) users on each arm in each round, from schedule rows; column L (past the end) is 0."""
    W = L + 1
    at = arm * W + first
    occ = np.bincount(at, minlength=K * W)
    occ -= np.bincount(at + rounds, minlength=K * W)
    occ = occ.reshape(K, W)
    return np.cumsum(occ, axis=1, out=occ)  # in place: these (K, L+1) arrays dominate a pass's memory traffic


def _below(occ: np.ndarray, x: int) -> np.ndarray:
    """(K, L+2) prefix counts of the rounds in which an arm holds fewer than ``x`` users."""
    out = np.zeros((occ.shape[0], occ.shape[1] + 1), dtype=np.int32)
    np.cumsum(occ < x, axis=1, out=out[:, 1:])
    return out


def _thin_pieces(occ: np.ndarray, C: int) -> tuple[np.ndarray, ...]:
    """Maximal runs of rounds in which an arm holds 1..C users, cut into pieces of at most PIECE rounds:
    (arm, first round, end round, users missing to reach C+1 in the piece's thinnest round).
    ``occ`` is :func:`_occupancy`'s (K, L+1), whose last column (0) ends every run."""
    K, W = occ.shape
    pad = np.zeros((K, W + 1), dtype=np.int8)
    pad[:, 1:] = (occ > 0) & (occ <= C)
    edge = np.diff(pad, axis=1).ravel()  # +1 where a run starts, -1 where it ends, per (arm, round)
    arm, t1 = np.divmod(np.flatnonzero(edge == 1), W)
    t2 = np.flatnonzero(edge == -1) % W
    parts = -(-(t2 - t1) // PIECE)
    run = np.repeat(np.arange(len(arm)), parts)
    j = np.arange(parts.sum()) - np.repeat(np.cumsum(parts) - parts, parts)
    span = (t2 - t1)[run]
    arm, t1, t2 = arm[run], t1[run] + span * j // parts[run], t1[run] + span * (j + 1) // parts[run]
    bounds = np.empty(2 * len(arm), dtype=np.int64)
    bounds[0::2], bounds[1::2] = arm * W + t1, arm * W + t2
    low = np.minimum.reduceat(occ.ravel(), bounds)[0::2]
    return arm, t1, t2, C + 1 - low


def _rank(group: np.ndarray) -> np.ndarray:
    """Position of each element within its run of equal values of the sorted ``group``."""
    return np.arange(len(group)) - np.searchsorted(group, group)


def recruit_rows(
    support: np.ndarray, L: int, C: int, rows: tuple[np.ndarray, ...], passes: int = REPAIR_PASSES
) -> tuple[tuple[np.ndarray, ...], bool]:
    """Repair a phase schedule (:func:`phase_rows`) in which some arms hold 1..C users in some rounds.

    Beyond the paper. A *move* recruits a user v of arm a into a thin piece P = [t1, t2) of a: v sits on one
    arm b != a during all of P, and on a during a window T of the same length at the start or the end of
    one of its rows on a; v swaps the two (a during P, b during T), so its rounds per arm and its tiling of
    [0, L) are unchanged. A move is taken only when b holds >= C+2 users during P and a holds >= C+2 during
    T (those left behind stay >= C+1), and b holds >= C users during T (v's rounds on b stay informative).
    Each piece recruits the users it misses in its thinnest round and one spare; one move per user and pass
    (a user offered to several pieces goes to the one that lists it first), all moves of a pass at once, then
    the occupancy is recomputed. The schedule is accepted when no arm holds 1..C users in any round and every
    pair still has its r_i rounds: then every round of every row is informative, so the schedule is valid with
    R = L (checked exactly from the final rows, whatever moves collided).

    Returns the rows (user-major, in time order) and whether they are valid.
    """
    N, K = support.shape
    # 32-bit rows when every (user, arm) and (arm, round) index fits halve the memory traffic of every pass
    dtype: type[np.signedinteger[Any]] = np.int32 if max(N * K, K * (L + 1)) < 2**31 else np.int64
    u, a, f, n = (np.asarray(x, dtype=dtype) for x in rows)
    col_users = np.flatnonzero(np.ascontiguousarray(support.T)) % N  # the users of arm 0, then of arm 1, ...
    deg = support.sum(axis=0)
    col_start = np.cumsum(deg) - deg
    for step in range(passes):
        occ = _occupancy(a, f, n, K, L)
        if not ((occ > 0) & (occ <= C)).any():
            return (u, a, f, n), True
        arm, t1, t2, missing = _thin_pieces(occ, C)
        # candidates: a few users of each piece's arm, from a different place in its user list per piece and
        # pass, twice as many at every pass (a piece that stays thin is eventually offered all its arm's users)
        cnt = np.minimum(deg[arm], (8 + 4 * missing) << step)
        piece = np.repeat(np.arange(len(arm)), cnt)
        j = np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        # the place depends on the arm too: pieces thin at the same time on different arms share few users
        place = (7919 * t1 + 1299709 * arm + 104729 * step)[piece]
        v = col_users[col_start[arm][piece] + (j + place) % deg[arm][piece]]
        A, P1, P2 = arm[piece], t1[piece], t2[piece]
        ell = P2 - P1
        # each candidate's row covering t1 (rows are user-major and in time order, so their (user, first round)
        # keys are sorted) and a row of it on arm A (one per pair before the first move; later any of them)
        x = np.searchsorted(u.astype(np.int64) * (L + 1) + f, v * (L + 1) + P1, side="right") - 1
        row_of = np.zeros(N * K, dtype=dtype)
        row_of[u * K + a] = np.arange(len(u), dtype=dtype)
        y = row_of[v * K + A]
        b = a[x]
        lt2, lt0 = _below(occ, C + 2), _below(occ, C)
        ok = (b != A) & (f[x] + n[x] >= P2) & (a[y] == A) & (n[y] >= ell) & (lt2[b, P2] == lt2[b, P1])
        head_end = np.minimum(f[y] + ell, L)
        tail = np.maximum(f[y] + n[y] - ell, 0)
        head_ok = (lt2[A, head_end] == lt2[A, f[y]]) & (lt0[b, head_end] == lt0[b, f[y]])
        tail_ok = (lt2[A, f[y] + n[y]] == lt2[A, tail]) & (lt0[b, f[y] + n[y]] == lt0[b, tail])
        ok &= head_ok | tail_ok
        # one move per user and pass: a user offered to several pieces goes to the one that lists it first (a
        # round robin over the pieces, so no piece loses all its candidates to the pieces before it), then each
        # piece keeps the users it misses and one more
        c = np.flatnonzero(ok)
        c = c[np.argsort(_rank(piece[c]), kind="stable")]
        c = np.sort(c[np.unique(v[c], return_index=True)[1]])
        c = c[_rank(piece[c]) < missing[piece[c]] + 1]
        if len(c) == 0:
            break
        X, Y, B, Am, S, E, ln = x[c], y[c], b[c], A[c], P1[c], P2[c], ell[c]
        T = np.where(head_ok[c], f[Y], tail[c])
        # X (on B) becomes B, A during P, B; Y (on A) becomes A, B during T, A: each in X's or Y's place, so
        # the rows stay user-major and in time order; empty parts are not written
        edit = np.concatenate([X, Y])
        fx, ex, fy, ey = f[X], f[X] + n[X], f[Y], f[Y] + n[Y]
        arm3 = np.concatenate([np.stack([B, Am, B], axis=1), np.stack([Am, B, Am], axis=1)])
        lo3 = np.concatenate([np.stack([fx, S, E], axis=1), np.stack([fy, T, T + ln], axis=1)])
        hi3 = np.concatenate([np.stack([S, E, ex], axis=1), np.stack([T, T + ln, ey], axis=1)])
        keep = hi3 > lo3
        parts = np.ones(len(u), dtype=np.int64)
        parts[edit] = keep.sum(axis=1)
        at = np.cumsum(parts) - parts
        src = np.repeat(np.arange(len(u)), parts)
        u, a, f, n = u[src], a[src], f[src], n[src]
        pos = (at[edit][:, None] + np.cumsum(keep, axis=1) - keep)[keep]
        a[pos], f[pos], n[pos] = arm3[keep], lo3[keep], (hi3 - lo3)[keep]
    return (u, a, f, n), False


def covers(support: np.ndarray, D: int | float, rows: tuple[np.ndarray, ...]) -> bool:
    """Whether every wanted pair has at least r_i = ceil(D / |A_i|) rounds in ``rows`` and no row is off the
    support: with no thin round, that makes every pair's rounds informative."""
    u, a, _, n = rows
    N, K = support.shape
    key = u * K + a
    pairs = np.flatnonzero(support)
    total = np.bincount(key, weights=n, minlength=N * K)[pairs]
    need = required_per_arm(D, np.maximum(support.sum(axis=1), 1))[pairs // K]
    return bool(support.ravel()[key].all() and (total >= need).all())


def extend_rows(rows: tuple[np.ndarray, ...], R: int) -> tuple[np.ndarray, ...]:
    """Stretch every user's last row to end at round R (shards share rounds; a longer group only gains users)."""
    users, arm, first, rounds = rows
    last = np.ones(len(users), dtype=bool)
    last[:-1] = users[1:] != users[:-1]
    rounds = rounds.astype(np.int64, copy=True)
    rounds[last] = R - first[last]
    return users, arm, first, rounds


def phase_solution(support: np.ndarray, D: int | float, L: int, C: int) -> tuple[tuple[np.ndarray, ...], str] | None:
    """Schedule rows of length ``L`` for a batched shard and how they were made: the phase schedule when it is
    valid (``"phase"``), else that schedule repaired by :func:`recruit_rows` (``"phase+recruit"``, tried up to
    :data:`REPAIR_CELLS` arms x rounds); ``None`` when neither is valid."""
    rows, ok = phase_rows(support, D, L, C)
    if ok:
        return rows, "phase"
    if support.shape[1] * (L + 1) <= REPAIR_CELLS:
        rows, ok = recruit_rows(support, L, C, rows)
        if ok and covers(support, D, rows):
            return rows, "phase+recruit"
    return None


def rows_to_assignments(rows: tuple[np.ndarray, ...], n_users: int, R: int) -> tuple[np.ndarray, np.ndarray]:
    """(assignments (S, N), lengths (S,)) of schedule rows (user, arm, first_round, rounds) that tile every
    user's [0, R): one assignment per stretch between consecutive row boundaries of any user (merge equal ones
    with :func:`anondecomp.result.compress`). Costs S x N cells, S <= R."""
    users, arm, first, rounds = (np.asarray(x, dtype=np.int64) for x in rows)
    cuts = np.unique(np.concatenate([first, first + rounds, [0, R]]))
    cuts = cuts[cuts <= R]
    lo, hi = np.searchsorted(cuts, first), np.searchsorted(cuts, np.minimum(first + rounds, R))
    span = np.maximum(hi - lo, 0)
    stretch = np.repeat(lo - np.cumsum(span) + span, span) + np.arange(int(span.sum()))
    out = np.zeros((len(cuts) - 1, n_users), dtype=np.int64)
    out[stretch, np.repeat(users, span)] = np.repeat(arm, span)
    return out, np.diff(cuts)
