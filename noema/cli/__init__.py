"""The ``noema`` command: a thin layer over the library, and the only part of Noema that prints.

Library errors are shown as one ``Error: ...`` line on stderr with exit status 1; a bug keeps
its traceback. Each command is an entry of the table in :mod:`noema.cli.app`, made in the
module of its group: ``build``; ``query`` and ``show``; ``info``, ``notation``, ``decode``,
``merge`` and ``validate`` (:mod:`noema.cli.bundles`); ``eval`` (:mod:`noema.cli.evaluation`);
``serve`` (:mod:`noema.cli.serving`).
"""

from noema.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
