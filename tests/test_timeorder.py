"""A question's time orders the facts whose source sentence writes it, with the real models.

The documents are short invented articles, a few paragraphs each, written the way Wikipedia
writes periods the built-in extractor does not tie to a fact: a list with a period after each
name ("taught at Lisle Seminary (1985-1990), Halden College (1990-1995) ..."), a period in a
relative clause ("played at Old Marsh Stadium, which was its home ground from 1953 to 1978").
Such a fact stays a relation without a time, so only its sentence says when it held; the other
names of the same list or article held it in another period. Each question asks for one
period, at the default call, in every format:

- the answer is in the context;
- no fact joining the subject and a name of another period comes before the first fact joining
  the subject and the answer (in notation and natural_language: stated; in sentences: the fact
  that chose a sentence), and where no fact of the answer is stated (a fact under the confidence
  floor shows only its names) none of the other periods is either; in sentences, no sentence
  before the answer's names another period's answer;
- the fact is still stated without a time: the sentence's time orders it and is never written
  as its time (notation states times only from extraction).

Rivals, brought forward latest first, are facts of a role one holder has at a time: a company's
twelve acquisitions and a founder's eight companies are none, and each question about one of
them gets that one stated.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

import noema
from noema.evaluate import answer_in_context
from noema.retrieval.timeorder import rivals

ARTICLES = {
    "Kestrel Rovers": [
        "Kestrel Rovers is a football club based in Lunden. The club was founded in 1931 by dock "
        "workers, and its colours are red and black.",
        "Kestrel Rovers played at the Lunden Arena, which was its home ground from 1978 to 1999.",
        "Before that, Kestrel Rovers played at Old Marsh Stadium, which was its home ground from "
        "1953 to 1978.",
        "The club won the national cup in 1985 and reached the final again in 2003 under coach "
        "Ivo Brandt.",
    ],
    "Marta Keel": [
        "Marta Keel is an American historian of religion. She holds the Lindqvist Chair at "
        "Ostrow University.",
        "Before accepting the Lindqvist Chair, she taught at Lisle Seminary (1985-1990), Halden "
        "College (1990-1995) and Borrow University (1995-1997).",
        "She earned her doctorate at the University of Tessin in 1984 and has written four books "
        "on childhood in Christian thought.",
    ],
    "Brisk Comics": [
        "Brisk Comics is an American anthology comic book series started in 1940.",
        "The title has been published by Gold Quay Comics (1962–1984), Gladwin Publishing "
        "(1986–1990) and Harrow Comics (1990–1993).",
    ],
}

# question, subject, answer, the names that answer it for other periods
CASES = [
    pytest.param(
        "What stadium was Kestrel Rovers' home ground from 1953 to 1978?",
        "Kestrel Rovers",
        "Old Marsh Stadium",
        ["Lunden Arena"],
        id="stadium-relative-clause",
    ),
    pytest.param(
        "Which stadium did Kestrel Rovers play in in 1960?",
        "Kestrel Rovers",
        "Old Marsh Stadium",
        ["Lunden Arena"],
        id="stadium-in-year",
    ),
    pytest.param(
        "Which college did Marta Keel teach at from 1995 to 1997?",
        "Marta Keel",
        "Borrow University",
        ["Halden College", "Lisle Seminary"],
        id="college-list",
    ),
    pytest.param(
        "Who published Brisk Comics from 1986 to 1990?",
        "Brisk Comics",
        "Gladwin Publishing",
        ["Gold Quay Comics", "Harrow Comics"],
        id="publisher-list-under-floor",
    ),
]
FORMATS = ("notation", "natural_language", "sentences")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@pytest.fixture(scope="module")
def kb(ingested: Callable[..., noema.KnowledgeBase]) -> noema.KnowledgeBase:
    return ingested(
        [
            noema.Document(text, id=f"{title} [{n}]", metadata={"title": title})
            for title, paragraphs in ARTICLES.items()
            for n, text in enumerate(paragraphs, start=1)
        ]
    )


def is_named(name: str, names: list[str]) -> bool:
    """Whether ``name`` is one of ``names``: either holds the other as whole words."""
    return any(answer_in_context([n], name) or answer_in_context([name], n) for n in names)


def joining(
    graph: noema.SemanticGraph, fact_ids: tuple[str, ...], subject: str, names: list[str]
) -> list[int]:
    """The positions in ``fact_ids`` of the facts that join the subject and one of ``names``."""
    found = []
    for at, fact_id in enumerate(fact_ids):
        ends = [graph.entities[e].name for e in graph.fact(fact_id).entity_ids]
        if any(is_named(e, [subject]) for e in ends) and any(is_named(e, names) for e in ends):
            found.append(at)
    return found


@pytest.mark.parametrize(("question", "subject", "answer", "wrong"), CASES)
@pytest.mark.parametrize("format", FORMATS)
def test_the_period_asked_comes_before_the_others(
    kb: noema.KnowledgeBase, format: str, question: str, subject: str, answer: str, wrong: list[str]
) -> None:
    result = kb.retrieve(question, format=format)  # type: ignore[arg-type]
    assert answer_in_context([answer], result.text), result.text
    answered = joining(kb.graph, result.fact_ids, subject, [answer])
    others = joining(kb.graph, result.fact_ids, subject, wrong)
    if answered:
        assert not others or answered[0] < others[0], result.text
    else:
        assert not others, result.text
    if format == "sentences":  # and the text shows the answer's sentence first
        shown = _SENTENCE_END.split(result.text)
        first = min(n for n, s in enumerate(shown) if answer_in_context([answer], s))
        assert all(not answer_in_context(wrong, s) for s in shown[:first]), result.text


def test_the_sentence_time_orders_the_fact_and_is_not_stated(kb: noema.KnowledgeBase) -> None:
    question = "Which college did Marta Keel teach at from 1995 to 1997?"
    result = kb.retrieve(question, explain=True)
    taught = joining(kb.graph, result.fact_ids, "Marta Keel", ["Borrow University"])
    fact_id = result.fact_ids[taught[0]]
    assert fact_id in kb.graph.relations  # stated as a relation: no time of its own
    assert "*teach_at" not in result.notation and "@1995" not in result.notation
    why = next(e for e in result.explanation or () if e.fact_id == fact_id)
    assert why.time == "its sentence's '1995-1997' matches 'from 1995 to 1997' of the question"


# -- rivals: only roles one holder has at a time ------------------------------------------------
# One company's acquisitions and one person's foundings are all true at once: none is a rival of
# another, so the one asked about is stated whatever the others' years.
ACQUISITIONS = {
    "Skype": 2011,
    "Yammer": 2012,
    "Nokia": 2014,
    "Mojang": 2015,
    "LinkedIn": 2016,
    "GitHub": 2018,
    "Nuance": 2021,
    "Activision Blizzard": 2023,
    "Visio": 2000,
    "Hotmail": 1997,
    "Navision": 2002,
    "Fast Search": 2008,
}
FOUNDINGS = {
    "Birchline Software": 1998,
    "Corvane Robotics": 2001,
    "Dellwick Foods": 2004,
    "Evenmark Media": 2007,
    "Fallon Ridge Energy": 2010,
    "Greyhollow Games": 2013,
    "Harrowgate Bank": 2016,
    "Islay Biotech": 2019,
}


@pytest.fixture(scope="module")
def acts_kb(ingested: Callable[..., noema.KnowledgeBase]) -> noema.KnowledgeBase:
    return ingested(
        [
            *(
                noema.Document(f"Microsoft acquired {name} in {year}.", id=f"acquired {name}")
                for name, year in ACQUISITIONS.items()
            ),
            *(
                noema.Document(f"Ines Kovar founded {name} in {year}.", id=f"founded {name}")
                for name, year in FOUNDINGS.items()
            ),
        ]
    )


def unstated(
    kb: noema.KnowledgeBase, question: str, holder: str, names: list[str], **options: object
) -> list[str]:
    """The names of ``names`` whose question (``question`` with the name) gets a text stating
    no fact that joins exactly ``holder`` and the name."""
    graph = kb.graph
    missed = []
    for name in names:
        result = kb.retrieve(question.format(name), **options)  # type: ignore[arg-type]
        ends = [{graph.entities[e].name for e in graph.fact(f).entity_ids} for f in result.fact_ids]
        if {holder, name} not in ends:
            missed.append(name)
    return missed


@pytest.mark.parametrize("format", ["notation", "natural_language"])
def test_of_many_acquisitions_the_one_asked_is_stated(
    acts_kb: noema.KnowledgeBase, format: str
) -> None:
    assert not unstated(acts_kb, "Who acquired {}?", "Microsoft", [*ACQUISITIONS], format=format)


@pytest.mark.parametrize("format", ["notation", "natural_language"])
def test_of_a_serial_founders_companies_the_one_asked_is_stated(
    acts_kb: noema.KnowledgeBase, format: str
) -> None:
    # the eight foundings fit the default budget all together: at half of it, the one asked
    # must still come first
    assert not unstated(
        acts_kb, "Who founded {}?", "Ines Kovar", [*FOUNDINGS], max_tokens=100, format=format
    )


def test_acquisitions_and_foundings_have_no_rivals(acts_kb: noema.KnowledgeBase) -> None:
    graph = acts_kb.graph
    assert graph.events and all(not rivals(graph, e) for e in graph.events)
