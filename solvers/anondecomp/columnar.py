"""Demand graphs as tables: Parquet or CSV edge tables and batched tables (schemas in docs/formats.md).

* **edge table**: columns ``user``, ``arm``, ``weight`` -- one row per (user, arm) pair with its weight; a
  row of weight 0 puts the arm in the user's support without demand (the user may pad its groups);
* **batched table**: columns ``user``, ``arm`` (no ``weight``) -- the rows give the active sets A_i, and the
  total demand D comes from the caller (``--demand D``) or from the key ``demand`` of the Parquet file's
  key-value metadata; w_ij = D / |A_i|.

Ids are strings or integers (integers are read as their decimal text, as in JSON). Everything is vectorised:
ids are factorised with :func:`pyarrow.compute.dictionary_encode` (users and arms numbered in order of first
appearance) into int32 indices, so a table of 10^7 rows is read without a Python loop over rows. Every bad
table raises :class:`~anondecomp.errors.InvalidInputError` with one line naming the file, column and row.
Row numbers count data rows from 1 (a CSV file's header is not a row).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from anondecomp._formats import (
    ZERO_WEIGHT,
    DuplicateKeyError,
    c_field,
    finite_number,
    first_line,
    no_nulls,
    unique_keys,
)
from anondecomp.errors import InvalidInputError
from anondecomp.graph import LIMIT_TEXT, MAX_DEMAND, DemandGraph, describe

PARQUET_MAGIC = b"PAR1"
PARQUET_SUFFIXES = (".parquet", ".pq")
CSV_SUFFIXES = (".csv",)


def file_kind(path: str | os.PathLike) -> str:
    """``"parquet"``, ``"csv"`` or ``"json"``: by extension, else by content (Parquet's magic bytes, a JSON
    document's opening brace); a directory not named ``*.json`` is a Parquet dataset of part files."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".json":
        return "json"
    if suffix in PARQUET_SUFFIXES or p.is_dir():
        return "parquet"
    if suffix in CSV_SUFFIXES:
        return "csv"
    try:
        with open(p, "rb") as fh:
            head = fh.read(512)
    except OSError:
        return "json"  # the JSON reader reports the missing or unreadable file
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    first = head.lstrip()[:1]
    return "json" if first in (b"{", b"[", b"") else "csv"


def parquet_files(path: str | os.PathLike) -> list[Path]:
    """The files of a Parquet dataset: ``path`` itself, or a directory's ``*.parquet`` part files in natural
    name order (``part.2`` before ``part.10``, as Dask numbers them)."""
    p = Path(path)
    if not p.is_dir():
        return [p]
    parts = sorted(
        (q for q in p.iterdir() if q.suffix.lower() in PARQUET_SUFFIXES and not q.name.startswith(".")),
        key=lambda q: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", q.name)],
    )
    if not parts:
        raise InvalidInputError(f"{path}: cannot read file (a directory holding no .parquet part files)")
    return parts


def open_parquet(path: Path, **options):
    """A :class:`pyarrow.parquet.ParquetFile` (``options`` passed on); a missing or malformed file raises
    :class:`InvalidInputError`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path, **options)
    except FileNotFoundError:
        raise InvalidInputError(f"{path}: no such file") from None
    except (pa.ArrowException, OSError) as exc:
        raise InvalidInputError(f"{path}: not a readable Parquet file ({first_line(exc)})") from None


def read_metadata(pf, path) -> dict[str, Any]:
    """A Parquet file's key-value metadata, each value parsed as JSON (keys written by other tools are kept
    as text when they are not JSON). A JSON value holding an object that names a key twice (the last would
    win) is refused, naming the key. (A metadata key written twice by another tool reaches us once: pyarrow
    reads the key-value metadata into a dict.)"""
    raw = pf.schema_arrow.metadata or {}
    out: dict[str, Any] = {}
    for key, value in raw.items():
        k = key.decode("utf-8", "replace")
        try:
            out[k] = json.loads(value, object_pairs_hook=unique_keys)
        except DuplicateKeyError as exc:
            raise InvalidInputError(f"{path}: metadata {k!r}: {exc}") from None
        except (ValueError, UnicodeDecodeError):
            out[k] = value.decode("utf-8", "replace")
    return out


def _read_table(path: str | os.PathLike, kind: str):
    """(table, metadata dict) of a Parquet dataset or a CSV file."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if kind == "csv":
        # ids stay text as written ("007" is not 7); weight's type is inferred (int64 or double)
        opts = pacsv.ConvertOptions(column_types={"user": pa.string(), "arm": pa.string()})
        try:
            return pacsv.read_csv(path, convert_options=opts), {}
        except FileNotFoundError:
            raise InvalidInputError(f"{path}: no such file") from None
        except (pa.ArrowException, OSError) as exc:
            raise InvalidInputError(f"{path}: not a readable CSV table ({first_line(exc)})") from None
    tables = []
    meta: dict[str, Any] = {}
    for part in parquet_files(path):
        pf = open_parquet(part)
        meta = meta or read_metadata(pf, part)
        try:
            tables.append(pf.read())
        except (pa.ArrowException, OSError) as exc:
            raise InvalidInputError(f"{part}: not a readable Parquet file ({first_line(exc)})") from None
    try:
        table = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
    except pa.ArrowException as exc:
        raise InvalidInputError(f"{path}: part files have different columns ({first_line(exc)})") from None
    return table, meta


def _ids(table, name: str, path) -> tuple[np.ndarray, list[str]]:
    """Factorise id column ``name``: (int32 codes, names in order of first appearance)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = table.column(name)
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    if not (pa.types.is_integer(col.type) or pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        raise InvalidInputError(f"{path}: column {name!r} must hold strings or integers, got {col.type}")
    no_nulls(col, name, path)
    if not pa.types.is_string(col.type):
        col = col.cast(pa.string())
    encoded = pc.dictionary_encode(col).combine_chunks()
    return encoded.indices.to_numpy().astype(np.int32, copy=False), encoded.dictionary.to_pylist()


def _weights(table, path, users: list[str], arms: list[str], u: np.ndarray, a: np.ndarray) -> np.ndarray:
    """The ``weight`` column as float64, after checking every value (non-negative, finite, at most 2^53) in the
    column's own type, so an integer beyond 2^53 is refused before a float could round it."""
    import pyarrow as pa

    col = table.column("weight")
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
        raise InvalidInputError(f"{path}: column 'weight' must hold numbers, got {col.type}")
    no_nulls(col, "weight", path)
    values = col.to_numpy()
    if np.issubdtype(values.dtype, np.floating):
        bad = ~np.isfinite(values) | (values < 0) | (values > MAX_DEMAND)
    else:  # compared as integers: uint64 and int64 both hold values beyond 2^53 exactly
        bad = (values < 0) | (values > MAX_DEMAND)
    if bad.any():
        k = int(np.argmax(bad))
        v = values[k]
        what = f"{path}: weight of user {users[u[k]]!r} on arm {arms[a[k]]!r} (row {k + 1})"
        if v > MAX_DEMAND and np.isfinite(v):
            raise InvalidInputError(f"{what} is {describe(float(v))}; the limit is {LIMIT_TEXT}")
        raise InvalidInputError(f"{what} is {v}; weights must be positive and finite {ZERO_WEIGHT}")
    return values.astype(np.float64)


def _check_pairs(u: np.ndarray, a: np.ndarray, n_arms: int, users: list[str], arms: list[str], path) -> np.ndarray:
    """Refuse a (user, arm) pair given twice, naming it (as the JSON reader does; summing would hide it).

    Sorts the int64 keys ``u * n_arms + a`` (no users x arms matrix) and returns that stable order, which lists
    the rows by user, then arm: the caller builds the graph's row-major edges from it."""
    key = u.astype(np.int64) * n_arms + a
    order = np.argsort(key, kind="stable")
    key = key[order]
    dup = np.flatnonzero(key[1:] == key[:-1])
    if len(dup):
        k = int(order[dup[0] + 1])
        raise InvalidInputError(
            f"{path}: row {k + 1} gives user {users[u[k]]!r} and arm {arms[a[k]]!r} again "
            "(duplicate pair); give one row per pair"
        )
    return order


def _csr(u: np.ndarray, a: np.ndarray, values: np.ndarray, order: np.ndarray, shape: tuple[int, int]):
    """A scipy.sparse CSR array of ``values`` at the distinct pairs ``(u, a)``, ``order`` their row-major
    order (from :func:`_check_pairs`); an explicit zero stays stored."""
    from scipy.sparse import csr_array

    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(u, minlength=shape[0]), out=indptr[1:])
    return csr_array((values[order], a[order], indptr), shape=shape)


def table_demand(meta: dict, path, demand: int | float | None) -> int | float:
    """The total demand D of a batched table: ``demand`` when given, else the metadata's ``demand``; either must
    be a positive number of at most 2^53 (checked here: the sharded path never builds a :class:`DemandGraph`)."""
    what = "demand D"
    if demand is None:
        if "demand" not in meta:
            raise InvalidInputError(
                f"{path} is a batched table (columns user, arm; no 'weight'): give its total "
                "demand with demand=D or a 'demand' key in the Parquet metadata"
            )
        demand, what = meta["demand"], f"{path}: metadata 'demand'"
    demand = finite_number(demand.item() if isinstance(demand, np.generic) else demand, what)
    if not demand > 0:
        raise InvalidInputError(f"{what} must be positive, got {demand!r}")
    return demand


def read_table_graph(
    path: str | os.PathLike, kind: str, demand: int | float | None = None
) -> tuple[DemandGraph, int | None]:
    """Read an edge table or a batched table (``kind`` ``"parquet"`` or ``"csv"``).

    Parameters
    ----------
    path : a Parquet file, a directory of Parquet part files, or a CSV file.
    kind : ``"parquet"`` or ``"csv"`` (see :func:`file_kind`).
    demand : the total demand D of a batched table; wins over the file's ``demand`` metadata; refused for an
        edge table (its weights are the demand).

    Returns
    -------
    The graph and the ``C`` of the file's metadata (``None`` when absent; CSV files have none).
    """
    table, meta = _read_table(path, kind)
    for name in ("user", "arm"):
        if name not in table.column_names:
            raise InvalidInputError(
                f"{path}: no column {name!r} (columns: {', '.join(table.column_names) or 'none'}"
                "); a graph table needs 'user', 'arm' and, for an edge table, 'weight'"
            )
    if table.num_rows == 0:
        raise InvalidInputError(f"{path}: the table has no rows")
    C = c_field(meta, f"{path}: metadata 'C'")
    u, users = _ids(table, "user", path)
    a, arms = _ids(table, "arm", path)
    if "weight" in table.column_names:
        if demand is not None:
            raise InvalidInputError(
                f"{path} has a 'weight' column (an edge table): its weights are the demand; "
                "demand=D is only for a batched table (columns user, arm)"
            )
        w = _weights(table, path, users, arms, u, a)
        del table
        _release_arrow()
        order = _check_pairs(u, a, len(arms), users, arms, path)
        shape = (len(users), len(arms))
        # sparse throughout: memory in the rows, never users x arms. A row of weight 0 is support without
        # demand; without one, the support is the demand (as before)
        support = _csr(u, a, np.ones(len(u), dtype=bool), order, shape) if (w == 0).any() else None
        weights = _csr(u, a, w, order, shape)
        del u, a, w, order  # only the CSR arrays are left while the graph is built
        return DemandGraph.from_weights(weights, users, arms, support=support), C
    demand = table_demand(meta, path, demand)
    del table
    _release_arrow()
    order = _check_pairs(u, a, len(arms), users, arms, path)
    active = _csr(u, a, np.ones(len(u), dtype=bool), order, (len(users), len(arms)))
    del u, a, order
    return DemandGraph.from_batched(demand, active, users, arms), C


def _release_arrow() -> None:
    """Return Arrow's unused pages once the table is dropped (its allocator keeps them otherwise), so that the
    graph is built in the memory the table held (the id codes keep their own buffers)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def table_columns(path: str | os.PathLike) -> list[str]:
    """The column names of a Parquet or CSV table (its schema, or the CSV header; nothing else is read), and no
    columns for a JSON document or a file that cannot be read (the reader then says why)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    kind = file_kind(path)
    try:
        if kind == "parquet":
            return list(open_parquet(parquet_files(path)[0]).schema_arrow.names)
        if kind == "csv":
            with pacsv.open_csv(path) as reader:
                return list(reader.schema.names)
    except (InvalidInputError, pa.ArrowException, OSError):
        return []
    return []


def _numbers(table, name: str, path) -> np.ndarray:
    """A numeric column (integers or floats; no nulls) as a numpy array."""
    import pyarrow as pa

    col = table.column(name)
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
        raise InvalidInputError(f"{path}: column {name!r} must hold numbers, got {col.type}")
    no_nulls(col, name, path)
    return col.to_numpy()


def read_absence(path: str | os.PathLike, graph: DemandGraph) -> np.ndarray | None:
    """The ``absence`` column of a graph table (docs/formats.md): (N,) float64, each user's probability in
    [0, 1) of missing a block, or ``None`` when the table has no such column (a JSON graph neither).

    Every row of a user must give the same value; the users are the graph's (read from the same table), in
    its order. Refused in one line naming the file, the user or the row: a value outside [0, 1), NaN, empty,
    not a number, or two values for one user."""
    kind = file_kind(path)
    if kind == "json" or "absence" not in table_columns(path):
        return None
    table = _read_columns(path, kind, ["user", "absence"])
    u, users = _ids(table, "user", path)
    values = _numbers(table, "absence", path).astype(np.float64)
    bad = ~np.isfinite(values) | (values < 0) | (values >= 1)
    if bad.any():
        k = int(np.argmax(bad))
        raise InvalidInputError(
            f"{path}: absence of user {users[u[k]]!r} (row {k + 1}) is {values[k]}; it must be a probability in [0, 1)"
        )
    if tuple(users) != graph.users:
        raise InvalidInputError(f"{path}: the absence column's users are not the graph's")
    return _one_per_key(values, u, users, path, "user", "absence")


def read_capacity(path: str | os.PathLike, graph: DemandGraph) -> np.ndarray | None:
    """The ``capacity`` column of a graph table (docs/formats.md): (K,) int64, each arm's largest number of
    users in one assignment, or ``None`` when the table has no such column (a JSON graph neither).

    Every row of an arm must give the same value. Refused in one line naming the file, the arm or the row: a
    value that is not a whole number >= 1, empty, or two values for one arm."""
    kind = file_kind(path)
    if kind == "json" or "capacity" not in table_columns(path):
        return None
    table = _read_columns(path, kind, ["arm", "capacity"])
    arms = _graph_codes(table, "arm", graph.arms, path)
    values = _numbers(table, "capacity", path).astype(np.float64)
    bad = ~np.isfinite(values) | (values < 1) | (values != np.floor(values)) | (values > 2.0**62)
    if bad.any():
        k = int(np.argmax(bad))
        raise InvalidInputError(
            f"{path}: capacity of arm {graph.arms[arms[k]]!r} (row {k + 1}) is {values[k]:g}; it must be a whole "
            "number of users >= 1"
        )
    return _one_per_key(values, arms, graph.arms, path, "arm", "capacity").astype(np.int64)


def _one_per_key(values: np.ndarray, keys: np.ndarray, names, path, kind: str, field: str) -> np.ndarray:
    """(len(names),) the one value each key gives on all its rows; two values for one key are refused in one
    line naming it."""
    lo, hi = np.full(len(names), np.inf), np.full(len(names), -np.inf)
    np.minimum.at(lo, keys, values)
    np.maximum.at(hi, keys, values)
    if (lo != hi).any():
        k = int(np.argmax(lo != hi))
        raise InvalidInputError(
            f"{path}: {kind} {names[k]!r} has {field} {lo[k]:g} and {hi[k]:g}; give one value per {kind} (on every row)"
        )
    return lo


def _read_columns(path: str | os.PathLike, kind: str, columns: list[str]):
    """Only ``columns`` of a Parquet dataset or CSV file (ids as text)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if kind == "csv":
        opts = pacsv.ConvertOptions(column_types={"user": pa.string(), "arm": pa.string()}, include_columns=columns)
        try:
            return pacsv.read_csv(path, convert_options=opts)
        except (pa.ArrowException, OSError) as exc:
            raise InvalidInputError(f"{path}: not a readable CSV table ({first_line(exc)})") from None
    tables = []
    for part in parquet_files(path):
        try:
            tables.append(open_parquet(part).read(columns=columns))
        except (pa.ArrowException, OSError) as exc:
            raise InvalidInputError(f"{path}: not a readable Parquet file ({first_line(exc)})") from None
    try:
        return pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
    except pa.ArrowException as exc:
        raise InvalidInputError(f"{path}: part files have different columns ({first_line(exc)})") from None


def _graph_codes(table, name: str, names: tuple[str, ...], path) -> np.ndarray:
    """Each row's index of column ``name`` (users or arms) among the graph's ``names``; an unknown one is
    refused, naming it and its row."""
    codes, found = _ids(table, name, path)
    index = {x: k for k, x in enumerate(names)}
    mapped = np.array([index.get(x, -1) for x in found], dtype=np.int64)
    if (mapped < 0).any():
        k = int(np.argmax(mapped < 0))
        row = int(np.argmax(codes == k)) + 1
        raise InvalidInputError(f"{path}: row {row} names {name} {found[k]!r}, which is not in the graph")
    return mapped[codes]


def read_received(path: str | os.PathLike, graph: DemandGraph):
    """A RECEIVED table (docs/formats.md): columns ``user``, ``arm``, ``count``, the informative samples each
    (user, arm) pair has received so far, CSV or Parquet; a pair without a row has received none.

    Returns
    -------
    scipy.sparse.csr_array
        (N, K) int64 counts over the graph's users and arms (its stored entries are the table's rows).

    Raises
    ------
    InvalidInputError
        In one line naming the file, the row or the name: a JSON file, a missing column, an unknown user or
        arm, a pair given twice, a count that is empty, negative, fractional, not finite or not a number.
    """
    from scipy.sparse import csr_array

    kind = file_kind(path)
    if kind == "json":
        raise InvalidInputError(f"{path}: RECEIVED must be a CSV or Parquet table with columns user, arm, count")
    table, _ = _read_table(path, kind)
    missing = [c for c in ("user", "arm", "count") if c not in table.column_names]
    if missing:
        raise InvalidInputError(
            f"{path}: no column {missing[0]!r} (columns: {', '.join(table.column_names) or 'none'}); a RECEIVED "
            "table has columns user, arm, count"
        )
    if table.num_rows == 0:
        return csr_array(graph.shape, dtype=np.int64)
    u = _graph_codes(table, "user", graph.users, path)
    a = _graph_codes(table, "arm", graph.arms, path)
    counts = _numbers(table, "count", path)
    x = counts.astype(np.float64)
    bad = (~np.isfinite(x) | (x < 0) | (x != np.floor(x))) if counts.dtype.kind == "f" else (counts < 0)
    if bad.any():
        k = int(np.argmax(bad))
        raise InvalidInputError(
            f"{path}: count of user {graph.users[u[k]]!r} on arm {graph.arms[a[k]]!r} (row {k + 1}) is {counts[k]}; "
            "counts are whole numbers >= 0"
        )
    _check_pairs(u, a, graph.n_arms, list(graph.users), list(graph.arms), path)
    return csr_array((whole_counts(counts), (u, a)), shape=graph.shape)


def whole_counts(values) -> np.ndarray:
    """Whole, non-negative counts (any numeric dtype, or Python ints) as int64, those above every possible
    demand (2^53) clipped to it: they meet any demand, and no width of integer wraps around."""
    v = np.asarray(values)
    if v.dtype == object:
        return np.array([min(int(x), MAX_DEMAND) for x in v.ravel()], dtype=np.int64).reshape(v.shape)
    if v.dtype.kind == "u":
        return np.minimum(v, np.uint64(MAX_DEMAND)).astype(np.int64)
    if v.dtype.kind == "f":
        return np.minimum(v, float(MAX_DEMAND)).astype(np.int64)
    return v.astype(np.int64)
