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
from pathlib import Path

import numpy as np

from anondecomp._formats import c_field, first_line, no_nulls, schedule_schema
from anondecomp.columnar import open_parquet, parquet_files, read_metadata
from anondecomp.compact import is_directory_output, publish_dir, publish_file, schedule_rows
from anondecomp.errors import InvalidInputError
from anondecomp.graph import MAX_DEMAND, DemandGraph
from anondecomp.io import check_writable, output_target
from anondecomp.phases import (
    DENSE_SUPPORT_CELLS,
    DENSE_SUPPORT_FACTOR,
    SHARD_USERS,
    BatchedSupport,
    batched_demand,
    batched_support,
    extend_rows,
    from_graph,
    make_shards,
    phase_solution,
)
from anondecomp.validation import check_C, thin_arms_error


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
        return {
            "C": self.C,
            "method": "sharded:" + "+".join(methods),
            "total_assignments": self.total_assignments,
            "lower_bound": self.lower_bound,
            "distinct_assignments": None,
            "shards": len(self.shard_users),
        }

    def summary(self) -> str:
        return "\n".join(
            [
                f"method               sharded ({', '.join(sorted(set(self.shard_methods)))})",
                f"users x arms         {self.n_users} x {self.n_arms}, C = {self.C}",
                f"R (assignments)      {self.total_assignments}",
                f"lower bound          {self.lower_bound}   (max_i sum_j w_ij)",
                f"R / lower bound      {self.total_assignments / max(self.lower_bound, 1):.4f}",
                f"shards               {len(self.shard_users)} (R per shard {min(self.shard_rounds)}.."
                f"{max(self.shard_rounds)}; merged R = the maximum)",
                f"schedule rows        {self.rows}",
                f"wall time            {self.wall_time:.3f} s",
            ]
        )


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


def read_support(
    path: str | os.PathLike, demand: float | None = None
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
    streamed = _stream_support(files, weighted)
    if streamed is None:
        return _from_graph(path, demand)
    support, rounds, arm_codes, n_rows = streamed
    # the record batches are gone, but Arrow's allocator keeps their pages: return them before the solve
    # (the whole process's peak at 10^6 users x 20 arms: 0.95 GB instead of 1.1 GB, 1.2 GB for an edge table)
    pa.default_memory_pool().release_unused()
    present = np.flatnonzero(support.any(axis=1))
    if len(present) == 0:
        raise InvalidInputError(f"{path}: the table has no rows")
    support = support[present] if len(present) < support.shape[0] else support
    if int(np.count_nonzero(support)) != n_rows:
        raise InvalidInputError(
            f"{path}: {n_rows - int(np.count_nonzero(support))} (user, arm) pairs appear "
            "more than once; give one row per pair"
        )
    if weighted:
        demand = batched_demand(support.sum(axis=1), rounds[present])
        if demand is None:
            return _from_graph(path, None)
    return BatchedSupport(support, demand, present.astype(np.int64), tuple(map(str, arm_codes))), c_field(
        meta, f"{path}: metadata 'C'"
    )


def _stream_support(files: list[Path], weighted: bool) -> tuple[np.ndarray, np.ndarray, dict, int] | None:
    """:func:`read_support`'s streamed read of the part files: (support, an edge table's ceil(w_ij) per user,
    the arm codes in order of first appearance, rows read), the support's rows indexed by user id (users
    without rows included); ``None`` when the table is for the general reader (ids far above the row count, a
    support too sparse to hold dense, weights not in the batched form)."""
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
            u, a = _batch_pairs(batch, part, start, arm_codes)
            start += batch.num_rows
            top = int(u.max()) + 1 if len(u) else 0
            if top > sparse_ids:  # ids far above the row count: index by factorised ids instead
                return None
            grown = _grown(support, rounds, top, len(arm_codes), max_cells)
            if grown is None:
                return None
            support, rounds = grown
            support[u, a] = True
            n_rows += len(u)
            if weighted and not _same_rounds(batch.column(2), u, rounds):
                return None
    return support, rounds, arm_codes, n_rows


def _batch_pairs(batch, part: Path, start: int, arm_codes: dict) -> tuple[np.ndarray, np.ndarray]:
    """(user ids, arm codes) of one record batch, checked: no nulls (an error names the row: ``start`` rows of
    the file come before the batch), non-negative ids; new arms get the next codes in ``arm_codes``."""
    for name in ("user", "arm"):
        no_nulls(batch.column(name), name, part, start)
    u = batch.column(0).to_numpy().astype(np.int64, copy=False)
    a = _arm_codes(batch.column(1), arm_codes)
    if len(u) and u.min() < 0:
        raise InvalidInputError(f"{part}: user ids must be non-negative integers, got {int(u.min())}")
    return u, a


def _grown(
    support: np.ndarray, rounds: np.ndarray, top: int, n_arms: int, max_cells: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """``support`` and ``rounds`` grown to hold user ids below ``top`` and ``n_arms`` arms (the rows at least
    doubled, so that growing costs amortised linear time; themselves when they fit), or ``None`` when the
    support would pass ``max_cells`` cells."""
    if top <= support.shape[0] and n_arms <= support.shape[1]:
        return support, rounds
    rows = support.shape[0] if top <= support.shape[0] else max(top, 2 * support.shape[0])
    if max(top, support.shape[0]) * max(n_arms, support.shape[1]) > max_cells:
        return None
    grown = np.zeros((rows, max(n_arms, support.shape[1])), bool)
    grown[: support.shape[0], : support.shape[1]] = support
    return grown, np.concatenate([rounds, np.zeros(rows - len(rounds), dtype=np.int64)])


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
        shard[users[thin]] = 0  # (a), and (b)


def _thin_edges(home: np.ndarray, arms: np.ndarray, wants: np.ndarray, K: int, n_shards: int, C: int) -> np.ndarray:
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


def solve_shard(
    matrix: np.ndarray | tuple[np.ndarray, np.ndarray], D: int | float | None, L: int, C: int, seed: int = 0
) -> tuple[tuple[np.ndarray, ...], int, str]:
    """Schedule rows of one shard, its R and the method used: the phase schedule when valid at length L
    (R = L, method ``phase``), else that schedule repaired by :func:`recruit_rows` (R = L, ``phase+recruit``),
    else :func:`anondecomp.decompose` with ``auto`` on the shard (exact routes, R >= L possible).
    ``matrix`` is the shard's support, or its weights when ``D`` is None (a general graph: ``auto`` only), or
    (weights, support) for a general graph whose support is wider than its weights."""
    if D is not None and not isinstance(matrix, tuple):  # a batched shard is always its support alone
        found = phase_solution(matrix, D, L, C)
        if found is not None:
            return found[0], L, found[1]
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
    return R, res.method, (schedule_rows(res.assignments, starts, R, lo, min(lo + step, N)) for lo in range(0, N, step))


def shard_task(
    matrix: np.ndarray | tuple[np.ndarray, np.ndarray],
    users: np.ndarray,
    arms: tuple[str, ...],
    D: int | float | None,
    L: int,
    C: int,
    R: int | None,
    part: str | None,
    header: dict | None,
    seed: int = 0,
) -> tuple[int, str, int]:
    """One shard: solve it; with ``part`` also write its rows (stretched to the merged R) as one Parquet file.

    ``matrix`` is what :meth:`~anondecomp.phases.BatchedSupport.rows_of` gives (see :func:`solve_shard`);
    ``R``, ``part`` and ``header`` are given together or not at all. Returns (shard R, method, rows written).
    Runs in a Dask worker or in this process.
    """
    rows, R_s, method = solve_shard(matrix, D, L, C, seed)
    if part is not None:
        if R is None or header is None:  # a caller's mistake, named before any file is written
            raise TypeError("shard_task writes a part file only with the merged R and the header")
        _write_part(Path(part), extend_rows(rows, R), users, arms, header)
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
        return cls(
            indptr,
            local[cols].astype(np.int32),
            graph.edge_weights[at],
            graph.edge_required[at],
            np.flatnonzero(present),
            graph.demand,
        )

    @property
    def nnz(self) -> int:
        return len(self.cols)

    def graph(self) -> DemandGraph:
        """The shard as a :class:`~anondecomp.DemandGraph` (users and arms named by their local index)."""
        n, k = len(self.indptr) - 1, len(self.arms)
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(self.indptr))
        return DemandGraph._from_edges(
            (n, k),
            tuple(map(str, range(n))),
            tuple(map(str, range(k))),
            rows,
            self.cols,
            self.weights,
            self.required,
            self.demand,
        )


def graph_shard_task(
    piece: GraphShard | DemandGraph, C: int, seed: int = 0, spill: str | None = None
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
        u, a, first, rounds = extend_rows(tuple(block.column(k).to_numpy() for k in range(4)), R)
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


def _write_part(
    path: Path, rows: tuple[np.ndarray, ...], users: np.ndarray, arms: tuple[str, ...], header: dict
) -> None:
    import pyarrow.parquet as pq

    pq.write_table(_rows_table(rows, users, arms, header), path)


def _rows_table(rows: tuple[np.ndarray, ...], users: np.ndarray, arms: tuple[str, ...], header: dict):
    """Schedule rows with local user indices as a table of the compact schema (user and arm names)."""
    import pyarrow as pa

    u, a, first, rounds = rows
    names = pa.array(users).cast(pa.string()) if users.dtype != object else pa.array(users, pa.string())
    return pa.table(
        [names.take(u), pa.array(arms, pa.string()).take(a), first.astype(np.int64), rounds.astype(np.int64)],
        schema=schedule_schema(header),
    )


def decompose_sharded(
    data: BatchedSupport | DemandGraph,
    C: int,
    out: str | os.PathLike | None = None,
    *,
    n_shards: int | None = None,
    scheduler=None,
    seed: int = 0,
    parts: bool = False,
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
    return DemandGraph.from_weights(csr_array(data.weights), [str(u) for u in data.users], data.arms, support=support)


def _sharded_graph(
    graph: DemandGraph, C: int, out, n_shards: int | None, scheduler, seed: int, parts: bool
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
    tmpdir = None if target is None else tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        spills = [None if tmpdir is None else _spill_path(tmpdir, s) for s in range(len(members))]
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
        result = ShardedResult(
            C,
            R,
            L,
            N,
            graph.n_arms,
            tuple(r for r, _, _ in first),
            tuple(map(len, members)),
            tuple(m for _, m, _ in first),
            sum(n for _, _, n in first),
        )
        if target is None or tmpdir is None:  # no output (both are None exactly then)
            return result
        header = result.header()
        users = np.asarray(graph.users, dtype=object)
        arms = np.asarray(graph.arms, dtype=object)
        shards = list(zip(members, arm_ids, spills, strict=True))
        if parts:  # where the shards ran: stretch each one's rows to R and write its part file
            _runner(scheduler, finish_part)(
                (spill, R, users[m], arms[a], str(Path(tmpdir) / f"part-{s:05d}.parquet"), header)
                for s, (m, a, spill) in enumerate(shards)
            )
            publish_dir(tmpdir, target)
        else:
            with publish_file(target) as tmp, pq.ParquetWriter(tmp, schedule_schema(header)) as writer:
                for s, (m, a, _) in enumerate(shards):
                    for table in _spilled_tables(_spill_path(tmpdir, s), R, users[m], arms[a], header):
                        writer.write_table(table)
            shutil.rmtree(tmpdir, ignore_errors=True)
        return result
    except BaseException:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
        raise


def _spill_path(tmpdir: str, s: int) -> str:
    """The file in which shard ``s``'s task leaves its rows (:func:`graph_shard_task`), read back to merge them."""
    return str(Path(tmpdir) / f".rows-{s:05d}.parquet")


def _sharded_batched(
    data: BatchedSupport, C: int, out, n_shards: int | None, scheduler, seed: int, parts: bool
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
    result = ShardedResult(
        C,
        R,
        L,
        N,
        len(data.arms),
        tuple(r for r, _, _ in first),
        tuple(map(len, members)),
        tuple(m for _, m, _ in first),
        sum(n for _, _, n in first),
    )
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
                _write_part(Path(tmpdir) / "part-00000.parquet", single[0], data.users[members[0]], data.arms, header)
            else:
                run(
                    (
                        data.rows_of(m),
                        data.users[m],
                        data.arms,
                        D,
                        L,
                        C,
                        R,
                        str(Path(tmpdir) / f"part-{s:05d}.parquet"),
                        header,
                        seed,
                    )
                    for s, m in enumerate(members)
                )
            publish_dir(tmpdir, target)
        except BaseException:
            shutil.rmtree(tmpdir, ignore_errors=True)
            raise
    return result


def _shard_table(
    data: BatchedSupport, members: np.ndarray, L: int, C: int, R: int, seed: int, header: dict, single: tuple | None
):
    """One shard's rows, stretched to the merged R, as a table (``single``: the one shard's solution, kept);
    a function so that its row arrays are freed before the next shard is solved."""
    if single is not None:  # its rows tile [0, R) already: R is its own
        return _rows_table(single[0], data.users[members], data.arms, header)
    rows = extend_rows(solve_shard(data.rows_of(members), data.demand, L, C, seed)[0], R)
    return _rows_table(rows, data.users[members], data.arms, header)


def _large(arg) -> bool:
    return isinstance(arg, GraphShard) or (isinstance(arg, np.ndarray) and arg.nbytes > 1 << 20)


CONNECT_TIMEOUT = 3.0
"""Seconds a scheduler address gets to accept a TCP connection before the run is refused (a refused connection
fails at once, saying so)."""


def probe_scheduler(scheduler: str) -> None:
    """Refuse, within :data:`CONNECT_TIMEOUT` seconds, a ``tcp://HOST:PORT`` scheduler that does not accept a
    connection (``refused`` when the host says so), before Dask's client waits out its own timeout."""
    import socket
    from urllib.parse import urlsplit

    if not isinstance(scheduler, str) or not scheduler.startswith("tcp://"):
        return
    try:
        parts = urlsplit(scheduler)
        host, port = parts.hostname, parts.port
    except ValueError:
        raise InvalidInputError(f"--scheduler {scheduler}: not a tcp://HOST:PORT address") from None
    if host is None or port is None:
        raise InvalidInputError(f"--scheduler {scheduler}: not a tcp://HOST:PORT address")
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
    except ConnectionRefusedError:
        raise InvalidInputError(f"--scheduler {scheduler}: connection refused") from None
    except TimeoutError:
        raise InvalidInputError(f"--scheduler {scheduler}: no answer within {CONNECT_TIMEOUT:g} s") from None
    except OSError as exc:
        raise InvalidInputError(f"--scheduler {scheduler}: cannot connect ({exc.strerror or exc})") from None


def _runner(scheduler, task=shard_task):
    """A function running ``task`` (:func:`shard_task`, or a general graph's :func:`graph_shard_task` and
    :func:`finish_part`) over argument tuples: in this process, or on a Dask cluster."""
    if scheduler is None:
        return lambda tasks: [task(*t) for t in tasks]
    from distributed import Client

    def run(tasks):
        if not isinstance(scheduler, Client):
            probe_scheduler(scheduler)
        try:
            client = scheduler if isinstance(scheduler, Client) else Client(scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise InvalidInputError(f"--scheduler {scheduler}: cannot connect ({first_line(exc)})") from None
        try:
            # a shard's sub-graph and large arrays go to the workers as data, not inside the task graph
            futures = [
                client.submit(task, *[client.scatter(a) if _large(a) else a for a in t], pure=False) for t in tasks
            ]
            return client.gather(futures)
        finally:
            if client is not scheduler:
                client.close()

    return run
