"""The tidy results table: one row per run, written as CSV (or JSON lines for a ``.jsonl`` path).

A table can be read back (:func:`read_table`) and matched against tasks (:func:`run_key`, :func:`task_key`)
so that an interrupted grid resumes with only the runs missing from its table.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from anonbandits import registry
from anonbandits._docstrings import fill
from anonbandits.errors import ConfigError, _shown
from anonbandits.experiments.grid import Task
from anonbandits.experiments.instance import recorded_params
from anonbandits.results import metric
from anonbandits.validation import PATH, Rule, checks
from anondecomp.errors import InvalidInputError
from anondecomp.io import atomic_open, refuse_special

TABLE_SUFFIXES = (".csv", ".jsonl")


def writable(path: str | Path) -> Path:
    """``path`` as a :class:`~pathlib.Path`, refused in one line naming ``path`` when it cannot be written: a
    directory, a device, a FIFO or this command's own standard streams (``anondecomp.io``'s check, the one every
    writer of the project makes before it writes).

    >>> writable("table.csv").name
    'table.csv'
    """
    try:
        refuse_special(path, "path")
    except InvalidInputError as exc:
        raise ConfigError(str(exc)) from None
    return Path(path)


@fill
@checks(
    rows=Rule(
        lambda v: isinstance(v, Iterable) and not isinstance(v, str | bytes | Mapping | np.ndarray),
        "an iterable (a list) of mappings, one per run",
    ),
    path=PATH,
)
def write_table(rows: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """Write ``rows`` to ``path`` atomically: a temporary file renamed into place, so no half-written table
    remains.

    Parameters
    ----------
    rows : iterable of Mapping
        One mapping per run; the columns are the union of their keys, in first-seen order (a row without a
        column leaves its cell empty).
    path : str or pathlib.Path
        The table: a ``.jsonl`` path gets JSON lines, anything else CSV. Missing parent directories are
        created.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ConfigError
        For ``rows`` that are not an iterable of mappings (text, a single mapping, an array), a row a JSON line
        cannot hold (keys that are not text, values that are not numbers or text), or a ``path`` that is not a
        str or a path object or cannot be written (a directory, a device).

    {{refs_experiments}}

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> tmp = tempfile.TemporaryDirectory()
    >>> rows = [{"algorithm": "dp-se", "seed": 0, "regret": 1.5}, {"algorithm": "dp-se", "seed": 1, "note": "x"}]
    >>> write_table(rows, Path(tmp.name) / "runs" / "table.csv").read_text().splitlines()
    ['algorithm,seed,regret,note', 'dp-se,0,1.5,', 'dp-se,1,,x']
    >>> tmp.cleanup()
    """
    rows = list(rows)
    bad = next((k for k, row in enumerate(rows) if not isinstance(row, Mapping)), None)
    if bad is not None:
        raise ConfigError(f"rows must be mappings (one per run): row {bad} is {_shown(rows[bad])}")
    path = writable(path)
    jsonl = path.suffix.lower() == ".jsonl"
    if jsonl:
        try:  # before the file is opened: a row a JSON line cannot hold leaves no file behind
            lines = [json.dumps(row, default=float) + "\n" for row in rows]
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"rows must hold text keys and number or text values for JSON lines: {exc}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, newline="") as fh:
        if jsonl:
            fh.writelines(lines)
        else:
            writer = csv.DictWriter(fh, fieldnames=list(dict.fromkeys(key for row in rows for key in row)))
            writer.writeheader()
            writer.writerows(rows)
    return path


def read_table(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a table written by :func:`write_table` (CSV values come back as text); :class:`ConfigError`
    when the file cannot be read or is not a results table (no ``algorithm`` and ``seed`` columns)."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            if path.suffix.lower() == ".jsonl":
                rows = [json.loads(line) for line in fh if line.strip()]
            else:
                rows = list(csv.DictReader(fh))
    except OSError as exc:
        raise ConfigError(f"cannot read the table {path}: {exc.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, csv.Error, RecursionError) as exc:
        raise ConfigError(f"{path} is not a results table: {exc}") from None
    for k, row in enumerate(rows):
        if not isinstance(row, dict) or "algorithm" not in row or "seed" not in row:
            raise ConfigError(f"{path} is not a results table: row {k + 1} has no 'algorithm' and 'seed'")
    return rows


#: The columns of every row besides the algorithm's parameters and its metrics.
_RUN_COLUMNS = ("algorithm", "seed", "wall_time")


def read_resumable(path: str | Path) -> tuple[list[dict[str, Any]], str | None]:
    """The rows of the table ``simulate --resume`` continues, validated row by row before anything is written.

    Every row must be whole (as many cells as the header: a row cut inside its parameters or metrics is caught),
    record a registered algorithm's run once (no two rows with the same :func:`run_key`), and hold values of the
    right type: a non-negative integer seed, a finite non-negative ``wall_time``, each metric as its schema says
    (:func:`anonbandits.results.metric`; empty where an algorithm has no such metric), each numeric parameter a
    number. Only the last line may be incomplete (no final newline: the writer was cut off mid-line): it alone is
    dropped, and its run runs again; the note returned says so.

    Parameters
    ----------
    path : str or pathlib.Path
        The ``--out`` table (``.csv``, or ``.jsonl`` for JSON lines).

    Returns
    -------
    rows : list of dict
        The rows, as :func:`read_table` reads them (CSV values as text).
    note : str or None
        One line saying that the incomplete last line was dropped; ``None`` when none was.

    Raises
    ------
    ConfigError
        For a table that cannot be read or is damaged: one line naming the row (and its line) and what is
        wrong, so that nothing is written over a table the user may want to repair.

    {{refs_experiments}}

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> tmp = tempfile.TemporaryDirectory()
    >>> table = Path(tmp.name) / "r.csv"
    >>> _ = table.write_text("algorithm,horizon,seed,regret,wall_time\\nse,1000,0,12.5,0.1\\nse,1000,1,19")
    >>> rows, note = read_resumable(table)
    >>> len(rows), note
    (1, 'dropped the incomplete last line of ... (row 2, line 3): its run runs again')
    >>> _ = table.write_text("algorithm,horizon,seed,regret,wall_time\\nse,1000,0,abc,0.1\\n")
    >>> read_resumable(table)
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: ...r.csv: row 1 (line 2) has regret 'abc', not a finite number; ...
    >>> tmp.cleanup()
    """
    path = Path(path)
    jsonl = path.suffix.lower() == ".jsonl"
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            text = fh.read()
    except OSError as exc:
        raise ConfigError(f"cannot read the table {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not a results table: {exc}") from None
    note = None
    if text and not text.endswith("\n"):
        cut = text.rfind("\n") + 1
        line = text.count("\n") + 1
        if not jsonl and cut == 0:
            raise ConfigError(f"{path} is not a results table: its header line is incomplete")
        note = (
            f"dropped the incomplete last line of {path} (row {line - (0 if jsonl else 1)}, line {line}): "
            "its run runs again"
        )
        text = text[:cut]
    rows = _parse_table(text, path, jsonl)
    _check_rows(rows, path, jsonl)
    return rows, note


def _parse_table(text: str, path: Path, jsonl: bool) -> list[dict[str, Any]]:
    rows: list[Any] = []
    try:
        if jsonl:
            for k, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise ConfigError(
                            f"{path}: line {k} is not a JSON row ({exc}); repair or delete that "
                            "line (or start a new table) to resume"
                        ) from None
        else:
            reader = csv.DictReader(io.StringIO(text, newline=""))
            rows = list(reader)
            header = reader.fieldnames or []
            twice = sorted({name for name in header if header.count(name) > 1})
            if twice:
                raise ConfigError(f"{path} is not a results table: its header names {twice[0]!r} twice")
    except (csv.Error, RecursionError) as exc:
        raise ConfigError(f"{path} is not a results table: {exc}") from None
    for k, row in enumerate(rows):
        if not isinstance(row, dict) or "algorithm" not in row or "seed" not in row:
            raise ConfigError(f"{path} is not a results table: row {k + 1} has no 'algorithm' and 'seed'")
    return rows


def _check_rows(rows: list[dict[str, Any]], path: Path, jsonl: bool) -> None:
    """Refuse the first damaged row (one line naming it), then the first run recorded twice."""
    seen: dict[tuple[str, ...], int] = {}
    for k, row in enumerate(rows, start=1):
        where = f"{path}: row {k}" if jsonl else f"{path}: row {k} (line {k + 1})"
        problem = _row_problem(row, jsonl)
        if problem:
            raise ConfigError(f"{where} {problem}; repair or delete that row (or start a new table) to resume")
        key = run_key(row)
        if key is None:
            continue
        if key in seen:
            raise ConfigError(
                f"{where} records the same run as row {seen[key]} ({row['algorithm']}, seed "
                f"{row['seed']}); delete one of them to resume"
            )
        seen[key] = k


def _row_problem(row: dict[Any, Any], jsonl: bool) -> str | None:
    """What is wrong with one row, or ``None``."""
    if None in row:  # csv.DictReader's key for cells beyond the header
        return f"has {len(row) - 1 + len(row[None])} cells, the header {len(row) - 1}"
    missing = [] if jsonl else [name for name, value in row.items() if value is None]  # JSON null: empty
    if missing:
        return f"is incomplete: it ends before its {missing[0]!r} cell"
    if not all(isinstance(name, str) for name in row):
        return "has a column that is not named by text"
    if not _is_count(row["seed"]):
        return f"has seed {row['seed']!r}, not a non-negative integer"
    if not _is_number(row.get("wall_time")) or float(row["wall_time"]) < 0:
        return f"has wall_time {row.get('wall_time')!r}, not a finite non-negative number"
    try:
        spec = registry.get(str(row["algorithm"]))
    except ConfigError:
        return None  # an algorithm no longer registered: its rows are kept as they are
    params = {p.name: p for p in spec.params}
    for name, value in row.items():
        problem = _cell_problem(name, value, params)
        if problem:
            return problem
    return None


@functools.cache
def _all_parameter_names() -> frozenset[str]:
    return frozenset(p.name for spec in registry.all_algorithms().values() for p in spec.params)


def _cell_problem(name: str, value: Any, params: Mapping[str, Any]) -> str | None:
    if name in _RUN_COLUMNS:
        return None
    if name in params:
        kind = params[name].type
        if kind in (int, float) and value not in ("", None) and not _parses(kind, value):
            return f"has the parameter {name} {value!r}, not {'an integer' if kind is int else 'a number'}"
        return None
    m = metric(name)
    if m is None:
        if name in _all_parameter_names():
            return None  # another algorithm's parameter (a grid's table has the union of the columns)
        return f"has the column {name!r}, neither a parameter nor a metric (docs/parameters.md)"
    if value is None or value == "":
        return None  # the metric is not applicable, or another algorithm's
    ok = {"int": _is_integer_text, "flag": _is_flag, "float": _is_number}[m.kind](value)
    return None if ok else f"has {name} {value!r}, not {_KIND_WORDS[m.kind]}"


_KIND_WORDS = {"int": "an integer", "flag": "0 or 1", "float": "a finite number"}


def _parses(kind: type, value: Any) -> bool:
    if isinstance(value, bool):
        return False
    try:
        kind(value)
    except (TypeError, ValueError, OverflowError):
        return False
    return True


def _is_number(value: Any) -> bool:
    """A finite number, or the text of one (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return False
    try:
        return math.isfinite(float(value))
    except (ValueError, OverflowError):
        return False


def _is_integer_text(value: Any) -> bool:
    """An integer, or the text of one (JSON lines keep ints; a CSV cell is text such as ``"12"``)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and re.fullmatch(r"\s*[+-]?[0-9]+\s*", value) is not None


def _is_flag(value: Any) -> bool:
    return value in ("True", "False") or isinstance(value, bool) or (_is_integer_text(value) and int(value) in (0, 1))


def _is_count(value: Any) -> bool:
    return _is_integer_text(value) and int(value) >= 0


def _text(value: Any) -> str:
    # CSV stores str(value) and JSON lines keep the type; comparing as text matches both
    return "" if value is None else str(value)


def task_key(task: Task) -> tuple[str, ...] | None:
    """What identifies a run in a table: the algorithm, every one of its parameters as its row records them
    (a means file's users and arms, :func:`~anonbandits.experiments.instance.recorded_params`), and the seed
    (``None``, as :func:`run_key`, for an algorithm that is not registered)."""
    return run_key({**recorded_params(task.algorithm, task.params), "algorithm": task.algorithm, "seed": task.seed})


def run_key(row: Mapping[str, Any]) -> tuple[str, ...] | None:
    """:func:`task_key` of the run a table row records; ``None`` for an algorithm no longer registered."""
    try:
        spec = registry.get(str(row["algorithm"]))
    except ConfigError:
        return None
    return (spec.name, *(_text(row.get(p.name)) for p in spec.params), _text(row["seed"]))


def _parameter_names(algorithm: Any) -> tuple[str, ...]:
    try:
        return tuple(p.name for p in registry.get(str(algorithm)).params)
    except ConfigError:  # an algorithm no longer registered (a resumed table): its runs are told apart by name
        return ()


def configuration_labels(rows: Sequence[Mapping[str, Any]], bases: Sequence[str]) -> list[str]:
    """The label of each row's configuration: its ``bases`` entry (an algorithm's name, or a curve's label)
    followed by every parameter whose value differs between the rows of the same base, in brackets:
    ``anon-etc [C=1]``, ``mase [users=16]``, ``anon-etc [C=5, users=32]``. Rows of one base whose parameters all
    agree keep the base alone (``anon-batched/polytope``). The seed is no parameter (a configuration runs once per
    seed); values are compared as a CSV table stores them, so rows read back from a table group with fresh ones.

    >>> rows = [{"algorithm": "anon-etc", "C": c, "users": 300, "seed": s} for c in (1, 5) for s in (0, 1)]
    >>> configuration_labels(rows, [row["algorithm"] for row in rows])
    ['anon-etc [C=1]', 'anon-etc [C=1]', 'anon-etc [C=5]', 'anon-etc [C=5]']
    """
    members: dict[str, list[int]] = {}
    for k, base in enumerate(bases):
        members.setdefault(base, []).append(k)
    labels = list(bases)
    for base, ks in members.items():
        names = dict.fromkeys(name for k in ks for name in _parameter_names(rows[k].get("algorithm")))
        varying = [name for name in names if len({_text(rows[k].get(name)) for k in ks}) > 1]
        if varying:
            for k in ks:
                labels[k] = f"{base} [{', '.join(f'{name}={_text(rows[k].get(name))}' for name in varying)}]"
    return labels
