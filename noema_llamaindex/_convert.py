"""Noema results as LlamaIndex nodes; Noema's metadata is kept out of the LLM context."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

from llama_index.core.schema import NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode

import noema


def _node(
    text: str,
    node_id: str,
    metadata: dict[str, Any],
    score: float | None,
    source: tuple[str, dict[str, Any]] | None = None,
) -> NodeWithScore:
    if source is not None:
        # the source document's own metadata (a reader's file_name...) on every node, as the
        # LangChain adapter's Documents have it; Noema's fields win a clash
        metadata = {**source[1], **metadata}
    keys = list(metadata)
    node = TextNode(
        text=text,
        id_=node_id,
        metadata=metadata,
        excluded_llm_metadata_keys=keys,
        excluded_embed_metadata_keys=keys,
    )
    if source is not None:
        # what LlamaIndex reads as ref_doc_id: the document the text came from, with its metadata
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(
            node_id=source[0], metadata=source[1]
        )
    return NodeWithScore(node=node, score=score)


def _source(
    graph: noema.SemanticGraph, result: noema.RetrievalResult, fact_ids: Sequence[str]
) -> tuple[str, dict[str, Any]] | None:
    """The document most of ``fact_ids`` cite (ties: the one an earlier fact cites, then the
    text that sorts first), with its metadata.

    Chosen by the facts and texts, never by document id: readers such as
    ``SimpleDirectoryReader`` give random ids, and the source of the same answer must not change
    from run to run.
    """
    cited: Counter[str] = Counter()
    first: dict[str, int] = {}
    for rank, fact_id in enumerate(fact_ids):
        documents = {c.document_id for c in result.citations.get(fact_id, ())}
        cited.update(documents)  # once per fact, however often the fact is cited there
        for document_id in documents:
            first.setdefault(document_id, rank)
    if not cited:
        return None

    def text(document_id: str) -> str:
        doc = graph.documents.get(document_id)
        return doc.text if doc is not None else ""

    document_id = min(cited, key=lambda d: (-cited[d], first[d], text(d)))
    doc = graph.documents.get(document_id)
    return document_id, dict(doc.metadata) if doc is not None and doc.metadata else {}


# Fields of RetrievalResult.to_dict() that are not metadata: the text itself and the question.
_NOT_METADATA = ("text", "notation", "question", "explanation", "token_model", "source_ids")


def block_node(
    result: noema.RetrievalResult,
    source_key: str = "source_ids",
    graph: noema.SemanticGraph | None = None,
) -> NodeWithScore:
    """The whole budgeted block as one node, scored by its best vector-search hit."""
    digest = hashlib.sha256(f"{result.question}\x1f{result.text}".encode()).hexdigest()[:16]
    data = result.to_dict()
    metadata = {k: v for k, v in data.items() if k not in _NOT_METADATA}
    metadata[source_key] = data["source_ids"]
    best = max((m.similarity for m in result.fact_matches), default=None)
    source = _source(graph, result, result.fact_ids) if graph is not None else None
    return _node(result.text, f"noema-{digest}", metadata, best, source)


def fact_nodes(kb: noema.KnowledgeBase, result: noema.RetrievalResult) -> list[NodeWithScore]:
    """One self-contained block per fact, in priority order. A node's score falls in that order
    (:meth:`noema.RetrievalResult.scores`), so a similarity cutoff keeps a prefix of the
    ranking; ``metadata["similarity"]`` is the fact's own similarity to the question."""
    similarity = result.similarities()
    citations = result.to_dict()["citations"]
    nodes = []
    for rank, (fact_id, score) in enumerate(zip(result.fact_ids, result.scores(), strict=True), 1):
        text = kb.render_fact(fact_id, result.format)
        metadata = {
            "fact_id": fact_id,
            "rank": rank,
            "similarity": similarity.get(fact_id),
            "source_ids": result.source_ids([fact_id]),
            "citations": citations[fact_id],
        }
        source = _source(kb.graph, result, [fact_id])
        nodes.append(_node(text, fact_id, metadata, score, source))
    return nodes


def block_nodes(
    kb: noema.KnowledgeBase, result: noema.RetrievalResult, k: int
) -> list[NodeWithScore]:
    """The budgeted block as at most ``k`` self-contained nodes of consecutive facts, together
    within the result's tokens (:meth:`noema.KnowledgeBase.render_blocks`); each scored by the
    rank-consistent score of its first fact, so the scores fall in node order."""
    score = dict(zip(result.fact_ids, result.scores(), strict=True))
    citations = result.to_dict()["citations"]
    nodes = []
    for rank, (group, text, count) in enumerate(kb.render_blocks(result, k), start=1):
        digest = hashlib.sha256("\x1f".join((result.format, *group)).encode()).hexdigest()[:16]
        metadata = {
            "block": rank,
            "fact_ids": group,
            "token_count": count,
            "source_ids": result.source_ids(group),
            "citations": {f: citations[f] for f in group},
        }
        source = _source(kb.graph, result, group)
        nodes.append(_node(text, f"noema-{digest}", metadata, score[group[0]], source))
    return nodes
