"""Round-trip validation: encode a graph, parse the notation back, and list what did not survive."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial

from noema.errors import NotationError
from noema.model.graph import SemanticGraph
from noema.model.notation import (
    NotationEvent,
    NotationRelation,
    check_name,
    check_time,
    encode_facts,
    parse_notation,
    select_facts,
)

__all__ = ["RoundTripReport", "check_round_trip"]


@dataclass(frozen=True)
class RoundTripReport:
    """The outcome of :func:`check_round_trip`.

    Attributes:
        ok: True when every entity, relation and event came back unchanged.
        notation: the notation that was produced.
        lost_entities: ``"name :TYPE"`` of entities whose name or type did not survive.
        lost_relations: ``"subject -predicate-> object"`` of relations that did not survive.
        lost_events: ``"*label (participants) @time"`` of events that did not survive.
    """

    ok: bool
    notation: str
    lost_entities: tuple[str, ...] = ()
    lost_relations: tuple[str, ...] = ()
    lost_events: tuple[str, ...] = ()


def check_round_trip(
    graph: SemanticGraph, entity_ids: Iterable[str] | None = None
) -> RoundTripReport:
    """Encode ``graph`` (or the sub-graph among ``entity_ids``), parse it, and compare.

    Entities whose names cannot be written as notation are reported as lost, with every fact
    that involves them, instead of stopping the check.

    Example:
        >>> g = SemanticGraph()
        >>> a, b = g.add_entity("Larry Page", "PERSON"), g.add_entity("Google", "ORG")
        >>> _ = g.add_relation(a, "found", b)
        >>> check_round_trip(g).ok
        True
    """
    relation_ids, event_ids, extra = select_facts(graph, entity_ids)
    unwritable = _unwritable_entities(graph, relation_ids, event_ids, extra)
    bad_times = _unwritable_times(graph, event_ids)
    kept_relations = [r for r in relation_ids if not unwritable.intersection(_ends(graph, r))]
    kept_events = [
        v
        for v in event_ids
        if v not in bad_times and not unwritable.intersection(graph.events[v].participant_ids)
    ]
    encoded = encode_facts(
        graph, kept_relations, kept_events, [e for e in extra if e not in unwritable]
    )
    parsed = parse_notation(encoded.text)

    lost_entities = [_show_entity(graph, e) for e in sorted(unwritable)]
    for eid, local_id in encoded.local_ids.items():
        entity = graph.entities[eid]
        back = parsed.entities.get(local_id)
        if back is None or (back.name, back.type) != (entity.name, entity.type):
            lost_entities.append(_show_entity(graph, eid))
    local = encoded.local_ids
    lost_relations = _lost(
        relation_ids,
        {r: _relation_line(graph, r, local) for r in kept_relations},
        parsed.relations,
        partial(_show_relation, graph),
    )
    lost_events = _lost(
        event_ids,
        {v: _event_line(graph, v, local) for v in kept_events},
        parsed.events,
        partial(_show_event, graph),
    )
    return RoundTripReport(
        ok=not (lost_entities or lost_relations or lost_events),
        notation=encoded.text,
        lost_entities=tuple(lost_entities),
        lost_relations=tuple(lost_relations),
        lost_events=tuple(lost_events),
    )


def _unwritable_entities(
    graph: SemanticGraph, relation_ids: list[str], event_ids: list[str], extra: list[str]
) -> set[str]:
    """The entities of the facts (and ``extra``) whose names notation cannot hold."""
    unwritable = set()
    for eid in {*extra, *(e for r in relation_ids for e in _ends(graph, r))} | {
        p for v in event_ids for p in graph.events[v].participant_ids
    }:
        try:
            check_name(graph.entities[eid].name)
        except NotationError:
            unwritable.add(eid)
    return unwritable


def _unwritable_times(graph: SemanticGraph, event_ids: list[str]) -> set[str]:
    """The events whose time notation cannot hold."""
    bad_times = set()
    for vid in event_ids:
        time = graph.events[vid].time
        if time is not None:
            try:
                check_time(time)
            except NotationError:
                bad_times.add(vid)
    return bad_times


def _lost(
    fact_ids: list[str],
    written: Mapping[str, Hashable],
    read_back: Iterable[Hashable],
    show: Callable[[str], str],
) -> list[str]:
    """The facts left out (not in ``written``), or not read back as written, each shown."""
    back = set(read_back)
    return [show(f) for f in fact_ids if f not in written or written[f] not in back]


def _relation_line(
    graph: SemanticGraph, relation_id: str, local: Mapping[str, int]
) -> NotationRelation:
    """The relation as its notation line should read back, by the entities' local ids."""
    rel = graph.relations[relation_id]
    return NotationRelation(local[rel.subject_id], rel.predicate, local[rel.object_id])


def _event_line(graph: SemanticGraph, event_id: str, local: Mapping[str, int]) -> NotationEvent:
    """The event as its notation line should read back, by the entities' local ids."""
    ev = graph.events[event_id]
    return NotationEvent(ev.label, tuple(local[p] for p in ev.participant_ids), ev.time)


def _ends(graph: SemanticGraph, relation_id: str) -> tuple[str, str]:
    rel = graph.relations[relation_id]
    return rel.subject_id, rel.object_id


def _show_entity(graph: SemanticGraph, entity_id: str) -> str:
    entity = graph.entities[entity_id]
    return f"{entity.name!r} :{entity.type}"


def _show_relation(graph: SemanticGraph, relation_id: str) -> str:
    rel = graph.relations[relation_id]
    return (
        f"{graph.entities[rel.subject_id].name!r} -{rel.predicate}-> "
        f"{graph.entities[rel.object_id].name!r}"
    )


def _show_event(graph: SemanticGraph, event_id: str) -> str:
    ev = graph.events[event_id]
    names = ", ".join(repr(graph.entities[p].name) for p in ev.participant_ids)
    return f"*{ev.label} ({names})" + (f" @{ev.time!r}" if ev.time is not None else "")
