"""The records a graph holds, and their JSON form.

:class:`GraphRecords` keeps a graph's documents, entities, relations and events by id, with the
index of the facts touching each entity, and writes and reads them as JSON (``graph.json`` in a
bundle). :class:`~noema.model.graph.SemanticGraph` builds on it with every way to change them.

The form, version :data:`GRAPH_FORMAT_VERSION` (keys sorted in the bytes, each kind of record in
insertion order)::

    {"format_version": 1,
     "documents": [{"id": ..., "text": ..., "metadata": {...}}, ...],
     "entities": [...], "relations": [...], "events": [...]}

Each entity, relation and event is written by :func:`~noema.model.records.record_to_dict` and
read again, with the checks the graph's ``add_*`` methods make, by the ``read_*`` function
beside it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, MutableMapping
from itertools import chain
from typing import Any, TypeVar

from noema.errors import GraphError
from noema.model.gcpause import paused_gc
from noema.model.records import (
    METADATA_DEPTH,
    Document,
    Entity,
    Event,
    Fact,
    Relation,
    json_bytes,
    read_entity,
    read_event,
    read_relation,
    read_str,
    record_to_dict,
)
from noema.model.stores import FactsByEntity, RecordStore, changed_ids

__all__ = ["GRAPH_FORMAT_VERSION", "GraphRecords"]

GRAPH_FORMAT_VERSION = 1


_R = TypeVar("_R", Document, Entity)
_G = TypeVar("_G", bound="GraphRecords")


def _fill(store: MutableMapping[str, _R], records: Iterable[_R], what: str) -> None:
    """``store`` holding ``records`` by id; a repeated id is refused."""
    listed = list(records)
    store.update((r.id, r) for r in listed)
    if len(store) != len(listed):
        raise GraphError(f"two {what} records share an id")


class GraphRecords:
    """A graph's records by id and the facts touching each entity, with their JSON form: the
    base of :class:`~noema.model.graph.SemanticGraph`, which is the class to use."""

    def __init__(self) -> None:
        # dicts, or stores read from a bundle's columns on demand (noema.model.stores)
        self._entities: MutableMapping[str, Entity] = {}
        self._relations: MutableMapping[str, Relation] = {}
        self._events: MutableMapping[str, Event] = {}
        self._documents: MutableMapping[str, Document] = {}
        # entity id -> ids of relations and events that mention it, in insertion order
        self._facts_by_entity = FactsByEntity()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; lossless, so ``from_dict(g.to_dict())`` equals ``g``."""
        return {
            "format_version": GRAPH_FORMAT_VERSION,
            "documents": [
                {"id": d.id, "text": d.text, "metadata": dict(d.metadata)}
                for d in self._documents.values()
            ],
            "entities": [record_to_dict(e) for e in self._entities.values()],
            "relations": [record_to_dict(r) for r in self._relations.values()],
            "events": [record_to_dict(v) for v in self._events.values()],
        }

    def to_json(self) -> bytes:
        """Deterministic UTF-8 JSON bytes of :meth:`to_dict`."""
        return json.dumps(
            self.to_dict(), ensure_ascii=False, sort_keys=True, separators=(",", ":")
        ).encode("utf-8")

    @classmethod
    def from_dict(cls: type[_G], data: Mapping[str, Any]) -> _G:
        """Rebuild a graph from :meth:`to_dict` output, checking what the ``add_*`` methods
        check: types, references, one-line names, snake_case predicates and labels, distinct
        event participants, and that every relation and event id is the hash of its content.

        Raises:
            GraphError: a field is missing or of the wrong type, an id is dangling or repeated.
        """
        try:
            return cls._from_dict(data)
        except GraphError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise GraphError(f"graph data is malformed: {type(exc).__name__}: {exc}") from exc

    @classmethod
    def _from_dict(cls: type[_G], data: Mapping[str, Any]) -> _G:
        version = data.get("format_version")
        if version != GRAPH_FORMAT_VERSION:
            raise GraphError(f"graph format_version {version!r} is not {GRAPH_FORMAT_VERSION}")
        g = cls()
        # Repeated ids are stored once: JSON parsing makes a new string for every occurrence of
        # a document id in a mention and of an entity id in a relation, and at a million facts
        # those copies are a good part of the memory.
        shared: dict[str, str] = {}
        for d in data["documents"]:
            metadata = d["metadata"]
            if not isinstance(metadata, dict):
                raise GraphError(f"document {d['id']!r} metadata is not an object")
            try:  # what the writer could not write again is refused here, not at the next save
                json_bytes(metadata, depth=METADATA_DEPTH)
            except (TypeError, ValueError) as exc:
                raise GraphError(f"document {d['id']!r} metadata cannot be saved: {exc}") from None
            doc_id = shared.setdefault(read_str(d["id"]), d["id"])
            g._documents[doc_id] = Document(read_str(d["text"]), doc_id, metadata)
        for e in data["entities"]:
            entity = read_entity(e, shared)
            if entity.id in g._entities:
                raise GraphError(f"entity id {entity.id!r} appears twice")
            g._entities[entity.id] = entity
        for raw, read in ((data["relations"], read_relation), (data["events"], read_event)):
            for item in raw:
                g._load_fact(read(item, shared, g._entities))
        g.check_mentions()
        return g

    @classmethod
    def from_records(
        cls: type[_G],
        documents: Iterable[Document],
        entities: Iterable[Entity],
        relations: Iterable[Relation],
        events: Iterable[Event],
    ) -> _G:
        """A graph of records its caller has checked (a bundle's columnar member checks types,
        references and spans for all records at once), with the facts-by-entity index built.
        Only repeated ids are refused here.

        Raises:
            GraphError: two documents, entities, relations or events share an id.
        """
        g = cls()
        with paused_gc():  # a dict per entity: see noema.model.gcpause
            _fill(g._documents, documents, "document")
            _fill(g._entities, entities, "entity")
            facts: Iterable[Fact] = chain(relations, events)
            for fact in facts:  # stored and indexed by entity as from_dict stores them
                g._load_fact(fact)
        return g

    def check_mentions(self) -> None:
        """Every mention of an entity or fact must lie inside a document of this graph.

        Raises:
            GraphError: naming the first mention of a missing document or outside its text.
        """
        items: list[Entity | Relation | Event] = [
            *self._entities.values(),
            *self._relations.values(),
            *self._events.values(),
        ]
        for item in items:
            for m in item.mentions:
                doc = self._documents.get(m.document_id)
                if doc is None:
                    raise GraphError(
                        f"{item.id!r} has a mention in document {m.document_id!r}, which the "
                        "graph does not hold"
                    )
                if not 0 <= m.start <= m.end <= len(doc.text):
                    raise GraphError(
                        f"{item.id!r} has a mention at {m.start}-{m.end}, outside document "
                        f"{m.document_id!r} ({len(doc.text)} characters)"
                    )

    def _load_fact(self, fact: Fact) -> None:
        """Store a fact read from JSON, refusing a repeated id."""
        store = self._store_of(fact)
        if fact.id in store:
            kind = "relation" if isinstance(fact, Relation) else "event"
            raise GraphError(f"{kind} id {fact.id!r} appears twice")
        store[fact.id] = fact
        for eid in fact.entity_ids:
            self._facts_by_entity.add(eid, fact.id)

    @classmethod
    def from_json(cls: type[_G], data: bytes | str) -> _G:
        """Rebuild a graph from :meth:`to_json` output."""
        try:
            loaded = json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise GraphError(f"graph JSON does not parse: {exc}") from exc
        if not isinstance(loaded, dict):
            raise GraphError("graph JSON must be an object")
        return cls.from_dict(loaded)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GraphRecords):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def changed_ids(self, other: GraphRecords, kind: str) -> set[str] | None:
        """The ids of ``kind`` ("documents", "entities", "relations" or "events") whose records
        may differ between this graph and ``other`` when both read the same bundle's columns
        (one a copy of the other): every other id holds the same record in both. ``None`` when
        they read none in common: compare the records themselves (a change replaces the
        record, so an unchanged one is the same object)."""
        stores: dict[str, tuple[Mapping[str, Any], Mapping[str, Any]]] = {
            "documents": (self._documents, other._documents),
            "entities": (self._entities, other._entities),
            "relations": (self._relations, other._relations),
            "events": (self._events, other._events),
        }
        mine, theirs = stores[kind]
        return changed_ids(mine, theirs)

    def documents_only(self: _G) -> _G:
        """A graph of this one's documents alone (shared: a graph read in place from a bundle's
        columns shares its store, which makes no record until one is read)."""
        g = type(self)()
        g._documents = (
            self._documents.copy()
            if isinstance(self._documents, RecordStore)
            else dict(self._documents)
        )
        return g

    @classmethod
    def from_stores(
        cls: type[_G],
        documents: RecordStore[Document],
        entities: RecordStore[Entity],
        relations: RecordStore[Relation],
        events: RecordStore[Event],
        facts_by_entity: FactsByEntity,
    ) -> _G:
        """A graph over stores its caller has checked (a bundle's columns, read in place), with
        the facts-by-entity index they come with."""
        g = cls()
        g._documents, g._entities = documents, entities
        g._relations, g._events = relations, events
        g._facts_by_entity = facts_by_entity
        return g

    def _store_of(self, fact: Fact) -> MutableMapping[str, Any]:
        """The dict that holds facts of this one's kind."""
        return self._relations if isinstance(fact, Relation) else self._events
