"""NoemaNodePostprocessor: retrieved chunk nodes replaced by the question's sub-graph notation."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
from pydantic import ConfigDict

import noema
from noema.adapters import CompressorFields, RetrieveFields
from noema_llamaindex._convert import block_node


# the shared fields before LlamaIndex's base keep the fields in their order before they were
# shared (callback_manager, the options, the models), which to_dict and the schema show
class NoemaNodePostprocessor(CompressorFields, RetrieveFields, BaseNodePostprocessor):
    """Compress the nodes any retriever returned into notation of the question-relevant facts.

    The result is one node of at most ``max_tokens``, or none when nothing relevant is found; when
    the notation would not be shorter than the nodes (``metadata["tokens_before"]``), the nodes
    come back unchanged, so compression never adds tokens or loses text. The node's
    ``metadata["source_node_ids"]`` lists the chunk nodes that contributed,
    ``metadata["source_metadata"]`` their metadata by node id, ``metadata["citations"]`` maps each
    fact to its source node and span, and its SOURCE relationship is the node most of its facts
    come from. It needs the query; without one it raises :class:`noema.OptionError` (a
    ``ValueError``). The knowledge base of a set of nodes is kept for the next query over the
    same nodes. The spaCy pipeline and the embedding model load when the postprocessor is built
    (once per process).

    Example:
        >>> from llama_index.core import SimpleDirectoryReader
        >>> from llama_index.core.node_parser import SentenceSplitter
        >>> nodes = SentenceSplitter().get_nodes_from_documents(
        ...     SimpleDirectoryReader("examples/docs").load_data())
        >>> (out,) = NoemaNodePostprocessor(max_tokens=60).postprocess_nodes(
        ...     [NodeWithScore(node=n) for n in nodes], query_str="Who founded Google?")
        >>> out.node.metadata["token_count"] <= 60 < out.node.metadata["tokens_before"]
        True
    """

    # a misspelled option (max_token=20) must not be ignored, as in the LangChain classes
    model_config = ConfigDict(extra="forbid")

    @classmethod
    def class_name(cls) -> str:
        return "NoemaNodePostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise noema.OptionError(
                "NoemaNodePostprocessor needs the query: pass query_bundle or query_str"
            )
        nodes = _checked_nodes(nodes)  # a generator is read once, here
        if not nodes:
            return []
        chunks = _chunks(nodes)
        kb = self._knowledge_base(chunks)
        result = kb.retrieve_with(query_bundle.query_str, self.retrieve_options())
        if not result.text:
            return []
        saving = noema.TokenSaving.of(
            [c.text for c in chunks], result.text, token_model=self.token_model
        )
        if not saving.shorter:
            return nodes  # the nodes fit the budget and are no longer than the notation
        node = block_node(result, kb.graph, source_key="source_node_ids")
        by_id = {n.node.node_id: dict(n.node.metadata) for n in nodes}  # as they came in
        node.node.metadata["source_metadata"] = {
            i: by_id[i] for i in result.source_ids() if i in by_id
        }
        node.node.excluded_llm_metadata_keys.append("source_metadata")
        node.node.excluded_embed_metadata_keys.append("source_metadata")
        node.node.metadata["tokens_before"] = saving.tokens_before
        node.node.excluded_llm_metadata_keys.append("tokens_before")
        node.node.excluded_embed_metadata_keys.append("tokens_before")
        return [node]

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._postprocess_nodes, nodes, query_bundle)


# A Markdown file's title, as Noema reads it from files: its first "# heading" line.
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
_MARKDOWN = (".md", ".markdown")


def _checked_nodes(nodes: object) -> list[NodeWithScore]:
    """``nodes`` as a list, refused unless each is a ``NodeWithScore``: a string or a bare node
    failed later, on its missing ``node``. A generator is read into the list returned (checking
    it consumed it, and the nodes were then none)."""
    items = nodes if isinstance(nodes, Iterable) and not isinstance(nodes, str) else [nodes]
    checked: list[NodeWithScore] = []
    for item in items:
        if not isinstance(item, NodeWithScore):
            raise noema.InputTypeError(
                f"nodes must be a list of NodeWithScore, got {type(item).__name__}"
            )
        checked.append(item)
    return checked


def _chunks(nodes: list[NodeWithScore]) -> list[noema.Document]:
    """The nodes as Noema documents under their own node ids. A chunk of a Markdown file gets
    the file's title (its first heading, found in whichever of the file's chunks holds it), as
    the retriever's documents get it when it reads the files, so ``format="sentences"`` heads
    sentences with ``# Google`` here too, not with the file name."""
    texts = [n.node.get_content(metadata_mode=MetadataMode.NONE) for n in nodes]
    titles: dict[str, str] = {}
    for node, text in zip(nodes, texts, strict=True):
        file = _markdown_file(node)
        heading = _HEADING.search(text) if file is not None else None
        if file is not None and heading is not None:
            titles.setdefault(file, heading.group(1))
    chunks = []
    for node, text in zip(nodes, texts, strict=True):
        metadata = dict(node.node.metadata)
        title = titles.get(_markdown_file(node) or "")
        if title is not None and "title" not in metadata:
            metadata["title"] = title
        chunks.append(noema.Document(text, id=node.node.node_id, metadata=metadata))
    return chunks


def _markdown_file(node: NodeWithScore) -> str | None:
    """The Markdown file a node was read from (a reader's ``file_path``, else ``file_name``)."""
    metadata = node.node.metadata
    file = metadata.get("file_path") or metadata.get("file_name")
    if isinstance(file, str) and file.lower().endswith(_MARKDOWN):
        return file
    return None
