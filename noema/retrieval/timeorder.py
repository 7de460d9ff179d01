"""Ordering a retrieval's facts by time: what the question's time matches first, and of rival
facts the one valid latest first.

Two rules, applied to the packing order a strategy made (:mod:`noema.retrieval.plan`), so that
a question without a time over a graph without timed facts is ordered exactly as before:

* **The question's time.** Of the first :data:`TIME_WINDOW` steps, those whose fact's time
  matches the question's (:mod:`noema.retrieval.times`) and that join an entity of the first
  :data:`ANCHOR_STEPS` steps (what the question is about) move to the front, in the order they
  had; the rest follow unchanged. Only the window is reordered: a fact far down the order
  that merely shares the year is no more relevant for it.
* **Rivals.** Facts of one predicate that share an end at the same place (two people
  ``ceo_of`` one company; one player's teams) disagree when their times differ. Before such a
  fact, its rivals valid later come first (latest first), each keeping its own time, so the
  model reads the current one before the former. With a time in the question, only rivals that
  match it are brought forward.

A fact's time is read with :func:`noema.model.times.read_period`: relations and events with a
time that is no ISO period take part in neither rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import date
from itertools import chain, islice

from noema.model.graph import Event, SemanticGraph
from noema.model.spans import Sentence
from noema.model.times import Period, read_period
from noema.retrieval.bridges import entities_of, walkable
from noema.retrieval.steps import Step
from noema.retrieval.times import QuestionTime

__all__ = ["TIME_WINDOW", "fact_period", "fact_time", "order_by_time", "rivals"]

# How many steps of the strategy's order the question's time reorders: a few budgets' worth of
# facts at the default 200 tokens, all of them close to the question already.
TIME_WINDOW = 40
# How many of the first steps say what the question is about (see _anchors).
ANCHOR_STEPS = 5


def fact_time(graph: SemanticGraph, fact_id: str) -> str | None:
    """The time a fact is written with: an event's, ``None`` for a relation."""
    fact = graph.fact(fact_id)
    return fact.time if isinstance(fact, Event) else None


def fact_period(graph: SemanticGraph, fact_id: str) -> Period | None:
    """The days a fact holds, or ``None``: a relation, or an event without an ISO time."""
    return read_period(fact_time(graph, fact_id))


def _begins(period: Period) -> date:
    # an interval open at its start ("../2019") began at some unknown time before its end
    return period.start or period.end or date.min


def _valid_until(period: Period) -> tuple[date, date]:
    """What "valid later" compares: the end (open: still valid), then the start."""
    return period.end or date.max, _begins(period)


def rivals(graph: SemanticGraph, fact_id: str) -> list[str]:
    """Events of the same label and number of participants that share one participant at the
    same place with ``fact_id`` and have an ISO time, in graph order."""
    fact = graph.fact(fact_id)
    if not isinstance(fact, Event) or read_period(fact.time) is None:
        return []
    found: dict[str, None] = {}
    for place, participant in enumerate(fact.participant_ids):
        for other_id in graph.facts_of(participant):
            other = graph.fact(other_id)
            if (
                other_id != fact_id
                and isinstance(other, Event)
                and other.label == fact.label
                and len(other.participant_ids) == len(fact.participant_ids)
                and other.participant_ids[place] == participant
                and read_period(other.time) is not None
            ):
                found[other_id] = None
    return list(found)


class _TimeMatch:
    """Whether a fact matches the question's time, with the words an explanation gives."""

    def __init__(self, graph: SemanticGraph, asked: QuestionTime, today: date) -> None:
        self.graph, self.asked, self.today = graph, asked, today

    def __call__(self, fact_id: str) -> bool:
        period = fact_period(self.graph, fact_id)
        if period is None:
            return False
        asked = self.asked
        if asked.period is not None:
            return period.overlaps(asked.period)
        others = [p for r in rivals(self.graph, fact_id) if (p := fact_period(self.graph, r))]
        if asked.kind == "current":
            latest = bool(others) and all(_valid_until(period) >= _valid_until(p) for p in others)
            return period.end is None or period.contains(self.today) or latest
        if asked.kind == "former":
            superseded = any(_valid_until(p) > _valid_until(period) for p in others)
            return period.end is not None and (period.end < self.today or superseded)
        if not others:  # "first" and "last" choose among rivals; a lone fact is neither
            return False
        if asked.kind == "first":
            return all(_begins(period) <= _begins(p) for p in others)
        return all(_begins(period) >= _begins(p) for p in others)

    def words(self, fact_id: str) -> str:
        return f"matches {self.asked.phrase!r} of the question ({fact_time(self.graph, fact_id)})"


def order_by_time(
    graph: SemanticGraph,
    steps: Iterable[Step],
    asked: QuestionTime | None,
    *,
    allowed: Callable[[str], bool],
    sentence_of: Callable[[str], Sentence | None],
    today: date | None = None,
) -> Iterable[Step]:
    """``steps`` reordered by the two rules of the module docstring, lazily.

    ``allowed`` says whether a rival may be brought in (the filters and ``as_of``);
    ``sentence_of`` gives the source sentence shown for it. A graph without events gets
    ``steps`` back untouched.
    """
    if not graph.events:
        return steps
    match = _TimeMatch(graph, asked, today or date.today()) if asked is not None else None
    stream: Iterator[Step] = iter(steps)
    if match is not None:
        window = list(islice(stream, TIME_WINDOW))
        about = _anchors(graph, window[:ANCHOR_STEPS])
        first = [
            replace(s, time=match.words(s.fact_id))
            for s in window
            if match(s.fact_id) and about.intersection(entities_of(graph, s.fact_id))
        ]
        rest = [s for s in window if s.fact_id not in {f.fact_id for f in first}]
        stream = chain(first, rest, stream)
    return _latest_first(graph, stream, match, allowed, sentence_of)


def _anchors(graph: SemanticGraph, leading: Iterable[Step]) -> set[str]:
    """The entities the question's best evidence is about: a fact whose time matches moves
    forward only when it joins one of them, as a year alone says nothing of what is asked
    ("after 2004" brought every company's later chief executive before Lina Sorel's employer)."""
    return {e for step in leading for e in entities_of(graph, step.fact_id) if walkable(graph, e)}


def _latest_first(
    graph: SemanticGraph,
    stream: Iterator[Step],
    match: _TimeMatch | None,
    allowed: Callable[[str], bool],
    sentence_of: Callable[[str], Sentence | None],
) -> Iterator[Step]:
    """Each step once, its rivals valid later (and matching the question's time) before it."""
    emitted: set[str] = set()
    for step in stream:
        if step.fact_id in emitted:
            continue
        period = fact_period(graph, step.fact_id)
        if period is not None:
            later = [
                (until, r)
                for r in rivals(graph, step.fact_id)
                if r not in emitted
                and (until := _valid_until(fact_period(graph, r))) > _valid_until(period)  # type: ignore[arg-type]
                and allowed(r)
                and (match is None or match(r))
            ]
            for _, rival in sorted(later, reverse=True):
                emitted.add(rival)
                yield _rival_step(graph, rival, step, sentence_of(rival))
        emitted.add(step.fact_id)
        yield step


def _rival_step(graph: SemanticGraph, rival: str, before: Step, sentence: Sentence | None) -> Step:
    """The step of a rival brought before ``before``: reached through the participant they
    share, with the words an explanation gives."""
    shared = [e for e in graph.fact(rival).entity_ids if e in graph.fact(before.fact_id).entity_ids]
    words = (
        f"valid later ({fact_time(graph, rival)}) than {before.fact_id} "
        f"({fact_time(graph, before.fact_id)}), of the same predicate and end"
    )
    return Step(
        rival,
        "time",
        None,
        before.fact_id,
        1,
        tuple(shared[:1]),
        sentence,
        before.step,
        time=words,
    )
