"""What a document denies, reports or asks is not stated (noema/ingest/rules.py): "Reports that
X would leave for Y were wrong", "denied reports that it had bid for X", "Rumours that ... were
denied", "reports said X would join Y" and a FAQ's question give no fact between their names.

The documents are invented, written the way press notes and FAQs write.
"""

from __future__ import annotations

import pytest

import noema
from noema.model.graph import SemanticGraph


def _pairs(graph: SemanticGraph) -> set[frozenset[str]]:
    """The pairs of names any relation or event joins."""
    name = {e.id: e.name for e in graph.entities.values()}
    return {frozenset(name[i] for i in fact.entity_ids) for fact in graph.iter_facts()}


@pytest.mark.parametrize(
    ("text", "subject", "object_"),
    [
        pytest.param(
            "Reports in 2021 that Teodor Valk would leave for Tarrowby United were wrong, "
            "Eskridge Athletic said on Thursday.",
            "Teodor Valk",
            "Tarrowby United",
            id="reports-were-wrong",
        ),
        pytest.param(
            "# Valk stays at Eskridge\n\nReports in 2021 that Teodor Valk would leave for "
            "Tarrowby United were wrong, Eskridge Athletic said on Thursday.",
            "Teodor Valk",
            "Tarrowby United",
            id="reports-opening-a-document",
        ),
        pytest.param(
            "Tarrowby United also denied reports that it had bid for Teodor Valk.",
            "Tarrowby United",
            "Teodor Valk",
            id="denied-reports-that",
        ),
        pytest.param(
            "A rumour that Marlin Holdings had bought Tarrowby United was denied by both "
            "companies on Monday.",
            "Marlin Holdings",
            "Tarrowby United",
            id="rumour-was-denied",
        ),
        pytest.param(
            "Rumours that Nettlecombe Software would sell Emberloom to Halvard Systems were "
            "denied by both companies in October 2020.",
            "Nettlecombe Software",
            "Halvard Systems",
            id="rumours-were-denied",
        ),
        pytest.param(
            "Trade press reports said Anneliese Dorrow would join Ostrander Therapeutics.",
            "Anneliese Dorrow",
            "Ostrander Therapeutics",
            id="reports-said",
        ),
        pytest.param(
            "Reports in 2021 that Mara Thistle would leave for Ironwood Software were wrong.",
            "Mara Thistle",
            "Ironwood Software",
            id="reports-that-a-clause-with-no-object",
        ),
        pytest.param(
            "Ostrander Therapeutics said it has no plans to acquire Pellmar Biologics.",
            "plans",
            "Pellmar Biologics",
            id="no-plans-to",
        ),
        pytest.param(
            "Ostrander Therapeutics said it has no plans to acquire Pellmar Biologics.",
            "Ostrander Therapeutics",
            "Pellmar Biologics",
            id="no-plans-to-the-company",
        ),
        pytest.param(
            "Benedikt Sorrel is sometimes described as a former reader for Orrery House, but "
            "he never worked for the house.",
            "Benedikt Sorrel",
            "Orrery House",
            id="described-as",
        ),
        pytest.param(
            "Several published profiles say that Rui Carvalho worked for Greyling Air in "
            "Quennock before he moved to Kelvaig.",
            "Rui Carvalho",
            "Greyling Air",
            id="profiles-say",
        ),
        pytest.param(
            "A newspaper article claimed that Rui Carvalho had flown for Greyling Air.",
            "Rui Carvalho",
            "Greyling Air",
            id="an-article-claimed",
        ),
        pytest.param(
            "Q: Did Conrad Hesketh ever work at the Hollinsworth Centre?\nA: No.",
            "Conrad Hesketh",
            "Hollinsworth Centre",
            id="a-question",
        ),
    ],
)
def test_a_denied_or_reported_claim_is_not_stated(
    extractor: noema.SpacyExtractor, text: str, subject: str, object_: str
) -> None:
    graph = extractor.extract([noema.Document(text)])
    assert frozenset({subject, object_}) not in _pairs(graph)


def test_what_the_same_sentence_states_is_kept(extractor: noema.SpacyExtractor) -> None:
    graph = extractor.extract(
        [
            noema.Document(
                "Valk, who joined Eskridge Athletic from Dunmarrow Rovers in 2019, said that "
                "reports were wrong."
            )
        ]
    )
    assert frozenset({"Valk", "Eskridge Athletic"}) in _pairs(graph)


@pytest.mark.parametrize(
    ("text", "subject", "object_"),
    [
        (
            "Harriet Lowe, described by critics as a poet, joined Orrery House in 2001.",
            "Harriet Lowe",
            "Orrery House",
        ),
        # a clause of its own beside the description is the writer's claim
        (
            "Kenneth Holloway was described as a gifted pianist and played for Arsenal.",
            "Kenneth Holloway",
            "Arsenal",
        ),
        (
            "In the film, Meryl Streep portrays Margaret Thatcher as a lonely widow.",
            "Meryl Streep",
            "Margaret Thatcher",
        ),
    ],
)
def test_a_description_by_others_leaves_the_rest_of_the_sentence_stated(
    extractor: noema.SpacyExtractor, text: str, subject: str, object_: str
) -> None:
    graph = extractor.extract([noema.Document(text)])
    assert frozenset({subject, object_}) in _pairs(graph)


def test_what_sources_say_of_a_date_is_stated(extractor: noema.SpacyExtractor) -> None:
    # Wikipedia's hedge on a date, not a claim it disputes (profiles and articles are reported)
    text = (
        "Some sources say that John Story, the first professor, was appointed in about 1541. "
        "No foundation document survives."
    )
    assert frozenset({"John Story", "about 1541"}) in _pairs(
        extractor.extract([noema.Document(text)])
    )
