"""Query-time compression: the chunks another retriever returned, turned into the notation of the
sub-graph relevant to the question. This is what the LangChain compressor and the LlamaIndex node
postprocessor run."""

from __future__ import annotations

from collections.abc import Sequence

from noema.embed import Embedder
from noema.graph import Document
from noema.kb import KnowledgeBase
from noema.parse import Extractor
from noema.resources import DEFAULT_EMBEDDING_MODEL, DEFAULT_SPACY_MODEL, DEFAULT_TOKEN_MODEL
from noema.retrieve import Format, RetrievalResult

__all__ = ["compress"]


def compress(
    documents: Sequence[Document],
    question: str,
    *,
    top_k: int = 5,
    hops: int = 1,
    max_tokens: int = 200,
    format: Format = "notation",
    token_model: str = DEFAULT_TOKEN_MODEL,
    similarity_threshold: float = 0.85,
    spacy_model: str = DEFAULT_SPACY_MODEL,
    embedding_model: str = DEFAULT_EMBEDDING_MODEL,
    extractor: Extractor | None = None,
    embedder: Embedder | None = None,
) -> RetrievalResult:
    """Build a throwaway knowledge base from ``documents`` and retrieve for ``question``.

    The models are loaded once per process and shared, so repeated calls only parse and embed
    the chunks at hand. ``result.citations[fact_id]`` names the document (chunk) ids each fact
    came from.

    Example:
        >>> chunks = [Document("Larry Page founded Google.", id="c1"),
        ...           Document("Sundar Pichai is the CEO of Google.", id="c2")]
        >>> result = compress(chunks, "Who runs Google?", max_tokens=50)
        >>> sorted({c.document_id for cs in result.citations.values() for c in cs})
        ['c1', 'c2']
    """
    kb = KnowledgeBase(
        similarity_threshold=similarity_threshold,
        spacy_model=spacy_model,
        embedding_model=embedding_model,
        extractor=extractor,
        embedder=embedder,
    )
    kb.ingest(list(documents))
    return kb.retrieve(
        question,
        top_k=top_k,
        hops=hops,
        max_tokens=max_tokens,
        format=format,
        token_model=token_model,
    )
