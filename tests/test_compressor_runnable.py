"""The LangChain compressor as a Runnable and inside ``ContextualCompressionRetriever``."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough

import noema
from noema_langchain import NoemaContextCompressor

EXAMPLES = Path(__file__).parent.parent / "examples" / "docs"
QUESTION = "Who runs Google?"


@pytest.fixture(scope="module")
def chunks() -> list[Document]:
    return [Document(p.read_text(), id=p.name) for p in sorted(EXAMPLES.glob("*.md"))]


def test_the_compressor_is_a_runnable_in_a_chain(chunks: list[Document]) -> None:
    # it was a BaseDocumentCompressor only: a chain had to wrap it in a RunnableLambda
    compressor = NoemaContextCompressor(max_tokens=60)
    assert isinstance(compressor, Runnable)
    expected = list(compressor.compress_documents(chunks, QUESTION))
    assert compressor.invoke({"documents": chunks, "query": QUESTION}) == expected
    chain = {
        "documents": RunnableLambda(lambda _: chunks),
        "query": RunnablePassthrough(),
    } | compressor
    (doc,) = chain.invoke(QUESTION)
    assert doc == expected[0] and doc.metadata["token_count"] <= 60
    assert compressor.batch([{"documents": chunks, "query": QUESTION}]) == [expected]


async def test_the_runnable_has_an_async_path(chunks: list[Document]) -> None:
    compressor = NoemaContextCompressor(max_tokens=60)
    out = await compressor.ainvoke({"documents": chunks, "query": QUESTION})
    assert out == list(compressor.compress_documents(chunks, QUESTION))


def test_a_wrong_input_is_a_clear_error(chunks: list[Document]) -> None:
    with pytest.raises(noema.OptionError, match="takes {'documents'"):
        NoemaContextCompressor().invoke(chunks)  # type: ignore[arg-type]


def test_it_works_in_contextual_compression_retriever(chunks: list[Document]) -> None:
    retrievers = pytest.importorskip(
        "langchain_classic.retrievers", reason="langchain-classic comes with the langchain extra"
    )

    class Chunks(BaseRetriever):
        """A chunk retriever that returns every chunk."""

        def _get_relevant_documents(self, query: str, *, run_manager: object) -> list[Document]:
            return chunks

    compressor = NoemaContextCompressor(max_tokens=60)
    retriever = retrievers.ContextualCompressionRetriever(
        base_compressor=compressor, base_retriever=Chunks()
    )
    assert retriever.invoke(QUESTION) == list(compressor.compress_documents(chunks, QUESTION))


@pytest.mark.parametrize(
    "documents",
    ["Larry Page founded Google.", ["Larry Page founded Google."], [noema.Document("Larry.")], 42],
    ids=["str", "list of str", "noema Document", "int"],
)
def test_documents_of_the_wrong_kind_are_a_clear_error(documents: object) -> None:
    # AttributeError: 'str' object has no attribute 'page_content'
    compressor = NoemaContextCompressor()
    message = r"^documents must be a list of LangChain Documents, got "
    with pytest.raises(noema.InputTypeError, match=message):
        compressor.invoke({"documents": documents, "query": QUESTION})
    with pytest.raises(noema.InputTypeError, match=message):
        compressor.compress_documents(documents, QUESTION)  # type: ignore[arg-type]
