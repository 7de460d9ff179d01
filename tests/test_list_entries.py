"""A list line that pairs a name with a period is a fact in time about the document's topic
(noema/ingest/listings.py): "- 2015–2019: Ruth Okafor" in the article about Halloran is
``*listed_for (#Ruth Okafor,#Halloran) @2015/2019``.

Such lines are how articles write who held an office, owned a house or managed a club in turn,
and the sentence rules read nothing from them (a name and a year with no verb). The documents are
invented; each case was written, with what it should give, before the reader was.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

import noema
from noema.evaluate import answer_in_context
from noema.model.graph import SemanticGraph

LISTED = "listed_for"


def _listed(graph: SemanticGraph) -> set[tuple[str, str, str | None]]:
    """(listed name, topic name, time) of the list-entry events."""
    name = {e.id: e.name for e in graph.entities.values()}
    return {
        (name[e.participant_ids[0]], name[e.participant_ids[-1]], e.time)
        for e in graph.events.values()
        if e.label == LISTED
    }


def _extract(extractor: noema.SpacyExtractor, title: str, text: str) -> SemanticGraph:
    return extractor.extract([noema.Document(text, metadata={"title": title})])


@pytest.mark.parametrize(
    ("title", "text", "expected"),
    [
        pytest.param(
            "Halloran",
            "Mayors of the town since the war.\n"
            "- 1998–2006: Edda Morland\n"
            "- 2006–2015: Piet Halvorsen\n"
            "- 2015–present: Ruth Okafor",
            {
                ("Edda Morland", "Halloran", "1998/2006"),
                ("Piet Halvorsen", "Halloran", "2006/2015"),
                ("Ruth Okafor", "Halloran", "2015/.."),
            },
            id="period-colon-name",
        ),
        pytest.param(
            "Brenner Instruments",
            "- Sir Alden Fitch (1961–1974)\n"
            "- Mirela Sand (4 June 1974 – 19 December 1988)\n"
            "- Tomas Ek (7 January 1989 to present)",
            {
                ("Sir Alden Fitch", "Brenner Instruments", "1961/1974"),
                ("Mirela Sand", "Brenner Instruments", "1974-06-04/1988-12-19"),
                ("Tomas Ek", "Brenner Instruments", "1989-01-07/.."),
            },
            id="name-bracketed-period",
        ),
        pytest.param(
            "Ostmere Observatory",
            "- Guido Tessmer, 1978–1989\n"
            "- Volker Anselm Rade, July 3, 1995 – April 22, 1998\n"
            "- Hanne Birkeli (1910–1986), chemist, 1955 - 1958",
            {
                ("Guido Tessmer", "Ostmere Observatory", "1978/1989"),
                ("Volker Anselm Rade", "Ostmere Observatory", "1995-07-03/1998-04-22"),
                # the period at the end is the entry's; the one beside the name her life's
                ("Hanne Birkeli", "Ostmere Observatory", "1955/1958"),
            },
            id="name-comma-period",
        ),
        pytest.param(
            "Corlett House",
            "- 1834-1868 - William Redin\n"
            "- 1964-1965 - Lisa Marr, Owen Marr and Petra Quist\n"
            "- 2017-present - David Orrin, who restored the roof",
            {
                ("William Redin", "Corlett House", "1834/1868"),
                ("Lisa Marr", "Corlett House", "1964/1965"),
                ("Owen Marr", "Corlett House", "1964/1965"),
                ("Petra Quist", "Corlett House", "1964/1965"),
                ("David Orrin", "Corlett House", "2017/.."),
            },
            id="several-names-and-a-description",
        ),
        pytest.param(
            "Corlett House",
            "- ?-1827 - Georg Peder\n- 1796-? - Jon Laird",
            # an end written "?" is unknown, not "still": no time can be stated for it
            {("Georg Peder", "Corlett House", "../1827")},
            id="unknown-ends",
        ),
        pytest.param(
            "Corlett House",
            "- In 2005 the council bought the mill.\n"
            "- British military attache (1941–1945)\n"
            "- Noor Halvani (2004)",
            # a sentence, a description and a single year beside a name (a work's year, a
            # birth) are no entries of a period
            set(),
            id="not-entries",
        ),
    ],
)
def test_a_list_line_with_a_period_is_an_event_about_the_topic(
    extractor: noema.SpacyExtractor, title: str, text: str, expected: set[tuple[str, str, str]]
) -> None:
    assert _listed(_extract(extractor, title, text)) == expected


def test_a_list_line_makes_no_name_of_its_period(extractor: noema.SpacyExtractor) -> None:
    graph = _extract(
        extractor,
        "Council of Halden",
        "- Aris Poulidis (1943–1951), interim Prime Minister in April 1946\n"
        "- Caja Norte (2010–2011).",
    )
    names = {e.name for e in graph.entities.values()}
    assert not names & {"1943–1951", "2010–2011"}
    ends = {
        graph.entities[end].name
        for r in graph.relations.values()
        for end in (r.subject_id, r.object_id)
    }
    assert "1943–1951" not in ends
    assert ("Aris Poulidis", "Council of Halden", "1943/1951") in _listed(graph)


def test_a_listed_name_holding_the_topic_keeps_the_topic(extractor: noema.SpacyExtractor) -> None:
    # NER reads the topic "James Varden" inside "John James Varden": filing the longer name
    # took the topic's only mention, and the fact's end was a name no longer filed (KeyError)
    graph = _extract(extractor, "James Varden", "- John James Varden (1829–1836), who died young.")
    assert _listed(graph) == {("John James Varden", "James Varden", "1829/1836")}


def test_a_list_without_a_topic_states_nothing(extractor: noema.SpacyExtractor) -> None:
    graph = extractor.extract([noema.Document("- 1998–2006: Edda Morland")])
    assert _listed(graph) == set()


@pytest.fixture(scope="module")
def halloran(ingested: Callable[..., noema.KnowledgeBase]) -> noema.KnowledgeBase:
    return ingested(
        [
            noema.Document(
                "Halloran is a market town on the River Vell, known for its wool trade.",
                id="halloran-1",
                metadata={"title": "Halloran"},
            ),
            noema.Document(
                "- 1998–2006: Edda Morland\n- 2006–2015: Piet Halvorsen\n- 2015–present: Ruth Okafor",
                id="halloran-2",
                metadata={"title": "Halloran"},
            ),
            noema.Document(
                "Lennox is a port city. Its harbour was rebuilt in 1990 by Carl Dunmore.",
                id="lennox-1",
                metadata={"title": "Lennox"},
            ),
        ]
    )


@pytest.mark.parametrize("format_", ["notation", "natural_language", "sentences"])
@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Who was listed for Halloran in 2010?", "Piet Halvorsen"),
        ("Who held office in Halloran from 1998 to 2006?", "Edda Morland"),
    ],
)
def test_the_entry_of_the_period_asked_is_in_context(
    halloran: noema.KnowledgeBase, question: str, answer: str, format_: str
) -> None:
    result = halloran.retrieve(question, format=format_)
    assert answer_in_context([answer], result.text)


def test_an_entry_is_stated_with_its_time(halloran: noema.KnowledgeBase) -> None:
    text = halloran.retrieve("Who was listed for Halloran?", format="notation").text
    lines = [line for line in text.splitlines() if line.startswith(f"*{LISTED} ")]
    assert len(lines) == 3
    assert all(" @" in line for line in lines)


def test_a_life_span_beside_a_name_and_its_trade_is_no_entry(
    extractor: noema.SpacyExtractor,
) -> None:
    # a list of notable people: the brackets hold each one's life, not a term of the topic's
    graph = extractor.extract(
        [
            noema.Document(
                "Notable people\n"
                "- Hans Carl von Carlowitz (1645–1714), forest scientist\n"
                "- Clara Wieck (1819–1896), pianist and composer\n"
                "- Sir Edward Bridges (1945–1956)\n",
                metadata={"title": "Chemnitz"},
            )
        ]
    )
    assert _listed(graph) == {("Sir Edward Bridges", "Chemnitz", "1945/1956")}


@pytest.mark.parametrize(
    ("heading", "predicate"),
    [
        ("## Managers", "manager_of"),
        ("## Head coaches since 2012", "head_coach_of"),
        ("### Former players", "player_of"),
        ("## Secretaries of the club", "secretary_of"),
        ("## Notable alumni", LISTED),
        ("Managers:", LISTED),
    ],
)
def test_a_section_heading_that_names_a_role_gives_it_to_the_list_under_it(
    extractor: noema.SpacyExtractor, heading: str, predicate: str
) -> None:
    graph = _extract(
        extractor,
        "Brackwater Town",
        f"# Brackwater Town\n\nBrackwater Town is a football club.\n\n{heading}\n\n"
        "- 2012–2018: Gareth Pollard\n- Ilse Marquardt (2018–2023)\n\n## History\n\n"
        "- 1990–1995: Tomas Reyes\n",
    )
    name = {e.id: e.name for e in graph.entities.values()}
    found = {
        (name[e.participant_ids[0]], e.label, e.time)
        for e in graph.events.values()
        if e.time is not None
    }
    assert ("Gareth Pollard", predicate, "2012/2018") in found
    assert ("Ilse Marquardt", predicate, "2018/2023") in found
    # the next heading ends the section: what is listed under "History" is only listed
    assert ("Tomas Reyes", LISTED, "1990/1995") in found


def test_a_list_in_a_later_piece_of_a_long_document_keeps_its_heading(
    extractor: noema.SpacyExtractor,
) -> None:
    """A document over the piece size is parsed in pieces; the heading is in the first, the
    list in the second."""
    filler = "The club played in red and trained on the common every week. " * 400
    graph = _extract(
        extractor,
        "Brackwater Town",
        f"# Brackwater Town\n\nBrackwater Town is a football club.\n\n## Managers\n\n{filler}\n\n"
        "- 2012–2018: Gareth Pollard\n",
    )
    name = {e.id: e.name for e in graph.entities.values()}
    found = {(name[e.participant_ids[0]], e.label, e.time) for e in graph.events.values()}
    assert ("Gareth Pollard", "manager_of", "2012/2018") in found
