"""Choosing and ordering the facts of a retrieval: the packing order, with the reason for each.

Two strategies (``RetrieveOptions.seeds``):

``"vector"``, the original three steps
    The ``top_k`` facts nearest the question are the seeds; a breadth-first walk follows up to
    ``hops`` edges from their entities; seeds come first, then the walked facts by distance from a
    seed, ties to the fact more similar to the question, then to graph order.

``"graph"`` (the default)
    Seeds come from two searches: the fact vectors (``top_k`` hits, as above) and the vectors of
    the sentences facts came from (see :mod:`noema.sentences`). Sentences are taken best first,
    each bringing its facts (most similar to the question first). Right after each of the best
    few, a *narrow hop*: an entity of that sentence that another document is about brings that
    document's sentences most similar to the question, which is how the second paragraph of a
    bridge question ("the company that acquired X") is reached. The fact seeds follow the first
    sentences, then the rest of the sentence ranking, then the walk of ``hops`` edges as above.

Dates, amounts and descriptions ("American rock band") are never walked or hopped through: a
year or a description shared by unrelated facts would join them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from noema.embed import Vectors
from noema.filters import FactFilter
from noema.graph import VALUE_TYPES, SemanticGraph
from noema.index import VectorIndex
from noema.names import is_description
from noema.sentences import Sentence, SentenceIndex

__all__ = ["Reason", "Step", "plan_graph", "plan_vector"]

Reason = Literal["seed", "sentence", "hop", "expansion"]

# How many of the best sentences hop to the documents their entities are about, and how many of
# each such document's sentences come in (measured on HotpotQA and MuSiQue; see the README).
HOP_FROM = 3
HOP_SENTENCES = 2
# Sentences searched: enough to fill a few hundred tokens several times over.
SENTENCE_CANDIDATES = 40
# Fact seeds are placed after this many sentence units: the sentence vectors rank better than
# the fact vectors, but the facts that match directly stay near the front.
FACT_SEEDS_AFTER = 2


@dataclass(frozen=True)
class Step:
    """One fact of the packing order and why it is there.

    ``similarity`` is the cosine similarity to the question of what chose the fact: the fact's
    vector for seeds and walked facts, its sentence's vector for sentence seeds and hops.
    ``sentence`` is the source sentence shown for it in ``format="sentences"``.
    """

    fact_id: str
    reason: Reason
    similarity: float | None
    seed_id: str
    hops: int
    path: tuple[str, ...]
    sentence: Sentence | None


def entities_of(graph: SemanticGraph, fact_id: str) -> tuple[str, ...]:
    rel = graph.relations.get(fact_id)
    if rel is not None:
        return rel.subject_id, rel.object_id
    return graph.events[fact_id].participant_ids


def _walkable(graph: SemanticGraph, entity_id: str) -> bool:
    """Dates, amounts and descriptions ("American rock band") are shared by unrelated things:
    walking through them would join everything."""
    entity = graph.entities[entity_id]
    return entity.type not in VALUE_TYPES and not is_description(entity.name)


def _fact_similarities(index: VectorIndex, facts: Iterable[str], q: Vectors) -> dict[str, float]:
    chosen = [f for f in facts if f in index]
    if not chosen:
        return {}
    scores = np.stack([index.vector(f) for f in chosen]) @ q
    return {f: round(float(s), 6) for f, s in zip(chosen, scores, strict=True)}


def _mentioned_sentences(
    graph: SemanticGraph, sentences: SentenceIndex | None, fact_id: str
) -> list[Sentence]:
    fact = graph.relations.get(fact_id) or graph.events[fact_id]
    out = [Sentence(m.document_id, m.start, m.end) for m in fact.mentions]
    if sentences is None:
        return out
    return [s for s in out if s in sentences.facts]


def _best_sentences(
    graph: SemanticGraph, sentences: SentenceIndex | None, facts: Sequence[str], q: Vectors
) -> dict[str, Sentence]:
    """Each fact's source sentence most similar to the question (first in mention order on
    ties; the first without a sidecar), with one similarity computation for all of them."""
    mentioned = {f: _mentioned_sentences(graph, sentences, f) for f in facts}
    if sentences is None:
        return {f: ss[0] for f, ss in mentioned.items() if ss}
    scores = sentences.similarities(
        list(dict.fromkeys(s for ss in mentioned.values() for s in ss)), q
    )
    return {f: max(ss, key=lambda s: scores[s]) for f, ss in mentioned.items() if ss}


def _walk(
    graph: SemanticGraph,
    index: VectorIndex,
    q: Vectors,
    seeds: Sequence[tuple[str, Sequence[str]]],
    hops: int,
    fact_filter: FactFilter | None,
) -> list[tuple[str, int, str, tuple[str, ...], float | None]]:
    """Facts the walk of ``hops`` edges crosses from the seeds' entities, in packing order:
    (fact, distance, seed, entity path, similarity)."""
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
            if not _walkable(graph, eid):
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
    similarity = _fact_similarities(index, order, q)
    position = {f: n for n, f in enumerate(order)}
    # nearer facts first; among equals, the ones more similar to the question (measured on
    # HotpotQA, this beats keeping the facts of the best seed together)
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


def plan_vector(
    graph: SemanticGraph,
    index: VectorIndex,
    sentences: SentenceIndex | None,
    q: Vectors,
    matches: Sequence[tuple[str, float]],
    hops: int,
    fact_filter: FactFilter | None,
) -> list[Step]:
    """The original three steps: vector seeds, then the walk (see the module docstring)."""
    chosen = {f for f, _ in matches}
    seeds = [(f, entities_of(graph, f)) for f, _ in matches]
    walked = [w for w in _walk(graph, index, q, seeds, hops, fact_filter) if w[0] not in chosen]
    best = _best_sentences(graph, sentences, [*chosen, *(w[0] for w in walked)], q)
    steps = [Step(f, "seed", s, f, 0, (), best.get(f)) for f, s in matches]
    for fact_id, distance, seed, path, similarity in walked:
        steps.append(
            Step(fact_id, "expansion", similarity, seed, distance, path, best.get(fact_id))
        )
    return steps


class _Planner:
    """Builds the ``"graph"`` order: keeps what is already chosen so nothing comes twice."""

    def __init__(
        self,
        graph: SemanticGraph,
        index: VectorIndex,
        sentences: SentenceIndex,
        q: Vectors,
        fact_filter: FactFilter | None,
    ) -> None:
        self.graph, self.index, self.sentences, self.q = graph, index, sentences, q
        self.fact_filter = fact_filter
        self.steps: list[Step] = []
        self.chosen: set[str] = set()
        self.shown: set[Sentence] = set()
        self.hopped: set[str] = set()

    def allowed(self, fact_id: str) -> bool:
        return self.fact_filter is None or self.fact_filter.allows(self.graph, fact_id)

    def add_sentence(
        self,
        sentence: Sentence,
        similarity: float,
        reason: Reason,
        seed: str | None = None,
        path: tuple[str, ...] = (),
    ) -> list[str]:
        """The sentence's allowed facts, most similar first; returns those added."""
        if sentence in self.shown:
            return []
        facts = [f for f in self.sentences.facts[sentence] if self.allowed(f)]
        if not facts:
            return []
        self.shown.add(sentence)
        scores = _fact_similarities(self.index, facts, self.q)
        facts.sort(key=lambda f: -scores.get(f, -1.0))
        added = []
        for fact_id in facts:
            if fact_id in self.chosen:
                continue
            self.chosen.add(fact_id)
            added.append(fact_id)
            hops = 1 if reason == "hop" else 0
            self.steps.append(
                Step(fact_id, reason, similarity, seed or fact_id, hops, path, sentence)
            )
        return added

    def hop_from(self, facts: Sequence[str], home: str) -> None:
        """Documents about the entities of ``facts`` bring their best sentences in."""
        for fact_id in facts:
            for eid in entities_of(self.graph, fact_id):
                if not _walkable(self.graph, eid):
                    continue
                for document_id in self.sentences.topics.get(eid, ()):
                    if document_id == home or document_id in self.hopped:
                        continue
                    self.hopped.add(document_id)
                    candidates = self.sentences.by_document.get(document_id, ())
                    scores = self.sentences.similarities(candidates, self.q)
                    best = sorted(candidates, key=lambda s: -scores[s])[:HOP_SENTENCES]
                    for sentence in best:
                        self.add_sentence(sentence, scores[sentence], "hop", fact_id, (eid,))

    def add_fact(self, step: Step) -> None:
        if step.fact_id not in self.chosen:
            self.chosen.add(step.fact_id)
            self.steps.append(step)


def plan_graph(
    graph: SemanticGraph,
    index: VectorIndex,
    sentences: SentenceIndex,
    q: Vectors,
    matches: Sequence[tuple[str, float]],
    hops: int,
    fact_filter: FactFilter | None,
    min_similarity: float | None = None,
) -> Iterator[Step]:
    """Sentence seeds with narrow hops, the fact seeds, then the walk (see the module docstring).

    Steps come lazily: packing stops at the budget, and the walk, the costly part, only runs when
    the budget reaches past the sentence seeds."""
    planner = _Planner(graph, index, sentences, q, fact_filter)
    hits = sentences.search(q, SENTENCE_CANDIDATES)
    if min_similarity is not None:
        hits = [(s, score) for s, score in hits if score >= min_similarity]
    seed_sentences = _best_sentences(graph, sentences, [f for f, _ in matches], q)
    fact_seeds = [Step(f, "seed", s, f, 0, (), seed_sentences.get(f)) for f, s in matches]
    units = 0
    emitted = 0
    for sentence, score in hits:
        if units == FACT_SEEDS_AFTER:
            for step in fact_seeds:
                planner.add_fact(step)
        added = planner.add_sentence(sentence, score, "sentence")
        if not added:
            continue
        if hops > 0 and units < HOP_FROM:
            planner.hop_from(added, sentence.document_id)
        units += 1
        yield from planner.steps[emitted:]
        emitted = len(planner.steps)
    for step in fact_seeds:  # fewer sentence units than FACT_SEEDS_AFTER
        planner.add_fact(step)
    yield from planner.steps[emitted:]
    emitted = len(planner.steps)
    # the walk starts from the fact seeds and the facts of as many of the best sentences
    first_sentences = list(
        dict.fromkeys(s.sentence for s in planner.steps if s.reason == "sentence")
    )
    walk_from = set(first_sentences[: len(matches)])
    seeds = [
        (step.fact_id, entities_of(graph, step.fact_id))
        for step in planner.steps
        if step.reason == "seed" or (step.reason == "sentence" and step.sentence in walk_from)
    ]
    walked = [
        w for w in _walk(graph, index, q, seeds, hops, fact_filter) if w[0] not in planner.chosen
    ]
    best = _best_sentences(graph, sentences, [w[0] for w in walked], q)
    for fact_id, distance, seed, path, similarity in walked:
        planner.add_fact(
            Step(fact_id, "expansion", similarity, seed, distance, path, best.get(fact_id))
        )
    yield from planner.steps[emitted:]
