"""The tidy results table: one row per run, written as CSV (or JSON lines for a ``.jsonl`` path).

A table can be read back (:func:`read_table`) and matched against tasks (:func:`run_key`, :func:`task_key`)
so that an interrupted grid resumes with only the runs missing from its table.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from anonbandits import registry
from anonbandits._docstrings import fill
from anonbandits.errors import ConfigError
from anonbandits.experiments.grid import Task
from anonbandits.experiments.instance import recorded_params
from anondecomp.io import atomic_open

TABLE_SUFFIXES = (".csv", ".jsonl")


@fill
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
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, newline="") as fh:
        if path.suffix.lower() == ".jsonl":
            for row in rows:
                fh.write(json.dumps(row, default=float) + "\n")
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


def _text(value: Any) -> str:
    # CSV stores str(value) and JSON lines keep the type; comparing as text matches both
    return "" if value is None else str(value)


def task_key(task: Task) -> tuple[str, ...]:
    """What identifies a run in a table: the algorithm, every one of its parameters as its row records them
    (a means file's users and arms, :func:`~anonbandits.experiments.instance.recorded_params`), and the seed."""
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
