"""Query-time compression: the chunks another retriever returned, turned into the notation of the
sub-graph relevant to the question. This is what the LangChain compressor and the LlamaIndex node
postprocessor run.

The knowledge base built from a set of chunks is kept for the next question about the same chunks:
a chain asked several questions over one retrieval, or the same popular chunks, parses and embeds
them once. The adapters hand the texts back unchanged when the notation would not be shorter
(:class:`TokenSaving`), so compression never adds tokens.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from noema.ingest.extractor import Extractor
from noema.ingest.sources import Source, as_documents
from noema.kb import KnowledgeBase
from noema.model.records import Document
from noema.resources import (
    DEFAULT_EMBEDDING_MODEL,
    DEFAULT_SPACY_MODEL,
    DEFAULT_TOKEN_MODEL,
    count_tokens,
)
from noema.retrieval.options import (
    DEFAULT_SIMILARITY_THRESHOLD,
    RetrieveKwargs,
    RetrieveOptions,
    Unpack,
)
from noema.retrieval.retrieve import RetrievalResult
from noema.vectors.embed import Embedder

__all__ = ["TokenSaving", "compress", "compression_base"]

# Knowledge bases kept for chunk sets seen recently: each is a few hundred facts at most.
CACHED_BASES = 32

_cache: OrderedDict[tuple[object, ...], KnowledgeBase] = OrderedDict()
_cache_lock = threading.Lock()


def compress(
    documents: Sequence[Source],
    question: str,
    *,
    similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
    spacy_model: str = DEFAULT_SPACY_MODEL,
    embedding_model: str = DEFAULT_EMBEDDING_MODEL,
    extractor: Extractor | None = None,
    embedder: Embedder | None = None,
    options: RetrieveOptions | None = None,
    **retrieve_options: Unpack[RetrieveKwargs],
) -> RetrievalResult:
    """Retrieve for ``question`` from a knowledge base of ``documents`` (see
    :func:`compression_base`), within ``max_tokens``.

    ``result.citations[fact_id]`` names the document (chunk) ids each fact came from.
    The retrieve options are passed by name (as to :meth:`KnowledgeBase.retrieve`) or as one
    ``options``, which then replaces them.

    Example:
        >>> chunks = [Document("Larry Page founded Google.", id="c1"),
        ...           Document("Sundar Pichai is the CEO of Google.", id="c2")]
        >>> result = compress(chunks, "Who runs Google?", max_tokens=50)
        >>> sorted({c.document_id for cs in result.citations.values() for c in cs})
        ['c1', 'c2']
        >>> compress(["Larry Page founded Google."], "Who founded Google?").text.splitlines()[-1]
        '#1 -found-> #2'
    """
    by_name = RetrieveOptions().updated(**retrieve_options)  # names checked even when unused
    if options is None:
        options = by_name
    kb = compression_base(
        documents,
        similarity_threshold=similarity_threshold,
        spacy_model=spacy_model,
        embedding_model=embedding_model,
        extractor=extractor,
        embedder=embedder,
    )
    return kb.retrieve_with(question, options)


def compression_base(
    documents: Sequence[Source],
    *,
    similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
    spacy_model: str = DEFAULT_SPACY_MODEL,
    embedding_model: str = DEFAULT_EMBEDDING_MODEL,
    extractor: Extractor | None = None,
    embedder: Embedder | None = None,
) -> KnowledgeBase:
    """A knowledge base of ``documents``, built once for the same documents and settings.
    ``documents`` are what :meth:`noema.KnowledgeBase.ingest` takes: strings, :class:`Document`,
    LangChain or LlamaIndex documents.

    The models are loaded once per process and shared. With the default extractor and embedder
    the last :data:`CACHED_BASES` bases are kept, keyed by every document's id, text and metadata
    and the settings; a custom extractor or embedder builds a new base each time (they may hold
    state a key cannot see). Treat the returned base as read-only: it may be shared.

    Example:
        >>> chunks = [Document("Larry Page founded Google.", id="c1")]
        >>> compression_base(chunks) is compression_base(chunks)
        True
    """
    settings: dict[str, Any] = {
        "similarity_threshold": similarity_threshold,
        "spacy_model": spacy_model,
        "embedding_model": embedding_model,
    }
    chunks = as_documents(list(documents))
    key = None
    if extractor is None and embedder is None:
        key = (*settings.values(), *(_document_key(d) for d in chunks))
        with _cache_lock:
            cached = _cache.get(key)
            if cached is not None:
                _cache.move_to_end(key)
                return cached
    kb = KnowledgeBase(**settings, extractor=extractor, embedder=embedder)
    kb.ingest(chunks)
    if key is not None:
        with _cache_lock:
            _cache[key] = kb
            while len(_cache) > CACHED_BASES:
                _cache.popitem(last=False)
    return kb


def _document_key(document: Document) -> tuple[str, str, str]:
    return document.id, document.text, json.dumps(document.metadata, sort_keys=True, default=repr)


@dataclass(frozen=True)
class TokenSaving:
    """The tokens of some texts and of the notation that would replace them. The notation
    replaces them only when it is :attr:`shorter`: the compressor, the node postprocessor and the
    document transformer otherwise hand the texts back, so none of them ever adds tokens.

    Example:
        >>> saving = TokenSaving.of(["Larry Page founded Google."], "#1 Larry Page :PERSON")
        >>> saving.tokens_before, saving.tokens_after, saving.shorter
        (5, 6, False)
    """

    tokens_before: int
    tokens_after: int

    @property
    def shorter(self) -> bool:
        """Whether the notation has fewer tokens than the texts (a tie keeps the texts)."""
        return self.tokens_after < self.tokens_before

    @classmethod
    def of(
        cls, texts: Sequence[str], notation: str, *, token_model: str = DEFAULT_TOKEN_MODEL
    ) -> TokenSaving:
        """The tokens of ``texts`` together and of ``notation``, counted with ``token_model``."""
        if isinstance(texts, str):  # one text would be counted as its characters
            texts = [texts]
        return cls(
            sum(count_tokens(text, token_model) for text in texts),
            count_tokens(notation, token_model),
        )
