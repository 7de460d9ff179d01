"""When a fact holds: ISO 8601 dates and intervals, read as ranges of days.

A fact's time is kept as the text notation writes after ``@``: a date at the precision its source
gave (``2004``, ``2004-08``, ``2004-08-19``) or an interval of two such dates, either end open
(``2010/2019``, ``2019/..`` still valid, ``../2019`` ended then; ISO 8601-2's ``..`` for an open
end). :func:`read_period` turns that text into a :class:`Period`, the first and last day it
covers, so times of different precision compare: ``2019`` overlaps ``2019-03``. Text that is not
such a time (the notation grammar lets a user write any time) reads as ``None``: it is shown as
written and never filters anything out.

:func:`iso_date` reads the way documents and questions write a date ("March 2004", "19 August
2004", "August 19, 2004", "2004") into the ISO form, at the precision written.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date

__all__ = [
    "DATE_TEXT",
    "OPEN",
    "Period",
    "iso_date",
    "period_text",
    "read_period",
    "standing_period",
    "time_phrase",
]

_PART_OF = re.compile(r"^(?:early|late|mid|middle of|end of|beginning of)[\s-]+", re.I)
# ISO 8601-2's mark for an open end of an interval
OPEN = ".."

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
# years a document's fact plausibly holds in; four digits only, so "1,000 staff" is no year
_YEAR = r"(1[0-9]{3}|20[0-9]{2})"
_ISO = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")
_DATE_FORMS = (
    # 19 August 2004
    (
        re.compile(rf"^(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\.?,?\s+{_YEAR}$", re.I),
        "dmy",
    ),
    # August 19, 2004
    (re.compile(rf"^({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR}$", re.I), "mdy"),
    # March 2004
    (re.compile(rf"^({_MONTH})\.?,?\s+(?:of\s+)?{_YEAR}$", re.I), "my"),
    (re.compile(rf"^{_YEAR}$"), "y"),
)

# A date as :func:`iso_date` reads it, to find one inside a longer text (no groups of its own).
DATE_TEXT = (
    rf"(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH})\.?,?\s+{_YEAR}"
    rf"|(?:{_MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+{_YEAR}"
    rf"|(?:{_MONTH})\.?,?\s+(?:of\s+)?{_YEAR}|{_YEAR})"
).replace("(1[0-9]", "(?:1[0-9]")


@dataclass(frozen=True, slots=True, order=True)
class Period:
    """The days a time covers, first and last; ``None`` is an open end."""

    start: date | None = None
    end: date | None = None

    def overlaps(self, other: Period) -> bool:
        """Whether the two share a day.

        Example:
            >>> read_period("2010/2019").overlaps(read_period("2019-03"))
            True
            >>> read_period("../2009").overlaps(read_period("2010/.."))
            False
        """
        if self.end is not None and other.start is not None and self.end < other.start:
            return False
        return not (other.end is not None and self.start is not None and other.end < self.start)

    def contains(self, day: date) -> bool:
        """Whether ``day`` falls in the period."""
        return (self.start is None or self.start <= day) and (self.end is None or day <= self.end)


def _bounds(text: str) -> tuple[date, date] | None:
    """First and last day of one ISO date at its precision, or None for anything else."""
    match = _ISO.match(text)
    if match is None:
        return None
    year = int(match.group(1))
    month = int(match.group(2)) if match.group(2) else None
    day = int(match.group(3)) if match.group(3) else None
    try:
        if month is None:
            return date(year, 1, 1), date(year, 12, 31)
        if day is None:
            last = calendar.monthrange(year, month)[1]
            return date(year, month, 1), date(year, month, last)
        return date(year, month, day), date(year, month, day)
    except ValueError:  # month 13, February 30, year 0
        return None


def read_period(text: str | None) -> Period | None:
    """The days an ISO 8601 date or interval covers, or ``None`` when it is not one.

    Example:
        >>> read_period("2019/..")
        Period(start=datetime.date(2019, 1, 1), end=None)
        >>> read_period("../2019").end
        datetime.date(2019, 12, 31)
        >>> read_period("spring") is None
        True
    """
    if text is None:
        return None
    text = text.strip()
    if "/" not in text:
        bounds = _bounds(text)
        return None if bounds is None else Period(*bounds)
    first, _, last = text.partition("/")
    start = None if first == OPEN else _bounds(first)
    end = None if last == OPEN else _bounds(last)
    if (first != OPEN and start is None) or (last != OPEN and end is None):
        return None
    if first == OPEN and last == OPEN:
        return None
    period = Period(start[0] if start else None, end[1] if end else None)
    if period.start is not None and period.end is not None and period.end < period.start:
        return None
    return period


def standing_period(text: str | None) -> Period | None:
    """The days on which a fact of time ``text`` stands: an interval's own days, and a single date
    from that date on, as what happened then ("founded in 1993") has happened by every later day
    (what the graph says of the same two can end it: see
    :func:`noema.retrieval.filters.standing`). ``None`` when ``text`` is not an ISO date or
    interval.

    Example:
        >>> standing_period("1993").contains(date(2020, 1, 1))
        True
        >>> standing_period("2004/2006").contains(date(2010, 1, 1))
        False
    """
    period = read_period(text)
    if period is None or text is None or "/" in text:
        return period
    return Period(period.start, None)


def period_text(start: str | None, end: str | None) -> str | None:
    """The ISO text of an interval from two dates (either may be missing), or one date.

    Example:
        >>> period_text("2010", "2019"), period_text(None, "2019"), period_text("2019", None)
        ('2010/2019', '../2019', '2019/..')
        >>> period_text("2004-08-19", "2004-08-19")
        '2004-08-19'
    """
    if start is None and end is None:
        return None
    if start == end:
        return start
    return f"{start or OPEN}/{end or OPEN}"


def iso_date(text: str) -> str | None:
    """The ISO form of a date as a document or question writes it, at the precision written.

    Example:
        >>> iso_date("August 19, 2004"), iso_date("19 Aug 2004"), iso_date("March 2004")
        ('2004-08-19', '2004-08-19', '2004-03')
        >>> iso_date("2004"), iso_date("last year"), iso_date("late 1187")
        ('2004', None, '1187')
    """
    text = " ".join(text.replace("\u2009", " ").split()).strip(" ,.")
    if text.lower().startswith("the "):
        text = text[4:]
    # "late 1187", "early March 2004", "mid-1990": the part of the year or month is not said in
    # ISO 8601, so the date is the whole of it
    text = _PART_OF.sub("", text)
    for pattern, form in _DATE_FORMS:
        match = pattern.match(text)
        if match is None:
            continue
        if form == "y":
            return match.group(1)
        if form == "my":
            return f"{match.group(2)}-{_MONTHS[match.group(1).lower()]:02d}"
        day, month = (match.group(1), match.group(2)) if form == "dmy" else match.group(2, 1)
        iso = f"{match.group(3)}-{_MONTHS[month.lower()]:02d}-{int(day):02d}"
        return iso if _bounds(iso) is not None else None
    return None


def time_phrase(text: str) -> str:
    """How a decoded sentence says a time: "from 2010 to 2019", "in 2004", "until 2019".

    Example:
        >>> time_phrase("2010/2019"), time_phrase("2019/.."), time_phrase("../2019")
        ('from 2010 to 2019', 'since 2019', 'until 2019')
        >>> time_phrase("2004-08-19"), time_phrase("2004"), time_phrase("spring")
        ('on 2004-08-19', 'in 2004', 'at spring')
    """
    if read_period(text) is None:
        return f"at {text}"
    if "/" not in text:
        return f"on {text}" if len(text) == len("2004-08-19") else f"in {text}"
    first, _, last = text.partition("/")
    if first == OPEN:
        return f"until {last}"
    if last == OPEN:
        return f"since {first}"
    return f"from {first} to {last}"
