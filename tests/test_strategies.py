"""The registry of retrieval strategies (issue 26 item 2): one name per ``seeds`` value, one
keyword-only signature, and ``retrieve`` orders facts exactly as the named strategy does."""

from __future__ import annotations

import pytest

import noema
from noema.options import SEED_STRATEGIES, RetrieveOptions
from noema.strategies import STRATEGIES


def test_every_seeds_value_names_a_registered_strategy() -> None:
    assert sorted(STRATEGIES) == sorted(SEED_STRATEGIES)


@pytest.fixture(scope="module")
def kb(
    embedder: noema.SentenceTransformerEmbedder, extractor: noema.SpacyExtractor
) -> noema.KnowledgeBase:
    kb = noema.KnowledgeBase(embedder=embedder, extractor=extractor)
    kb.ingest(
        [
            "Microsoft acquired LinkedIn in 2016.",
            "Bill Gates and Paul Allen founded Microsoft in 1975.",
            "Jeff Bezos founded Amazon in 1994.",
        ]
    )
    return kb


@pytest.mark.parametrize("seeds", SEED_STRATEGIES)
def test_retrieve_orders_the_facts_as_the_named_strategy_does(
    kb: noema.KnowledgeBase, seeds: str
) -> None:
    question = "Who founded the company that acquired LinkedIn?"
    result = kb.retrieve(question, seeds=seeds, explain=True, max_tokens=10_000)  # type: ignore[arg-type]
    snapshot = kb._snapshot  # the strategy is called on what retrieve reads
    options = RetrieveOptions(seeds=seeds, max_tokens=10_000)  # type: ignore[arg-type]
    steps = STRATEGIES[seeds](  # type: ignore[index]
        graph=snapshot.graph,
        index=snapshot.index,
        sentences=snapshot.sentences,
        query=kb.embedder.embed([question])[0],
        matches=[(m.relation_id, m.similarity) for m in result.fact_matches],
        options=options,
        fact_filter=None,
        question=question,
        embed=kb.embedder.embed,
    )
    order = [s.fact_id for s in steps]
    assert order == [e.fact_id for e in result.explanation or ()]
    assert list(result.fact_ids) == order  # the budget held every fact, in that order
