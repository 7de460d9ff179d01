"""The data model: entities, relations, events, documents and mentions, held in a SemanticGraph.

Items are frozen dataclasses; the graph is the only mutable object, and every change goes through
its methods so the adjacency index and the invariants (no dangling ids, known types, normalized
predicates) always hold. Ids are derived from content (``ent_``, ``rel_``, ``evt_``, ``doc_`` and a
hash), so building the same graph twice gives the same ids and the same JSON bytes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal, cast, get_args

from noema.errors import GraphError

__all__ = [
    "ENTITY_TYPES",
    "Citation",
    "Document",
    "Entity",
    "EntityType",
    "Event",
    "Mention",
    "Relation",
    "VALUE_TYPES",
    "SemanticGraph",
    "normalize_predicate",
]

EntityType = Literal["PERSON", "ORG", "GPE", "LOC", "DATE", "EVENT", "PRODUCT", "MONEY", "OTHER"]
ENTITY_TYPES: tuple[str, ...] = get_args(EntityType)
# Dates and amounts are attributes of things rather than things: the graph walk does not pass
# through them, embedding similarity does not merge them, and they never type a topic.
VALUE_TYPES = frozenset({"DATE", "MONEY"})

GRAPH_FORMAT_VERSION = 1

_NON_WORD = re.compile(r"[^\w]+")


# Characters str.splitlines() breaks at: a name, predicate or time holding one cannot be written
# on one notation line.
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def _surrogate(text: str) -> int | None:
    """Where ``text`` holds a lone surrogate (a string no UTF-8 file can hold), else ``None``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def _one_line(value: Any, what: str) -> str:
    """``value`` as a string notation can hold on one line, else :class:`GraphError`."""
    text = _str(value)
    at = _surrogate(text)
    if at is not None:
        raise GraphError(f"{what} {text!r} holds a lone surrogate at index {at}")
    if not text.strip():
        raise GraphError(f"{what} {text!r} is empty")
    if LINE_BREAKS.intersection(text):
        raise GraphError(f"{what} {text!r} contains a line break")
    return text


def normalize_predicate(text: str) -> str:
    """Turn a predicate or event label into lowercase snake_case.

    Example:
        >>> normalize_predicate("CEO of")
        'ceo_of'
    """
    return _NON_WORD.sub("_", text.strip().lower()).strip("_")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


def make_relation_id(subject_id: str, predicate: str, object_id: str) -> str:
    """The id a relation gets: a hash of its ends and normalized predicate, so equal facts share it."""
    return "rel_" + _digest(subject_id, normalize_predicate(predicate), object_id)


@dataclass(frozen=True, slots=True, order=True)
class Mention:
    """Where an item was found: a document id and a character span ``[start, end)``."""

    document_id: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Citation:
    """Where a fact came from: the document, the character span and the text of that span
    (for relations the parser found, the whole sentence). ``text`` is empty when the graph no
    longer holds the document."""

    document_id: str
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Entity:
    """A named thing with one of the nine types, its other surface forms and its mentions."""

    id: str
    name: str
    type: EntityType
    aliases: tuple[str, ...] = ()
    mentions: tuple[Mention, ...] = ()
    confidence: float = 1.0


@dataclass(frozen=True, slots=True)
class Relation:
    """``subject -predicate-> object`` between two entities."""

    id: str
    subject_id: str
    predicate: str
    object_id: str
    mentions: tuple[Mention, ...] = ()
    confidence: float = 1.0


@dataclass(frozen=True, slots=True)
class Event:
    """A labelled fact involving one or more entities, optionally at a time."""

    id: str
    label: str
    participant_ids: tuple[str, ...]
    time: str | None = None
    mentions: tuple[Mention, ...] = ()
    confidence: float = 1.0


@dataclass(frozen=True, slots=True)
class Document:
    """A source text. ``id`` defaults to a hash of the text, so re-ingesting it is recognised."""

    text: str
    id: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"Document text must be a string, got {type(self.text).__name__}")
        at = _surrogate(self.text)
        if at is not None:
            raise ValueError(
                f"Document text holds a lone surrogate at index {at}, which is not valid "
                "Unicode; decode the source with errors='replace'"
            )
        if not self.id:
            object.__setattr__(self, "id", "doc_" + _digest(self.text))

    def __hash__(self) -> int:
        # by id and text: the metadata mapping is not hashable, and equal documents share both
        return hash((self.id, self.text))


def _union_mentions(*groups: Iterable[Mention]) -> tuple[Mention, ...]:
    return tuple(sorted({m for group in groups for m in group}))


def _updated_mentions(entity: Entity, mentions: Sequence[Mention]) -> tuple[Mention, ...]:
    # the canonicalizer passes the stored mentions followed by the new ones
    kept = entity.mentions
    if tuple(mentions[: len(kept)]) == kept:
        return _add_mentions(kept, mentions[len(kept) :])
    return _union_mentions(mentions)


def _add_mentions(existing: tuple[Mention, ...], new: Iterable[Mention]) -> tuple[Mention, ...]:
    """``existing`` (sorted, distinct) with ``new`` added. Mentions mostly arrive in document
    order, after everything stored: those are appended without sorting the whole tuple again,
    which made a fact repeated n times in a text cost n^2 log n (8,000 repeats: 148 s)."""
    fresh = sorted(set(new))
    if not fresh:
        return existing
    if not existing or existing[-1] < fresh[0]:
        return existing + tuple(fresh)
    return _union_mentions(existing, fresh)


def _check_confidence(confidence: float) -> float:
    if not 0.0 <= confidence <= 1.0:
        raise GraphError(f"confidence must be between 0 and 1, got {confidence!r}")
    return float(confidence)


class SemanticGraph:
    """Entities, relations, events and documents, with an index of the facts touching each entity.

    Adding a relation or event that already exists (same subject, predicate and object; same label,
    participants and time) does not duplicate it: the mentions are united and the existing id is
    returned. Insertion order is kept and is the order of notation and JSON output.

    Example:
        >>> g = SemanticGraph()
        >>> page = g.add_entity("Larry Page", "PERSON")
        >>> google = g.add_entity("Google", "ORG")
        >>> rid = g.add_relation(page, "found", google)
        >>> g.relations[rid].predicate
        'found'
    """

    def __init__(self) -> None:
        self._entities: dict[str, Entity] = {}
        self._relations: dict[str, Relation] = {}
        self._events: dict[str, Event] = {}
        self._documents: dict[str, Document] = {}
        # entity id -> ids of relations and events that mention it, in insertion order
        self._facts_by_entity: dict[str, dict[str, None]] = {}

    # -- read access ---------------------------------------------------------------------------
    @property
    def entities(self) -> Mapping[str, Entity]:
        """Entities by id (read-only view)."""
        return MappingProxyType(self._entities)

    @property
    def relations(self) -> Mapping[str, Relation]:
        """Relations by id (read-only view)."""
        return MappingProxyType(self._relations)

    @property
    def events(self) -> Mapping[str, Event]:
        """Events by id (read-only view)."""
        return MappingProxyType(self._events)

    @property
    def documents(self) -> Mapping[str, Document]:
        """Documents by id (read-only view)."""
        return MappingProxyType(self._documents)

    def facts_of(self, entity_id: str) -> list[str]:
        """Ids of the relations and events that involve ``entity_id``, in insertion order."""
        self._require_entity(entity_id)
        return list(self._facts_by_entity.get(entity_id, {}))

    def citations(self, item_id: str) -> tuple[Citation, ...]:
        """The sources of an entity, relation or event, one per mention, in mention order.

        Example:
            >>> g = SemanticGraph()
            >>> _ = g.add_document(Document("Google was founded in 1998.", id="d1"))
            >>> eid = g.add_entity("Google", "ORG", mentions=[Mention("d1", 0, 6)])
            >>> g.citations(eid)[0].text
            'Google'
        """
        item = (
            self._entities.get(item_id) or self._relations.get(item_id) or self._events.get(item_id)
        )
        if item is None:
            raise GraphError(f"no entity, relation or event with id {item_id!r} in this graph")
        out = []
        for m in item.mentions:
            doc = self._documents.get(m.document_id)
            out.append(
                Citation(m.document_id, m.start, m.end, doc.text[m.start : m.end] if doc else "")
            )
        return tuple(out)

    def __len__(self) -> int:
        return len(self._entities) + len(self._relations) + len(self._events)

    def __repr__(self) -> str:
        return (
            f"SemanticGraph(entities={len(self._entities)}, relations={len(self._relations)}, "
            f"events={len(self._events)}, documents={len(self._documents)})"
        )

    # -- adding --------------------------------------------------------------------------------
    def add_document(self, document: Document) -> str:
        """Add (or replace) a source document and return its id."""
        self._documents[document.id] = document
        return document.id

    def add_entity(
        self,
        name: str,
        type: str,
        *,
        aliases: Sequence[str] = (),
        mentions: Sequence[Mention] = (),
        confidence: float = 1.0,
    ) -> str:
        """Add a new entity and return its id; two calls with the same name give two entities."""
        if type not in ENTITY_TYPES:
            raise GraphError(f"unknown entity type {type!r}; use one of {', '.join(ENTITY_TYPES)}")
        if not name.strip():
            raise GraphError("an entity name must not be empty")
        for text in (name, *aliases):
            at = _surrogate(text)
            if at is not None:  # no bundle or notation could hold it
                raise GraphError(f"entity name {text!r} holds a lone surrogate at index {at}")
        base = "ent_" + _digest(type, name)
        entity_id, n = base, 1
        while entity_id in self._entities:
            n += 1
            entity_id = f"{base}_{n}"
        self._entities[entity_id] = Entity(
            id=entity_id,
            name=name,
            type=cast(EntityType, type),
            aliases=tuple(dict.fromkeys(a for a in aliases if a != name)),
            mentions=_union_mentions(mentions),
            confidence=_check_confidence(confidence),
        )
        return entity_id

    def add_relation(
        self,
        subject_id: str,
        predicate: str,
        object_id: str,
        *,
        mentions: Sequence[Mention] = (),
        confidence: float = 1.0,
    ) -> str:
        """Add ``subject -predicate-> object`` (predicate normalized) and return its id."""
        self._require_entity(subject_id)
        self._require_entity(object_id)
        normalized = normalize_predicate(predicate)
        if not normalized:
            raise GraphError(f"predicate {predicate!r} has no letters or digits")
        relation_id = make_relation_id(subject_id, normalized, object_id)
        existing = self._relations.get(relation_id)
        if existing is not None:
            self._relations[relation_id] = replace(
                existing,
                mentions=_add_mentions(existing.mentions, mentions),
                confidence=max(existing.confidence, _check_confidence(confidence)),
            )
            return relation_id
        self._relations[relation_id] = Relation(
            relation_id,
            subject_id,
            normalized,
            object_id,
            _union_mentions(mentions),
            _check_confidence(confidence),
        )
        self._index_fact(relation_id, (subject_id, object_id))
        return relation_id

    def add_event(
        self,
        label: str,
        participant_ids: Sequence[str],
        *,
        time: str | None = None,
        mentions: Sequence[Mention] = (),
        confidence: float = 1.0,
    ) -> str:
        """Add an event with its participants and optional time, and return its id."""
        participants = tuple(dict.fromkeys(participant_ids))
        if not participants:
            raise GraphError("an event needs at least one participant")
        for pid in participants:
            self._require_entity(pid)
        normalized = normalize_predicate(label)
        if not normalized:
            raise GraphError(f"event label {label!r} has no letters or digits")
        event_id = "evt_" + _digest(normalized, *participants, time or "")
        existing = self._events.get(event_id)
        if existing is not None:
            self._events[event_id] = replace(
                existing,
                mentions=_add_mentions(existing.mentions, mentions),
                confidence=max(existing.confidence, _check_confidence(confidence)),
            )
            return event_id
        self._events[event_id] = Event(
            event_id,
            normalized,
            participants,
            time,
            _union_mentions(mentions),
            _check_confidence(confidence),
        )
        self._index_fact(event_id, participants)
        return event_id

    # -- changing ------------------------------------------------------------------------------
    def update_entity(
        self,
        entity_id: str,
        *,
        name: str | None = None,
        aliases: Sequence[str] | None = None,
        mentions: Sequence[Mention] | None = None,
        confidence: float | None = None,
    ) -> Entity:
        """Replace some fields of an entity (its id and type stay) and return the new value."""
        entity = self._require_entity(entity_id)
        new_name = entity.name if name is None else name
        updated = replace(
            entity,
            name=new_name,
            aliases=tuple(
                dict.fromkeys(
                    a for a in (entity.aliases if aliases is None else aliases) if a != new_name
                )
            ),
            mentions=entity.mentions if mentions is None else _updated_mentions(entity, mentions),
            confidence=entity.confidence if confidence is None else _check_confidence(confidence),
        )
        self._entities[entity_id] = updated
        return updated

    def remove_entity(self, entity_id: str) -> None:
        """Remove an entity, the relations that use it, and it from events (empty events go)."""
        self._require_entity(entity_id)
        for fact_id in list(self._facts_by_entity.get(entity_id, {})):
            if fact_id in self._relations:
                self.remove_relation(fact_id)
            else:
                event = self._events[fact_id]
                rest = [p for p in event.participant_ids if p != entity_id]
                self.remove_event(fact_id)
                if rest:
                    self.add_event(
                        event.label,
                        rest,
                        time=event.time,
                        mentions=event.mentions,
                        confidence=event.confidence,
                    )
        self._facts_by_entity.pop(entity_id, None)
        del self._entities[entity_id]

    def remove_relation(self, relation_id: str) -> None:
        """Remove one relation."""
        relation = self._relations.pop(relation_id)
        self._unindex_fact(relation_id, (relation.subject_id, relation.object_id))

    def remove_event(self, event_id: str) -> None:
        """Remove one event."""
        event = self._events.pop(event_id)
        self._unindex_fact(event_id, event.participant_ids)

    def remove_document(self, document_id: str) -> None:
        """Forget a source document (its mentions on items are left as they are)."""
        del self._documents[document_id]

    def remove_document_support(self, document_ids: Iterable[str]) -> tuple[set[str], set[str]]:
        """Forget what ``document_ids`` said: their mentions go, and every entity, relation and
        event whose mentions all came from them is removed (with the facts of removed entities).
        Items with mentions from other documents stay, as do items that never had mentions.
        The documents themselves are removed. Returns (removed entity ids, removed fact ids).
        """
        gone = set(document_ids)
        removed_facts: set[str] = set()
        removed_entities: set[str] = set()

        def kept(mentions: tuple[Mention, ...]) -> tuple[Mention, ...] | None:
            rest = tuple(m for m in mentions if m.document_id not in gone)
            return None if mentions and not rest else rest

        for fact in list(self.iter_facts()):
            rest = kept(fact.mentions)
            store: dict[str, Any] = self._relations if isinstance(fact, Relation) else self._events
            if rest is None:
                (self.remove_relation if isinstance(fact, Relation) else self.remove_event)(fact.id)
                removed_facts.add(fact.id)
            elif rest != fact.mentions:
                store[fact.id] = replace(fact, mentions=rest)
        for entity in list(self._entities.values()):
            rest = kept(entity.mentions)
            if rest is None:
                removed_facts.update(self._facts_by_entity.get(entity.id, {}))
                self.remove_entity(entity.id)
                removed_entities.add(entity.id)
            elif rest != entity.mentions:
                self._entities[entity.id] = replace(entity, mentions=rest)
        for doc_id in gone:
            self._documents.pop(doc_id, None)
        return removed_entities, removed_facts

    def merge_entities(self, keep_id: str, merge_id: str) -> str:
        """Merge entity ``merge_id`` into ``keep_id`` and return ``keep_id``.

        The merged entity's name and aliases become aliases of the kept one, mentions are united,
        and every relation and event is remapped. A relation that would link the kept entity to
        itself is dropped. Entities of different types never merge.
        """
        keep = self._require_entity(keep_id)
        gone = self._require_entity(merge_id)
        if keep_id == merge_id:
            return keep_id
        if keep.type != gone.type:
            raise GraphError(
                f"cannot merge {gone.name!r} ({gone.type}) into {keep.name!r} ({keep.type}): "
                "entities merge only within one type"
            )
        for fact_id in list(self._facts_by_entity.get(merge_id, {})):
            if fact_id in self._relations:
                rel = self._relations[fact_id]
                self.remove_relation(fact_id)
                subject = keep_id if rel.subject_id == merge_id else rel.subject_id
                obj = keep_id if rel.object_id == merge_id else rel.object_id
                if subject != obj:
                    self.add_relation(
                        subject,
                        rel.predicate,
                        obj,
                        mentions=rel.mentions,
                        confidence=rel.confidence,
                    )
            else:
                ev = self._events[fact_id]
                self.remove_event(fact_id)
                self.add_event(
                    ev.label,
                    [keep_id if p == merge_id else p for p in ev.participant_ids],
                    time=ev.time,
                    mentions=ev.mentions,
                    confidence=ev.confidence,
                )
        self._facts_by_entity.pop(merge_id, None)
        del self._entities[merge_id]
        self.update_entity(
            keep_id,
            aliases=(*keep.aliases, gone.name, *gone.aliases),
            mentions=(*keep.mentions, *gone.mentions),
            confidence=max(keep.confidence, gone.confidence),
        )
        return keep_id

    def split_entity(self, entity_id: str, name: str, *, document_ids: Iterable[str]) -> str:
        """Undo a merge: what ``document_ids`` said about ``entity_id`` under the surface form
        ``name`` becomes a new entity of the same type, and returns its id.

        The entity's mentions in those documents whose text is ``name`` move to the new entity
        (all its mentions there when a document is not stored). Each fact involving the entity
        is split the same way: its mentions from those documents go to a copy of the fact about
        the new entity; a fact left without mentions is removed. ``name`` stops being an alias.
        """
        entity = self._require_entity(entity_id)
        docs = set(document_ids)

        def moves(m: Mention) -> bool:
            if m.document_id not in docs:
                return False
            doc = self._documents.get(m.document_id)
            return doc is None or doc.text[m.start : m.end] == name

        moved = [m for m in entity.mentions if moves(m)]
        new_id = self.add_entity(name, entity.type, mentions=moved, confidence=entity.confidence)
        self.update_entity(
            entity_id,
            aliases=[a for a in entity.aliases if a != name],
            mentions=[m for m in entity.mentions if m not in moved],
        )
        for fact_id in list(self._facts_by_entity.get(entity_id, {})):
            fact = self._relations.get(fact_id) or self._events[fact_id]
            taken = [m for m in fact.mentions if m.document_id in docs]
            if not taken:
                continue
            kept = [m for m in fact.mentions if m.document_id not in docs]
            if isinstance(fact, Relation):
                self.remove_relation(fact_id)
                if kept:
                    self.add_relation(
                        fact.subject_id,
                        fact.predicate,
                        fact.object_id,
                        mentions=kept,
                        confidence=fact.confidence,
                    )
                subject = new_id if fact.subject_id == entity_id else fact.subject_id
                obj = new_id if fact.object_id == entity_id else fact.object_id
                self.add_relation(
                    subject, fact.predicate, obj, mentions=taken, confidence=fact.confidence
                )
            else:
                self.remove_event(fact_id)
                if kept:
                    self.add_event(
                        fact.label,
                        fact.participant_ids,
                        time=fact.time,
                        mentions=kept,
                        confidence=fact.confidence,
                    )
                participants = [new_id if p == entity_id else p for p in fact.participant_ids]
                self.add_event(
                    fact.label,
                    participants,
                    time=fact.time,
                    mentions=taken,
                    confidence=fact.confidence,
                )
        return new_id

    def copy(self) -> SemanticGraph:
        """A copy that can be changed without touching this graph."""
        other = SemanticGraph()
        other._entities = dict(self._entities)
        other._relations = dict(self._relations)
        other._events = dict(self._events)
        other._documents = dict(self._documents)
        other._facts_by_entity = {k: dict(v) for k, v in self._facts_by_entity.items()}
        return other

    # -- JSON form -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; lossless, so ``from_dict(g.to_dict())`` equals ``g``."""
        return {
            "format_version": GRAPH_FORMAT_VERSION,
            "documents": [
                {"id": d.id, "text": d.text, "metadata": dict(d.metadata)}
                for d in self._documents.values()
            ],
            "entities": [
                {
                    "id": e.id,
                    "name": e.name,
                    "type": e.type,
                    "aliases": list(e.aliases),
                    "mentions": [_mention_to_list(m) for m in e.mentions],
                    "confidence": e.confidence,
                }
                for e in self._entities.values()
            ],
            "relations": [
                {
                    "id": r.id,
                    "subject_id": r.subject_id,
                    "predicate": r.predicate,
                    "object_id": r.object_id,
                    "mentions": [_mention_to_list(m) for m in r.mentions],
                    "confidence": r.confidence,
                }
                for r in self._relations.values()
            ],
            "events": [
                {
                    "id": v.id,
                    "label": v.label,
                    "participant_ids": list(v.participant_ids),
                    "time": v.time,
                    "mentions": [_mention_to_list(m) for m in v.mentions],
                    "confidence": v.confidence,
                }
                for v in self._events.values()
            ],
        }

    def to_json(self) -> bytes:
        """Deterministic UTF-8 JSON bytes of :meth:`to_dict`."""
        return json.dumps(
            self.to_dict(), ensure_ascii=False, sort_keys=True, separators=(",", ":")
        ).encode("utf-8")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SemanticGraph:
        """Rebuild a graph from :meth:`to_dict` output, checking types and references.

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
    def _from_dict(cls, data: Mapping[str, Any]) -> SemanticGraph:
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
            doc_id = shared.setdefault(_str(d["id"]), d["id"])
            g._documents[doc_id] = Document(_str(d["text"]), doc_id, metadata)
        for e in data["entities"]:
            eid = _str(e["id"])
            if eid in g._entities:
                raise GraphError(f"entity id {eid!r} appears twice")
            if e["type"] not in ENTITY_TYPES:
                raise GraphError(f"entity {eid!r} has unknown type {e['type']!r}")
            g._entities[eid] = Entity(
                eid,
                _one_line(e["name"], f"entity {eid!r} name"),
                e["type"],
                tuple(_one_line(a, f"entity {eid!r} alias") for a in e["aliases"]),
                _mentions(e["mentions"], shared),
                _check_confidence(_float(e["confidence"])),
            )
        for r in data["relations"]:
            rid = _str(r["id"])
            if rid in g._relations:
                raise GraphError(f"relation id {rid!r} appears twice")
            subject, obj = _str(r["subject_id"]), _str(r["object_id"])
            predicate = _str(r["predicate"])
            if not predicate or normalize_predicate(predicate) != predicate:
                raise GraphError(f"relation {rid!r} has predicate {predicate!r}, not in snake_case")
            rel = Relation(
                rid,
                g._entities[subject].id if subject in g._entities else subject,
                shared.setdefault(_str(r["predicate"]), r["predicate"]),
                g._entities[obj].id if obj in g._entities else obj,
                _mentions(r["mentions"], shared),
                _check_confidence(_float(r["confidence"])),
            )
            for ref in (rel.subject_id, rel.object_id):
                if ref not in g._entities:
                    raise GraphError(f"relation {rid!r} refers to unknown entity {ref!r}")
            if rid != make_relation_id(subject, predicate, obj):
                raise GraphError(
                    f"relation id {rid!r} is not the id of its subject, predicate and object"
                )
            g._relations[rid] = rel
            g._index_fact(rid, (rel.subject_id, rel.object_id))
        for v in data["events"]:
            vid = _str(v["id"])
            if vid in g._events:
                raise GraphError(f"event id {vid!r} appears twice")
            time = v["time"]
            label = _str(v["label"])
            if not label or normalize_predicate(label) != label:
                raise GraphError(f"event {vid!r} has label {label!r}, not in snake_case")
            participants = tuple(_str(p) for p in v["participant_ids"])
            if not participants or len(set(participants)) != len(participants):
                raise GraphError(f"event {vid!r} needs distinct participants, got {participants!r}")
            time = None if time is None else _one_line(time, f"event {vid!r} time")
            if vid != "evt_" + _digest(label, *participants, time or ""):
                raise GraphError(
                    f"event id {vid!r} is not the id of its label, participants and time"
                )
            event = Event(
                vid,
                label,
                participants,
                time,
                _mentions(v["mentions"], shared),
                _check_confidence(_float(v["confidence"])),
            )
            for ref in event.participant_ids:
                if ref not in g._entities:
                    raise GraphError(f"event {vid!r} refers to unknown entity {ref!r}")
            g._events[vid] = event
            g._index_fact(vid, event.participant_ids)
        return g

    @classmethod
    def from_json(cls, data: bytes | str) -> SemanticGraph:
        """Rebuild a graph from :meth:`to_json` output."""
        try:
            loaded = json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise GraphError(f"graph JSON does not parse: {exc}") from exc
        if not isinstance(loaded, dict):
            raise GraphError("graph JSON must be an object")
        return cls.from_dict(loaded)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SemanticGraph):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    # -- internals -----------------------------------------------------------------------------
    def _require_entity(self, entity_id: str) -> Entity:
        try:
            return self._entities[entity_id]
        except KeyError:
            raise GraphError(f"no entity with id {entity_id!r} in this graph") from None

    def _index_fact(self, fact_id: str, entity_ids: Iterable[str]) -> None:
        for eid in entity_ids:
            self._facts_by_entity.setdefault(eid, {})[fact_id] = None

    def _unindex_fact(self, fact_id: str, entity_ids: Iterable[str]) -> None:
        for eid in entity_ids:
            self._facts_by_entity.get(eid, {}).pop(fact_id, None)

    def iter_facts(self) -> Iterator[Relation | Event]:
        """Every relation, then every event, in insertion order."""
        yield from self._relations.values()
        yield from self._events.values()


def _mention_to_list(m: Mention) -> list[Any]:
    return [m.document_id, m.start, m.end]


def _mentions(raw: Any, shared: dict[str, str]) -> tuple[Mention, ...]:
    out = []
    for item in raw:
        doc, start, end = item
        if not (isinstance(start, int) and isinstance(end, int)) or isinstance(start, bool):
            raise GraphError(f"mention span {item!r} is not two integers")
        out.append(Mention(shared.setdefault(_str(doc), doc), start, end))
    return tuple(out)


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise GraphError(f"expected a string, got {type(value).__name__} {value!r:.60}")
    return value


def _float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GraphError(f"expected a number, got {type(value).__name__} {value!r:.60}")
    return float(value)
