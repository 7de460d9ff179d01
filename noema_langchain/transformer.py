"""NoemaDocumentTransformer: Documents in, their facts as notation Documents out."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain_core.documents import BaseDocumentTransformer, Document

import noema


class NoemaDocumentTransformer(BaseDocumentTransformer):
    """Rewrite each Document as the notation of the facts Noema extracts from it.

    Metadata is kept, with ``noema_tokens_before`` and ``noema_tokens_after`` added. A document with
    no extractable fact becomes an empty Document (``keep_empty=False`` drops it instead).

    Example:
        >>> out = NoemaDocumentTransformer().transform_documents([Document("Larry Page founded Google.")])
        >>> out[0].page_content.splitlines()[-1]
        '#1 -found-> #2'
    """

    def __init__(
        self,
        *,
        spacy_model: str = noema.DEFAULT_SPACY_MODEL,
        token_model: str = noema.RetrieveOptions.token_model,
        keep_empty: bool = True,
        extractor: noema.Extractor | None = None,
    ) -> None:
        self.extractor = extractor or noema.SpacyExtractor(spacy_model)
        self.token_model = token_model
        self.keep_empty = keep_empty

    def transform_documents(
        self, documents: Sequence[Document], **kwargs: Any
    ) -> Sequence[Document]:
        out = []
        for doc in documents:
            graph = self.extractor.extract(
                [noema.Document(doc.page_content, metadata=dict(doc.metadata))]
            )
            notation = noema.encode_graph(graph)
            if not notation and not self.keep_empty:
                continue
            metadata = {
                **doc.metadata,
                "noema_tokens_before": noema.count_tokens(doc.page_content, self.token_model),
                "noema_tokens_after": noema.count_tokens(notation, self.token_model),
            }
            out.append(Document(id=doc.id, page_content=notation, metadata=metadata))
        return out

    async def atransform_documents(
        self, documents: Sequence[Document], **kwargs: Any
    ) -> Sequence[Document]:
        return await asyncio.to_thread(self.transform_documents, documents, **kwargs)
