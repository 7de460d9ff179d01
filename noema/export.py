"""Export a graph for other tools: GraphML (yEd, Gephi, networkx.read_graphml)."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape as _escape
from xml.sax.saxutils import quoteattr as _quoteattr

from noema.model.graph import SemanticGraph

__all__ = ["to_graphml"]

# Characters XML 1.0 cannot hold at all, even escaped: C0 controls but tab, line feed and carriage
# return, lone surrogates, U+FFFE and U+FFFF. Names may carry them; they are replaced with U+FFFD.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(text: str) -> str:
    return _escape(_NOT_XML.sub("\ufffd", text))


def _attr(text: str) -> str:
    return _quoteattr(_NOT_XML.sub("\ufffd", text))


def to_graphml(graph: SemanticGraph) -> str:
    """The graph as GraphML: entities are nodes (name, type), relations are directed edges
    (predicate); events become nodes of type ``event`` linked to their participants.

    Example:
        >>> g = SemanticGraph()
        >>> a, b = g.add_entity("A", "ORG"), g.add_entity("B", "GPE")
        >>> _ = g.add_relation(a, "in", b)
        >>> "<edge" in to_graphml(g)
        True
    """
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
        '  <key id="name" for="node" attr.name="name" attr.type="string"/>',
        '  <key id="type" for="node" attr.name="type" attr.type="string"/>',
        '  <key id="time" for="node" attr.name="time" attr.type="string"/>',
        '  <key id="predicate" for="edge" attr.name="predicate" attr.type="string"/>',
        '  <graph id="noema" edgedefault="directed">',
    ]
    for entity in graph.entities.values():
        lines.append(
            f'    <node id={_attr(entity.id)}><data key="name">{_text(entity.name)}</data>'
            f'<data key="type">{entity.type}</data></node>'
        )
    for rel in graph.relations.values():
        lines.append(
            f"    <edge id={_attr(rel.id)} source={_attr(rel.subject_id)} target={_attr(rel.object_id)}>"
            f'<data key="predicate">{_text(rel.predicate)}</data></edge>'
        )
    for event in graph.events.values():
        time = f'<data key="time">{_text(event.time)}</data>' if event.time is not None else ""
        lines.append(
            f'    <node id={_attr(event.id)}><data key="name">{_text(event.label)}</data>'
            f'<data key="type">event</data>{time}</node>'
        )
        for n, participant in enumerate(event.participant_ids):
            lines.append(
                f"    <edge id={_attr(f'{event.id}-{n}')} source={_attr(event.id)} "
                f'target={_attr(participant)}><data key="predicate">participant</data></edge>'
            )
    lines += ["  </graph>", "</graphml>", ""]
    return "\n".join(lines)
