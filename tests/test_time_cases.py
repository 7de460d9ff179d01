"""Facts in time, end to end: questions about who held what when, over a small corpus of our own.

``tests/data/time_cases/`` holds short invented documents without titles (``*.txt``, ``*.md``)
where a fact changes in time: a company's chief executive replaced, a house and a hockey team sold
in turn, a player's clubs, a province's capital moved, an employer changed, a chairman succeeded,
a mayor, a coach and an editor replaced; a few documents about the same names say nothing about
time, so retrieval has to choose. ``questions.json`` lists the questions, each with

- ``answer``: the name the context must hold;
- ``kind``: the time the question asks about (``current``, ``former``, ``in YEAR``,
  ``before YEAR``, ``after YEAR``, ``from YEAR to YEAR``);
- ``wrong``: the names that answer it for another period (the former CEO for a ``current``
  question);
- ``subject``: the name the question asks about (the company, the house, the player);
- ``as_of`` (some questions): asked with ``retrieve(question, as_of=...)`` instead of the
  default call.

One knowledge base is built from the corpus with the real models, and every question is asked in
every format at the default call. What is checked:

1. **The answer is in the context** (``noema.evaluate.answer_in_context``), in every format.
2. **A wrong-period answer is never stated without its time**, in the formats that state facts
   (notation, natural_language). The claim that would be false without its time is the one tying
   the wrong-period name to the question's subject ("Mara Voss is the ceo of Veltrix Robotics");
   other facts about the same person (where she sits on a board now) are not about the period
   and may stand as they are. So:

   - *notation*: the context is parsed with ``noema.parse_notation``; an entity "is" a name when
     either name holds the other as whole words (the entity "Voss" is "Mara Voss"). No relation
     line may join a wrong-period entity and a subject entity (a relation line has no time), and
     every event line joining them must carry ``@`` a time. Entity lines claim nothing and may
     name anyone.
   - *natural_language*: every sentence that names both a wrong-period name and the subject must
     hold a year (the decoder says an event's time as "from 2010 to 2019", "since 2019", "until
     2019", "in 2019"; every time in this corpus has a year). The "Also named: ..." line claims
     nothing and is skipped.
   - In both, a fact that says its period has ended in its own words is stated with its time:
     a predicate such as ``former_mayor_of``, a sentence saying "former" or "formerly" ("Ruth
     Okafor is the former mayor of Tessaly" is true as it stands).

   The ``sentences`` format gives the source sentences themselves, which say their own times,
   and is not checked for this.
3. **``as_of`` keeps what was valid then**: the answer is in the context in every format, and in
   notation and natural_language no fact joins an excluded name and the subject, with or without
   a time (it was not valid at that date). In ``sentences`` only the answer is checked: one source
   sentence can hold both periods ("from 2010 until 2019, when Dario Fenn took over").

Cases that fail on today's code are marked ``xfail(strict=True)`` one by one, with the part of
facts in time they wait for; when that part lands they pass, strict xfail turns them red, and the
marker is removed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

import noema
from noema.evaluate import answer_in_context

CASES_DIR = Path(__file__).parent / "data" / "time_cases"
CASES: list[dict[str, Any]] = json.loads((CASES_DIR / "questions.json").read_text())
STATING = ("notation", "natural_language")
FORMATS = (*STATING, "sentences")
_YEAR = re.compile(r"\b\d{4}\b")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_ENDED = re.compile(r"\bformer(ly)?\b", re.IGNORECASE)

# "<case id>-<format>" -> what it waits for. Before facts in time every answer was in the
# context and many of these stated a wrong-period answer as a plain relation; the extractor and
# as_of now handle them all. A case that fails on a future extractor is marked here, with why.
ANSWER_XFAIL: Mapping[str, str] = {}
WRONG_XFAIL: Mapping[str, str] = {}
AS_OF_XFAIL: Mapping[str, str] = {}


def cases(formats: tuple[str, ...], xfail: Mapping[str, str], *, as_of: bool) -> Iterator[Any]:
    """One pytest param per question and format, marked where ``xfail`` names its id."""
    for case in CASES:
        if ("as_of" in case) != as_of:
            continue
        for format in formats:
            id_ = f"{case['id']}-{format}"
            marks = [pytest.mark.xfail(strict=True, reason=xfail[id_])] if id_ in xfail else []
            yield pytest.param(case, format, id=id_, marks=marks)


@pytest.fixture(scope="module")
def kb(ingested: Callable[..., noema.KnowledgeBase]) -> noema.KnowledgeBase:
    return ingested(
        [
            noema.Document(path.read_text(), id=path.stem)
            for path in sorted(CASES_DIR.iterdir())
            if path.suffix in (".txt", ".md")
        ]
    )


def is_named(name: str, names: list[str]) -> bool:
    """Whether ``name`` is one of ``names``: either holds the other as whole words."""
    return any(answer_in_context([n], name) or answer_in_context([name], n) for n in names)


def notation_claims(text: str, wrong: list[str], subject: str) -> list[tuple[str, str | None]]:
    """The facts in ``text`` (notation) that join a wrong-period entity and the subject: each
    as its predicate or event label, and its time (``None`` for a relation line, which has
    none, and for an event line without ``@``)."""
    parsed = noema.parse_notation(text)
    wrong_ids = {i for i, e in parsed.entities.items() if is_named(e.name, wrong)}
    subject_ids = {i for i, e in parsed.entities.items() if is_named(e.name, [subject])}

    def joins(ids: set[int]) -> bool:
        return bool(ids & wrong_ids) and bool(ids & subject_ids)

    claims: list[tuple[str, str | None]] = [
        (r.predicate, None) for r in parsed.relations if joins({r.subject_id, r.object_id})
    ]
    claims += [(e.label, e.time) for e in parsed.events if joins(set(e.participant_ids))]
    return claims


def sentences_naming(text: str, wrong: list[str], subject: str) -> list[str]:
    """The sentences of ``text`` (decoded facts) that name a wrong-period name and the subject,
    leaving out the "Also named" line, which claims nothing."""
    found = []
    for line in text.splitlines():
        for sentence in _SENTENCE_END.split(line):
            if sentence.startswith("Also named"):
                continue
            if answer_in_context(wrong, sentence) and answer_in_context([subject], sentence):
                found.append(sentence)
    return found


@pytest.mark.parametrize(("case", "format"), cases(FORMATS, ANSWER_XFAIL, as_of=False))
def test_the_answer_is_in_the_context(
    kb: noema.KnowledgeBase, case: dict[str, Any], format: str
) -> None:
    text = kb.retrieve(case["question"], format=format).text  # type: ignore[arg-type]
    assert answer_in_context([case["answer"]], text), text


@pytest.mark.parametrize(("case", "format"), cases(STATING, WRONG_XFAIL, as_of=False))
def test_a_wrong_period_answer_is_stated_with_its_time(
    kb: noema.KnowledgeBase, case: dict[str, Any], format: str
) -> None:
    text = kb.retrieve(case["question"], format=format).text  # type: ignore[arg-type]
    if format == "notation":
        timeless = [
            (predicate, time)
            for predicate, time in notation_claims(text, case["wrong"], case["subject"])
            if not time and not _ENDED.search(predicate.replace("_", " "))
        ]
    else:
        timeless = [
            s
            for s in sentences_naming(text, case["wrong"], case["subject"])
            if not _YEAR.search(s) and not _ENDED.search(s)
        ]
    assert not timeless, text


@pytest.mark.parametrize(("case", "format"), cases(FORMATS, AS_OF_XFAIL, as_of=True))
def test_as_of_keeps_what_was_valid_then(
    kb: noema.KnowledgeBase, case: dict[str, Any], format: str
) -> None:
    text = kb.retrieve(case["question"], format=format, as_of=case["as_of"]).text  # type: ignore[arg-type]
    assert answer_in_context([case["answer"]], text), text
    if format == "notation":
        assert not notation_claims(text, case["wrong"], case["subject"]), text
    elif format == "natural_language":
        assert not sentences_naming(text, case["wrong"], case["subject"]), text
