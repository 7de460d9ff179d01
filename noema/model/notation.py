"""Notation: the compact line format Noema puts in prompts, with a matched writer and reader.

Grammar (the README's Notation section gives it with examples)::

    notation      := entity_line* relation_line* event_line*
    entity_line   := "#" id " " name " :" TYPE
    relation_line := "#" subject_id " -" predicate "-> #" object_id
    event_line    := "*" label " (" "#" id ("," "#" id)* ")" [" @" time]

Lines are separated by ``\\n`` only (a trailing ``\\r`` is tolerated for CRLF files); blank lines
are skipped. The writer refuses names and times that the reader would read back differently, so
encode -> parse always gives back what was encoded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from noema.errors import InputTypeError, NotationError
from noema.model.graph import SemanticGraph
from noema.model.records import ENTITY_TYPES, LINE_BREAKS, normalize_predicate
from noema.model.times import read_period, time_phrase

__all__ = [
    "NotationEntity",
    "NotationEvent",
    "NotationRelation",
    "ParsedNotation",
    "decode",
    "encode_graph",
    "parse_notation",
]

_ENTITY_LINE = re.compile(r"#(\d+) (.+) :([A-Z]+)")
_RELATION_LINE = re.compile(r"#(\d+) -(\S+)-> #(\d+)")
_EVENT_LINE = re.compile(r"\*(\S+) \((#\d+(?:,#\d+)*)\)(?: @(.+))?")


@dataclass(frozen=True)
class NotationEntity:
    """An entity line: its local id, name and type."""

    local_id: int
    name: str
    type: str


@dataclass(frozen=True)
class NotationRelation:
    """A relation line between two local ids."""

    subject_id: int
    predicate: str
    object_id: int


@dataclass(frozen=True)
class NotationEvent:
    """An event line: label, participant local ids and optional time."""

    label: str
    participant_ids: tuple[int, ...]
    time: str | None = None


@dataclass(frozen=True)
class ParsedNotation:
    """What :func:`parse_notation` read."""

    entities: dict[int, NotationEntity] = field(default_factory=dict)
    relations: list[NotationRelation] = field(default_factory=list)
    events: list[NotationEvent] = field(default_factory=list)


@dataclass(frozen=True)
class _Encoded:
    text: str
    local_ids: dict[str, int]  # graph entity id -> local id


def _check_text(value: str, what: str) -> None:
    if not value.strip():
        raise NotationError(f"{what} {value!r} is empty and cannot be written as notation")
    # a line break of str.splitlines() in a name would break downstream readers
    bad = LINE_BREAKS.intersection(value)
    if bad:
        raise NotationError(
            f"{what} {value!r} contains a line break ({', '.join(sorted(map(repr, bad)))}); "
            "replace it with a space before encoding"
        )


def check_name(name: str) -> None:
    _check_text(name, "entity name")


def check_time(time: str) -> None:
    _check_text(time, "event time")


def encode_facts(
    graph: SemanticGraph,
    relation_ids: Sequence[str] = (),
    event_ids: Sequence[str] = (),
    extra_entity_ids: Sequence[str] = (),
) -> _Encoded:
    """Encode chosen relations and events (and extra entities) in the given order.

    Local ids follow first use: relations in order, then events, then ``extra_entity_ids``.
    """
    local: dict[str, int] = {}

    def use(entity_id: str) -> int:
        if entity_id not in local:
            local[entity_id] = len(local) + 1
        return local[entity_id]

    relation_lines = []
    for rid in relation_ids:
        rel = graph.relations[rid]
        relation_lines.append(f"#{use(rel.subject_id)} -{rel.predicate}-> #{use(rel.object_id)}")
    event_lines = []
    for vid in event_ids:
        ev = graph.events[vid]
        refs = ",".join(f"#{use(p)}" for p in ev.participant_ids)
        line = f"*{ev.label} ({refs})"
        if ev.time is not None:
            check_time(ev.time)
            line += f" @{ev.time}"
        event_lines.append(line)
    for eid in extra_entity_ids:
        use(eid)
    entity_lines = []
    for eid, n in local.items():
        entity = graph.entities[eid]
        check_name(entity.name)
        entity_lines.append(f"#{n} {entity.name} :{entity.type}")
    text = "\n".join([*entity_lines, *relation_lines, *event_lines])
    return _Encoded(text, local)


def select_facts(
    graph: SemanticGraph, entity_ids: Iterable[str] | None
) -> tuple[list[str], list[str], list[str]]:
    if entity_ids is None:
        return list(graph.relations), list(graph.events), []
    chosen = dict.fromkeys(entity_ids)
    for eid in chosen:
        if eid not in graph.entities:
            raise NotationError(f"entity_ids names {eid!r}, which is not in the graph")
    relations = [
        r.id for r in graph.relations.values() if r.subject_id in chosen and r.object_id in chosen
    ]
    events = [v.id for v in graph.events.values() if all(p in chosen for p in v.participant_ids)]
    return relations, events, list(chosen)


def encode_graph(graph: SemanticGraph, entity_ids: Iterable[str] | None = None) -> str:
    """Write a graph, or the sub-graph among ``entity_ids``, as notation.

    With ``entity_ids=None`` every relation and event is written and isolated entities are left
    out. With ``entity_ids``, the relations and events among those entities are written, and every
    named entity is declared even when it has no fact.

    Raises:
        NotationError: an entity name or event time holds a line break or is empty, or
            ``entity_ids`` names an entity not in the graph.

    Example:
        >>> g = SemanticGraph()
        >>> page, google = g.add_entity("Larry Page", "PERSON"), g.add_entity("Google", "ORG")
        >>> _ = g.add_relation(page, "found", google)
        >>> print(encode_graph(g))
        #1 Larry Page :PERSON
        #2 Google :ORG
        #1 -found-> #2
    """
    relations, events, extra = select_facts(graph, entity_ids)
    return encode_facts(graph, relations, events, extra).text


def parse_notation(text: str) -> ParsedNotation:
    """Read notation into entities, relations and events, checking the grammar in one pass.

    Raises:
        NotationError: (a ``ValueError``) with the 1-based line number, for a malformed line, a
            line out of order, a repeated id, or a reference to an undeclared entity.

    Example:
        >>> parsed = parse_notation("#1 Google :ORG\\n*ipo (#1) @2004-08-19")
        >>> parsed.events[0].time
        '2004-08-19'
    """
    if not isinstance(text, str):
        raise InputTypeError(f"parse_notation() takes a str, not {type(text).__name__}")
    result = ParsedNotation()
    section = 0  # 0 entities, 1 relations, 2 events: lines may only move forward
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw[:-1] if raw.endswith("\r") else raw
        if line.strip():
            section = _Line(result, number, line).read(section)
    return result


class _Line:
    """One non-blank line of notation, read into ``result``; its errors name it."""

    def __init__(self, result: ParsedNotation, number: int, line: str) -> None:
        self.result, self.number, self.line = result, number, line

    def read(self, section: int) -> int:
        """Add what the line says to the result and return the section it is in."""
        line, result, fail = self.line, self.result, self.fail
        if match := _RELATION_LINE.fullmatch(line):
            if section > 1:
                raise fail("relation line after an event line; relations come before events")
            predicate = match.group(2)
            if normalize_predicate(predicate) != predicate:
                raise fail(f"predicate {predicate!r} is not lowercase snake_case")
            result.relations.append(
                NotationRelation(self.ref(match.group(1)), predicate, self.ref(match.group(3)))
            )
            return 1
        if match := _ENTITY_LINE.fullmatch(line):
            if section > 0:
                raise fail("entity line after relation or event lines; declare entities first")
            local_id, name, type_ = self.local(match.group(1)), match.group(2), match.group(3)
            if type_ not in ENTITY_TYPES:
                raise fail(f"unknown type {type_!r}; use one of {', '.join(ENTITY_TYPES)}")
            if local_id in result.entities:
                raise fail(f"#{local_id} is declared twice")
            result.entities[local_id] = NotationEntity(local_id, name, type_)
            return section
        if match := _EVENT_LINE.fullmatch(line):
            label = match.group(1)
            if normalize_predicate(label) != label:
                raise fail(f"event label {label!r} is not lowercase snake_case")
            participants = tuple(self.ref(token[1:]) for token in match.group(2).split(","))
            result.events.append(NotationEvent(label, participants, match.group(3)))
            return 2
        raise fail(_explain(line))

    def fail(self, message: str) -> NotationError:
        return NotationError(message, line_number=self.number, line=self.line)

    def local(self, token: str) -> int:
        if len(token) > 18:  # also keeps Python's int-digits limit from raising without a line
            raise self.fail(f"local id #{token[:12]}... is too long; ids are small integers")
        return int(token)

    def ref(self, token: str) -> int:
        local_id = self.local(token)
        if local_id not in self.result.entities:
            raise self.fail(f"#{local_id} is used before it is declared on an entity line")
        return local_id


def _explain(line: str) -> str:
    if line.startswith("#") and " :" in line:
        return "malformed entity line; expected '#<id> <name> :<TYPE>'"
    if line.startswith("#") and "->" in line:
        return "malformed relation line; expected '#<id> -<predicate>-> #<id>'"
    if line.startswith("*"):
        return "malformed event line; expected '*<label> (#<id>,#<id>) @<time>'"
    return "not an entity, relation or event line"


_PREPOSITIONS = frozenset(
    [
        "of",
        "in",
        "on",
        "at",
        "by",
        "for",
        "to",
        "from",
        "with",
        "into",
        "onto",
        "as",
        "about",
        "after",
        "before",
        "during",
        "under",
        "over",
        "between",
        "against",
        "among",
        "near",
        "via",
    ]
)


def predicate_phrase(predicate: str) -> str:
    """The verb phrase :func:`decode` uses for a predicate.

    ``x_of`` becomes "is the x of"; any other predicate ending in a preposition gets "is"
    in front; everything else has its underscores turned into spaces.

    Example:
        >>> predicate_phrase("ceo_of"), predicate_phrase("headquarter_in"), predicate_phrase("found")
        ('is the ceo of', 'is headquarter in', 'found')
    """
    words = predicate.split("_")
    if len(words) >= 2 and words[-1] in _PREPOSITIONS:
        if words[-1] == "of":
            return "is the " + " ".join(words)
        return "is " + " ".join(words)
    return " ".join(words)


def decode(notation: str) -> str:
    """Turn notation into plain sentences: one per relation in order, then one per event.

    Example:
        >>> decode("#1 Sundar Pichai :PERSON\\n#2 Google :ORG\\n#1 -ceo_of-> #2")
        'Sundar Pichai is the ceo of Google.'
    """
    parsed = parse_notation(notation)
    names = {local_id: entity.name for local_id, entity in parsed.entities.items()}
    return _sentences(
        [(names[r.subject_id], r.predicate, names[r.object_id]) for r in parsed.relations],
        [(e.label, [names[p] for p in e.participant_ids], e.time) for e in parsed.events],
    )


def decode_facts(
    graph: SemanticGraph, relation_ids: Sequence[str] = (), event_ids: Sequence[str] = ()
) -> str:
    """``decode(encode_facts(graph, relation_ids, event_ids).text)`` without writing the
    notation and reading it back: the natural_language text is rendered about ten times a
    retrieval while the budget is searched, and the round trip's parse was 3 ms of it.

    Raises:
        NotationError: as :func:`encode_facts`, for a name or time notation cannot hold.
    """
    entities = graph.entities

    def name(entity_id: str) -> str:
        value = entities[entity_id].name
        check_name(value)
        return value

    relations = []
    for rid in relation_ids:
        rel = graph.relations[rid]
        relations.append((name(rel.subject_id), rel.predicate, name(rel.object_id)))
    events = []
    for vid in event_ids:
        ev = graph.events[vid]
        if ev.time is not None:
            check_time(ev.time)
        events.append((ev.label, [name(p) for p in ev.participant_ids], ev.time))
    return _sentences(relations, events)


def _sentences(
    relations: Sequence[tuple[str, str, str]],
    events: Sequence[tuple[str, Sequence[str], str | None]],
) -> str:
    """One sentence per relation (subject, predicate, object names) in order, then one per
    event (label, participant names, time)."""
    sentences = [f"{s} {predicate_phrase(p)} {o}." for s, p, o in relations]
    sentences.extend(_event_sentence(label, people, time) for label, people, time in events)
    return "\n".join(sentences)


def _event_sentence(label: str, people: Sequence[str], time: str | None) -> str:
    """An event as a sentence. Two participants read like a relation with its time, the form
    the built-in extractor's facts in time take ("Mara Voss was the ceo of Veltrix Robotics from
    2010 to 2019."): "was" once the period has a closed end, as its source bounds it; any other
    count names the label and who took part ("Ipo involving Google on 2004-08-19.")."""
    when = "" if time is None else " " + time_phrase(time)
    if len(people) == 2:
        phrase = predicate_phrase(label)
        period = read_period(time)
        if phrase.startswith("is ") and period is not None and period.end is not None:
            phrase = "was " + phrase[len("is ") :]
        return f"{people[0]} {phrase} {people[1]}{when}."
    joined = people[0] if len(people) == 1 else ", ".join(people[:-1]) + " and " + people[-1]
    return f"{label.replace('_', ' ').capitalize()} involving {joined}{when}."
