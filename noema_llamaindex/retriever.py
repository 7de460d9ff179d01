"""NoemaRetriever: a LlamaIndex BaseRetriever over a Noema knowledge base."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import BaseNode, NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

import noema
from noema.adapters import quote_value, unknown_option_message
from noema_llamaindex._convert import block_node, block_nodes, fact_nodes

# read at run time by tool wrappers, so imported for real (typing_extensions before 3.11)
if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover
    from typing_extensions import Unpack


class NoemaRetriever(BaseRetriever):
    """Retrieve facts from a Noema knowledge base as notation nodes.

    ``mode="block"`` (default) gives one node with the whole budgeted block; ``mode="per_fact"``
    one node per fact, in priority order, with the fact id as node id. ``similarity_top_k`` caps
    the per-fact nodes, and in block mode splits the block into at most that many
    self-contained nodes of consecutive facts, together within ``max_tokens`` (``top_k`` is
    Noema's number of vector seeds, not a count of nodes). Node scores fall in node order.
    ``filters`` takes LlamaIndex ``MetadataFilters`` (equality filters joined by AND: documents
    whose metadata match) or Noema's own filter mapping.

    Example:
        >>> kb = noema.KnowledgeBase()
        >>> _ = kb.ingest(["Larry Page founded Google."])
        >>> NoemaRetriever(kb).retrieve("Who founded Google?")[0].node.get_content()
        '#1 Larry Page :PERSON\\n#2 Google :ORG\\n#1 -found-> #2'
    """

    def __init__(
        self,
        knowledge_base: noema.KnowledgeBase | str | os.PathLike[str],
        *,
        mode: Literal["block", "per_fact"] = "block",
        similarity_top_k: int | None = None,
        filters: MetadataFilters | Mapping[str, Any] | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
        **options: Unpack[noema.RetrieveKwargs],
    ) -> None:
        # every option is checked before a bundle loads
        unknown = set(options) - {f.name for f in dataclasses.fields(noema.RetrieveOptions)}
        if unknown:
            raise noema.InputTypeError(
                unknown_option_message(type(self).__name__, unknown, _option_names())
            )
        if mode not in ("block", "per_fact"):
            raise noema.OptionError(f"mode must be 'block' or 'per_fact', got {quote_value(mode)}")
        if similarity_top_k is not None and (
            isinstance(similarity_top_k, bool)
            or not isinstance(similarity_top_k, int)
            or similarity_top_k < 1
        ):
            raise noema.OptionError(
                f"similarity_top_k must be a positive integer, got {quote_value(similarity_top_k)}"
            )
        self.options = noema.RetrieveOptions().updated(**options)
        if not isinstance(knowledge_base, (noema.KnowledgeBase, str, os.PathLike)):
            # None reached pathlib, which failed deep inside bundle opening
            raise noema.InputTypeError(
                "knowledge_base must be a noema.KnowledgeBase or the path of a .noema bundle, "
                f"got {type(knowledge_base).__name__}; build one with "
                "NoemaRetriever.from_documents(documents)"
            )
        if not isinstance(knowledge_base, noema.KnowledgeBase):
            knowledge_base = noema.KnowledgeBase.load(knowledge_base)
        self.knowledge_base = knowledge_base
        self.mode = mode
        self.similarity_top_k = similarity_top_k
        self.filters = _noema_filters(filters)
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        # the models load here, so the first retrieve costs what a later one does
        noema.warm_up(knowledge_base, options=self.options)

    @classmethod
    def from_documents(
        cls,
        documents: Iterable[BaseNode],
        *,
        knowledge_base_options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> NoemaRetriever:
        """A retriever over a new knowledge base built from LlamaIndex Documents or nodes (as
        ``SimpleDirectoryReader`` gives them; ids and metadata kept). ``knowledge_base_options``
        go to :class:`noema.KnowledgeBase`, the rest to the retriever."""
        kb = noema.KnowledgeBase(**(knowledge_base_options or {}))
        kb.ingest(list(documents))  # type: ignore[arg-type]
        return cls(kb, **kwargs)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        per_fact = self.mode == "per_fact"
        result = self.knowledge_base.retrieve_with(
            query_bundle.query_str, self.options, filters=self.filters, explain=per_fact
        )
        graph = self.knowledge_base.graph
        if per_fact:
            return fact_nodes(graph, result, self.similarity_top_k)
        if not result.text:
            return []
        if self.similarity_top_k is not None and self.similarity_top_k > 1:
            return block_nodes(graph, result, self.similarity_top_k)
        return [block_node(result, graph)]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        # the search runs in a worker thread so the event loop is not blocked
        return await asyncio.to_thread(self._retrieve, query_bundle)


def _option_names() -> list[str]:
    """What the constructor takes by name: its own parameters and every retrieve option."""
    own = inspect.signature(NoemaRetriever.__init__).parameters
    names = [n for n, p in own.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    return names + [f.name for f in dataclasses.fields(noema.RetrieveOptions)]


def _noema_filters(
    filters: MetadataFilters | Mapping[str, Any] | None,
) -> Mapping[str, Any] | None:
    """Noema's filter mapping for LlamaIndex ``MetadataFilters`` (equality, AND) or a mapping."""
    if filters is None or isinstance(filters, Mapping):
        return filters
    if not isinstance(filters, MetadataFilters):
        raise noema.InputTypeError(
            f"filters must be MetadataFilters or a mapping, got {type(filters).__name__}"
        )
    if filters.condition not in (None, FilterCondition.AND):
        raise noema.OptionError("only MetadataFilters joined by AND are supported")
    metadata: dict[str, Any] = {}
    for item in filters.filters:
        if not isinstance(item, MetadataFilter) or item.operator != FilterOperator.EQ:
            raise noema.OptionError(
                "only equality MetadataFilter items are supported (documents whose metadata "
                f"key equals a value), got {quote_value(item)}"
            )
        metadata[item.key] = item.value
    return {"metadata": metadata}
