"""The writes of a knowledge base: each builds the next graph aside under the store's lock and
publishes it with its merge log, index and sentences in one snapshot (:mod:`noema.storage.store`),
so readers never wait and a failed write changes nothing. :class:`noema.KnowledgeBase`'s
``ingest``, ``delete_documents`` and ``merge`` delegate here; the repairs of entities
(``merge_entities``, ``split_entity``, ``retype``) are in :mod:`noema.repairs`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace

from noema.errors import UnknownIdError
from noema.ingest.canonical import Canonicalizer, IngestReport
from noema.ingest.extractor import Extractor, extract_in_batches
from noema.ingest.sources import documents_of
from noema.model.graph import SemanticGraph
from noema.model.records import Document, MergeRecord
from noema.storage.store import Snapshot, Store, with_reused_vectors
from noema.vectors.embed import embedding_progress, embedding_stage
from noema.vectors.index import VectorIndex
from noema.vectors.sentences import SentenceIndex

__all__ = ["delete_documents", "ingest_documents", "merge_snapshot"]

ProgressCallback = Callable[[int, int], None]


def ingest_documents(
    store: Store,
    canonicalizer: Canonicalizer,
    extractor: Extractor,
    documents: Sequence[Document],
    *,
    progress: ProgressCallback | None = None,
    embed_progress: ProgressCallback | None = None,
    replaces: Collection[str] = (),
    then: Callable[[], object] | None = None,
) -> IngestReport:
    """Parse ``documents``, canonicalize them into the stored graph and publish it; then call
    ``then`` (a save), still under the lock, and publish the previous state again if it
    fails, so the knowledge base and its file never disagree.

    ``replaces`` are the host keys the documents were identified by: what was stored under one
    of them and is not among ``documents`` (a chunk the source no longer has) goes."""
    with store.lock:
        before = store.snapshot
        graph = before.graph.copy()
        fresh = _fresh(graph, documents)
        _drop_replaced(graph, fresh, documents, replaces)
        merges: list[MergeRecord] = []
        counts = [0, 0, 0]
        try:
            # nothing new: the extractor (spaCy, seconds to load) is not needed
            for parsed in extract_in_batches(extractor, fresh, progress) if fresh else ():
                # the extractor's contract: mentions point into the documents it was given
                # (a bundle holding one that does not would be refused on load)
                parsed.check_mentions()
                # merging a batch embeds its names, seconds on a large batch: reported, so the
                # parsing bar does not look stalled meanwhile
                with embedding_progress(embed_progress), embedding_stage("names"):
                    result = canonicalizer.merge_into(graph, parsed)
                merges.extend(result.merges)
                counts[0] += len(result.new_entity_ids)
                counts[1] += len(result.new_relation_ids)
                counts[2] += len(result.new_event_ids)
            with embedding_progress(embed_progress):
                store.publish(graph, merge_log=store.snapshot.merge_log + tuple(merges))
            if then is not None:
                then()
        except BaseException:
            # the graph copy is dropped; the names filed from it must go too, or the next
            # ingest would merge by an alias the stored graph never got
            store.snapshot = before
            canonicalizer.forget()
            raise
    return IngestReport(
        documents=len(fresh),
        skipped_documents=len(documents) - len(fresh),
        new_entities=counts[0],
        new_relations=counts[1],
        new_events=counts[2],
        merges=tuple(merges),
    )


def _drop_replaced(
    graph: SemanticGraph,
    fresh: Sequence[Document],
    documents: Sequence[Document],
    replaces: Collection[str],
) -> None:
    """Take out of ``graph`` what the documents replace: a document stored under the same id
    with other text was changed, and one stored under a host key of ``replaces`` that is not
    among ``documents`` is gone from its source."""
    changed = [d.id for d in fresh if d.id in graph.documents]
    incoming = {d.id for d in documents}
    changed += [d for d in documents_of(replaces, graph.documents) if d not in incoming]
    if changed:
        graph.remove_document_support(changed)


def _fresh(graph: SemanticGraph, documents: Sequence[Document]) -> list[Document]:
    """The documents not stored with the same text, each id once."""
    seen: set[str] = set()
    fresh = []
    for doc in documents:
        stored = graph.documents.get(doc.id)
        if doc.id in seen or (stored is not None and stored.text == doc.text):
            continue
        seen.add(doc.id)
        fresh.append(doc)
    return fresh


def delete_documents(store: Store, ids: list[str]) -> tuple[int, int]:
    """Remove documents and what only they supported; returns (entities, facts) removed. An id
    that is not stored but is the key of stored chunks (``key#1``...) names all of them."""
    with store.lock:
        stored = store.snapshot.graph.documents
        named = []
        for doc_id in ids:
            found = [doc_id] if doc_id in stored else documents_of({doc_id}, stored)
            if not found:
                raise UnknownIdError(f"no document with id {doc_id!r} in this knowledge base")
            named += found
        graph = store.snapshot.graph.copy()
        entities, facts = graph.remove_document_support(named)
        store.publish(graph)
    return len(entities), len(facts)


def merge_snapshot(store: Store, canonicalizer: Canonicalizer, theirs: Snapshot) -> IngestReport:
    """Canonicalize another base's snapshot into this one, reusing its fact vectors."""
    other_graph = theirs.graph
    with store.lock:
        graph = store.snapshot.graph.copy()
        before = set(graph.documents)
        incoming = other_graph.copy()
        for doc_id in before & set(incoming.documents):
            incoming.remove_document_support([doc_id])  # already here: not counted twice
        result = canonicalizer.merge_into(graph, incoming)
        index = store.snapshot.index or VectorIndex(store.embedder.dimension)
        if theirs.index is not None:
            index = with_reused_vectors(index, graph, theirs, result.entity_ids)
        pool = [x for x in (store.snapshot.sentences, theirs.sentences) if x is not None]
        # the other base's own merges come along, pointed at the entities they joined here
        # (a typed-once merge inside a part would otherwise read as an exact one at the
        # seam, and split_entity could not undo it)
        log = list(store.snapshot.merge_log)
        for record in theirs.merge_log:
            kept = result.entity_ids.get(record.entity_id, record.entity_id)
            if kept in graph.entities and not before & set(record.document_ids):
                log.append(
                    replace(record, entity_id=kept, canonical_name=graph.entities[kept].name)
                )
        store.publish(
            graph,
            index,
            SentenceIndex.pooled(pool) if pool else None,
            merge_log=(*log, *result.merges),
        )
    return IngestReport(
        documents=len(set(graph.documents) - before),
        skipped_documents=len(before & set(other_graph.documents)),
        new_entities=len(result.new_entity_ids),
        new_relations=len(result.new_relation_ids),
        new_events=len(result.new_event_ids),
        merges=result.merges,
    )
