"""Noema as a context compressor on top of a plain chunk retriever: the chunks the retriever
returns are turned into the notation of the question's sub-graph, with each fact traced to its
chunk. Prints the tokens before and after."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from noema_langchain import NoemaContextCompressor

CHUNKS = [
    Document(p.read_text(), id=p.name, metadata={"source": str(p)})
    for p in sorted((Path(__file__).parent / "docs").glob("*.md"))
]


class AllChunks(BaseRetriever):
    """Stands for any retriever (vector store, BM25, ...): here it returns every chunk."""

    def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        return CHUNKS


# the defaults: 5 seeds, 1 hop, 200 tokens (at 120 tokens the hop to LinkedIn's page comes
# before Microsoft's own headquarters sentence, and the answer is cut)
compressor = NoemaContextCompressor()

# ContextualCompressionRetriever lives in langchain-classic; with langchain-core alone, the
# retriever and the compressor compose as a chain
compressed = {"chunks": AllChunks(), "question": RunnablePassthrough()} | RunnableLambda(
    lambda x: compressor.compress_documents(x["chunks"], x["question"])
)

if __name__ == "__main__":
    question = "Where is the company that acquired GitHub headquartered?"
    (context,) = compressed.invoke(question)
    print(context.page_content)
    print(
        f"\n{context.metadata['tokens_before']} tokens of chunks -> {context.metadata['token_count']} tokens of notation"
    )
    for fact, citations in context.metadata["citations"].items():
        print(f"{fact}: from {', '.join(c['document_id'] for c in citations)}")
