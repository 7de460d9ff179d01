"""The time a question asks about, and the ``as_of`` option read as a day.

A question names a time in one of two ways. A *period* is written out: "in 2005", "from 2004 to
2005", "between 2004 and 2005", "before 1999", "after 2010", "since 2015", "until 2019" (a year,
a month and year, or a full date, as :func:`noema.model.times.iso_date` reads them). A *relative*
time is a word that picks among the periods of rival facts: "current", "now", "still" (the fact
still valid, or the one valid latest), "former", "previous" (a fact that has ended), "first",
"earliest", "last", "latest", "most recent" (the earliest or latest to begin among the facts of
one predicate and end; not in a question that compares two things, "X or Y").
:func:`read_question_time` finds the first written period, else the first such word; a question
with neither reads as ``None`` and its retrieval is what it was before facts had times.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Literal

from noema.errors import OptionError, quote_value
from noema.model.times import Period, iso_date, read_period

__all__ = [
    "QuestionTime",
    "TimeKind",
    "as_of_period",
    "read_question_time",
    "when_clause",
    "written_periods",
]

TimeKind = Literal["period", "current", "former", "first", "last"]

_MONTH_NAMES = [m for m in (*calendar.month_name, *calendar.month_abbr) if m]
_MONTH = "|".join(sorted({m.lower() for m in _MONTH_NAMES} | {"sept"}, key=len, reverse=True))
# a date as a question writes it: "2005", "March 2005", "19 March 2005", "March 19, 2005"
_DATE = (
    rf"(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?)?(?:(?:{_MONTH})\.?\s+)?"
    rf"(?:\d{{1,2}}(?:st|nd|rd|th)?,?\s+)?(?:1[0-9]{{3}}|20[0-9]{{2}})\b"
)
# written periods, in the order they are tried: a range before its single-date parts
_RANGES = (
    re.compile(rf"\bfrom\s+(?P<a>{_DATE})\s+(?:to|until|till|through)\s+(?P<b>{_DATE})", re.I),
    re.compile(rf"\bbetween\s+(?P<a>{_DATE})\s+and\s+(?P<b>{_DATE})", re.I),
)
_SINGLE = re.compile(
    rf"\b(?P<how>in|during|on|as of|at|before|prior to|after|since|from|until|till|up to|by)"
    rf"\s+(?:the\s+year\s+)?(?P<a>{_DATE})",
    re.I,
)
# a period a sentence writes without a preposition: "(1995-1997)", "September 2005 – March 2006"
_BARE_RANGE = re.compile(
    rf"(?P<a>{_DATE})\s*(?:[\u2013\u2014-]|\s(?:to|until|till|through)\s)\s*(?P<b>{_DATE})", re.I
)
_BARE_DATE = re.compile(rf"(?P<a>{_DATE})", re.I)
_WORDS: tuple[tuple[TimeKind, re.Pattern[str]], ...] = (
    ("current", re.compile(r"\b(current|currently|now|today|present|still)\b", re.I)),
    ("former", re.compile(r"\b(former|formerly|previous|previously)\b", re.I)),
    ("first", re.compile(r"\b(first|earliest)\b", re.I)),
    ("last", re.compile(r"\b(last|latest|most recent)\b", re.I)),
)


# a question that names two things to compare: "X or Y"
_COMPARING = re.compile(r"\bor\b", re.I)


@dataclass(frozen=True)
class QuestionTime:
    """The time a question asks about.

    Attributes:
        kind: ``"period"`` for a written period, else the relative word's kind.
        phrase: the question's own words for it ("in 2005", "current"), as explanations quote.
        period: the days a written period covers (an open end for "before", "since"...);
            ``None`` for a relative time.
    """

    kind: TimeKind
    phrase: str
    period: Period | None = None


def _day_bounds(text: str) -> Period | None:
    """The days of one date as a question writes it."""
    iso = iso_date(text)
    return read_period(iso) if iso is not None else None


def read_question_time(question: str) -> QuestionTime | None:
    """The written period or relative time word of ``question``, or ``None``.

    Example:
        >>> read_question_time("Which team did Ada Ring play for from 2004 to 2005?").period
        Period(start=datetime.date(2004, 1, 1), end=datetime.date(2005, 12, 31))
        >>> read_question_time("Who owned the house before 1811?").period.end
        datetime.date(1810, 12, 31)
        >>> read_question_time("Who is the current CEO of Veltrix?").kind
        'current'
        >>> read_question_time("Who founded Google?") is None
        True
        >>> read_question_time("Who was born first, Ada Ring or Bo Lind?") is None
        True
    """
    for pattern in _RANGES:
        match = pattern.search(question)
        if match is None:
            continue
        first, last = _day_bounds(match.group("a")), _day_bounds(match.group("b"))
        if first is not None and last is not None and first.start <= last.end:  # type: ignore[operator]
            return QuestionTime("period", match.group(0), Period(first.start, last.end))
    for match in _SINGLE.finditer(question):
        period = _single(match.group("how").lower(), match.group("a"))
        if period is not None:
            return QuestionTime("period", match.group(0), period)
    for kind, pattern in _WORDS:
        word = pattern.search(question)
        if word is None or (kind in ("first", "last") and _COMPARING.search(question)):
            # "Which was established first, UNSW or Purbanchal University?" compares two named
            # things; the earliest of one thing's rival periods is not what it asks
            continue
        return QuestionTime(kind, word.group(0))
    return None


# "Who ran Lindqvist Marine when it acquired Gannet Sonar?": a clause naming an event, not a
# question opening with "When"
_WHEN = re.compile(r"\S\s+when\s+(?P<clause>[^?.,;]+)", re.I)


def when_clause(question: str) -> str | None:
    """The clause a question's inner "when" opens, which dates what is asked by an event
    instead of a written time; ``None`` without one.

    Example:
        >>> when_clause("Who ran Lindqvist Marine when it acquired Gannet Sonar?")
        'it acquired Gannet Sonar'
        >>> when_clause("When did Lindqvist Marine acquire Gannet Sonar?") is None
        True
    """
    match = _WHEN.search(question)
    return match.group("clause").strip() if match else None


@lru_cache(maxsize=4096)  # the sentence of every untimed fact of the window, often the same one
def written_periods(text: str) -> tuple[tuple[int, int, Period], ...]:
    """Every period ``text`` writes, read as a question's is, with where it stands in ``text``
    (start and end offsets): a written range, a date with its preposition, a range or a date
    standing alone ("Halden College (1990-1995)"). Where two readings overlap, the one that
    starts first and then the longer is kept ("from 1953 to 1978", not "1953").

    Example:
        >>> [(a, b, p.start.year, p.end.year) for a, b, p in written_periods(
        ...     "She taught at Lisle (1985-1990) and in Halden from 1990 to 1995.")]
        [(21, 30, 1985, 1990), (46, 63, 1990, 1995)]
        >>> written_periods("It ran until 2019.")[0][2].end
        datetime.date(2019, 12, 31)
    """
    found: list[tuple[int, int, Period]] = []
    for pattern in (*_RANGES, _BARE_RANGE, _SINGLE, _BARE_DATE):
        for match in pattern.finditer(text):
            if pattern is _SINGLE:
                period = _single(match.group("how").lower(), match.group("a"))
            elif pattern is _BARE_DATE:
                period = _day_bounds(match.group("a"))
            else:
                period = _range(match.group("a"), match.group("b"))
            if period is not None:
                found.append((match.start(), match.end(), period))
    kept: list[tuple[int, int, Period]] = []
    for start, end, period in sorted(found, key=lambda f: (f[0], -f[1])):
        if not kept or start >= kept[-1][1]:
            kept.append((start, end, period))
    return tuple(kept)


def _range(first_text: str, last_text: str) -> Period | None:
    """The days from the first date to the last, or ``None`` when it ends before it starts."""
    first, last = _day_bounds(first_text), _day_bounds(last_text)
    if first is None or last is None or first.start is None or last.end is None:
        return None
    return Period(first.start, last.end) if first.start <= last.end else None


def _single(how: str, text: str) -> Period | None:
    """The period one date with its preposition covers ("before 1999": up to 31 Dec 1998)."""
    days = _day_bounds(text)
    if days is None or days.start is None or days.end is None:
        return None
    if how in ("before", "prior to"):
        return Period(None, days.start - timedelta(days=1))
    if how == "after":
        return Period(days.end + timedelta(days=1), None)
    if how in ("since", "from"):
        return Period(days.start, None)
    if how in ("until", "till", "up to", "by"):
        return Period(None, days.end)
    return days


# the ISO forms as_of takes, in ASCII digits only: "\d" would also take "٢٠٠٥" and "２００５",
# and "$" a trailing newline
_AS_OF = re.compile(r"[0-9]{4}(?:-[0-9]{2}(?:-[0-9]{2})?)?")


def as_of_period(value: object) -> Period:
    """The day an ``as_of`` option names, as a one-day period (a year or month: all its days).

    Raises:
        OptionError: not a date, an ISO date string (``2005``, ``2005-06``, ``2005-06-01``,
            written exactly so: ASCII digits, nothing around them) or ``"now"``.

    Example:
        >>> as_of_period("2005-06")
        Period(start=datetime.date(2005, 6, 1), end=datetime.date(2005, 6, 30))
        >>> as_of_period(date(2005, 6, 1)).end
        datetime.date(2005, 6, 1)
    """
    if isinstance(value, datetime):  # a datetime compares with no date: its day is meant
        value = value.date()
    if isinstance(value, date):
        return Period(value, value)
    if isinstance(value, str) and value == "now":
        today = date.today()
        return Period(today, today)
    period = read_period(value) if isinstance(value, str) and _AS_OF.fullmatch(value) else None
    if period is not None:
        return period
    raise OptionError(
        "as_of must be a date, an ISO date string ('2005', '2005-06' or '2005-06-01') or "
        f"'now', got {quote_value(value)}"
    )
