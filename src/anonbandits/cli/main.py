"""Entry point of the anonbandits command.

Each subcommand is a module of this package with ``add_parser(subparsers)`` and ``run(args) -> int``.
Errors a user can cause (from either layer) become one line on stderr and exit code 2, never a traceback (a
command line without a subcommand gets the whole usage, then that line);
a closed output pipe (``| head``) ends the command quietly; SIGTERM unwinds like Ctrl-C, so atomic writers
remove their temporary files. ``decompose``, ``verify`` and ``beta`` end within :data:`INTERRUPT_GRACE` seconds of
Ctrl-C or SIGTERM even inside a long solver call that does not return to Python (a HiGHS solve): see
:class:`_Deadline`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import re
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from typing import NoReturn

from anonbandits.cli.options import Terminated, silence_stdout
from anonbandits.errors import AnonBanditsError
from anondecomp.errors import AnonDecompError
from anondecomp.io import discard_pending_outputs

SUBCOMMANDS = ("decompose", "verify", "replan", "stream", "simulate", "beta", "bench")

EXIT_USER_ERROR = 2

# seconds the command may take to unwind after Ctrl-C or SIGTERM before _Deadline ends it (the goal is 3 s)
INTERRUPT_GRACE = 2.0
# the subcommands _Deadline guards: their long phases are solver calls with no output file open, or writers
# whose temporary files anondecomp.io.discard_pending_outputs knows; simulate and bench keep their own handling
# (simulate saves the finished runs after a signal, however long that takes)
DEADLINE_COMMANDS = ("decompose", "verify", "replan", "stream", "beta")

# The solver layer speaks Python (it is a library); on the command line the same advice names the flags.
_CLI_WORDING = [
    (re.compile(r"\bbest_effort(=True)?"), "--best-effort"),
    (re.compile(r"\bmethod='(\w+)' or '(\w+)'"), r"--method \1 or \2"),
    (re.compile(r"\bmethod='(\w+)'"), r"--method \1"),
    (re.compile(r"\bdemand=D\b"), "--demand D"),
]


def cli_wording(message: str) -> str:
    """``message`` with the solver layer's Python spellings (``best_effort``) replaced by flags."""
    for pattern, flag in _CLI_WORDING:
        message = pattern.sub(flag, message)
    return message


class _Parser(argparse.ArgumentParser):
    """argparse exits with 2 on usage errors already; keep its one-line message, drop the usage dump.

    Help text comes from docstrings, so reST literals (double backquotes) are shown as plain text.
    """

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USER_ERROR, f"{self.prog}: error: {message}\n")

    def format_help(self) -> str:
        return super().format_help().replace("``", "")


def _raise_terminated(signum, frame) -> None:
    raise Terminated


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """SIGTERM raises Terminated inside the block (a handler can be set only from the main thread)."""
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, previous)
    else:
        yield


class _Deadline:
    """End the process ``grace`` seconds after Ctrl-C or SIGTERM when it has not unwound by then.

    Python runs signal handlers (KeyboardInterrupt, :class:`Terminated`) in the main thread between bytecodes,
    so a signal arriving during one long call into a library that releases the GIL (a HiGHS solve: up to
    seconds) takes effect only when that call returns. The C-level signal handler also writes the signal number
    to a pipe (:func:`signal.set_wakeup_fd`); a daemon thread waits on it and, if the command is still running
    ``grace`` seconds later, removes the temporary outputs being written
    (:func:`anondecomp.io.discard_pending_outputs`), says ``interrupted`` or ``terminated`` as the normal path
    does, and ends the process with ``os._exit`` (130, or 128 + SIGTERM). When the command unwinds in time,
    nothing happens. Outside the main thread, or when a wakeup fd is already set, this does nothing.
    """

    def __init__(self, grace: float = INTERRUPT_GRACE) -> None:
        self.grace = grace
        self.done = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> _Deadline:
        if threading.current_thread() is not threading.main_thread():
            return self
        self.read_fd, self.write_fd = os.pipe()
        try:
            os.set_blocking(self.write_fd, False)
            self.previous = signal.set_wakeup_fd(self.write_fd, warn_on_full_buffer=False)
        except (OSError, ValueError):  # a platform without wakeup fds on pipes: the ordinary path only
            os.close(self.read_fd)
            os.close(self.write_fd)
            return self
        if self.previous != -1:  # someone else's wakeup fd (an event loop): leave it in place
            signal.set_wakeup_fd(self.previous)
            os.close(self.read_fd)
            os.close(self.write_fd)
            return self
        self.thread = threading.Thread(target=self._watch, name="anonbandits: interrupt deadline", daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.thread is None:
            return
        self.done.set()
        signal.set_wakeup_fd(-1)
        with contextlib.suppress(OSError):  # wake the thread: the command is over
            os.write(self.write_fd, b"\0")
        self.thread.join(timeout=1.0)
        os.close(self.read_fd)
        os.close(self.write_fd)

    def _watch(self) -> None:
        while True:
            data = os.read(self.read_fd, 64)
            if self.done.is_set() or not data:
                return
            signals = [s for s in data if s in (signal.SIGINT, signal.SIGTERM)]
            if signals:
                break
        if self.done.wait(self.grace):
            return
        discard_pending_outputs()
        code, word = (130, "interrupted") if signals[0] == signal.SIGINT else (128 + signal.SIGTERM, "terminated")
        try:  # on a terminal, after the progress line the main thread could not erase
            newline = "\n" if os.isatty(2) else ""
            os.write(2, f"{newline}anonbandits: {word}\n".encode())
        finally:
            os._exit(code)


class _Version(argparse.Action):
    """``--version``, looked up only when asked for (importlib.metadata costs startup time)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from importlib import metadata

        try:
            version = metadata.version("anonbandits")
        except metadata.PackageNotFoundError:
            version = "unknown (not installed)"
        print(f"anonbandits {version}")
        parser.exit()


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command's parser. When ``argv`` starts with a subcommand, only that subcommand's module is
    imported: ``decompose`` and ``verify`` never load the simulation stack (numba, dask, matplotlib, tqdm)."""
    parser = _Parser(
        prog="anonbandits",
        description="C-anonymous decompositions of demand graphs and "
        "privacy-preserving bandit simulations (docs/ has the formats and the methods).",
    )
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    # not required: a command line without a subcommand prints the whole usage (main), not one error line
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    first = next((a for a in argv or () if not a.startswith("-")), None)
    for name in (first,) if first in SUBCOMMANDS else SUBCOMMANDS:
        try:
            module = importlib.import_module(f"anonbandits.cli.{name}")
        except ModuleNotFoundError as exc:
            if not _needs_sim(exc):
                raise
            _unavailable(sub, name, _sim_hint(exc))
            continue
        module.add_parser(sub)
    return parser


SIM_PACKAGES = ("numba", "dask", "distributed", "matplotlib", "tqdm")


def _needs_sim(exc: ModuleNotFoundError) -> bool:
    """Whether ``exc`` is a package of the ``[sim]`` extra missing from a base install."""
    return (exc.name or "").split(".")[0] in SIM_PACKAGES


def _sim_hint(exc: ModuleNotFoundError) -> str:
    return f"needs the simulation packages ({exc.name} is not installed): pip install 'anonbandits[sim]'"


def _unavailable(sub, name: str, hint: str) -> None:
    """A subcommand whose module cannot be imported on a base install: listed, and explains itself when run."""

    def run(args: argparse.Namespace) -> int:
        raise AnonBanditsError(hint)

    sub.add_parser(name, help=f"(unavailable: {hint})", add_help=False).set_defaults(func=run, accepts_extra=True)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"anonbandits: warning: {cli_wording(str(message))}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit code, also for usage errors,
    ``--help`` and ``--version``."""
    if argv is None:
        argv = sys.argv[1:]
    try:
        parser = build_parser(argv)  # imports the subcommand's module (and the solver layer): a fraction of a second
    except KeyboardInterrupt:
        print("anonbandits: interrupted", file=sys.stderr)
        return 130
    try:
        args, rest = parser.parse_known_args(argv)
        if rest and not getattr(args, "accepts_extra", False):
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
    except SystemExit as exc:  # argparse has printed its one line (or the help) already
        return exc.code if isinstance(exc.code, int) else EXIT_USER_ERROR
    if args.command is None:  # bare `anonbandits`: the usage and the commands on stderr, exit 2 (as argparse does)
        parser.print_help(sys.stderr)
        print(f"\n{parser.prog}: error: choose a command: {', '.join(SUBCOMMANDS)}", file=sys.stderr)
        return EXIT_USER_ERROR
    args.extra = rest
    prefix = f"anonbandits {args.command}"
    with _Deadline() if args.command in DEADLINE_COMMANDS else contextlib.nullcontext():
        return _run(args, prefix)


def _run(args: argparse.Namespace, prefix: str) -> int:
    """Run the parsed command; every error a user can cause becomes one line on stderr and an exit code."""
    try:
        with _sigterm_unwinds(), warnings.catch_warnings():
            warnings.showwarning = _show_warning
            code = int(args.func(args) or 0)
            sys.stdout.flush()  # inside the try: a closed pipe must surface here, not at interpreter exit
            return code
    except (AnonDecompError, AnonBanditsError) as exc:
        print(f"{prefix}: error: {cli_wording(str(exc))}", file=sys.stderr)
        return EXIT_USER_ERROR
    except ModuleNotFoundError as exc:  # a subcommand importing a [sim] package only when it runs
        if not _needs_sim(exc):
            raise
        print(f"{prefix}: error: {_sim_hint(exc)}", file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:
        silence_stdout()
        return 0
    except OSError as exc:  # the environment, not the input: a full disk, a file vanishing mid-run
        print(
            f"{prefix}: error: {exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else ""), file=sys.stderr
        )
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("anonbandits: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("anonbandits: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM


if __name__ == "__main__":
    sys.exit(main())
