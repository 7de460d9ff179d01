"""A LlamaIndex query engine over a Noema knowledge base. MockLLM echoes the prompt, so this runs
offline and shows the notation reaching the model; pass a real LLM to get answers."""

from __future__ import annotations

from pathlib import Path

from llama_index.core import SimpleDirectoryReader
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine

from noema_llamaindex import NoemaRetriever

documents = SimpleDirectoryReader(str(Path(__file__).parent / "docs")).load_data()
retriever = NoemaRetriever.from_documents(documents, top_k=3, hops=2)
engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())

if __name__ == "__main__":
    response = engine.query("Who founded the company that acquired Mellanox?")
    print(response)
    node = response.source_nodes[0].node
    print("\nsources:", [info.metadata["file_name"] for info in [node.source_node] if info])
