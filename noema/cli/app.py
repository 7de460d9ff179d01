"""The ``noema`` parser, built from the table of commands, and ``main``, which runs one.

Adding a command is an entry in :data:`COMMANDS` (a :class:`~noema.cli.common.Command` from the
module of its group); adding a flag is a line in that command's ``add_arguments``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from noema._version import __version__
from noema.cli.build import BUILD
from noema.cli.bundles import DECODE, ENTITY, INFO, MERGE, NOTATION, VALIDATE
from noema.cli.common import Command, CommandError
from noema.cli.evaluation import EVAL
from noema.cli.query import QUERY, SHOW
from noema.cli.serving import SERVE
from noema.errors import NoemaError

__all__ = ["COMMANDS", "build_parser", "main"]

# In the order ``noema --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    BUILD,
    QUERY,
    SHOW,
    INFO,
    ENTITY,
    NOTATION,
    DECODE,
    MERGE,
    EVAL,
    SERVE,
    VALIDATE,
)

# What a user's input or machine can cause, shown as one ``Error: ...`` line: Noema's own
# errors, the CLI's usage errors, and files or streams that cannot be read or written (a
# missing file, a full disk, bytes that are not UTF-8). Anything else is a bug in Noema and
# keeps its traceback.
EXPECTED_ERRORS = (NoemaError, CommandError, OSError, UnicodeError)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``noema`` command."""
    parser = argparse.ArgumentParser(
        prog="noema",
        description="Build knowledge bases from documents and retrieve facts as compact notation.\n\n"
        'Example:\n  noema build docs/ -o kb.noema\n  noema query kb.noema "Who is Google\'s CEO?"',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"noema {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``noema`` command; returns the exit status."""
    _open_closed_streams()
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except BrokenPipeError:
        # the reader went away (`noema notation kb.noema | head`): stop quietly, as Unix tools
        # do, with the status of a process ended by SIGPIPE; stdout goes to /dev/null so the
        # interpreter's last flush does not fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except EXPECTED_ERRORS as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("Error: interrupted", file=sys.stderr)
        return 130


def _open_closed_streams() -> None:
    """Started with stdout or stderr closed (``2>&-``), Python sets it to ``None`` and every
    progress line or warning raised AttributeError: such a stream becomes /dev/null. Opened on
    the lowest free descriptor, it also takes the closed one's number, so no file Noema opens
    later (a bundle being written) gets descriptor 2 and a library's message on it."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
