"""A picture of a sub-graph: self-contained HTML with inline SVG, no scripts and no network.

Used by ``_repr_html_`` in notebooks. The layout is a circle in notation order, so the same
notation always gives the same picture.
"""

from __future__ import annotations

import html
import math

from noema.model.graph import SemanticGraph
from noema.model.notation import ParsedNotation, encode_graph, parse_notation

__all__ = ["graph_html", "render_html"]

_COLORS = {
    "PERSON": "#4e79a7",
    "ORG": "#f28e2b",
    "GPE": "#59a14f",
    "LOC": "#76b7b2",
    "DATE": "#b07aa1",
    "EVENT": "#e15759",
    "PRODUCT": "#edc948",
    "MONEY": "#9c755f",
    "OTHER": "#bab0ac",
}


def graph_html(graph: SemanticGraph, *, title: str = "") -> str:
    """The whole of ``graph`` as :func:`render_html` draws its notation, without the table.

    Example:
        >>> "<h4>a graph</h4>" in graph_html(SemanticGraph(), title="a graph")
        True
    """
    return render_html(parse_notation(encode_graph(graph)), title=title, table=False)


def render_html(
    parsed: ParsedNotation, *, title: str = "", table: bool = True, max_entities: int = 150
) -> str:
    """HTML showing the entities as coloured nodes and the relations as labelled arrows.

    Example:
        >>> from noema.model.notation import parse_notation
        >>> "<svg" in render_html(parse_notation("#1 A :ORG\\n#2 B :GPE\\n#1 -in-> #2"))
        True
    """
    ids = list(parsed.entities)[:max_entities]
    svg = _svg(parsed, ids)
    out = ['<div class="noema-graph">']
    if title:
        out.append(f"<h4>{html.escape(title)}</h4>")
    if len(parsed.entities) > len(ids):
        out.append(f"<p>showing {len(ids)} of {len(parsed.entities)} entities</p>")
    out.append(svg)
    if table and parsed.relations:
        rows = "".join(
            f"<tr><td>{html.escape(parsed.entities[r.subject_id].name)}</td><td>{html.escape(r.predicate)}</td>"
            f"<td>{html.escape(parsed.entities[r.object_id].name)}</td></tr>"
            for r in parsed.relations
        )
        out.append(
            f"<table><thead><tr><th>subject</th><th>predicate</th><th>object</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    out.append("</div>")
    return "".join(out)


def _svg(parsed: ParsedNotation, ids: list[int]) -> str:
    """The entities of ``ids`` on a circle in that order, with the relations among them."""
    shown = set(ids)
    size = 260 + 14 * len(ids)
    radius = size / 2 - 90
    center = size / 2
    position = {}
    for n, local_id in enumerate(ids):
        angle = 2 * math.pi * n / max(len(ids), 1) - math.pi / 2
        position[local_id] = (center + radius * math.cos(angle), center + radius * math.sin(angle))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size:.0f}" height="{size:.0f}" '
        f'viewBox="0 0 {size:.0f} {size:.0f}" font-family="sans-serif" font-size="11">',
        '<defs><marker id="noema-arrow" viewBox="0 0 10 10" refX="16" refY="5" markerWidth="6" '
        'markerHeight="6" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#777"/></marker></defs>',
    ]
    for rel in parsed.relations:
        if rel.subject_id not in shown or rel.object_id not in shown:
            continue
        (x1, y1), (x2, y2) = position[rel.subject_id], position[rel.object_id]
        parts.append(
            f'<line class="edge" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#999" '
            'marker-end="url(#noema-arrow)"/>'
        )
        parts.append(
            f'<text class="edge-label" x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2 - 3:.1f}" fill="#555" '
            f'text-anchor="middle">{html.escape(rel.predicate)}</text>'
        )
    for local_id in ids:
        entity = parsed.entities[local_id]
        x, y = position[local_id]
        color = _COLORS.get(entity.type, "#bab0ac")
        parts.append(
            f'<g class="node" data-type="{entity.type}"><circle cx="{x:.1f}" cy="{y:.1f}" r="9" fill="{color}">'
            f"<title>{html.escape(entity.name)} :{entity.type}</title></circle>"
            f'<text x="{x:.1f}" y="{y + 21:.1f}" text-anchor="middle">{html.escape(entity.name)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
