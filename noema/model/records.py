"""The items of the data model, frozen: mentions, entities, relations, events, documents, and the
content-hash ids, text checks and JSON forms they share. :mod:`noema.model.graph` holds them together.

Ids are derived from content (``ent_``, ``rel_``, ``evt_``, ``doc_`` and a hash), so building the
same graph twice gives the same ids and the same JSON bytes. A relation's entities are its subject
and object, an event's its participants: :attr:`Relation.entity_ids` and :attr:`Event.entity_ids`
let code that does not care which kind of fact it holds treat both alike.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal, get_args

from noema.errors import GraphError, InputTypeError, OptionError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "ENTITY_TYPES",
    "LINE_BREAKS",
    "MERGE_RULES",
    "VALUE_TYPES",
    "Citation",
    "Document",
    "Entity",
    "EntityType",
    "Event",
    "Fact",
    "Mention",
    "MergeRecord",
    "MergeRule",
    "Relation",
    "make_event_id",
    "make_relation_id",
    "normalize_predicate",
    "read_merge_record",
]

EntityType = Literal["PERSON", "ORG", "GPE", "LOC", "DATE", "EVENT", "PRODUCT", "MONEY", "OTHER"]
ENTITY_TYPES: tuple[str, ...] = get_args(EntityType)
# Dates and amounts are attributes of things rather than things: the graph walk does not pass
# through them, embedding similarity does not merge them, and they never type a topic.
VALUE_TYPES = frozenset({"DATE", "MONEY"})

_NON_WORD = re.compile(r"[^\w]+")


# Characters str.splitlines() breaks at: a name, predicate or time holding one cannot be written
# on one notation line.
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def surrogate_at(text: str) -> int | None:
    """Where ``text`` holds a lone surrogate (a string no UTF-8 file can hold), else ``None``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


# How deep metadata may nest: the bundle writer (Python's json) and reader (orjson, 1,024 levels)
# have different limits, and what one accepts the other must too.
MAX_JSON_DEPTH = 64
# The integers the reader (orjson) reads back exactly: Python's json writes any integer, orjson
# reads one past 64 bits as a float (2**64 becomes 1.8446744073709552e+19) and one of 309 digits
# as infinity, which it refuses, so a bundle holding it would never open again.
JSON_INTEGERS = range(-(2**63), 2**64)
# The level a document's metadata object sits at in graph.json (the file's object, its
# "documents" list, the document): the metadata's own levels count from there.
METADATA_DEPTH = 4


def json_bytes(value: Any, *, depth: int = 1) -> bytes:
    """``value`` as the bundle writer writes JSON: UTF-8, sorted keys, no NaN or infinity.
    ``depth`` is the level ``value`` will sit at in the file it is written into.

    Raises:
        ValueError: what no bundle can hold: NaN or infinite numbers, integers outside
            :data:`JSON_INTEGERS`, lone surrogates, nesting deeper than :data:`MAX_JSON_DEPTH`,
            or a value that is not JSON (``TypeError``).
    """
    check_json_value(value, depth=depth)
    return json.dumps(
        value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")


def check_json_value(value: Any, *, depth: int = 1) -> None:
    """``OptionError`` for ``value`` nested deeper than :data:`MAX_JSON_DEPTH` (counting from
    ``depth``, the level ``value`` will sit at in the file) or holding an integer outside
    :data:`JSON_INTEGERS`; iteratively, so a hostile depth cannot exhaust the stack while being
    checked."""
    stack: list[tuple[Any, int]] = [(value, depth)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[Any] = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            if isinstance(item, int) and item not in JSON_INTEGERS:
                # its bit length, not its digits: str() refuses integers over 4,300 digits
                raise OptionError(
                    f"an integer of {item.bit_length()} bits is outside the 64-bit range a "
                    "bundle reads back exactly; store it as a string"
                )
            continue
        if depth > MAX_JSON_DEPTH:
            raise OptionError(f"nested deeper than {MAX_JSON_DEPTH} levels")
        stack.extend((child, depth + 1) for child in children)


def one_line(value: Any, what: str) -> str:
    """``value`` as a string notation can hold on one line, else :class:`GraphError`."""
    text = read_str(value)
    at = surrogate_at(text)
    if at is not None:
        raise GraphError(f"{what} {text!r} holds a lone surrogate at index {at}")
    if not text.strip():
        raise GraphError(f"{what} {text!r} is empty")
    if LINE_BREAKS.intersection(text):
        raise GraphError(f"{what} {text!r} contains a line break")
    return text


def normalize_predicate(text: str) -> str:
    """Turn a predicate or event label into lowercase snake_case.

    Example:
        >>> normalize_predicate("CEO of")
        'ceo_of'
    """
    return _NON_WORD.sub("_", text.strip().lower()).strip("_")


def digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


def make_relation_id(subject_id: str, predicate: str, object_id: str) -> str:
    """The id a relation gets: a hash of its ends and normalized predicate, so equal facts share it."""
    return "rel_" + digest(subject_id, normalize_predicate(predicate), object_id)


def make_event_id(label: str, participant_ids: Sequence[str], time: str | None) -> str:
    """The id an event gets: a hash of its normalized label, participants and time."""
    return "evt_" + digest(normalize_predicate(label), *participant_ids, time or "")


@dataclass(frozen=True, slots=True, order=True)
class Mention:
    """Where an item was found: a document id and a character span ``[start, end)``."""

    document_id: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Citation:
    """Where a fact came from: the document, the character span and the text of that span
    (for relations the parser found, the whole sentence). ``text`` is empty when the graph no
    longer holds the document."""

    document_id: str
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Entity:
    """A named thing with one of the nine types, its other surface forms and its mentions."""

    id: str
    name: str
    type: EntityType
    aliases: tuple[str, ...] = ()
    mentions: tuple[Mention, ...] = ()
    confidence: float = 1.0


@dataclass(frozen=True, slots=True)
class Relation:
    """``subject -predicate-> object`` between two entities."""

    id: str
    subject_id: str
    predicate: str
    object_id: str
    mentions: tuple[Mention, ...] = ()
    confidence: float = 1.0

    @property
    def entity_ids(self) -> tuple[str, str]:
        """The subject and the object."""
        return (self.subject_id, self.object_id)


@dataclass(frozen=True, slots=True)
class Event:
    """A labelled fact involving one or more entities, optionally at a time."""

    id: str
    label: str
    participant_ids: tuple[str, ...]
    time: str | None = None
    mentions: tuple[Mention, ...] = ()
    confidence: float = 1.0

    @property
    def entity_ids(self) -> tuple[str, ...]:
        """The participants."""
        return self.participant_ids


# A relation or an event: what notation writes as one fact line, and the fact index holds.
Fact = Relation | Event


@dataclass(frozen=True, slots=True)
class Document:
    """A source text. ``id`` defaults to a hash of the text, so re-ingesting it is recognised."""

    text: str
    id: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise InputTypeError(f"Document text must be a string, got {type(self.text).__name__}")
        at = surrogate_at(self.text)
        if at is not None:
            raise OptionError(
                f"Document text holds a lone surrogate at index {at}, which is not valid "
                "Unicode; decode the source with errors='replace'"
            )
        if not self.id:
            object.__setattr__(self, "id", "doc_" + digest(self.text))

    def __hash__(self) -> int:
        # by id and text: the metadata mapping is not hashable, and equal documents share both
        return hash((self.id, self.text))


# Why an entry of the merge log is there: the canonicalizer's three rules, a merge the user
# asked for by name, and a type the user changed.
MergeRule = Literal["exact", "embedding", "type", "user", "retype"]
MERGE_RULES: tuple[str, ...] = get_args(MergeRule)


@dataclass(frozen=True)
class MergeRecord:
    """One entry of the merge log: which surface form joined which entity, by which rule, at
    what similarity; or a change of an entity's type.

    ``rule`` says why: ``"exact"`` and ``"embedding"`` are the canonicalizer's merges within one
    type (``type`` is that type); ``"type"`` joined one name NER typed two ways to the type most
    of its mentions have, and ``"user"`` is a merge asked for with ``merge_entities``: for both,
    ``type`` is the type the merged entity had, which ``split_entity`` restores. ``"retype"``
    records ``retype``: the entity ``entity_id`` (``canonical_name`` and ``merged_name`` are both
    its name) had type ``type`` before, and retyping it back to that type undoes the change.
    """

    entity_id: str
    canonical_name: str
    merged_name: str
    type: str
    rule: MergeRule
    similarity: float | None
    document_ids: tuple[str, ...]


def union_mentions(*groups: Iterable[Mention]) -> tuple[Mention, ...]:
    return tuple(sorted({m for group in groups for m in group}))


def updated_mentions(entity: Entity, mentions: Sequence[Mention]) -> tuple[Mention, ...]:
    # the canonicalizer passes the stored mentions followed by the new ones
    kept = entity.mentions
    if tuple(mentions[: len(kept)]) == kept:
        return add_mentions(kept, mentions[len(kept) :])
    return union_mentions(mentions)


def add_mentions(existing: tuple[Mention, ...], new: Iterable[Mention]) -> tuple[Mention, ...]:
    """``existing`` (sorted, distinct) with ``new`` added. Mentions mostly arrive in document
    order, after everything stored: those are appended without sorting the whole tuple again,
    which made a fact repeated n times in a text cost n^2 log n (8,000 repeats: 148 s)."""
    fresh = sorted(set(new))
    if not fresh:
        return existing
    if not existing or existing[-1] < fresh[0]:
        return existing + tuple(fresh)
    return union_mentions(existing, fresh)


def check_confidence(confidence: float) -> float:
    if not 0.0 <= confidence <= 1.0:
        raise GraphError(f"confidence must be between 0 and 1, got {confidence!r}")
    return float(confidence)


# -- JSON forms (read back with every check the constructors and SemanticGraph make) ----------
def mention_to_list(m: Mention) -> list[Any]:
    return [m.document_id, m.start, m.end]


def read_mentions(raw: Any, shared: dict[str, str]) -> tuple[Mention, ...]:
    """Mentions from ``[document_id, start, end]`` lists; ``shared`` interns the document ids."""
    out = []
    for item in raw:
        doc, start, end = item
        if any(isinstance(n, bool) or not isinstance(n, int) for n in (start, end)):
            raise GraphError(f"mention span {item!r} is not two integers")
        out.append(Mention(shared.setdefault(read_str(doc), doc), start, end))
    return tuple(out)


def read_str(value: Any) -> str:
    if not isinstance(value, str):
        raise GraphError(f"expected a string, got {type(value).__name__} {value!r:.60}")
    return value


def read_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GraphError(f"expected a number, got {type(value).__name__} {value!r:.60}")
    return float(value)


def record_to_dict(record: DataclassInstance) -> dict[str, Any]:
    """A frozen record's fields in order, as JSON holds them: tuples become lists and each
    mention ``[document_id, start, end]``. Used for entities, relations, events and merges."""
    out: dict[str, Any] = {}
    for f in fields(record):
        value = getattr(record, f.name)
        if f.name == "mentions":
            value = [mention_to_list(m) for m in value]
        elif isinstance(value, tuple):
            value = list(value)
        out[f.name] = value
    return out


def read_entity(e: Mapping[str, Any], shared: dict[str, str]) -> Entity:
    """An entity from :func:`record_to_dict` output, with the checks ``add_entity`` makes."""
    eid = read_str(e["id"])
    if e["type"] not in ENTITY_TYPES:
        raise GraphError(f"entity {eid!r} has unknown type {e['type']!r}")
    return Entity(
        eid,
        one_line(e["name"], f"entity {eid!r} name"),
        e["type"],
        tuple(one_line(a, f"entity {eid!r} alias") for a in e["aliases"]),
        read_mentions(e["mentions"], shared),
        check_confidence(read_float(e["confidence"])),
    )


def read_relation(
    r: Mapping[str, Any], shared: dict[str, str], entities: Mapping[str, Entity]
) -> Relation:
    """A relation from :func:`record_to_dict` output between ``entities`` (whose id strings
    it shares), with the checks ``add_relation`` makes and its id checked against its content."""
    rid = read_str(r["id"])
    subject, obj = read_str(r["subject_id"]), read_str(r["object_id"])
    predicate = _snake_case(r["predicate"], f"relation {rid!r} has predicate")
    for ref in (subject, obj):
        if ref not in entities:
            raise GraphError(f"relation {rid!r} refers to unknown entity {ref!r}")
    if rid != make_relation_id(subject, predicate, obj):
        raise GraphError(f"relation id {rid!r} is not the id of its subject, predicate and object")
    return Relation(
        rid,
        entities[subject].id,
        shared.setdefault(predicate, predicate),
        entities[obj].id,
        read_mentions(r["mentions"], shared),
        check_confidence(read_float(r["confidence"])),
    )


def read_event(
    v: Mapping[str, Any], shared: dict[str, str], entities: Mapping[str, Entity]
) -> Event:
    """An event from :func:`record_to_dict` output, checked as :func:`read_relation` checks."""
    vid = read_str(v["id"])
    label = _snake_case(v["label"], f"event {vid!r} has label")
    participants = tuple(read_str(p) for p in v["participant_ids"])
    if not participants or len(set(participants)) != len(participants):
        raise GraphError(f"event {vid!r} needs distinct participants, got {participants!r}")
    for ref in participants:
        if ref not in entities:
            raise GraphError(f"event {vid!r} refers to unknown entity {ref!r}")
    time = None if v["time"] is None else one_line(v["time"], f"event {vid!r} time")
    if vid != make_event_id(label, participants, time):
        raise GraphError(f"event id {vid!r} is not the id of its label, participants and time")
    return Event(
        vid,
        label,
        tuple(entities[p].id for p in participants),
        time,
        read_mentions(v["mentions"], shared),
        check_confidence(read_float(v["confidence"])),
    )


def _snake_case(value: Any, what: str) -> str:
    text = read_str(value)
    if not text or normalize_predicate(text) != text:
        raise GraphError(f"{what} {text!r}, not in snake_case")
    return text


def read_merge_record(raw: Any) -> MergeRecord:
    """A :class:`MergeRecord` from its JSON form (:func:`record_to_dict`)."""
    if not isinstance(raw, dict):
        raise InputTypeError("merge_log entries must be objects")
    if raw["rule"] not in MERGE_RULES:
        raise OptionError(
            f"unknown merge rule {raw['rule']!r}; this Noema knows {', '.join(MERGE_RULES)}"
        )
    similarity = raw["similarity"]
    if similarity is not None and not isinstance(similarity, (int, float)):
        raise InputTypeError("merge similarity must be a number or null")
    return MergeRecord(
        entity_id=str(raw["entity_id"]),
        canonical_name=str(raw["canonical_name"]),
        merged_name=str(raw["merged_name"]),
        type=str(raw["type"]),
        rule=raw["rule"],
        similarity=similarity,
        document_ids=tuple(str(d) for d in raw["document_ids"]),
    )
