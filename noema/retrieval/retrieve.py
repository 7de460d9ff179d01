"""Retrieval: seeds, expansion and packing under a token budget, and what a retrieval returns.

The order of the facts is chosen by the strategy ``seeds`` names (:mod:`noema.retrieval.strategies`: by
default sentence and fact seeds, a narrow hop to the documents the seeds' entities are about,
bridge searches, then the graph walk; with ``seeds="vector"`` exactly the three original steps),
and packed under the budget in :mod:`noema.retrieval.pack`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from noema.model.graph import Citation, SemanticGraph
from noema.model.notation import parse_notation
from noema.retrieval.filters import FactFilter
from noema.retrieval.options import Format, RetrieveOptions
from noema.retrieval.pack import pack
from noema.retrieval.plan import Reason, Step
from noema.retrieval.strategies import STRATEGIES, PlanRequest
from noema.vectors.embed import Vectors
from noema.vectors.index import VectorIndex
from noema.vectors.sentences import Sentence, SentenceIndex

__all__ = ["FactExplanation", "FactMatch", "Format", "RetrievalResult", "retrieve_facts"]


@dataclass(frozen=True)
class FactMatch:
    """A vector-search hit: the fact's id and its cosine similarity to the question.

    ``relation_id`` is the documented name for the fact id and holds an ``evt_`` id when the hit is
    an event; :attr:`fact_id` says the same without suggesting otherwise.
    """

    relation_id: str
    similarity: float

    @property
    def fact_id(self) -> str:
        """The relation or event id (the same as ``relation_id``)."""
        return self.relation_id


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

    def similarities(self) -> dict[str, float]:
        """Each fact's cosine similarity to the question: its own vector hit, else (with
        ``explain=True``) the similarity of the sentence or fact that chose it."""
        similarity = {m.relation_id: m.similarity for m in self.fact_matches}
        similarity.update(
            {e.fact_id: e.similarity for e in self.explanation or () if e.similarity is not None}
        )
        return similarity

    def scores(self) -> list[float]:
        """A score per fact of :attr:`fact_ids`, falling in their (packing) order: each fact's
        similarity capped by those of the facts above it, so a score cutoff keeps a prefix of the
        ranking and never drops a fact ranked above one it keeps. A fact without a similarity
        takes the score above it (0.0 for the first).

        Example:
            >>> RetrievalResult("", "", fact_ids=("a", "b"), fact_matches=(
            ...     FactMatch("a", 0.5), FactMatch("b", 0.7))).scores()
            [0.5, 0.5]
        """
        similarity = self.similarities()
        scores: list[float] = []
        for fact_id in self.fact_ids:
            above = scores[-1] if scores else None
            own = similarity.get(fact_id)
            if own is None:
                scores.append(0.0 if above is None else above)
            else:
                scores.append(own if above is None else min(above, own))
        return scores

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
        return self.to_html()

    def to_html(self) -> str:
        """The facts as a picture and a table: self-contained HTML (no scripts, no network)."""
        from noema.model.view import render_html

        title = f"{self.question!r}: {len(self.fact_ids)} facts, {self.token_count} tokens"
        if self.truncated:
            title += ", truncated by the budget"
        return render_html(parse_notation(self.notation), title=title)


def _json_ready(items: list[tuple[str, Any]]) -> dict[str, Any]:
    """``asdict`` factory: tuples become lists, as JSON would make them."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in items}


def retrieve_facts(
    graph: SemanticGraph,
    index: VectorIndex,
    sentences: SentenceIndex | None,
    query: Vectors,
    options: RetrieveOptions,
    *,
    question: str = "",
    fact_filter: FactFilter | None = None,
    explain: bool = False,
    embed: Callable[[Sequence[str]], Vectors] | None = None,
) -> RetrievalResult:
    """Seeds, expansion and packing over the graph's indexes (see :mod:`noema.retrieval.plan`).

    ``embed`` embeds the bridge searches of ``seeds="graph"``; without it there are none.

    ``sentences`` is needed for ``options.seeds == "graph"``; with ``"vector"`` it only chooses
    which source sentence ``format="sentences"`` shows for a fact.
    """
    matches = _search(graph, index, query, options.top_k, fact_filter)
    floor = options.min_similarity
    if floor is not None:  # with no seed and no sentence above the floor, nothing is returned
        matches = tuple(m for m in matches if m.similarity >= floor)
    request = PlanRequest(
        graph=graph,
        index=index,
        sentences=sentences,
        query=query,
        matches=[(m.relation_id, m.similarity) for m in matches],
        options=options,
        fact_filter=fact_filter,
        question=question,
        embed=embed,
    )
    steps: Iterable[Step] = STRATEGIES[options.seeds](request)
    if explain:
        steps = list(steps)

    # below the floor a fact is left out of the fact formats: natural_language drops it,
    # notation keeps its entities' lines (pack); the sentences format shows its sentence, which
    # is the evidence whatever the extraction made of it
    least = options.confidence_floor()
    dropped = least if options.format == "natural_language" else 0.0

    def in_order() -> Iterator[tuple[str, Sentence | None]]:
        for step in steps:
            if dropped and graph.fact(step.fact_id).confidence < dropped:
                continue
            yield step.fact_id, step.sentence

    packed = pack(
        graph,
        in_order(),
        options.max_tokens,
        options.format,
        options.token_model,
        least if options.format == "notation" else 0.0,
    )
    result = RetrievalResult(
        text=packed.text,
        notation=packed.notation,
        entity_ids=packed.entity_ids,
        relation_ids=packed.relation_ids,
        event_ids=packed.event_ids,
        fact_ids=packed.fact_ids,
        token_count=packed.token_count,
        truncated=packed.truncated,
        fact_matches=matches,
        citations={f: graph.citations(f) for f in packed.fact_ids},
        format=options.format,
        token_model=options.token_model,
        question=question,
    )
    if explain:
        result = replace(result, explanation=_explain(list(steps), result))
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


@dataclass(frozen=True)
class FactExplanation:
    """Why a fact is in a retrieval result, or why it was left out.

    Attributes:
        fact_id: the relation or event.
        reason: ``"seed"`` (a vector-search hit over the fact vectors), ``"sentence"`` (a fact
            of a source sentence close to the question), ``"hop"`` (a fact of a sentence of the
            document about an entity of a better-ranked sentence), ``"bridge"`` (a fact of a
            sentence found by a further search: the question with the name of a bridge entity
            of earlier evidence) or ``"expansion"`` (reached by the graph walk).
        order: its place in the packing order, from 0.
        included: True when it is stated in the text; False when the budget cut it, or when
            its confidence is under ``min_confidence`` (notation then still lists its entities).
        similarity: cosine similarity of what chose it to the query that found it: the fact's
            own vector for seeds and expansion facts, its sentence's vector for sentence, hop
            and bridge facts (for a bridge, to the bridge search's query); ``None`` when no
            vector was compared.
        seed_id: the seed it was reached from (itself for a seed or sentence fact; for a hop,
            the fact whose entity led to the document; for a bridge, the fact of the earlier
            evidence that names the bridge entity).
        hops: relation edges walked from that seed's entities (0 for seeds, 1 for a hop).
        path: entity ids walked, from an entity of the seed to the fact's nearer entity (for a
            hop, the entity the document is about; for a bridge, the bridge entity).
        step: the search that found it: 1 for the question's own search (and the seeds, hops
            and walk that follow from it), 2 for a search with a bridge of step 1's evidence,
            3 for one with a bridge of step 2's.
    """

    fact_id: str
    reason: Reason
    order: int
    included: bool
    similarity: float | None
    seed_id: str
    hops: int
    path: tuple[str, ...]
    step: int = 1


def _explain(steps: list[Step], result: RetrievalResult) -> tuple[FactExplanation, ...]:
    included = set(result.fact_ids)
    return tuple(
        FactExplanation(
            fact_id=step.fact_id,
            reason=step.reason,
            order=order,
            included=step.fact_id in included,
            similarity=step.similarity,
            seed_id=step.seed_id,
            hops=step.hops,
            path=step.path,
            step=step.step,
        )
        for order, step in enumerate(steps)
    )
