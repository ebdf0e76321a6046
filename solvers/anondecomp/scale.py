"""Decompositions at platform scale: compact support, feasible shards, streamed part files.

Paper: Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems*, NeurIPS 2022, Section 3
(batched graphs, demand D on every arm of A_i; Lemma 3 / Corollary 1). Beyond the paper: a batched graph is
held as its support (N x K booleans) and D, never as dense float64 weights; any other graph as its edges
(:class:`~anondecomp.DemandGraph`, sparse). Users are split into shards (:func:`make_shards` on a support,
:func:`graph_shards` on the edges), each decomposed on its own (locally or on a Dask ``distributed`` cluster)
and written as one part file of the compact schedule (:mod:`anondecomp.compact`). Shards run their
assignments in the same rounds, so the merged R is the maximum over shards, not the sum.
docs/decompositions.md, "Sharded decompositions", proves that the merge is a valid C-anonymous decomposition
and that every shard is feasible.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from anondecomp._formats import c_field, first_line, no_nulls, schedule_schema
from anondecomp.columnar import open_parquet, parquet_files, read_metadata
from anondecomp.compact import is_directory_output, publish_dir, publish_file, schedule_rows
from anondecomp.errors import InvalidInputError
from anondecomp.graph import MAX_DEMAND, DemandGraph
from anondecomp.io import check_writable, output_target
from anondecomp.validation import check_C, thin_arms_error

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
        return (self.support if self.weights is None else self.weights > 0).any(axis=0)

    def required(self, sizes: np.ndarray) -> np.ndarray:
        """ceil(D / k) for every active-set size k in ``sizes``, exact (rational), int64."""
        return required_per_arm(self.demand, sizes)

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


@dataclass(frozen=True)
class ShardedResult:
    """Summary of a sharded decomposition (the schedule itself is in the part files)."""

    C: int
    total_assignments: int
    lower_bound: int
    n_users: int
    n_arms: int
    shard_rounds: tuple[int, ...]
    shard_users: tuple[int, ...]
    shard_methods: tuple[str, ...]
    rows: int
    wall_time: float = 0.0

    def header(self) -> dict:
        """The summary fields stored in every part file's metadata (as the JSON output's header)."""
        methods = sorted(set(self.shard_methods))
        return {"C": self.C, "method": "sharded:" + "+".join(methods), "total_assignments": self.total_assignments,
                "lower_bound": self.lower_bound, "distinct_assignments": None, "shards": len(self.shard_users)}

    def summary(self) -> str:
        return "\n".join([
            f"method               sharded ({', '.join(sorted(set(self.shard_methods)))})",
            f"users x arms         {self.n_users} x {self.n_arms}, C = {self.C}",
            f"R (assignments)      {self.total_assignments}",
            f"lower bound          {self.lower_bound}   (max_i sum_j w_ij)",
            f"R / lower bound      {self.total_assignments / max(self.lower_bound, 1):.4f}",
            f"shards               {len(self.shard_users)} (R per shard {min(self.shard_rounds)}.."
            f"{max(self.shard_rounds)}; merged R = the maximum)",
            f"schedule rows        {self.rows}",
            f"wall time            {self.wall_time:.3f} s"])


def required_per_arm(demand: int | float, sizes: np.ndarray) -> np.ndarray:
    """ceil(D / k) per entry of ``sizes`` in rational arithmetic (no floating error), as from_batched."""
    d = Fraction(demand)
    if d.denominator == 1 and abs(d.numerator) < 2**62:  # an integer demand: exact in int64, vectorised
        return -(-d.numerator // np.maximum(np.asarray(sizes, dtype=np.int64), 1))
    k, inverse = np.unique(np.asarray(sizes, dtype=np.int64), return_inverse=True)
    table = np.array([-((-d.numerator) // (d.denominator * max(int(s), 1))) for s in k], dtype=np.int64)
    return table[inverse.reshape(np.shape(sizes))]


def streamed_rows(path: str | os.PathLike) -> int:
    """Rows of a Parquet table with integer user ids (what :func:`read_support` streams: a batched table or an
    edge table with weights), from the files' metadata; 0 for any other input."""
    from anondecomp.columnar import file_kind

    if not os.path.exists(path) or file_kind(path) != "parquet":
        return 0
    files = parquet_files(path)
    if not _streamable(open_parquet(files[0]).schema_arrow):
        return 0
    return sum(open_parquet(f).metadata.num_rows for f in files)


def _streamable(schema) -> bool:
    import pyarrow as pa

    names = schema.names
    return "arm" in names and "user" in names and pa.types.is_integer(schema.field("user").type)


def read_batched(path: str | os.PathLike, demand: float | None = None) -> tuple[BatchedSupport, int | None]:
    """:func:`read_support`, with a general demand graph also given as a :class:`BatchedSupport` (its weights)."""
    data, C = read_support(path, demand)
    return (from_graph(data) if isinstance(data, DemandGraph) else data), C


def read_support(path: str | os.PathLike, demand: float | None = None
                 ) -> tuple[BatchedSupport | DemandGraph, int | None]:
    """Read a graph for the sharded path: its support and D when its demands are those of a batched graph.

    A Parquet table with integer user ids is streamed in record batches straight into its support (no
    factorisation of 10^8 rows): a batched table (columns ``user``, ``arm``; D from ``demand`` or the
    metadata), or an edge table (``user``, ``arm``, ``weight``) whose weights require what a batched graph
    requires (:func:`batched_demand`). Any other input -- string or far-apart ids, CSV, JSON, general weights,
    or a bad value, which the general reader then reports -- is read whole by :func:`anondecomp.read_graph`
    and returned as the :class:`DemandGraph`, unless :func:`from_graph` finds it batched.
    Memory of the streamed read: the support (N x K bools), one int64 per user for an edge table, and one
    record batch. Returns the graph and the file's ``C`` (or ``None``).
    """

    import pyarrow as pa

    from anondecomp.columnar import file_kind, table_demand

    if file_kind(path) != "parquet" or not _streamable(open_parquet(parquet_files(path)[0]).schema_arrow):
        return _from_graph(path, demand)
    files = parquet_files(path)
    first = open_parquet(files[0])
    meta = read_metadata(first, files[0])
    weighted = "weight" in first.schema_arrow.names
    if weighted and demand is not None:  # refused by the general reader, in its words
        return _from_graph(path, demand)
    if not weighted:
        demand = table_demand(meta, path, demand)
    arm_codes: dict = {}
    n_rows = 0
    total_rows = sum(open_parquet(f).metadata.num_rows for f in files)
    sparse_ids = 2 * total_rows + (1 << 20)
    # a support of many more cells than rows (a sparse log) is not made dense: the general reader keeps it sparse
    max_cells = max(DENSE_SUPPORT_CELLS, DENSE_SUPPORT_FACTOR * total_rows)
    # the largest id from the row groups' statistics, when written: the support is allocated once
    support = np.zeros((min(_max_user(files), sparse_ids), 0), dtype=bool)
    rounds = np.zeros(len(support), dtype=np.int64)  # an edge table's ceil(w_ij) per user (0: no row yet)
    for part in files:
        start = 0  # rows of the part file before this batch, so that an error names the file's row
        for batch in _record_batches(part, weighted):
            for name in ("user", "arm"):
                no_nulls(batch.column(name), name, part, start)
            start += batch.num_rows
            u = batch.column(0).to_numpy().astype(np.int64, copy=False)
            a = _arm_codes(batch.column(1), arm_codes)
            if len(u) and u.min() < 0:
                raise InvalidInputError(f"{part}: user ids must be non-negative integers, got {int(u.min())}")
            top = int(u.max()) + 1 if len(u) else 0
            if top > sparse_ids:  # ids far above the row count: index by factorised ids instead
                return _from_graph(path, demand)
            if top > support.shape[0] or len(arm_codes) > support.shape[1]:
                rows = support.shape[0] if top <= support.shape[0] else max(top, 2 * support.shape[0])
                if max(top, support.shape[0]) * max(len(arm_codes), support.shape[1]) > max_cells:
                    return _from_graph(path, demand)
                grown = np.zeros((rows, max(len(arm_codes), support.shape[1])), bool)
                grown[:support.shape[0], :support.shape[1]] = support
                support = grown
                rounds = np.concatenate([rounds, np.zeros(rows - len(rounds), dtype=np.int64)])
            support[u, a] = True
            n_rows += len(u)
            if weighted and not _same_rounds(batch.column(2), u, rounds):
                return _from_graph(path, demand)
    # the record batches are gone, but Arrow's allocator keeps their pages: return them before the solve
    # (the whole process's peak at 10^6 users x 20 arms: 0.95 GB instead of 1.1 GB, 1.2 GB for an edge table)
    pa.default_memory_pool().release_unused()
    present = np.flatnonzero(support.any(axis=1))
    if len(present) == 0:
        raise InvalidInputError(f"{path}: the table has no rows")
    support = support[present] if len(present) < support.shape[0] else support
    if int(np.count_nonzero(support)) != n_rows:
        raise InvalidInputError(f"{path}: {n_rows - int(np.count_nonzero(support))} (user, arm) pairs appear "
                                "more than once; give one row per pair")
    if weighted:
        demand = batched_demand(support.sum(axis=1), rounds[present])
        if demand is None:
            return _from_graph(path, None)
    return BatchedSupport(support, demand, present.astype(np.int64), tuple(map(str, arm_codes))), \
        c_field(meta, f"{path}: metadata 'C'")


def _same_rounds(col, users: np.ndarray, rounds: np.ndarray) -> bool:
    """Record ceil(w) of one batch's weights in ``rounds`` (per user); False when a weight is not a positive
    finite number of at most 2^53 (the general reader names it) or when a user's rows need different numbers
    of rounds (not the batched form)."""
    import pyarrow as pa

    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    if col.null_count or not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
        return False
    w = col.to_numpy()
    if np.issubdtype(w.dtype, np.floating):
        if not (np.isfinite(w) & (w > 0) & (w <= MAX_DEMAND)).all():
            return False
        r = np.ceil(w).astype(np.int64)
    else:  # compared as integers: uint64 and int64 hold values beyond 2^53 exactly
        if not ((w > 0) & (w <= MAX_DEMAND)).all():
            return False
        r = w.astype(np.int64)
    before = rounds[users]
    if ((before != 0) & (before != r)).any():  # against the user's rows of earlier batches
        return False
    rounds[users] = r
    return bool((rounds[users] == r).all())  # within the batch: one of two different values was overwritten


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


def _record_batches(part: Path, weighted: bool = False):
    """The (user, arm[, weight]) record batches of one part file, read one at a time; read errors in one
    line."""
    import pyarrow as pa

    columns = ["user", "arm", "weight"] if weighted else ["user", "arm"]
    batches = open_parquet(part).iter_batches(columns=columns, batch_size=1 << 22)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (pa.ArrowException, OSError) as exc:
            raise InvalidInputError(f"{part}: not a readable Parquet file ({first_line(exc)})") from None
        yield batch


def _max_user(files: list[Path]) -> int:
    """1 + the largest user id that the Parquet statistics record (0 when some row group has none)."""
    top = 0
    for f in files:
        meta = open_parquet(f).metadata
        column = meta.schema.names.index("user")
        for g in range(meta.num_row_groups):
            stats = meta.row_group(g).column(column).statistics
            if stats is None or not stats.has_min_max:
                return 0
            top = max(top, int(stats.max) + 1)
    return top


def _arm_codes(col, codes: dict) -> np.ndarray:
    """Arm codes of one batch in order of first appearance over the whole table (few distinct arms)."""
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(col)
    local = np.array([codes.setdefault(v, len(codes)) for v in enc.dictionary.to_pylist()], dtype=np.int64)
    return local[enc.indices.to_numpy(zero_copy_only=False)]


def _from_graph(path, demand) -> tuple[BatchedSupport | DemandGraph, int | None]:
    """Any other graph file: read it whole; its support and D when it is batched and dense enough
    (:func:`batched_support`), else the graph itself (sparse: no users x arms array is built)."""
    from anondecomp.io import read_graph

    graph, C = read_graph(path, demand=demand)
    data = batched_support(graph)
    return (graph if data is None else data), C


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
    return BatchedSupport(_dense(graph, True, bool), demand, np.asarray(graph.users, dtype=object),
                          tuple(graph.arms))


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


def make_shards(support: np.ndarray, C: int, n_shards: int, seed: int = 0) -> np.ndarray:
    """Shard id (0..n_shards-1) of every user, such that every arm holds 0 or at least C+1 users per shard
    (``support`` must be feasible: no arm wanted by 1..C users; :func:`decompose_sharded` checks, and passes
    only the wanted arms' columns).

    Users are dealt at random (balanced), then repaired towards shard 0, the *sink*: a user of shard s >= 1
    on an arm that holds 1..C users in s moves to shard 0; an arm that holds 1..C users in shard 0 pulls all
    its users into shard 0. Users only ever move into shard 0, so this stops after at most N moves, and at the
    fixed point no shard has a thin arm (an arm thin in shard 0 would have all its |B_j| >= C+1 users there).
    Thin arms (wanted by few users) thus keep their users together in shard 0.
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
    return np.stack([np.bincount(shard[support[:, j]], minlength=n_shards) for j in range(support.shape[1])],
                    axis=1)


def graph_shards(graph: DemandGraph, C: int, n_shards: int, seed: int = 0) -> np.ndarray:
    """Shard id (0..n_shards-1) of every user of a general (sparse) graph, such that in every shard every arm
    *wanted there* (some user of the shard has ``ceil(w_ij) >= 1`` on it) holds at least C+1 users whose
    support contains it (``graph`` must be feasible: no wanted arm with 1..C support users;
    :func:`decompose_sharded` checks).

    The rule of :func:`make_shards`, on the graph's edges. An arm counts in a shard only through the shard's
    users whose support holds it (users with zero demand on it pad its groups); a cell (s, j) is *thin* when
    arm j is wanted in shard s and has 1..C support users there. Users are dealt at random (balanced, the
    same dealing as :func:`make_shards`), then, until no cell is thin: (a) every user of a shard s >= 1 with
    arm j on its support moves to shard 0, the *sink*, when (s, j) is thin; (b) an arm j thin in shard 0
    pulls all its support users into shard 0. The counts of a pass are one ``bincount`` over the edges (cell
    ``shard[edge_users] * K + edge_arms``; over the distinct cells when shards x arms exceed the edges), so a
    pass costs O(edges), never users x arms.

    It terminates: users only ever move into the sink, and every pass that finds a thin cell moves at least
    one user -- a thin cell of a shard s >= 1 holds a user of s; an arm thin in the sink is wanted, so it has
    |B_j| >= C+1 support users and some are outside the sink -- hence at most N passes (a few in practice).
    At the fixed point no cell is thin, so every shard's sub-graph (its users with all their edges) has no
    thin arm: every arm it wants has 0 or >= C+1 of its support users there (:func:`graph_shard_counts`).

    Examples
    --------
    >>> import numpy as np
    >>> w = np.zeros((12, 2)); w[:, 0] = 1; w[:3, 1] = 2   # arm 1: wanted by 3 = C+1 users only
    >>> g = DemandGraph.from_weights(w)
    >>> shard = graph_shards(g, 2, 3, seed=0)
    >>> shard[:3].tolist(), np.bincount(shard, minlength=3).tolist()  # arm 1's users together in the sink
    ([0, 0, 0], [6, 3, 3])
    """
    N, K = graph.shape
    shard = np.zeros(N, dtype=np.int32)
    if n_shards <= 1:  # one shard: every wanted arm holds |B_j| >= C+1 support users
        return shard
    rng = np.random.default_rng(seed)
    shard = (rng.permutation(N) % n_shards).astype(np.int32)
    users, arms = graph.edge_users, graph.edge_arms
    wants = graph.edge_required > 0
    while True:
        home = shard[users]
        thin = _thin_edges(home, arms, wants, K, n_shards, C)
        if not thin.any():
            return shard
        pull = np.zeros(K, dtype=bool)
        pull[arms[thin & (home == 0)]] = True  # (b): arms thin in the sink take all their users there
        thin |= pull[arms]
        shard[users[thin]] = 0                 # (a), and (b)


def _thin_edges(home: np.ndarray, arms: np.ndarray, wants: np.ndarray, K: int, n_shards: int, C: int
                ) -> np.ndarray:
    """(E,) bool: the edges whose (shard, arm) cell is thin (arm wanted in the shard, 1..C support users)."""
    cell = home.astype(np.int64) * K + arms
    n = n_shards * K
    if n > 2 * len(cell) + (1 << 20):  # more cells than edges: count the distinct cells only
        _, cell = np.unique(cell, return_inverse=True)
        n = int(cell.max()) + 1 if len(cell) else 0
    count = np.bincount(cell, minlength=n)
    wanted = np.bincount(cell[wants], minlength=n) > 0
    return (wanted & (count <= C))[cell]


def graph_shard_counts(graph: DemandGraph, shard: np.ndarray, n_shards: int) -> tuple[np.ndarray, np.ndarray]:
    """(n_shards, K) support users per shard and arm, and (n_shards, K) bool whether some user of the shard
    wants the arm (``ceil(w_ij) >= 1``). For checks on small graphs (dense in shards x arms)."""
    K = graph.n_arms
    cell = shard[graph.edge_users].astype(np.int64) * K + graph.edge_arms
    count = np.bincount(cell, minlength=n_shards * K).reshape(n_shards, K)
    wanted = np.bincount(cell[graph.edge_required > 0], minlength=n_shards * K).reshape(n_shards, K) > 0
    return count, wanted


def phase_rows(support: np.ndarray, D: int | float, L: int, C: int
               ) -> tuple[tuple[np.ndarray, ...], bool]:
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
    base = np.cumsum(k) - k            # first row of each user
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
    length = np.where(p < sizes[:, None], r[:, None] + idle[:, None] // np.maximum(sizes, 1)[:, None]
                      + (p < (idle % np.maximum(sizes, 1))[:, None]), 0)
    start = np.cumsum(length, axis=1) - length
    kp = ku * K + phase                # each row's (k, phase) in the flattened (K+1, K) tables
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
        lost = np.zeros((K, n), dtype=np.int64)
        np.cumsum(thin * np.diff(cuts), axis=1, out=lost[:, 1:])
        at = arm * n                   # flat indices: cheaper than (arm, boundary) pairs
        lost = lost.ravel()
        ok = bool((rounds - (lost[at + e_row] - lost[at + s_row]) >= r[ku]).all())
    return (users, arm, start.ravel()[kp], rounds), ok


REPAIR_CELLS = 1 << 22  # arms x rounds up to which a thin phase schedule is repaired (round-level arrays)
PIECE = 12              # rounds of a thin stretch one recruit covers (phases last about D / k rounds)
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
    edge = np.diff(pad, axis=1).ravel()           # +1 where a run starts, -1 where it ends, per (arm, round)
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


def recruit_rows(support: np.ndarray, L: int, C: int, rows: tuple[np.ndarray, ...], passes: int = REPAIR_PASSES
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
    dtype = np.int32 if max(N * K, K * (L + 1)) < 2**31 else np.int64
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


def solve_shard(matrix: np.ndarray, D: int | float | None, L: int, C: int, seed: int = 0
                ) -> tuple[tuple[np.ndarray, ...], int, str]:
    """Schedule rows of one shard, its R and the method used: the phase schedule when valid at length L
    (R = L, method ``phase``), else that schedule repaired by :func:`recruit_rows` (R = L, ``phase+recruit``),
    else :func:`anondecomp.decompose` with ``auto`` on the shard (exact routes, R >= L possible).
    ``matrix`` is the shard's support, or its weights when ``D`` is None (a general graph: ``auto`` only), or
    (weights, support) for a general graph whose support is wider than its weights."""
    if D is not None:
        rows, ok = phase_rows(matrix, D, L, C)
        if ok:
            return rows, L, "phase"
        if matrix.shape[1] * (L + 1) <= REPAIR_CELLS:
            rows, ok = recruit_rows(matrix, L, C, rows)
            if ok and _covers(matrix, D, rows):
                return rows, L, "phase+recruit"
    if isinstance(matrix, tuple):
        graph = DemandGraph.from_weights(matrix[0], support=matrix[1])
    else:
        graph = DemandGraph.from_weights(matrix) if D is None else DemandGraph.from_batched(D, matrix)
    return solve_graph(graph, C, seed)


def solve_graph(graph: DemandGraph, C: int, seed: int = 0) -> tuple[tuple[np.ndarray, ...], int, str]:
    """Schedule rows of one shard given as a :class:`~anondecomp.DemandGraph` (users and arms local to it),
    its R and the method, by :func:`anondecomp.decompose` with ``auto`` (:func:`graph_rows`, in one block)."""
    R, method, blocks = graph_rows(graph, C, seed, block=None)
    return next(blocks), R, method


ROW_BLOCK = 1 << 24
"""(user, distinct assignment) entries turned into schedule rows at once (as the compact writer's blocks)."""


def graph_rows(graph: DemandGraph, C: int, seed: int = 0, block: int | None = ROW_BLOCK) -> tuple:
    """Decompose one shard given as a :class:`~anondecomp.DemandGraph` with :func:`anondecomp.decompose`
    (``auto``). Returns (R, method, blocks): ``blocks`` iterates over its schedule rows (user, arm,
    first_round, rounds; users and arms local to the graph, user-major, ending at R) in blocks of whole users,
    each from about ``block`` entries of the (distinct, N) assignments (:func:`anondecomp.compact.schedule_rows`;
    ``None``: one block). A shard without demand parks every user on the first arm of its support (R = 0: its
    rows are stretched to the merged R)."""
    from anondecomp.decompose import decompose

    res = decompose(graph, C, method="auto", seed=seed)
    R, N = res.total_assignments, graph.n_users
    if R == 0:  # no demand in this shard: every user sits on its first support arm
        park = graph.edge_arms[graph.indptr[:-1]].astype(np.int64)  # each user's first edge (none is empty)
        zero = np.zeros(len(park), dtype=np.int64)
        return 0, res.method, iter([(np.arange(len(park)), park, zero, zero)])
    m = res.multiplicities.astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(m)[:-1]])
    step = N if block is None else max(1, block // max(1, len(m)))
    return R, res.method, (schedule_rows(res.assignments, starts, R, lo, min(lo + step, N))
                           for lo in range(0, N, step))


def _covers(support: np.ndarray, D: int | float, rows: tuple[np.ndarray, ...]) -> bool:
    """Whether every wanted pair has at least r_i = ceil(D / |A_i|) rounds in ``rows`` and no row is off the
    support: with no thin round, that makes every pair's rounds informative."""
    u, a, _, n = rows
    N, K = support.shape
    key = u * K + a
    pairs = np.flatnonzero(support)
    total = np.bincount(key, weights=n, minlength=N * K)[pairs]
    need = required_per_arm(D, np.maximum(support.sum(axis=1), 1))[pairs // K]
    return bool(support.ravel()[key].all() and (total >= need).all())


def _extend(rows: tuple[np.ndarray, ...], R: int) -> tuple[np.ndarray, ...]:
    """Stretch every user's last row to end at round R (shards share rounds; a longer group only gains users)."""
    users, arm, first, rounds = rows
    last = np.ones(len(users), dtype=bool)
    last[:-1] = users[1:] != users[:-1]
    rounds = rounds.astype(np.int64, copy=True)
    rounds[last] = R - first[last]
    return users, arm, first, rounds


def shard_task(matrix: np.ndarray, users: np.ndarray, arms: tuple[str, ...], D: int | float | None, L: int, C: int,
               R: int | None, part: str | None, header: dict | None, seed: int = 0) -> tuple[int, str, int]:
    """One shard: solve it; with ``part`` also write its rows (stretched to the merged R) as one Parquet file.

    Returns (shard R, method, rows written). Runs in a Dask worker or in this process.
    """
    rows, R_s, method = solve_shard(matrix, D, L, C, seed)
    if part is not None:
        _write_part(Path(part), _extend(rows, R), users, arms, header)
    return R_s, method, len(rows[0])


@dataclass(frozen=True, eq=False)
class GraphShard:
    """The sub-graph of one shard's users in a general graph, as its task receives it (pickled to a Dask
    worker): the CSR rows of its users over the arms they have edges on, with every edge's weight and
    requirement as the graph holds them (exact: a batched graph's ceil(D / |A_i|) is kept). About 24 bytes an
    edge; nothing per (user, arm) cell.

    ``indptr`` (n+1,) int64 and ``cols`` (E_s,) int32 as a CSR matrix's, ``cols`` indexing ``arms`` (the
    arms' indices in the whole graph, increasing); ``demand`` the graph's D (or ``None``)."""

    indptr: np.ndarray
    cols: np.ndarray
    weights: np.ndarray
    required: np.ndarray
    arms: np.ndarray
    demand: float | None = None

    @classmethod
    def of(cls, graph: DemandGraph, members: np.ndarray) -> GraphShard:
        """The sub-graph of the users ``members`` (increasing indices) of ``graph``: all their edges, columns
        restricted to the arms they have edges on. Time and memory O(their edges) (plus one bool per arm)."""
        lo = graph.indptr[members]
        size = graph.indptr[members + 1] - lo
        indptr = np.zeros(len(members) + 1, dtype=np.int64)
        np.cumsum(size, out=indptr[1:])
        at = np.arange(indptr[-1]) + np.repeat(lo - indptr[:-1], size)  # the users' edges, row-major
        cols = graph.edge_arms[at]
        present = np.zeros(graph.n_arms, dtype=bool)
        present[cols] = True
        local = np.cumsum(present, dtype=np.int64) - 1
        return cls(indptr, local[cols].astype(np.int32), graph.edge_weights[at], graph.edge_required[at],
                   np.flatnonzero(present), graph.demand)

    @property
    def nnz(self) -> int:
        return len(self.cols)

    def graph(self) -> DemandGraph:
        """The shard as a :class:`~anondecomp.DemandGraph` (users and arms named by their local index)."""
        n, k = len(self.indptr) - 1, len(self.arms)
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(self.indptr))
        return DemandGraph._from_edges((n, k), tuple(map(str, range(n))), tuple(map(str, range(k))), rows,
                                       self.cols, self.weights, self.required, self.demand)


def graph_shard_task(piece: GraphShard | DemandGraph, C: int, seed: int = 0, spill: str | None = None
                     ) -> tuple[int, str, int]:
    """One shard of a general graph: decompose it (:func:`graph_rows`); with ``spill`` save its rows (local
    user and arm indices, ending at its own R) there, a Parquet file of one row group per block of users that
    :func:`finish_part` turns into a part file once the merged R is known. Returns (shard R, method, rows).
    Runs in a Dask worker or in this process; memory O(its edges + its users x its distinct assignments), the
    rows never all at once. ``piece`` may be the whole graph (one shard holding every user, in this process:
    no copy of its edges)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    R, method, blocks = graph_rows(piece if isinstance(piece, DemandGraph) else piece.graph(), C, seed)
    n = 0
    if spill is None:
        for rows in blocks:
            n += len(rows[0])
        return R, method, n
    schema = _spill_schema()
    with pq.ParquetWriter(spill, schema, compression="none") as writer:
        for rows in blocks:  # one row group per block: finish_part reads them back one at a time
            writer.write_table(pa.table(list(rows), schema=schema), row_group_size=max(1, len(rows[0])))
            n += len(rows[0])
    return R, method, n


def _spill_schema():
    """Schedule rows with local user and arm indices (a shard's rows before the merged R is known)."""
    import pyarrow as pa

    return pa.schema([("user", pa.int64()), ("arm", pa.int32()), ("first_round", pa.int64()), ("rounds", pa.int64())])


def _spilled_tables(spill: str | os.PathLike, R: int, users: np.ndarray, arms: np.ndarray, header: dict):
    """The rows that :func:`graph_shard_task` saved, block by block, stretched to the merged R, as tables of
    the compact schema (user and arm names); the file is removed at the end. Memory: one block."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = schedule_schema(header)
    names, arm_names = pa.array(users, pa.string()), pa.array(arms, pa.string())
    spilled = pq.ParquetFile(spill)
    for g in range(spilled.num_row_groups):
        block = spilled.read_row_group(g)
        u, a, first, rounds = _extend(tuple(block.column(k).to_numpy() for k in range(4)), R)
        yield pa.table([names.take(u), arm_names.take(a), first, rounds], schema=schema)
    spilled.close()
    os.remove(spill)


def finish_part(spill: str, R: int, users: np.ndarray, arms: np.ndarray, part: str, header: dict) -> None:
    """Write one shard's spilled rows, stretched to the merged R, as the part file ``part`` (names of its users
    and of its local arms given); runs where :func:`graph_shard_task` did."""
    import pyarrow.parquet as pq

    with pq.ParquetWriter(part, schedule_schema(header)) as writer:
        for table in _spilled_tables(spill, R, users, arms, header):
            writer.write_table(table)


def _write_part(path: Path, rows: tuple[np.ndarray, ...], users: np.ndarray, arms: tuple[str, ...],
                header: dict) -> None:
    import pyarrow.parquet as pq

    pq.write_table(_rows_table(rows, users, arms, header), path)


def _rows_table(rows: tuple[np.ndarray, ...], users: np.ndarray, arms: tuple[str, ...], header: dict):
    """Schedule rows with local user indices as a table of the compact schema (user and arm names)."""
    import pyarrow as pa

    u, a, first, rounds = rows
    names = pa.array(users).cast(pa.string()) if users.dtype != object else pa.array(users, pa.string())
    return pa.table([names.take(u), pa.array(arms, pa.string()).take(a), first.astype(np.int64),
                     rounds.astype(np.int64)], schema=schedule_schema(header))


def decompose_sharded(data: BatchedSupport | DemandGraph, C: int, out: str | os.PathLike | None = None, *,
                      n_shards: int | None = None, scheduler=None, seed: int = 0, parts: bool = False
                      ) -> ShardedResult:
    """Decompose a graph shard by shard and write its schedule to ``out`` (if given).

    Parameters
    ----------
    data : a batched graph's support and demand (:class:`BatchedSupport`, :func:`read_support`), or any
        :class:`~anondecomp.DemandGraph`, held sparse. A graph that :func:`batched_support` finds batched
        takes the batched path (phase rule); any other -- a general or sparse log -- is sharded by
        :func:`graph_shards` and each shard decomposed by ``auto`` (see below). A :class:`BatchedSupport` with
        general weights (:func:`from_graph`) is made the sparse graph first.
    C : anonymity parameter.
    out : where the schedule goes. A part directory (``OUT/``, or ``OUT.parquet`` with ``parts``; new or empty):
        one ``part-NNNNN.parquet`` per shard, every user's rows tiling [0, R); or one Parquet file
        (``OUT.parquet`` without ``parts``) holding the shards' rows one after the other (local runs only: the
        shards are solved in this process).
    parts : write ``out`` as a part directory whatever its name (what ``--shards`` and ``--scheduler`` ask
        for). Default: for ``OUT/`` and on a Dask cluster.
    n_shards : number of shards (default: one per ``SHARD_USERS`` users for a batched graph, one per
        ``SHARD_CELLS`` users x lower-bound rounds for a general one).
    scheduler : a Dask scheduler address (``tcp://HOST:PORT``) or a ``distributed.Client``; shards then run on
        its workers, which must see ``out`` (shared file system). ``None`` runs them in this process.
    seed : seed of the random dealing of users to shards (and of ``auto`` in every shard).

    Batched graph: two passes; the first solves every shard and returns its R; the merged R is their
    maximum; the second solves again (deterministic: the same rows) and writes each shard's rows stretched to
    that R. A shard whose phase schedule is valid costs a few vectorised passes over its support, so solving
    twice is cheaper than holding or shipping 10^8 rows. A single shard run in this process is solved once
    and its rows written as they are.

    General graph: every shard task gets its users' sub-graph (:class:`GraphShard`, CSR slices: 24 bytes an
    edge to pickle), decomposes it by ``auto`` (``sessions`` on large logs) and, when ``out`` is given, saves
    its rows (with its own R) beside the output; once the merged R is known a second, light task per shard
    stretches them to R and writes the part file (:func:`finish_part`). Each shard is solved once. Memory of
    a task: O(its edges + its users x its distinct assignments); of this process: O(the graph's edges).

    Raises :class:`~anondecomp.InfeasibleError` for an arm wanted by 1..C users (as without sharding).

    Examples
    --------
    >>> import numpy as np, anondecomp
    >>> rng = np.random.default_rng(0)
    >>> w = rng.integers(1, 4, (400, 6)) * (rng.random((400, 6)) < 0.5)
    >>> w[w.sum(axis=1) == 0, 0] = 1
    >>> g = anondecomp.DemandGraph.from_weights(w)
    >>> res = decompose_sharded(g, 3, n_shards=4)
    >>> len(res.shard_users), res.total_assignments == max(res.shard_rounds) >= g.lower_bound
    (4, True)
    """
    import time

    t0 = time.perf_counter()
    C = check_C(C)
    if n_shards is not None and n_shards < 1:
        raise InvalidInputError(f"n_shards (--shards) must be at least 1, got {n_shards}")
    if isinstance(data, DemandGraph):
        batched = batched_support(data)
        data = data if batched is None else batched
    elif data.weights is not None:
        data = _sparse_graph(data)
    parts = bool(parts) or scheduler is not None or (out is not None and is_directory_output(out))
    if out is not None:
        check_writable(out, "out", directory=parts)
    if isinstance(data, DemandGraph):
        result = _sharded_graph(data, C, out, n_shards, scheduler, seed, parts)
    else:
        result = _sharded_batched(data, C, out, n_shards, scheduler, seed, parts)
    return dataclasses.replace(result, wall_time=time.perf_counter() - t0)


SHARD_CELLS = 1 << 28
"""Users x lower-bound rounds per shard of a general graph when the caller does not choose: ``auto``'s
sessions hold about 3 bytes per (user, round) and the schedule rows as much again (about 1.5 GB a task)."""


def _sparse_graph(data: BatchedSupport) -> DemandGraph:
    """A general :class:`BatchedSupport` (dense weights, from :func:`from_graph`) as the sparse graph."""
    from scipy.sparse import csr_array

    support = csr_array(data.support) if data.explicit_support else None
    return DemandGraph.from_weights(csr_array(data.weights), [str(u) for u in data.users], data.arms,
                                    support=support)


def _sharded_graph(graph: DemandGraph, C: int, out, n_shards: int | None, scheduler, seed: int, parts: bool
                   ) -> ShardedResult:
    """:func:`decompose_sharded` of a general graph: :func:`graph_shards`, one :func:`graph_shard_task` per
    shard, then one :func:`finish_part` per shard (or one file written here)."""
    import pyarrow.parquet as pq

    thin = graph.thin_arms(C)
    if len(thin):
        raise thin_arms_error(graph.arm_names(thin), C)
    N = graph.n_users
    L = graph.lower_bound
    S = n_shards or max(1, -(-N // SHARD_USERS), -(-N * max(L, 1) // SHARD_CELLS))
    shard = graph_shards(graph, C, S, seed)
    members = [m for m in (np.flatnonzero(shard == s) for s in range(S)) if len(m)]
    del shard
    target = None if out is None else output_target(out)
    tmpdir = None if out is None else tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        spills = [None if tmpdir is None else str(Path(tmpdir) / f".rows-{s:05d}.parquet") for s in range(len(members))]
        arm_ids: list[np.ndarray] = []

        def pieces():  # each shard's sub-graph is cut when its task runs (locally) or is submitted
            for m, spill in zip(members, spills, strict=True):
                if len(m) == N and scheduler is None:  # every user in one shard here: the graph itself
                    arm_ids.append(np.arange(graph.n_arms))
                    yield graph, C, seed, spill
                    continue
                piece = GraphShard.of(graph, m)
                arm_ids.append(piece.arms)
                yield piece, C, seed, spill

        first = _runner(scheduler, graph_shard_task)(pieces())
        R = max(r for r, _, _ in first)
        result = ShardedResult(C, R, L, N, graph.n_arms, tuple(r for r, _, _ in first), tuple(map(len, members)),
                               tuple(m for _, m, _ in first), sum(n for _, _, n in first))
        if out is None:
            return result
        header = result.header()
        users = np.asarray(graph.users, dtype=object)
        arms = np.asarray(graph.arms, dtype=object)
        shards = list(zip(members, arm_ids, spills, strict=True))
        if parts:  # where the shards ran: stretch each one's rows to R and write its part file
            _runner(scheduler, finish_part)((spill, R, users[m], arms[a], str(Path(tmpdir) / f"part-{s:05d}.parquet"),
                                             header) for s, (m, a, spill) in enumerate(shards))
            publish_dir(tmpdir, target)
        else:
            with publish_file(target) as tmp, pq.ParquetWriter(tmp, schedule_schema(header)) as writer:
                for m, a, spill in shards:
                    for table in _spilled_tables(spill, R, users[m], arms[a], header):
                        writer.write_table(table)
            shutil.rmtree(tmpdir, ignore_errors=True)
        return result
    except BaseException:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
        raise


def _sharded_batched(data: BatchedSupport, C: int, out, n_shards: int | None, scheduler, seed: int, parts: bool
                     ) -> ShardedResult:
    """:func:`decompose_sharded` of a batched graph's support (:func:`make_shards`, phase rule per shard)."""
    import pyarrow.parquet as pq

    wanted = data.wanted
    degree = data.support.sum(axis=0)
    thin = np.flatnonzero((degree > 0) & (degree <= C) & wanted)
    if len(thin):
        raise thin_arms_error([data.arms[j] for j in thin], C)
    N = len(data.support)
    S = n_shards or max(1, -(-N // SHARD_USERS))
    # only wanted arms need C+1 users per shard (an arm some users may pad but nobody wants is never opened)
    shard = make_shards(data.support[:, wanted] if data.explicit_support else data.support, C, S, seed)
    members = [np.flatnonzero(shard == s) for s in range(S)]
    members = [m for m in members if len(m)]
    L = data.lower_bound
    D = data.demand
    run = _runner(scheduler)
    single = None
    if len(members) == 1 and scheduler is None:  # one shard here: its rows are solved once and kept
        single = solve_shard(data.rows_of(members[0]), D, L, C, seed)
        first = [(single[1], single[2], len(single[0][0]))]
    else:
        # tasks as generators: each shard's rows are cut from the support when its task runs (locally) or is
        # submitted, never all at once beside the support
        first = run((data.rows_of(m), None, data.arms, D, L, C, None, None, None, seed) for m in members)
    R = max(r for r, _, _ in first)
    result = ShardedResult(C, R, L, N, len(data.arms), tuple(r for r, _, _ in first), tuple(map(len, members)),
                           tuple(m for _, m, _ in first), sum(n for _, _, n in first))
    if out is not None and not parts:
        header = result.header()
        # one file: each shard's rows are solved again (or kept, for a single shard) and appended in turn
        with publish_file(output_target(out)) as tmp, pq.ParquetWriter(tmp, schedule_schema(header)) as writer:
            for m in members:
                writer.write_table(_shard_table(data, m, L, C, R, seed, header, single))
    elif out is not None:
        target = output_target(out)
        tmpdir = tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            header = result.header()
            if single is not None:  # its rows tile [0, R) already: R is its own
                _write_part(Path(tmpdir) / "part-00000.parquet", single[0], data.users[members[0]], data.arms,
                            header)
            else:
                run((data.rows_of(m), data.users[m], data.arms, D, L, C, R,
                     str(Path(tmpdir) / f"part-{s:05d}.parquet"), header, seed) for s, m in enumerate(members))
            publish_dir(tmpdir, target)
        except BaseException:
            shutil.rmtree(tmpdir, ignore_errors=True)
            raise
    return result


def _shard_table(data: BatchedSupport, members: np.ndarray, L: int, C: int, R: int, seed: int, header: dict,
                 single: tuple | None):
    """One shard's rows, stretched to the merged R, as a table (``single``: the one shard's solution, kept);
    a function so that its row arrays are freed before the next shard is solved."""
    if single is not None:  # its rows tile [0, R) already: R is its own
        return _rows_table(single[0], data.users[members], data.arms, header)
    rows = _extend(solve_shard(data.rows_of(members), data.demand, L, C, seed)[0], R)
    return _rows_table(rows, data.users[members], data.arms, header)


def _large(arg) -> bool:
    return isinstance(arg, GraphShard) or (isinstance(arg, np.ndarray) and arg.nbytes > 1 << 20)


def _runner(scheduler, task=shard_task):
    """A function running ``task`` (:func:`shard_task`, or a general graph's :func:`graph_shard_task` and
    :func:`finish_part`) over argument tuples: in this process, or on a Dask cluster."""
    if scheduler is None:
        return lambda tasks: [task(*t) for t in tasks]
    from distributed import Client

    def run(tasks):
        try:
            client = scheduler if isinstance(scheduler, Client) else Client(scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise InvalidInputError(f"--scheduler {scheduler}: cannot connect ({first_line(exc)})") from None
        try:
            # a shard's sub-graph and large arrays go to the workers as data, not inside the task graph
            futures = [client.submit(task, *[client.scatter(a) if _large(a) else a for a in t], pure=False)
                       for t in tasks]
            return client.gather(futures)
        finally:
            if client is not scheduler:
                client.close()

    return run

