"""Retrieval strategies: the named ways of choosing and ordering the facts of a retrieval.

A strategy is a function of one :class:`PlanRequest` (everything a retrieval knows, built with
keywords) that returns the packing order as :class:`~noema.retrieval.plan.Step` records, lazily if it
likes (packing stops at the budget). :data:`STRATEGIES` maps the names ``RetrieveOptions.seeds``
accepts to them, so :func:`noema.retrieval.retrieve.retrieve_facts` has no branch per strategy, and a new
strategy is a function here, its name and help in :mod:`noema.retrieval.steps` (with the texts of
any new :data:`~noema.retrieval.steps.Reason` it gives; tests hold both tables to their
``Literal``), and its test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from noema.errors import OptionError
from noema.model.graph import SemanticGraph
from noema.retrieval.filters import FactFilter
from noema.retrieval.formats import FORMATS
from noema.retrieval.lexical import lexical_index
from noema.retrieval.options import RetrieveOptions
from noema.retrieval.plan import (
    FACTS_PER_SENTENCE,
    KEEP_FIRST,
    KEEP_FIRST_FACTS,
    plan_graph,
    plan_vector,
)
from noema.retrieval.steps import SeedStrategy, Step
from noema.vectors.embed import Vectors
from noema.vectors.index import VectorIndex
from noema.vectors.sentences import SentenceIndex

__all__ = ["STRATEGIES", "PlanRequest", "Strategy"]


@dataclass(frozen=True, kw_only=True)
class PlanRequest:
    """What a strategy chooses from.

    ``matches`` are the vector-search hits over the fact vectors, best first, filtered by
    ``fact_filter`` and floored; ``embed`` embeds further queries (``None``: no further
    searches); ``sentences`` is the sentence sidecar when the knowledge base has one. With
    ``as_of``, ``fact_filter`` leaves the day out: the facts invalid then are left out of the
    order after the strategy (:func:`noema.retrieval.retrieve.retrieve_facts`).
    """

    graph: SemanticGraph
    index: VectorIndex
    sentences: SentenceIndex | None
    query: Vectors
    matches: Sequence[tuple[str, float]]
    options: RetrieveOptions
    fact_filter: FactFilter | None = None
    question: str = ""
    embed: Callable[[Sequence[str]], Vectors] | None = None


Strategy = Callable[[PlanRequest], Iterable[Step]]


def graph_strategy(request: PlanRequest) -> Iterable[Step]:
    """``seeds="graph"``: sentence seeds, narrow hops, bridge searches, then the walk."""
    if request.sentences is None:
        raise OptionError('seeds="graph" needs the sentence index of the knowledge base')
    options = request.options
    # a bridge sentence brings up to five facts in the formats that state facts: more of the
    # first search comes before it there (measured; see the README)
    shown_as_facts = FORMATS[options.format].states_facts
    return plan_graph(
        request.graph,
        request.index,
        request.sentences,
        request.query,
        request.matches,
        options.hops,
        request.fact_filter,
        options.min_similarity,
        question=request.question,
        embed=request.embed,
        lexical=lexical_index(request.graph, request.sentences),
        keep_first=KEEP_FIRST_FACTS if shown_as_facts else KEEP_FIRST,
        per_sentence=FACTS_PER_SENTENCE if shown_as_facts else None,
        timed=options.as_of is not None,
    )


def vector_strategy(request: PlanRequest) -> Iterable[Step]:
    """``seeds="vector"``: the spec's three steps exactly (vector seeds, the walk, packing)."""
    return plan_vector(
        request.graph,
        request.index,
        request.sentences,
        request.query,
        request.matches,
        request.options.hops,
        request.fact_filter,
    )


STRATEGIES: Mapping[SeedStrategy, Strategy] = MappingProxyType(
    {"graph": graph_strategy, "vector": vector_strategy}
)
