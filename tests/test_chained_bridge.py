"""A bridge that leads on at once: the further relation a question asks of the entity its second
step reached ("the chief executive of the company that licensed Velotrexin") is read from that
entity's facts, so the third hop's page is searched without waiting for a search's best
sentence to name it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import noema
from noema.evaluate import answer_in_context
from noema.ingest.sources import read_documents
from noema.model.graph import SemanticGraph
from noema.retrieval.bridges import chained_bridge, question_words

QUESTION = "Where was the chief executive of the company that licensed Velotrexin born?"


def company_graph(researchers: int = 1) -> tuple[SemanticGraph, dict[str, str]]:
    g = SemanticGraph()
    ids = {
        name: g.add_entity(name, type_)
        for name, type_ in [
            ("Ostrander Therapeutics", "ORG"),
            ("Velotrexin", "PRODUCT"),
            ("Mireille Gaskin", "PERSON"),
            ("Wickhollow", "GPE"),
        ]
    }
    g.add_relation(ids["Ostrander Therapeutics"], "license", ids["Velotrexin"])
    g.add_relation(ids["Mireille Gaskin"], "chief_executive_of", ids["Ostrander Therapeutics"])
    g.add_relation(ids["Ostrander Therapeutics"], "base_in", ids["Wickhollow"])
    for i in range(researchers):
        person = g.add_entity(f"Researcher Number{i}", "PERSON")
        ids[f"r{i}"] = person
        g.add_relation(person, "chief_scientist_of", ids["Ostrander Therapeutics"])
    return g, ids


def test_the_chained_bridge_is_the_end_of_the_relation_the_question_asks_next() -> None:
    g, ids = company_graph()
    said = "ostrander therapeutics licensed velotrexin in 2016"
    found = chained_bridge(g, ids["Ostrander Therapeutics"], question_words(QUESTION), said, (), {})
    assert found is not None and found[0] == ids["Mireille Gaskin"]


def test_no_chained_bridge_for_a_relation_the_evidence_already_says() -> None:
    g, ids = company_graph()
    # the evidence names the chief executive already: the question asks nothing further of the
    # company that its facts hold (licensed, chief, executive are said; born is not its fact)
    said = "mireille gaskin chief executive of ostrander therapeutics licensed velotrexin"
    assert (
        chained_bridge(g, ids["Ostrander Therapeutics"], question_words(QUESTION), said, (), {})
        is None
    )


@pytest.mark.parametrize(
    "question",
    [QUESTION, "Where was the CEO of the company that licensed Velotrexin born?"],
)
def test_the_office_asked_is_told_from_the_offices_that_share_a_word(question: str) -> None:
    # four chief scientists share "chief" with the chief executive: the predicate that holds
    # more of the question's words is the one asked, and a CEO is a chief executive
    g, ids = company_graph(researchers=4)
    said = "ostrander therapeutics licensed velotrexin in 2016"
    found = chained_bridge(g, ids["Ostrander Therapeutics"], question_words(question), said, (), {})
    assert found is not None and found[0] == ids["Mireille Gaskin"]


def test_a_ceo_asked_is_found_where_the_predicate_writes_ceo() -> None:
    g, ids = company_graph()
    lucia = g.add_entity("Lucia Brandt", "PERSON")
    g.add_relation(lucia, "ceo_of", ids["Velotrexin"])  # another thing's, to be passed over
    holder = g.add_entity("Ada Morrow", "PERSON")
    g.add_relation(holder, "ceo_of", ids["Wickhollow"])
    question = question_words("Where was the CEO of the town that hosts Velotrexin born?")
    found = chained_bridge(g, ids["Wickhollow"], question, "velotrexin hosts", (), {})
    assert found is not None and found[0] == holder


def test_no_chained_bridge_where_the_relation_reaches_many() -> None:
    g, ids = company_graph(researchers=4)
    question = question_words(
        "Where was the chief scientist of the company that licensed Velotrexin born?"
    )
    said = "ostrander therapeutics licensed velotrexin in 2016"
    assert chained_bridge(g, ids["Ostrander Therapeutics"], question, said, (), {}) is None


INSTITUTES = Path(__file__).parent.parent / "benchmarks" / "corpora" / "institutes"


@pytest.fixture(scope="module")
def institutes_kb(ingested: Callable[..., noema.KnowledgeBase]) -> noema.KnowledgeBase:
    # read as `noema build benchmarks/corpora/institutes/docs --root ...` reads them
    return ingested(list(read_documents([INSTITUTES / "docs"], root=INSTITUTES)))


@pytest.mark.parametrize("format", ["notation", "natural_language", "sentences"])
def test_the_third_hop_is_reached_through_the_company_the_second_found(
    institutes_kb: noema.KnowledgeBase, format: str
) -> None:
    # the company's search brings the drug's sentences first; its chief executive's page, where
    # she was born, came only from a sentence no search ranked first
    result = institutes_kb.retrieve(QUESTION, max_tokens=400, format=format)  # type: ignore[arg-type]
    assert answer_in_context(["Tallowmere"], result.text), result.text


def test_the_founder_of_the_company_a_drug_names_is_found(
    institutes_kb: noema.KnowledgeBase,
) -> None:
    result = institutes_kb.retrieve(
        "Who founded the company that makes Narvaline?", max_tokens=200, format="sentences"
    )
    assert "Florian Vesey" in result.text, result.text
