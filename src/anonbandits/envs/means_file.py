"""Multi-user instances from data: a users x arms means matrix, or a user-type table, in CSV or Parquet.

* A numeric CSV without a header is a users x arms matrix: row i holds user i's mean on every arm.
* A table with a header (CSV or Parquet) is a user-type table: one row per type, a ``count`` column with the
  number of users of that type (a positive integer), and one column per arm with the type's means; the arm
  columns keep the table's order. A type of count c becomes c identical users.

Every mean lies in [0, 1]. A mistake is one :class:`~anonbandits.errors.ConfigError` line naming the file and
the row or column.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.core.limits import MAX_INSTANCE_CELLS, check_size
from anonbandits.errors import ConfigError
from anonbandits.validation import BOOL, PATH, Rule, checks

#: the column of a user-type table holding how many users share the row's means
COUNT = "count"


def _name(path: Path) -> str:
    """The file's name as a message gives it: as written, or quoted when it holds a newline or another
    character that would break the one-line message."""
    return str(path) if str(path).isprintable() else repr(str(path))


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _csv_rows(path: Path) -> list[list[str]]:
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            return [row for row in csv.reader(fh) if any(cell.strip() for cell in row)]
    except UnicodeDecodeError as exc:
        raise ConfigError(f"means file {_name(path)} is not UTF-8 text (byte {exc.start})") from None
    except csv.Error as exc:
        raise ConfigError(f"means file {_name(path)} is not a CSV table: {exc}") from None


def _types(path: Path, header: list[str], rows: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
    """(type means, counts) of a user-type table given as text cells."""
    names = [h.strip() for h in header]
    if COUNT not in names:
        raise ConfigError(f"means file {_name(path)}: a table with a header needs a '{COUNT}' column (users per type)")
    if len(set(names)) != len(names):
        raise ConfigError(
            f"means file {_name(path)}: column {next(n for n in names if names.count(n) > 1)!r} appears twice"
        )
    c = names.index(COUNT)
    arms = [k for k in range(len(names)) if k != c]
    means, counts = np.empty((len(rows), len(arms))), np.empty(len(rows), dtype=np.int64)
    for i, row in enumerate(rows, start=2):
        if len(row) != len(names):
            raise ConfigError(f"means file {_name(path)}, row {i}: {len(row)} cells for {len(names)} columns")
        count = _number(row[c])
        if count is None or not count.is_integer() or count < 1:
            raise ConfigError(f"means file {_name(path)}, row {i}: count must be a positive integer, got {row[c]!r}")
        if count >= 2**62:  # beyond any instance (and int64): refused whatever allow_large says
            raise ConfigError(f"means file {_name(path)}, row {i}: count must be below 2^62, got {row[c]!r}")
        counts[i - 2] = int(count)
        for j, k in enumerate(arms):
            value = _number(row[k])
            if value is None:
                raise ConfigError(f"means file {_name(path)}, row {i}, arm {names[k]!r}: not a number: {row[k]!r}")
            means[i - 2, j] = value
    return means, counts


def _check_users(path: Path, counts: np.ndarray, n_arms: int, allow_large: bool) -> int:
    """The users a means file sets (its counts' sum), its users x arms checked against ``MAX_INSTANCE_CELLS``
    before the types are expanded."""
    users = sum(counts.tolist())  # Python integers: no overflow
    check_size(
        f"means file {_name(path)}: users (the count column's sum) x arms",
        users * n_arms,
        MAX_INSTANCE_CELLS,
        "MAX_INSTANCE_CELLS",
        "cells of one instance",
        allow_large=allow_large,
    )
    return users


@fill
@checks(
    path=Rule(
        lambda v: PATH.test(v) and Path(v).suffix.lower() in (".csv", ".parquet"),
        "the path of a .csv or .parquet means file",
    ),
    allow_large=BOOL,
)
def read_means(path: str | Path, *, allow_large: bool = False) -> tuple[np.ndarray, tuple[str, ...] | None]:
    """The users x arms means of a means file (see the module docstring).

    Parameters
    ----------
    path : str or pathlib.Path
        A ``.csv`` (a headerless numeric matrix, or a user-type table with a ``count`` column) or a
        ``.parquet`` user-type table.
    allow_large : bool, optional
        Confirm users x arms (the ``count`` column expanded) above
        :data:`~anonbandits.core.limits.MAX_INSTANCE_CELLS` (10^8). Default False: refused before expanding.

    Returns
    -------
    tuple
        ``(means, arms)``: an (N, K) float array with every user's means, types expanded by their counts, and
        the arms' names (``None`` for a headerless matrix).

    Raises
    ------
    ConfigError
        For a ``path`` that is not a str or a path object, an unreadable file, an unknown extension, a ragged or
        empty table, a missing or bad ``count``, a cell that is not a number, a mean outside [0, 1], fewer than
        two arms, or more users x arms than ``MAX_INSTANCE_CELLS`` without ``allow_large``.

    {{refs_paper000}}

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "types.csv").write_text("count,shoes,bags\\n2,0.1,0.05\\n1,0.02,0.08\\n")
    >>> means, arms = read_means(folder / "types.csv")
    >>> means.tolist(), arms
    ([[0.1, 0.05], [0.1, 0.05], [0.02, 0.08]], ('shoes', 'bags'))
    """
    means, counts, arms = _read_types(Path(path))
    _check_users(Path(path), counts, means.shape[1], allow_large)
    return np.repeat(means, counts, axis=0), arms


def _read_types(path: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...] | None]:
    """(type means, counts, arm names) of a means file, every cell checked, the types not expanded (a headerless
    matrix: one type per row, count 1)."""
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise ConfigError(f"means file {_name(path)}: use a .csv or .parquet table")
    if not path.is_file():
        raise ConfigError(f"means file {_name(path)} does not exist")
    arms: tuple[str, ...] | None
    if suffix == ".parquet":
        import pyarrow as pa  # here: the CSV path must not need pyarrow
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
            records = table.to_pylist()
        # a damaged file: pyarrow's own errors (ArrowInvalid for a missing footer or a 0-byte file,
        # ArrowNotImplementedError for a type it cannot read) and OSError (a footer it cannot deserialize, a
        # read that fails)
        except (pa.ArrowException, OSError) as exc:
            raise ConfigError(f"means file {_name(path)} is not a Parquet table: {str(exc).splitlines()[0]}") from None
        header = table.column_names
        rows = [[str(v) for v in row.values()] for row in records]
        means, counts = _types(path, header, rows)
        arms = tuple(h for h in header if h != COUNT)
    else:
        rows = _csv_rows(path)
        if not rows:
            raise ConfigError(f"means file {_name(path)} is empty")
        if all(_number(cell) is not None for cell in rows[0]):
            for i, row in enumerate(rows, start=1):
                if len(row) != len(rows[0]):
                    raise ConfigError(
                        f"means file {_name(path)}, row {i}: {len(row)} cells, the first row has {len(rows[0])}"
                    )
                bad = next((cell for cell in row if _number(cell) is None), None)
                if bad is not None:
                    raise ConfigError(f"means file {_name(path)}, row {i}: not a number: {bad!r}")
            means, counts, arms = np.array(rows, dtype=float), np.ones(len(rows), dtype=np.int64), None
        else:
            means, counts = _types(path, rows[0], rows[1:])
            arms = tuple(h.strip() for h in rows[0] if h.strip() != COUNT)
    if means.shape[0] == 0:
        raise ConfigError(f"means file {_name(path)} has no users")
    if means.shape[1] < 2:
        raise ConfigError(f"means file {_name(path)} has {means.shape[1]} arm(s); at least two are needed")
    outside = ~((means >= 0) & (means <= 1))
    if outside.any():
        i, j = np.argwhere(outside)[0]
        where = f"row {i + 2}, arm {arms[j]!r}" if arms else f"row {i + 1}, column {j + 1}"
        raise ConfigError(f"means file {_name(path)}, {where}: mean {float(means[i, j]):g} is outside [0, 1]")
    return means, counts, arms


def means_sizes(path: str | Path) -> tuple[int, int]:
    """(users, arms) a means file sets, read without expanding its types (a count may be 10^12).

    Parameters
    ----------
    path : str or pathlib.Path
        A means file (as :func:`read_means` takes).

    Returns
    -------
    tuple of int
        The users (the ``count`` column's sum, or the rows of a headerless matrix) and the arms.

    Raises
    ------
    ConfigError
        As :func:`read_means`, for a file it refuses (its size limit aside).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "big.csv").write_text("count,a,b\\n1000000000000,0.7,0.5\\n")
    >>> means_sizes(folder / "big.csv")
    (1000000000000, 2)
    """
    means, counts, _ = _read_types(Path(path))
    return sum(counts.tolist()), int(means.shape[1])


def is_means_path(text: str) -> bool:
    """Whether ``--means`` text names a file rather than listing arm means.

    A ``.csv`` or ``.parquet`` name is a file; otherwise text with a comma, or a single number, is a list (so a
    typo in a list is reported as such, not as a missing file).

    Parameters
    ----------
    text : str
        The value of ``--means``.

    Returns
    -------
    bool
        True for a path.

    Examples
    --------
    >>> is_means_path("0.9,0.5"), is_means_path("types.csv"), is_means_path("0.5"), is_means_path("log.txt")
    (False, True, False, True)
    """
    text = text.strip()
    if Path(text).suffix.lower() in (".csv", ".parquet"):
        return True
    return "," not in text and _number(text) is None


@fill
def shared_means(text: str) -> tuple[np.ndarray, int | None]:
    """The one instance that the agents of a multi-agent algorithm share, from ``--means`` text.

    A comma list keeps its meaning: the arm means. A means file (:func:`read_means`) must describe one
    instance: one row, or rows that are all equal (a user-type table of one type, or of identical types). Its
    users give the number of agents, except for a headerless file of one row, which is the arm means alone.

    Parameters
    ----------
    text : str
        Comma-separated arm means, or the path of a ``.csv`` or ``.parquet`` means file.

    Returns
    -------
    tuple
        ``(means, agents)``: the (K,) arm means, and the number of agents the file sets (``None`` when it sets
        none: a comma list or a one-row headerless file).

    Raises
    ------
    ConfigError
        For a malformed list or file, or a file whose rows differ (these algorithms share one instance among
        agents).

    References
    ----------
    Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm Identification with Private Communications", ICML 2023
    (agents sharing one instance).

    Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed Bandits", ICML 2019.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "one.csv").write_text("count,a,b,c\\n12,0.7,0.5,0.3\\n")
    >>> means, agents = shared_means(str(folder / "one.csv"))
    >>> means.tolist(), agents
    ([0.7, 0.5, 0.3], 12)
    >>> shared_means("0.7,0.5")[0].tolist(), shared_means("0.7,0.5")[1]
    ([0.7, 0.5], None)
    """
    if not is_means_path(text):
        # here: rewards must not import this module's callers; the body, whose messages name the means
        from anonbandits.envs.rewards import _arm_means

        return _arm_means(text), None
    means, counts, arms = _read_types(Path(text.strip()))  # not expanded: the agents are the counts' sum
    differ = np.flatnonzero(np.any(means != means[0], axis=1))
    if differ.size:
        user = int(counts[: differ[0]].sum()) + 1
        raise ConfigError(
            f"means file {text.strip()}: user {user} has other means than user 1; "
            "these algorithms share one instance among agents (give one row, or one type with a "
            "count)"
        )
    agents = sum(counts.tolist())
    return means[0], None if arms is None and agents == 1 else agents
