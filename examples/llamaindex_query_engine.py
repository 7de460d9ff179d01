"""A LlamaIndex query engine over a Noema knowledge base. MockLLM echoes the prompt, so this runs
offline and shows the notation reaching the model; pass a real LLM to get answers."""

from __future__ import annotations

from pathlib import Path

from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine

import noema
from noema_llamaindex import NoemaRetriever

kb = noema.KnowledgeBase()
kb.ingest(sorted((Path(__file__).parent / "docs").glob("*.md")))

engine = RetrieverQueryEngine.from_args(NoemaRetriever(kb, top_k=3, hops=2), llm=MockLLM())

if __name__ == "__main__":
    response = engine.query("Who founded the company that acquired Mellanox?")
    print(response)
    print("\nsources:", response.source_nodes[0].node.metadata["source_ids"])
