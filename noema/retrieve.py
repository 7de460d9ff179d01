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
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal, get_args

import numpy as np

from noema.embed import Vectors
from noema.filters import FactFilter
from noema.graph import VALUE_TYPES, Citation, SemanticGraph
from noema.index import VectorIndex
from noema.notation import decode, encode_facts, parse_notation
from noema.resources import count_tokens

__all__ = [
    "FactExplanation",
    "FactMatch",
    "Format",
    "RetrievalResult",
    "check_retrieve_options",
    "retrieve_facts",
]

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
        explanation: with ``explain=True``, a :class:`FactExplanation` for every fact
            considered, in packing order; ``None`` otherwise.
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
    explanation: tuple[FactExplanation, ...] | None = field(default=None, compare=False)
    format: Format = "notation"
    token_model: str = "cl100k_base"
    question: str = ""

    def __str__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        return bool(self.text)

    def source_ids(self, fact_ids: Sequence[str] | None = None) -> list[str]:
        """Sorted ids of the documents the facts came from (all facts of the text by default)."""
        chosen = self.fact_ids if fact_ids is None else fact_ids
        return sorted({c.document_id for f in chosen for c in self.citations.get(f, ())})

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (citations and explanation as plain dicts).

        Example:
            >>> RetrievalResult(text="", notation="").to_dict()["token_count"]
            0
        """
        data = asdict(self, dict_factory=_json_ready)
        data["citations"] = {f: [asdict(c) for c in cs] for f, cs in self.citations.items()}
        data["source_ids"] = self.source_ids()
        return data

    def _repr_html_(self) -> str:
        from noema.view import render_html

        title = f"{self.question!r}: {len(self.fact_ids)} facts, {self.token_count} tokens"
        if self.truncated:
            title += ", truncated by the budget"
        return render_html(parse_notation(self.notation), title=title)


def _json_ready(items: list[tuple[str, Any]]) -> dict[str, Any]:
    """``asdict`` factory: tuples become lists, as JSON would make them."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in items}


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
    fact_filter: FactFilter | None = None,
    explain: bool = False,
) -> RetrievalResult:
    """Seeds, expansion and packing over an index of the graph's facts (see the module doc)."""
    matches = _search(graph, index, query, top_k, fact_filter)
    plan = _priority_order(graph, index, query, matches, hops, fact_filter)
    result = _pack(graph, list(plan), matches, max_tokens, format, token_model, question)
    if explain:
        result = replace(result, explanation=_explain(plan, matches, result))
    return result


def _search(
    graph: SemanticGraph,
    index: VectorIndex,
    query: Vectors,
    top_k: int,
    fact_filter: FactFilter | None,
) -> tuple[FactMatch, ...]:
    """The ``top_k`` most similar facts that pass the filter (searching wider until found)."""
    if fact_filter is None:
        return tuple(FactMatch(f, s) for f, s in index.search(query, top_k))
    k = top_k * 4
    while True:
        hits = index.search(query, k)
        allowed = [FactMatch(f, s) for f, s in hits if fact_filter.allows(graph, f)]
        if len(allowed) >= top_k or k >= len(index):
            return tuple(allowed[:top_k])
        k *= 4


def _entities_of(graph: SemanticGraph, fact_id: str) -> tuple[str, ...]:
    rel = graph.relations.get(fact_id)
    if rel is not None:
        return rel.subject_id, rel.object_id
    return graph.events[fact_id].participant_ids


@dataclass(frozen=True)
class _Reach:
    """How the walk reached an entity or a fact: distance, the seed it came from, the entity
    it came through (``None`` for a seed's own entities)."""

    distance: int
    seed: str
    via: str | None


def _priority_order(
    graph: SemanticGraph,
    index: VectorIndex,
    query: Vectors,
    matches: Sequence[FactMatch],
    hops: int,
    fact_filter: FactFilter | None = None,
) -> dict[str, tuple[_Reach, float | None, list[str]]]:
    """Every candidate fact in packing order, with how it was reached, its similarity when one
    was computed, and the entity path from its seed."""
    seeds = [m.relation_id for m in matches]
    reach: dict[str, _Reach] = {}  # entity id -> first (nearest) reach; BFS order keeps it
    frontier: list[str] = []
    for fact_id in seeds:
        for eid in _entities_of(graph, fact_id):
            if eid not in reach:
                reach[eid] = _Reach(0, fact_id, None)
                frontier.append(eid)
    crossed: dict[str, tuple[int, str]] = {}  # fact id -> (distance of its nearer end, that end)
    for step in range(hops):
        following: list[str] = []
        for eid in frontier:
            if graph.entities[eid].type in VALUE_TYPES:  # a shared year would join everything
                continue
            for fact_id in graph.facts_of(eid):
                if fact_filter is not None and not fact_filter.allows(graph, fact_id):
                    continue
                crossed.setdefault(fact_id, (step, eid))
                for other in _entities_of(graph, fact_id):
                    if other not in reach:
                        reach[other] = _Reach(step + 1, reach[eid].seed, eid)
                        following.append(other)
        frontier = following
    plan: dict[str, tuple[_Reach, float | None, list[str]]] = {}
    for m in matches:
        plan[m.relation_id] = (_Reach(0, m.relation_id, None), m.similarity, [])
    rest = [f for f in crossed if f not in plan]
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    similarity = {f: round(float(index.vector(f) @ q), 6) if f in index else None for f in rest}
    position = {f: n for n, f in enumerate(rest)}
    # nearer facts first; among equals, the ones more similar to the question (measured on
    # HotpotQA, this beats keeping the facts of the best seed together)
    rest.sort(key=lambda f: (crossed[f][0], -(similarity[f] or -1.0), position[f]))
    for fact_id in rest:
        distance, end = crossed[fact_id]
        path = [end]
        while reach[path[-1]].via is not None:
            path.append(reach[path[-1]].via)  # type: ignore[arg-type]
        plan[fact_id] = (
            _Reach(distance + 1, reach[end].seed, end),
            similarity[fact_id],
            path[::-1],
        )
    return plan


@dataclass(frozen=True)
class FactExplanation:
    """Why a fact is in a retrieval result, or why it was left out.

    Attributes:
        fact_id: the relation or event.
        reason: ``"seed"`` (a vector-search hit) or ``"expansion"`` (reached by the walk).
        order: its place in the packing order, from 0.
        included: True when it is in the text; False when the budget cut it.
        similarity: cosine similarity to the question (for expansion facts it decided the order
            among facts at the same distance); ``None`` when no vector was compared.
        seed_id: the seed it was reached from (itself for a seed).
        hops: relation edges walked from that seed's entities (0 for a seed).
        path: entity ids walked, from an entity of the seed to the fact's nearer entity.
    """

    fact_id: str
    reason: Literal["seed", "expansion"]
    order: int
    included: bool
    similarity: float | None
    seed_id: str
    hops: int
    path: tuple[str, ...]


def _explain(
    plan: dict[str, tuple[_Reach, float | None, list[str]]],
    matches: tuple[FactMatch, ...],
    result: RetrievalResult,
) -> tuple[FactExplanation, ...]:
    seeds = {m.relation_id for m in matches}
    included = set(result.fact_ids)
    return tuple(
        FactExplanation(
            fact_id=fact_id,
            reason="seed" if fact_id in seeds else "expansion",
            order=order,
            included=fact_id in included,
            similarity=similarity,
            seed_id=found.seed,
            hops=found.distance,
            path=tuple(path),
        )
        for order, (fact_id, (found, similarity, path)) in enumerate(plan.items())
    )


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
