"""Closing tenures across a batch: a succession or a departure read in one sentence ends the
roles other sentences and documents of the batch gave without an end.

Apart from reading a clause's time because it works on every fact of the batch at once, after
each sentence has been read (:func:`~noema.ingest.times.read_sentence_times` gives the ends it
applies), and it knows facts only, not tokens.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date

from noema.ingest.entities import ExtractedFact, FactEnd, FoundDocument
from noema.model.roles import OFFICES
from noema.model.times import OPEN, period_text, read_period

__all__ = ["close_tenures"]


# what a departure ends when it does not name the role: the roles held, not what was done
# ("founded", "bought") or what a founder stays
_HELD = frozenset({"lead", "run", "head", "manage", "direct", "chair", "coach", "captain"})
_KEPT = ("founder", "co_founder", "cofounder", "creator")
# verbs whose fact begins the subject's time at the object: "before he joined Veltrix"
_JOINING = frozenset({"join", "rejoin"})


def close_tenures(found: Sequence[FoundDocument]) -> Sequence[FoundDocument]:
    """End, at the date of a succession read anywhere in the batch, the holder's facts of the
    role taken that were still open: ``2010/..`` becomes ``2010/2019``, a fact with no time
    ``../2019``. A tenure that began after the succession is another one and stays open."""
    ends = [end for item in found for end in item.ends]
    if ends:
        facts = [fact for item in found for fact in item.facts]
        ends = [*(end for end in ends if end.successor is None), *_shared_ends(ends, facts)]
        for item in found:
            item.facts = [_opened(_closed(fact, ends), ends) for fact in item.facts]
    for item in found:
        item.facts = _dated_joins(item.facts)
    return found


def _dated_joins(facts: Sequence[ExtractedFact]) -> list[ExtractedFact]:
    """ "Fenn had run Halden's logistics before he joined Veltrix" beside "until 2019, when
    Dario Fenn took over": a joining its own sentence gives no date began the earliest time the
    document dates for the same two (what would be stated as timeless is bounded by its
    source). Within one document only: another may tell of an earlier spell at the same place."""
    starts: dict[tuple[str, str], tuple[date, str]] = {}
    for fact in facts:
        start = (fact.time or "").partition("/")[0]
        period = read_period(start) if start not in ("", OPEN) else None
        if period is None or period.start is None:
            continue
        key = (fact.subject, fact.object)
        if key not in starts or period.start < starts[key][0]:
            starts[key] = (period.start, start)
    return [
        fact._replace(time=starts[(fact.subject, fact.object)][1])
        if fact.time is None
        and fact.predicate in _JOINING
        and (fact.subject, fact.object) in starts
        else fact
        for fact in facts
    ]


def _shared_ends(ends: Sequence[FactEnd], facts: Sequence[ExtractedFact]) -> Iterable[FactEnd]:
    """ "Sofia Lind replaced Bram Keller in 2012", where both coach the Harwick Hawks: the
    role the two share ends for Bram Keller then, and Sofia Lind holds it from then on."""
    held: dict[str, set[tuple[str, str]]] = {}
    for fact in facts:
        if fact.predicate in _HELD or set(fact.predicate.split("_")) & OFFICES:
            held.setdefault(fact.subject, set()).add((fact.predicate, fact.object))
    for end in ends:
        if end.successor is None:
            continue
        for predicate, object_ in sorted(
            held.get(end.holder, set()) & held.get(end.successor, set())
        ):
            if not predicate.startswith(_KEPT):
                yield end._replace(predicate=predicate, object=object_)


def _opened(fact: ExtractedFact, ends: Sequence[FactEnd]) -> ExtractedFact:
    """The successor's fact of a role taken, said without a time ("who coaches the team"),
    holds from the succession on."""
    if fact.time is not None:
        return fact
    for end in ends:
        if (end.successor, end.predicate, end.object) == (
            fact.subject,
            fact.predicate,
            fact.object,
        ):
            return fact._replace(time=f"{end.at}/{OPEN}")
    return fact


def _ends(end: FactEnd, predicate: str) -> bool:
    """Whether ``end`` ends a fact of ``predicate``: its own role, or, for a departure that names
    none, any role held there."""
    if end.predicate is not None:
        return predicate == end.predicate
    held = predicate.endswith(("_of", "_at", "_for")) and not predicate.startswith(_KEPT)
    return held or predicate in _HELD


def _closed(fact: ExtractedFact, ends: Sequence[FactEnd]) -> ExtractedFact:
    for end in ends:
        if (
            fact.subject != end.holder
            or not _ends(end, fact.predicate)
            or end.object not in (None, fact.object)
        ):
            continue
        if fact.time is None:
            fact = fact._replace(time=f"{OPEN}/{end.at}")
        elif fact.time.endswith(f"/{OPEN}"):
            start = fact.time.partition("/")[0]
            begun, ended = read_period(start), read_period(end.at)
            if begun is None or ended is None or begun.start is None or ended.start is None:
                continue
            if begun.start <= ended.start:  # else a later tenure: not the one that ended
                fact = fact._replace(time=period_text(start, end.at))
    return fact
