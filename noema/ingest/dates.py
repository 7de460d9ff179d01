"""Dates a document writes relative to the one before them: "the following year", "two years
later", "that same year", "after two seasons", "ever since", "since then".

Read alone such a date names no time, and as a name it is the same words in every document, so
one node "following year" would join unrelated facts. Read in order through the document it is a
year: the last year written before it, moved by what it says ("from 2006 to 2014. The following
year he became ..." is 2015). One with no year before it in its piece names nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "RELATIVE_KEY",
    "is_length",
    "names_no_time",
    "relative_year",
    "relative_years",
    "since_then",
]

# where a parsed piece keeps its reading, so every reader of the piece shares one pass
RELATIVE_KEY = "noema.relative_years"

_COUNTS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_NEIGHBOURS = {"following": 1, "next": 1, "same": 0, "previous": -1, "preceding": -1, "prior": -1}
_NEIGHBOUR = re.compile(
    r"^(?:the|that|this)?\s*(?:very\s+)?(following|next|same|previous|preceding|prior)\s+year$"
)
_THAT_YEAR = re.compile(r"^that\s+year$")
_APART = re.compile(
    r"^(a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d{1,2})\s+years?\s+"
    r"(later|afterwards|after|earlier|before)$"
)
_YEAR = re.compile(r"^(1[0-9]{3}|20[0-9]{2})$")
# a counted length of years: "after two seasons" is two years on from the year written before
_SPAN = re.compile(
    r"^(a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d{1,2})\s+(years?|seasons?)$"
)
# a length of time of any unit, counted or not: "six seasons", "many years", "a week"
_LENGTH = re.compile(
    r"^(?:years|months|weeks|decades|centuries"  # "worked there for years"
    r"|(?:over\s+|about\s+|nearly\s+|almost\s+|some\s+|the\s+)?"
    r"(?:a\s+few|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen"
    r"|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|\d{1,3}|several|many|few|some"
    r"|\w+-\w+)\s+"
    r"(?:more\s+|full\s+|long\s+)?"
    r"(?:years?|seasons?|months?|weeks?|days?|decades?|hours?|minutes?))$"
)


def since_then(token: Any) -> bool:
    """Whether ``token`` is the word of "since then" or "ever since" that stands for a year: the
    "then", or a "since" with no object after its verb ("has been the capital ever since",
    "has recorded six albums since"). Not "has since been superseded", which says only that it
    happened at some time after."""
    if token.lower_ == "then":
        return bool(token.i > 0 and token.nbor(-1).lower_ == "since")
    if token.lower_ != "since" or token.dep_ != "advmod":
        return False
    if any(child.lower_ != "ever" for child in token.children):
        return False
    return bool((token.i > 0 and token.nbor(-1).lower_ == "ever") or token.i > token.head.i)


def is_length(text: str) -> bool:
    """Whether ``text`` is a length of time, which says how long and names no time or thing.

    Example:
        >>> is_length("six seasons"), is_length("many years"), is_length("fifteen years")
        (True, True, True)
        >>> is_length("2015"), is_length("the following year"), is_length("Four Seasons")
        (False, False, False)
        >>> is_length("years"), is_length("Years")
        (True, False)
    """
    return bool(_LENGTH.match(" ".join(text.split())))


# The words of a date that names no time: "today", "that season", "annually", "the evening",
# "later that year" (a relative year no written year came before). A date with any other word
# names one ("the eleventh century", "the nineties", "Ramadan", "a decade", "August"), and so
# does a season, an answer to "when" ("the middle of the summer").
_NO_TIME_WORDS = frozenset(
    {"today", "tonight", "yesterday", "tomorrow", "now", "currently", "recently", "lately"}
    | {"annual", "annually", "daily", "weekly", "monthly", "yearly", "nightly"}
    | {"day", "days", "week", "weeks", "month", "months", "year", "years", "season", "seasons"}
    | {"morning", "afternoon", "evening", "night", "time", "times", "a", "an", "the", "this"}
    | {"that", "these", "those", "same", "each", "every"}
    | {"last", "next", "previous", "following", "later", "earlier", "recent", "current", "its"}
    | {"his", "her", "their", "our", "of"}
)


def names_no_time(text: str) -> bool:
    """Whether a DATE ``text`` names no time: made only of words such as "today", "that",
    "season", "annually" (:data:`_NO_TIME_WORDS`), with no digit. As a fact's end it is the same
    words in every document, one node joining unrelated facts, and it answers no "when".

    Example:
        >>> names_no_time("today"), names_no_time("that season"), names_no_time("annually")
        (True, True, True)
        >>> names_no_time("August"), names_no_time("the eleventh century"), names_no_time("a decade")
        (False, False, False)
    """
    words = text.lower().replace("-", " ").split()
    return bool(words) and all(word.strip(".,") in _NO_TIME_WORDS for word in words)


def _span_after(ent: Any) -> int | None:
    """How many years "after two seasons" moves on from the year written before it (the span
    an entity ``ent`` right after "after" counts), else ``None``."""
    if ent.start == 0 or ent.doc[ent.start - 1].lower_ != "after":
        return None
    span = _SPAN.match(" ".join(ent.text.lower().split()))
    if span is None:
        return None
    return int(span.group(1)) if span.group(1).isdigit() else _COUNTS[span.group(1)]


def relative_year(text: str) -> int | None:
    """How many years after the last written year ``text`` says (negative: before), or
    ``None`` when it is not a relative year.

    Example:
        >>> relative_year("The following year"), relative_year("two years later")
        (1, 2)
        >>> relative_year("that same year"), relative_year("2014"), relative_year("last year")
        (0, None, None)
    """
    words = " ".join(text.lower().replace("that same", "the same").split()).strip(" ,.")
    if _THAT_YEAR.match(words):
        return 0
    near = _NEIGHBOUR.match(words)
    if near is not None:
        return _NEIGHBOURS[near.group(1)]
    apart = _APART.match(words)
    if apart is None:
        return None
    count = int(apart.group(1)) if apart.group(1).isdigit() else _COUNTS[apart.group(1)]
    return count if apart.group(2) in ("later", "afterwards", "after") else -count


def relative_years(doc: Any) -> Mapping[int, str]:
    """The year each token of a relative DATE entity of parsed piece ``doc`` stands for, read
    once per piece (kept in ``doc.user_data``)."""
    cached: Mapping[int, str] | None = doc.user_data.get(RELATIVE_KEY)
    if cached is not None:
        return cached
    years: dict[int, str] = {}
    last: int | None = None
    dates = {ent.start: ent for ent in doc.ents if ent.label_ == "DATE"}
    skip = -1  # the end of the relative date just read
    for token in doc:
        if token.i < skip:
            continue
        ent = dates.get(token.i)
        moved = relative_year(ent.text) if ent is not None else None
        if ent is not None and moved is None:
            moved = _span_after(ent)
        if ent is not None and moved is not None:
            skip = ent.end
            if last is not None:
                last += moved
                years.update((t.i, f"{last:04d}") for t in ent)
        elif _YEAR.match(token.text) and token.ent_type_ in ("", "DATE"):
            # a year NER left untagged counts too ("from 2006 to 2014": "2014" often is)
            last = int(token.text)
        elif last is not None and since_then(token):
            # "ever since", "since then": since the year written last
            years[token.i] = f"{last:04d}"
    doc.user_data[RELATIVE_KEY] = years
    return years
