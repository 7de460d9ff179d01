"""Canonicalization: merging the entities of new documents into what is already stored.

Two rules, in order, and only ever within one entity type:

1. exact match after normalization (case, accents, punctuation, a leading "the", business
   suffixes such as Inc, Corp, Ltd, LLC, GmbH, S.A.), so "Google, Inc." is "Google";
2. embedding similarity of the names at or above ``similarity_threshold``, found by
   nearest-neighbour search (faiss), never by comparing all pairs. Dates and amounts of money
   merge only by rule 1, and names whose numbers differ ("iPhone 14", "iPhone 15") never merge
   by rule 2, because their embeddings are close while the things are not the same. Nor do
   names that each have a word the other lacks ("Tim Curry", "John Curry"; "Eastern Roman
   Empire", "Western Roman Empire"), that differ by a qualifier ("Ireland", "Northern Ireland")
   or whose first parts differ ("Kingston, Jamaica", "Jamaica"); see
   :func:`noema.names.names_compatible`. Rule 2 joins spellings of one name ("Knicks", "New
   York Knicks"; "U.S.", "United States"), and close embeddings of names sharing a word are not
   that. A name is compared with the name of the entity it would join, not only with the
   spelling that led there, so a chain of close names stops at the first conflict.

Every merge is recorded as a :class:`MergeRecord`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from noema.embed import Embedder
from noema.graph import VALUE_TYPES, SemanticGraph
from noema.index import VectorIndex
from noema.names import names_compatible, normalize_name

__all__ = ["Canonicalizer", "MergeRecord", "MergeResult", "normalize_name"]

_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class MergeRecord:
    """One merge: which surface form joined which entity, by which rule, at what similarity."""

    entity_id: str
    canonical_name: str
    merged_name: str
    type: str
    rule: Literal["exact", "embedding"]
    similarity: float | None
    document_ids: tuple[str, ...]


@dataclass(frozen=True)
class MergeResult:
    """What :meth:`Canonicalizer.merge_into` added or changed in the store."""

    entity_ids: dict[str, str]  # incoming entity id -> stored entity id
    new_entity_ids: tuple[str, ...]
    new_relation_ids: tuple[str, ...]
    new_event_ids: tuple[str, ...]
    merges: tuple[MergeRecord, ...]


class Canonicalizer:
    """Merges incoming graphs into a store graph, keeping an index of stored entity names.

    Example:
        >>> from noema.embed import SentenceTransformerEmbedder
        >>> store, new = SemanticGraph(), SemanticGraph()
        >>> _ = store.add_entity("Google", "ORG")
        >>> _ = new.add_entity("Google, Inc.", "ORG")
        >>> result = Canonicalizer(SentenceTransformerEmbedder()).merge_into(store, new)
        >>> len(store.entities), result.merges[0].rule
        (1, 'exact')
    """

    def __init__(self, embedder: Embedder, similarity_threshold: float = 0.85) -> None:
        if not 0.0 < similarity_threshold <= 1.0:
            raise ValueError(
                f"similarity_threshold must be in (0, 1], got {similarity_threshold!r}"
            )
        self.embedder = embedder
        self.similarity_threshold = similarity_threshold
        self._keys: dict[tuple[str, str], str] = {}
        self._names: dict[str, VectorIndex] = {}  # type -> index of stored entity names
        self._synced: set[str] = set()

    def merge_into(self, store: SemanticGraph, incoming: SemanticGraph) -> MergeResult:
        """Add ``incoming`` to ``store``, merging entities that are the same thing."""
        self._sync(store)
        mapping: dict[str, str] = {}
        merges: list[MergeRecord] = []
        pending: list[str] = []
        for entity in incoming.entities.values():
            key = (entity.type, normalize_name(entity.name))
            target = self._keys.get(key)
            if target is not None:
                mapping[entity.id] = target
                merges.append(self._merge(store, target, entity.id, incoming, "exact", None))
            else:
                pending.append(entity.id)
        new_entities = self._merge_by_embedding(store, incoming, pending, mapping, merges)

        relations_before = set(store.relations)
        events_before = set(store.events)
        for document in incoming.documents.values():
            store.add_document(document)
        for rel in incoming.relations.values():
            subject, obj = mapping[rel.subject_id], mapping[rel.object_id]
            if subject != obj:
                store.add_relation(
                    subject, rel.predicate, obj, mentions=rel.mentions, confidence=rel.confidence
                )
        for ev in incoming.events.values():
            store.add_event(
                ev.label,
                [mapping[p] for p in ev.participant_ids],
                time=ev.time,
                mentions=ev.mentions,
                confidence=ev.confidence,
            )
        return MergeResult(
            entity_ids=mapping,
            new_entity_ids=tuple(new_entities),
            new_relation_ids=tuple(r for r in store.relations if r not in relations_before),
            new_event_ids=tuple(v for v in store.events if v not in events_before),
            merges=tuple(merges),
        )

    # -- internals -----------------------------------------------------------------------------
    def _merge_by_embedding(
        self,
        store: SemanticGraph,
        incoming: SemanticGraph,
        pending: Sequence[str],
        mapping: dict[str, str],
        merges: list[MergeRecord],
    ) -> list[str]:
        embeddable = [e for e in pending if incoming.entities[e].type not in VALUE_TYPES]
        vectors = self.embedder.embed([incoming.entities[e].name for e in embeddable])
        row = {e: n for n, e in enumerate(embeddable)}
        by_type: dict[str, list[str]] = {}
        for eid in embeddable:
            by_type.setdefault(incoming.entities[eid].type, []).append(eid)
        # Nearest neighbours in two batched searches per type: among stored names, and among
        # this batch's own names (so two new spellings of one thing also meet).
        stored_hits: dict[str, list[tuple[str, float]]] = {}
        batch_hits: dict[str, list[tuple[str, float]]] = {}
        for type_, ids in by_type.items():
            matrix = vectors[[row[e] for e in ids]]
            index = self._names.get(type_)
            if index is not None and len(index):
                stored_hits.update(zip(ids, index.search_many(matrix, 5), strict=True))
            if len(ids) > 1:
                local = VectorIndex(self.embedder.dimension)
                local.add(ids, matrix)
                batch_hits.update(zip(ids, local.search_many(matrix, 6), strict=True))

        new_entities = []
        fresh: dict[str, tuple[list[str], list[int]]] = {}  # type -> new entity ids, vector rows
        for eid in pending:
            entity = incoming.entities[eid]
            key = (entity.type, normalize_name(entity.name))
            target = self._keys.get(key)  # an earlier entity of this batch may share the key
            rule: Literal["exact", "embedding"] = "exact"
            similarity = None
            if target is None and eid in row:
                rule = "embedding"
                target, similarity = self._first_match(
                    stored_hits.get(eid, ()), entity.name, lambda c: (c, store.entities[c].name)
                )
                if target is None:
                    target, similarity = self._first_match(
                        batch_hits.get(eid, ()),
                        entity.name,
                        # compared with the name the other spelling was merged into, so a chain
                        # of close names ("Margaret More", "Margaret", "Queen Margaret") stops
                        lambda c: (
                            (mapping[c], store.entities[mapping[c]].name) if c in mapping else None
                        ),
                    )
            if target is not None:
                mapping[eid] = target
                merges.append(self._merge(store, target, eid, incoming, rule, similarity))
                continue
            new_id = store.add_entity(
                entity.name,
                entity.type,
                aliases=entity.aliases,
                mentions=entity.mentions,
                confidence=entity.confidence,
            )
            mapping[eid] = new_id
            new_entities.append(new_id)
            self._keys.setdefault(key, new_id)
            self._synced.add(new_id)
            if eid in row:
                ids, rows = fresh.setdefault(entity.type, ([], []))
                ids.append(new_id)
                rows.append(row[eid])
        for type_, (ids, rows) in fresh.items():
            index = self._names.setdefault(type_, VectorIndex(self.embedder.dimension))
            index.add(ids, vectors[rows])
        return new_entities

    def _first_match(
        self,
        hits: Sequence[tuple[str, float]],
        name: str,
        resolve: Callable[[str], tuple[str, str] | None],
    ) -> tuple[str | None, float | None]:
        """The best hit at or above the threshold whose name has the same numbers and could be
        another spelling of ``name``."""
        digits = _DIGITS.findall(name)
        for candidate, score in hits:
            if score < self.similarity_threshold:
                break
            found = resolve(candidate)
            if (
                found is not None
                and _DIGITS.findall(found[1]) == digits
                and names_compatible(name, found[1])
            ):
                return found[0], score
        return None, None

    def _merge(
        self,
        store: SemanticGraph,
        target: str,
        incoming_id: str,
        incoming: SemanticGraph,
        rule: Literal["exact", "embedding"],
        similarity: float | None,
    ) -> MergeRecord:
        kept = store.entities[target]
        entity = incoming.entities[incoming_id]
        store.update_entity(
            target,
            aliases=(*kept.aliases, entity.name, *entity.aliases),
            mentions=(*kept.mentions, *entity.mentions),
            confidence=max(kept.confidence, entity.confidence),
        )
        for alias in (entity.name, *entity.aliases):
            self._keys.setdefault((kept.type, normalize_name(alias)), target)
        return MergeRecord(
            entity_id=target,
            canonical_name=kept.name,
            merged_name=entity.name,
            type=kept.type,
            rule=rule,
            similarity=similarity,
            document_ids=tuple(sorted({m.document_id for m in entity.mentions})),
        )

    def point(self, name: str, type_: str, entity_id: str) -> None:
        """Make later exact matches of ``name`` (in ``type_``) join ``entity_id``."""
        self._keys[(type_, normalize_name(name))] = entity_id

    def _sync(self, store: SemanticGraph) -> None:
        """Index stored entities this canonicalizer has not seen (e.g. after a bundle load)."""
        removed = self._synced - set(store.entities)
        if removed:  # forget them; the other entities keep their vectors
            for index in self._names.values():
                index.remove(sorted(removed))
            self._keys = {k: v for k, v in self._keys.items() if v not in removed}
            self._synced -= removed
        missing = [e for e in store.entities.values() if e.id not in self._synced]
        if not missing:
            return
        embeddable = [e for e in missing if e.type not in VALUE_TYPES]
        vectors = self.embedder.embed([e.name for e in embeddable])
        for entity in missing:
            for name in (entity.name, *entity.aliases):
                self._keys.setdefault((entity.type, normalize_name(name)), entity.id)
            self._synced.add(entity.id)
        by_type: dict[str, list[int]] = {}
        for n, entity in enumerate(embeddable):
            by_type.setdefault(entity.type, []).append(n)
        for type_, rows in by_type.items():
            index = self._names.setdefault(type_, VectorIndex(self.embedder.dimension))
            index.add([embeddable[n].id for n in rows], vectors[rows])
