"""The repairs a user makes to a knowledge base's entities, each an entry of the merge log and
each undone: ``merge_entities`` joins two entities (across types only when the user names the
type), ``split_entity`` undoes a merge, and ``retype`` changes an entity's type (retyping it back
undoes that). Like every write (:mod:`noema.writes`), each builds the next graph aside under the
store's lock and publishes it whole, so readers never see half a repair and a failed one changes
nothing.

:class:`EntityRepairs` gives :class:`noema.KnowledgeBase` these methods and its ``merge_log``;
:func:`entities_named`, :func:`entity_history` and :func:`describe_record` are what ``noema
entity`` and the MCP ``entity`` tool show of an entity.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from noema.errors import OptionError, UnknownIdError
from noema.ingest.canonical import Canonicalizer
from noema.model.graph import SemanticGraph
from noema.model.names import normalize_name
from noema.model.records import ENTITY_TYPES, Entity, MergeRecord
from noema.storage.store import Store

__all__ = [
    "EntityRepairs",
    "describe_record",
    "entities_named",
    "entity_history",
    "merge_entities",
    "retype",
    "split_entity",
]

# Merges that joined an entity of another type: undone alone, back to the type it had.
_ACROSS_TYPES = ("type", "user")


class EntityRepairs:
    """The merge log of a :class:`noema.KnowledgeBase` and the repairs logged in it (a base
    class of the knowledge base, which holds the store and canonicalizer they work on)."""

    _store: Store

    @property
    def _canonicalizer(self) -> Canonicalizer:
        """The canonicalizer the repairs merge and split with: the knowledge base's."""
        raise NotImplementedError

    @property
    def merge_log(self) -> tuple[MergeRecord, ...]:
        """Every merge the canonicalizer made and every repair (``merge_entities``,
        ``retype``) still in effect, oldest first."""
        return self._store.snapshot.merge_log

    def split_entity(self, entity_id: str, merged_name: str) -> str:
        """Undo the merges of ``merged_name`` into ``entity_id`` (see :attr:`merge_log`);
        returns the id of the entity split off.

        What the merged documents said under that name moves to the new entity, their records
        leave the merge log, and later documents using that name join the new entity. A name
        joined across types (rule ``"type"``, or ``"user"`` from :meth:`merge_entities`) is
        split alone, back to the type it had.

        Raises:
            ValueError: no merge of ``merged_name`` into ``entity_id`` is recorded; the message
                lists the names that were merged into it.
        """
        return split_entity(self._store, self._canonicalizer, entity_id, merged_name)

    def merge_entities(self, entity_id: str, other_id: str, *, type: str | None = None) -> Entity:
        """Merge the entity ``other_id`` into ``entity_id``, as asked: its facts move over, its
        names become aliases, and the merge log records it (rule ``"user"``, with the type the
        merged entity had). Returns the merged entity; :meth:`split_entity` undoes it.

        Entities of two types merge only when ``type`` names the type the merged entity is to
        have (a place never joins a person unless you say so). A ``type`` other than
        ``entity_id``'s also retypes it, recorded as :meth:`retype` records it.

        Raises:
            UnknownIdError: either id is not an entity of this knowledge base.
            ValueError: the two are of different types and ``type`` is not given; ``type`` is
                not one of :data:`noema.ENTITY_TYPES`; the two ids are the same.

        Example:
            >>> from noema import KnowledgeBase
            >>> kb = KnowledgeBase()
            >>> _ = kb.ingest(["Google acquired YouTube.", "Alphabet owns Google."])
            >>> ids = {e.name: e.id for e in kb.graph.entities.values()}
            >>> kb.merge_entities(ids["Google"], ids["Alphabet"], type="ORG").aliases
            ('Alphabet',)
            >>> kb.merge_log[-1].rule
            'user'
        """
        return merge_entities(self._store, self._canonicalizer, entity_id, other_id, type)

    def retype(self, entity_id: str, type: str) -> Entity:
        """Give an entity another type, one of :data:`noema.ENTITY_TYPES`; returns it.

        Its id, names and facts stay (no fact is embedded again: a fact's vector is built from
        names, not types). The merge log records the type it had (rule ``"retype"``); retyping
        it back to that type undoes the change and drops the record. Later documents join it
        by its new type.

        Raises:
            UnknownIdError: ``entity_id`` is not an entity of this knowledge base.
            ValueError: ``type`` is not one of the entity types.

        Example:
            >>> from noema import KnowledgeBase
            >>> kb = KnowledgeBase()
            >>> _ = kb.ingest(["Renata Villa joined Lindqvist Marine in 2010."])
            >>> villa = next(e for e in kb.graph.entities.values() if e.name == "Renata Villa")
            >>> kb.retype(villa.id, "PERSON").type
            'PERSON'
        """
        return retype(self._store, self._canonicalizer, entity_id, type)


def split_entity(
    store: Store, canonicalizer: Canonicalizer, entity_id: str, merged_name: str
) -> str:
    """Undo the merges of ``merged_name`` into ``entity_id``; returns the new entity's id."""
    with store.lock:
        log = store.snapshot.merge_log
        records = [
            r
            for r in log
            if r.entity_id == entity_id and r.merged_name == merged_name and r.rule != "retype"
        ]
        if not records:
            raise OptionError(_no_merge(log, entity_id, merged_name))
        # a merge across types is undone alone, and gives the split-off entity back its own
        # type: the same name's merges within the kept type stay
        typed_records = [r for r in records if r.rule in _ACROSS_TYPES]
        records = typed_records or records
        typed = typed_records[0].type if typed_records else None
        graph = store.snapshot.graph.copy()
        documents = {d for r in records for d in r.document_ids}
        new_id = graph.split_entity(entity_id, merged_name, document_ids=documents, type=typed)
        store.publish(graph, merge_log=tuple(r for r in log if r not in records))
        # after the publish: a failed one must leave no name leading to an entity never stored
        canonicalizer.point(merged_name, graph.entities[new_id].type, new_id)
    return new_id


def _no_merge(log: Iterable[MergeRecord], entity_id: str, merged_name: str) -> str:
    """Why ``split_entity`` has nothing to undo, with the names it could split instead."""
    records = [r for r in log if r.entity_id == entity_id]
    merged = sorted({r.merged_name for r in records if r.rule != "retype"})
    message = (
        f"no merge of {merged_name!r} into {entity_id!r} is recorded; "
        f"merged names: {', '.join(map(repr, merged)) or 'none'}"
    )
    retyped = [r.type for r in records if r.rule == "retype"]
    if retyped:
        message += (
            f"; its type was changed from {retyped[0]}, which "
            f"retype({entity_id!r}, {retyped[0]!r}) undoes"
        )
    return message


def retype(store: Store, canonicalizer: Canonicalizer, entity_id: str, type_: str) -> Entity:
    """Give ``entity_id`` the type ``type_``, logged; returns the entity as it is now."""
    _check_type(type_, "retype")
    with store.lock:
        snapshot = store.snapshot
        entity = _entity(snapshot.graph, entity_id)
        if entity.type == type_:
            return entity
        graph = snapshot.graph.copy()
        updated = graph.update_entity(entity_id, type=type_)
        # the fact index needs nothing: fact ids come from entity ids, and fact texts from names
        store.publish(graph, merge_log=_retyped(snapshot.merge_log, entity, type_))
        canonicalizer.refile(entity_id)
    return updated


def _retyped(log: Iterable[MergeRecord], entity: Entity, type_: str) -> tuple[MergeRecord, ...]:
    """``log`` after ``entity`` is given ``type_``: one ``"retype"`` record per entity, holding
    the type it had before its first change, and none once it is back to that type."""
    earlier = [r for r in log if r.rule == "retype" and r.entity_id == entity.id]
    first = earlier[0].type if earlier else entity.type
    kept = tuple(r for r in log if r not in earlier)
    if type_ == first:
        return kept
    record = MergeRecord(
        entity_id=entity.id,
        canonical_name=entity.name,
        merged_name=entity.name,
        type=first,
        rule="retype",
        similarity=None,
        document_ids=_documents(entity),
    )
    return (*kept, record)


def merge_entities(
    store: Store,
    canonicalizer: Canonicalizer,
    entity_id: str,
    other_id: str,
    type_: str | None,
) -> Entity:
    """Merge ``other_id`` into ``entity_id`` as the user asked, logged; returns the result."""
    if type_ is not None:
        _check_type(type_, "merge_entities")
    with store.lock:
        snapshot = store.snapshot
        keep, other = _entity(snapshot.graph, entity_id), _entity(snapshot.graph, other_id)
        if entity_id == other_id:
            raise OptionError(f"cannot merge {entity_id!r} into itself; give two entity ids")
        if type_ is None and keep.type != other.type:
            raise OptionError(
                f"{other.name!r} ({other.type}) and {keep.name!r} ({keep.type}) are of two "
                "types, and entities merge only within one; to merge them anyway, name the "
                f"type the merged entity has: merge_entities({entity_id!r}, {other_id!r}, "
                f"type={keep.type!r})"
            )
        graph = snapshot.graph.copy()
        graph.merge_entities(entity_id, other_id, across_types=True)
        log = list(_moved_records(snapshot.merge_log, other_id, keep))
        log.append(
            MergeRecord(
                entity_id=entity_id,
                canonical_name=keep.name,
                merged_name=other.name,
                type=other.type,
                rule="user",
                similarity=None,
                document_ids=_documents(other),
            )
        )
        if type_ is not None and type_ != keep.type:
            graph.update_entity(entity_id, type=type_)
            log = list(_retyped(log, keep, type_))
        store.publish(graph, merge_log=tuple(log))
        canonicalizer.refile(entity_id)
    return graph.entities[entity_id]


def _moved_records(
    log: Iterable[MergeRecord], merged_id: str, keep: Entity
) -> Iterable[MergeRecord]:
    """``log`` with the merges into ``merged_id`` now merges into ``keep`` (so each can still be
    split off); a change of the merged entity's type is no change of ``keep``'s, and goes."""
    for record in log:
        if record.entity_id != merged_id:
            yield record
        elif record.rule != "retype":
            yield replace(record, entity_id=keep.id, canonical_name=keep.name)


def _check_type(type_: str, method: str) -> None:
    if type_ not in ENTITY_TYPES:
        raise OptionError(f"{method}() takes type= one of {', '.join(ENTITY_TYPES)}, got {type_!r}")


def _entity(graph: SemanticGraph, entity_id: str) -> Entity:
    entity = graph.entities.get(entity_id)
    if entity is None:
        raise UnknownIdError(f"no entity with id {entity_id!r} in this knowledge base")
    return entity


def _documents(entity: Entity) -> tuple[str, ...]:
    return tuple(sorted({m.document_id for m in entity.mentions}))


# -- what is shown of an entity ----------------------------------------------------------------
def entities_named(graph: SemanticGraph, name: str) -> list[Entity]:
    """The entities with ``name`` as their name or an alias (compared as canonicalization
    compares names), the one in most facts first.

    Raises:
        OptionError: ``name`` is empty, or no entity has it.
    """
    key = normalize_name(name)
    if not key:
        raise OptionError("name is empty")
    matches = [
        e
        for e in graph.entities.values()
        if key in {normalize_name(n) for n in (e.name, *e.aliases)}
    ]
    if not matches:
        raise OptionError(f"no entity named {name!r} in this knowledge base")
    matches.sort(key=lambda e: (-len(graph.facts_of(e.id)), e.id))
    return matches


def entity_history(log: Iterable[MergeRecord], entity_id: str) -> tuple[MergeRecord, ...]:
    """The records of the merges into ``entity_id`` and of its change of type, oldest first."""
    return tuple(r for r in log if r.entity_id == entity_id)


def describe_record(record: MergeRecord, current_type: str) -> str:
    """One line saying what a record of an entity's history did; ``current_type`` is the
    entity's type now (what a ``"retype"`` record changed it to).

    Example:
        >>> record = MergeRecord("ent_1", "Harrow Avionics", "Harrow Avionics", "PERSON",
        ...                      "retype", None, ("a",))
        >>> describe_record(record, "ORG")
        'type changed from PERSON to ORG on request'
    """
    joined = f"{record.merged_name!r} joined it"
    if record.rule == "retype":
        return f"type changed from {record.type} to {current_type} on request"
    if record.rule == "user":
        return f"{joined} (was {record.type}): merged on request"
    if record.rule == "type":
        return f"{joined} (was {record.type}): one name typed two ways, this type far more often"
    if record.rule == "embedding":
        return f"{joined}: a similar name (similarity {record.similarity})"
    return f"{joined}: the same name once normalized"
