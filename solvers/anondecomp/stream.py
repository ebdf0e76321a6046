"""Logs that stream: a timestamped interaction log cut into sliding windows, each window's demand graph
decomposed warm-started from the previous window's plan.

A log is a Parquet or CSV table of interactions (docs/formats.md, "Interaction logs"): ``user``, ``item`` (or
``arm``), ``timestamp`` (a timestamp, or seconds since the epoch) and optionally ``weight`` (default 1). It is
read once (:func:`read_log`), its ids factorised and its rows sorted by time once; window ``k`` holds the
interactions in ``[t0 + k * step, t0 + k * step + window)``, ``t0`` the first timestamp, found by binary search
on the sorted times. A window's demand graph sums the weights of each (user, item) pair and drops the items
with at most C users of positive weight (they can never be observed; they are counted), then the users left
with no item; it is held sparse, never users x items.

**Warm start** (:func:`stream_windows`). Each window after the first is decomposed warm-started from the previous
window's plan (:mod:`anondecomp.warm`): the plan's groups are found again among the users and items still
there, each pair keeps only as many of its places as its new demand needs, and what the kept groups leave short
is scheduled into the same rounds (users joining the groups already there, then new sessions), the calendar
growing past the lower bound only when no round can hold a group. Every group of the result holds C+1 users,
so each window's result is a C-anonymous decomposition of its graph (the tests check every window with
:func:`anondecomp.verify`).

**When the warm result is kept.** A warm result is kept when its R is within ``tolerance`` (default 2 %) of the
window's lower bound ``max_i sum_j ceil(w_ij)``: then it is within ``tolerance`` of every decomposition, the
default :func:`anondecomp.decompose` (*cold*) included. Two warm starts are tried in turn
(:data:`anondecomp.warm.KEEP_SHARES`); when neither is within ``tolerance``, the cold decomposition is
computed too and the shorter returned (``fallback=False`` keeps the best warm result instead), so with the
fallback a window's R is never above the cold one's or ``(1 + tolerance)`` times the bound. The first window,
and one after only windows with nothing to decompose, has no plan to start from and is cold.
"""

from __future__ import annotations

import csv
import datetime
import math
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from anondecomp import columnar
from anondecomp._formats import first_line, no_nulls, pending_output
from anondecomp.compact import publish_dir
from anondecomp.decompose import decompose
from anondecomp.errors import InvalidInputError, InvalidTypeError
from anondecomp.graph import LIMIT_TEXT, MAX_DEMAND, DemandGraph, describe
from anondecomp.io import check_writable, write_decomposition, write_graph_table
from anondecomp.result import Decomposition
from anondecomp.validation import RULES, check_bool, check_number, check_path, checked, show
from anondecomp.warm import CALENDAR_CELLS, KEEP_SHARES, Seats, merge_rounds, plan_seats, warm_decomposition

DEFAULT_TOLERANCE = 0.02
"""The warm result is kept when its R is at most ``(1 + tolerance)`` times the window's lower bound."""
MAX_WINDOWS = 100_000
"""Windows a log may be cut into (a window or step far too short for the log's span is refused)."""

_UNITS = {
    "s": 1.0,
    "sec": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "m": 60.0,
    "min": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
    "days": 86400.0,
    "w": 604800.0,
    "week": 604800.0,
    "weeks": 604800.0,
}
_DURATION = re.compile(r"^\s*((?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)
DURATION_HELP = "a duration such as 90s, 30min (or 30m), 1h, 1d, 1w, or a number of seconds"
SUMMARY_COLUMNS = (
    "window",
    "start",
    "end",
    "interactions",
    "users",
    "items",
    "dropped",
    "R",
    "bound",
    "seconds",
    "plan",
    "schedule",
)
"""The columns of ``summary.csv`` (:func:`write_stream`), one row per window."""


# -- durations and the checked boundary -------------------------------------------------------------------------


def parse_duration(value: Any, name: str = "window") -> float:
    """Seconds of a duration: a positive finite number of seconds, or text such as ``"90s"``, ``"30min"`` (or
    ``"30m"``), ``"1h"``, ``"1d"``, ``"1w"`` or ``"3600"``.

    Parameters
    ----------
    value : int, float or str
        The duration.
    name : str, optional
        How messages name it.

    Returns
    -------
    float
        The duration in seconds, > 0.

    Raises
    ------
    InvalidInputError
        In one line naming ``name``, for text that is not a duration, a unit not listed above, or a duration
        that is not positive and finite (a bool or another type: :class:`~anondecomp.InvalidTypeError`).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (the streams of
    interactions whose windows are decomposed here).

    Examples
    --------
    >>> parse_duration("1h"), parse_duration("30min"), parse_duration("1.5d"), parse_duration(90)
    (3600.0, 1800.0, 129600.0, 90.0)
    """
    if isinstance(value, str):
        match = _DURATION.match(value)
        unit = match.group(2).lower() if match else ""
        if match is None or unit not in _UNITS | {"": 1.0}:
            raise InvalidInputError(f"{name} must be {DURATION_HELP}; got {show(value)}")
        number = float(match.group(1)) * _UNITS.get(unit, 1.0)
    else:
        number = float(check_number(name, value))
    if not (math.isfinite(number) and number > 0):
        raise InvalidInputError(f"{name} must be a positive duration ({DURATION_HELP}); got {show(value)}")
    return number


def _log_rule(name: str, value: Any, bound: Mapping[str, Any]) -> Any:
    """An :class:`InteractionLog` or the path of a log table."""
    return value if isinstance(value, InteractionLog) else check_path(name, value)


def _step_rule(name: str, value: Any, bound: Mapping[str, Any]) -> float | None:
    """``None`` (the window) or a duration at most the window: a longer step would skip the interactions
    between two windows."""
    if value is None:
        return None
    step = parse_duration(value, name)
    window = bound.get("window")
    if isinstance(window, float) and step > window:
        raise InvalidInputError(
            f"step ({step:g} s) must be at most the window ({window:g} s): a longer step would leave the "
            "interactions between two windows out of every window"
        )
    return step


def _tolerance_rule(name: str, value: Any, bound: Mapping[str, Any]) -> float:
    """A finite number >= 0."""
    return float(check_number(name, value, lo=0.0))


def _progress_rule(name: str, value: Any, bound: Mapping[str, Any]) -> Any:
    """``None`` or a callable ``progress(done, total)``."""
    if value is not None and not callable(value):
        raise InvalidTypeError(f"{name} must be a callable progress(done, total) or None, got {show(value)}")
    return value


STREAM_RULES: dict[str, Callable[[str, Any, Mapping[str, Any]], Any]] = {
    "log": _log_rule,
    "C": RULES["C"],
    "window": lambda name, value, bound: parse_duration(value, name),
    "step": _step_rule,
    "tolerance": _tolerance_rule,
    "fallback": lambda name, value, bound: check_bool(name, value),
    "cold": lambda name, value, bound: check_bool(name, value),
    "outdir": lambda name, value, bound: check_path(name, value),
    "progress": _progress_rule,
}
"""The rules of the parameters of this module's functions (the checked boundary of
:mod:`anondecomp.validation`: each is applied before a function's body runs)."""


# -- reading a log ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class InteractionLog:
    """A timestamped interaction log, read by :func:`read_log`: its rows sorted by time, ids as codes.

    Parameters
    ----------
    path : str
        The file it was read from.
    times : numpy.ndarray
        (n,) float64 seconds since the epoch (1970-01-01 UTC), sorted.
    users, items : numpy.ndarray
        (n,) int64 codes of each row's user and item, in the order of ``times``.
    weights : numpy.ndarray
        (n,) float64 weight of each row (1 when the log has no ``weight`` column).
    user_names, item_names : numpy.ndarray
        The names of the codes (object arrays of str), in order of first appearance in the file.
    timestamps : bool
        Whether the ``timestamp`` column held timestamps (else numbers of seconds): window bounds are then
        written as ISO 8601 text.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> _ = path.write_text("user,item,timestamp\\nu1,a,60\\nu0,a,0\\nu1,b,30\\n")
    >>> log = read_log(path)
    >>> log.times.tolist(), [log.user_names[k] for k in log.users]
    ([0.0, 30.0, 60.0], ['u0', 'u1', 'u1'])
    """

    path: str
    times: np.ndarray
    users: np.ndarray
    items: np.ndarray
    weights: np.ndarray
    user_names: np.ndarray
    item_names: np.ndarray
    timestamps: bool

    def __post_init__(self) -> None:
        for name in ("times", "users", "items", "weights"):
            view = np.asarray(getattr(self, name)).view()
            view.flags.writeable = False
            object.__setattr__(self, name, view)

    @property
    def n_rows(self) -> int:
        return len(self.times)


def _log_table(path: str | os.PathLike, kind: str):
    """The log's table: a CSV file (ids read as text) or a Parquet file or dataset."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if kind == "csv":
        text = {name: pa.string() for name in ("user", "item", "arm")}
        try:
            return pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(column_types=text))
        except FileNotFoundError:
            raise InvalidInputError(f"{path}: no such file") from None
        except (pa.ArrowException, OSError) as exc:
            raise InvalidInputError(f"{path}: not a readable CSV table ({first_line(exc)})") from None
    tables = []
    for part in columnar.parquet_files(path):
        try:
            tables.append(columnar.open_parquet(part).read())
        except (pa.ArrowException, OSError) as exc:
            raise InvalidInputError(f"{part}: not a readable Parquet file ({first_line(exc)})") from None
    try:
        return pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
    except pa.ArrowException as exc:
        raise InvalidInputError(f"{path}: part files have different columns ({first_line(exc)})") from None


def _plain(col):
    """A column without dictionary encoding, as one array."""
    import pyarrow as pa

    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    return col.cast(col.type.value_type) if pa.types.is_dictionary(col.type) else col


def _codes(table, name: str, path) -> tuple[np.ndarray, np.ndarray]:
    """Factorise id column ``name``: (int64 codes, names in order of first appearance); integers are named by
    their decimal text, as in graph tables."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = _plain(table.column(name))
    if not (pa.types.is_integer(col.type) or pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        raise InvalidInputError(f"{path}: column {name!r} must hold strings or integers, got {col.type}")
    no_nulls(col, name, path)
    encoded = pc.dictionary_encode(col.cast(pa.string()))
    names = np.asarray(encoded.dictionary.to_pylist(), dtype=object)
    return encoded.indices.to_numpy().astype(np.int64), names


def _seconds(table, path) -> tuple[np.ndarray, bool]:
    """The ``timestamp`` column as float64 seconds since the epoch, and whether it held timestamps; refused in
    one line naming the row: an empty, NaN, infinite or negative value (before 1970), or another type."""
    import pyarrow as pa

    col = _plain(table.column("timestamp"))
    stamped = pa.types.is_timestamp(col.type) or pa.types.is_date(col.type)
    if not (stamped or pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
        raise InvalidInputError(
            f"{path}: column 'timestamp' must hold timestamps or numbers of seconds since the epoch, got {col.type}"
        )
    no_nulls(col, "timestamp", path)
    if pa.types.is_date(col.type):
        col = col.cast(pa.timestamp("s"))
    if stamped:
        unit = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}[col.type.unit]
        values = col.cast(pa.int64()).to_numpy().astype(np.float64) / unit
    else:
        values = col.to_numpy().astype(np.float64)
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        k = int(np.argmax(bad))
        what = "before 1970-01-01" if np.isfinite(values[k]) else "not finite"
        raise InvalidInputError(
            f"{path}: timestamp of row {k + 1} is {show(values[k])} ({what}); timestamps are times from "
            "1970-01-01 UTC on, or seconds since then"
        )
    return values, stamped


def _log_weights(table, path) -> np.ndarray:
    """The ``weight`` column as float64 (1 for every row without one), each value checked in the column's own
    type: non-negative, finite, at most 2^53; refused in one line naming the row."""
    import pyarrow as pa

    if "weight" not in table.column_names:
        return np.ones(table.num_rows)
    col = _plain(table.column("weight"))
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
        raise InvalidInputError(f"{path}: column 'weight' must hold numbers, got {col.type}")
    no_nulls(col, "weight", path)
    values = col.to_numpy()
    bad = (values < 0) | (values > MAX_DEMAND)
    if values.dtype.kind == "f":
        bad |= ~np.isfinite(values)
    if bad.any():
        k = int(np.argmax(bad))
        what = f"{path}: weight of row {k + 1} is"
        if values[k] > MAX_DEMAND and np.isfinite(values[k]):
            raise InvalidInputError(f"{what} {describe(float(values[k]))}; the limit is {LIMIT_TEXT}")
        raise InvalidInputError(f"{what} {show(values[k])}; weights are finite numbers >= 0")
    return values.astype(np.float64)


@checked()
def read_log(path: str | os.PathLike) -> InteractionLog:
    """Read a timestamped interaction log (Parquet or CSV; docs/formats.md, "Interaction logs").

    Columns: ``user`` and ``item`` (or ``arm``), strings or integers; ``timestamp``, a timestamp (any unit; one
    without a time zone is read as UTC), a date, or a number of seconds since the epoch; ``weight``, optional,
    numbers >= 0 (default 1). Other columns are ignored. The rows need not be sorted: they are sorted by time
    here, once (stably: rows of equal time keep their order).

    Parameters
    ----------
    path : str or os.PathLike
        A CSV file, a Parquet file or a directory of Parquet part files.

    Returns
    -------
    InteractionLog
        The rows in time order, ids as codes.

    Raises
    ------
    InvalidInputError
        In one line naming the file and the column (and the row for a bad value): a JSON file, a missing
        column, both ``item`` and ``arm``, a column of the wrong type, an empty id, a timestamp that is empty,
        NaN, infinite or before 1970, a weight that is negative, NaN, infinite or above 2^53, an empty table.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> _ = path.write_text("user,arm,timestamp,weight\\nu0,a,2024-01-01T00:00:00Z,2\\n")
    >>> log = read_log(path)
    >>> log.times.tolist(), log.weights.tolist(), log.timestamps
    ([1704067200.0], [2.0], True)
    """
    if not os.path.exists(path):
        raise InvalidInputError(f"{path}: no such file")
    kind = columnar.file_kind(path)
    if kind == "json":
        raise InvalidInputError(
            f"{path}: a log is a Parquet or CSV table with columns user, item (or arm), timestamp and optionally weight"
        )
    table = _log_table(path, kind)
    names = table.column_names
    if "item" in names and "arm" in names:
        raise InvalidInputError(f"{path}: columns 'item' and 'arm' both given; a log names its items in one of them")
    item = "arm" if "arm" in names else "item"
    for name in ("user", item, "timestamp"):
        if name not in names:
            also = " (or 'arm')" if name == "item" else ""
            raise InvalidInputError(
                f"{path}: no column {name!r}{also} (columns: {', '.join(names) or 'none'}); a log has columns user, "
                "item (or arm), timestamp and optionally weight"
            )
    if table.num_rows == 0:
        raise InvalidInputError(f"{path}: the log has no rows")
    users, user_names = _codes(table, "user", path)
    items, item_names = _codes(table, item, path)
    times, stamped = _seconds(table, path)
    weights = _log_weights(table, path)
    order = np.argsort(times, kind="stable")
    return InteractionLog(
        os.fspath(path), times[order], users[order], items[order], weights[order], user_names, item_names, stamped
    )


# -- windows ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class StreamWindow:
    """One window of a stream (:func:`stream_windows`): its interactions' graph and its decomposition.

    Parameters
    ----------
    index : int
        The window's number, from 0.
    start, end : float
        The window is ``[start, end)``, in seconds since the epoch.
    interactions : int
        Rows of the log in the window.
    users, items : int
        Users and items of the window's graph (after dropping thin items and the users left with none).
    dropped : int
        Items with at most C users of positive weight in the window, dropped.
    decomposition : Decomposition or None
        The window's decomposition (its ``graph`` is the window's graph; ``info["stream"]`` says ``"warm"`` or
        ``"cold"``, and ``info`` keeps ``warm_total`` and ``cold_total``, the R of each when computed), or
        ``None`` when no item is left.
    seconds : float
        Seconds spent on the window: building its graph and decomposing it.
    plan : str
        ``"warm"`` (the warm-started result), ``"cold"`` (the default :func:`~anondecomp.decompose`'s) or
        ``"empty"`` (nothing to decompose: R = 0).
    user_codes, item_codes : numpy.ndarray
        The codes (:class:`InteractionLog`) of the graph's users and items, in the graph's order.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> _ = path.write_text("user,item,timestamp\\n" + "".join(f"u{i},a,{i}\\n" for i in range(4)))
    >>> w = next(stream_windows(path, C=1, window=60))
    >>> w.users, w.items, w.R, w.bound, w.plan
    (4, 1, 1, 1, 'cold')
    """

    index: int
    start: float
    end: float
    interactions: int
    users: int
    items: int
    dropped: int
    decomposition: Decomposition | None
    seconds: float
    plan: str
    user_codes: np.ndarray
    item_codes: np.ndarray

    @property
    def R(self) -> int:
        """The decomposition's length (0 for an empty window)."""
        return 0 if self.decomposition is None else self.decomposition.total_assignments

    @property
    def bound(self) -> int:
        """The window's lower bound ``max_i sum_j ceil(w_ij)`` (0 for an empty window)."""
        return 0 if self.decomposition is None else self.decomposition.lower_bound


def window_bounds(times: np.ndarray, window: float, step: float) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) of every window of sorted ``times``: ``[t0 + k * step, t0 + k * step + window)`` for k = 0,
    1, ... up to the first window reaching past the last time (so every time is in a window when step <=
    window); refused above :data:`MAX_WINDOWS` windows."""
    t0, span = float(times[0]), float(times[-1] - times[0])
    count = max(0, math.floor((span - window) / step) + 1) + 1
    if count > MAX_WINDOWS:
        raise InvalidInputError(
            f"window {window:g} s and step {step:g} s cut the log's {span:g} s into {count} windows, above the "
            f"limit of {MAX_WINDOWS}; give a longer window or step"
        )
    starts = t0 + step * np.arange(count, dtype=np.float64)
    return starts, starts + window


def window_graph(
    log: InteractionLog, lo: int, hi: int, C: int
) -> tuple[DemandGraph | None, np.ndarray, np.ndarray, int]:
    """The demand graph of rows ``lo:hi`` of ``log``: summed weights per (user, item), items with at most C users
    of positive weight dropped, then users left with no item. Returns (graph or ``None`` when nothing is left,
    the user codes and item codes of its rows and columns, items dropped). Sparse throughout."""
    from scipy.sparse import csr_array

    n_items = max(len(log.item_names), 1)
    key = log.users[lo:hi] * n_items + log.items[lo:hi]
    pairs, at = np.unique(key, return_inverse=True)
    weight = np.bincount(at.ravel(), weights=log.weights[lo:hi], minlength=len(pairs))
    pair_user, pair_item = np.divmod(pairs, n_items)
    items, item_at = np.unique(pair_item, return_inverse=True)
    wanted = np.bincount(item_at.ravel(), weights=weight > 0, minlength=len(items))
    keep = wanted >= C + 1
    dropped = int((~keep).sum())
    on = keep[item_at.ravel()]
    if not on.any():
        empty = np.empty(0, dtype=np.int64)
        return None, empty, empty, dropped
    pair_user, pair_item, weight = pair_user[on], pair_item[on], weight[on]
    users, rows = np.unique(pair_user, return_inverse=True)
    items = items[keep]
    cols = np.searchsorted(items, pair_item)
    shape = (len(users), len(items))
    # pairs are sorted by (user, item): row-major CSR directly; a pair of weight 0 is support without demand
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows.ravel(), minlength=len(users)))])
    support = csr_array((np.ones(len(cols), dtype=bool), cols, indptr), shape=shape) if (weight == 0).any() else None
    graph = DemandGraph.from_weights(
        csr_array((weight, cols, indptr), shape=shape),
        log.user_names[users].tolist(),
        log.item_names[items].tolist(),
        support=support,
    )
    return graph, users, items, dropped


# -- a window's decomposition ------------------------------------------------------------------------------------


def decompose_window(
    graph: DemandGraph,
    C: int,
    previous: Seats | None,
    user_codes: np.ndarray,
    item_codes: np.ndarray,
    tolerance: float = DEFAULT_TOLERANCE,
    fallback: bool = True,
) -> tuple[Decomposition, Seats | None]:
    """A window's decomposition and its seats for the next window (module docstring, "When the warm result is
    kept"): warm from the ``previous`` plan's seats (:func:`anondecomp.warm.warm_decomposition`, each share of
    :data:`~anondecomp.warm.KEEP_SHARES` in turn until one is within ``tolerance`` of the lower bound), else,
    with ``fallback``, the shorter of the best warm result and the cold :func:`~anondecomp.decompose` (the warm
    one on a tie); cold without ``previous``. ``info["stream"]`` says which was returned, ``warm_total`` and
    ``cold_total`` the R of each (``None`` when not computed)."""
    start = time.perf_counter()
    info: dict[str, Any] = {"stream": "warm", "warm_total": None, "cold_total": None}
    best: tuple[np.ndarray, Seats, dict] | None = None
    goal = math.floor((1 + tolerance) * graph.lower_bound + 1e-9)
    if previous is not None and graph.lower_bound * graph.n_users <= CALENDAR_CELLS:
        for keep in KEEP_SHARES:
            rounds, seats, more = warm_decomposition(graph, C, previous, user_codes, item_codes, keep)
            if best is None or len(rounds) < len(best[0]):
                best = (rounds, seats, more | {"keep": keep})
            if len(rounds) <= goal:
                break
        info["warm_total"] = len(best[0]) if best is not None else None
    if best is not None and (len(best[0]) <= goal or not fallback):
        return _warm(graph, C, best, info, start), best[1]
    cold = decompose(graph, C)
    info["cold_total"] = cold.total_assignments
    if best is not None and len(best[0]) <= cold.total_assignments:
        return _warm(graph, C, best, info, start), best[1]
    return _with_info(cold, time.perf_counter() - start, **info | {"stream": "cold"}), plan_seats(
        cold, user_codes, item_codes
    )


def _warm(graph: DemandGraph, C: int, best: tuple[np.ndarray, Seats, dict], info: dict, start: float) -> Decomposition:
    """The warm result ``best`` (its rounds, seats, details) as a Decomposition, its identical rounds merged."""
    rows, mult = merge_rounds(best[0])
    return Decomposition(graph, C, "warm", rows, mult, wall_time=time.perf_counter() - start, info=best[2] | info)


def _with_info(result: Decomposition, seconds: float, **info: Any) -> Decomposition:
    """``result`` with its wall time and ``info`` updated (a Decomposition is frozen; its arrays are shared)."""
    return Decomposition(
        result.graph,
        result.C,
        result.method,
        result.assignments,
        result.multiplicities,
        result.uncovered,
        seconds,
        {**result.info, **info},
    )


# -- the stream ---------------------------------------------------------------------------------------------------


@checked(**STREAM_RULES)
def stream_windows(
    log: InteractionLog | str | os.PathLike,
    C: int,
    window: float | str,
    *,
    step: float | str | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    fallback: bool = True,
    cold: bool = False,
) -> Iterator[StreamWindow]:
    """Cut a log into sliding windows and decompose each, warm-started from the previous window's plan.

    The arguments are checked and the log read when the function is called; the windows are then decomposed
    one at a time, as the caller asks for them (module docstring: windows, the warm start and when it is kept).

    Parameters
    ----------
    log : InteractionLog, str or os.PathLike
        The log (:func:`read_log`), or its file.
    C : int
        The anonymity parameter (>= 1); items with at most C users of positive weight in a window are dropped.
    window : float or str
        The window's length: seconds, or a duration such as ``"1h"``, ``"30min"``, ``"1d"``, ``"90s"``.
    step : float or str, optional
        The time between two windows' starts (default: the window, windows that do not overlap); at most the
        window.
    tolerance : float, optional
        A warm result is kept when its R is at most ``(1 + tolerance)`` times the window's lower bound (default
        0.02, a finite number >= 0).
    fallback : bool, optional
        When no warm result is within ``tolerance``, compute the cold one too and keep the shorter (default);
        ``False`` keeps the best warm result.
    cold : bool, optional
        Decompose every window cold (the default :func:`~anondecomp.decompose`), for comparison.

    Returns
    -------
    iterator of StreamWindow
        One per window, in time order, empty windows included (R = 0); a generator, which decomposes each window
        when the caller asks for it.

    Raises
    ------
    InvalidInputError
        For a log that cannot be read (:func:`read_log`), a window or step that is not a positive duration, a
        step longer than the window, more than :data:`MAX_WINDOWS` windows, or an invalid C or tolerance.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (the
    decompositions of Section 3, one per window of a stream).

    Examples
    --------
    >>> import pathlib, tempfile, anondecomp
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> rows = [f"u{i},{item},{t}" for t in (0, 3600) for i in range(6) for item in "ab"]
    >>> _ = path.write_text("user,item,timestamp\\n" + "\\n".join(rows) + "\\n")
    >>> for w in stream_windows(path, C=2, window="1h"):
    ...     valid = anondecomp.verify(w.decomposition.graph, 2, w.decomposition).valid
    ...     print(w.index, w.users, w.items, w.R, w.plan, valid)
    0 6 2 2 cold True
    1 6 2 2 warm True
    """
    data = log if isinstance(log, InteractionLog) else read_log(log)
    width = float(window)  # the rules made both numbers of seconds
    starts, ends = window_bounds(data.times, width, width if step is None else float(step))
    return _windows(data, C, starts, ends, tolerance, fallback, cold)


def _windows(
    log: InteractionLog,
    C: int,
    starts: np.ndarray,
    ends: np.ndarray,
    tolerance: float,
    fallback: bool,
    cold: bool,
) -> Iterator[StreamWindow]:
    """The windows ``[starts[k], ends[k])`` of ``log``, each warm from the last window that had a plan."""
    lo = np.searchsorted(log.times, starts, side="left")
    hi = np.searchsorted(log.times, ends, side="left")
    previous: Seats | None = None
    for k in range(len(starts)):
        begin = time.perf_counter()
        graph, users, items, dropped = window_graph(log, int(lo[k]), int(hi[k]), C)
        result, plan = None, "empty"
        if graph is not None and cold:
            result, plan = decompose(graph, C), "cold"
            result = _with_info(result, result.wall_time, stream="cold", cold_total=result.total_assignments)
        elif graph is not None:
            result, previous = decompose_window(graph, C, previous, users, items, tolerance, fallback)
            plan = result.info["stream"]
        yield StreamWindow(
            k,
            float(starts[k]),
            float(ends[k]),
            int(hi[k] - lo[k]),
            len(users),
            len(items),
            dropped,
            result,
            time.perf_counter() - begin,
            plan,
            users,
            items,
        )


# -- writing a stream ---------------------------------------------------------------------------------------------


def _when(seconds: float, stamped: bool) -> str:
    """A window bound as written in summary.csv: ISO 8601 UTC for a log of timestamps, else its seconds."""
    if not stamped:
        return f"{seconds:g}" if seconds == int(seconds) else repr(seconds)
    moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
    return moment.isoformat(timespec="microseconds" if moment.microsecond else "seconds").replace("+00:00", "Z")


def summary_row(w: StreamWindow, stamped: bool, schedule: str) -> dict[str, Any]:
    """The row of ``summary.csv`` for window ``w`` (:data:`SUMMARY_COLUMNS`)."""
    return {
        "window": w.index,
        "start": _when(w.start, stamped),
        "end": _when(w.end, stamped),
        "interactions": w.interactions,
        "users": w.users,
        "items": w.items,
        "dropped": w.dropped,
        "R": w.R,
        "bound": w.bound,
        "seconds": f"{w.seconds:.4f}",
        "plan": w.plan,
        "schedule": schedule,
    }


@checked(**STREAM_RULES)
def write_stream(
    log: InteractionLog | str | os.PathLike,
    outdir: str | os.PathLike,
    C: int,
    window: float | str,
    *,
    step: float | str | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    fallback: bool = True,
    cold: bool = False,
    progress: Callable[[int, int], Any] | None = None,
) -> list[dict[str, Any]]:
    """Decompose every window of a log (:func:`stream_windows`) and write them to the directory ``outdir``.

    ``outdir`` gets, for every window k that has a decomposition, ``window-k.parquet`` (k on 5 digits): its
    compact schedule, as ``anonbandits decompose -o OUT.parquet`` writes one (docs/formats.md), and
    ``graphs/window-k.parquet``: the window's demand graph as an edge table (C in its metadata), so that
    ``anonbandits verify graphs/window-k.parquet window-k.parquet`` checks it; and ``summary.csv``, one row
    per window (:data:`SUMMARY_COLUMNS`: its number, its bounds, the log's rows in it, the graph's users and
    items, the items dropped, R, the lower bound, the seconds spent, ``warm``, ``cold`` or ``empty``, and its
    schedule file, empty for a window with nothing to decompose).

    Everything is written into a temporary directory beside ``outdir``, renamed to ``outdir`` when the last
    window is done: a failed or interrupted run leaves nothing behind. ``outdir`` must be new or an empty
    directory.

    Parameters
    ----------
    log : InteractionLog, str or os.PathLike
        The log (:func:`read_log`), or its file.
    outdir : str or os.PathLike
        The output directory.
    C : int
        The anonymity parameter (>= 1).
    window : float or str
        The window's length: seconds, or a duration such as ``"1h"``.
    step : float or str, optional
        The time between two windows' starts (default: the window); at most the window.
    tolerance : float, optional
        As for :func:`stream_windows` (default 0.02).
    fallback : bool, optional
        As for :func:`stream_windows` (default True).
    cold : bool, optional
        Decompose every window cold, for comparison.
    progress : callable, optional
        Called as ``progress(done, total)`` after each window.

    Returns
    -------
    list of dict
        The rows of ``summary.csv``.

    Raises
    ------
    InvalidInputError
        As :func:`stream_windows`, and for an ``outdir`` that cannot be written (an existing file, a
        non-empty directory, a missing parent).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> rows = [f"u{i},{item},{t}" for t in (0, 3600) for i in range(6) for item in "ab"]
    >>> _ = (root / "log.csv").write_text("user,item,timestamp\\n" + "\\n".join(rows) + "\\n")
    >>> summary = write_stream(root / "log.csv", root / "out", C=2, window="1h")
    >>> [(row["window"], row["R"], row["plan"]) for row in summary]
    [(0, 2, 'cold'), (1, 2, 'warm')]
    >>> sorted(p.name for p in (root / "out").iterdir())
    ['graphs', 'summary.csv', 'window-00000.parquet', 'window-00001.parquet']
    """
    check_writable(outdir, "outdir", inputs=[] if isinstance(log, InteractionLog) else [log], directory=True)
    data = log if isinstance(log, InteractionLog) else read_log(log)
    width = float(window)
    starts, ends = window_bounds(data.times, width, width if step is None else float(step))
    target = Path(outdir)
    tmpdir = tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with pending_output(tmpdir):
            windows = _windows(data, C, starts, ends, tolerance, fallback, cold)
            rows = _write_windows(windows, len(starts), Path(tmpdir), data, progress)
            publish_dir(tmpdir, target)
    except BaseException:
        shutil.rmtree(tmpdir, ignore_errors=True)
        raise
    return rows


def _write_windows(
    windows: Iterator[StreamWindow],
    total: int,
    tmpdir: Path,
    log: InteractionLog,
    progress: Callable[[int, int], Any] | None,
) -> list[dict[str, Any]]:
    """Write each of the ``total`` windows' schedule and graph into ``tmpdir`` as it comes, then ``summary.csv``."""
    (tmpdir / "graphs").mkdir()
    rows = []
    for w in windows:
        name = ""
        if w.decomposition is not None:
            name = f"window-{w.index:05d}.parquet"
            write_decomposition(w.decomposition, tmpdir / name)
            write_graph_table(w.decomposition.graph, tmpdir / "graphs" / name, C=w.decomposition.C)
        rows.append(summary_row(w, log.timestamps, name))
        if progress is not None:
            progress(len(rows), total)
    with open(tmpdir / "summary.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=SUMMARY_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return rows
