"""Progress of the long stages (parsing, embedding, retrieving) on stderr."""

from __future__ import annotations

import shutil
import sys
import time
from typing import Any

from noema.kb import IngestReport, KnowledgeBase
from noema.model.records import Document
from noema.vectors.embed import current_embedding_stage

__all__ = ["EmbeddingProgress", "Progress", "ingest_with_progress"]


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


class EmbeddingProgress:
    """The embedding of one ingest as a bar per stage, each named for what it embeds
    ("embedding names" while a batch is merged, "embedding facts", "embedding sentences") and
    counting that stage's own texts. The callback's numbers run on across the stages of one
    count (facts, then sentences) and start again for each merged batch."""

    def __init__(self) -> None:
        self.bar: Progress | None = None
        self.stage = ""
        self.offset = 0
        self.last = 0

    def __call__(self, done: int, total: int) -> None:
        stage = current_embedding_stage()
        if self.bar is None or stage != self.stage or done < self.last:
            self.close()
            self.bar = Progress(f"embedding {stage}", "texts")
            self.stage, self.offset = stage, done
        self.last = done
        self.bar(done - self.offset, total - self.offset)

    def close(self) -> None:
        """End the current bar where it stands (a stage ends with its last call)."""
        if self.bar is not None and self.bar.bar is not None:
            self.bar.bar.close()
        self.bar = None


def ingest_with_progress(kb: KnowledgeBase, documents: list[Document]) -> IngestReport:
    """``kb.ingest`` with the parsing and the embedding progress on stderr."""
    embedding = EmbeddingProgress()
    try:
        return kb.ingest(
            documents, progress=Progress("parsing", "documents"), embed_progress=embedding
        )
    finally:
        embedding.close()
