"""Argument types, output-path checks and stdout handling shared by the subcommands.

Each type rejects a bad value with argparse's one-line error (``argument --seed: ...``); output paths are
checked before any computing starts, so a long run never ends in an unwritable path.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from anonbandits.errors import ConfigError
from anondecomp.io import check_writable


class Terminated(BaseException):
    """SIGTERM, raised in the main thread (``main``'s handler) so that ``finally`` blocks (temporary files) run
    and ``simulate`` can save the finished runs as after Ctrl-C."""


def _positive_finite(text: str, unit: str = "") -> float:
    of = f" of {unit}" if unit else ""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number{of}, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive finite number{of}, got {text!r}")
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds > 0 (``nan`` and ``inf`` parse as floats but are no time limit)."""
    return _positive_finite(text, "seconds")


def _integer(text: str, low: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1."""
    return _integer(text, 1, "at least 1")


def nonnegative_int(text: str) -> int:
    """An integer >= 0 (seeds: numpy refuses negative ones)."""
    return _integer(text, 0, "0 or more")


#: the extensions ``decompose -o`` writes: JSON, or the compact Parquet schedule (a directory ``OUT/`` of Parquet
#: part files is accepted too; anondecomp.io.write_decomposition chooses the format by the same rule)
DECOMPOSITION_SUFFIXES = (".json", ".parquet", ".pq")


def check_outputs(
    outputs: Sequence[tuple[str, str | None]],
    inputs: Iterable[str | os.PathLike] = (),
    make_parents: bool = False,
    parts: Iterable[str] = (),
    directories: Iterable[str] = (),
    suffixes: Mapping[str, Sequence[str]] | None = None,
) -> None:
    """Check every ``(flag, path)`` output (``None`` paths skipped) before any work: see
    :func:`anondecomp.io.check_writable`, which also refuses devices, FIFOs and the standard streams; two flags
    naming the same file are refused too. The flags in ``parts`` may name a directory of Parquet part files
    (``OUT/``); those in ``directories`` always do, whatever the name. ``suffixes`` gives, per flag, the
    extensions its writer writes (the format follows the extension): any other file name is refused, naming the
    flag, the file and the accepted extensions, so a file never holds another format than its name says."""
    inputs = list(inputs)
    parts, directories = set(parts), set(directories)
    seen: dict[Path, str] = {}
    for flag, path in outputs:
        if path is None:
            continue
        check_writable(
            path, flag, inputs=inputs, make_parents=make_parents, parts=flag in parts, directory=flag in directories
        )
        if Path(path).resolve() in seen:
            raise ConfigError(f"{flag} {path} is also {seen[Path(path).resolve()]}; give each output its own file")
        seen[Path(path).resolve()] = flag
    for flag, path in outputs:  # once every path is known writable and distinct: the format each name says
        if path is not None and suffixes and flag in suffixes:
            check_suffix(flag, path, suffixes[flag], directory_ok=flag in parts or flag in directories)


def check_suffix(flag: str, path: str, accepted: Sequence[str], *, directory_ok: bool = False) -> None:
    """Refuse ``path`` unless its extension is one of ``accepted`` (case-insensitive) or, with ``directory_ok``,
    it names a directory of Parquet part files (``OUT/``)."""
    from anondecomp.compact import is_directory_output

    if Path(path).suffix.lower() in accepted or (directory_ok and is_directory_output(path)):
        return
    also = ", or a directory OUT/ (Parquet part files)" if directory_ok else ""
    raise ConfigError(
        f"{flag} {path}: unsupported extension {Path(path).suffix or '(none)'!r}; "
        f"use one of {', '.join(accepted)}{also}"
    )


def absence_value(text: str) -> float:
    """A probability in [0, 1) that a user misses a block (``nan``, ``inf`` and 1 are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a probability in [0, 1), got {text!r}") from None
    if not 0 <= value < 1:  # also NaN
        raise argparse.ArgumentTypeError(f"must be a probability in [0, 1), got {text!r}")
    return value


def confidence_value(text: str) -> float:
    """A probability strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a probability in (0, 1), got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a probability in (0, 1), got {text!r}")
    return value


def add_absence_arguments(p: argparse.ArgumentParser, default: str) -> None:
    """``--absence A`` and ``--confidence Q`` (docs/platform.md), shared by decompose and replan."""
    p.add_argument(
        "--absence",
        type=absence_value,
        default=None,
        metavar="A",
        help="probability in [0, 1) that a user misses a block: every group that gives samples keeps C+1 "
        f"present users with probability >= Q (default: {default})",
    )
    p.add_argument(
        "--confidence",
        type=confidence_value,
        default=None,
        metavar="Q",
        help="with --absence: the probability Q in (0, 1) a group must keep C+1 present users with (default 0.95)",
    )


def demand_value(text: str) -> int | float:
    """A total demand D > 0: an integer, kept exact (the solver refuses D > 2^53 by name), or a finite number."""
    value = _positive_finite(text)
    return int(text) if text.strip().lstrip("+").isdigit() else value


def add_graph_arguments(p: argparse.ArgumentParser) -> None:
    """The graph file and the demand of a batched table, shared by decompose, verify and beta."""
    p.add_argument(
        "graph", help="graph file: JSON (node-link or batched form), or a Parquet or CSV table (docs/formats.md)"
    )
    p.add_argument(
        "--demand",
        type=demand_value,
        default=None,
        metavar="D",
        help="total demand D of a batched table (columns user, arm; w_ij = D / |A_i|)",
    )


@contextlib.contextmanager
def stop_signals_ignored() -> Iterator[None]:
    """Ignore Ctrl-C and SIGTERM meanwhile: the run is stopping already, and a second Ctrl-C (or a second
    SIGTERM) must not cut short the writing of the finished runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    with contextlib.suppress(OSError, ValueError):
        os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
