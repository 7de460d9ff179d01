"""Noema results as LangChain Documents (metadata stays JSON-friendly)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from langchain_core.documents import Document

import noema

# Fields of RetrievalResult.to_dict() that are not metadata: the text itself and the question.
_NOT_METADATA = ("text", "notation", "question", "explanation", "token_model")


def source_of(graph: noema.SemanticGraph, document_id: str) -> str:
    """What LangChain calls a document's ``source``: its own ``source`` metadata, else its id."""
    doc = graph.documents.get(document_id)
    source = doc.metadata.get("source") if doc is not None and doc.metadata else None
    return source if isinstance(source, str) else document_id


def block_document(
    result: noema.RetrievalResult, graph: noema.SemanticGraph | None = None
) -> Document:
    """The whole budgeted block as one Document: local ids only make sense within one block.

    With the graph, ``metadata["sources"]`` lists the original ``source`` of every document
    behind the text and ``metadata["source"]`` is the first, as LangChain loaders set it."""
    data = result.to_dict()
    metadata = {k: v for k, v in data.items() if k not in _NOT_METADATA}
    if graph is not None:
        sources = list(dict.fromkeys(source_of(graph, d) for d in data["source_ids"]))
        metadata["sources"] = sources
        metadata["source"] = sources[0] if sources else ""
    return Document(
        id=block_id(result, result.fact_ids), page_content=result.text, metadata=metadata
    )


def block_id(result: noema.RetrievalResult, fact_ids: Sequence[str]) -> str:
    """A block's id: the same facts in the same format are the same Document, whatever the
    question (so retrievers that merge results by id, such as an ensemble, see it once)."""
    key = "\x1f".join((result.format, *fact_ids))
    return f"noema-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def fact_documents(
    kb: noema.KnowledgeBase, result: noema.RetrievalResult, k: int | None
) -> list[Document]:
    """One self-contained notation block per fact, in priority order; ``metadata["score"]``
    falls in that order (:meth:`noema.RetrievalResult.scores`), ``metadata["similarity"]`` is
    the fact's own similarity to the question."""
    similarity = result.similarities()
    scores = result.scores()
    citations = result.to_dict()["citations"]
    chosen = result.fact_ids if k is None else result.fact_ids[:k]
    documents = []
    for rank, fact_id in enumerate(chosen, start=1):
        text = kb.render_fact(fact_id, result.format)
        documents.append(
            Document(
                id=fact_id,
                page_content=text,
                metadata={
                    **_original_metadata(kb.graph, result.source_ids([fact_id])),
                    "fact_id": fact_id,
                    "rank": rank,
                    "score": scores[rank - 1],
                    "similarity": similarity.get(fact_id),
                    "token_count": noema.count_tokens(text, result.token_model),
                    "source_ids": result.source_ids([fact_id]),
                    "citations": citations[fact_id],
                },
            )
        )
    return documents


def _original_metadata(graph: noema.SemanticGraph, document_ids: list[str]) -> dict[str, object]:
    """The metadata of the fact's first source document, with ``source`` always set."""
    if not document_ids:
        return {}
    doc = graph.documents.get(document_ids[0])
    original = dict(doc.metadata) if doc is not None and doc.metadata else {}
    original["source"] = source_of(graph, document_ids[0])
    return original


def split_block(
    kb: noema.KnowledgeBase, result: noema.RetrievalResult, k: int, max_tokens: int
) -> list[Document]:
    """The budgeted block as at most ``k`` Documents of consecutive facts (priority order), each
    self-contained (its own ``#n`` ids), together within ``max_tokens``
    (:meth:`noema.KnowledgeBase.render_blocks`)."""
    citations = result.to_dict()["citations"]
    documents = []
    for rank, (group, text, count) in enumerate(kb.render_blocks(result, k, max_tokens), start=1):
        sources = result.source_ids(group)
        documents.append(
            Document(
                id=block_id(result, group),
                page_content=text,
                metadata={
                    **_original_metadata(kb.graph, sources),
                    "block": rank,
                    "fact_ids": group,
                    "token_count": count,
                    "source_ids": sources,
                    "citations": {f: citations[f] for f in group},
                },
            )
        )
    return documents
