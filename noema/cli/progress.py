"""Progress of the long stages (parsing, embedding, retrieving) on stderr."""

from __future__ import annotations

import shutil
import sys
import time
from typing import Any

from noema.kb import IngestReport, KnowledgeBase
from noema.model.graph import Document

__all__ = ["Progress", "ingest_with_progress"]


class Progress:
    """A stage's progress on stderr, as a ``(done, total)`` callback: a tqdm bar on a terminal;
    elsewhere (CI logs, a notebook's subprocess) a plain line when the stage starts, every
    ``every`` seconds and when it ends, since a bar redrawn with carriage returns is noise
    in a log."""

    def __init__(self, label: str, unit: str, every: float = 10.0) -> None:
        self.label, self.unit, self.every = label, unit, every
        self.bar: Any = None
        self.last = 0.0
        self.printed: tuple[int, int] | None = None

    def __call__(self, done: int, total: int) -> None:
        if sys.stderr.isatty():
            self._draw(done, total)
            return
        now = time.monotonic()
        ended = done >= total
        if (done, total) == self.printed or (
            self.printed and not ended and now - self.last < self.every
        ):
            return
        self.last, self.printed = now, (done, total)
        share = f" ({100 * done // total}%)" if total else ""
        print(f"{self.label}: {done}/{total} {self.unit}{share}", file=sys.stderr, flush=True)

    def _draw(self, done: int, total: int) -> None:
        from tqdm import tqdm

        if self.bar is None:
            self.bar = tqdm(
                total=total,
                desc=self.label,
                unit=f" {self.unit}",
                file=sys.stderr,
                # a terminal that reports no size (some pseudo-terminals) gets 80x24: tqdm
                # itself would hide its bar there
                ncols=shutil.get_terminal_size().columns,
                nrows=shutil.get_terminal_size().lines,
            )
        if self.bar.total != total:
            self.bar.total = total
        self.bar.update(done - self.bar.n)
        if done >= total:
            self.bar.close()
            self.bar = None


def ingest_with_progress(kb: KnowledgeBase, documents: list[Document]) -> IngestReport:
    """``kb.ingest`` with the parsing and the embedding progress on stderr."""
    return kb.ingest(
        documents,
        progress=Progress("parsing", "documents"),
        embed_progress=Progress("embedding facts and sentences", "texts"),
    )
