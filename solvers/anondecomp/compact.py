"""Compact decompositions in Parquet: each user's schedule as rows ``(user, arm, first_round, rounds)``.

The distinct assignments are laid end to end, each repeated by its multiplicity, in the order of
``Decomposition.assignments``: assignment r occupies rounds ``[s_r, s_r + m_r)`` with ``s_r`` the sum of the
multiplicities before it. A row says that ``user`` spends rounds ``[first_round, first_round + rounds)`` on
``arm``, and consecutive assignments that keep a user on one arm share a row. The size therefore grows with
the arm changes of each user, not with users x distinct assignments (docs/formats.md says why this form).

Rows are grouped by user (each user's rows consecutive, ordered by ``first_round``, tiling ``[0, R)``); the
summary fields of the JSON output are in the file's key-value metadata, one JSON value per key. A directory
output holds ``part-NNNNN.parquet`` files, each a block of users with the same metadata, as Dask writes them.

:func:`verify_compact` reads such a file in record batches (memory bounded by the batch, the per-user state
and the arm occupancy over time, which has at most arms x (distinct assignments + 1) entries) and checks it
exactly, as :func:`anondecomp.verify` checks a JSON decomposition.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from anondecomp._formats import (
    SCHEDULE_FORMAT,
    c_field,
    first_line,
    output_target,
    pending_output,
    refuse_special,
    schedule_schema,
    umask,
)
from anondecomp.columnar import PARQUET_SUFFIXES, open_parquet, parquet_files, read_metadata
from anondecomp.errors import InvalidInputError
from anondecomp.graph import MAX_DEMAND, DemandGraph
from anondecomp.result import Decomposition
from anondecomp.validation import drop_uncoverable
from anondecomp.verify import VerificationReport, uncoverable_fields

FORMAT = SCHEDULE_FORMAT
COLUMNS = ("user", "arm", "first_round", "rounds")
USERS_PER_PART = 1 << 20
_BLOCK = 1 << 24  # assignment entries (distinct x users) turned into rows at once: bounds the writer's memory
_BATCH = 1 << 20  # rows the verifier reads at once
_SATURATE = MAX_DEMAND + 1  # informative counts above every possible demand are all alike
_LISTED = 1000  # problems kept for the report (the count is exact)


def is_directory_output(path: str | os.PathLike) -> bool:
    """Whether ``path`` names a directory of part files: it ends with ``/`` or is a directory named
    ``*.parquet`` (as Dask writes a dataset)."""
    text = os.fspath(path)
    return text.endswith(("/", os.sep)) or (Path(text).is_dir() and Path(text).suffix.lower() in PARQUET_SUFFIXES)


def is_compact_output(path: str | os.PathLike) -> bool:
    """Whether a decomposition written to ``path`` is compact Parquet (by extension, or a part directory)."""
    return is_directory_output(path) or Path(path).suffix.lower() in PARQUET_SUFFIXES


def schedule_rows(
    assignments: np.ndarray, starts: np.ndarray, total: int, lo: int, hi: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The schedule rows of users ``lo..hi-1``: (user, arm, first_round, rounds) arrays, user-major.

    ``starts[r]`` is the first round of assignment r, ``total`` = R the end of the last.
    """
    a = np.ascontiguousarray(assignments[:, lo:hi].T)  # (users, distinct): a user's arms over time
    change = np.ones(a.shape, dtype=bool)
    change[:, 1:] = a[:, 1:] != a[:, :-1]
    users, r = np.nonzero(change)  # row-major: by user, then time
    first = starts[r]
    end = np.empty_like(first)
    end[:-1] = first[1:]
    last = np.ones(len(users), dtype=bool)
    last[:-1] = users[1:] != users[:-1]
    end[last] = total
    return (users + lo).astype(np.int64), a[users, r].astype(np.int32), first, end - first


def _write_file(path: Path, result: Decomposition, schema, starts: np.ndarray, lo: int, hi: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    g = result.graph
    users, arms = pa.array(g.users, pa.string()), pa.array(g.arms, pa.string())
    step = max(1, _BLOCK // max(1, result.n_distinct))
    with pq.ParquetWriter(path, schema) as writer:
        for b in range(lo, hi, step):
            u, a, first, rounds = schedule_rows(
                result.assignments, starts, result.total_assignments, b, min(b + step, hi)
            )
            writer.write_table(pa.table([users.take(u), arms.take(a), first, rounds], schema=schema))


def write_compact(
    result: Decomposition, path: str | os.PathLike, header: dict, users_per_part: int = USERS_PER_PART
) -> None:
    """Write ``result`` as a compact Parquet schedule (one file, or part files when :func:`is_directory_output`).

    ``header`` holds the summary fields (C, method, R, ...) stored in the key-value metadata. Written under a
    temporary name and renamed when complete; an error or interrupt (SIGTERM unwinds as an exception in the
    command line) removes the temporary file or directory. An existing target directory must be empty.
    """
    refuse_special(path, directory_ok=is_directory_output(path))
    m = result.multiplicities
    if result.total_assignments >= 2**63:
        raise InvalidInputError(
            f"R = {result.total_assignments} does not fit the int64 round columns of the "
            "Parquet form; write JSON instead"
        )
    starts = np.concatenate([[0], np.cumsum(m.astype(np.int64))[:-1]]).astype(np.int64)
    schema = schedule_schema(header)
    target = output_target(path)
    n = result.graph.n_users
    if not is_directory_output(path):
        with publish_file(target) as tmp:
            _write_file(tmp, result, schema, starts, 0, n)
        return
    tmpdir = tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with pending_output(tmpdir):
            for k, lo in enumerate(range(0, n, users_per_part)):
                part = Path(tmpdir) / f"part-{k:05d}.parquet"
                _write_file(part, result, schema, starts, lo, min(lo + users_per_part, n))
                os.chmod(part, 0o644 & ~umask())
            publish_dir(tmpdir, target)
    except BaseException:
        shutil.rmtree(tmpdir, ignore_errors=True)
        raise


@contextlib.contextmanager
def publish_file(target: Path) -> Iterator[Path]:
    """A temporary path beside ``target`` to write; when the block ends without error it gets the usual
    permissions (``mkstemp`` makes 0600) and is renamed to ``target``, else it is removed."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        with pending_output(tmp):
            yield Path(tmp)
            os.chmod(tmp, 0o644 & ~umask())
            os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise


def publish_dir(tmpdir: str | os.PathLike, target: Path) -> None:
    """Give a finished temporary part directory the usual permissions (``mkdtemp`` makes it 0700) and rename
    it to ``target``, which must be missing or an empty directory (checked before solving)."""
    os.chmod(tmpdir, 0o755 & ~umask())
    if target.is_dir():
        target.rmdir()  # a directory cannot be renamed over another
    os.replace(tmpdir, target)


def read_header(path: str | os.PathLike) -> dict[str, Any]:
    """The metadata of a compact decomposition (every part file must name the same C)."""
    metas = [read_metadata(open_parquet(p), p) for p in parquet_files(path)]
    Cs = {json.dumps(m.get("C")) for m in metas}
    if len(Cs) > 1:
        raise InvalidInputError(f"{path}: part files name different C ({', '.join(sorted(Cs))})")
    c_field(metas[0], f"{path}: metadata 'C'")
    return metas[0]


class _Index:
    """Graph names -> indices for the names of one batch's dictionary at a time.

    Files written by :func:`write_compact` hold the users in graph order, so a batch's dictionary is a run of
    the graph's names that starts where the previous one ended, one name before (a user whose rows straddle
    two batches), or where it started (a row group's dictionary again, grown): these are recognised by
    comparing lists. Other files are looked up in a dict, built on first need (about 60 bytes per name)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.cursor = self.start = 0
        self._lookup: dict[str, int] | None = None

    def codes(self, values: list[str]) -> np.ndarray:
        """Index of every value, -1 for a name the graph does not have."""
        if not values:
            return np.empty(0, np.int64)
        lo = next(
            (
                k
                for k in (self.cursor, self.cursor - 1, self.start)
                if 0 <= k < len(self.names) and self.names[k] == values[0]
            ),
            None,
        )
        if lo is None:
            lo = self.lookup.get(values[0], -1)
        if lo >= 0 and list(self.names[lo : lo + len(values)]) == values:
            codes = np.arange(lo, lo + len(values), dtype=np.int64)
            self.start, self.cursor = lo, lo + len(values)
        else:
            codes = np.array([self.lookup.get(v, -1) for v in values], dtype=np.int64)
        return codes

    @property
    def lookup(self) -> dict[str, int]:
        if self._lookup is None:
            self._lookup = {name: i for i, name in enumerate(self.names)}
        return self._lookup


def _ids_in(col, index: _Index, what: str, start: int, path) -> np.ndarray:
    """Indices of the ``user`` or ``arm`` values in the graph; an unknown or empty one is refused. Each
    distinct value of the batch is looked up once (the reader asks for dictionary-encoded columns)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    value_type = col.type.value_type if pa.types.is_dictionary(col.type) else col.type
    if not (pa.types.is_string(value_type) or pa.types.is_large_string(value_type) or pa.types.is_integer(value_type)):
        raise InvalidInputError(f"{path}: column {what!r} must hold strings or integers, got {value_type}")
    if col.null_count:
        k = int(np.argmax(pc.is_null(col).to_numpy(zero_copy_only=False)))
        raise InvalidInputError(f"{path}: row {start + k + 1} has no {what}")
    if not pa.types.is_dictionary(col.type):
        col = pc.dictionary_encode(col)
    idx = index.codes(col.dictionary.cast(pa.string()).to_pylist())[col.indices.to_numpy(zero_copy_only=False)]
    if (idx < 0).any():
        k = int(np.argmax(idx < 0))
        raise InvalidInputError(f"{path}: row {start + k + 1} names unknown {what} {col[k].as_py()!r:.60}")
    return idx


def _counts(col, what: str, start: int, path) -> np.ndarray:
    """An integer column as int64; a null, a non-integer type or a value beyond int64 is refused."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_integer(col.type):
        raise InvalidInputError(f"{path}: column {what!r} must hold integers, got {col.type}")
    if col.null_count:
        k = int(np.argmax(pc.is_null(col).to_numpy(zero_copy_only=False)))
        raise InvalidInputError(f"{path}: row {start + k + 1} has no {what}")
    values = col.to_numpy()
    if values.dtype == np.uint64 and (values > np.iinfo(np.int64).max).any():
        k = int(np.argmax(values > np.iinfo(np.int64).max))
        raise InvalidInputError(f"{path}: row {start + k + 1}: {what} {values[k]} does not fit a 64-bit integer")
    return values.astype(np.int64)


def _batches(
    files: list[Path], users: _Index, arms: _Index, progress: Callable[[int, int], None] | None
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """(user, arm, first_round, end) of every row, in record batches, checked for malformed values."""
    import pyarrow as pa

    users.cursor = users.start = arms.cursor = arms.start = 0
    pfs = [open_parquet(p, read_dictionary=["user", "arm"]) for p in files]
    total = sum(pf.metadata.num_rows for pf in pfs)
    done = 0
    for path, pf in zip(files, pfs, strict=True):
        missing = [c for c in COLUMNS if c not in pf.schema_arrow.names]
        if missing:
            raise InvalidInputError(
                f"{path}: no column {missing[0]!r}; a compact decomposition has columns {', '.join(COLUMNS)}"
            )
        start = 0
        try:
            for batch in pf.iter_batches(batch_size=_BATCH, columns=list(COLUMNS)):
                u = _ids_in(batch.column("user"), users, "user", start, path)
                a = _ids_in(batch.column("arm"), arms, "arm", start, path)
                f = _counts(batch.column("first_round"), "first_round", start, path)
                n = _counts(batch.column("rounds"), "rounds", start, path)
                bad = (f < 0) | (n < 1)
                if bad.any():
                    k = int(np.argmax(bad))
                    raise InvalidInputError(
                        f"{path}: row {start + k + 1} has first_round {f[k]} and rounds {n[k]}; "
                        "need first_round >= 0 and rounds >= 1"
                    )
                over = f > np.iinfo(np.int64).max - n
                if over.any():
                    k = int(np.argmax(over))
                    raise InvalidInputError(
                        f"{path}: row {start + k + 1}: first_round + rounds does not fit a 64-bit integer"
                    )
                yield u, a, f, f + n
                start += len(u)
                done += len(u)
                if progress is not None:
                    progress(done, total)
        except pa.ArrowException as exc:
            raise InvalidInputError(f"{path}: not a readable Parquet file ({first_line(exc)})") from None


class _Edges:
    """The graph's edges as sorted int64 keys ``user * K + arm`` (its edges are row-major, so already in
    order): the verifier finds a row's edge by binary search, with no users x arms matrix."""

    def __init__(self, graph: DemandGraph) -> None:
        self.n_arms = graph.n_arms
        self.keys = graph.edge_users.astype(np.int64) * graph.n_arms + graph.edge_arms

    def index(self, u: np.ndarray, a: np.ndarray) -> np.ndarray:
        """The edge of every row (user ``u``, arm ``a``), -1 for a pair off the support."""
        if not len(self.keys):
            return np.full(len(u), -1, dtype=np.int64)
        want = np.asarray(u, dtype=np.int64) * self.n_arms + a
        at = np.minimum(np.searchsorted(self.keys, want), len(self.keys) - 1)
        return np.where(self.keys[at] == want, at, -1)


class _FirstPass:
    """Pass 1 of :func:`verify_compact`: the tiling of each user's rows, placements off the support, and
    the occupancy of every arm over time (as +1/-1 events summed per (arm, round))."""

    def __init__(self, graph: DemandGraph, path, edges: _Edges) -> None:
        self.graph, self.path, self.edges = graph, path, edges
        self.seen = np.zeros(graph.n_users, dtype=bool)
        self.user_end = np.zeros(graph.n_users, dtype=np.int64)
        self.problems: list[str] = []
        self.n_problems = self.n_off = self.rows = 0
        self.off_support: list[tuple[int, str, str]] = []
        self.events: tuple[np.ndarray, np.ndarray, np.ndarray] = (
            np.empty(0, np.int64),
            np.empty(0, np.int64),
            np.empty(0, np.int64),
        )
        self.carry = (-1, 0)  # user and end of the last row so far: a user's rows may straddle batches

    def problem(self, lines, count: int) -> None:
        self.n_problems += count
        self.problems.extend(itertools.islice(lines, max(0, _LISTED - len(self.problems))))

    def add(self, u: np.ndarray, a: np.ndarray, f: np.ndarray, e: np.ndarray) -> None:
        g = self.graph
        self.rows += len(u)
        prev_u = np.concatenate([[self.carry[0]], u[:-1]])
        prev_e = np.concatenate([[self.carry[1]], e[:-1]])
        same = u == prev_u
        new = np.flatnonzero(~same)
        again = self.seen[u[new]] | _repeated(u[new])
        if again.any():
            k = new[int(np.argmax(again))]
            raise InvalidInputError(
                f"{self.path}: the rows of user {g.users[u[k]]!r} are not consecutive; a "
                "compact decomposition lists each user's rows together"
            )
        self.seen[u[new]] = True
        expect = np.where(same, prev_e, 0)  # a user's first row starts at round 0, the others where it left
        wrong = np.flatnonzero(f != expect)
        self.problem(
            (
                f"user {g.users[u[k]]!r}: "
                + (
                    f"rounds {f[k]}..{expect[k] - 1} placed twice (overlapping rows)"
                    if f[k] < expect[k]
                    else f"not placed in rounds {expect[k]}..{f[k] - 1}"
                )
                for k in wrong
            ),
            len(wrong),
        )
        last = np.ones(len(u), dtype=bool)
        last[:-1] = u[1:] != u[:-1]
        self.user_end[u[last]] = e[last]
        self.carry = (int(u[-1]), int(e[-1]))
        bad = np.flatnonzero(self.edges.index(u, a) < 0)
        self.n_off += len(bad)
        self.off_support.extend(
            (int(f[k]), g.users[u[k]], g.arms[a[k]]) for k in bad[: max(0, _LISTED - len(self.off_support))]
        )
        ones = np.ones(len(a), np.int64)
        self.events = _merge_events(
            np.concatenate([self.events[0], a, a]),
            np.concatenate([self.events[1], f, e]),
            np.concatenate([self.events[2], ones, -ones]),
        )

    def finish(self) -> int:
        """R, after noting users without rows or ending before R."""
        g = self.graph
        R = int(self.user_end.max()) if self.seen.any() else 0
        missing = np.flatnonzero(~self.seen)
        self.problem(
            (f"user {g.users[i]!r} has no rows (every user is placed in every round)" for i in missing), len(missing)
        )
        early = np.flatnonzero(self.seen & (self.user_end < R))
        self.problem(
            (f"user {g.users[i]!r}: not placed in rounds {self.user_end[i]}..{R - 1}" for i in early), len(early)
        )
        return R


def _merge_events(arm: np.ndarray, time: np.ndarray, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sum ``delta`` over equal (arm, time): a hash aggregation (pyarrow), linear in the rows of a batch;
    the result has one entry per (arm, time) and is unsorted."""
    import pyarrow as pa

    table = pa.table({"a": arm, "t": time, "d": delta}).group_by(["a", "t"]).aggregate([("d", "sum")])
    return table.column("a").to_numpy(), table.column("t").to_numpy(), table.column("d_sum").to_numpy()


class _Occupancy:
    """Informative rounds of any row, from the arm occupancy over time: at most arms x (distinct + 1)
    events, whatever the number of users."""

    def __init__(self, events: tuple[np.ndarray, ...], C: int, threshold: np.ndarray | None = None) -> None:
        order = np.lexsort((events[1], events[0]))  # by arm, then time
        arm, time, delta = (x[order] for x in events)
        need = C + 1 if threshold is None else threshold[arm]  # users a group of the arm needs to count
        count = np.cumsum(delta)  # users on the arm from each event on: each arm's deltas sum to 0
        seg = np.zeros(len(time), dtype=np.int64)
        seg[:-1] = np.where(arm[1:] == arm[:-1], time[1:] - time[:-1], 0)
        # good rounds before each event; the int64 running sum may wrap across arms, but the difference of
        # two values of one arm is at most R < 2^63, so modular arithmetic gives it exactly
        with np.errstate(over="ignore"):
            self.good = np.concatenate([[0], np.cumsum(np.where(count >= need, seg, 0))])[:-1]
        self.times = np.unique(time)
        self.keys = self._keys(arm, time)

    def _keys(self, arm: np.ndarray, time: np.ndarray) -> np.ndarray:
        """One sortable int64 key per (arm, time): arm-major, time by its rank among all event times."""
        return arm * len(self.times) + np.searchsorted(self.times, time)

    @property
    def n_blocks(self) -> int:
        """Blocks of rounds between consecutive run boundaries: the distinct assignments of the schedule."""
        return max(len(self.times) - 1, 0)

    def informative(self, a: np.ndarray, f: np.ndarray, e: np.ndarray) -> np.ndarray:
        """Rounds of ``[f, e)`` in which arm ``a`` holds at least C+1 users, capped at :data:`_SATURATE`."""
        lo, hi = np.searchsorted(self.keys, self._keys(a, f)), np.searchsorted(self.keys, self._keys(a, e))
        with np.errstate(over="ignore"):
            return np.minimum(self.good[hi] - self.good[lo], _SATURATE)


def _whole_users(batches: Iterator[tuple[np.ndarray, ...]]) -> Iterator[tuple[np.ndarray, ...]]:
    """The rows of ``batches`` regrouped so that no user's rows are split (the last user of a batch is held
    back until the next; pass 1 has checked that each user's rows are consecutive)."""
    held: tuple[np.ndarray, ...] | None = None
    for batch in batches:
        if held is not None:
            batch = tuple(np.concatenate([h, b]) for h, b in zip(held, batch, strict=True))
        u = batch[0]
        cut = int(np.flatnonzero(np.concatenate([[True], u[1:] != u[:-1]]))[-1])
        held = tuple(x[cut:] for x in batch)
        yield tuple(x[:cut] for x in batch)
    if held is not None:
        yield held


def verify_compact(
    graph: DemandGraph,
    C: int,
    path: str | os.PathLike,
    *,
    progress: Callable[[int, int], None] | None = None,
    best_effort: bool = False,
    absence: float | None = None,
    confidence: float | None = None,
) -> VerificationReport:
    """Check a compact decomposition exactly, streaming it twice in record batches.

    Pass 1 checks every row (known user and arm, ``first_round >= 0``, ``rounds >= 1``), that each user's
    rows are consecutive and tile ``[0, R)`` without overlap or gap (R = the largest end), notes placements
    off a user's support, and sums the arm occupancy over time. Pass 2 counts each row's informative rounds
    (those in which its arm holds at least C+1 users) and compares every pair's total with ``ceil(w_ij)``.
    Counts are int64 (R < 2^63 by the columns' type); a pair's total is exact up to 2^53, above every demand.

    ``progress(rows_done, rows_total)`` is called after each batch of both passes (rows count twice).
    ``best_effort`` does not require the pairs on arms wanted by at most C users, and lists them, as in
    :func:`anondecomp.verify`. Malformed files raise :class:`InvalidInputError`; schedule problems make the
    report invalid. With ``absence`` (one probability for every user; read from the file's metadata by the
    command line) a round counts only when its arm holds the robust group size, or its whole support for an
    arm at risk (:mod:`anondecomp.absence`); one absence per user needs the JSON form, whose groups are named.
    """
    if C < 1:
        raise InvalidInputError(f"C must be at least 1, got {C}")
    threshold, robust = _thresholds(graph, C, absence, confidence)
    files = parquet_files(path)
    indexes = _Index(graph.users), _Index(graph.arms)  # shared by both passes
    edges = _Edges(graph)
    first = _FirstPass(graph, path, edges)
    for batch in _batches(files, *indexes, None if progress is None else (lambda d, t: progress(d, 2 * t))):
        first.add(*batch)
    R = first.finish()
    occupancy = _Occupancy(first.events, C, threshold)
    # the demand per edge (graph.edge_required), never as a users x arms matrix
    required, uncoverable = (
        drop_uncoverable(graph, C, graph.edge_required) if best_effort else (graph.edge_required, np.empty((0, 2), int))
    )
    deficits: list[tuple[str, str, int, int]] = []
    n_short = 0
    second = None if progress is None else (lambda d, t: progress(first.rows + d, 2 * t))
    for u, a, f, e in _whole_users(_batches(files, *indexes, second)):
        n_short += _pair_deficits(graph, required, edges.index(u, a), u, occupancy.informative(a, f, e), deficits)
    return VerificationReport(
        valid=not (n_short or first.n_off or first.n_problems),
        total_assignments=R,
        lower_bound=graph.lower_bound,
        n_distinct=occupancy.n_blocks,
        deficits=deficits,
        off_support=first.off_support,
        problems=first.problems,
        n_short=n_short,
        n_off_support=first.n_off,
        n_problems=first.n_problems,
        unit="round",
        best_effort=best_effort,
        **uncoverable_fields(graph, uncoverable),
        **robust,
    )


def _thresholds(graph: DemandGraph, C: int, absence, confidence) -> tuple[np.ndarray | None, dict]:
    """The users a group of each arm needs to count, and the report's absence fields: ``None`` and none without
    absence; with one absence for every user, the robust size or the arm's whole support."""
    from anondecomp.absence import describe_absence, is_absent, presence

    if not is_absent(absence):
        return None, {}
    if np.ndim(absence) != 0 and len(np.unique(np.asarray(absence))) > 1:
        raise InvalidInputError(
            "a compact (Parquet) schedule names no groups: one absence per user is verified on a JSON "
            "decomposition (write -o OUT.json)"
        )
    pres = presence(graph, C, absence, confidence)
    fields = {
        "absence": describe_absence(pres.given),
        "confidence": pres.confidence,
        "robust_size": pres.size,
        "at_risk": graph.arm_names(np.flatnonzero(pres.at_risk)),
        "n_fragile": -1,  # a schedule names no groups
    }
    return pres.threshold.astype(np.int64), fields


def _repeated(x: np.ndarray) -> np.ndarray:
    """Mask of the entries of ``x`` equal to an earlier entry."""
    _, first = np.unique(x, return_index=True)
    mask = np.ones(len(x), dtype=bool)
    mask[first] = False
    return mask


def _pair_deficits(
    graph: DemandGraph, required: np.ndarray, edge: np.ndarray, u: np.ndarray, info: np.ndarray, deficits: list
) -> int:
    """Compare the informative rounds ``info`` of whole users' rows with their demands; appends the first
    deficits (user, arm, required, informative) to ``deficits`` (by user, then arm) and returns how many pairs
    are short.

    ``required`` is the demand per edge of ``graph`` (as ``graph.edge_required``), ``edge`` the edge of every
    row (``-1`` off the support, where nothing is required; those rows are reported by pass 1) and ``u`` its
    user. Every edge of the rows' users is compared, so a pair with demand but no row is short too."""
    if not len(u):
        return 0
    people = np.unique(u)
    lo, hi = graph.indptr[people], graph.indptr[people + 1]
    n = hi - lo
    # the edges of these users, increasing (users sorted, each user's edges consecutive)
    mine = np.repeat(lo - np.concatenate([[0], np.cumsum(n)[:-1]]), n) + np.arange(int(n.sum()))
    on = edge >= 0
    # float sums of integers are exact below 2^53 and, rounding being monotone, stay >= 2^53 above it:
    # every comparison with a demand (at most 2^53) is exact
    got = np.bincount(np.searchsorted(mine, edge[on]), weights=info[on].astype(np.float64), minlength=len(mine))
    got = np.minimum(got, _SATURATE).astype(np.int64)
    need = required[mine]
    short = np.flatnonzero(got < need)
    room = max(0, _LISTED - len(deficits))
    deficits.extend(
        (graph.users[graph.edge_users[mine[k]]], graph.arms[graph.edge_arms[mine[k]]], int(need[k]), int(got[k]))
        for k in short[:room]
    )
    return len(short)
