"""Writing ``graph.columns``: a graph made into the arrays and string heap that
:mod:`noema.storage.columns` documents and reads.

Apart from the reader because writing is the other half of the pair and shares nothing with it
but the layout: the magic, version and every array's dtype are here, where the bytes are made,
and the reader checks a member against them.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from noema.model.graph import SemanticGraph
from noema.model.records import (
    ENTITY_TYPES,
    Entity,
    Event,
    Relation,
    json_bytes,
)
from noema.storage._column_ids import id_order
from noema.storage._column_records import entity_facts
from noema.vectors.sentences import (
    SENTENCE_RENDERING,
    TOPIC_RULE,
    SentenceIndex,
    key_digest,
)

__all__ = ["COLUMNS_VERSION", "DTYPES", "MAGIC", "PREFIX", "columns_bytes"]

MAGIC = b"NOEMACOL"
COLUMNS_VERSION = 2
PREFIX = struct.Struct("<8sII")
_ALIGN = 8
_MENTION_KINDS = ("entity", "relation", "event")

# Every array the reader expects, with its dtype.
DTYPES: dict[str, str] = {
    "heap": "|u1",
    "string_offsets": "<i8",
    "document_id": "<i4",
    "document_text": "<i4",
    "document_metadata": "<i4",
    "entity_id": "<i4",
    "entity_name": "<i4",
    "entity_type": "|u1",
    "entity_confidence": "<f8",
    "entity_alias_range": "<i8",
    "entity_alias": "<i4",
    "entity_mention_range": "<i8",
    "relation_id": "<i4",
    "relation_subject": "<i4",
    "relation_predicate": "<i4",
    "relation_object": "<i4",
    "relation_confidence": "<f8",
    "relation_mention_range": "<i8",
    "event_id": "<i4",
    "event_label": "<i4",
    "event_time": "<i4",
    "event_confidence": "<f8",
    "event_participant_range": "<i8",
    "event_participant": "<i4",
    "event_mention_range": "<i8",
    "sentence_document": "<i4",
    "sentence_start": "<i8",
    "sentence_end": "<i8",
    "sentence_digest": "<i4",
    "sentence_fact_range": "<i8",
    "sentence_fact": "<i4",
    "topic_entity": "<i4",
    "topic_document_range": "<i8",
    "topic_document": "<i4",
    "compared_name": "<i4",
    "compared_name_form": "<i4",
    "compared_title": "<i4",
    "compared_title_form": "<i4",
    "document_id_order": "<i4",
    "entity_id_order": "<i4",
    "relation_id_order": "<i4",
    "event_id_order": "<i4",
    "entity_fact_range": "<i8",
    "entity_fact": "<i4",
    **{
        f"{kind}_mention_{field}": dtype
        for kind in _MENTION_KINDS
        for field, dtype in (("document", "<i4"), ("start", "<i8"), ("end", "<i8"))
    },
}


class _Strings:
    """Numbers strings in the order first written; each distinct string once."""

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        return self.numbers.setdefault(text, len(self.numbers))

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        lengths = np.fromiter((len(s) for s in self.numbers), np.int64, len(self.numbers))
        offsets = np.zeros(len(self.numbers) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        heap = "".join(self.numbers).encode("utf-8")
        return {"heap": np.frombuffer(heap, np.uint8), "string_offsets": offsets}


def _ranges(lengths: Sequence[int]) -> npt.NDArray[np.int64]:
    """``X_range`` for records with these numbers of items."""
    starts = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(np.asarray(lengths, np.int64), out=starts[1:])
    return starts


def columns_bytes(
    graph: SemanticGraph,
    merge_log: Sequence[Mapping[str, Any]] = (),
    sentences: SentenceIndex | None = None,
) -> bytes:
    """The member for ``graph``, its merge log (each record as ``graph.json`` holds it) and what
    its sentence sidecar holds besides vectors; the same graph gives the same bytes."""
    text = _Strings()
    documents = list(graph.documents.values())
    document_row = {d.id: n for n, d in enumerate(documents)}
    entities = list(graph.entities.values())
    entity_row = {e.id: n for n, e in enumerate(entities)}
    relations = list(graph.relations.values())
    events = list(graph.events.values())
    arrays: dict[str, Any] = {
        "document_id": [text(d.id) for d in documents],
        "document_text": [text(d.text) for d in documents],
        "document_metadata": [
            text(json_bytes(dict(d.metadata)).decode("utf-8")) if d.metadata else -1
            for d in documents
        ],
        "entity_id": [text(e.id) for e in entities],
        "entity_name": [text(e.name) for e in entities],
        "entity_type": [ENTITY_TYPES.index(e.type) for e in entities],
        "entity_confidence": [e.confidence for e in entities],
        "entity_alias_range": _ranges([len(e.aliases) for e in entities]),
        "entity_alias": [text(a) for e in entities for a in e.aliases],
        "relation_id": [text(r.id) for r in relations],
        "relation_subject": [entity_row[r.subject_id] for r in relations],
        "relation_predicate": [text(r.predicate) for r in relations],
        "relation_object": [entity_row[r.object_id] for r in relations],
        "relation_confidence": [r.confidence for r in relations],
        "event_id": [text(v.id) for v in events],
        "event_label": [text(v.label) for v in events],
        "event_time": [-1 if v.time is None else text(v.time) for v in events],
        "event_confidence": [v.confidence for v in events],
        "event_participant_range": _ranges([len(v.participant_ids) for v in events]),
        "event_participant": [entity_row[p] for v in events for p in v.participant_ids],
    }
    kinds: dict[str, Sequence[Entity | Relation | Event]] = {
        "entity": entities,
        "relation": relations,
        "event": events,
    }
    for kind, records in kinds.items():
        mentions = [m for r in records for m in r.mentions]
        arrays[f"{kind}_mention_range"] = _ranges([len(r.mentions) for r in records])
        arrays[f"{kind}_mention_document"] = [document_row[m.document_id] for m in mentions]
        arrays[f"{kind}_mention_start"] = [m.start for m in mentions]
        arrays[f"{kind}_mention_end"] = [m.end for m in mentions]
    for kind, ids in (
        ("document", list(document_row)),
        ("entity", list(entity_row)),
        ("relation", [r.id for r in relations]),
        ("event", [v.id for v in events]),
    ):
        arrays[f"{kind}_id_order"] = id_order(ids)
    ends = ("relation_subject", "relation_object", "event_participant_range", "event_participant")
    arrays["entity_fact_range"], arrays["entity_fact"] = entity_facts(
        {name: np.asarray(arrays[name], DTYPES[name]) for name in ends}, len(entities)
    )
    arrays.update(_sentence_arrays(graph, sentences, text, document_row, entity_row))
    merge_number = text(orjson.dumps(list(merge_log)).decode("utf-8")) if merge_log else -1
    arrays.update(text.arrays())
    header: dict[str, Any] = {"merge_log": merge_number, "sentences": None}
    if sentences is not None:
        header["sentences"] = {"rendering": SENTENCE_RENDERING, "topics": TOPIC_RULE}
    return _pack(arrays, header)


def _sentence_arrays(
    graph: SemanticGraph,
    sentences: SentenceIndex | None,
    text: _Strings,
    document_row: Mapping[str, int],
    entity_row: Mapping[str, int],
) -> dict[str, Any]:
    """The ``sentence_*`` and ``topic_*`` arrays (empty without a sidecar)."""
    listed = list(sentences.facts.items()) if sentences is not None else []
    topics = list(sentences.topics.items()) if sentences is not None else []
    keys = sentences.keys if sentences is not None else {}
    names, titles = sentences.compared_forms if sentences is not None else ({}, {})
    fact_row = {f: n for n, f in enumerate(chain(graph.relations, graph.events))}
    return {
        "sentence_document": [document_row[s.document_id] for s, _ in listed],
        "sentence_start": [s.start for s, _ in listed],
        "sentence_end": [s.end for s, _ in listed],
        "sentence_digest": [text(key_digest(keys[s])) for s, _ in listed],
        "sentence_fact_range": _ranges([len(facts) for _, facts in listed]),
        "sentence_fact": [fact_row[f] for _, facts in listed for f in facts],
        "topic_entity": [entity_row[e] for e, _ in topics],
        "topic_document_range": _ranges([len(documents) for _, documents in topics]),
        "topic_document": [document_row[d] for _, documents in topics for d in documents],
        "compared_name": [text(name) for name in names],
        "compared_name_form": [text(form) for form in names.values()],
        "compared_title": [text(title) for title in titles],
        "compared_title_form": [text(form) for form in titles.values()],
    }


def _pack(arrays: Mapping[str, Any], fields: Mapping[str, Any]) -> bytes:
    """The magic, version, header and arrays, each array at an offset aligned to 8 bytes."""
    names = sorted(DTYPES)
    data = {name: np.asarray(arrays[name], dtype=DTYPES[name]) for name in names}
    directory: dict[str, dict[str, Any]] = {}
    header_room = 0
    while True:  # the offsets depend on the header's length, which depends on the offsets
        offset = _aligned(PREFIX.size + header_room)
        for name in names:
            directory[name] = {"dtype": DTYPES[name], "offset": offset, "count": len(data[name])}
            offset = _aligned(offset + data[name].nbytes)
        header = orjson.dumps({"arrays": directory, **fields}, option=orjson.OPT_SORT_KEYS)
        if len(header) <= header_room:
            break
        header_room = len(header)
    header = header.ljust(header_room)  # JSON allows trailing spaces
    out = bytearray(PREFIX.pack(MAGIC, COLUMNS_VERSION, header_room) + header)
    for name in names:
        out.extend(b"\0" * (directory[name]["offset"] - len(out)))
        out.extend(data[name].tobytes())
    return bytes(out)


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN
