"""What a knowledge base's readers see, and how its writers build the next one.

A :class:`Snapshot` is a graph with the fact index and sentence sidecar built for it. Writers make
a new one aside (copying the index, embedding only the facts they added, reusing vectors a merge
brings) and publish it in one assignment; readers never wait and never see half a write.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from noema.embed import Embedder
from noema.facttext import fact_text
from noema.graph import Relation, SemanticGraph, make_event_id, make_relation_id
from noema.index import SearchMode, VectorIndex
from noema.sentences import SentenceIndex

__all__ = ["Snapshot", "prepared", "synced_index", "with_reused_vectors"]


@dataclass(frozen=True)
class Snapshot:
    """What a reader sees: a graph with the fact index and sentence sidecar built for it (both
    ``None`` until the first write)."""

    graph: SemanticGraph
    index: VectorIndex | None
    sentences: SentenceIndex | None


def prepared(snapshot: Snapshot, search: SearchMode) -> Snapshot:
    """The snapshot with its search structures built, before any reader can see it."""
    if snapshot.index is not None:
        snapshot.index.prepare(search)
    if snapshot.sentences is not None:
        snapshot.sentences.vectors.prepare(search)
    return snapshot


def synced_index(
    index: VectorIndex | None, graph: SemanticGraph, embedder: Embedder
) -> VectorIndex:
    """A copy of ``index`` holding exactly the facts of ``graph``: removed facts dropped, new ones
    embedded. ``index`` itself is left as it is, for the readers still using it."""
    if index is None:
        index = VectorIndex(embedder.dimension)
    facts = [*graph.relations, *graph.events]
    stale = [f for f in index.ids if f not in graph.relations and f not in graph.events]
    missing = [f for f in facts if f not in index]
    if not stale and not missing:
        return index
    index = index.copy()
    index.remove(stale)
    if missing:
        index.add(missing, embedder.embed([fact_text(graph, f) for f in missing]))
    return index


def with_reused_vectors(
    index: VectorIndex, graph: SemanticGraph, theirs: Snapshot, mapping: dict[str, str]
) -> VectorIndex:
    """``index`` plus the vectors of another base's facts that kept their text after its
    entities were mapped into ``graph``: a merge embeds none of those again."""
    other_index = theirs.index
    assert other_index is not None
    reused_ids, rows = [], []
    for fact in theirs.graph.iter_facts():
        if not all(e in mapping for e in fact.entity_ids):
            continue
        ends = [mapping[e] for e in fact.entity_ids]
        if isinstance(fact, Relation):
            new_id = make_relation_id(ends[0], fact.predicate, ends[1])
        else:  # events too: the docstring promised it, and they were embedded again
            new_id = make_event_id(fact.label, tuple(dict.fromkeys(ends)), fact.time)
        if (
            (new_id in graph.relations or new_id in graph.events)
            and new_id not in index
            and fact.id in other_index
            and fact_text(graph, new_id) == fact_text(theirs.graph, fact.id)
        ):
            reused_ids.append(new_id)
            rows.append(other_index.vector(fact.id))
    if not rows:
        return index
    index = index.copy()
    index.add(reused_ids, np.stack(rows))
    return index
