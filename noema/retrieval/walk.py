"""The walk: the facts a breadth-first walk of ``hops`` edges crosses from the seeds' entities,
in packing order, and the source sentence shown for each fact.

Both planners (:mod:`noema.retrieval.plan`) end with it. Dates, amounts and descriptions are
never walked through (:func:`~noema.retrieval.bridges.walkable`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from noema.model.graph import SemanticGraph
from noema.model.spans import Sentence
from noema.retrieval.bridges import entities_of, walkable
from noema.retrieval.filters import FactFilter
from noema.vectors.embed import Vectors
from noema.vectors.index import VectorIndex
from noema.vectors.sentences import SentenceIndex

__all__ = ["Walked", "best_sentences", "fact_similarities", "mentioned_sentences", "walk"]

# A walked fact: (fact, distance, seed, entity path, similarity to the question).
Walked = tuple[str, int, str, tuple[str, ...], float | None]


def fact_similarities(index: VectorIndex, facts: Iterable[str], q: Vectors) -> dict[str, float]:
    """Cosine similarity to the question of each fact the index holds (six decimals)."""
    chosen = [f for f in facts if f in index]
    if not chosen:
        return {}
    scores = np.stack([index.vector(f) for f in chosen]) @ q
    return {f: round(float(s), 6) for f, s in zip(chosen, scores, strict=True)}


def mentioned_sentences(
    graph: SemanticGraph, sentences: SentenceIndex | None, fact_id: str
) -> list[Sentence]:
    """The sentences a fact's mentions span, in mention order (those the sidecar holds)."""
    fact = graph.relations.get(fact_id) or graph.events[fact_id]
    out = [Sentence(m.document_id, m.start, m.end) for m in fact.mentions]
    if sentences is None:
        return out
    return [s for s in out if s in sentences.facts]


def best_sentences(
    graph: SemanticGraph, sentences: SentenceIndex | None, facts: Sequence[str], q: Vectors
) -> dict[str, Sentence]:
    """Each fact's source sentence most similar to the question (first in mention order on
    ties; the first without a sidecar), with one similarity computation for all of them."""
    mentioned = {f: mentioned_sentences(graph, sentences, f) for f in facts}
    if sentences is None:
        return {f: ss[0] for f, ss in mentioned.items() if ss}
    scores = sentences.similarities(
        list(dict.fromkeys(s for ss in mentioned.values() for s in ss)), q
    )
    return {f: max(ss, key=lambda s: scores[s]) for f, ss in mentioned.items() if ss}


def walk(
    graph: SemanticGraph,
    index: VectorIndex,
    q: Vectors,
    seeds: Sequence[tuple[str, Sequence[str]]],
    *,
    hops: int,
    fact_filter: FactFilter | None,
) -> list[Walked]:
    """Facts the walk of ``hops`` edges crosses from the seeds' entities (each seed a fact and
    its entities), in packing order: nearer facts first; among equals, the ones more similar
    to the question (measured on HotpotQA, this beats keeping the facts of the best seed
    together), then graph order."""
    reach: dict[str, tuple[int, str, str | None]] = {}  # entity -> (distance, seed, via)
    frontier: list[str] = []
    for seed, entity_ids in seeds:
        for eid in entity_ids:
            if eid not in reach:
                reach[eid] = (0, seed, None)
                frontier.append(eid)
    crossed: dict[str, tuple[int, str]] = {}  # fact -> (distance of its nearer end, that end)
    for step in range(hops):
        following: list[str] = []
        for eid in frontier:
            if not walkable(graph, eid):
                continue
            for fact_id in graph.facts_of(eid):
                if fact_filter is not None and not fact_filter.allows(graph, fact_id):
                    continue
                crossed.setdefault(fact_id, (step, eid))
                for other in entities_of(graph, fact_id):
                    if other not in reach:
                        reach[other] = (step + 1, reach[eid][1], eid)
                        following.append(other)
        frontier = following
        if not frontier:
            break  # nothing new to walk from: more hops would find nothing
    order = list(crossed)
    similarity = fact_similarities(index, order, q)
    position = {f: n for n, f in enumerate(order)}
    order.sort(key=lambda f: (crossed[f][0], -similarity.get(f, -1.0), position[f]))
    out = []
    for fact_id in order:
        distance, end = crossed[fact_id]
        path = [end]
        while True:
            via = reach[path[-1]][2]
            if via is None:
                break
            path.append(via)
        out.append(
            (fact_id, distance + 1, reach[end][1], tuple(path[::-1]), similarity.get(fact_id))
        )
    return out
