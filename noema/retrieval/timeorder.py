"""Ordering a retrieval's facts by time: what the question's time matches first, and of rival
facts the one valid latest first.

Two rules, applied to the packing order a strategy made (:mod:`noema.retrieval.plan`), so that
a question without a time over a graph without timed facts is ordered exactly as before:

* **The question's time.** Of the first :data:`TIME_WINDOW` steps, those whose fact's time
  matches the question's (:mod:`noema.retrieval.times`) and that join an entity of the first
  :data:`ANCHOR_STEPS` steps (what the question is about) move to the front; the rest follow
  unchanged. Only the window is reordered: a fact far down the order that merely shares the
  year is no more relevant for it. A fact without a time of its own matches a written period
  of the question by the time its source sentence writes nearest its other end ("she taught
  at Halden College (1990-1995)", "played in Old GSP Stadium from 1953 to 1978"): evidence for
  the order only, as the fact is still stated without a time (an extractor that tied the
  time to it would have made it an event). Of the facts that move, those whose time shares
  more of its days with the question's come first, the rest in the order they had.
* **Rivals.** Facts of a role's predicate (a position one holder has at a time:
  :func:`noema.model.roles.is_role`) that share an end at the same place (two people ``ceo_of``
  one company; one player's teams) disagree when their times differ. Before such a fact, its
  rivals valid later come first (latest first), each keeping its own time, so the model reads
  the current one before the former. With a time in the question, only rivals that match it
  are brought forward. Facts of other predicates all hold together (a company's acquisitions,
  a founder's companies): bringing the later ones forward would only push the one asked about
  out of the budget. A question's "first" or "last" still chooses among them.
* **Known ends.** A role stated without an end ("Graham Tulley is the manager of Kelderby
  Athletic", "Odalys Merino, 2021–") that another fact ends (he left in 2018, a successor took
  over, a tenure of his writes its end: :func:`noema.retrieval.tenures.known_end`) is read as
  ending then: its rivals valid later come before it as before an ended event, it is no
  holder nothing says has left, and it is "current" no more.

A fact's time is read with :func:`noema.model.times.read_period`, a sentence's with
:func:`noema.retrieval.times.written_periods`: relations and events with a time that is no ISO
period take part in the first rule only by their sentence, and in the second not at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import date
from itertools import chain, islice

from noema.model.graph import Event, SemanticGraph
from noema.model.records import Relation
from noema.model.roles import is_role
from noema.model.spans import Sentence, first_sentence
from noema.model.times import Period, read_period
from noema.retrieval.bridges import entities_of, walkable
from noema.retrieval.steps import Step
from noema.retrieval.tenures import known_end, known_period
from noema.retrieval.times import QuestionTime, written_periods

__all__ = [
    "TIME_WINDOW",
    "fact_period",
    "fact_time",
    "order_by_time",
    "held_period",
    "latest_holder",
    "peers",
    "rivals",
    "standing_rivals",
]

# How many steps of the strategy's order the question's time reorders: enough to reach the facts
# of the question's subject past the first searches (on TimeQA the fact of the period asked stood
# at step 8-418, median 42), few enough that the subject's facts are still what is reached.
TIME_WINDOW = 400
# How many of the first steps say what the question is about (see _anchors).
ANCHOR_STEPS = 5
# How many of the first steps a question's "when" clause looks for its event among.
CLAUSE_STEPS = 20


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
    """The :func:`peers` of a fact of a role's predicate, which it disagrees with where their
    times differ; ``[]`` for any other fact, whose peers all hold together. A relation of a
    role has rivals only where the graph knows its end (:func:`held_period`)."""
    fact = graph.fact(fact_id)
    if isinstance(fact, Relation):
        if not is_role(fact.predicate) or held_period(graph, fact_id) is None:
            return []
        return _sharing(graph, fact_id, fact.predicate, (fact.subject_id, fact.object_id))
    return peers(graph, fact_id) if is_role(fact.label) else []


def held_period(graph: SemanticGraph, fact_id: str) -> Period | None:
    """The days a fact holds as far as the graph knows: its own time's
    (:func:`fact_period`), closed at the end the graph knows of a role it states without one
    (:func:`noema.retrieval.tenures.known_period`: ``../2018`` for "Graham Tulley is the
    manager" beside "he left in 2018"); ``None`` for a fact with neither."""
    own = fact_period(graph, fact_id)
    if own is not None and own.end is not None:
        return own
    known = known_period(graph, fact_id)
    if known is None:
        return own
    return Period(own.start if own is not None else known.start, known.end)


def peers(graph: SemanticGraph, fact_id: str) -> list[str]:
    """Events of the same label and number of participants that share one participant at the
    same place with ``fact_id`` and have an ISO time, in graph order: what "first" and "last"
    choose among."""
    fact = graph.fact(fact_id)
    if not isinstance(fact, Event) or read_period(fact.time) is None:
        return []
    return _sharing(graph, fact_id, fact.label, fact.participant_ids)


def _sharing(graph: SemanticGraph, fact_id: str, label: str, ends: tuple[str, ...]) -> list[str]:
    """Events of ``label`` with an ISO time and as many participants as ``ends`` that share
    one of them at the same place, but ``fact_id``, in graph order."""
    found: dict[str, None] = {}
    for place, participant in enumerate(ends):
        for other_id in graph.facts_of(participant):
            other = graph.fact(other_id)
            if (
                other_id != fact_id
                and isinstance(other, Event)
                and other.label == label
                and len(other.participant_ids) == len(ends)
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
        if asked.kind in ("current", "former"):
            # "Odalys Merino: lead maintainer (2021–)" beside her tenure of 2021-2025
            period = held_period(self.graph, fact_id) or period
        if asked.kind == "current":
            # latest of its holders, not of its own restatements: a tenure that ended is not
            # current because another sentence gave the same one a different start
            held = self.graph.fact(fact_id).entity_ids
            holders = [
                p
                for r in rivals(self.graph, fact_id)
                if self.graph.fact(r).entity_ids != held and (p := fact_period(self.graph, r))
            ]
            latest = bool(holders) and all(_valid_until(period) >= _valid_until(p) for p in holders)
            return period.end is None or period.contains(self.today) or latest
        if asked.kind == "former":
            superseded = any(
                _valid_until(p) > _valid_until(period)
                for r in rivals(self.graph, fact_id)
                if (p := fact_period(self.graph, r))
            )
            return period.end is not None and (period.end < self.today or superseded)
        # "first" and "last" choose among every fact of the predicate and end, rivals or not
        # ("the first company Microsoft acquired"); a lone fact is neither
        others = [p for r in peers(self.graph, fact_id) if (p := fact_period(self.graph, r))]
        if not others:
            return False
        if asked.kind == "first":
            return all(_begins(period) <= _begins(p) for p in others)
        return all(_begins(period) >= _begins(p) for p in others)

    def words(self, fact_id: str) -> str:
        return f"matches {self.asked.phrase!r} of the question ({fact_time(self.graph, fact_id)})"

    def place(self, step: Step) -> tuple[float, str] | None:
        """Whether the step's fact matches the question's time, by its own time or (a fact
        without one, and a written period asked) by its sentence's: how close (1.0: the same
        days) and the words an explanation gives; ``None`` when it does not match."""
        asked, fact_id = self.asked, step.fact_id
        own = fact_period(self.graph, fact_id)
        if own is not None:
            if not self(fact_id):
                return None
            close = _closeness(own, asked.period) if asked.period is not None else 1.0
            return close, self.words(fact_id)
        if asked.period is None:
            return None
        written = _sentence_time(self.graph, step)
        if written is None or not written[1].overlaps(asked.period):
            return None
        words = f"its sentence's {written[0]!r} matches {asked.phrase!r} of the question"
        return _closeness(written[1], asked.period), words


def _closeness(period: Period, asked: Period) -> float:
    """The share of their days a fact's period and the question's have in common: 1.0 for the
    same days, less the more either reaches beyond the other ("from 1953 to 1978": 1953/1978
    before 1978/1999). A question open at one end ("after 1820") says no more than whether
    they overlap: every fact that does is 1.0. An open end of the fact's period reaches as far
    as the question's."""
    if asked.start is None or asked.end is None:
        return 1.0
    start = asked.start if period.start is None else period.start
    end = asked.end if period.end is None else period.end
    common = (min(end, asked.end) - max(start, asked.start)).days + 1
    either = (max(end, asked.end) - min(start, asked.start)).days + 1
    return max(common, 0) / either


def _sentence_time(graph: SemanticGraph, step: Step) -> tuple[str, Period] | None:
    """The period the step's source sentence writes nearest a name of the fact (its last end
    first: "taught at Lisle (1985-1990), Halden College (1990-1995)"), with its words; a
    sentence that names neither end gives its period only when it writes one."""
    sentence = step.sentence or first_sentence(graph, step.fact_id)
    document = graph.documents.get(sentence.document_id) if sentence is not None else None
    if sentence is None or document is None:
        return None
    text = document.text[sentence.start : sentence.end]
    written = written_periods(text)
    if not written:
        return None
    for entity_id in reversed(graph.fact(step.fact_id).entity_ids):
        names = [
            (m.start - sentence.start, m.end - sentence.start)
            for m in graph.entities[entity_id].mentions
            if m.document_id == sentence.document_id and sentence.start <= m.start < sentence.end
        ]
        if names:
            start, end, period = min(
                written, key=lambda w: min(max(w[0] - e, s - w[1], 0) for s, e in names)
            )
            return text[start:end], period
    return (text[written[0][0] : written[0][1]], written[0][2]) if len(written) == 1 else None


def order_by_time(
    graph: SemanticGraph,
    steps: Iterable[Step],
    asked: QuestionTime | None,
    *,
    allowed: Callable[[str], bool],
    sentence_of: Callable[[str], Sentence | None],
    today: date | None = None,
    clause: str | None = None,
) -> Iterable[Step]:
    """``steps`` reordered by the two rules of the module docstring, lazily.

    ``allowed`` says whether a rival may be brought in (the filters and ``as_of``);
    ``sentence_of`` gives the source sentence shown for it; ``clause`` is the question's
    "when" clause (:func:`noema.retrieval.times.when_clause`), whose event's time is the time
    asked when the question writes none; ``today`` is the day "current" means (``as_of``'s, or
    today's). A graph without events gets ``steps`` back untouched.
    """
    if not graph.events:
        return steps
    stream: Iterator[Step] = iter(steps)
    window: list[Step] | None = None
    if asked is None and clause is not None:
        # "when it acquired Gannet Sonar": the time of the event the clause names, found among
        # the first steps, is the time asked
        window = list(islice(stream, TIME_WINDOW))
        asked = _event_time(graph, window[:CLAUSE_STEPS], clause)
    match = _TimeMatch(graph, asked, today or date.today()) if asked is not None else None
    if window is not None and match is None:
        stream = chain(window, stream)
    if match is not None:
        window = window if window is not None else list(islice(stream, TIME_WINDOW))
        about = _anchors(graph, window[:ANCHOR_STEPS])
        placed = [
            (placing, s)
            for s in window
            if about.intersection(entities_of(graph, s.fact_id))
            and (placing := match.place(s)) is not None
        ]
        placed.sort(key=lambda p: -p[0][0])  # stable: the strategy's order among equals
        first = [replace(s, time=words) for (_, words), s in placed]
        moved = {s.fact_id for s in first}
        rest = [s for s in window if s.fact_id not in moved]
        stream = chain(first, rest, stream)
    return _latest_first(graph, stream, match, allowed, sentence_of)


def _event_time(graph: SemanticGraph, leading: Iterable[Step], clause: str) -> QuestionTime | None:
    """The time of the first event of ``leading`` that ``clause`` names: its verb is a word of
    the clause ("acquire" in "it acquired Gannet Sonar") and one of its participants is named
    there; ``None`` when no event is."""
    words = re.findall(r"[a-z]+", clause.lower())
    named = clause.lower()
    for step in leading:
        fact = graph.fact(step.fact_id)
        period = fact_period(graph, step.fact_id)
        if not isinstance(fact, Event) or period is None or period.start is None:
            continue
        verb = fact.label.split("_")[0]
        stem = verb[:-1] if verb.endswith("e") else verb
        if len(stem) < 3 or not any(word.startswith(stem) for word in words):
            continue
        if any(graph.entities[e].name.lower() in named for e in fact.participant_ids):
            return QuestionTime("period", f"when {clause}", period)
    return None


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
        period = held_period(graph, step.fact_id)
        if period is not None:
            later = [
                (until, r)
                for r in rivals(graph, step.fact_id)
                if r not in emitted
                and (until := _valid_until(held_period(graph, r))) > _valid_until(period)  # type: ignore[arg-type]
                and allowed(r)
                and (match is None or match(r))
            ]
            if match is not None and match.asked.kind == "current" and _ended(period, match):
                # "the current CEO": a holder nothing says has left comes before one who has
                standing = [
                    r
                    for r in standing_rivals(graph, step.fact_id)
                    if r not in emitted and allowed(r)
                ]
                for rival in standing:
                    emitted.add(rival)
                    words = f"no end stated, where {step.fact_id} ended ({period.end})"
                    yield _rival_step(graph, rival, step, sentence_of(rival), words)
            ended_by_others = period != fact_period(graph, step.fact_id)
            for _, rival in sorted(later, reverse=True):
                emitted.add(rival)
                yield _rival_step(
                    graph,
                    rival,
                    step,
                    sentence_of(rival),
                    f"valid later ({fact_time(graph, rival)}) than {step.fact_id} (which other "
                    f"facts end: {_written(period)}), of the same predicate and end"
                    if ended_by_others
                    else None,
                )
        emitted.add(step.fact_id)
        yield step


def _written(period: Period) -> str:
    """A period as an explanation writes it: ISO years or days, ``..`` for an open end."""
    return f"{period.start or '..'}/{period.end or '..'}"


def _ended(period: Period, match: _TimeMatch) -> bool:
    return period.end is not None and period.end < match.today


def standing_rivals(graph: SemanticGraph, fact_id: str) -> list[str]:
    """Relations of a role event's label from another holder to the same end: facts with no
    time, so nothing says they ended ("Priya Castellane is the chief executive of Harrow
    Avionics" beside Oskar Bellweather's tenure of 2015/2021), in graph order."""
    fact = graph.fact(fact_id)
    if not isinstance(fact, Event) or len(fact.participant_ids) != 2 or not is_role(fact.label):
        return []
    holder, end = fact.participant_ids
    found = []
    for other_id in graph.facts_of(end):
        other = graph.fact(other_id)
        if (
            isinstance(other, Relation)
            and other.predicate == fact.label
            and other.object_id == end
            and other.subject_id != holder
            and known_end(graph, other_id) is None  # "he left in 2018": it has ended too
        ):
            found.append(other_id)
    return found


def latest_holder(graph: SemanticGraph, fact_id: str, holder: str) -> tuple[str, str] | None:
    """Who holds the role ``holder`` holds by ``fact_id`` after them, with the fact that says so:
    the holder of the rival fact of the same predicate and place valid latest, where it is valid
    later than ``fact_id`` (a tenure that ended in 2025 beside "Chair: Ngozi Ferrand (2025–)");
    ``None`` when ``fact_id`` is the latest known, is no role, or ``holder`` is not its holder.
    What a question with no time asks of "the chair of X". No clock is read: the facts' own
    times decide.

    Example:
        >>> from noema.model.graph import SemanticGraph
        >>> g = SemanticGraph()
        >>> cecily, ngozi = g.add_entity("Cecily Lanthorn", "PERSON"), g.add_entity("Ngozi Ferrand", "PERSON")
        >>> fund = g.add_entity("Lanthorn Foundation", "ORG")
        >>> then = g.add_event("chair_of", (cecily, fund), time="2009/2025")
        >>> now = g.add_event("chair_of", (ngozi, fund), time="2025/..")
        >>> latest_holder(g, then, cecily) == (ngozi, now), latest_holder(g, now, ngozi)
        (True, None)
    """
    period = held_period(graph, fact_id)
    ends = graph.fact(fact_id).entity_ids
    if period is None or len(ends) != 2 or holder not in ends:
        return None
    at = ends.index(holder)
    place = ends[1 - at]
    later: list[tuple[tuple[date, date], str, str]] = []
    for rival in rivals(graph, fact_id):
        other, rival_period = graph.fact(rival).entity_ids, held_period(graph, rival)
        if len(other) != 2 or other[1 - at] != place or other[at] == holder or rival_period is None:
            continue
        if (until := _valid_until(rival_period)) > _valid_until(period):
            later.append((until, rival, other[at]))
    if not later:
        return None
    _, rival, successor = max(later)
    return successor, rival


def _rival_step(
    graph: SemanticGraph,
    rival: str,
    before: Step,
    sentence: Sentence | None,
    words: str | None = None,
) -> Step:
    """The step of a rival brought before ``before``: reached through the participant they
    share, with the words an explanation gives."""
    shared = [e for e in graph.fact(rival).entity_ids if e in graph.fact(before.fact_id).entity_ids]
    words = words or (
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
