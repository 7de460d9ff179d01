"""The data model held together: a SemanticGraph of entities, relations, events and documents.

The items (:mod:`noema.model.records`) are frozen; the graph is the only mutable object, and every
change goes through its methods so the adjacency index and the invariants (no dangling ids, known
types, normalized predicates) always hold. Relations and events are both *facts*: most changes
treat them alike through :meth:`SemanticGraph.fact` and their ``entity_ids``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import TypeVar, cast

from noema.errors import GraphError
from noema.model.gcpause import paused_gc
from noema.model.graphjson import GraphRecords
from noema.model.records import (
    ENTITY_TYPES,
    VALUE_TYPES,
    Citation,
    Document,
    Entity,
    EntityType,
    Event,
    Fact,
    Mention,
    Relation,
    add_mentions,
    check_confidence,
    digest,
    make_event_id,
    make_relation_id,
    normalize_predicate,
    surrogate_at,
    union_mentions,
    updated_mentions,
)
from noema.model.stores import RecordStore

# The items are imported from noema.model.records; retrieval's time order and bridges still
# take Event and VALUE_TYPES from here.
__all__ = ["VALUE_TYPES", "Event", "SemanticGraph"]

_R = TypeVar("_R")


def _copied(store: MutableMapping[str, _R]) -> MutableMapping[str, _R]:
    """A copy of a record store to change alone: a dict's, or a column store's changes (its
    rows are shared, never changed)."""
    return store.copy() if isinstance(store, RecordStore) else dict(store)


def _label(text: str, what: str) -> str:
    """``text`` normalized as a predicate or event label; refused when nothing is left."""
    normalized = normalize_predicate(text)
    if not normalized:
        raise GraphError(f"{what} {text!r} has no letters or digits")
    return normalized


class SemanticGraph(GraphRecords):
    """Entities, relations, events and documents, with an index of the facts touching each entity.

    Adding a relation or event that already exists (same subject, predicate and object; same label,
    participants and time) does not duplicate it: the mentions are united and the existing id is
    returned. Insertion order is kept and is the order of notation and JSON output. The JSON
    form (``to_dict``, ``to_json``, ``from_dict``, ``from_json``, ``from_records``) and the
    records it holds come from :class:`~noema.model.graphjson.GraphRecords`.

    Example:
        >>> g = SemanticGraph()
        >>> page = g.add_entity("Larry Page", "PERSON")
        >>> google = g.add_entity("Google", "ORG")
        >>> rid = g.add_relation(page, "found", google)
        >>> g.relations[rid].predicate
        'found'
    """

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

    def fact(self, fact_id: str) -> Fact:
        """The relation or event with this id.

        Raises:
            GraphError: the graph holds neither.
        """
        found = self._relations.get(fact_id) or self._events.get(fact_id)
        if found is None:
            raise GraphError(f"no relation or event with id {fact_id!r} in this graph")
        return found

    def facts_of(self, entity_id: str) -> list[str]:
        """Ids of the relations and events that involve ``entity_id``, in insertion order."""
        self._require_entity(entity_id)
        return self._facts_by_entity.of(entity_id)

    def iter_facts(self) -> Iterator[Fact]:
        """Every relation, then every event, in insertion order."""
        yield from self._relations.values()
        yield from self._events.values()

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
            at = surrogate_at(text)
            if at is not None:  # no bundle or notation could hold it
                raise GraphError(f"entity name {text!r} holds a lone surrogate at index {at}")
        base = "ent_" + digest(type, name)
        entity_id, n = base, 1
        while entity_id in self._entities:
            n += 1
            entity_id = f"{base}_{n}"
        self._entities[entity_id] = Entity(
            id=entity_id,
            name=name,
            type=cast(EntityType, type),
            aliases=tuple(dict.fromkeys(a for a in aliases if a != name)),
            mentions=union_mentions(mentions),
            confidence=check_confidence(confidence),
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
        normalized = _label(predicate, "predicate")
        relation_id = make_relation_id(subject_id, normalized, object_id)
        ms, c = tuple(mentions), check_confidence(confidence)
        return self._add_fact(Relation(relation_id, subject_id, normalized, object_id, ms, c))

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
        normalized = _label(label, "event label")
        event_id = make_event_id(normalized, participants, time)
        ms, c = tuple(mentions), check_confidence(confidence)
        return self._add_fact(Event(event_id, normalized, participants, time, ms, c))

    def _add_fact(self, fact: Fact) -> str:
        """Store a new fact (its mentions sorted), or give the stored one of that id these
        mentions too (and the higher confidence). Only a new fact's mentions are sorted whole:
        a fact repeated along a text gets its mentions appended (see add_mentions)."""
        existing = self._relations.get(fact.id) or self._events.get(fact.id)
        if existing is not None:
            self._store_of(existing)[fact.id] = replace(
                existing,
                mentions=add_mentions(existing.mentions, fact.mentions),
                confidence=max(existing.confidence, fact.confidence),
            )
            return fact.id
        fact = replace(fact, mentions=union_mentions(fact.mentions))
        self._store_of(fact)[fact.id] = fact
        for eid in fact.entity_ids:
            self._facts_by_entity.add(eid, fact.id)
        return fact.id

    def _add_like(self, fact: Fact, entity_ids: Sequence[str], mentions: Sequence[Mention]) -> str:
        """A fact like ``fact`` (same predicate or label, time, confidence) between
        ``entity_ids``, with ``mentions``: how merging and splitting entities rewire facts."""
        if isinstance(fact, Relation):
            subject, obj = entity_ids
            return self.add_relation(
                subject, fact.predicate, obj, mentions=mentions, confidence=fact.confidence
            )
        return self.add_event(
            fact.label, entity_ids, time=fact.time, mentions=mentions, confidence=fact.confidence
        )

    # -- changing ------------------------------------------------------------------------------
    def update_entity(
        self,
        entity_id: str,
        *,
        name: str | None = None,
        aliases: Sequence[str] | None = None,
        mentions: Sequence[Mention] | None = None,
        confidence: float | None = None,
        type: str | None = None,
    ) -> Entity:
        """Replace some fields of an entity (its id stays) and return the new value.

        Changing the ``type`` keeps the id, so the facts and everything that names the entity
        by id stay as they are (an id is a hash of the type and name it was first added with).
        """
        entity = self._require_entity(entity_id)
        if type is not None and type not in ENTITY_TYPES:
            raise GraphError(f"unknown entity type {type!r}; use one of {', '.join(ENTITY_TYPES)}")
        new_name = entity.name if name is None else name
        updated = replace(
            entity,
            name=new_name,
            type=entity.type if type is None else cast(EntityType, type),
            aliases=tuple(
                dict.fromkeys(
                    a for a in (entity.aliases if aliases is None else aliases) if a != new_name
                )
            ),
            mentions=entity.mentions if mentions is None else updated_mentions(entity, mentions),
            confidence=entity.confidence if confidence is None else check_confidence(confidence),
        )
        self._entities[entity_id] = updated
        return updated

    def absorb(self, keep_id: str, other: Entity) -> Entity:
        """Make ``other`` (an entity of this graph or another) a surface form of ``keep_id``:
        its name and aliases become aliases, the mentions are united and the higher confidence
        is kept. Returns the new value; ``other``'s facts are the caller's business."""
        keep = self._require_entity(keep_id)
        return self.update_entity(
            keep_id,
            aliases=(*keep.aliases, other.name, *other.aliases),
            mentions=(*keep.mentions, *other.mentions),
            confidence=max(keep.confidence, other.confidence),
        )

    def remove_entity(self, entity_id: str) -> None:
        """Remove an entity, the relations that use it, and it from events (empty events go)."""
        self._require_entity(entity_id)
        for fact_id in self._facts_by_entity.of(entity_id):
            fact = self._remove_fact(fact_id)
            rest = [e for e in fact.entity_ids if e != entity_id]
            if isinstance(fact, Event) and rest:
                self._add_like(fact, rest, fact.mentions)
        self._facts_by_entity.drop(entity_id)
        del self._entities[entity_id]

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
            if rest is None:
                self._remove_fact(fact.id)
                removed_facts.add(fact.id)
            elif rest != fact.mentions:
                self._store_of(fact)[fact.id] = replace(fact, mentions=rest)
        for entity in list(self._entities.values()):
            rest = kept(entity.mentions)
            if rest is None:
                removed_facts.update(self._facts_by_entity.of(entity.id))
                self.remove_entity(entity.id)
                removed_entities.add(entity.id)
            elif rest != entity.mentions:
                self._entities[entity.id] = replace(entity, mentions=rest)
        for doc_id in gone:
            self._documents.pop(doc_id, None)
        return removed_entities, removed_facts

    def merge_entities(self, keep_id: str, merge_id: str, *, across_types: bool = False) -> str:
        """Merge entity ``merge_id`` into ``keep_id`` and return ``keep_id``.

        The merged entity's name and aliases become aliases of the kept one, mentions are united,
        and every relation and event is remapped. A relation that would link the kept entity to
        itself is dropped. Entities of different types never merge, except with
        ``across_types=True``: the canonicalizer's typed-once rule, for one name that NER typed
        differently (the kept entity's type stays).
        """
        keep = self._require_entity(keep_id)
        gone = self._require_entity(merge_id)
        if keep_id == merge_id:
            return keep_id
        if keep.type != gone.type and not across_types:
            raise GraphError(
                f"cannot merge {gone.name!r} ({gone.type}) into {keep.name!r} ({keep.type}): "
                "entities merge only within one type"
            )
        for fact_id in self._facts_by_entity.of(merge_id):
            fact = self._remove_fact(fact_id)
            ends = [keep_id if e == merge_id else e for e in fact.entity_ids]
            if isinstance(fact, Event) or ends[0] != ends[1]:
                self._add_like(fact, ends, fact.mentions)
        self._facts_by_entity.drop(merge_id)
        del self._entities[merge_id]
        self.absorb(keep_id, gone)
        return keep_id

    def split_entity(
        self, entity_id: str, name: str, *, document_ids: Iterable[str], type: str | None = None
    ) -> str:
        """Undo a merge: what ``document_ids`` said about ``entity_id`` under the surface form
        ``name`` becomes a new entity of the same type (or ``type``, the type it had before a
        typed-once merge), and returns its id.

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
        new_id = self.add_entity(
            name, type or entity.type, mentions=moved, confidence=entity.confidence
        )
        self.update_entity(
            entity_id,
            aliases=[a for a in entity.aliases if a != name],
            mentions=[m for m in entity.mentions if m not in moved],
        )
        for fact_id in self._facts_by_entity.of(entity_id):
            fact = self.fact(fact_id)
            taken = [m for m in fact.mentions if m.document_id in docs]
            if not taken:
                continue
            kept = [m for m in fact.mentions if m.document_id not in docs]
            self._remove_fact(fact_id)
            if kept:
                self._add_like(fact, fact.entity_ids, kept)
            self._add_like(fact, [new_id if e == entity_id else e for e in fact.entity_ids], taken)
        return new_id

    def copy(self) -> SemanticGraph:
        """A copy that can be changed without touching this graph."""
        other = SemanticGraph()
        with paused_gc():  # a dict per entity: see noema.model.gcpause
            other._entities = _copied(self._entities)
            other._relations = _copied(self._relations)
            other._events = _copied(self._events)
            other._documents = _copied(self._documents)
            other._facts_by_entity = self._facts_by_entity.copy()
        return other

    # -- internals -----------------------------------------------------------------------------
    def _require_entity(self, entity_id: str) -> Entity:
        try:
            return self._entities[entity_id]
        except KeyError:
            raise GraphError(f"no entity with id {entity_id!r} in this graph") from None

    def _remove_fact(self, fact_id: str) -> Fact:
        fact = self._relations.pop(fact_id, None) or self._events.pop(fact_id)
        for eid in fact.entity_ids:
            self._facts_by_entity.discard(eid, fact_id)
        return fact
