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


# Fields of RetrievalResult.to_dict() that are not metadata: the text itself and the question.
_NOT_METADATA = ("text", "notation", "question", "explanation", "token_model", "source_ids")


def block_node(result: noema.RetrievalResult, source_key: str = "source_ids") -> NodeWithScore:
    """The whole budgeted block as one node, scored by its best vector-search hit."""
    digest = hashlib.sha256(f"{result.question}\x1f{result.text}".encode()).hexdigest()[:16]
    data = result.to_dict()
    metadata = {k: v for k, v in data.items() if k not in _NOT_METADATA}
    metadata[source_key] = data["source_ids"]
    best = max((m.similarity for m in result.fact_matches), default=None)
    return _node(result.text, f"noema-{digest}", metadata, best)


def fact_nodes(kb: noema.KnowledgeBase, result: noema.RetrievalResult) -> list[NodeWithScore]:
    """One self-contained block per fact, in priority order; seeds carry their similarity."""
    similarity = {m.relation_id: m.similarity for m in result.fact_matches}
    # with explain=True every fact has the similarity of what chose it (fact or sentence vector)
    similarity.update(
        {e.fact_id: e.similarity for e in result.explanation or () if e.similarity is not None}
    )
    citations = result.to_dict()["citations"]
    nodes = []
    for rank, fact_id in enumerate(result.fact_ids, start=1):
        text = kb.render_fact(fact_id, result.format)
        metadata = {
            "fact_id": fact_id,
            "rank": rank,
            "source_ids": result.source_ids([fact_id]),
            "citations": citations[fact_id],
        }
        nodes.append(_node(text, fact_id, metadata, similarity.get(fact_id)))
    return nodes
