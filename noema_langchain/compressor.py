"""NoemaContextCompressor: chunks from any retriever, compressed to the question's sub-graph."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document

import noema
from noema_langchain._convert import block_document
from noema_langchain._options import RetrieveFields


class NoemaContextCompressor(BaseDocumentCompressor, RetrieveFields):
    """Turn retrieved chunks into the notation of the sub-graph relevant to the query.

    For ``ContextualCompressionRetriever``: no model but spaCy and the embedding model runs. The
    result is one Document whose ``metadata["citations"]`` maps each fact to the chunk(s) it came
    from (the chunk's ``id``, or ``chunk-<n>`` by position), and ``metadata["source_ids"]`` lists
    the chunks that contributed.

    Example:
        >>> chunks = [Document("Larry Page founded Google."), Document("Sundar Pichai is the CEO of Google.")]
        >>> NoemaContextCompressor(max_tokens=60).compress_documents(chunks, "Who runs Google?")[0].metadata["source_ids"]
        ['chunk-0', 'chunk-1']
    """

    similarity_threshold: float = noema.DEFAULT_SIMILARITY_THRESHOLD
    spacy_model: str = "en_core_web_sm"
    embedding_model: str = "all-MiniLM-L6-v2"

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        if not documents:
            return []
        chunks = [
            noema.Document(d.page_content, id=d.id or f"chunk-{n}", metadata=dict(d.metadata))
            for n, d in enumerate(documents)
        ]
        result = noema.compress(
            chunks,
            query,
            options=self.retrieve_options(),
            similarity_threshold=self.similarity_threshold,
            spacy_model=self.spacy_model,
            embedding_model=self.embedding_model,
        )
        if not result.text:
            return []
        doc = block_document(result)
        doc.metadata["tokens_before"] = sum(
            noema.count_tokens(d.page_content, self.token_model) for d in documents
        )
        return [doc]

    async def acompress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        return await asyncio.to_thread(self.compress_documents, documents, query, callbacks)
