"""The records of ``graph.columns``, read in place from arrays :mod:`noema.storage.columns` has
already checked: documents, entities, relations and events are made one at a time when a reader
asks for them (:mod:`noema.model.stores`), so opening makes none.

What opening still checks over every row is vectorized or runs once per distinct string
(predicates, labels, names, times); what only a record's own fields can show (a document's
metadata too deep to save again) is checked when that record is made, and refused there as a
:class:`~noema.errors.BundleError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from noema.errors import BundleError, GraphError
from noema.model.graph import SemanticGraph
from noema.model.records import (
    ENTITY_TYPES,
    LINE_BREAKS,
    METADATA_DEPTH,
    Document,
    Entity,
    Event,
    Mention,
    Relation,
    check_json_value,
    normalize_predicate,
)
from noema.model.stores import FactsByEntity, RecordStore
from noema.storage._column_checks import KINDS
from noema.storage._column_ids import FactIds, Heap, Ids, id_checks, id_order

__all__ = ["Tables", "entity_facts", "graph_from_arrays", "version_1_arrays"]

_RECENT_DOCUMENTS = 1024
_RECENT_RECORDS = 1 << 16


class _Table:
    """One kind of record's rows: their ids (read in place, :class:`Ids`), and the record of a
    row."""

    def __init__(
        self,
        arrays: Mapping[str, npt.NDArray[Any]],
        kind: str,
        heap: Heap,
        recent: int | None = None,
    ) -> None:
        self.arrays = arrays
        self.heap = heap
        # a retrieval reads the same few hundred records many times (making each at every
        # read took a third more time per retrieval); the last ones read are kept
        self.kept = _RECENT_RECORDS if recent is None else recent
        self.record = lru_cache(maxsize=self.kept)(self.make)  # type: ignore[method-assign]
        # the ids every other index of them shares (the vector index's rows, the sidecar's
        # facts), read from the heap where they are asked for
        self.ids = Ids(heap, arrays[f"{kind}_id"], arrays[f"{kind}_id_order"])

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("record", None)  # the cache of recent records: made again
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.record = lru_cache(maxsize=self.kept)(self.make)  # type: ignore[method-assign]

    def __len__(self) -> int:
        return len(self.ids)

    def id_at(self, row: int) -> str:
        return self.ids.at(row)

    def all_ids(self) -> Sequence[str]:
        return self.ids

    def row_of(self, record_id: str) -> int | None:
        return self.ids.row_of(record_id)

    def record(self, row: int) -> Any:
        """The record of ``row`` (one of the last read, else made by :meth:`make`)."""
        return self.make(row)

    def make(self, row: int) -> Any:
        raise NotImplementedError


class _MentionRows:
    """The mentions of one kind of record, by row."""

    def __init__(self, arrays: Mapping[str, npt.NDArray[Any]], kind: str, docs: _Table) -> None:
        prefix = f"{kind}_mention"
        self.range = arrays[f"{prefix}_range"]
        self.document = arrays[f"{prefix}_document"]
        self.start, self.end = arrays[f"{prefix}_start"], arrays[f"{prefix}_end"]
        self.docs = docs

    def __call__(self, row: int) -> tuple[Mention, ...]:
        a, b = int(self.range[row]), int(self.range[row + 1])
        docs = self.document[a:b].tolist()
        return tuple(
            Mention(self.docs.id_at(d), s, e)
            for d, s, e in zip(docs, self.start[a:b].tolist(), self.end[a:b].tolist(), strict=True)
        )


class _Documents(_Table):
    def __init__(self, arrays: Mapping[str, npt.NDArray[Any]], heap: Heap) -> None:
        # fewer kept: a document's text may be long
        super().__init__(arrays, "document", heap, _RECENT_DOCUMENTS)
        self.text, self.metadata = arrays["document_text"], arrays["document_metadata"]

    def make(self, row: int) -> Document:
        doc_id = self.id_at(row)
        meta = int(self.metadata[row])
        try:
            metadata = {} if meta < 0 else orjson.loads(self.heap[meta])
            # what the writer could not write again is refused here, as from_dict refuses it
            # (orjson already refused NaN, infinities and lone surrogates)
            check_json_value(metadata, depth=METADATA_DEPTH)
            if not isinstance(metadata, dict):
                raise GraphError(f"document {doc_id!r} metadata is not an object")
        except (TypeError, ValueError, GraphError) as exc:
            raise BundleError(
                f"graph.columns: document {doc_id!r} metadata cannot be saved: {exc}"
            ) from None
        return Document(self.heap[self.text[row]], doc_id, metadata)


class _Entities(_Table):
    def __init__(self, arrays: Mapping[str, npt.NDArray[Any]], heap: Heap, docs: _Table) -> None:
        super().__init__(arrays, "entity", heap)
        self.name, self.type = arrays["entity_name"], arrays["entity_type"]
        self.confidence = arrays["entity_confidence"]
        self.alias, self.alias_range = arrays["entity_alias"], arrays["entity_alias_range"]
        self.mentions = _MentionRows(arrays, "entity", docs)

    def make(self, row: int) -> Entity:
        a, b = int(self.alias_range[row]), int(self.alias_range[row + 1])
        return Entity(
            self.id_at(row),
            self.heap[self.name[row]],
            ENTITY_TYPES[self.type[row]],
            tuple(self.heap.picked(self.alias[a:b])),
            self.mentions(row),
            float(self.confidence[row]),
        )


class _Relations(_Table):
    def __init__(self, arrays: Mapping[str, npt.NDArray[Any]], heap: Heap, docs: _Table) -> None:
        super().__init__(arrays, "relation", heap)
        self.entities = arrays["entity_id"]
        self.subject, self.object = arrays["relation_subject"], arrays["relation_object"]
        self.predicate, self.confidence = (
            arrays["relation_predicate"],
            arrays["relation_confidence"],
        )
        self.mentions = _MentionRows(arrays, "relation", docs)

    def make(self, row: int) -> Relation:
        heap, entities = self.heap, self.entities
        return Relation(
            self.id_at(row),
            heap[entities[self.subject[row]]],
            heap[self.predicate[row]],
            heap[entities[self.object[row]]],
            self.mentions(row),
            float(self.confidence[row]),
        )


class _Events(_Table):
    def __init__(self, arrays: Mapping[str, npt.NDArray[Any]], heap: Heap, docs: _Table) -> None:
        super().__init__(arrays, "event", heap)
        self.entities = arrays["entity_id"]
        self.label, self.time = arrays["event_label"], arrays["event_time"]
        self.confidence = arrays["event_confidence"]
        self.participant = arrays["event_participant"]
        self.participant_range = arrays["event_participant_range"]
        self.mentions = _MentionRows(arrays, "event", docs)

    def make(self, row: int) -> Event:
        a, b = int(self.participant_range[row]), int(self.participant_range[row + 1])
        time = int(self.time[row])
        return Event(
            self.id_at(row),
            self.heap[self.label[row]],
            tuple(self.heap.picked(self.entities[self.participant[a:b]])),
            None if time < 0 else self.heap[time],
            self.mentions(row),
            float(self.confidence[row]),
        )


def entity_facts(
    arrays: Mapping[str, npt.NDArray[Any]], entities: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
    """``entity_fact_range`` and ``entity_fact``: for entity row n, the fact rows touching it
    (relations, then events after them) in fact order, a relation of an entity with itself
    listed once. A save writes them; a member of version 1 has them worked out on opening."""
    subject, obj = arrays["relation_subject"], arrays["relation_object"]
    participant_range = arrays["event_participant_range"]
    n_relations = len(subject)
    event_rows = np.repeat(
        np.arange(len(participant_range) - 1, dtype=np.int64) + n_relations,
        np.diff(participant_range),
    )
    loops = subject == obj  # a relation of an entity with itself is listed once
    ends = np.concatenate([subject, obj[~loops], arrays["event_participant"]])
    facts = np.concatenate(
        [
            np.arange(n_relations, dtype=np.int64),
            np.flatnonzero(~loops),
            event_rows,
        ]
    )
    # by entity, then by fact row: the order the facts were added in
    order = np.argsort(ends.astype(np.int64) * (len(facts) + 1) + facts, kind="stable")
    starts = np.searchsorted(ends[order], np.arange(entities + 1)).astype(np.int64)
    return starts, facts[order].astype(np.int32)


def version_1_arrays(
    arrays: Mapping[str, npt.NDArray[Any]], strings: Heap, n: Mapping[str, int]
) -> dict[str, npt.NDArray[Any]]:
    """What a member of version 1 of ``graph.columns`` does not hold (the id orders and
    :func:`entity_facts`), worked out as a save does; its ids are read to sort them, so they are
    checked here, on opening, as they were then (each kind's distinct, no relation and event
    sharing one).

    Raises:
        BundleError: two records share an id.
    """
    worked: dict[str, npt.NDArray[Any]] = {}
    distinct: dict[str, set[str]] = {}
    for kind in KINDS:
        ids = strings.picked(arrays[f"{kind}_id"])
        distinct[kind] = set(ids)
        if len(distinct[kind]) != len(ids):
            raise BundleError(f"graph.columns is invalid: two {kind} records share an id")
        worked[f"{kind}_id_order"] = id_order(ids)
    if not distinct["relation"].isdisjoint(distinct["event"]):
        raise BundleError("graph.columns: a relation and an event share an id")
    worked["entity_fact_range"], worked["entity_fact"] = entity_facts(arrays, n["entities"])
    return worked


class _Adjacency:
    """The facts touching each entity, as stored (:func:`entity_facts`)."""

    def __init__(
        self,
        arrays: Mapping[str, npt.NDArray[Any]],
        entities: _Table,
        relations: _Table,
        events: _Table,
    ) -> None:
        self.facts_rows, self.starts = arrays["entity_fact"], arrays["entity_fact_range"]
        self.entities, self.relations, self.events = entities, relations, events
        self.n_relations = len(relations)

    def facts(self, entity_id: str) -> list[str]:
        row = self.entities.row_of(entity_id)
        if row is None:
            return []
        out = []
        for fact in self.facts_rows[self.starts[row] : self.starts[row + 1]].tolist():
            if fact < self.n_relations:
                out.append(self.relations.id_at(fact))
            else:
                out.append(self.events.id_at(fact - self.n_relations))
        return out


@dataclass(frozen=True)
class Tables:
    """The rows a graph read in place is made from, by kind: their ids and each id's row."""

    documents: _Documents
    entities: _Entities
    relations: _Relations
    events: _Events

    def facts(self) -> tuple[Sequence[str], Mapping[str, int]]:
        """The fact ids in row order (relations, then events) and each one's row, read in
        place (where there are no events, the relations' own)."""
        ids = (
            self.relations.ids
            if not len(self.events)
            else FactIds(self.relations.ids, self.events.ids)
        )
        return ids, ids.rows()

    def fact_id(self, row: int) -> str:
        """The id of a fact row: relations, then events."""
        relations = len(self.relations)
        return self.relations.id_at(row) if row < relations else self.events.id_at(row - relations)

    def id_checks(self) -> Callable[[], None]:
        """What reading every id checks of them (:func:`~noema.storage._column_ids.id_checks`)."""
        return id_checks(
            {
                "document": self.documents.ids,
                "entity": self.entities.ids,
                "relation": self.relations.ids,
                "event": self.events.ids,
            }
        )


def graph_from_arrays(
    arrays: Mapping[str, npt.NDArray[Any]], heap: Heap
) -> tuple[SemanticGraph, Tables, Mapping[str, npt.NDArray[Any]], Heap]:
    """The graph over arrays already checked, its records read from them when asked for.

    The arrays are copied out of the bundle's mapped file first (the heap is decoded already):
    a record is read long after opening, and a file another program truncated since would kill
    the process at that read (SIGBUS) rather than raise. They are a small part of the member
    (ids, rows, spans: about 70 bytes a fact); the strings are the bulk. Returns the graph,
    its tables, and the copied arrays and heap, for the sidecar to read."""
    arrays = {name: np.array(array) for name, array in arrays.items() if name != "heap"}
    heap = Heap(heap.text, arrays["string_offsets"])
    _check_strings(arrays, heap)
    docs = _Documents(arrays, heap)
    entities = _Entities(arrays, heap, docs)
    relations = _Relations(arrays, heap, docs)
    events = _Events(arrays, heap, docs)
    adjacency = _Adjacency(arrays, entities, relations, events)
    graph = SemanticGraph.from_stores(
        RecordStore(docs),
        RecordStore(entities),
        RecordStore(relations),
        RecordStore(events),
        FactsByEntity(adjacency),
    )
    return graph, Tables(docs, entities, relations, events), arrays, heap


def _check_strings(arrays: Mapping[str, npt.NDArray[Any]], heap: Heap) -> None:
    """What notation writes on one line (names, aliases, times) holds no line break and is not
    blank; predicates and labels are snake_case; no event names a participant twice. Each
    distinct string is checked once."""
    one_line = [arrays["entity_name"], arrays["entity_alias"], arrays["event_time"]]
    texts = heap.picked(_distinct(one_line, len(heap)))
    if _may_be_blank_or_broken(texts):  # else every one is fine: no string looked at alone
        for text in texts:
            if not text.strip() or not LINE_BREAKS.isdisjoint(text):
                raise GraphError(
                    f"entity name, alias or event time {text!r} is empty or holds a line break"
                )
    labels = _distinct([arrays["relation_predicate"], arrays["event_label"]], len(heap))
    for text in heap.picked(labels):
        if not text or normalize_predicate(text) != text:
            raise GraphError(f"predicate or label {text!r} is not in snake_case")
    participants, starts = arrays["event_participant"], arrays["event_participant_range"]
    if len(participants):
        event = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
        pairs = np.unique(np.stack([event, participants]), axis=1)
        if pairs.shape[1] != len(participants):
            raise GraphError("an event names a participant twice")


def _distinct(numbers: list[npt.NDArray[Any]], strings: int) -> npt.NDArray[np.int64]:
    """The string numbers in ``numbers`` (each already below ``strings``; -1, no string, left
    out), each once, ascending: marked in a table of every string rather than sorted
    (``np.unique`` took 0.2 s of opening a million facts)."""
    present = np.zeros(strings, dtype=bool)
    for part in numbers:
        present[part[part >= 0]] = True
    return np.flatnonzero(present)


# A blank string among strings joined by NUL, with a NUL before the first and after the last
# (NUL is not whitespace: a string holding one is only looked at alone, never passed over).
_BLANK_AMONG_JOINED = re.compile(r"\x00\s*\x00")


def _may_be_blank_or_broken(texts: list[str]) -> bool:
    r"""Whether one of ``texts`` may be blank or hold a line break, judged from them joined (a
    few scans in C rather than a test of each of 330,000 names: 0.3 s of opening a million
    facts); ``False`` only when none is. ``\s`` and :meth:`str.strip` know the same
    whitespace."""
    joined = "\x00" + "\x00".join(texts) + "\x00"
    return _BLANK_AMONG_JOINED.search(joined) is not None or any(
        mark in joined for mark in LINE_BREAKS
    )
