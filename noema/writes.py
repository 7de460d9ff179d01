"""The writes of a knowledge base: each builds the next graph aside under the store's lock and
publishes it with its merge log, index and sentences in one snapshot (:mod:`noema.storage.store`),
so readers never wait and a failed write changes nothing. :class:`noema.KnowledgeBase`'s
``ingest``, ``delete_documents``, ``split_entity`` and ``merge`` delegate here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from noema.errors import OptionError, UnknownIdError
from noema.ingest.canonical import Canonicalizer, IngestReport
from noema.ingest.extractor import Extractor, extract_in_batches
from noema.model.graph import Document
from noema.model.records import MergeRecord
from noema.storage.store import Snapshot, Store, with_reused_vectors
from noema.vectors.embed import embedding_progress
from noema.vectors.index import VectorIndex
from noema.vectors.sentences import SentenceIndex

__all__ = ["delete_documents", "ingest_documents", "merge_snapshot", "split_entity"]

ProgressCallback = Callable[[int, int], None]


def ingest_documents(
    store: Store,
    canonicalizer: Canonicalizer,
    extractor: Extractor,
    documents: Sequence[Document],
    *,
    progress: ProgressCallback | None = None,
    embed_progress: ProgressCallback | None = None,
    then: Callable[[], object] | None = None,
) -> IngestReport:
    """Parse ``documents``, canonicalize them into the stored graph and publish it; then call
    ``then`` (a save), still under the lock, and publish the previous state again if it
    fails, so the knowledge base and its file never disagree."""
    with store.lock:
        before = store.snapshot
        graph = before.graph.copy()
        seen: set[str] = set()
        fresh = []
        for doc in documents:
            stored = graph.documents.get(doc.id)
            if doc.id in seen or (stored is not None and stored.text == doc.text):
                continue
            seen.add(doc.id)
            fresh.append(doc)
        # a document stored under the same id with other text was changed: its old facts go
        changed = [d.id for d in fresh if d.id in graph.documents]
        if changed:
            graph.remove_document_support(changed)
        merges: list[MergeRecord] = []
        counts = [0, 0, 0]
        try:
            for parsed in extract_in_batches(extractor, fresh, progress):
                # the extractor's contract: mentions point into the documents it was given
                # (a bundle holding one that does not would be refused on load)
                parsed.check_mentions()
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


def delete_documents(store: Store, ids: list[str]) -> tuple[int, int]:
    """Remove documents and what only they supported; returns (entities, facts) removed."""
    with store.lock:
        unknown = [d for d in ids if d not in store.snapshot.graph.documents]
        if unknown:
            raise UnknownIdError(f"no document with id {unknown[0]!r} in this knowledge base")
        graph = store.snapshot.graph.copy()
        entities, facts = graph.remove_document_support(ids)
        store.publish(graph)
    return len(entities), len(facts)


def split_entity(
    store: Store, canonicalizer: Canonicalizer, entity_id: str, merged_name: str
) -> str:
    """Undo the merges of ``merged_name`` into ``entity_id``; returns the new entity's id."""
    with store.lock:
        records = [
            r
            for r in store.snapshot.merge_log
            if r.entity_id == entity_id and r.merged_name == merged_name
        ]
        if not records:
            merged = sorted(
                {r.merged_name for r in store.snapshot.merge_log if r.entity_id == entity_id}
            )
            raise OptionError(
                f"no merge of {merged_name!r} into {entity_id!r} is recorded; "
                f"merged names: {', '.join(map(repr, merged)) or 'none'}"
            )
        # a typed-once merge (rule "type") is undone alone, and gives the split-off entity
        # back its own type: the same name's merges within the kept type stay
        typed_records = [r for r in records if r.rule == "type"]
        records = typed_records or records
        typed = typed_records[0].type if typed_records else None
        graph = store.snapshot.graph.copy()
        documents = {d for r in records for d in r.document_ids}
        new_id = graph.split_entity(entity_id, merged_name, document_ids=documents, type=typed)
        canonicalizer.point(merged_name, graph.entities[new_id].type, new_id)
        kept = tuple(r for r in store.snapshot.merge_log if r not in records)
        store.publish(graph, merge_log=kept)
    return new_id


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
