"""Canonicalization: merging the entities of new documents into what is already stored.

Two rules, in order, and only ever within one entity type (a third, below, joins one name
typed two ways):

1. exact match after normalization (case, accents, punctuation, a leading "the", business
   suffixes such as Inc, Corp, Ltd, LLC, GmbH, S.A.), so "Google, Inc." is "Google";
2. embedding similarity of the names at or above ``similarity_threshold``. Only names that could
   be two spellings of one thing are compared, and such names share a word or initials
   (:func:`noema.model.names.key_words`), so candidates come from a table of stored names by word,
   never from comparing all pairs, and a name is embedded only once it has a candidate. Dates and amounts of money
   merge only by rule 1, and names whose numbers differ ("iPhone 14", "iPhone 15") never merge
   by rule 2, because their embeddings are close while the things are not the same. Nor do
   names that each have a word the other lacks ("Tim Curry", "John Curry"; "Eastern Roman
   Empire", "Western Roman Empire"), that differ by a qualifier ("Ireland", "Northern Ireland")
   or a kind of place ("Kansas", "Kansas City"), or whose first parts differ ("Kingston,
   Jamaica", "Jamaica"); see :func:`noema.model.names.names_compatible`. Rule 2 joins spellings of one name ("Knicks", "New
   York Knicks"; "U.S.", "United States"), and close embeddings of names sharing a word are not
   that. A name is compared with the name of the entity it would join, not only with the
   spelling that led there, so a chain of close names stops at the first conflict.

A third rule crosses types, never persons and places: one normalized name that NER typed
differently in different documents ("Veltrix Robotics" as PERSON in one, ORG in three) becomes
one entity of the type most of its mentions have, when they have at least three times the
other's (see :meth:`Canonicalizer._type_once`); a proper name of two or more words left OTHER in
one document joins the one typed entity of exactly that name.

Every merge is recorded as a :class:`MergeRecord`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

import numpy as np

from noema.errors import OptionError
from noema.model.gcpause import paused_gc
from noema.model.graph import SemanticGraph
from noema.model.names import initials, key_words, names_compatible, normalize_name
from noema.model.records import VALUE_TYPES, Entity, MergeRecord
from noema.vectors.embed import Embedder, Vectors

__all__ = ["Canonicalizer", "IngestReport", "MergeRecord", "MergeResult", "normalize_name"]

_DIGITS = re.compile(r"\d+")
# Rule 3 (typed once): the types it unifies, and how one-sided the mentions must be.
TYPED_ONCE = ("PERSON", "ORG", "GPE", "LOC", "PRODUCT", "EVENT")
PLACES = frozenset({"GPE", "LOC"})
TYPE_MAJORITY = 3
_MAX_SUBSET_WORDS = 10
_MAX_LONGER = 64


@dataclass(frozen=True)
class MergeResult:
    """What :meth:`Canonicalizer.merge_into` added or changed in the store."""

    entity_ids: dict[str, str]  # incoming entity id -> stored entity id
    new_entity_ids: tuple[str, ...]
    new_relation_ids: tuple[str, ...]
    new_event_ids: tuple[str, ...]
    merges: tuple[MergeRecord, ...]


class Canonicalizer:
    """Merges incoming graphs into a store graph, keeping a table of stored entity names.

    Example:
        >>> from noema.vectors.embed import SentenceTransformerEmbedder
        >>> store, new = SemanticGraph(), SemanticGraph()
        >>> _ = store.add_entity("Google", "ORG")
        >>> _ = new.add_entity("Google, Inc.", "ORG")
        >>> result = Canonicalizer(SentenceTransformerEmbedder()).merge_into(store, new)
        >>> len(store.entities), result.merges[0].rule
        (1, 'exact')
    """

    def __init__(self, embedder: Embedder, similarity_threshold: float = 0.85) -> None:
        if not 0.0 < similarity_threshold <= 1.0:
            raise OptionError(
                f"similarity_threshold must be in (0, 1], got {similarity_threshold!r}"
            )
        self.embedder = embedder
        self.similarity_threshold = similarity_threshold
        self._keys: dict[tuple[str, str], str] = {}
        self._names = _Postings()  # stored entity names by type and lookup word
        self._vectors: dict[str, Vectors] = {}  # name vectors, embedded when first compared
        self._synced: set[str] = set()

    def forget(self) -> None:
        """Drop the names filed so far (name vectors, keyed by content-hash ids, stay valid):
        the next merge files the store's entities again. After a failed write."""
        self._keys = {}
        self._names = _Postings()
        self._synced = set()

    def name_vectors(self, store: SemanticGraph) -> dict[str, Vectors]:
        """The name vectors embedded so far, of the entities ``store`` holds: a bundle keeps
        them, so the next process compares new names with stored ones without embedding the
        stored ones again (at 100,000 facts, half of the first ingest after opening)."""
        embedded = dict(self._vectors)  # one step, while a writer may be adding to it
        return {eid: v for eid, v in embedded.items() if eid in store.entities}

    def remember(self, vectors: Mapping[str, Vectors]) -> None:
        """Take name vectors a bundle kept (see :meth:`name_vectors`)."""
        self._vectors.update(vectors)

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
        touched = {normalize_name(store.entities[t].name) for t in set(mapping.values())}
        kept = self._type_once(store, touched, merges)
        mapping = {i: kept.get(t, t) for i, t in mapping.items()}
        return MergeResult(
            entity_ids=mapping,
            new_entity_ids=tuple(e for e in new_entities if e in store.entities),
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
        names = self._names
        own = self._embedded_candidates(store, incoming, pending)

        new_entities = []
        for eid in pending:
            entity = incoming.entities[eid]
            key = (entity.type, normalize_name(entity.name))
            target = self._keys.get(key)  # an earlier entity of this batch may share the key
            rule: Literal["exact", "embedding"] = "exact"
            similarity = None
            if target is None and eid in own:
                rule = "embedding"
                target, similarity = self._best_match(store, entity.type, entity.name, own[eid])
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
            if entity.type not in VALUE_TYPES:
                # filed at once, so a later spelling in this batch meets it as a stored name
                names.add(entity.type, new_id, entity.name)
                if eid in own:
                    self._vectors[new_id] = own[eid]
        return new_entities

    def _embedded_candidates(
        self, store: SemanticGraph, incoming: SemanticGraph, pending: Sequence[str]
    ) -> dict[str, Vectors]:
        """The name vectors of the pending entities that have a compatible candidate to join;
        the candidates' stored names are embedded in the same call when not embedded yet."""
        names = self._names
        # Rule 2 only ever joins compatible names, and compatible names share a lookup word, so
        # only names with a compatible candidate (stored, or elsewhere in this batch) are
        # embedded: about a third of them on the HotpotQA pool.
        batch = _Postings()
        for eid in pending:
            entity = incoming.entities[eid]
            if entity.type not in VALUE_TYPES:
                batch.add(entity.type, eid, entity.name)
        asked: dict[str, str] = {}  # incoming id -> name
        stored_asked: dict[str, str] = {}  # stored id -> name
        for eid in pending:
            entity = incoming.entities[eid]
            if entity.type in VALUE_TYPES:
                continue
            stored = [
                c
                for c in names.candidates(entity.type, entity.name)
                if names_compatible(entity.name, store.entities[c].name)
            ]
            mates = [
                c
                for c in batch.candidates(entity.type, entity.name)
                if c != eid and names_compatible(entity.name, incoming.entities[c].name)
            ]
            if stored or mates:
                asked[eid] = entity.name
                stored_asked.update((c, store.entities[c].name) for c in stored)
        # one call for both, so short names share batches
        texts = [*asked.values(), *(n for i, n in stored_asked.items() if i not in self._vectors)]
        vectors = self.embedder.embed(texts) if texts else None
        own = {eid: vectors[n] for n, eid in enumerate(asked)} if vectors is not None else {}
        later = [i for i in stored_asked if i not in self._vectors]
        if vectors is not None:
            self._vectors.update(zip(later, vectors[len(asked) :], strict=True))
        return own

    def _best_match(
        self, store: SemanticGraph, type_: str, name: str, query: Vectors
    ) -> tuple[str | None, float | None]:
        """The stored entity most similar to ``name``, at or above the threshold, whose name has
        the same numbers and could be another spelling of it. Candidates are compared by their
        canonical name, so a chain of close names ("Margaret More", "Margaret", "Queen
        Margaret") stops at the first conflict."""
        digits = _DIGITS.findall(name)
        candidates = [
            c
            for c in self._names.candidates(type_, name)
            if _DIGITS.findall(store.entities[c].name) == digits
            and names_compatible(name, store.entities[c].name)
        ]
        unseen = [c for c in candidates if c not in self._vectors]
        if unseen:  # filed in this batch before its first compatible spelling came
            vectors = self.embedder.embed([store.entities[c].name for c in unseen])
            self._vectors.update(zip(unseen, vectors, strict=True))
        best: tuple[float, str] | None = None
        for c in candidates:  # sorted, so ties go to the same entity every time
            score = round(float(np.dot(query, self._vectors[c])), 6)
            if score >= self.similarity_threshold and (best is None or score > best[0]):
                best = (score, c)
        return (best[1], best[0]) if best is not None else (None, None)

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
        store.absorb(target, entity)  # the same step as SemanticGraph.merge_entities
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

    def _type_once(
        self, store: SemanticGraph, keys: set[str], merges: list[MergeRecord]
    ) -> dict[str, str]:
        """Rule 3 (an entity is typed once): the entities of one normalized name
        that NER typed differently join the one most of the name's mentions have, when the
        evidence is one-sided (at least :data:`TYPE_MAJORITY` times the other's mentions). Never
        a person and a place: a person named Washington stays apart from the city, however
        often the city is named. Returns merged id -> kept id.

        Measured on Re-DocRED's 500 dev documents (``benchmarks/redocred.py``): of the names
        typed two ways across documents, every pair with gold clusters on both sides was one
        kind of thing, and every merge this rule made there with gold on both sides was right.
        """
        kept: dict[str, str] = {}
        for key in sorted(keys):
            ids = list(
                dict.fromkeys(
                    eid
                    for type_ in TYPED_ONCE
                    if (eid := self._keys.get((type_, key))) is not None
                    and eid in store.entities
                    and normalize_name(store.entities[eid].name) == key
                )
            )
            if not ids:
                continue
            ranked = sorted(
                ids, key=lambda e: (-len(store.entities[e].mentions), store.entities[e].type, e)
            )
            keep = store.entities[ranked[0]]
            for other_id in ranked[1:]:
                other = store.entities[other_id]
                if len(keep.mentions) < TYPE_MAJORITY * len(other.mentions):
                    continue  # both types well attested: two things of one name
                if "PERSON" in (keep.type, other.type) and {keep.type, other.type} & PLACES:
                    continue
                keep = self._join_types(store, keep.id, other_id, merges, kept)
            undecided = self._keys.get(("OTHER", key))
            if (
                undecided is not None
                and undecided in store.entities
                and sum(e in store.entities for e in ids) == 1
                and store.entities[undecided].name == keep.name
                and keep.name[:1].isupper()
                and " " in keep.name
            ):
                # A proper name typed OTHER in one document, where its evidence disagreed
                # ("Marcus Crane", a given name NER called an organisation), is the one typed
                # entity of exactly that name: OTHER claims nothing, so it contradicts no type.
                # Not with two typed entities of the name (a town and a person: which one is
                # unknown), nor a common noun ("apple" is not "Apple"), nor a one-word name:
                # "English" and "Savoy" are adjectives, houses and places as often as one thing
                # (on Re-DocRED's gold clusters every wrong join was of one word).
                self._join_types(store, keep.id, undecided, merges, kept)
        return kept

    def _join_types(
        self,
        store: SemanticGraph,
        keep_id: str,
        other_id: str,
        merges: list[MergeRecord],
        kept: dict[str, str],
    ) -> Entity:
        """Merge ``other_id`` into ``keep_id`` across types (rule 3), logged, with the names
        filed under the kept type; returns the kept entity as it is now."""
        keep, other = store.entities[keep_id], store.entities[other_id]
        merges.append(
            MergeRecord(
                entity_id=keep.id,
                canonical_name=keep.name,
                merged_name=other.name,
                type=other.type,
                rule="type",
                similarity=None,
                document_ids=tuple(sorted({m.document_id for m in other.mentions})),
            )
        )
        store.merge_entities(keep.id, other_id, across_types=True)
        kept[other_id] = keep.id
        for alias in (other.name, *other.aliases):
            if self._keys.get((other.type, normalize_name(alias))) == other_id:
                del self._keys[(other.type, normalize_name(alias))]
        self._vectors.pop(other_id, None)
        self._names.discard({other_id})
        self._synced.discard(other_id)
        for alias in (other.name, *other.aliases):
            self._keys.setdefault((keep.type, normalize_name(alias)), keep.id)
        return store.entities[keep.id]

    def point(self, name: str, type_: str, entity_id: str) -> None:
        """Make later exact matches of ``name`` (in ``type_``) join ``entity_id``."""
        self._keys[(type_, normalize_name(name))] = entity_id

    def refile(self, entity_id: str) -> None:
        """Forget where ``entity_id``'s names were filed, so the next merge files them again
        under the type and names the entity has then: after a user changed its type or merged
        another entity into it. Names filed under its old type stop leading to it, as they
        would after a reload (which files every entity by its type)."""
        self._keys = {k: v for k, v in self._keys.items() if v != entity_id}
        self._names.discard({entity_id})
        self._synced.discard(entity_id)

    # the first write after a load files every name: with the collector paused (see
    # noema.model.gcpause), 0.8 -> 0.3 s at 100,000 facts
    @paused_gc()
    def _sync(self, store: SemanticGraph) -> None:
        """File stored entities this canonicalizer has not seen (e.g. after a bundle load) under
        their names; nothing is embedded until a new name could join one of them."""
        removed = self._synced - set(store.entities)
        if removed:
            for eid in removed:
                self._vectors.pop(eid, None)
            self._names.discard(removed)
            self._keys = {k: v for k, v in self._keys.items() if v not in removed}
            self._synced -= removed
        for entity in store.entities.values():
            if entity.id in self._synced:
                continue
            for name in (entity.name, *entity.aliases):
                self._keys.setdefault((entity.type, normalize_name(name)), entity.id)
            self._synced.add(entity.id)
            if entity.type not in VALUE_TYPES:
                self._names.add(entity.type, entity.id, entity.name)


class _Postings:
    """Entity ids by type, filed so that the names :func:`~noema.model.names.names_compatible` could
    join with a name are found without looking at any other: longer names holding all of its key
    words (by word), shorter names made of some of them (by their exact set of words), and names
    one of which is the other's initials."""

    def __init__(self) -> None:
        self._by_word: dict[tuple[str, str], set[str]] = {}
        self._by_set: dict[tuple[str, frozenset[str]], set[str]] = {}
        self._by_initials: dict[tuple[str, str], set[str]] = {}
        self._filed: dict[str, tuple[str, tuple[str, ...]]] = {}

    def _keys(
        self, type_: str, words: tuple[str, ...]
    ) -> list[tuple[dict[Any, set[str]], tuple[str, Any]]]:
        keys: list[tuple[dict[Any, set[str]], tuple[str, Any]]] = [
            (self._by_word, (type_, w)) for w in set(words)
        ]
        keys.append((self._by_set, (type_, frozenset(words))))
        if len(words) > 1:
            keys.append((self._by_initials, (type_, initials(words))))
        return keys

    def add(self, type_: str, entity_id: str, name: str) -> None:
        words = key_words(name)
        if not words:
            return  # a description or a name of filler words: joined only by its exact spelling
        self._filed[entity_id] = (type_, words)
        for table, key in self._keys(type_, words):
            table.setdefault(key, set()).add(entity_id)

    def discard(self, entity_ids: set[str]) -> None:
        for eid in entity_ids:
            filed = self._filed.pop(eid, None)
            if filed is not None:
                for table, key in self._keys(*filed):
                    table.get(key, set()).discard(eid)

    def candidates(self, type_: str, name: str) -> list[str]:
        """Ids of this type that could be another spelling of ``name``, sorted."""
        words = key_words(name)
        unique = sorted(set(words))
        if not unique:
            return []
        postings = sorted((self._by_word.get((type_, w), set()) for w in unique), key=len)
        found = set(postings[0]).intersection(*postings[1:])  # longer names
        if len(found) > _MAX_LONGER:
            # "John" is part of the names of hundreds of people and names none of them in
            # particular; comparing it with each would also embed every one of those names
            found = set()
        if len(unique) <= _MAX_SUBSET_WORDS:
            for size in range(1, len(unique) + 1):  # shorter names
                for subset in combinations(unique, size):
                    found |= self._by_set.get((type_, frozenset(subset)), set())
        else:  # a name this long has no shorter spelling worth enumerating: look at each
            for posting in postings:
                found |= {e for e in posting if set(self._filed[e][1]) <= set(unique)}
        if len(unique) == 1:  # names whose initials it is
            found |= self._by_initials.get((type_, unique[0]), set())
        else:  # the name its initials are
            found |= self._by_set.get((type_, frozenset([initials(words)])), set())
        return sorted(found)


@dataclass(frozen=True)
class IngestReport:
    """What one :meth:`KnowledgeBase.ingest` call added."""

    documents: int
    skipped_documents: int
    new_entities: int
    new_relations: int
    new_events: int
    merges: tuple[MergeRecord, ...]

    def __repr__(self) -> str:
        # one line in a notebook or a log: the merges are counted, not listed (see ``merges``)
        return (
            f"IngestReport(documents={self.documents}, skipped_documents="
            f"{self.skipped_documents}, new_entities={self.new_entities}, new_relations="
            f"{self.new_relations}, new_events={self.new_events}, merges=<{len(self.merges)}>)"
        )
