"""Minutes: the roles their list of those present gives.

Minutes open with who was there, each with initials and often a role::

    Dunmarrow Rovers board — minutes, 17 July 2020

    Present: Philippa Rourke (PR, chair), Helen Sauvage (HS, club secretary), Aldous Fenn (AF).

Such a line has no verb, so the sentence rules read nothing from it, and the role is told
nowhere else: "PR announced that she will step down as chair" does not say of what. A role
given there is the person's in the body the title names (the board's club, the committee's
foundation) on the meeting's date: ``*chair_of (#Philippa Rourke,#Dunmarrow Rovers)
@2020-07-17``.
"""

from __future__ import annotations

import re
from typing import Any

from noema.ingest.confidence import CONFIDENCE
from noema.ingest.entities import ExtractedFact, NameTable
from noema.ingest.layout import title_date, title_subject
from noema.ingest.listings import role_predicates
from noema.model.names import clean_name

__all__ = ["attendee_facts"]

_PRESENT = re.compile(
    r"^[ \t]*(?:Present|Attendees|Attending|In attendance)[ \t]*:[ \t]*(?P<people>[^\n]+)$",
    re.M | re.I,
)
# "Philippa Rourke (PR, chair)", "Ilse Marquardt (IM, manager, items 3 and 4)"
_ATTENDEE = re.compile(
    r"(?P<name>[A-Z][\w'\u2019-]+(?:[ \t]+[A-Z][\w'\u2019-]+)+)[ \t]*\([ \t]*"
    r"(?:[A-Z]{2,4}[ \t]*,[ \t]*)?(?P<role>[a-z][^,()]*)"
)


def attendee_facts(spacy_doc: Any, names: NameTable, title: str | None) -> list[ExtractedFact]:
    """The roles the "Present:" lines of minutes titled ``title`` give their people, as facts
    of the body the title names, at the date it gives (see the module's docstring)."""
    body = title_subject(title) if title else None
    if not title or body is None:
        return []
    when = title_date(title)
    facts = []
    for line in _PRESENT.finditer(spacy_doc.text):
        span = spacy_doc.char_span(*line.span("people"), alignment_mode="expand")
        if span is None:
            continue
        mention = names.sentence(span)
        for match in _ATTENDEE.finditer(line.group("people")):
            predicates = role_predicates(match.group("role"))
            start = line.start("people") + match.start("name")
            person = _person(spacy_doc, names, start, start + len(match.group("name")))
            if not predicates or person is None:
                continue
            organisation = _organisation(names, body)
            facts += [
                ExtractedFact(person, predicate, organisation, mention, CONFIDENCE["list"], when)
                for predicate in predicates
            ]
    return facts


def _person(spacy_doc: Any, names: NameTable, start: int, end: int) -> str | None:
    """The name written at ``[start, end)``, filed over what NER found inside it."""
    span = spacy_doc.char_span(start, end, alignment_mode="expand")
    name = clean_name(spacy_doc.text[start:end])
    if span is None or not name:
        return None
    if names.by_token.get(span[0].i) != name:
        names.take_over(span, name, None)
    return name


def _organisation(names: NameTable, body: str) -> str:
    """The body's name as the document files it, else filed as a name the text never writes."""
    for name in names.votes:
        if name.lower() == body.lower():
            return name
    names.add_topic(body, "ORG")
    return body
