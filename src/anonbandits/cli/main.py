"""Entry point of the ``anonbandits`` command.

Each subcommand is a module of this package with ``add_parser(subparsers)`` and ``run(args) -> int``.
Errors a user can cause (from either layer) become one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from anonbandits.errors import AnonBanditsError
from anondecomp.errors import AnonDecompError

SUBCOMMANDS = ("decompose", "verify", "simulate", "beta", "bench")

EXIT_USER_ERROR = 2


class _Parser(argparse.ArgumentParser):
    """argparse exits with 2 on usage errors already; keep its one-line message, drop the usage dump."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(EXIT_USER_ERROR, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="anonbandits", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in SUBCOMMANDS:
        importlib.import_module(f"anonbandits.cli.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if rest and not getattr(args, "accepts_extra", False):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.extra = rest
    try:
        return int(args.func(args) or 0)
    except (AnonDecompError, AnonBanditsError) as exc:
        print(f"anonbandits {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("anonbandits: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
