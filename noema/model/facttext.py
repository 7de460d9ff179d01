"""What a fact's vector is embedded from: a deterministic rendering of its notation.

A fact is embedded as its notation block decoded to a plain sentence ("Sundar Pichai is the ceo
of Google."), not as the block itself. The two say the same thing, but the block spends about
2.3 times the model's tokens on local ids and type tags (25.3 word pieces per fact on the
HotpotQA pool against 11.1), and embedding cost grows with tokens. The bundle manifest records
:data:`FACT_RENDERING`; a bundle written with another rendering has its fact vectors rebuilt
rather than mixed with these.
"""

from __future__ import annotations

from noema.model.graph import SemanticGraph
from noema.model.notation import decode_facts, encode_facts

__all__ = ["FACT_RENDERING", "NOTATION_RENDERING", "fact_block", "fact_text"]

FACT_RENDERING = "decoded notation sentence"
# what bundles written before the manifest named a rendering were embedded from
NOTATION_RENDERING = "notation block"


def fact_block(graph: SemanticGraph, fact_id: str) -> str:
    """One relation or event of ``graph`` on its own, as a notation block."""
    if fact_id in graph.relations:
        return encode_facts(graph, [fact_id]).text
    return encode_facts(graph, (), [fact_id]).text


def fact_text(graph: SemanticGraph, fact_id: str) -> str:
    """The text a relation or event of ``graph`` is embedded as.

    Example:
        >>> graph = SemanticGraph()
        >>> a, b = graph.add_entity("Sundar Pichai", "PERSON"), graph.add_entity("Google", "ORG")
        >>> fact_text(graph, graph.add_relation(a, "ceo_of", b))
        'Sundar Pichai is the ceo of Google.'
    """
    if fact_id in graph.relations:
        return decode_facts(graph, [fact_id])
    return decode_facts(graph, (), [fact_id])
