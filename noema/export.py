"""Export a graph for other tools: GraphML (yEd, Gephi, networkx.read_graphml)."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from noema.graph import SemanticGraph

__all__ = ["to_graphml"]


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
            f'    <node id={quoteattr(entity.id)}><data key="name">{escape(entity.name)}</data>'
            f'<data key="type">{entity.type}</data></node>'
        )
    for rel in graph.relations.values():
        lines.append(
            f"    <edge id={quoteattr(rel.id)} source={quoteattr(rel.subject_id)} target={quoteattr(rel.object_id)}>"
            f'<data key="predicate">{escape(rel.predicate)}</data></edge>'
        )
    for event in graph.events.values():
        time = f'<data key="time">{escape(event.time)}</data>' if event.time is not None else ""
        lines.append(
            f'    <node id={quoteattr(event.id)}><data key="name">{escape(event.label)}</data>'
            f'<data key="type">event</data>{time}</node>'
        )
        for n, participant in enumerate(event.participant_ids):
            lines.append(
                f"    <edge id={quoteattr(f'{event.id}-{n}')} source={quoteattr(event.id)} "
                f'target={quoteattr(participant)}><data key="predicate">participant</data></edge>'
            )
    lines += ["  </graph>", "</graphml>", ""]
    return "\n".join(lines)
