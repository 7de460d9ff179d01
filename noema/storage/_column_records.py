"""The records of ``graph.columns``, made from arrays :mod:`noema.storage.columns` has already
checked: documents, entities, relations and events, and the graph holding them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import orjson

from noema.errors import GraphError
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

__all__ = ["graph_from_arrays", "split_ranges"]

_Record = TypeVar("_Record")


class _Arrays:
    """The checked arrays and the decoded strings, read by field name."""

    def __init__(self, arrays: Mapping[str, npt.NDArray[Any]], strings: list[str]) -> None:
        self.arrays = arrays
        self.strings = strings

    def __getitem__(self, name: str) -> list[Any]:
        values: list[Any] = self.arrays[name].tolist()
        return values

    def picked(self, name: str) -> list[str]:
        return [self.strings[i] for i in self.arrays[name].tolist()]

    def mentions(self, kind: str, doc_ids: list[str]) -> list[tuple[Mention, ...]]:
        prefix = f"{kind}_mention"
        made = [
            Mention(doc_ids[d], s, e)
            for d, s, e in zip(
                self[f"{prefix}_document"],
                self[f"{prefix}_start"],
                self[f"{prefix}_end"],
                strict=True,
            )
        ]
        return split_ranges(made, self.arrays[f"{prefix}_range"])

    def records(
        self,
        kind: str,
        make: Callable[..., _Record],
        ids: Iterable[str],
        fields: Sequence[Iterable[Any]],
        doc_ids: list[str],
    ) -> list[_Record]:
        """One record of ``kind`` per row: ``make(id, *fields, mentions, confidence)``, as
        every kind of record ends with its mentions and its confidence."""
        rows = zip(
            ids,
            *fields,
            self.mentions(kind, doc_ids),
            self[f"{kind}_confidence"],
            strict=True,
        )
        return [make(*row) for row in rows]


def graph_from_arrays(arrays: Mapping[str, npt.NDArray[Any]], strings: list[str]) -> SemanticGraph:
    """The records, made from arrays already checked."""
    columns = _Arrays(arrays, strings)
    doc_ids = columns.picked("document_id")
    documents = _documents(columns, doc_ids)
    entity_ids = columns.picked("entity_id")
    entities = _entities(columns, entity_ids, doc_ids)
    relations = _relations(columns, entity_ids, doc_ids)
    events = _events(columns, entity_ids, doc_ids)
    return SemanticGraph.from_records(documents, entities, relations, events)


def _documents(columns: _Arrays, doc_ids: list[str]) -> list[Document]:
    documents = []
    strings = columns.strings
    parsed: dict[int, Any] = {}  # documents with the same metadata share its string
    for doc_id, text, meta in zip(
        doc_ids, columns.picked("document_text"), columns["document_metadata"], strict=True
    ):
        if meta not in parsed:
            try:
                metadata = {} if meta < 0 else orjson.loads(strings[meta])
                # what the writer could not write again is refused here, as from_dict refuses
                # it (orjson already refused NaN, infinities and lone surrogates; json_bytes on
                # every document took longer than the rest of reading the documents)
                check_json_value(metadata, depth=METADATA_DEPTH)
            except (TypeError, ValueError) as exc:
                raise GraphError(f"document {doc_id!r} metadata cannot be saved: {exc}") from None
            if not isinstance(metadata, dict):
                raise GraphError(f"document {doc_id!r} metadata is not an object")
            parsed[meta] = metadata
        # parsed once; each document's own top level, so changing one changes no other
        documents.append(Document(text, doc_id, dict(parsed[meta])))
    return documents


def _entities(columns: _Arrays, entity_ids: list[str], doc_ids: list[str]) -> list[Entity]:
    names = columns.picked("entity_name")
    aliases = split_ranges(columns.picked("entity_alias"), columns.arrays["entity_alias_range"])
    _check_one_line([*names, *(a for group in aliases for a in group)], "entity name or alias")
    types = [ENTITY_TYPES[t] for t in columns["entity_type"]]
    return columns.records("entity", Entity, entity_ids, (names, types, aliases), doc_ids)


def _relations(columns: _Arrays, entity_ids: list[str], doc_ids: list[str]) -> list[Relation]:
    predicates = columns.picked("relation_predicate")
    _check_snake_case(set(predicates))
    subjects = map(entity_ids.__getitem__, columns["relation_subject"])
    objects = map(entity_ids.__getitem__, columns["relation_object"])
    ids = columns.picked("relation_id")
    return columns.records("relation", Relation, ids, (subjects, predicates, objects), doc_ids)


def _events(columns: _Arrays, entity_ids: list[str], doc_ids: list[str]) -> list[Event]:
    labels = columns.picked("event_label")
    _check_snake_case(set(labels))
    times = [None if t < 0 else columns.strings[t] for t in columns["event_time"]]
    _check_one_line([t for t in times if t is not None], "event time")
    participants = split_ranges(
        [entity_ids[p] for p in columns["event_participant"]],
        columns.arrays["event_participant_range"],
    )
    ids = columns.picked("event_id")
    events = columns.records("event", Event, ids, (labels, participants, times), doc_ids)
    for event in events:
        if len(set(event.participant_ids)) != len(event.participant_ids):
            raise GraphError(f"event {event.id!r} names a participant twice")
    return events


def split_ranges(items: list[Any], starts: npt.NDArray[Any]) -> list[tuple[Any, ...]]:
    """``items`` grouped by record (``starts`` an ``X_range``)."""
    lengths = np.diff(starts)
    # most relations have one mention and most entities no alias: slicing for each took longer
    # than making the records
    if not len(items):
        return [()] * len(lengths)
    if len(items) == len(lengths) and np.all(lengths == 1):
        return [(item,) for item in items]
    bounds = starts.tolist()
    return [tuple(items[a:b]) for a, b in zip(bounds, bounds[1:])]  # noqa: B905


def _check_one_line(texts: Sequence[str], what: str) -> None:
    """What notation writes on one line holds no line break and is not blank."""
    for text in texts:
        if not text.strip() or not LINE_BREAKS.isdisjoint(text):
            raise GraphError(f"{what} {text!r} is empty or holds a line break")


def _check_snake_case(texts: set[str]) -> None:
    for text in texts:
        if not text or normalize_predicate(text) != text:
            raise GraphError(f"predicate or label {text!r} is not in snake_case")
