"""NoemaDocumentTransformer: Documents in, their facts as notation Documents out."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, NoReturn

from langchain_core.documents import BaseDocumentTransformer, Document

import noema
from noema.adapters import quote_value, unknown_option_message
from noema_langchain._convert import langchain_documents

_OPTIONS = ("extractor", "keep_empty", "spacy_model", "token_model")


class NoemaDocumentTransformer(BaseDocumentTransformer):
    """Rewrite each Document as the notation of the facts Noema extracts from it, when that is
    shorter: a Document whose notation would have as many tokens or more keeps its text, with
    ``metadata["noema_kept_original"]`` true (a short text says more per token than its notation).

    Metadata is kept, with ``noema_tokens_before``, ``noema_tokens_after`` (of the text returned)
    and ``noema_kept_original`` added. A document with no extractable fact becomes an empty
    Document (``keep_empty=False`` drops it instead).

    Example:
        >>> long = ("As everyone who follows the technology industry will know by now, it was "
        ...         "Larry Page who, many years ago and with great ambition, founded Google.")
        >>> out = NoemaDocumentTransformer().transform_documents([Document(long)])
        >>> out[0].page_content.splitlines()[-1], out[0].metadata["noema_kept_original"]
        ('#1 -found-> #2', False)
        >>> short = NoemaDocumentTransformer().transform_documents([Document("Larry Page founded Google.")])
        >>> short[0].page_content, short[0].metadata["noema_kept_original"]
        ('Larry Page founded Google.', True)
    """

    def __init__(
        self,
        *,
        spacy_model: str = noema.DEFAULT_SPACY_MODEL,
        token_model: str = noema.RetrieveOptions.token_model,
        keep_empty: bool = True,
        extractor: noema.Extractor | None = None,
        # NoReturn: a type checker flags a misspelled option; at run time it is refused by name
        **unknown: NoReturn,
    ) -> None:
        if unknown:
            raise noema.InputTypeError(
                unknown_option_message(type(self).__name__, unknown, _OPTIONS)
            )
        if not isinstance(keep_empty, bool):
            raise noema.OptionError(
                f"keep_empty must be True or False, got {quote_value(keep_empty)}"
            )
        noema.RetrieveOptions(token_model=token_model)  # the check a retriever's token_model gets
        self.extractor = extractor or noema.SpacyExtractor(spacy_model)
        self.token_model = token_model
        self.keep_empty = keep_empty

    def transform_documents(
        self, documents: Sequence[Document], **kwargs: Any
    ) -> Sequence[Document]:
        out = []
        for doc in langchain_documents(documents):
            graph = self.extractor.extract(
                [noema.Document(doc.page_content, metadata=dict(doc.metadata))]
            )
            notation = noema.encode_graph(graph)
            if not notation and not self.keep_empty:
                continue
            saving = noema.TokenSaving.of(
                [doc.page_content], notation, token_model=self.token_model
            )
            kept = not saving.shorter  # a text is never replaced by a longer one
            metadata = {
                **doc.metadata,
                "noema_tokens_before": saving.tokens_before,
                "noema_tokens_after": saving.tokens_before if kept else saving.tokens_after,
                "noema_kept_original": kept,
            }
            text = doc.page_content if kept else notation
            out.append(Document(id=doc.id, page_content=text, metadata=metadata))
        return out

    async def atransform_documents(
        self, documents: Sequence[Document], **kwargs: Any
    ) -> Sequence[Document]:
        return await asyncio.to_thread(self.transform_documents, documents, **kwargs)
