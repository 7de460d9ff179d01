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

- ``graph.json`` (beside ``graph.columns``) is first compared without being parsed: the
  ``graph.json`` a save writes for the graph ``graph.columns`` holds is encoded a batch of
  records at a time, as the writer encodes it, through sha256, and the digest compared with the
  member's (which the member's bytes are checked against: by ``verify``, or as a save copies
  them). Only where they differ (another writer's formatting, or another graph) is
  ``graph.json`` parsed, within the memory budget, and compared record by record: the same
  documents (ids, texts and metadata), entities, relations, events and merge log, in the same
  order. ``verify`` also refuses a ``graph.json`` the budget would not let the bundle be opened
  from, as before; a copying save refuses for memory only where it must parse, and says so.
- ``index.faiss`` (whose header and size every opening checks) is compared byte for byte with
  the vectors of ``embeddings.bin``.
- ``sentences.words`` (whose structure opening checks) is checked to be written for the
  sidecar's sentences: the digest of the sentence keys it holds is made again from the keys in
  row order (each key hashes its sentence's text). Its postings are not made again from the
  texts: that is the work the member spares.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sized
from dataclasses import dataclass
from itertools import islice
from typing import Any, NoReturn

from noema.errors import BundleError, quote_value
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
from noema.storage.members import COLUMNS_MEMBER, GRAPH_MEMBER, WORDS_MEMBER
from noema.vectors.index import VectorIndex
from noema.vectors.sentences import SentenceIndex
from noema.vectors.words import sentence_keys_digest

__all__ = ["Agreement", "written_graph_json_digest"]

INDEX_MEMBER = "index.faiss"
# Compared a block at a time, each block's pages of a mapped file released before the next.
_COMPARE_STEP = 64 << 20
# Records encoded per call of the JSON encoder: its C loop does the work, a batch at a time.
_ENCODE_BATCH = 4096


@dataclass(frozen=True)
class Agreement:
    """What a bundle's members must agree on, from what opening read: ``graph`` and
    ``merge_log`` (from ``graph.columns`` where ``declared`` lists it) and the fact ``index``
    (from ``embeddings.bin``). ``within_budget``: refuses, from the zip directory, a
    ``graph.json`` that opening the bundle from it would take more memory than allowed
    (``verify``); ``parse_budget``: the same, said as a copying save must say it (it parses
    ``graph.json`` only where it is not what this version writes)."""

    name: str  # what error messages call the bundle
    declared: dict[str, Any]
    graph: SemanticGraph
    merge_log: tuple[MergeRecord, ...]
    index: VectorIndex
    within_budget: Callable[[zipfile.ZipFile], None]
    parse_budget: Callable[[zipfile.ZipFile], None]
    # the sidecar and the digest of its keys that sentences.words holds, where it was read
    sentences: SentenceIndex | None = None
    words_digest: bytes | None = None

    def check(self, zf: zipfile.ZipFile, mapped: memoryview | None, *, rows: bool) -> None:
        """Check ``graph.json`` against ``graph.columns``, and (``rows``) ``index.faiss``
        against the vectors, reading them from ``zf`` (the bundle's bytes ``mapped``, where it
        is in memory or mapped from its file). Every member's sha256 was checked before.

        Raises:
            BundleError: naming the member that does not agree, and how; or ``graph.json``
                over the memory budget.
        """
        if COLUMNS_MEMBER in self.declared:
            # validate promises graph.json, the source of truth, opens within the budget
            self.within_budget(zf)
            if not self._written_as_now():
                self._compare_graph_json(zf, mapped)
        if rows:
            self._check_index_rows(zf, mapped)
        self._check_words()

    def later(
        self, mapped: memoryview, check: Callable[[], None] | None
    ) -> Callable[[str, Callable[[], None]], None]:
        """:meth:`check` (rows too) to run later, from the bytes the bundle was opened from,
        before a save copies them; ``check`` refuses them once their file was written in place.

        What it returns takes ``consequence``, said after a refusal, and ``damage``, which
        refuses a member that does not match its sha256: run before a refusal for disagreement
        (a save copying the members hashes them only as it copies them, and a damaged member is
        named as damaged, not as another's disagreement). A ``graph.json`` that would have to
        be parsed over the memory budget is refused for that, without either.
        """

        def run(consequence: str, damage: Callable[[], None]) -> None:
            try:
                if check is not None:
                    check()
                parse = COLUMNS_MEMBER in self.declared and not self._written_as_now()
            except BundleError as exc:
                damage()
                raise BundleError(f"{exc}; {consequence}") from None
            if parse:
                in_zip(ViewFile(mapped), self.name, self.parse_budget)

            def agree(zf: zipfile.ZipFile) -> None:
                if parse:
                    self._compare_graph_json(zf, mapped)
                self._check_index_rows(zf, mapped)
                self._check_words()

            try:
                in_zip(ViewFile(mapped), self.name, agree)
            except BundleError as exc:
                damage()
                raise BundleError(f"{exc}; {consequence}") from None

        return run

    def _check_words(self) -> None:
        if self.words_digest is None or self.sentences is None:
            return
        if sentence_keys_digest(self.sentences.vectors.ids) != self.words_digest:
            raise BundleError(
                f"{self.name!r}: {WORDS_MEMBER} is not the word index of the sidecar's "
                "sentences: it was written for other sentence keys (altered, or written by "
                "another tool)"
            )

    def _written_as_now(self) -> bool:
        """Whether ``graph.json`` is, by its declared size and sha256, the bytes a save writes
        for the graph ``graph.columns`` holds; found without parsing it."""
        size, digest = declared_entry(self.declared, GRAPH_MEMBER, self.name)
        return written_graph_json_digest(self.graph, self.merge_log) == (size, digest)

    def _compare_graph_json(self, zf: zipfile.ZipFile, mapped: memoryview | None) -> None:
        size, digest = declared_entry(self.declared, GRAPH_MEMBER, self.name)
        # hashed as it is read: what is compared is what the manifest declares
        data = load_json(
            checked_member(zf, GRAPH_MEMBER, size, digest, self.name, mapped),
            GRAPH_MEMBER,
            self.name,
        )
        if data.get("format_version") != GRAPH_FORMAT_VERSION:
            self._disagree(f"its format_version is {quote_value(data.get('format_version'))}")
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
                    self._disagree(
                        f"its {kind} differ from graph.columns' from {quote_value(which)}"
                    )

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


def written_graph_json_digest(
    graph: SemanticGraph, merge_log: tuple[MergeRecord, ...]
) -> tuple[int, str] | None:
    """The size and sha256 of the ``graph.json`` a save writes for ``graph`` and ``merge_log``
    (:meth:`SemanticGraph.to_dict` with the merge log, encoded by
    :func:`~noema.model.records.json_bytes`), encoded a batch of records at a time rather than
    whole: at a million facts the whole is gigabytes of objects and a gigabyte of text. The
    same bytes, since JSON encodes an object's sorted keys and a list's items one after another
    with the same separators. ``None`` where it cannot be encoded (no save could write it).
    """
    lists: dict[str, Iterable[Any]] = {
        "documents": map(_document_dict, graph.documents.values()),
        "entities": map(record_to_dict, graph.entities.values()),
        "relations": map(record_to_dict, graph.relations.values()),
        "events": map(record_to_dict, graph.events.values()),
        "merge_log": map(record_to_dict, merge_log),
    }
    hasher, size = hashlib.sha256(), 0
    try:
        for text in _json_pieces({**lists, "format_version": GRAPH_FORMAT_VERSION}):
            data = text.encode("utf-8")
            hasher.update(data)
            size += len(data)
    except (TypeError, ValueError):  # NaN, a lone surrogate: compared record by record instead
        return None
    return size, hasher.hexdigest()


def _json_pieces(top: dict[str, Any]) -> Iterator[str]:
    """The text of ``json_bytes(top)``, where each list value of ``top`` may be any iterable of
    records: its records are encoded a batch at a time."""
    separator = "{"
    for key in sorted(top):
        yield f"{separator}{_encode(key)}:"
        separator = ","
        value = top[key]
        if not isinstance(value, Iterable):
            yield _encode(value)
            continue
        records, joined = iter(value), "["
        while batch := list(islice(records, _ENCODE_BATCH)):
            yield joined + _encode(batch)[1:-1]  # the items, without their list's brackets
            joined = ","
        yield "[]" if joined == "[" else "]"
    yield "}"


def _encode(value: Any) -> str:
    """``value`` as :func:`~noema.model.records.json_bytes` encodes it (before UTF-8)."""
    return json.dumps(
        value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
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
