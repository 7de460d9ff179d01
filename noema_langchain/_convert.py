"""Noema results as LangChain Documents: each a map from one of the result's views
(:meth:`noema.RetrievalResult.fact_views`, ``block_views``, ``block_view``); metadata stays
JSON-friendly."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain_core.documents import Document

import noema

# Fields of RetrievalResult.to_dict() that are not metadata: the text itself and the question.
_NOT_METADATA = ("text", "notation", "question", "explanation", "token_model")


def langchain_documents(documents: object) -> list[Document]:
    """``documents`` as a list, refused with a clear error unless it holds LangChain Documents
    only (a string or Noema's own Document would fail later on a missing ``page_content``)."""
    if isinstance(documents, (str, bytes)) or not isinstance(documents, Iterable):
        raise noema.InputTypeError(
            f"documents must be a list of LangChain Documents, got {type(documents).__name__}"
        )
    chosen = list(documents)
    for n, document in enumerate(chosen):
        if not isinstance(document, Document):
            raise noema.InputTypeError(
                "documents must be a list of LangChain Documents, got "
                f"{type(document).__name__} at position {n}"
            )
    return chosen


def _source_name(document_id: str, metadata: dict[str, Any]) -> str:
    """What LangChain calls a document's ``source``: its own ``source`` metadata, else its id."""
    source = metadata.get("source")
    return source if isinstance(source, str) else document_id


def _original_metadata(view: noema.FactView | noema.BlockView) -> dict[str, Any]:
    """The metadata of the view's first source document, with ``source`` always set."""
    if not view.source_ids:
        return {}
    first = view.source_ids[0]
    return {**view.sources[first], "source": _source_name(first, view.sources[first])}


def block_document(result: noema.RetrievalResult, graph: noema.SemanticGraph) -> Document:
    """The whole budgeted block as one Document: local ids only make sense within one block.

    ``metadata["sources"]`` lists the original ``source`` of every document behind the text and
    ``metadata["source"]`` is the first, as LangChain loaders set it."""
    view = result.block_view(graph)
    metadata = {k: v for k, v in result.to_dict().items() if k not in _NOT_METADATA}
    sources = list(dict.fromkeys(_source_name(d, view.sources[d]) for d in view.source_ids))
    metadata["sources"] = sources
    metadata["source"] = sources[0] if sources else ""
    return Document(id=view.id, page_content=view.text, metadata=metadata)


def fact_documents(
    graph: noema.SemanticGraph, result: noema.RetrievalResult, k: int | None
) -> list[Document]:
    """One self-contained block per fact, in priority order; ``metadata["score"]`` falls in that
    order (:meth:`noema.RetrievalResult.scores`), ``metadata["similarity"]`` is the fact's own
    similarity to the question."""
    return [
        _document(
            view,
            view.fact_id,
            {
                "fact_id": view.fact_id,
                "rank": view.rank,
                "score": view.score,
                "similarity": view.similarity,
            },
        )
        for view in result.fact_views(graph, k)
    ]


def split_block(
    graph: noema.SemanticGraph, result: noema.RetrievalResult, k: int, max_tokens: int
) -> list[Document]:
    """The budgeted block as at most ``k`` Documents of consecutive facts (priority order), each
    self-contained (its own ``#n`` ids), together within ``max_tokens``."""
    return [
        _document(view, view.id, {"block": view.rank, "fact_ids": view.fact_ids})
        for view in result.block_views(graph, k, max_tokens)
    ]


def _document(
    view: noema.FactView | noema.BlockView, document_id: str, own: dict[str, Any]
) -> Document:
    """A view as a Document: its source's metadata, then ``own``, then what every view has."""
    metadata = {
        **_original_metadata(view),
        **own,
        "token_count": view.token_count,
        "source_ids": view.source_ids,
        "citations": view.citations,
    }
    return Document(id=document_id, page_content=view.text, metadata=metadata)
