"""People's names in one document: the surname alone, the title's shorter form of the name.

Wikipedia-style documents name a person three ways: by the title ("Mike Modano"), in full in the
first sentence ("Michael Thomas Modano Jr.") and by the surname after that ("Modano was drafted
..."). The small NER model often reads the lone surname as an organisation, so without these
rules one person is three nodes and the facts about them are spread over the three.
"""

from __future__ import annotations

import re
from typing import Any

from noema.ingest.entities import NameTable
from noema.ingest.evidence import form_type
from noema.ingest.kinds import KIND_TYPES, title_kind
from noema.model.names import name_suffix, strip_disambiguation, surname

__all__ = ["join_initials", "join_surname", "person_titled"]


def _suffixes_differ(a: str, b: str) -> bool:
    """Whether two names of one surname carry different generational suffixes ("Ken Griffey
    Sr." and "Ken Griffey Jr."); a name without one may be either."""
    one, other = name_suffix(a), name_suffix(b)
    return bool(one and other and one != other)


# First words of places named after people: "Camp Wilson", "Fort Worth", "Port Arthur".
_PLACE_FIRST_WORDS = frozenset(
    {"camp", "cape", "fort", "glen", "lake", "mount", "port", "point", "san", "santa"}
    | {"north", "south", "east", "west", "new", "upper", "lower", "old", "great", "greater"}
)


def person_titled(title: str, names: NameTable) -> str | None:
    """The one person of the document a title names by a shorter form of the name: the same
    surname and first initial ("Mike Modano" for "Michael Thomas Modano Jr."), else ``None``.
    Not for a title whose disambiguation says another kind of thing ("Ed Wood (film)" is about
    a film of the man's name; "Nathan Cohen (rower)" may be the rower)."""
    said = title_kind(title)
    if said is not None and KIND_TYPES.get(said) not in (None, "PERSON"):
        return None
    wanted = strip_disambiguation(title)
    words = wanted.split()
    if len(words) < 2 or not all(w[:1].isupper() for w in words):
        return None
    # "Lake Washington" is no surveyor Lloyd Washington, nor "Camp Wilson" Charles Wilson
    if form_type(wanted) not in (None, "PERSON") or words[0].lower() in _PLACE_FIRST_WORDS:
        return None
    found = [
        name
        for name in names.votes
        if " " in name
        and names.leading_type(name) == "PERSON"
        and surname(wanted)
        and surname(name) == surname(wanted)
        and name[0] == wanted[0]
        # "Pete Rose" in the document about Pete Rose Jr. is his father
        and name_suffix(wanted) in ("", name_suffix(name))
    ]
    return found[0] if len(found) == 1 else None


def join_surname(names: NameTable, person: str | None) -> None:
    """ "Brekke" in the document about Tom Brekke is Tom Brekke, whatever the tagger called it
    in passing (NER often reads a lone surname as an organisation), unless NER or the sentence
    called it a place or it stands where places stand ("moved to Marlow"): a person named
    Washington is never the city."""
    if person is None or names.leading_type(person) != "PERSON":
        return
    short = surname(person)
    votes = names.votes.get(short)
    if (
        not short
        or short == person
        or votes is None
        or votes.keys() & {"GPE", "LOC"}
        or short in names.placed
    ):
        return
    # "Griffey" in the document about Ken Griffey Jr., who names his father Ken Griffey Sr., is
    # either; "Rafael Suarez" in the document about Ray Suarez is he
    namesakes = [
        n
        for n in names.votes
        if n not in (person, short)
        and " " in n
        and surname(n) == short
        and (n[0] != person[0] or _suffixes_differ(n, person))
    ]
    if not namesakes:
        names.join(short, person)


_FULL_NAME = r"[A-Z][\w'\u2019-]+(?:[ \t]+[A-Z][\w'\u2019-]+)+"
# "Rosalind Achterberg (RA)", "Leontyne Farrish (LF, chair)"; "NA (Nkechi Arden)"
_INITIALS_AFTER = re.compile(
    rf"(?P<name>{_FULL_NAME})[ \t]*\([ \t]*(?P<initials>[A-Z]{{2,4}})\b[ \t]*[,;)]"
)
_INITIALS_BEFORE = re.compile(
    rf"\b(?P<initials>[A-Z]{{2,4}})[ \t]*\([ \t]*(?P<name>{_FULL_NAME})[ \t]*\)"
)


def join_initials(spacy_doc: Any, names: NameTable) -> None:
    """ "RA" in minutes that introduced "Rosalind Achterberg (RA)" is she, wherever it stands
    in the document (NER reads initials as an organisation, or not at all): every mention of
    the initials is filed under the full name, and the initials are no name of their own.
    Only initials that are the name's own (the first letters of its words) count."""
    text = spacy_doc.text
    given: dict[str, tuple[int, int]] = {}
    for form in (_INITIALS_AFTER, _INITIALS_BEFORE):
        for match in form.finditer(text):
            initials, name = match.group("initials"), match.group("name")
            if initials == "".join(word[0] for word in name.split()):
                given.setdefault(initials, match.span("name"))
    for initials, (start, end) in given.items():
        full = spacy_doc.char_span(start, end, alignment_mode="expand")
        if full is None:
            continue
        name = " ".join(spacy_doc.text[start:end].split())
        if name not in names.votes:
            names.take_over(full, name, None)
        for token in spacy_doc:
            if token.text == initials:
                names.take_over(spacy_doc[token.i : token.i + 1], name, None)
