"""Query-time compression: the chunks another retriever returned, turned into the notation of the
sub-graph relevant to the question. This is what the LangChain compressor and the LlamaIndex node
postprocessor run."""

from __future__ import annotations

from collections.abc import Sequence

from noema.embed import Embedder
from noema.graph import Document
from noema.kb import KnowledgeBase
from noema.options import DEFAULT_SIMILARITY_THRESHOLD, Format, RetrieveOptions, SeedStrategy
from noema.parse import Extractor
from noema.resources import DEFAULT_EMBEDDING_MODEL, DEFAULT_SPACY_MODEL
from noema.retrieve import RetrievalResult

__all__ = ["compress"]


def compress(
    documents: Sequence[Document],
    question: str,
    *,
    top_k: int = RetrieveOptions.top_k,
    hops: int = RetrieveOptions.hops,
    max_tokens: int = RetrieveOptions.max_tokens,
    format: Format = RetrieveOptions.format,
    token_model: str = RetrieveOptions.token_model,
    seeds: SeedStrategy = RetrieveOptions.seeds,
    min_similarity: float | None = RetrieveOptions.min_similarity,
    similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
    spacy_model: str = DEFAULT_SPACY_MODEL,
    embedding_model: str = DEFAULT_EMBEDDING_MODEL,
    extractor: Extractor | None = None,
    embedder: Embedder | None = None,
    options: RetrieveOptions | None = None,
) -> RetrievalResult:
    """Build a throwaway knowledge base from ``documents`` and retrieve for ``question``.

    The models are loaded once per process and shared, so repeated calls only parse and embed
    the chunks at hand. ``result.citations[fact_id]`` names the document (chunk) ids each fact
    came from. ``options``, when given, replaces the retrieve options passed one by one.

    Example:
        >>> chunks = [Document("Larry Page founded Google.", id="c1"),
        ...           Document("Sundar Pichai is the CEO of Google.", id="c2")]
        >>> result = compress(chunks, "Who runs Google?", max_tokens=50)
        >>> sorted({c.document_id for cs in result.citations.values() for c in cs})
        ['c1', 'c2']
    """
    if options is None:
        options = RetrieveOptions.of(locals())  # this call's option arguments, by name
    kb = KnowledgeBase(
        similarity_threshold=similarity_threshold,
        spacy_model=spacy_model,
        embedding_model=embedding_model,
        extractor=extractor,
        embedder=embedder,
    )
    kb.ingest(list(documents))
    return kb.retrieve_with(question, options)
