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
from noema.model.names import normalize_name
from noema.retrieval.bridges import (
    asked_stems,
    chained_bridge,
    question_names,
    question_words,
    relation_bridge,
)

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


FOUNDATION = [
    noema.Document(
        "# The Lanthorn Foundation\n\nThe Lanthorn Foundation is a medical charity based in "
        "Pelbury. It was set up in 2009 by Cecily Lanthorn. Cecily Lanthorn chaired the "
        "foundation from 2009 until 2025, when she stepped down.\n\n## Key facts\n\n"
        "- Chair: Ngozi Ferrand (2025–)\n- Cecily Lanthorn: chair, 2009–2025\n",
        id="lanthorn_foundation.md",
    ),
    noema.Document(
        "# Ngozi Ferrand\n\nNgozi Ferrand (born 1968 in Tessmoor) is a hospital manager. She "
        "was chief executive of Caddisford Health Trust from 2017.",
        id="ngozi_ferrand.md",
    ),
    noema.Document(
        "# Cecily Lanthorn\n\nCecily Lanthorn was born in Marrick in 1944. She made her fortune "
        "in textile dyes.",
        id="cecily_lanthorn.md",
    ),
]


@pytest.fixture(scope="module")
def foundation_kb(ingested: Callable[..., noema.KnowledgeBase]) -> noema.KnowledgeBase:
    return ingested(FOUNDATION)


def _bridged(kb: noema.KnowledgeBase, question: str, as_of: str | None = None) -> set[str]:
    """The names the bridge searches of ``question`` went through."""
    result = kb.retrieve(question, max_tokens=400, explain=True, as_of=as_of)
    assert result.explanation is not None
    graph = kb.graph
    return {
        graph.entities[e].name
        for step in result.explanation
        if step.reason == "bridge" and step.step == 2
        for e in step.path
    }


def test_a_question_with_no_time_bridges_to_the_holder_now(
    foundation_kb: noema.KnowledgeBase,
) -> None:
    # the sentence most like the question names the chair until 2025; "the chair" is the one
    # after her, whose page says where she was born
    bridged = _bridged(foundation_kb, "Where was the chair of the Lanthorn Foundation born?")
    assert "Ngozi Ferrand" in bridged and "Cecily Lanthorn" not in bridged


@pytest.mark.parametrize(
    ("question", "as_of"),
    [
        ("Where was the chair of the Lanthorn Foundation in 2015 born?", None),
        # a word that sets the time by another holder
        ("Where was the predecessor of the chair of the Lanthorn Foundation born?", None),
        ("Where was the chair of the Lanthorn Foundation born?", "2015"),
    ],
)
def test_a_question_or_call_with_a_time_bridges_to_the_holder_then(
    foundation_kb: noema.KnowledgeBase, question: str, as_of: str | None
) -> None:
    bridged = _bridged(foundation_kb, question, as_of=as_of)
    assert "Ngozi Ferrand" not in bridged and "Cecily Lanthorn" in bridged


@pytest.mark.parametrize(
    "question",
    [
        "Who is the chief executive of the company that makes the Talvio?",
        "Where is the maker of the Talvio based?",
        "Who is the chief executive of the company which made the Talvio?",
    ],
)
def test_the_maker_a_question_asks_for_is_a_relation_bridge(question: str) -> None:
    # "makes" after "that" is a verb, and "make" a relation of its own: the company that makes
    # the pump is the bridge, not the engineer the pump's best sentence names
    g = SemanticGraph()
    talvio = g.add_entity("Talvio", "PRODUCT")
    maker = g.add_entity("Kestrin Medical", "ORG")
    engineer = g.add_entity("Maeve Collister", "PERSON")
    g.add_relation(maker, "make", talvio)
    g.add_relation(engineer, "design", talvio)
    found = relation_bridge(g, [talvio], question_words(question), (), {})
    assert found is not None and found[0] == maker


@pytest.mark.parametrize(
    "question",
    ["Which of the towns near Halloran has a port?", "Which towns near Halloran have a port?"],
)
def test_a_plural_noun_is_no_relation(question: str) -> None:
    g = SemanticGraph()
    town = g.add_entity("Halloran", "GPE")
    other = g.add_entity("Corvell", "GPE")
    g.add_relation(town, "town", other)
    assert relation_bridge(g, [town], question_words(question), (), {}) is None


@pytest.mark.parametrize("format", ["notation", "natural_language", "sentences"])
def test_the_bridge_s_fact_the_question_asks_comes_before_its_other_facts(
    institutes_kb: noema.KnowledgeBase, format: str
) -> None:
    # the founder's page was ranked by the whole question: where he worked, what he founded and
    # his shares took the 200 tokens before the sentence that says where he was born
    result = institutes_kb.retrieve(
        "Where was the founder of the company that makes Narvaline born?",
        max_tokens=200,
        format=format,  # type: ignore[arg-type]
    )
    assert answer_in_context(["Brimsworth"], result.text), result.text


def test_asked_stems_are_the_relations_the_evidence_does_not_say() -> None:
    question = "Where was the founder of the company that makes Narvaline born?"
    said = normalize_name("Florian Vesey founded Pellmar Biologics, which makes Narvaline.")
    assert asked_stems(question_words(question), said, question_names(question)) == {"born"}


def test_the_relation_next_to_the_name_is_not_asked_again() -> None:
    # the performer of Decade is the bridge: his other performances say nothing of his sibling
    question = "Who is the sibling of the performer of Decade?"
    words, names = question_words(question), question_names(question)
    asked = asked_stems(words, normalize_name("Decade is an album by Neil Young."), names)
    assert "perform" not in asked and asked == {"sibl"}
