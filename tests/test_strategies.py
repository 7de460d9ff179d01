"""The registry of retrieval strategies: one name per ``seeds`` value, one
keyword-only signature, and ``retrieve`` orders facts exactly as the named strategy does."""

from __future__ import annotations

from collections.abc import Callable
from typing import get_args

import pytest

import noema
from noema.retrieval.options import SEED_STRATEGIES, RetrieveOptions
from noema.retrieval.steps import REASONS, STRATEGY_HELP, Reason, Step, explain_reason
from noema.retrieval.strategies import STRATEGIES, PlanRequest


def test_every_seeds_value_names_a_registered_strategy() -> None:
    assert sorted(STRATEGIES) == sorted(SEED_STRATEGIES)
    assert sorted(STRATEGY_HELP) == sorted(SEED_STRATEGIES)


def test_every_reason_has_its_texts() -> None:
    assert list(REASONS) == list(get_args(Reason))


@pytest.mark.parametrize(
    ("reason", "line"),
    [
        ("seed", "seed, similarity 0.5"),
        ("sentence", "its sentence is a seed, similarity 0.5"),
        ("hop", "hop from 'A' to the document about B, similarity 0.5"),
        ("bridge", "step 2: a search with the bridge B named by 'A', similarity 0.5"),
        ("expansion", "1 hop(s) from 'A', similarity 0.5"),
        ("time", "a rival of 'A'"),
    ],
    ids=lambda value: str(value)[:12],
)
def test_explain_lines(reason: Reason, line: str) -> None:
    assert explain_reason(reason, seed="'A'", last="B", similarity=0.5, step=2, hops=1) == line


@pytest.fixture(scope="module")
def kb(ingested: Callable[..., noema.KnowledgeBase]) -> noema.KnowledgeBase:
    return ingested(
        [
            "Microsoft acquired LinkedIn in 2016.",
            "Bill Gates and Paul Allen founded Microsoft in 1975.",
            "Jeff Bezos founded Amazon in 1994.",
        ]
    )


@pytest.mark.parametrize("seeds", SEED_STRATEGIES)
def test_retrieve_orders_the_facts_as_the_named_strategy_does(
    kb: noema.KnowledgeBase, seeds: str
) -> None:
    question = "Who founded the company that acquired LinkedIn?"
    result = kb.retrieve(question, seeds=seeds, explain=True, max_tokens=10_000)  # type: ignore[arg-type]
    snapshot = kb._snapshot  # the strategy is called on what retrieve reads
    options = RetrieveOptions(seeds=seeds, max_tokens=10_000)  # type: ignore[arg-type]
    request = PlanRequest(
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
    steps = STRATEGIES[seeds](request)  # type: ignore[index]
    order = [s.fact_id for s in steps]
    assert order == [e.fact_id for e in result.explanation or ()]
    assert list(result.fact_ids) == order  # the budget held every fact, in that order


def _positions_in_sentence(steps: list[Step]) -> list[int]:
    """For each step, how many facts of its sentence came before it."""
    seen: dict[object, int] = {}
    out = []
    for step in steps:
        out.append(seen.get(step.sentence, 0))
        seen[step.sentence] = out[-1] + 1
    return out


def test_the_fact_formats_take_five_facts_of_a_sentence_before_other_sentences(
    embedder: noema.SentenceTransformerEmbedder, extractor: noema.SpacyExtractor
) -> None:
    # a sentence of a dozen facts filled the notation budget before the next sentence came in
    # (MuSiQue: the Publix sentence); now its facts past five wait for the other sentences
    kb = noema.KnowledgeBase(embedder=embedder, extractor=extractor)
    kb.ingest(
        [
            "Publix operates throughout the Southeastern United States, with locations in "
            "Florida, Georgia, Alabama, South Carolina, Tennessee, North Carolina, and Virginia.",
            "George Jenkins founded Publix in Winter Haven in 1930.",
            "Winter Haven is a city in Polk County, Florida.",
        ]
    )
    question = "Where does Publix have stores?"
    snapshot = kb._snapshot
    orders = {}
    for format in ("notation", "sentences"):
        result = kb.retrieve(question, format=format, explain=True, max_tokens=10_000)  # type: ignore[arg-type]
        steps = list(
            STRATEGIES["graph"](
                PlanRequest(
                    graph=snapshot.graph,
                    index=snapshot.index,
                    sentences=snapshot.sentences,
                    query=kb.embedder.embed([question])[0],
                    matches=[(m.relation_id, m.similarity) for m in result.fact_matches],
                    options=RetrieveOptions(format=format),  # type: ignore[arg-type]
                    fact_filter=None,
                    question=question,
                    embed=kb.embedder.embed,
                )
            )
        )
        searched = [s for s in steps if s.reason in ("sentence", "hop", "bridge")]
        orders[format] = searched
    notation = _positions_in_sentence(orders["notation"])
    assert max(notation) >= 5  # the long sentence has facts to defer
    first_deferred = next(n for n, k in enumerate(notation) if k >= 5)
    assert all(k >= 5 for k in notation[first_deferred:])
    assert 0 in notation[notation.index(4) + 1 :]  # other sentences came before the rest
    # the source sentences show a sentence whole: its facts come together
    runs = [
        s.sentence
        for n, s in enumerate(orders["sentences"])
        if n == 0 or s.sentence != orders["sentences"][n - 1].sentence
    ]
    assert len(runs) == len(set(runs))
