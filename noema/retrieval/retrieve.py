"""Retrieval: seeds, expansion and packing under a token budget.

The order of the facts is chosen by the strategy ``seeds`` names (:mod:`noema.retrieval.strategies`: by
default sentence and fact seeds, a narrow hop to the documents the seeds' entities are about,
bridge searches, then the graph walk; with ``seeds="vector"`` exactly the three original steps),
and packed under the budget in :mod:`noema.retrieval.pack`; what it returns is
:class:`noema.retrieval.result.RetrievalResult`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import fields, replace
from datetime import date
from typing import TYPE_CHECKING, Any

from noema.errors import InputTypeError, OptionError
from noema.model.graph import SemanticGraph
from noema.model.records import surrogate_at
from noema.model.spans import Sentence
from noema.retrieval.filters import FactFilter
from noema.retrieval.formats import FORMATS
from noema.retrieval.options import RetrieveOptions
from noema.retrieval.pack import Packed, pack
from noema.retrieval.result import FactExplanation, FactMatch, RetrievalResult
from noema.retrieval.steps import Step
from noema.retrieval.strategies import STRATEGIES, PlanRequest
from noema.retrieval.timeorder import order_by_time
from noema.retrieval.times import as_of_period, read_question_time, when_clause
from noema.retrieval.walk import best_sentences
from noema.vectors.embed import Vectors
from noema.vectors.index import VectorIndex, one_blas_thread
from noema.vectors.sentences import SentenceIndex

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

# RetrievalResult is named here too for the modules that import it with retrieve_facts
__all__ = ["RetrievalResult", "check_question", "retrieve_facts", "retrieve_question"]


def check_question(question: object) -> None:
    """Refuse what no retrieval can embed: not a string, blank, or not valid Unicode."""
    if not isinstance(question, str):
        raise InputTypeError(f"question must be a string, got {type(question).__name__}")
    if not question.strip():
        raise OptionError("question is empty; ask something to retrieve facts for")
    at = surrogate_at(question)
    if at is not None:  # the tokenizer would fail with a TypeError that says nothing
        raise OptionError(
            f"question holds a lone surrogate at index {at}, which is not valid Unicode "
            "(bytes that were not UTF-8?); decode it with errors='replace'"
        )


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

    ``options.as_of`` leaves out the facts invalid then, after the strategy: the searches, hops
    and bridges are those of the same call without it (a fact of an earlier holder still leads
    to the documents and bridges of the later one), so what it states is what that call states,
    less those facts; only when none of the fact seeds is valid do the best valid facts join
    them (``fact_matches`` reports the search's hits valid then). A time in ``question`` orders
    the facts that match it first, with ``as_of`` or without (:mod:`noema.retrieval.timeorder`),
    and "current" in it means current then.
    """
    today = None
    dated = None  # fact_filter with as_of's day: what is stated
    if options.as_of is not None:
        valid_on = as_of_period(options.as_of)  # "now" is read here, at each retrieval
        dated = replace(fact_filter or FactFilter(), valid_on=valid_on)
        today = valid_on.start
    matches = _above(_search(graph, index, query, options.top_k, dated or fact_filter), options)
    seeds = matches
    if dated is not None:
        # the searches, hops and bridges pass through fact_filter alone
        seeds = _above(_search(graph, index, query, options.top_k, fact_filter), options)
        if not any(seed in matches for seed in seeds):
            # every seed invalid then: the valid ones too, or a walk of none may state nothing
            seeds = (*seeds, *matches)
    request = PlanRequest(
        graph=graph,
        index=index,
        sentences=sentences,
        query=query,
        matches=[(m.relation_id, m.similarity) for m in seeds],
        options=options,
        fact_filter=fact_filter,
        question=question,
        embed=embed,
    )
    steps: Iterable[Step] = _timed(
        graph,
        STRATEGIES[options.seeds](request),
        question,
        dated or fact_filter,
        lambda f: best_sentences(graph, sentences, [f], query).get(f),
        today,
    )
    if dated is not None:
        # after the time order too, whose anchors (what the question is about) are then read
        # off the same first facts as without as_of ("the row of 2011-2017" names the project
        # asked about); its rivals are still only those valid then
        valid = dated
        steps = (step for step in steps if valid.allows(graph, step.fact_id))
    if explain:
        steps = list(steps)
    result = _result(graph, _packed(graph, steps, options), matches, options, question)
    if explain:
        result = replace(result, explanation=_explain(list(steps), result))
    return result


def _packed(graph: SemanticGraph, steps: Iterable[Step], options: RetrieveOptions) -> Packed:
    # what becomes of a fact under the confidence floor is the format's (formats.BelowFloor):
    # left out of the order here, or shown only by its entities' lines when packed
    below = FORMATS[options.format].below_floor
    least = options.confidence_floor()
    return pack(
        graph,
        _stated_in_order(graph, steps, least if below == "left_out" else 0.0),
        options.max_tokens,
        options.format,
        options.token_model,
        least if below == "entities_only" else 0.0,
    )


def _timed(
    graph: SemanticGraph,
    steps: Iterable[Step],
    question: str | None,
    fact_filter: FactFilter | None,
    sentence_of: Callable[[str], Sentence | None],
    today: date | None,
) -> Iterable[Step]:
    """The strategy's order with the question's time and rival facts applied. With ``as_of``
    every fact left is valid then, but the question's own time still says which of them it
    asks about ("in 2020" among a tenure of 2018-2022 and a timeless role); ``today`` is the
    day "current" means (``as_of``'s first day; ``None``: today)."""
    return order_by_time(
        graph,
        steps,
        read_question_time(question) if question else None,
        allowed=lambda f: fact_filter is None or fact_filter.allows(graph, f),
        sentence_of=sentence_of,
        today=today,
        clause=when_clause(question) if question else None,
    )


def _result(
    graph: SemanticGraph,
    packed: Packed,
    matches: tuple[FactMatch, ...],
    options: RetrieveOptions,
    question: str,
) -> RetrievalResult:
    return RetrievalResult(
        **_fields_of(packed),
        fact_matches=matches,
        citations={f: graph.citations(f) for f in packed.fact_ids},
        format=options.format,
        token_model=options.token_model,
        question=question,
    )


def _stated_in_order(
    graph: SemanticGraph, steps: Iterable[Step], floor: float
) -> Iterator[tuple[str, Sentence | None]]:
    """The steps' facts and sentences, lazily, without the facts under ``floor`` (none at 0)."""
    for step in steps:
        if floor and graph.fact(step.fact_id).confidence < floor:
            continue
        yield step.fact_id, step.sentence


def _above(matches: tuple[FactMatch, ...], options: RetrieveOptions) -> tuple[FactMatch, ...]:
    """The hits at or above ``min_similarity``."""
    floor = options.min_similarity
    return matches if floor is None else tuple(m for m in matches if m.similarity >= floor)


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


def _explain(steps: list[Step], result: RetrievalResult) -> tuple[FactExplanation, ...]:
    included = set(result.fact_ids)
    return tuple(
        FactExplanation(
            **_fields_of(step, leaving_out="sentence"),
            order=order,
            included=step.fact_id in included,
        )
        for order, step in enumerate(steps)
    )


def _fields_of(item: DataclassInstance, *, leaving_out: str = "") -> dict[str, Any]:
    """The dataclass's fields by name, but ``leaving_out``, for a dataclass that holds the same
    fields and more (shallow: :func:`dataclasses.asdict` would copy every tuple inside)."""
    return {f.name: getattr(item, f.name) for f in fields(item) if f.name != leaving_out}


def retrieve_question(
    parts: tuple[SemanticGraph, VectorIndex | None, SentenceIndex | None],
    embed: Callable[[Sequence[str]], Vectors],
    question: str,
    options: RetrieveOptions,
    *,
    filters: Mapping[str, Any] | None = None,
    explain: bool = False,
) -> RetrievalResult:
    """:func:`retrieve_facts` for a question not yet embedded, over a knowledge base's graph,
    fact index and sentence sidecar (an empty result when it holds no facts)."""
    check_question(question)
    fact_filter = FactFilter.parse(filters)
    graph, index, sentences = parts
    if index is None or sentences is None or not len(index):
        return RetrievalResult.empty(question, options, explain=explain)
    # A query's searches are short matrix-vector products; BLAS threads that spin after each one
    # take the cores the embedding model needs for the next query (measured: the embeddings of a
    # retrieval took 2 to 3 times as long beside them)
    with one_blas_thread():
        query = embed([question])[0]
        return retrieve_facts(
            graph,
            index,
            sentences,
            query,
            options,
            question=question,
            fact_filter=fact_filter,
            explain=explain,
            embed=embed,
        )
