"""NoemaRetriever: a LangChain BaseRetriever over a Noema knowledge base."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.load.serializable import SerializedConstructor, SerializedNotImplemented
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, PrivateAttr, field_validator

import noema
from noema.adapters import RetrieveFields, quote_value
from noema_langchain._convert import block_document, fact_documents, split_block


class NoemaRetriever(BaseRetriever, RetrieveFields):
    """Retrieve facts from a Noema knowledge base as notation.

    ``mode="block"`` (the default) returns the whole budgeted notation block as one Document, since
    the ``#n`` ids are local to one block. ``mode="per_fact"`` returns one self-contained block per
    fact, in priority order; ``k`` (in the constructor or ``invoke(query, k=3)``) caps how many.
    In block mode ``k`` splits the block into at most ``k`` Documents of consecutive facts, each
    self-contained, together still within ``max_tokens`` (each repeats the entity lines it needs,
    so a split block holds a few facts fewer).

    Example:
        >>> kb = noema.KnowledgeBase()
        >>> _ = kb.ingest(["Larry Page founded Google."])
        >>> NoemaRetriever(knowledge_base=kb).invoke("Who founded Google?")[0].page_content
        '#1 Larry Page :PERSON\\n#2 Google :ORG\\n#1 -found-> #2'
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")
    _bundle_path: str | None = PrivateAttr(default=None)

    knowledge_base: noema.KnowledgeBase = Field(
        description="A KnowledgeBase, or a path to a .noema bundle"
    )
    mode: Literal["block", "per_fact"] = "block"
    k: int | None = Field(default=None, description="per_fact mode: at most this many facts")
    search_kwargs: dict[str, Any] = Field(
        default_factory=dict,
        description="retrieve options applied to every call, as LangChain retrievers take them",
    )
    filters: dict[str, Any] | None = Field(
        default=None,
        description="Noema's filter mapping (entity_types, predicates, document_ids, metadata) "
        "applied to every call",
    )

    def __init__(self, knowledge_base: Any = None, /, **data: Any) -> None:
        """``NoemaRetriever(kb)`` as well as ``NoemaRetriever(knowledge_base=kb)``, as the
        LlamaIndex retriever takes it."""
        if knowledge_base is not None:
            if "knowledge_base" in data:
                raise noema.InputTypeError("knowledge_base given both by position and by name")
            data["knowledge_base"] = knowledge_base
        given = data.get("knowledge_base")
        # before pydantic, which would wrap a Noema error in its ValidationError
        _check_k(data.get("k"))
        _check_search_kwargs(data.get("search_kwargs"))
        super().__init__(**data)
        if isinstance(given, (str, os.PathLike)):
            self._bundle_path = os.fspath(given)
        # the models load here, as an embeddings object loads its model when it is built: the
        # first invoke then costs what a later one does, not seconds of loading
        options = {k: v for k, v in self.search_kwargs.items() if k not in _SEARCH_KEYS}
        noema.warm_up(self.knowledge_base, options=self._options(None, options))

    # -- LangChain serialization (dumpd / load) -------------------------------------------------
    @classmethod
    def is_lc_serializable(cls) -> bool:
        return True

    @property
    def lc_attributes(self) -> dict[str, Any]:
        return {"knowledge_base": self._bundle_path} if self._bundle_path else {}

    def to_json(self) -> SerializedConstructor | SerializedNotImplemented:
        """The constructor call when the knowledge base was given as a bundle path (``load``
        reads the bundle again); an in-memory knowledge base has no JSON form, so this gives
        LangChain's ``not_implemented``, as a vector store's retriever does: pickle it instead."""
        if self._bundle_path is None:
            return self.to_json_not_implemented()
        return super().to_json()

    @field_validator("filters")
    @classmethod
    def _check_filters(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        noema.check_filters(value)
        return value

    @field_validator("knowledge_base", mode="before")
    @classmethod
    def _load_bundle(cls, value: Any) -> Any:
        if isinstance(value, (str, os.PathLike)):
            return noema.KnowledgeBase.load(value)
        return value

    @classmethod
    def from_documents(
        cls,
        documents: Iterable[Document],
        *,
        knowledge_base_options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> NoemaRetriever:
        """A retriever over a new knowledge base built from LangChain Documents (ids and
        metadata kept). ``knowledge_base_options`` go to :class:`noema.KnowledgeBase`, the
        rest to the retriever.

        Example:
            >>> retriever = NoemaRetriever.from_documents([Document("Larry Page founded Google.")])
            >>> "Larry Page" in retriever.invoke("Who founded Google?")[0].page_content
            True
        """
        kb = noema.KnowledgeBase(**(knowledge_base_options or {}))
        kb.ingest(list(documents))  # type: ignore[arg-type]
        return cls(knowledge_base=kb, **kwargs)

    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        metadatas: Sequence[dict[str, Any]] | None = None,
        *,
        ids: Sequence[str] | None = None,
        knowledge_base_options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> NoemaRetriever:
        """:meth:`from_documents` for plain texts, with optional metadata and ids per text."""
        chosen = list(texts)
        documents = [
            Document(
                page_content=text,
                metadata=dict(metadatas[n]) if metadatas else {},
                id=ids[n] if ids else None,
            )
            for n, text in enumerate(chosen)
        ]
        return cls.from_documents(
            documents, knowledge_base_options=knowledge_base_options, **kwargs
        )

    def _options(self, k: int | None, overrides: dict[str, Any]) -> noema.RetrieveOptions:
        options = self.retrieve_options()
        if overrides:  # unknown names raise TypeError listing the options
            options = options.updated(**overrides)
        if k is not None:
            options = options.updated(top_k=max(options.top_k, k))
        return options

    def _documents(self, query: str, k: int | None, overrides: dict[str, Any]) -> list[Document]:
        """Per-call options (``invoke(q, hops=0)``) and ``search_kwargs`` override the fields;
        ``k`` caps the facts in per-fact mode, as LangChain's retrievers do. ``filters`` (Noema's
        mapping) replaces the field's; ``filter`` (document metadata, as a vector store's
        retriever takes it) adds to the metadata condition."""
        calls = {**self.search_kwargs, **overrides}
        filters = _filters(calls.pop("filters", self.filters), calls.pop("filter", None))
        if k is None:
            k = calls.pop("k", None)
        else:
            calls.pop("k", None)
        _check_k(k)
        k = self.k if k is None else k
        per_fact = self.mode == "per_fact"
        result = self.knowledge_base.retrieve_with(
            query, self._options(k if per_fact else None, calls), filters=filters, explain=per_fact
        )
        graph = self.knowledge_base.graph
        if self.mode == "per_fact":
            return fact_documents(graph, result, k)
        if k is not None and k > 1:
            return split_block(graph, result, k, self._options(None, calls).max_tokens)
        return [block_document(result, graph)] if result.text else []

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        return self._documents(query, k, kwargs)

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        # parsing the question and searching run in a worker thread: the event loop keeps going
        return await asyncio.to_thread(self._documents, query, k, kwargs)


# What search_kwargs may hold besides the retrieve options: LangChain's own ``k`` and
# ``filter``, and Noema's ``filters``.
_SEARCH_KEYS = frozenset({"k", "filter", "filters"})


def _check_k(k: Any) -> None:
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise noema.OptionError(f"k must be an integer >= 1, got {quote_value(k)}")


def _check_search_kwargs(search_kwargs: Any) -> None:
    """Refused when the retriever is built, not at its first ``invoke``: a vector store's key
    (``score_threshold``, ``fetch_k``) would otherwise fail only once the chain runs."""
    if search_kwargs is None:
        return
    if not isinstance(search_kwargs, Mapping):
        raise noema.OptionError(f"search_kwargs must be a dict, got {type(search_kwargs).__name__}")
    options = {f.name for f in dataclasses.fields(noema.RetrieveOptions)}
    known = _SEARCH_KEYS | options
    unknown = sorted(str(key) for key in search_kwargs if key not in known)
    if unknown:
        raise noema.OptionError(
            f"unknown search_kwargs key {quote_value(unknown[0])}; NoemaRetriever takes "
            f"{', '.join(sorted(known))} (Noema has no score threshold: min_similarity is "
            "the closest)"
        )
    _check_k(search_kwargs.get("k"))
    noema.RetrieveOptions().updated(**{k: v for k, v in search_kwargs.items() if k in options})
    if "filters" in search_kwargs:
        noema.check_filters(search_kwargs["filters"])


def _filters(filters: Any, metadata: Any) -> dict[str, Any] | None:
    """Noema's filter mapping with LangChain's ``filter`` (document metadata key -> value) added
    to its metadata condition; both are checked when the retrieval parses them."""
    if metadata is None:
        return filters  # type: ignore[no-any-return]
    if not isinstance(metadata, Mapping):
        raise noema.OptionError(
            "filter must be a dict of document metadata key -> value (Noema's own filter "
            f"fields go in filters=), got {quote_value(metadata)}"
        )
    if filters is not None and not isinstance(filters, Mapping):
        raise noema.OptionError(f"filters must be a dict, got {type(filters).__name__}")
    combined = dict(filters or {})
    combined["metadata"] = {**combined.get("metadata", {}), **metadata}
    return combined
