"""Noema results as LlamaIndex nodes; Noema's metadata is kept out of the LLM context."""

from __future__ import annotations

import hashlib
from typing import Any

from llama_index.core.schema import NodeWithScore, TextNode

import noema


def _node(text: str, node_id: str, metadata: dict[str, Any], score: float | None) -> NodeWithScore:
    keys = list(metadata)
    node = TextNode(
        text=text,
        id_=node_id,
        metadata=metadata,
        excluded_llm_metadata_keys=keys,
        excluded_embed_metadata_keys=keys,
    )
    return NodeWithScore(node=node, score=score)


def _sources(result: noema.RetrievalResult, fact_ids: Any) -> list[str]:
    return sorted({c.document_id for f in fact_ids for c in result.citations.get(f, ())})


def _citations(result: noema.RetrievalResult, fact_id: str) -> list[dict[str, Any]]:
    return [
        {"document_id": c.document_id, "start": c.start, "end": c.end, "text": c.text}
        for c in result.citations.get(fact_id, ())
    ]


def block_node(result: noema.RetrievalResult, source_key: str = "source_ids") -> NodeWithScore:
    """The whole budgeted block as one node, scored by its best vector-search hit."""
    digest = hashlib.sha256(f"{result.question}\x1f{result.text}".encode()).hexdigest()[:16]
    metadata = {
        "entity_ids": list(result.entity_ids),
        "relation_ids": list(result.relation_ids),
        "event_ids": list(result.event_ids),
        "token_count": result.token_count,
        "truncated": result.truncated,
        "fact_matches": [
            {"relation_id": m.relation_id, "similarity": m.similarity} for m in result.fact_matches
        ],
        source_key: _sources(result, result.fact_ids),
        "citations": {f: _citations(result, f) for f in result.fact_ids},
    }
    best = max((m.similarity for m in result.fact_matches), default=None)
    return _node(result.text, f"noema-{digest}", metadata, best)


def fact_nodes(kb: noema.KnowledgeBase, result: noema.RetrievalResult) -> list[NodeWithScore]:
    """One self-contained block per fact, in priority order; seeds carry their similarity."""
    similarity = {m.relation_id: m.similarity for m in result.fact_matches}
    nodes = []
    for rank, fact_id in enumerate(result.fact_ids, start=1):
        block = kb.fact_text(fact_id)
        text = block if result.format == "notation" else noema.decode(block)
        metadata = {
            "fact_id": fact_id,
            "rank": rank,
            "source_ids": _sources(result, [fact_id]),
            "citations": _citations(result, fact_id),
        }
        nodes.append(_node(text, fact_id, metadata, similarity.get(fact_id)))
    return nodes
