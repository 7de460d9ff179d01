"""What every command module shares: the :class:`Command` entry of the table, the CLI's own
usage error, and the argument types and groups more than one command takes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints

from noema.resources import DEFAULT_EMBEDDING_MODEL, DEFAULT_SPACY_MODEL
from noema.retrieval.options import RetrieveOptions, option_help, option_names
from noema.storage.container import write_target

DEFAULTS = RetrieveOptions()

__all__ = [
    "DEFAULTS",
    "Command",
    "CommandError",
    "add_models",
    "add_paths",
    "add_retrieve_arguments",
    "add_root",
    "checked_output",
    "checked_question",
    "positive",
    "warn",
]


class CommandError(Exception):
    """A usage problem found by the CLI itself (shown like a library error)."""


@dataclass(frozen=True)
class Command:
    """One ``noema`` command, as the table in :mod:`noema.cli.app` lists it.

    Attributes:
        name: what follows ``noema`` on the command line.
        help: one sentence, shown in ``noema --help`` and atop the command's own help.
        example: one or more runs of the command (later lines indented by two spaces).
        add_arguments: adds the command's arguments and flags to its parser.
        run: does the work from the parsed arguments; returns the exit status.
    """

    name: str
    help: str
    example: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]

    def register(self, commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        """Add this command's parser, with its example, to the ``noema`` parser's commands."""
        parser = commands.add_parser(
            self.name,
            help=self.help,
            description=f"{self.help}\n\nExample:\n  {self.example}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        self.add_arguments(parser)
        parser.set_defaults(run=self.run)


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def checked_output(path: str) -> str:
    """An output path whose directory exists, checked before any work (a build parses and
    embeds for minutes first); the directory is not made, so a typo does not make one."""
    parent = Path(path).parent
    if not parent.is_dir():
        raise CommandError(f"{path}: the directory {str(parent)!r} does not exist; create it first")
    write_target(path)  # a directory, a device or a pipe: refused now, not after the work
    return path


def checked_question(text: str) -> str:
    if not text.strip():
        raise CommandError("question is empty; ask something to retrieve facts for")
    return text


def warn(message: str) -> None:
    print(f"Warning: {message}", file=sys.stderr)


def add_paths(parser: argparse.ArgumentParser, help: str) -> None:
    """The documents a command reads: one or more files or folders."""
    parser.add_argument("paths", nargs="+", metavar="PATH", help=help)


def add_models(parser: argparse.ArgumentParser) -> None:
    """The models a command that reads documents builds its knowledge base with."""
    parser.add_argument("--spacy-model", default=DEFAULT_SPACY_MODEL)
    parser.add_argument("--embedding-model", default=DEFAULT_EMBEDDING_MODEL)


def add_root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="document ids are file paths relative to DIR (default: file: and the absolute path)",
    )


def add_retrieve_arguments(
    parser: argparse.ArgumentParser, names: Sequence[str] | None = None
) -> None:
    """A flag for each retrieve option in ``names`` (default: all of them), made from
    :class:`~noema.RetrieveOptions`: the flag is the option's name (``--top-k``), its default,
    type or choices and help are the option's own, so a new option is a new flag."""
    hints = get_type_hints(RetrieveOptions)
    for name in names or option_names():
        kind = hints[name]
        choices = get_args(kind) if get_origin(kind) is Literal else None
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            default=getattr(DEFAULTS, name),
            help=option_help(name),
            **({"choices": choices} if choices else {"type": _scalar(kind)}),
        )


def _scalar(kind: Any) -> Callable[[str], Any]:
    """The argparse type of an option annotated ``kind`` (``float | None`` reads as float)."""
    inner = [k for k in get_args(kind) if k is not type(None)] or [kind]
    return inner[0]  # type: ignore[no-any-return]
