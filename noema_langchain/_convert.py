"""Noema results as LangChain Documents (metadata stays JSON-friendly)."""

from __future__ import annotations

from typing import Any

from langchain_core.documents import Document

import noema


def citations_metadata(result: noema.RetrievalResult, fact_id: str) -> list[dict[str, Any]]:
    return [
        {"document_id": c.document_id, "start": c.start, "end": c.end, "text": c.text}
        for c in result.citations.get(fact_id, ())
    ]


def source_ids(result: noema.RetrievalResult, fact_ids: tuple[str, ...] | list[str]) -> list[str]:
    return sorted({c.document_id for f in fact_ids for c in result.citations.get(f, ())})


def block_document(result: noema.RetrievalResult) -> Document:
    """The whole budgeted block as one Document: local ids only make sense within one block."""
    return Document(
        page_content=result.text,
        metadata={
            "entity_ids": list(result.entity_ids),
            "relation_ids": list(result.relation_ids),
            "event_ids": list(result.event_ids),
            "token_count": result.token_count,
            "truncated": result.truncated,
            "format": result.format,
            "fact_matches": [
                {"relation_id": m.relation_id, "similarity": m.similarity}
                for m in result.fact_matches
            ],
            "source_ids": source_ids(result, result.fact_ids),
            "citations": {f: citations_metadata(result, f) for f in result.fact_ids},
        },
    )


def fact_documents(
    kb: noema.KnowledgeBase, result: noema.RetrievalResult, k: int | None
) -> list[Document]:
    """One self-contained notation block per fact, in priority order."""
    similarity = {m.relation_id: m.similarity for m in result.fact_matches}
    chosen = result.fact_ids if k is None else result.fact_ids[:k]
    documents = []
    for rank, fact_id in enumerate(chosen, start=1):
        block = kb.fact_text(fact_id)
        text = block if result.format == "notation" else noema.decode(block)
        documents.append(
            Document(
                id=fact_id,
                page_content=text,
                metadata={
                    "fact_id": fact_id,
                    "rank": rank,
                    "similarity": similarity.get(fact_id),
                    "token_count": noema.count_tokens(text, result.token_model),
                    "source_ids": source_ids(result, [fact_id]),
                    "citations": citations_metadata(result, fact_id),
                },
            )
        )
    return documents
