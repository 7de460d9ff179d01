"""Retrieval: vector-search seeds, expansion through the graph, and packing under a token budget.

1. The question's vector is compared with every fact's vector; the ``top_k`` best are seeds.
2. From the seeds' entities, a breadth-first walk follows up to ``hops`` relation or event
   edges; every entity reached records its distance from the nearest seed.
3. Facts are packed greedily, in priority order: the seeds by similarity, then the facts the walk
   crossed by distance from a seed (ties go to the fact more similar to the question, then to
   graph order). Dates and amounts of money are not walked through: they are attributes, and a
   year shared by unrelated facts would join them. The
   first fact that would take the text over ``max_tokens`` ends the packing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np

from noema.embed import Vectors
from noema.graph import Citation, SemanticGraph
from noema.index import VectorIndex
from noema.notation import decode, encode_facts, parse_notation
from noema.resources import count_tokens

__all__ = ["FactMatch", "Format", "RetrievalResult", "check_retrieve_options", "retrieve_facts"]

Format = Literal["notation", "natural_language"]
FORMATS: tuple[str, ...] = get_args(Format)


@dataclass(frozen=True)
class FactMatch:
    """A vector-search hit: the fact's id and its cosine similarity to the question.

    ``relation_id`` holds an ``evt_`` id when the hit is an event.
    """

    relation_id: str
    similarity: float


@dataclass(frozen=True)
class RetrievalResult:
    """What :meth:`noema.KnowledgeBase.retrieve` returns.

    Attributes:
        text: the context in the requested format; empty when nothing was found or fitted.
        notation: the same facts as notation, whatever the format.
        entity_ids, relation_ids, event_ids: graph ids in the order they appear in the text.
        fact_ids: the relations and events of the text in packing (priority) order.
        token_count: tokens in ``text`` under ``token_model``; never above ``max_tokens``.
        truncated: True when the budget left out facts the walk had reached.
        fact_matches: the vector-search hits, best first.
        citations: for each fact in the text, where it came from (document, span, sentence).
        format, token_model: the options used.
    """

    text: str
    notation: str
    entity_ids: tuple[str, ...] = ()
    relation_ids: tuple[str, ...] = ()
    event_ids: tuple[str, ...] = ()
    fact_ids: tuple[str, ...] = ()
    token_count: int = 0
    truncated: bool = False
    fact_matches: tuple[FactMatch, ...] = ()
    citations: Mapping[str, tuple[Citation, ...]] = field(default_factory=dict)
    format: Format = "notation"
    token_model: str = "cl100k_base"
    question: str = ""

    def __str__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        return bool(self.text)

    def _repr_html_(self) -> str:
        from noema.view import render_html

        title = f"{self.question!r}: {len(self.fact_ids)} facts, {self.token_count} tokens"
        if self.truncated:
            title += ", truncated by the budget"
        return render_html(parse_notation(self.notation), title=title)


def check_retrieve_options(top_k: int, hops: int, max_tokens: int, format: str) -> None:
    """Raise ``ValueError`` naming the argument when an option is out of range."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(map(repr, FORMATS))}, got {format!r}")
    for name, value, low in (("top_k", top_k, 1), ("hops", hops, 0), ("max_tokens", max_tokens, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


def retrieve_facts(
    graph: SemanticGraph,
    index: VectorIndex,
    query: Vectors,
    *,
    top_k: int,
    hops: int,
    max_tokens: int,
    format: Format,
    token_model: str,
    question: str = "",
) -> RetrievalResult:
    """Seeds, expansion and packing over an index of the graph's facts (see the module doc)."""
    matches = tuple(FactMatch(f, s) for f, s in index.search(query, top_k))
    ordered = _priority_order(graph, index, query, matches, hops)
    return _pack(graph, ordered, matches, max_tokens, format, token_model, question)


# A date or an amount of money is an attribute of the facts that name it; walking through it
# would join every fact of the same year, so expansion does not pass through these entities.
_VALUE_TYPES = frozenset({"DATE", "MONEY"})


def _entities_of(graph: SemanticGraph, fact_id: str) -> tuple[str, ...]:
    rel = graph.relations.get(fact_id)
    if rel is not None:
        return rel.subject_id, rel.object_id
    return graph.events[fact_id].participant_ids


def _priority_order(
    graph: SemanticGraph,
    index: VectorIndex,
    query: Vectors,
    matches: Sequence[FactMatch],
    hops: int,
) -> list[str]:
    seeds = [m.relation_id for m in matches]
    # entity id -> (distance from the nearest seed, rank of that seed); BFS keeps the first reach
    reach: dict[str, tuple[int, int]] = {}
    frontier: list[str] = []
    for rank, fact_id in enumerate(seeds):
        for eid in _entities_of(graph, fact_id):
            if eid not in reach:
                reach[eid] = (0, rank)
                frontier.append(eid)
    crossed: dict[str, tuple[int, int]] = {}  # fact id -> reach of its nearer end
    for step in range(hops):
        following: list[str] = []
        for eid in frontier:
            if graph.entities[eid].type in _VALUE_TYPES:
                continue
            for fact_id in graph.facts_of(eid):
                crossed.setdefault(fact_id, reach[eid])
                for other in _entities_of(graph, fact_id):
                    if other not in reach:
                        reach[other] = (step + 1, reach[eid][1])
                        following.append(other)
        frontier = following
    seen = set(seeds)
    rest = [f for f in crossed if f not in seen]
    if rest:
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        similarity = {f: round(float(index.vector(f) @ q), 6) if f in index else -1.0 for f in rest}
        position = {f: n for n, f in enumerate(rest)}
        # nearer facts first; among equals, the ones more similar to the question (measured on
        # HotpotQA, this beats keeping the facts of the best seed together)
        rest.sort(key=lambda f: (crossed[f][0], -similarity[f], position[f]))
    return [*seeds, *rest]


def _render(
    graph: SemanticGraph, relations: list[str], events: list[str], format: Format
) -> tuple[str, str, list[str]]:
    encoded = encode_facts(graph, relations, events)
    text = encoded.text if format == "notation" else decode(encoded.text) if encoded.text else ""
    return text, encoded.text, list(encoded.local_ids)


def _pack(
    graph: SemanticGraph,
    ordered: Sequence[str],
    matches: tuple[FactMatch, ...],
    max_tokens: int,
    format: Format,
    token_model: str,
    question: str,
) -> RetrievalResult:
    relations: list[str] = []
    events: list[str] = []
    packed: list[str] = []
    text, notation, entity_ids, tokens = "", "", [], 0
    truncated = False
    for fact_id in ordered:
        target = relations if fact_id in graph.relations else events
        target.append(fact_id)
        candidate, candidate_notation, candidate_entities = _render(
            graph, relations, events, format
        )
        candidate_tokens = count_tokens(candidate, token_model)
        if candidate_tokens > max_tokens:
            target.pop()
            truncated = True
            break
        text, notation, entity_ids, tokens = (
            candidate,
            candidate_notation,
            candidate_entities,
            candidate_tokens,
        )
        packed.append(fact_id)
    return RetrievalResult(
        text=text,
        notation=notation,
        entity_ids=tuple(entity_ids),
        relation_ids=tuple(relations),
        event_ids=tuple(events),
        fact_ids=tuple(packed),
        token_count=tokens,
        truncated=truncated,
        fact_matches=matches,
        citations={f: graph.citations(f) for f in [*relations, *events]},
        format=format,
        token_model=token_model,
        question=question,
    )
