"""Retrieval filters: which facts a retrieval may use, checked before seeds are chosen and during
expansion. A filter only ever narrows; an unknown field or a wrong value type is an error."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from noema.errors import OptionError, quote_value
from noema.model.graph import Event, SemanticGraph
from noema.model.records import ENTITY_TYPES
from noema.model.roles import is_role, taken_then
from noema.model.times import Period, read_period, standing_period
from noema.retrieval.tenures import PARTINGS, known_end, known_period

__all__ = ["FILTER_FIELDS", "PARTINGS", "FactFilter", "check_filters", "standing"]

FILTER_FIELDS = {
    "entity_types": "list of entity types; every entity of the fact must have one of them",
    "predicates": "list of predicates (or event labels) the fact must have",
    "document_ids": "list of document ids; the fact must be mentioned in one of them",
    "metadata": "mapping of document metadata key -> value; the fact must be mentioned in a matching document",
}


def _strings(name: str, value: Any) -> frozenset[str]:
    if isinstance(value, str) or not isinstance(value, (list, tuple, set, frozenset)):
        raise OptionError(f"filter {name!r} must be a list of strings, got {quote_value(value)}")
    if not all(isinstance(v, str) for v in value):
        raise OptionError(f"filter {name!r} must be a list of strings, got {quote_value(value)}")
    return frozenset(value)


@dataclass(frozen=True)
class FactFilter:
    """A parsed, validated ``filters=`` argument.

    ``valid_on`` is the ``as_of`` option's day (or month, or year): an event whose ISO time
    does not overlap it is refused, where a single date stands from then on (a founding in 1993
    is still so in 2020, and not yet in 1992) until the two it joins part (see
    :func:`standing`); a relation, or an event with no ISO time, is not, unless it holds a role
    whose end the graph knows (:func:`noema.retrieval.tenures.known_end`) before that day.

    Example:
        >>> FactFilter.parse({"entity_types": ["PERSON", "ORG"], "predicates": ["found"]}).predicates
        frozenset({'found'})
    """

    entity_types: frozenset[str] | None = None
    predicates: frozenset[str] | None = None
    document_ids: frozenset[str] | None = None
    metadata: tuple[tuple[str, Any], ...] | None = None
    valid_on: Period | None = None

    @classmethod
    def parse(cls, filters: Mapping[str, Any] | None) -> FactFilter | None:
        """Validate ``filters``; raises ``ValueError`` naming the valid fields and value types."""
        if filters is None:
            return None
        if not isinstance(filters, Mapping):
            raise OptionError(f"filters must be a dict, got {type(filters).__name__}")
        unknown = sorted(set(filters) - set(FILTER_FIELDS))
        if unknown:
            valid = "; ".join(f"{k}: {v}" for k, v in FILTER_FIELDS.items())
            raise OptionError(
                f"unknown filter field {quote_value(unknown[0])}; valid fields are {valid}"
            )
        types = predicates = documents = None
        metadata = None
        if "entity_types" in filters:
            types = _strings("entity_types", filters["entity_types"])
            bad = sorted(types - set(ENTITY_TYPES))
            if bad:
                raise OptionError(
                    f"unknown entity type {quote_value(bad[0])} in filters; use {', '.join(ENTITY_TYPES)}"
                )
        if "predicates" in filters:
            predicates = _strings("predicates", filters["predicates"])
        if "document_ids" in filters:
            documents = _strings("document_ids", filters["document_ids"])
        if "metadata" in filters:
            raw = filters["metadata"]
            if not isinstance(raw, Mapping) or not all(isinstance(k, str) for k in raw):
                raise OptionError(
                    f"filter 'metadata' must be a mapping of string keys to values, got {quote_value(raw)}"
                )
            if not all(isinstance(v, (str, int, float, bool)) or v is None for v in raw.values()):
                raise OptionError(
                    "filter 'metadata' values must be strings, numbers, booleans or None"
                )
            metadata = tuple(sorted(raw.items()))
        return cls(types, predicates, documents, metadata)

    def allows(self, graph: SemanticGraph, fact_id: str) -> bool:
        """True when the fact passes every given condition."""
        rel = graph.relations.get(fact_id)
        if rel is not None:
            entity_ids: tuple[str, ...] = (rel.subject_id, rel.object_id)
            label, mentions = rel.predicate, rel.mentions
            if self.valid_on is not None and self.valid_on.start is not None:
                # "Graham Tulley is the manager" where another document says he left in 2018
                ended = known_end(graph, fact_id)
                if ended is not None and ended < self.valid_on.start:
                    return False
        else:
            event = graph.events[fact_id]
            entity_ids, label, mentions = event.participant_ids, event.label, event.mentions
            if self.valid_on is not None:
                period = standing(graph, event)
                if period is not None and not period.overlaps(self.valid_on):
                    return False
        if self.entity_types is not None and any(
            graph.entities[e].type not in self.entity_types for e in entity_ids
        ):
            return False
        if self.predicates is not None and label not in self.predicates:
            return False
        if self.document_ids is not None or self.metadata is not None:
            return any(self._document_allowed(graph, m.document_id) for m in mentions)
        return True

    def _document_allowed(self, graph: SemanticGraph, document_id: str) -> bool:
        if self.document_ids is not None and document_id not in self.document_ids:
            return False
        if self.metadata is not None:
            document = graph.documents.get(document_id)
            if document is None:
                return False
            return all(
                key in document.metadata and document.metadata[key] == value
                for key, value in self.metadata
            )
        return True


def check_filters(filters: Mapping[str, Any] | None) -> None:
    """Check a ``filters=`` mapping as :meth:`noema.KnowledgeBase.retrieve` would, before any
    retrieval: for adapters and servers that take filters once and use them on every call.

    Raises:
        ValueError: an unknown field or a value of the wrong type, naming the valid fields.

    Example:
        >>> check_filters({"metadata": {"lang": "en"}})
        >>> check_filters({"lang": "en"})
        Traceback (most recent call last):
        ...
        noema.errors.OptionError: unknown filter field 'lang'; valid fields are entity_types: ...
    """
    FactFilter.parse(filters)


def standing(graph: SemanticGraph, event: Event) -> Period | None:
    """The days on which ``event`` stands (see :func:`noema.model.times.standing_period`), and
    where it is at a single date, no longer once its two ends part: "built in 1874 for Silas
    Ondry" stands until "Ondry sold the house in 1902", and the sale itself only on its date
    (in 1920 it is not what holds between the two).

    A role is a state, not an act: at a single date ("Present: Philippa Rourke (chair)" in the
    minutes of 30 May 2018) it held then, having begun at some time the fact does not say, so
    it stands before that date too (not a role taken then: "signed for Arvik United in 2015");
    a role at one date or open at its end stands until the end the graph knows of it
    (:func:`noema.retrieval.tenures.known_period`)."""
    period = standing_period(event.time)
    if period is None or period.start is None:
        return period
    if is_role(event.label) and len(event.participant_ids) == 2 and period.end is None:
        known = known_period(graph, event.id)
        once = "/" not in (event.time or "")
        begun = period.start if not once or taken_then(event.label) else None
        return Period(begun, known.end if known is not None else None)
    if "/" in (event.time or "/"):
        return period
    if event.label in PARTINGS:
        return read_period(event.time)
    ends = set(event.participant_ids)
    if len(ends) != 2:
        return period
    # the facts of the end with fewer (a town in thousands of facts, a house in three)
    facts = min((graph.facts_of(end) for end in event.participant_ids), key=len)
    parted = [
        when.end
        for fact_id in facts
        if isinstance(other := graph.fact(fact_id), Event)
        and other.label in PARTINGS
        and set(other.participant_ids) == ends
        and (when := read_period(other.time)) is not None
        and when.start is not None
        and when.end is not None
        and when.start > period.start
    ]
    return Period(period.start, min(parted)) if parted else period
