"""The sentence sidecar: vectors of the sentences facts came from, and who a document is about.

Every fact the parser finds carries a mention spanning its whole sentence, so the set of source
sentences is a function of ``graph.json``: the distinct ``(document, start, end)`` spans of the
facts' mentions (:class:`~noema.model.spans.Sentence`). The sidecar holds one vector per such
sentence (the sentence's text, after its document's title when it has one, so "It was founded in
1998." still says what "it" is), the facts of each sentence, and each document's *topic*: the
entity the document is about (the one its title names, else the first entity it mentions). Retrieval uses it to choose seeds by sentence
and to hop from an entity to the document about it. It keeps the word index of its sentences too
(:mod:`noema.vectors.words`), read from a bundle or made on first use.

The vectors are never mixed with the fact vectors of ``embeddings.bin``: a bundle stores them as
their own member, and a bundle without them rebuilds them from the graph on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from types import MappingProxyType
from typing import cast

import numpy as np

from noema.errors import BundleError, OptionError
from noema.model.gcpause import paused_gc
from noema.model.graph import SemanticGraph
from noema.model.records import Document, Fact
from noema.model.spans import Sentence
from noema.vectors._sentence_keys import (
    SENTENCE_RENDERING,
    key_digest,
    key_with_digest,
    sentence_key,
    sentence_text_for_embedding,
    split_key,
)
from noema.vectors._topics import TOPIC_RULE, document_topics, document_topics_and_forms
from noema.vectors.embed import Embedder, Vectors
from noema.vectors.index import SourceCheck, VectorIndex
from noema.vectors.words import LexicalIndex, RowSentences

__all__ = [
    "SENTENCE_RENDERING",
    "TOPIC_RULE",
    "SentenceIndex",
    "StoredSentences",
    "document_topics",
    "key_digest",
    "key_with_digest",
    "sentence_key",
    "sentence_text_for_embedding",
    "source_sentences",
    "split_key",
]


def source_sentences(graph: SemanticGraph) -> dict[Sentence, list[str]]:
    """Every fact's source sentences and the facts of each, sentences in (document, span) order."""
    return _source_sentences(graph)[0]


def _source_sentences(graph: SemanticGraph) -> tuple[dict[Sentence, list[str]], bool]:
    """:func:`source_sentences`, and whether every fact mention lies in a document of the graph
    (a mention of another document has no sentence here, until a write adds that document)."""
    facts: dict[Sentence, list[str]] = {}
    documents = graph.documents
    complete = True
    for fact in graph.iter_facts():
        for m in fact.mentions:
            if m.document_id in documents:
                facts.setdefault(Sentence(m.document_id, m.start, m.end), []).append(fact.id)
            else:
                complete = False
    # the dataclass's own ordering, compared as plain tuples (5 times faster at 100,000)
    ordered = sorted(
        facts.items(), key=lambda item: (item[0].document_id, item[0].start, item[0].end)
    )
    return dict(ordered), complete


def _changed_sentences(
    previous: SentenceIndex, graph: SemanticGraph
) -> dict[Sentence, Sequence[str]] | None:
    """:func:`source_sentences` of ``graph``, worked out from ``previous`` (the sidecar of the
    graph before a write) and the facts the write changed, found by comparing records (a write
    replaces every record it changes): the same sentences, facts and order as the full
    computation, in time for what changed rather than for the base (at a million facts the full
    one made every write pay for every sentence). ``None`` when ``previous`` cannot tell: it
    knows no graph, or a fact mention lies outside the documents before or after."""
    if previous._basis is None or not previous._basis.complete:
        return None
    documents = graph.documents
    withdrawn, added = _changed_facts(graph, previous._basis.graph)
    withdrawn_ids = {f.id for f in withdrawn}
    touched: dict[Sentence, None] = {}
    for fact in withdrawn:
        for m in fact.mentions:
            touched[Sentence(m.document_id, m.start, m.end)] = None
    joining: dict[Sentence, list[str]] = {}
    for fact in added:
        for m in fact.mentions:
            if m.document_id not in documents:
                return None
            sentence = Sentence(m.document_id, m.start, m.end)
            joining.setdefault(sentence, []).append(fact.id)
            touched[sentence] = None
    for document_id in previous.by_document.keys() - documents.keys():
        for sentence in previous.by_document[document_id]:
            if any(f not in withdrawn_ids for f in previous.facts[sentence]):
                return None  # a fact still cites a document that is gone
    position: dict[str, int] | None = None
    changed: dict[str, dict[Sentence, list[str]]] = {}  # by document
    for sentence in touched:
        if sentence.document_id not in documents:
            continue
        kept = [f for f in previous.facts.get(sentence, ()) if f not in withdrawn_ids]
        joined = joining.get(sentence, [])
        if kept and joined:  # a changed fact keeps its place among the others
            if position is None:
                position = {f: n for n, f in enumerate(chain(graph.relations, graph.events))}
            ids = sorted([*kept, *joined], key=position.__getitem__)
        else:
            ids = kept or joined
        changed.setdefault(sentence.document_id, {})[sentence] = ids
    return _with_changes(previous, documents, changed)


def _changed_facts(graph: SemanticGraph, built: SemanticGraph) -> tuple[list[Fact], list[Fact]]:
    """The facts of ``built`` that ``graph`` no longer holds as they were, and the facts of
    ``graph`` that ``built`` did not hold as they are (a write replaces every record it
    changes, so a record kept is the same object)."""
    withdrawn: list[Fact] = []
    added: list[Fact] = []
    for kind, new, old in (
        ("relations", graph.relations, built.relations),
        ("events", graph.events, built.events),
    ):
        # both read in place from one bundle: only the ids either changed can differ
        candidates = graph.changed_ids(built, kind)
        # (in graph order, which orders a new sentence's facts; listing the ids makes no record)
        pairs = new.items() if candidates is None else ((k, new[k]) for k in new if k in candidates)
        fresh = [fact for fact_id, fact in pairs if old.get(fact_id) is not fact]
        added.extend(fresh)
        withdrawn.extend(old[f.id] for f in fresh if f.id in old)
        gone = old.keys() - new.keys() if candidates is None else candidates - new.keys()
        withdrawn.extend(old[fact_id] for fact_id in gone if fact_id in old)
    return withdrawn, added


def _with_changes(
    previous: SentenceIndex,
    documents: Mapping[str, Document],
    changed: dict[str, dict[Sentence, list[str]]],
) -> dict[Sentence, Sequence[str]]:
    """``previous``'s sentences and their facts in :func:`source_sentences` order, with the
    ``changed`` sentences of each document (by document; an empty list: the sentence is gone)
    in their place, and only the sentences of ``documents``."""
    by_document: dict[str, list[Sentence]] = {}
    for document_id, sentences in changed.items():
        listed = [s for s in previous.by_document.get(document_id, ()) if s not in sentences]
        listed.extend(s for s, ids in sentences.items() if ids)
        listed.sort(key=lambda s: (s.start, s.end))
        by_document[document_id] = listed
    out: dict[Sentence, Sequence[str]] = {}
    for document_id in sorted(
        (previous.by_document.keys() & documents.keys()) | by_document.keys()
    ):
        if document_id in by_document:
            ours = changed[document_id]
            for s in by_document[document_id]:
                out[s] = ours[s] if s in ours else previous.facts[s]
        else:
            for s in previous.by_document[document_id]:
                out[s] = previous.facts[s]
    return out


def _kept_documents(graph: SemanticGraph, previous: SentenceIndex | None) -> Callable[[str], bool]:
    """Whether a document of ``graph`` is the one ``previous`` was worked out from (a changed
    document is a new record; one read in place from a bundle is the same row)."""
    if previous is None or previous._basis is None:
        return lambda document_id: False
    documents, before = graph.documents, previous._basis.graph.documents
    changed = graph.changed_ids(previous._basis.graph, "documents")
    if changed is not None:
        return lambda document_id: document_id not in changed and document_id in before
    return lambda document_id: before.get(document_id) is documents[document_id]


def _stored_vectors(
    keys: Sequence[str],
    dimension: int,
    blob: bytes | memoryview,
    check: SourceCheck | None,
    rows: Mapping[str, int] | None = None,
    *,
    unit_checked: bool = True,
) -> VectorIndex:
    """The sidecar's vectors as a bundle stores them, one row per key (``check``,
    ``unit_checked``: as for :meth:`VectorIndex.from_bytes`; ``rows``: each key's row, when the
    caller has them)."""
    if len(blob) != len(keys) * dimension * 4:
        raise BundleError(
            f"the sentence sidecar holds {len(blob) // (4 * dimension)} rows, the graph "
            f"has {len(keys)} source sentences"
        )
    return VectorIndex.from_bytes(
        keys, dimension, blob, None, check=check, rows=rows, unit_checked=unit_checked
    )


@dataclass(frozen=True)
class StoredSentences:
    """What a bundle stores of a sidecar besides its vectors (:mod:`noema.storage.columns`): each
    sentence's facts, in :func:`source_sentences` order, each sentence's key, the topics, and
    the compared form of the names and titles they were found with (which the next write
    reuses)."""

    facts: Mapping[Sentence, Sequence[str]]
    keys: Mapping[Sentence, str]
    topics: Mapping[str, Sequence[str]]
    names: Mapping[str, str]
    titles: Mapping[str, str]
    # read in place (noema.storage._column_sentences): each key's sentence, each document's
    # sentences, the keys in row order and each key's row, none of them made on opening
    by_key: Mapping[str, Sentence] | None = None
    by_document: Mapping[str, tuple[Sentence, ...]] | None = None
    key_list: Sequence[str] | None = None
    key_rows: Mapping[str, int] | None = None


@dataclass(frozen=True)
class _Basis:
    """What a sidecar was worked out from, so the next write works out only what changed: the
    graph (a published graph is never changed: a writer changes a copy), whether every fact
    mention lay in one of its documents, and the compared forms of its names and titles."""

    graph: SemanticGraph
    complete: bool
    names: Mapping[str, str]
    titles: Mapping[str, str]


class SentenceIndex:
    """The sidecar for one graph: sentence vectors, facts per sentence, topics, per document.

    Build it with :meth:`build` (which reuses the vectors of a previous sidecar and embeds only
    new sentences); it is never changed afterwards, so readers share it without locks.
    """

    def __init__(
        self,
        vectors: VectorIndex,
        facts: Mapping[Sentence, Sequence[str]],
        topics: Mapping[str, Sequence[str]],
        keys: Mapping[Sentence, str],
        *,
        basis: _Basis | None = None,
    ) -> None:
        self.vectors = vectors
        # the graph the keys were computed from: a later sidecar reuses the keys of a sentence
        # whose document is the same object in its graph (a changed document is a new one)
        self._basis = basis
        self._keys: Mapping[Sentence, str] = dict(keys)
        self.facts: Mapping[Sentence, tuple[str, ...]] = MappingProxyType(
            {s: tuple(f) for s, f in facts.items()}
        )
        self.topics: Mapping[str, tuple[str, ...]] = MappingProxyType(
            {e: tuple(d) for e, d in topics.items()}
        )
        self._by_key: Mapping[str, Sentence] = {key: s for s, key in self._keys.items()}
        by_document: dict[str, list[Sentence]] = {}
        for s in self.facts:
            by_document.setdefault(s.document_id, []).append(s)
        self.by_document: Mapping[str, tuple[Sentence, ...]] = MappingProxyType(
            {d: tuple(ss) for d, ss in by_document.items()}
        )
        # the word index of the sentences: kept from a bundle, or made on first use; its own
        # lock, so two bases making theirs at once never wait on each other
        self._words: LexicalIndex | None = None
        self._words_lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.facts)

    def word_index(self, graph: SemanticGraph, *, limit: int | None = None) -> LexicalIndex | None:
        """The BM25 index of the sentences (:mod:`noema.vectors.words`): the one a bundle stored,
        else made from ``graph`` (the graph this sidecar was built for) on the first call and
        kept; ``None`` where none is kept yet and the sidecar holds more than ``limit``
        sentences. Made once, whichever threads ask at once."""
        made = self._words
        if made is not None:
            return made
        if limit is not None and len(self) > limit:
            return None
        with self._words_lock:
            if self._words is None:
                self._words = LexicalIndex.of_documents(graph, self.by_document)
            return self._words

    def keep_stored_words(self, index: LexicalIndex) -> None:
        """Keep the word index a bundle stored for these sentences (in their row order), read
        in place: retrieval searches it rather than making one. Called while the bundle opens,
        before any reader sees this sidecar."""
        if len(index) != len(self):
            raise BundleError(
                f"the word index holds {len(index):,} sentences, the sidecar {len(self):,}"
            )
        self._words = index

    def row_sentences(self) -> Sequence[Sentence]:
        """The sentences in the row order of the vectors (:func:`source_sentences` order), each
        looked up as it is read (none made now)."""
        return RowSentences(len(self), lambda row: self._by_key[self.vectors.id_at(row)])

    @property
    def keys(self) -> Mapping[Sentence, str]:
        """Each sentence's key (:func:`sentence_key`), the id of its vector."""
        return MappingProxyType(self._keys)

    @property
    def compared_forms(self) -> tuple[Mapping[str, str], Mapping[str, str]]:
        """The compared form (``normalize_name``) of each entity name and of each title the
        topics were found with; empty when this sidecar knows no graph."""
        if self._basis is None:
            return {}, {}
        return MappingProxyType(self._basis.names), MappingProxyType(self._basis.titles)

    @classmethod
    def build(
        cls,
        graph: SemanticGraph,
        embedder: Embedder,
        previous: SentenceIndex | None = None,
    ) -> SentenceIndex:
        """The sidecar of ``graph``, embedding only sentences ``previous`` has no vector for.

        A write into a large base touches few documents: the keys of the others' sentences are
        taken from ``previous`` rather than hashed again, and their vectors copied as one block
        (at 100,000 sentences the two had cost 2-3 s a write)."""
        # the collector is paused over the work on every sentence, not over the embedding
        # (noema.model.gcpause; 100,000 sentences: 1.6-3.0 s -> 0.9-1.0 s a write)
        with paused_gc():
            previous = previous._held() if previous is not None else None
            changed = _changed_sentences(previous, graph) if previous is not None else None
            facts, complete = (changed, True) if changed is not None else _source_sentences(graph)
            kept = _kept_documents(graph, previous)
            before_keys = previous._keys if previous is not None else {}
            keys = {}
            for s in facts:
                known_key = before_keys.get(s) if kept(s.document_id) else None
                keys[s] = known_key if known_key is not None else sentence_key(graph, s)
            old = previous.vectors if previous is not None else None
            ordered_keys = list(keys.values())
            rows = old.rows_of(ordered_keys) if old is not None else np.full(len(keys), -1)
            if old is not None and len(old):
                # one gather of the kept rows into the new matrix; a missing sentence's row holds
                # row 0 until its vector is written below (a zeroed matrix and a masked copy
                # took 1 s a write at 100,000 sentences, this 0.04 s)
                matrix = old.vectors.take(np.maximum(rows, 0), axis=0)
            else:
                matrix = np.zeros((len(keys), embedder.dimension), dtype=np.float32)
            at = {key: n for n, key in enumerate(ordered_keys)}
            missing = [s for s, k in keys.items() if rows[at[k]] < 0]
            # longest first, so each batch holds texts of about one length (less padding)
            missing.sort(key=lambda s: (s.start - s.end, s))
            texts = [sentence_text_for_embedding(graph, s) for s in missing]
        embedded = embedder.embed(texts) if missing else None
        with paused_gc():
            if embedded is not None:
                matrix[[at[keys[s]] for s in missing]] = embedded
            ordered = VectorIndex.from_rows(ordered_keys, matrix)
            if old is not None:  # its approximate index is extended, whatever the row order
                ordered.inherit_approximate(old)
            basis = previous._basis if previous is not None else None
            topics, names, titles = document_topics_and_forms(
                graph, basis.names if basis else {}, basis.titles if basis else {}
            )
            basis = _Basis(graph, complete, names, titles)
            return cls(ordered, facts, topics, keys, basis=basis)

    @classmethod
    def from_vectors(cls, graph: SemanticGraph, vectors: VectorIndex) -> SentenceIndex:
        """The sidecar of ``graph`` over stored vectors (rows in :func:`source_sentences` order).

        Raises:
            ValueError: the rows do not belong to the graph's sentences.
        """

        def checked(keys: list[str]) -> VectorIndex:
            if keys != vectors.ids:
                raise OptionError("the sentence vectors do not match the graph's source sentences")
            return vectors

        return cls._over(graph, checked)

    @classmethod
    def from_bytes(
        cls,
        graph: SemanticGraph,
        dimension: int,
        blob: bytes | memoryview,
        *,
        check: SourceCheck | None = None,
        unit_checked: bool = True,
    ) -> SentenceIndex:
        """The sidecar of ``graph`` over rows stored by a bundle (:func:`source_sentences` order);
        ``check`` and ``unit_checked`` as for :meth:`VectorIndex.from_bytes`.

        Raises:
            BundleError: the rows do not fit the graph's sentences.
        """

        def vectors(keys: list[str]) -> VectorIndex:
            return _stored_vectors(keys, dimension, blob, check, unit_checked=unit_checked)

        return cls._over(graph, vectors)

    @classmethod
    def from_stored(
        cls,
        graph: SemanticGraph,
        dimension: int,
        blob: bytes | memoryview,
        stored: StoredSentences,
        *,
        check: SourceCheck | None = None,
        unit_checked: bool = True,
    ) -> SentenceIndex:
        """The sidecar of ``graph`` over rows stored by a bundle, with the sentences, facts,
        keys, topics and compared forms it stored beside them: nothing is listed, hashed or
        normalized again (at a million facts that took 11 s of opening, and the compared forms
        2.8 s of the first write after it). ``check`` and ``unit_checked`` as for
        :meth:`VectorIndex.from_bytes`.

        Raises:
            BundleError: the rows do not fit the stored sentences.
        """
        # a graph read from a bundle has every mention inside its documents (checked on load)
        basis = _Basis(graph, True, stored.names, stored.titles)
        if stored.key_list is None or stored.key_rows is None:
            keys = list(stored.keys.values())
            vectors = _stored_vectors(keys, dimension, blob, check, unit_checked=unit_checked)
            return cls(vectors, stored.facts, stored.topics, stored.keys, basis=basis)
        assert stored.by_key is not None and stored.by_document is not None
        vectors = _stored_vectors(
            stored.key_list,
            dimension,
            blob,
            check,
            stored.key_rows,
            unit_checked=unit_checked,
        )
        out = cls(vectors, {}, {}, {}, basis=basis)
        # the stored mappings as they are: nothing made for every sentence (a write makes its
        # own sidecar from them: see build)
        out._keys, out._by_key = stored.keys, stored.by_key
        # (read in place, each value is a tuple)
        out.facts = MappingProxyType(cast(Mapping[Sentence, tuple[str, ...]], stored.facts))
        out.topics = MappingProxyType(cast(Mapping[str, tuple[str, ...]], stored.topics))
        out.by_document = MappingProxyType(stored.by_document)
        return out

    @classmethod
    def _over(
        cls, graph: SemanticGraph, vectors_for: Callable[[list[str]], VectorIndex]
    ) -> SentenceIndex:
        """The sidecar of ``graph`` with the vectors ``vectors_for`` gives for its sentence keys."""
        facts, complete = _source_sentences(graph)
        keys = {s: sentence_key(graph, s) for s in facts}
        vectors = vectors_for(list(keys.values()))
        topics, names, titles = document_topics_and_forms(graph, {}, {})
        basis = _Basis(graph, complete, names, titles)
        return cls(vectors, facts, topics, keys, basis=basis)

    def _held(self) -> SentenceIndex:
        """This sidecar with its sentences, keys, topics and vector ids in dicts: what a write
        reads for every sentence. One read in place from a bundle looks each up in the bundle's
        arrays; the first write after opening makes them once (what opening made before)."""
        if isinstance(self._keys, dict):
            return self
        held = SentenceIndex(
            self.vectors.held(), dict(self.facts.items()), dict(self.topics.items()), {}
        )
        held._basis, held._keys = self._basis, dict(self._keys.items())
        held._by_key = {key: s for s, key in held._keys.items()}
        return held

    @classmethod
    def pooled(cls, indexes: Iterable[SentenceIndex]) -> SentenceIndex:
        """Only the vectors of several sidecars: a ``previous`` for :meth:`build` to reuse."""
        chosen = list(indexes)
        pool = VectorIndex(chosen[0].vectors.dimension)
        for item in chosen:
            if len(item.vectors):
                pool.add(item.vectors.ids, item.vectors.vectors)
        return cls(pool, {}, {}, {})

    def search(self, query: Vectors, k: int) -> list[tuple[Sentence, float]]:
        """The ``k`` sentences most similar to the question, best first."""
        return [(self._by_key[key], s) for key, s in self.vectors.search(query, k)]

    def search_many(self, queries: Vectors, k: int) -> list[list[tuple[Sentence, float]]]:
        """:meth:`search` for each row of ``queries``."""
        return [
            [(self._by_key[key], s) for key, s in hits]
            for hits in self.vectors.search_many(queries, k)
        ]

    def similarities(self, sentences: Iterable[Sentence], query: Vectors) -> dict[Sentence, float]:
        """Cosine similarity of each given sentence to the question."""
        chosen = list(sentences)
        if not chosen:
            return {}
        rows = np.stack([self.vectors.vector(self._keys[s]) for s in chosen])
        scores = rows @ np.asarray(query, dtype=np.float32).reshape(-1)
        return {s: round(float(v), 6) for s, v in zip(chosen, scores, strict=True)}
