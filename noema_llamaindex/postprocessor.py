"""NoemaNodePostprocessor: retrieved chunk nodes replaced by the question's sub-graph notation."""

from __future__ import annotations

import asyncio
from typing import Literal

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

import noema
from noema_llamaindex._convert import block_node


class NoemaNodePostprocessor(BaseNodePostprocessor):
    """Compress the nodes any retriever returned into notation of the question-relevant facts.

    The result is one node whose ``metadata["source_node_ids"]`` lists the chunk nodes that
    contributed and ``metadata["citations"]`` maps each fact to its source node and span, so
    answers can cite their sources. It needs the query; without one it raises ``ValueError``.

    Example:
        >>> from llama_index.core.schema import TextNode
        >>> nodes = [NodeWithScore(node=TextNode(text="Larry Page founded Google.", id_="n1"))]
        >>> out = NoemaNodePostprocessor().postprocess_nodes(nodes, query_str="Who founded Google?")
        >>> out[0].node.metadata["source_node_ids"]
        ['n1']
    """

    top_k: int = noema.RetrieveOptions.top_k
    hops: int = noema.RetrieveOptions.hops
    max_tokens: int = noema.RetrieveOptions.max_tokens
    format: Literal["notation", "natural_language", "sentences"] = noema.RetrieveOptions.format
    token_model: str = noema.RetrieveOptions.token_model
    seeds: Literal["graph", "vector"] = noema.RetrieveOptions.seeds
    similarity_threshold: float = noema.DEFAULT_SIMILARITY_THRESHOLD
    spacy_model: str = "en_core_web_sm"
    embedding_model: str = "all-MiniLM-L6-v2"

    @classmethod
    def class_name(cls) -> str:
        return "NoemaNodePostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise ValueError(
                "NoemaNodePostprocessor needs the query: pass query_bundle or query_str"
            )
        if not nodes:
            return []
        chunks = [
            noema.Document(n.node.get_content(metadata_mode=MetadataMode.NONE), id=n.node.node_id)
            for n in nodes
        ]
        result = noema.compress(
            chunks,
            query_bundle.query_str,
            options=noema.RetrieveOptions.of(self),
            similarity_threshold=self.similarity_threshold,
            spacy_model=self.spacy_model,
            embedding_model=self.embedding_model,
        )
        if not result.text:
            return []
        node = block_node(result, source_key="source_node_ids")
        node.node.metadata["tokens_before"] = sum(
            noema.count_tokens(c.text, self.token_model) for c in chunks
        )
        node.node.excluded_llm_metadata_keys.append("tokens_before")
        node.node.excluded_embed_metadata_keys.append("tokens_before")
        return [node]

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._postprocess_nodes, nodes, query_bundle)
