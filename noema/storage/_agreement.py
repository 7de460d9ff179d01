"""Whether a bundle's members agree with one another, which no member's own checks and no sha256
see: whoever writes a bundle writes its manifest too, so a ``graph.json`` telling another graph
than ``graph.columns``, or an ``index.faiss`` over other rows than ``embeddings.bin``, with
hashes written to match, passes every hash.

Opening reads the graph from ``graph.columns`` and the vectors from ``embeddings.bin``, and never
parses ``graph.json`` or reads the rows of ``index.faiss``: such a bundle opened, answered, and a
save of it copied the lying member byte for byte into a new bundle. What they hold is checked
here, by ``load(verify=True)`` and ``noema validate`` (as the bundle is opened), and before a
save of the knowledge base copies the bundle's members (once, from the bytes it was opened
from), so a copying save refuses what ``validate`` refuses:

- ``graph.json`` (beside ``graph.columns``) is parsed, where the memory budget allows opening
  the bundle from it, and compared record by record with what ``graph.columns`` holds: the same
  documents (ids, texts and metadata), entities, relations, events and merge log, in the same
  order. Each of its records is made to compare it, as a save making ``graph.json`` makes them.
- ``index.faiss`` (whose header and size every opening checks) is compared byte for byte with
  the vectors of ``embeddings.bin``.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Iterable, Sized
from dataclasses import dataclass
from typing import Any, NoReturn

from noema.errors import BundleError
from noema.model.graph import SemanticGraph
from noema.model.graphjson import GRAPH_FORMAT_VERSION
from noema.model.records import Document, MergeRecord, record_to_dict
from noema.storage.container import (
    MAX_MEMBER_BYTES,
    Blob,
    ViewFile,
    checked_member,
    forget_pages,
    in_zip,
    load_json,
    read_member,
)
from noema.storage.manifest import declared_entry
from noema.storage.members import COLUMNS_MEMBER, GRAPH_MEMBER
from noema.vectors.index import VectorIndex

__all__ = ["Agreement"]

INDEX_MEMBER = "index.faiss"
# Compared a block at a time, each block's pages of a mapped file released before the next.
_COMPARE_STEP = 64 << 20


@dataclass(frozen=True)
class Agreement:
    """What a bundle's members must agree on, from what opening read: ``graph`` and
    ``merge_log`` (from ``graph.columns`` where ``declared`` lists it) and the fact ``index``
    (from ``embeddings.bin``). ``within_budget``: refuses, from the zip directory, a
    ``graph.json`` that opening the bundle from it would take more memory than allowed."""

    name: str  # what error messages call the bundle
    declared: dict[str, Any]
    graph: SemanticGraph
    merge_log: tuple[MergeRecord, ...]
    index: VectorIndex
    within_budget: Callable[[zipfile.ZipFile], None]

    def check(self, zf: zipfile.ZipFile, mapped: memoryview | None, *, rows: bool) -> None:
        """Check ``graph.json`` against ``graph.columns``, and (``rows``) ``index.faiss``
        against the vectors, reading them from ``zf`` (the bundle's bytes ``mapped``, where it
        is in memory or mapped from its file).

        Raises:
            BundleError: naming the member that does not agree, and how.
        """
        if COLUMNS_MEMBER in self.declared:
            self._check_graph_json(zf, mapped)
        if rows:
            self._check_index_rows(zf, mapped)

    def later(self, mapped: memoryview, check: Callable[[], None] | None) -> Callable[[], None]:
        """:meth:`check` (rows too) to run later, from the bytes the bundle was opened from;
        ``check`` refuses them once their file was written in place."""

        def run() -> None:
            if check is not None:
                check()
            in_zip(ViewFile(mapped), self.name, lambda zf: self.check(zf, mapped, rows=True))

        return run

    def _check_graph_json(self, zf: zipfile.ZipFile, mapped: memoryview | None) -> None:
        self.within_budget(zf)
        size, digest = declared_entry(self.declared, GRAPH_MEMBER, self.name)
        # hashed as it is read: what is compared is what the manifest declares
        data = load_json(
            checked_member(zf, GRAPH_MEMBER, size, digest, self.name, mapped),
            GRAPH_MEMBER,
            self.name,
        )
        if data.get("format_version") != GRAPH_FORMAT_VERSION:
            self._disagree(f"its format_version is {data.get('format_version')!r:.80}")
        graph = self.graph
        kinds: tuple[tuple[str, Iterable[Any], Sized, Callable[[Any], Any]], ...] = (
            ("documents", graph.documents.values(), graph.documents, _document_dict),
            ("entities", graph.entities.values(), graph.entities, record_to_dict),
            ("relations", graph.relations.values(), graph.relations, record_to_dict),
            ("events", graph.events.values(), graph.events, record_to_dict),
            ("merge_log", self.merge_log, self.merge_log, record_to_dict),
        )
        for kind, records, counted, as_dict in kinds:
            listed = data.get(kind, [] if kind == "merge_log" else None)
            if not isinstance(listed, list) or len(listed) != len(counted):
                held = f"{len(listed):,}" if isinstance(listed, list) else "no list of"
                self._disagree(f"it holds {held} {kind} where graph.columns holds {len(counted):,}")
            for at, (raw, record) in enumerate(zip(listed, records, strict=True)):
                if raw != as_dict(record):
                    which = getattr(record, "id", None) or f"record {at}"
                    self._disagree(f"its {kind} differ from graph.columns' from {which!r}")

    def _disagree(self, how: str) -> NoReturn:
        raise BundleError(
            f"{self.name!r}: {GRAPH_MEMBER} does not hold the graph graph.columns holds: {how} "
            "(altered, or written by another tool)"
        )

    def _check_index_rows(self, zf: zipfile.ZipFile, mapped: memoryview | None) -> None:
        size, _ = declared_entry(self.declared, INDEX_MEMBER, self.name)
        blob = read_member(zf, INDEX_MEMBER, min(MAX_MEMBER_BYTES, size), self.name, mapped)
        header, rows = self.index.index_pieces()
        if not _same_bytes(blob, (header, rows), mapped):
            raise BundleError(
                f"{self.name!r}: {INDEX_MEMBER} is not the inner-product flat index of the "
                "vectors in embeddings.bin: its rows differ (altered, or written by another tool)"
            )


def _document_dict(document: Document) -> dict[str, Any]:
    """A document as graph.json holds it (:meth:`SemanticGraph.to_dict`)."""
    return {"id": document.id, "text": document.text, "metadata": dict(document.metadata)}


def _same_bytes(blob: Blob, pieces: tuple[Blob, ...], mapped: memoryview | None) -> bool:
    """Whether ``blob`` is ``pieces`` one after another, compared a block at a time (neither
    copied: at a million facts each is 1.5 GB)."""
    whole = memoryview(blob).cast("B")
    at = 0
    for piece in pieces:
        view = memoryview(piece).cast("B")
        if at + len(view) > len(whole):
            return False
        for start in range(0, len(view), _COMPARE_STEP):
            end = min(start + _COMPARE_STEP, len(view))
            block = whole[at + start : at + end]
            if block != view[start:end]:
                return False
            forget_pages(mapped, block)
        at += len(view)
    return at == len(whole)
