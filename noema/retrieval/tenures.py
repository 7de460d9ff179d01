"""The end the graph knows of a role that a fact states without one.

An older page says "Graham Tulley is the manager of Kelderby Athletic" (a relation, with no
time) or "Lead maintainer: Odalys Merino (2021–)" (an event open at its end); a later one says
when it ended. Ingest closes such a fact where the end is read in the same batch
(:func:`noema.ingest.times.close_tenures`), but a document ingested in a later call does not
change the facts stored before it, so retrieval reads the end from the graph. Three kinds of
fact end a role of a holder at a place (:func:`noema.model.roles.is_role`):

* a **tenure** of the same role, holder and place whose end is written ("was the manager of
  Kelderby Athletic until 2018", "Odalys Merino: lead maintainer, 2021–2025"); for an event,
  one that covers its start;
* a **parting** of the holder from the place at a date ("left Kelderby Athletic in 2018");
* a **succession** at a date by someone who holds the same role at the place ("Mira Solberg
  succeeded Graham Tulley as manager of Kelderby Athletic in 2018").

Where the same holder holds the role again after that end (an open tenure nothing ends, or a
later date), nothing is known: "Tulley returned in 2023" keeps his timeless fact. A date ends the
role on its last day, so ``as_of`` in the year of a departure still keeps the role.
"""

from __future__ import annotations

from datetime import date

from noema.model.graph import Event, SemanticGraph
from noema.model.records import Relation
from noema.model.roles import is_role, same_role
from noema.model.times import Period, read_period

__all__ = ["PARTINGS", "SUCCESSIONS", "known_end", "known_period"]

# Event labels that end what their subject had with their object: "Ondry sold the house in
# 1902" ends his tie to it then. Not "sell_to": the buyer is no thing one had.
PARTINGS = frozenset(
    {"sell", "leave", "quit", "resign", "resign_from", "retire_from", "depart", "depart_from"}
)
# Event labels whose subject takes over from their object, the holder before: "Mira Solberg
# succeeded Graham Tulley", "Sunniva Holt replaced Desmond Oyelaran", "took over from".
SUCCESSIONS = frozenset({"succeed", "replace", "take_over_from"})


def _unended(graph: SemanticGraph, fact_id: str) -> tuple[str, str, str, Period | None] | None:
    """A role fact with no end of its own, as (label, holder, place, its period): a relation
    (period ``None``), an event open at its end ("2021/..") or at one date ("2018-05-30": held
    then); ``None`` for any other fact."""
    fact = graph.fact(fact_id)
    if isinstance(fact, Relation):
        label, ends, period = fact.predicate, (fact.subject_id, fact.object_id), None
    elif isinstance(fact, Event) and len(fact.participant_ids) == 2:
        period = read_period(fact.time)
        if period is None or (period.end is not None and "/" in (fact.time or "")):
            return None
        label, ends = fact.label, (fact.participant_ids[0], fact.participant_ids[1])
    else:
        return None
    if not is_role(label) or label.startswith("former_") or ends[0] == ends[1]:
        return None
    return label, ends[0], ends[1], period


def known_end(graph: SemanticGraph, fact_id: str) -> date | None:
    """The last day a role fact stated without an end held, where the graph knows it (see the
    module docstring); ``None`` for a fact with an end of its own, a fact of no role, or a role
    nothing ends.

    Example:
        >>> graph = SemanticGraph()
        >>> tulley = graph.add_entity("Graham Tulley", "PERSON")
        >>> club = graph.add_entity("Kelderby Athletic", "ORG")
        >>> timeless = graph.add_relation(tulley, "manager_of", club)
        >>> known_end(graph, timeless) is None
        True
        >>> _ = graph.add_event("leave", [tulley, club], time="2018")
        >>> known_end(graph, timeless)
        datetime.date(2018, 12, 31)
    """
    read = _unended(graph, fact_id)
    if read is None:
        return None
    label, holder, place, period = read
    begun = None if period is None else period.start
    ends: list[date] = []
    again: list[str] = []  # the holder's other tenures of the role with no end of their own
    for other_id in graph.facts_of(holder):
        other = graph.fact(other_id)
        when = read_period(other.time) if isinstance(other, Event) else None
        if other_id == fact_id or not isinstance(other, Event) or when is None:
            continue
        parts = tuple(other.participant_ids)
        if other.label == label and parts == (holder, place):
            if when.end is None or "/" not in (other.time or ""):
                again.append(other_id)
            elif _covers(when, begun):
                ends.append(when.end)
        elif "/" not in (other.time or "") and _parts(graph, other, holder, place, label):
            ends.append(when.end)  # type: ignore[arg-type]
    ends = [end for end in ends if begun is None or end >= begun]
    if not ends:
        return None
    end = max(ends)
    for other_id in again:
        # held again after the end ("Tulley returned in 2023"), or a tenure nothing ends
        other_period = read_period(graph.events[other_id].time)
        if other_period is None or (other_period.start is not None and other_period.start > end):
            return None
        if period is None and other_period.end is None and known_end(graph, other_id) is None:
            return None
    return end


def _parts(graph: SemanticGraph, event: Event, holder: str, place: str, label: str) -> bool:
    """Whether ``event``, at one date, parts ``holder`` from the role ``label`` at ``place``:
    a parting of the two, or a succession to the holder by someone who holds the role there."""
    parts = tuple(event.participant_ids)
    if event.label in PARTINGS:
        return set(parts) == {holder, place}
    return (
        event.label in SUCCESSIONS
        and parts[1:] == (holder,)
        and _holds(graph, parts[0], place, label)
    )


def known_period(graph: SemanticGraph, fact_id: str) -> Period | None:
    """The days a role fact stated without an end held, as far as the graph knows: its start
    (``None`` for a relation, or a role said to hold at one date, which began at some time
    before) to :func:`known_end`; ``None`` where no end is known."""
    end = known_end(graph, fact_id)
    if end is None:
        return None
    fact = graph.fact(fact_id)
    period = read_period(fact.time) if isinstance(fact, Event) else None
    opened = period is not None and "/" in (fact.time or "")  # type: ignore[union-attr]
    return Period(period.start if opened and period is not None else None, end)


def _covers(tenure: Period, begun: date | None) -> bool:
    """Whether a tenure with a written end is the one a fact begun on ``begun`` (``None``: a
    relation, any) is part of: it began no later and ended no earlier."""
    if begun is None:
        return True
    return (tenure.start is None or tenure.start <= begun) and (
        tenure.end is not None and tenure.end >= begun
    )


def _holds(graph: SemanticGraph, successor: str, place: str, label: str) -> bool:
    """Whether ``successor`` holds, by any fact, the role ``label`` names at ``place``."""
    for fact_id in graph.facts_of(successor):
        fact = graph.fact(fact_id)
        if isinstance(fact, Relation):
            ends, held = (fact.subject_id, fact.object_id), fact.predicate
        elif len(fact.participant_ids) == 2:
            ends, held = (fact.participant_ids[0], fact.participant_ids[1]), fact.label
        else:
            continue
        if ends == (successor, place) and is_role(held) and same_role(held, label):
            return True
    return False
