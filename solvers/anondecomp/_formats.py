"""Helpers shared by the readers and writers of docs/formats.md: :mod:`anondecomp.io`, :mod:`anondecomp.columnar`,
:mod:`anondecomp.compact` and :mod:`anondecomp.scale`.

Private to the package (hence the module's name; the names in it have no underscore of their own). Those
modules import these helpers from here, never each other's private names, and this module imports none of them,
so the readers and writers import one another in one direction only: ``io`` -> ``columnar``, ``io`` ->
``compact`` -> ``columnar`` (tests/solvers/test_io.py checks both rules on the source).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from anondecomp.errors import InvalidInputError
from anondecomp.graph import LIMIT_TEXT, MAX_DEMAND, describe

ZERO_WEIGHT = "(or 0: the arm is in the user's support, without demand)"
"""How the readers explain a weight of 0 where they refuse a negative one."""

SCHEDULE_FORMAT = "anondecomp-schedule/1"
"""The ``format`` key of a compact schedule's metadata (:mod:`anondecomp.compact`)."""


# -- JSON with unique keys (JSON files, and the JSON values of Parquet metadata) -------------------------------


class DuplicateKeyError(ValueError):
    """A JSON object names a key twice (raised inside the parser, reported as :class:`InvalidInputError`)."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """``object_pairs_hook`` of every JSON read: the object as a dict, refusing a key given twice (the last one
    would silently win: a user listed twice, a repeated ``demand`` or ``C``), naming the key.

    Running Python code between objects also lets the interpreter handle signals (Ctrl-C) while the C parser
    reads a large file."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise DuplicateKeyError(f"JSON object has the key {dup!r} twice")
    return out


# -- values of the input formats ---------------------------------------------------------------------------------


def finite_number(value: Any, what: str) -> int | float:
    """A finite number of at most :data:`~anondecomp.graph.MAX_DEMAND`, checked before any float conversion
    (which may overflow); ``what`` names the value in the error."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (isinstance(value, float) and not math.isfinite(value))
    ):
        raise InvalidInputError(f"{what} must be a finite number, got {value!r:.40}")
    if value > MAX_DEMAND:
        raise InvalidInputError(f"{what} is {describe(value)}; the limit is {LIMIT_TEXT}")
    return value


def c_field(doc: dict, where: str = "field 'C'") -> int | None:
    """The ``C`` of a JSON document or of a Parquet file's metadata (``None`` when absent); anything but an
    integer is refused, naming ``where``."""
    C = doc.get("C")
    if C is not None and (isinstance(C, bool) or not isinstance(C, int)):
        raise InvalidInputError(f"{where} must be an integer, got {C!r:.40}")
    return C


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its ``strerror`` for an OSError), for one-line errors."""
    text = str(getattr(exc, "strerror", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def no_nulls(col, name: str, path, start: int = 0) -> None:
    """Refuse a null value or an empty string in the Arrow column ``col``, naming the file, the column and the
    row (``start`` is the number of rows before ``col`` in the file). A CSV reader gives an empty cell of a
    text column as ``""``, not as null: an id that is empty is a mistake, not a user or arm named ``""``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    empty = pc.is_null(col) if col.null_count else None
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        blank = pc.fill_null(pc.equal(pc.utf8_length(col), 0), True)
        empty = blank if empty is None else pc.or_(empty, blank)
    if empty is not None and pc.any(empty).as_py():
        row = start + int(np.argmax(empty.to_numpy(zero_copy_only=False))) + 1
        raise InvalidInputError(f"{path}: column {name!r} is empty in row {row}")


def schedule_schema(header: dict):
    """The Arrow schema of a compact schedule (columns ``user, arm, first_round, rounds``), its metadata the
    summary fields of ``header`` after ``format``, each JSON-encoded."""
    import pyarrow as pa

    meta = {"format": SCHEDULE_FORMAT, **header}
    return pa.schema(
        [("user", pa.string()), ("arm", pa.string()), ("first_round", pa.int64()), ("rounds", pa.int64())],
        metadata={k: json.dumps(v) for k, v in meta.items()},
    )


# -- output paths --------------------------------------------------------------------------------------------------

_KINDS = (
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISFIFO, "pipe or FIFO"),
    (stat.S_ISSOCK, "socket"),
)
_STREAMS = ((1, "standard output"), (2, "standard error"))


def refuse_special(path: str | os.PathLike, what: str = "output", *, directory_ok: bool = False) -> None:
    """Refuse an output path that exists and is not a regular file, so that no writer ever renames over
    (or writes into) a device, a FIFO, a socket or the command's own standard streams.

    Parameters
    ----------
    path : the output path; a symbolic link is judged by what it points to (writers write through it, see
        :func:`output_target`).
    what : how the caller names it in messages (a command-line flag such as ``-o``).
    directory_ok : an existing directory is the caller's business (a part directory); else it is refused.

    Raises
    ------
    InvalidInputError, one line such as ``-o /dev/full: not a regular file (character device); give a file
    path``. Only ``os.stat`` is used: a FIFO is never opened, so the check cannot block.
    """
    try:
        st = os.stat(os.fspath(path).rstrip(os.sep) or os.sep)  # OUT/ names the part directory OUT
    except OSError:
        # a new file (or a dangling link, whose target is created), or a path through a non-directory: the
        # writer's own checks name that problem (check_writable: "... is not a directory")
        return
    for fd, name in _STREAMS:  # first: /dev/stdout is a pipe, a terminal or a file, and this names it best
        try:
            same = os.path.samestat(st, os.fstat(fd))
        except OSError:  # the stream is closed
            continue
        if same:
            raise InvalidInputError(f"{what} {path}: is the {name} of this command; give another file")
    if stat.S_ISDIR(st.st_mode):
        if directory_ok:
            return
        raise InvalidInputError(f"{what} {path}: is a directory; give a file name")
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "unknown file type")
        raise InvalidInputError(f"{what} {path}: not a regular file ({kind}); give a file path")


def output_target(path: str | os.PathLike) -> Path:
    """Where an output to ``path`` goes: the file a symbolic link points to (the link itself stays, as a
    shell redirection would keep it), else ``path``. The temporary file is created beside the target and
    renamed over it, never over the link."""
    if not os.path.islink(path):
        return Path(path)
    try:
        return Path(os.path.realpath(path, strict=True))
    except (OSError, RuntimeError) as exc:  # a dangling link, or a loop of links (ELOOP)
        if isinstance(exc, FileNotFoundError):
            return Path(os.path.realpath(path))
        raise InvalidInputError(f"{path}: cannot follow the symbolic link (a loop of links?)") from None


def umask() -> int:
    """The process's umask (read by setting it and back): a finished temporary output gets the permissions
    of a new file, ``0o644 & ~umask()`` (``mkstemp`` makes 0600, ``mkdtemp`` 0700)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


# -- temporary outputs being written -------------------------------------------------------------------------------

_PENDING: set[str] = set()
_PENDING_LOCK = threading.Lock()


@contextlib.contextmanager
def pending_output(tmp: str | os.PathLike) -> Iterator[None]:
    """Note the temporary file or directory ``tmp`` while the block writes it (its writer removes it on an error
    or renames it when done): :func:`discard_pending_outputs` can then remove it if the process must end at once."""
    with _PENDING_LOCK:
        _PENDING.add(os.fspath(tmp))
    try:
        yield
    finally:
        with _PENDING_LOCK:
            _PENDING.discard(os.fspath(tmp))


def discard_pending_outputs() -> None:
    """Remove every temporary output still being written (:func:`pending_output`). For a process about to end
    without unwinding (``os._exit``), e.g. the command line's deadline after Ctrl-C when the main thread is
    inside a long solver call: the writers' own clean-up would not run, and no partial output may stay."""
    with _PENDING_LOCK:
        paths = list(_PENDING)
    for path in paths:
        with contextlib.suppress(OSError):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
