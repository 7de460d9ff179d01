"""The sentence sidecar ``graph.columns`` stores, read in place: each sentence's facts and key,
the documents' sentences, the topics and the compared forms are mappings over the arrays,
looked up when a retrieval asks, not dicts over every sentence made on opening (they took most
of opening a large base once its records were read in place).

The arrays are checked already (:mod:`noema.storage._column_checks`,
:func:`~noema.storage._save_checks.check_sentence_sources`): the sentences are in
:func:`~noema.vectors.sentences.source_sentences` order, so each document's sentences are one
run, ordered by span.
"""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from noema.errors import BundleError, UnknownIdError
from noema.model.spans import Sentence
from noema.storage._column_ids import Heap, RowStrings
from noema.vectors.sentences import StoredSentences, key_with_digest, split_key

__all__ = ["stored_sentences"]

_K = TypeVar("_K")
_V = TypeVar("_V")


class _Rows:
    """The sidecar's sentences by row, and the row of a sentence."""

    def __init__(
        self,
        arrays: Mapping[str, npt.NDArray[Any]],
        heap: Heap,
        doc_ids: Sequence[str],
        doc_rows: Mapping[str, int],
        fact_ids: Callable[[int], str],
    ) -> None:
        self.document = arrays["sentence_document"]
        self.start, self.end = arrays["sentence_start"], arrays["sentence_end"]
        self.digest = arrays["sentence_digest"]
        self.fact_range, self.fact = arrays["sentence_fact_range"], arrays["sentence_fact"]
        self.heap, self.doc_ids, self.doc_rows, self.fact_ids = heap, doc_ids, doc_rows, fact_ids
        n = len(self.document)
        runs = np.flatnonzero(np.diff(self.document)) + 1
        firsts = np.concatenate([[0], runs]).astype(np.int64) if n else np.zeros(0, np.int64)
        lasts = np.concatenate([runs, [n]]).astype(np.int64) if n else np.zeros(0, np.int64)
        self.run_documents = self.document[firsts]  # the documents with sentences, in order
        self.first = np.full(len(doc_ids), -1, np.int64)
        self.last = np.zeros(len(doc_ids), np.int64)
        self.first[self.run_documents] = firsts
        self.last[self.run_documents] = lasts

    def __len__(self) -> int:
        return len(self.document)

    def sentence(self, row: int) -> Sentence:
        return Sentence(self.doc_ids[self.document[row]], int(self.start[row]), int(self.end[row]))

    def row(self, sentence: object) -> int | None:
        if not isinstance(sentence, Sentence):
            return None
        document = self.doc_rows.get(sentence.document_id)
        if document is None or self.first[document] < 0:
            return None
        a, b = int(self.first[document]), int(self.last[document])
        at = a + int(np.searchsorted(self.start[a:b], sentence.start))
        while at < b and self.start[at] == sentence.start:
            if self.end[at] == sentence.end:
                return at
            at += 1
        return None

    def facts(self, row: int) -> tuple[str, ...]:
        a, b = int(self.fact_range[row]), int(self.fact_range[row + 1])
        return tuple(map(self.fact_ids, self.fact[a:b].tolist()))

    def key(self, row: int) -> str:
        return key_with_digest(self.sentence(row), self.heap[self.digest[row]])

    def row_of_key(self, key: object) -> int | None:
        sentence = split_key(key) if isinstance(key, str) else None
        row = self.row(sentence) if sentence is not None else None
        return row if row is not None and self.key(row) == key else None

    def of_document(self, document: int) -> tuple[Sentence, ...]:
        a = int(self.first[document])
        if a < 0:
            return ()
        return tuple(self.sentence(row) for row in range(a, int(self.last[document])))


class _RowItems(ItemsView[Any, Any]):
    """Items read row by row, not looked up by key (a write lists them all once)."""

    _mapping: _ByRow[Any, Any]

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        mapping = self._mapping
        for row in range(len(mapping.rows)):
            yield mapping.key_at(row), mapping.value(row)


class _ByRow(Mapping[_K, _V]):
    """A value per sentence row, in sidecar order, under the key ``key_at`` gives a row (the
    sentence, or its key), found again by ``row_of``."""

    def __init__(
        self,
        rows: _Rows,
        key_at: Callable[[int], _K],
        row_of: Callable[[object], int | None],
        value: Callable[[int], _V],
    ) -> None:
        self.rows, self.key_at, self.row_of, self.value = rows, key_at, row_of, value

    def items(self) -> ItemsView[_K, _V]:
        return _RowItems(self)

    def __getitem__(self, key: _K) -> _V:
        row = self.row_of(key)
        if row is None:
            raise UnknownIdError(f"no sentence {key!r} in the sidecar")
        return self.value(row)

    def __contains__(self, key: object) -> bool:
        return self.row_of(key) is not None

    def __iter__(self) -> Iterator[_K]:
        return map(self.key_at, range(len(self.rows)))

    def __len__(self) -> int:
        return len(self.rows)


class _Keys(RowStrings):
    """The sentence keys in row order: the ids of the sidecar's vectors."""

    def __init__(self, rows: _Rows) -> None:
        self.rows = rows

    def at(self, row: int) -> str:
        return self.rows.key(row)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[str]:
        return map(self.rows.key, range(len(self.rows)))


class _ByDocument(Mapping[str, tuple[Sentence, ...]]):
    """Each document's sentences, documents in sidecar order."""

    def __init__(self, rows: _Rows) -> None:
        self.rows = rows

    def __getitem__(self, document_id: str) -> tuple[Sentence, ...]:
        document = self.rows.doc_rows.get(document_id)
        if document is None or self.rows.first[document] < 0:
            raise UnknownIdError(f"no sentence of document {document_id!r}")
        return self.rows.of_document(document)

    def __iter__(self) -> Iterator[str]:
        return map(self.rows.doc_ids.__getitem__, self.rows.run_documents.tolist())

    def __len__(self) -> int:
        return len(self.rows.run_documents)


class _Topics(Mapping[str, tuple[str, ...]]):
    """The documents about each entity, entities in stored order."""

    def __init__(
        self,
        arrays: Mapping[str, npt.NDArray[Any]],
        entity_ids: Sequence[str],
        entity_rows: Mapping[str, int],
        doc_ids: Sequence[str],
    ) -> None:
        self.entity, self.range = arrays["topic_entity"], arrays["topic_document_range"]
        self.document = arrays["topic_document"]
        if len(np.unique(self.entity)) != len(self.entity):
            raise BundleError("graph.columns: the sentence sidecar lists an entity's topics twice")
        self.entity_ids, self.entity_rows, self.doc_ids = entity_ids, entity_rows, doc_ids
        self.topic = np.full(len(entity_ids), -1, np.int64)
        self.topic[self.entity] = np.arange(len(self.entity))

    def __getitem__(self, entity_id: str) -> tuple[str, ...]:
        row = self.entity_rows.get(entity_id)
        topic = -1 if row is None else int(self.topic[row])
        if topic < 0:
            raise UnknownIdError(f"no topic of entity {entity_id!r}")
        a, b = int(self.range[topic]), int(self.range[topic + 1])
        return tuple(map(self.doc_ids.__getitem__, self.document[a:b].tolist()))

    def __iter__(self) -> Iterator[str]:
        return map(self.entity_ids.__getitem__, self.entity.tolist())

    def __len__(self) -> int:
        return len(self.entity)


class _Forms(Mapping[str, str]):
    """The compared forms of names or titles: a dict made at the first read (only a write reads
    them, to work out the next sidecar's topics)."""

    def __init__(self, make: Callable[[], dict[str, str]]) -> None:
        self._make: Callable[[], dict[str, str]] | None = make
        self._made: dict[str, str] = {}

    def _forms(self) -> dict[str, str]:
        make = self._make
        if make is not None:
            self._made, self._make = make(), None
        return self._made

    def __getitem__(self, name: str) -> str:
        return self._forms()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._forms())

    def __len__(self) -> int:
        return len(self._forms())


def stored_sentences(
    arrays: Mapping[str, npt.NDArray[Any]],
    heap: Heap,
    doc_ids: Sequence[str],
    doc_rows: Mapping[str, int],
    entity_ids: Sequence[str],
    entity_rows: Mapping[str, int],
    fact_ids: Callable[[int], str],
) -> StoredSentences:
    """The sidecar's sentences, facts, keys, topics and compared forms over the arrays
    (``fact_ids``: the id of a fact row, relations then events)."""
    rows = _Rows(arrays, heap, doc_ids, doc_rows, fact_ids)

    def forms(kind: str) -> Callable[[], dict[str, str]]:
        names, compared = arrays[f"compared_{kind}"], arrays[f"compared_{kind}_form"]
        return lambda: dict(zip(heap.picked(names), heap.picked(compared), strict=True))

    def by_sentence(value: Callable[[int], _V]) -> _ByRow[Sentence, _V]:
        return _ByRow(rows, rows.sentence, rows.row, value)

    def by_key(value: Callable[[int], _V]) -> _ByRow[str, _V]:
        return _ByRow(rows, rows.key, rows.row_of_key, value)

    return StoredSentences(
        facts=by_sentence(rows.facts),
        keys=by_sentence(rows.key),
        topics=_Topics(arrays, entity_ids, entity_rows, doc_ids),
        names=_Forms(forms("name")),
        titles=_Forms(forms("title")),
        by_key=by_key(rows.sentence),
        by_document=_ByDocument(rows),
        key_list=_Keys(rows),
        key_rows=by_key(lambda row: row),
    )
