"""The page is structure, not text (noema/ingest/layout.py, noema/ingest/topic.py): a headline
names the document and is never an entity, a ``Q:``/``A:`` marker or a dateline is never a name,
"Key facts" lines are timed facts, and initials stand for the name they were given for.

The documents are invented, in the forms people write: articles with headlines, minutes, FAQs,
press notes and wiki pages with lists.
"""

from __future__ import annotations

import pytest

import noema
from noema.ingest.layout import title_line, title_name
from noema.model.graph import SemanticGraph


def _names(graph: SemanticGraph) -> set[str]:
    names = set()
    for entity in graph.entities.values():
        names |= {entity.name, *entity.aliases}
    return names


def _facts(graph: SemanticGraph) -> set[tuple[str, str, str, str | None]]:
    """(subject, predicate, object, time) of every relation and two-entity event."""
    name = {e.id: e.name for e in graph.entities.values()}
    facts = {
        (name[r.subject_id], r.predicate, name[r.object_id], None) for r in graph.relations.values()
    }
    for event in graph.events.values():
        ends = event.participant_ids
        if len(ends) >= 2:
            facts.add((name[ends[0]], event.label, name[ends[-1]], event.time))
    return facts


def _subjects(graph: SemanticGraph) -> set[str]:
    return {subject for subject, _, _, _ in _facts(graph)}


def _extract(extractor: noema.SpacyExtractor, text: str) -> SemanticGraph:
    return extractor.extract([noema.Document(text)])


@pytest.mark.parametrize(
    ("text", "headline", "person"),
    [
        pytest.param(
            "# Anneliese Dorrow: the immunologist who found Velotrexin\n\n"
            "Anneliese Dorrow was born in Wickhollow in 1966. She joined the Ravelle Institute "
            "in 2003.",
            "Anneliese Dorrow: the immunologist who found Velotrexin",
            "Anneliese Dorrow",
            id="markdown-name-with-description",
        ),
        pytest.param(
            "Ida Ravelle, the founder who would not retire, dies at 84\n\n"
            "Ida Ravelle, who founded the Ravelle Institute in Brimsworth in 1994, has died. "
            "She was born in Pellingham in 1928.",
            "Ida Ravelle, the founder who would not retire, dies at 84",
            "Ida Ravelle",
            id="bare-first-line-headline",
        ),
        pytest.param(
            "Sallow Foundation grants committee — minutes, 12 March 2020\n\n"
            "Present: Helena Varga (HV, chair), Tomas Brill (TB).\n\n"
            "1. HV declared that she was director of the Castrelle Institute until 2016.",
            "Sallow Foundation grants committee — minutes, 12 March 2020",
            "Helena Varga",
            id="minutes-title",
        ),
    ],
)
def test_a_headline_is_no_entity_and_takes_no_pronoun(
    extractor: noema.SpacyExtractor, text: str, headline: str, person: str
) -> None:
    graph = _extract(extractor, text)
    names = _names(graph)
    assert headline not in names
    assert not [n for n in names if ":" in n or "\u2014" in n or "dies" in n]
    assert person in _subjects(graph)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            "# Glenmoor Arena opens its doors\n\nGlenmoor Arena, the new home of Tarrowby United, "
            "opened in 2022. It holds 18,000 people.",
            id="headline-with-a-verb",
        ),
        pytest.param(
            "Velotrexin approved after nine years\n\nVelotrexin, the drug found at the Ravelle "
            "Institute, was approved in 2021. It was developed by Ostrander Therapeutics.",
            id="bare-headline-with-a-participle",
        ),
        pytest.param(
            "# Spindle 3.0 released\n\nSpindle 3.0, the image analysis software of the Quarrie "
            "Laboratory, was released on 22 May 2023.",
            id="headline-with-a-past-verb",
        ),
        pytest.param(
            "No sale of Narvaline rights\n\nRumours that Ostrander Therapeutics had bought the "
            "rights to Narvaline were denied in March 2022.",
            id="headline-without-a-verb",
        ),
    ],
)
def test_a_sentence_for_a_title_is_no_entity(extractor: noema.SpacyExtractor, text: str) -> None:
    headline = text.split("\n")[0].lstrip("# ")
    graph = _extract(extractor, text)
    assert headline not in _names(graph)
    assert not any(n in headline and len(n.split()) > 2 for n in _names(graph))


def test_a_title_that_names_a_thing_still_names_the_topic(
    extractor: noema.SpacyExtractor,
) -> None:
    graph = _extract(
        extractor,
        "# Larkspur FAQ\n\nQ: Who leads it?\nA: Priya Raman has led it since 2025.",
    )
    assert "Larkspur FAQ" not in _names(graph)
    assert ("Priya Raman", "lead", "Larkspur") in {f[:3] for f in _facts(graph)}


def test_a_titles_description_says_what_the_topic_is(extractor: noema.SpacyExtractor) -> None:
    # "a ground": the page is about a place, so "he" is the person named before, not the
    # ground, and "it" is the ground
    graph = _extract(
        extractor,
        "Millrace Park: a ground on the river\n\nMillrace Park has been the home of Dunmarrow "
        "Rovers since 1901. It floods most winters. The club's chair, Aldous Fenn, has promised "
        "to replace the main stand, but he has ruled out a move.",
    )
    facts = {f[:3] for f in _facts(graph)}
    assert ("Aldous Fenn", "rule_out", "move") in facts
    assert ("Millrace Park", "rule_out", "move") not in facts


def test_an_office_without_its_body_is_held_in_the_documents_topic(
    extractor: noema.SpacyExtractor,
) -> None:
    # a FAQ about the centre: "director" is the centre's; not on a person's own page
    graph = _extract(
        extractor,
        "# Hollinsworth Centre: questions and answers\n\nQ: Who directs the centre?\nA: Samuel "
        "Torvane has been director since 2021.",
    )
    facts = _facts(graph)
    assert ("Samuel Torvane", "director_of", "Hollinsworth Centre", "2021/..") in facts
    assert not any(f[2] == "director" for f in facts)
    project = _extract(
        extractor,
        "# Larkspur\n\nLarkspur is a web framework. Odalys Merino has been lead maintainer "
        "since 2021.",
    )
    assert ("Odalys Merino", "lead_maintainer_of", "Larkspur", "2021/..") in _facts(project)
    # "when Conrad Hesketh was director" in the laboratory's page: the director of the institute
    laboratory = _extract(
        extractor,
        "# Quarrie Laboratory\n\nThe Quarrie Laboratory opened at the Ravelle Institute in 2015, "
        "when Conrad Hesketh was director.",
    )
    assert not any(f[1] == "director_of" for f in _facts(laboratory))
    # an office in a town's page, or a trade, is no office of the page's topic
    town = _extract(
        extractor,
        "# Maidenhead\n\nMaidenhead is a town in Berkshire. Theresa May was prime minister "
        "from 2016 to 2019.",
    )
    studio = _extract(
        extractor,
        "# Acme Studios\n\nAcme Studios is a film company. Steven Spielberg is a director.",
    )
    assert not any(
        f[2] in ("Maidenhead", "Acme Studios")
        for f in _facts(town) | _facts(studio)
        if f[1].endswith("_of")
    )
    release = _extract(
        extractor, "# Larkspur\n\nLarkspur is a web framework. Larkspur 3.1 is the leader."
    )
    assert not any(f[1] == "leader_of" for f in _facts(release))
    person = _extract(
        extractor,
        "# Ada Quist\n\nAda Quist is a chemist. Her brother Tomas Quist is a director.",
    )
    assert not any(f[1] == "director_of" for f in _facts(person))


def test_a_question_states_nothing(extractor: noema.SpacyExtractor) -> None:
    # a FAQ's question asks; its answer states
    graph = _extract(
        extractor,
        "# Hollinsworth Centre: questions and answers\n\nQ: Who directs the centre?\nA: Samuel "
        "Torvane has been director since 2021.\n\nQ: Did Conrad Hesketh join Ostrander "
        "Therapeutics?\nA: No.",
    )
    facts = _facts(graph)
    assert ("Hollinsworth Centre", "direct", "centre", None) not in facts
    assert not any(f[0] == "Conrad Hesketh" for f in facts)


def test_a_data_sets_title_in_lowercase_words_still_names_the_topic(
    extractor: noema.SpacyExtractor,
) -> None:
    graph = extractor.extract(
        [
            noema.Document(
                "It was foiled by the FBI in 2009. It targeted the Holland Tunnel.",
                metadata={"title": "Hudson River bomb plot"},
            )
        ]
    )
    assert "Hudson River bomb plot" in _subjects(graph)


def test_a_title_that_is_a_name_is_the_main_entity(extractor: noema.SpacyExtractor) -> None:
    graph = _extract(
        extractor,
        "# Conrad Hesketh\n\nHe was born in Orrinford and studied at the University of Orrinford.",
    )
    assert "Conrad Hesketh" in _subjects(graph)


@pytest.mark.parametrize(
    ("text", "title"),
    [
        pytest.param(
            "Larkspur: a new lead maintainer\n\nOdalys Merino has stepped down as lead "
            "maintainer of Larkspur.",
            "Larkspur: a new lead maintainer",
            id="one-word-name-with-a-subtitle",
        ),
        pytest.param(
            "Note: this page is kept for the record\n\nOdalys Merino led Larkspur.",
            "",
            id="a-label",
        ),
        pytest.param(
            "Q: Who leads Larkspur?\n\nA: Odalys Merino. Q: Since when?\nA: Since 2021.",
            "",
            id="a-question-marker",
        ),
    ],
)
def test_a_bare_first_line_opening_with_a_name_and_a_colon_is_a_title(
    text: str, title: str
) -> None:
    # a name the text writes again is what the page is about, not a label ("Note:", "Q:")
    assert title_line(text) == title


def test_an_updates_roles_are_facts_of_the_name_its_title_gives(
    extractor: noema.SpacyExtractor,
) -> None:
    graph = _extract(
        extractor,
        "Larkspur: a new lead maintainer\n\nPosted on 3 September 2025 on the Larkspur blog."
        "\n\nRoles:\n\n- Keziah Bramwell: lead maintainer, 2025–present\n",
    )
    assert ("Keziah Bramwell", "lead_maintainer_of", "Larkspur", "2025/..") in _facts(graph)


def test_question_and_answer_markers_are_no_entities(extractor: noema.SpacyExtractor) -> None:
    graph = _extract(
        extractor,
        "# Tarrowby United — FAQ\n\n"
        "Q: Who owns the club?\n"
        "A: Marlin Holdings has owned Tarrowby United since 2019.\n\n"
        "Q: Where do they play?\n"
        "A: At Glenmoor Arena, since 2022.",
    )
    names = _names(graph)
    assert not names & {"Q", "A", "Q:", "A:"}
    assert ("Marlin Holdings", "own", "Tarrowby United") in {f[:3] for f in _facts(graph)}


def test_a_dateline_is_no_subject(extractor: noema.SpacyExtractor) -> None:
    graph = _extract(
        extractor,
        "Ravelle Institute names new director\n\n"
        "BRIMSWORTH, 9 September 2024 — The Ravelle Institute today named Yusuf Marchetti as "
        "its fourth director. He succeeds Anneliese Dorrow.",
    )
    names = _names(graph)
    assert "BRIMSWORTH" not in names
    assert "BRIMSWORTH" not in {n.upper() for n in _subjects(graph) if n.isupper()}
    assert "Ravelle Institute" in _subjects(graph)


def test_a_press_notes_today_is_its_datelines_day(extractor: noema.SpacyExtractor) -> None:
    graph = _extract(
        extractor,
        "Ravelle Institute names new director\n\n"
        "BRIMSWORTH, 9 September 2024 — The Ravelle Institute today named Yusuf Marchetti as "
        "its fourth director.",
    )
    assert ("Ravelle Institute", "name", "Yusuf Marchetti", "2024-09-09") in _facts(graph)


# (topic, line, the fact it states): a role's holder and the topic, or a fact of the topic
KEY_FACTS = {
    "name-colon-role-period": (
        "Corbel Foundation",
        "- Leontyne Farrish: chair, 2014–2021",
        ("Leontyne Farrish", "chair_of", "Corbel Foundation", "2014/2021"),
    ),
    "role-colon-name-open-period": (
        "Corbel Foundation",
        "- Chair: Beatrix Olenska (2021–)",
        ("Beatrix Olenska", "chair_of", "Corbel Foundation", "2021/.."),
    ),
    "previous-role": (
        "Corbel Foundation",
        "- Previous chair: Ada Quist (2009–2014)",
        ("Ada Quist", "chair_of", "Corbel Foundation", "2009/2014"),
    ),
    "two-word-role": (
        "Larkspur",
        "- Lead maintainer: Priya Raman (2025–present)",
        ("Priya Raman", "lead_maintainer_of", "Larkspur", "2025/.."),
    ),
    "role-colon-name-since": (
        "Larkspur",
        "- Lead maintainer: Keziah Bramwell (since 2025)",
        ("Keziah Bramwell", "lead_maintainer_of", "Larkspur", "2025/.."),
    ),
    "name-colon-role-since": (
        "Larkspur",
        "- Keziah Bramwell: lead maintainer, since 2025",
        ("Keziah Bramwell", "lead_maintainer_of", "Larkspur", "2025/.."),
    ),
    "born-place-year": (
        "Yusuf Marchetti",
        "- Born: Tallowmere, 1975",
        ("Yusuf Marchetti", "born_in", "Tallowmere", "1975"),
    ),
    "employer-period": (
        "Yusuf Marchetti",
        "- Employer: Nettlecombe Software (2017–2025)",
        ("Yusuf Marchetti", "work_for", "Nettlecombe Software", "2017/2025"),
    ),
    "made-by-year": (
        "Emberloom",
        "- Created by: Grete Solberg (2007)",
        ("Grete Solberg", "create", "Emberloom", "2007"),
    ),
    "based-in": (
        "Corbel Foundation",
        "- Based in: Brimsworth",
        ("Corbel Foundation", "base_in", "Brimsworth", None),
    ),
    # a label that is a verb says what the topic does, not a role someone holds in it
    "owns-period": (
        "Marlin Holdings",
        "- Owns: Eskridge Athletic (2017–)",
        ("Marlin Holdings", "own", "Eskridge Athletic", "2017/.."),
    ),
    "run-by": (
        "Mossgate Field Station",
        "- Run by: Hollinsworth Centre",
        ("Hollinsworth Centre", "run", "Mossgate Field Station", None),
    ),
    # on a person's page, a role "of" a place with a period is the person's
    "role-of-place-period": (
        "Rhiannon Pask",
        "- Head of the Quarrie Laboratory: 2024–present",
        ("Rhiannon Pask", "head_of", "Quarrie Laboratory", "2024/.."),
    ),
    "role-of-place-since": (
        "Yusuf Marchetti",
        "- Director of the Ravelle Institute: since 2024",
        ("Yusuf Marchetti", "director_of", "Ravelle Institute", "2024/.."),
    ),
}


@pytest.mark.parametrize(
    "line",
    ["- Chief of Staff: 2001–2002", "- Director of Research: 2010–", "- Head of Sales: 2019–"],
)
def test_an_offices_title_with_of_is_no_body(extractor: noema.SpacyExtractor, line: str) -> None:
    graph = _extract(
        extractor, f"# Ada Quist\n\nAda Quist is a chemist.\n\n## Key facts\n\n{line}\n"
    )
    assert not any(f[1] in ("chief_of", "director_of", "head_of") for f in _facts(graph))


@pytest.mark.parametrize(("topic", "line", "expected"), KEY_FACTS.values(), ids=KEY_FACTS.keys())
def test_key_facts_lines_are_facts_of_the_topic(
    extractor: noema.SpacyExtractor,
    topic: str,
    line: str,
    expected: tuple[str, str, str, str | None],
) -> None:
    graph = _extract(extractor, f"# {topic}\n\n{topic} is well known.\n\n## Key facts\n\n{line}\n")
    assert expected in _facts(graph)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        pytest.param(
            "- Owners: Marlin Holdings (2010–2016), Velmont Group (2016–)",
            {
                ("Marlin Holdings", "owner_of", "Tarrowby United", "2010/2016"),
                ("Velmont Group", "owner_of", "Tarrowby United", "2016/.."),
            },
            id="plural-label-two-periods",
        ),
        pytest.param(
            "- Managers: Gareth Pollard (2018–2019); Sunniva Holt (since 2020)",
            {
                ("Gareth Pollard", "manager_of", "Tarrowby United", "2018/2019"),
                ("Sunniva Holt", "manager_of", "Tarrowby United", "2020/.."),
            },
            id="semicolons-and-since",
        ),
        pytest.param(
            "- Founders: Lisa Marr, Owen Marr and Petra Quist",
            {
                ("Lisa Marr", "founder_of", "Tarrowby United", None),
                ("Owen Marr", "founder_of", "Tarrowby United", None),
                ("Petra Quist", "founder_of", "Tarrowby United", None),
            },
            id="names-without-periods",
        ),
        pytest.param("- Colours: red, black and white", set(), id="no-role"),
        pytest.param(
            "- Owners: Marlin Holdings, Inc. (2010–2016), Velmont Group (2016–)",
            {
                ("Marlin Holdings, Inc.", "owner_of", "Tarrowby United", "2010/2016"),
                ("Velmont Group", "owner_of", "Tarrowby United", "2016/.."),
            },
            id="a-comma-inside-a-name",
        ),
        pytest.param("- Chair: Beatrix Olenska, OBE", set(), id="one-holder-and-an-honour"),
    ],
)
def test_a_role_line_listing_several_holders_states_each_in_its_period(
    extractor: noema.SpacyExtractor, line: str, expected: set[tuple[str, str, str, str | None]]
) -> None:
    graph = _extract(
        extractor,
        f"# Tarrowby United\n\nTarrowby United is a football club.\n\n## Key facts\n\n{line}\n",
    )
    facts = _facts(graph)
    assert expected <= facts
    assert not [f for f in facts if f[0] in ("OBE", "Inc", "Inc.")]
    # no period is a name, and the club is the holder of nothing the line lists
    assert not [f for f in facts if (f[0] == "Tarrowby United" and f[1] != "is") or "–" in f[2]]


def test_a_career_line_on_a_persons_page_is_the_persons_role(
    extractor: noema.SpacyExtractor,
) -> None:
    graph = _extract(
        extractor,
        "# Ines Morland\n\nInes Morland is a football manager. She was born in Tarrowby.\n\n"
        "## Career\n\n- Harlow Vale: manager, 2022–present\n",
    )
    facts = _facts(graph)
    assert ("Ines Morland", "manager_of", "Harlow Vale", "2022/..") in facts
    assert not [f for f in facts if f[0] == "Harlow Vale"]


def test_initials_stand_for_the_name_given_with_them(extractor: noema.SpacyExtractor) -> None:
    graph = _extract(
        extractor,
        "# Castrelle Institute board — minutes, 3 May 2016\n\n"
        "Present: Helena Varga (HV, director), Rosalind Achterberg (RA).\n\n"
        "1. RA declared that she chairs the Sallow Foundation.\n"
        "2. HV reported that the institute opened a laboratory in Wexcombe.",
    )
    names = _names(graph)
    assert not names & {"RA", "HV"}
    facts = {f[:3] for f in _facts(graph)}
    assert ("Rosalind Achterberg", "chair", "Sallow Foundation") in facts


def test_a_code_block_is_not_read(extractor: noema.SpacyExtractor) -> None:
    text = (
        "# Larkspur\n\nLarkspur is a web framework maintained by Keziah Bramwell.\n\n"
        "```python\nfrom larkspur import Router\n"
        "Router(about='Odalys Merino founded Halvard Systems in Tamsford.')\n```\n"
    )
    graph = _extract(extractor, text)
    code = text.index("```")
    assert "Keziah Bramwell" in _names(graph)
    assert all(m.start < code for e in graph.entities.values() for m in e.mentions)


def test_roles_of_those_present_are_facts_of_the_body_of_the_minutes(
    extractor: noema.SpacyExtractor,
) -> None:
    graph = _extract(
        extractor,
        "Dunmarrow Rovers board — minutes, 17 July 2020\n\n"
        "Present: Philippa Rourke (PR, chair), Aldous Fenn (AF), Helen Sauvage (HS, club "
        "secretary).\n\n"
        "1. PR announced that she will step down at the end of the meeting.",
    )
    facts = _facts(graph)
    assert ("Philippa Rourke", "chair_of", "Dunmarrow Rovers", "2020-07-17") in facts
    assert ("Helen Sauvage", "club_secretary_of", "Dunmarrow Rovers", "2020-07-17") in facts
    assert not {f for f in facts if f[0] == "Aldous Fenn" and f[2] == "Dunmarrow Rovers"}


@pytest.mark.parametrize(
    ("title", "text"),
    [
        ("The Good, the Bad and the Ugly", "The Good is a film."),
        ("On the Sublime", "Sublime is a word."),
        ("3642", "It is a minor planet."),
    ],
    ids=["comma-then-a-name", "opening-preposition", "a-number"],
)
def test_a_data_sets_title_keeps_its_whole_name(title: str, text: str) -> None:
    assert title_name(title, text) == title
