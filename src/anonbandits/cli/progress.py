"""Progress of the long phases of ``decompose`` and ``verify`` on stderr, with no dependency (not even tqdm, which
only the ``[sim]`` extra installs): on a terminal a line redrawn in place (a bar when the phase counts rows, else
a spinner and the seconds elapsed), erased when the phase ends; otherwise, for logs and pipes, one line every
:data:`INTERVAL` seconds while a phase lasts and one when it ends, so that a phase shorter than that prints
nothing. stdout is never touched.

The display runs in a daemon thread woken by a timer, so a phase inside one long library call (a solve, a
Parquet read) is shown too; signals still reach the main thread, and Ctrl-C stops the thread on the way out.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from types import TracebackType
from typing import TextIO

INTERVAL = 10.0
"""Seconds between two lines off a terminal (the first comes when a phase has lasted this long)."""
TERMINAL_DELAY = 1.0
"""Seconds before a phase is drawn on a terminal (quick phases leave the terminal alone)."""
TERMINAL_TICK = 0.25
"""Seconds between two redraws on a terminal."""

_SPINNER = "|/-\\"
_BAR = 30


class Progress:
    """Show on stderr that a phase (``label``: ``"reading g.parquet"``, ``"solving"``, ...) is running.

    Use as a context manager around the phase; :meth:`update` (or calling the object, as
    :func:`anondecomp.compact.verify_compact`'s ``progress`` callback) gives the rows done so far, which turn the
    display into a bar. ``command`` prefixes the lines written off a terminal (``anonbandits verify: ...``).
    ``stream`` is stderr by default, read when the phase starts; ``enabled=False`` shows nothing.
    """

    def __init__(
        self,
        label: str,
        *,
        command: str = "anonbandits",
        unit: str = "rows",
        stream: TextIO | None = None,
        enabled: bool = True,
    ) -> None:
        self.label, self.command, self.unit, self.enabled = label, command, unit, enabled
        self.stream = stream
        self.done = self.total = 0
        self.start = time.monotonic()
        self.lines = 0  # lines written off a terminal
        self.drawn = 0  # width of the line drawn on a terminal
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # -- the phase -------------------------------------------------------------------------------------------

    def __enter__(self) -> Progress:
        self.stream = self.stream if self.stream is not None else sys.stderr
        self.start = time.monotonic()
        if self.enabled:
            self.tty = _isatty(self.stream)
            self._thread = threading.Thread(target=self._run, name=f"progress: {self.label}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close(finished=kind is None)

    def close(self, finished: bool = True) -> None:
        """End the display: erase the terminal line, or (off a terminal, when a line was written) say how long the
        phase took. Idempotent; waits for the thread at most briefly (it only sleeps and prints)."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join(timeout=1.0)
        self._thread = None
        if not self._lock.acquire(timeout=1.0):  # the thread is stuck writing to a full pipe: leave it
            return
        try:
            if self.tty and self.drawn:
                self._write("\r" + " " * self.drawn + "\r")
                self.drawn = 0
            elif not self.tty and self.lines and finished:
                self._write(f"{self.command}: {self.label}: done in {time.monotonic() - self.start:.0f} s\n")
        finally:
            self._lock.release()

    def update(self, done: int, total: int) -> None:
        """``done`` of ``total`` rows (or other :attr:`unit`) are finished."""
        self.done, self.total = done, total

    __call__ = update

    # -- what is shown ---------------------------------------------------------------------------------------

    def status(self, now: float | None = None) -> str:
        """The line off a terminal, without its prefix: ``solving: 20 s elapsed`` (with rows when counted)."""
        elapsed = (time.monotonic() if now is None else now) - self.start
        rows = f", {self.done:,}/{self.total:,} {self.unit}" if self.total else ""
        return f"{self.label}: {elapsed:.0f} s elapsed{rows}"

    def bar(self, now: float | None = None, tick: int = 0) -> str:
        """The line drawn on a terminal: ``verifying [#####.....] 4/8 rows 3 s``, or a spinner when nothing is
        counted."""
        elapsed = (time.monotonic() if now is None else now) - self.start
        if self.total:
            filled = _BAR * min(self.done, self.total) // self.total
            return (
                f"{self.label} [{'#' * filled}{'.' * (_BAR - filled)}] {self.done}/{self.total} {self.unit} "
                f"{elapsed:.0f} s"
            )
        return f"{self.label} {_SPINNER[tick % len(_SPINNER)]} {elapsed:.0f} s"

    def _run(self) -> None:
        if self.tty:
            if self._stop.wait(TERMINAL_DELAY):
                return
            tick = 0
            while not self._stop.is_set():
                with self._lock:
                    if self._stop.is_set():
                        return
                    line = self.bar(tick=tick)[: max(10, shutil.get_terminal_size().columns - 1)]
                    self._write("\r" + line + " " * max(0, self.drawn - len(line)))
                    self.drawn = max(self.drawn, len(line))
                tick += 1
                self._stop.wait(TERMINAL_TICK)
            return
        while not self._stop.wait(max(0.0, self.start + (self.lines + 1) * INTERVAL - time.monotonic())):
            with self._lock:
                if self._stop.is_set():
                    return
                self._write(f"{self.command}: {self.status()}\n")
                self.lines += 1

    def _write(self, text: str) -> None:
        try:  # one write per line: lines from the main thread (warnings) do not cut into it
            stream = self.stream if self.stream is not None else sys.stderr  # set when the phase starts
            stream.write(text)
            stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr: progress is not worth an error
            pass


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
