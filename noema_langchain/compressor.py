"""NoemaContextCompressor: chunks from any retriever, compressed to the question's sub-graph."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.runnables import RunnableConfig, RunnableSerializable
from pydantic import ConfigDict

import noema
from noema.adapters import CompressorFields, RetrieveFields
from noema_langchain._convert import block_document, langchain_documents


class NoemaContextCompressor(
    BaseDocumentCompressor,
    RunnableSerializable[Mapping[str, Any], list[Document]],
    CompressorFields,
    RetrieveFields,
):
    """Turn retrieved chunks into the notation of the sub-graph relevant to the query.

    It is a Runnable too, for LCEL chains without ``ContextualCompressionRetriever``:
    ``invoke({"documents": chunks, "query": question})`` is ``compress_documents(chunks,
    question)``, with the chain's callbacks and config.

    For ``ContextualCompressionRetriever``: no model but spaCy and the embedding model runs. The
    result is one Document of at most ``max_tokens``, or none when nothing relevant is found; when
    the notation would not be shorter than the chunks (``metadata["tokens_before"]``), the chunks
    come back unchanged, so compression never adds tokens or loses text. The Document's
    ``metadata["citations"]`` maps each fact to the chunk(s) it came from (the chunk's ``id``, or
    ``chunk-<n>`` by position), ``metadata["source_ids"]`` lists the chunks that contributed,
    ``metadata["source_metadata"]`` their original metadata by chunk id, and ``metadata["sources"]``
    / ``metadata["source"]`` their ``source`` metadata as LangChain loaders set it. The knowledge
    base of a set of chunks is kept for the next query over the same chunks. The spaCy pipeline
    and the embedding model load when the compressor is built (once per process).

    Example:
        >>> from pathlib import Path
        >>> chunks = [Document(p.read_text(), id=p.name, metadata={"source": str(p)})
        ...           for p in sorted(Path("examples/docs").glob("*.md"))]
        >>> (doc,) = NoemaContextCompressor(max_tokens=60).compress_documents(chunks, "Who runs Google?")
        >>> doc.metadata["token_count"] <= 60 < doc.metadata["tokens_before"]
        True
        >>> short = [Document("Larry Page founded Google.")]  # notation would not be shorter
        >>> NoemaContextCompressor().compress_documents(short, "Who founded Google?") == short
        True
    """

    # a misspelled option (max_token=50) or a vector store's (search_type="mmr") must not be ignored
    model_config = ConfigDict(extra="forbid")

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        documents = langchain_documents(documents)
        if not documents:
            return []
        chunks = [
            noema.Document(d.page_content, id=d.id or f"chunk-{n}", metadata=dict(d.metadata))
            for n, d in enumerate(documents)
        ]
        kb = self._knowledge_base(chunks)
        result = kb.retrieve_with(query, self.retrieve_options())
        if not result.text:
            return []
        saving = noema.TokenSaving.of(
            [c.text for c in chunks], result.text, token_model=self.token_model
        )
        if not saving.shorter:
            return list(documents)  # the chunks fit the budget and are no longer than notation
        doc = block_document(result, kb.graph)
        by_id = {c.id: dict(c.metadata) for c in chunks}
        doc.metadata["source_metadata"] = {i: by_id[i] for i in result.source_ids() if i in by_id}
        doc.metadata["tokens_before"] = saving.tokens_before
        return [doc]

    def invoke(
        self, input: Mapping[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """``compress_documents(input["documents"], input["query"])`` as a chain step."""
        return self._call_with_config(self._compress_input, input, config, run_type="retriever")

    async def ainvoke(
        self, input: Mapping[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        return await asyncio.to_thread(self.invoke, input, config)

    def _compress_input(self, input: Mapping[str, Any]) -> list[Document]:
        if not isinstance(input, Mapping) or not {"documents", "query"} <= set(input):
            raise noema.OptionError(
                "NoemaContextCompressor.invoke takes {'documents': [Document, ...], 'query': str}, "
                f"got {type(input).__name__}"
                + (f" with keys {sorted(map(str, input))}" if isinstance(input, Mapping) else "")
            )
        return list(self.compress_documents(input["documents"], input["query"]))

    async def acompress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        return await asyncio.to_thread(self.compress_documents, documents, query, callbacks)
