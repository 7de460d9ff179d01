"""Noema results as LlamaIndex nodes, each a map from one of the result's views
(:meth:`noema.RetrievalResult.fact_views`, ``block_views``, ``block_view``); Noema's metadata
is kept out of the LLM context."""

from __future__ import annotations

import hashlib
from typing import Any

from llama_index.core.schema import NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode

import noema

# Fields of RetrievalResult.to_dict() that are not metadata: the text itself and the question.
_NOT_METADATA = ("text", "notation", "question", "explanation", "token_model", "source_ids")


def _node(
    view: noema.FactView | noema.BlockView,
    node_id: str,
    metadata: dict[str, Any],
    score: float | None,
) -> NodeWithScore:
    """A node of the view's text, whose SOURCE relationship is the view's source document."""
    source_id = view.source_id
    source = view.sources[source_id] if source_id is not None else None
    metadata = {**_shared_metadata(view), **metadata}
    keys = list(metadata)
    node = TextNode(
        text=view.text,
        id_=node_id,
        metadata=metadata,
        excluded_llm_metadata_keys=keys,
        excluded_embed_metadata_keys=keys,
    )
    if source_id is not None and source is not None:
        # what LlamaIndex reads as ref_doc_id: the document the text came from, with its metadata
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(
            node_id=source_id, metadata=source
        )
    return NodeWithScore(node=node, score=score)


def _shared_metadata(view: noema.FactView | noema.BlockView) -> dict[str, Any]:
    """The source documents' own metadata (a reader's ``file_name``...) on a node, as the
    LangChain adapter's Documents have it: what all of its sources agree on, so a node drawn
    from several files names none of them as its ``file_name``; ``file_names`` lists them all,
    in ``source_ids`` order. Noema's own fields win a clash."""
    sources = [view.sources[i] for i in view.source_ids if i in view.sources]
    if not sources:
        return {}
    first, rest = sources[0], sources[1:]
    shared = {k: v for k, v in first.items() if all(k in s and s[k] == v for s in rest)}
    names = [s["file_name"] for s in sources if isinstance(s.get("file_name"), str)]
    if len(sources) > 1 and names:
        shared["file_names"] = list(dict.fromkeys(names))
    return shared


def block_node(
    result: noema.RetrievalResult, graph: noema.SemanticGraph, source_key: str = "source_ids"
) -> NodeWithScore:
    """The whole budgeted block as one node, scored by its best vector-search hit."""
    digest = hashlib.sha256(f"{result.question}\x1f{result.text}".encode()).hexdigest()[:16]
    data = result.to_dict()
    metadata = {k: v for k, v in data.items() if k not in _NOT_METADATA}
    metadata[source_key] = data["source_ids"]
    best = max((m.similarity for m in result.fact_matches), default=None)
    return _node(result.block_view(graph), f"noema-{digest}", metadata, best)


def fact_nodes(
    graph: noema.SemanticGraph, result: noema.RetrievalResult, k: int | None = None
) -> list[NodeWithScore]:
    """One self-contained block per fact, in priority order (the first ``k``). A node's score
    falls in that order (:meth:`noema.RetrievalResult.scores`), so a similarity cutoff keeps a
    prefix of the ranking; ``metadata["similarity"]`` is the fact's own similarity."""
    return [
        _node(
            view,
            view.fact_id,
            {
                "fact_id": view.fact_id,
                "rank": view.rank,
                "similarity": view.similarity,
                "source_ids": view.source_ids,
                "citations": view.citations,
            },
            view.score,
        )
        for view in result.fact_views(graph, k)
    ]


def block_nodes(
    graph: noema.SemanticGraph, result: noema.RetrievalResult, k: int
) -> list[NodeWithScore]:
    """The budgeted block as at most ``k`` self-contained nodes of consecutive facts, together
    within the result's tokens; each scored by the rank-consistent score of its first fact, so
    the scores fall in node order."""
    return [
        _node(
            view,
            view.id,
            {
                "block": view.rank,
                "fact_ids": view.fact_ids,
                "token_count": view.token_count,
                "source_ids": view.source_ids,
                "citations": view.citations,
            },
            view.score,
        )
        for view in result.block_views(graph, k)
    ]
