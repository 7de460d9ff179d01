from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import ParrotFakeChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from langchain_tests.integration_tests import RetrieversIntegrationTests

import noema
from noema_langchain import NoemaContextCompressor, NoemaDocumentTransformer, NoemaRetriever

_KB: list[noema.KnowledgeBase] = []


@pytest.fixture(autouse=True)
def _shared_kb(company_kb: noema.KnowledgeBase) -> None:
    if not _KB:
        _KB.append(company_kb)


class _NoemaRetrieverSuite(RetrieversIntegrationTests):
    """LangChain's own retriever suite over the shared knowledge base, with ``fields`` set
    (not collected itself: pytest collects only the ``Test`` classes below)."""

    fields: ClassVar[dict[str, Any]] = {}

    @property
    def retriever_constructor(self) -> type[NoemaRetriever]:
        return NoemaRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"knowledge_base": _KB[0], **self.fields}

    @property
    def retriever_query_example(self) -> str:
        return "Who founded Google?"


class TestNoemaRetrieverStandard(_NoemaRetrieverSuite):
    """LangChain's own retriever suite, against the per-fact mode."""

    fields: ClassVar[dict[str, Any]] = {"mode": "per_fact"}


class TestNoemaRetrieverStandardBlockMode(_NoemaRetrieverSuite):
    """The same suite against the default block mode, where ``k`` splits the block."""


def test_block_mode_k_splits_the_block_within_the_budget(company_kb: noema.KnowledgeBase) -> None:
    question = "Who founded the company that acquired YouTube?"
    parts = NoemaRetriever(company_kb, max_tokens=120).invoke(question, k=3)
    assert len(parts) == 3
    assert sum(d.metadata["token_count"] for d in parts) <= 120
    facts = [f for d in parts for f in d.metadata["fact_ids"]]
    # consecutive facts of the same ranking, a few fewer for the repeated entity lines
    assert facts == list(company_kb.retrieve(question, max_tokens=120).fact_ids[: len(facts)])
    for doc in parts:  # each block parses on its own: its own #n ids
        noema.parse_notation(doc.page_content)
        assert doc.page_content.startswith("#1 ")


def test_block_mode_returns_one_document_with_metadata(company_kb: noema.KnowledgeBase) -> None:
    (doc,) = NoemaRetriever(knowledge_base=company_kb).invoke("Who is Google's CEO?")
    result = company_kb.retrieve("Who is Google's CEO?")
    assert doc.page_content == result.text
    assert doc.metadata["token_count"] == result.token_count
    assert doc.metadata["relation_ids"] == list(result.relation_ids)
    assert doc.metadata["fact_matches"][0]["relation_id"] == result.fact_matches[0].relation_id
    assert doc.metadata["source_ids"] and set(doc.metadata["citations"]) == set(result.fact_ids)


def test_retriever_from_bundle_path(company_kb: noema.KnowledgeBase, tmp_path: Any) -> None:
    company_kb.save(tmp_path / "kb.noema")
    retriever = NoemaRetriever(knowledge_base=str(tmp_path / "kb.noema"), max_tokens=50, hops=0)
    (doc,) = retriever.invoke("Who founded Nvidia?")
    assert doc.metadata["token_count"] <= 50


def test_per_fact_blocks_are_self_contained(company_kb: noema.KnowledgeBase) -> None:
    docs = NoemaRetriever(knowledge_base=company_kb, mode="per_fact").invoke(
        "Who founded Google?", k=4
    )
    assert len(docs) == 4 and len({d.id for d in docs}) == 4
    for doc in docs:
        parsed = noema.parse_notation(doc.page_content)
        assert len(parsed.relations) + len(parsed.events) == 1
    assert [d.metadata["rank"] for d in docs] == [1, 2, 3, 4]


def test_bad_k_is_refused(company_kb: noema.KnowledgeBase) -> None:
    with pytest.raises(ValueError, match="k must be"):
        NoemaRetriever(knowledge_base=company_kb, mode="per_fact").invoke("x", k=0)


def test_lcel_chain_carries_notation_to_the_model(company_kb: noema.KnowledgeBase) -> None:
    retriever = NoemaRetriever(knowledge_base=company_kb)
    prompt = ChatPromptTemplate.from_template("Use these facts:\n{context}\n\nQuestion: {question}")

    def format_docs(docs: list[Document]) -> str:
        return "\n\n".join(d.page_content for d in docs)

    chain = (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | prompt
        | ParrotFakeChatModel()
        | StrOutputParser()
    )
    answer = chain.invoke("Who is Google's CEO?")
    assert "#1 Sundar Pichai :PERSON" in answer and "-ceo_of->" in answer
    assert "Question: Who is Google's CEO?" in answer


async def test_async_retrieval_does_not_block_the_loop(company_kb: noema.KnowledgeBase) -> None:
    retriever = NoemaRetriever(knowledge_base=company_kb, hops=2, max_tokens=400)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.001)
            ticks += 1

    task = asyncio.create_task(ticker())
    start = time.perf_counter()
    docs = await asyncio.gather(*(retriever.ainvoke("Who founded Google?") for _ in range(8)))
    elapsed = time.perf_counter() - start
    task.cancel()
    assert all(d == docs[0] for d in docs)
    assert ticks > 0 and (elapsed < 0.01 or ticks >= 3), "the event loop was blocked"


# a verbose sentence with one fact: its notation is shorter than the text
VERBOSE = (
    "As everyone who follows the technology industry closely will probably already know by now, "
    "it was Larry Page who, many years ago and with considerable ambition, founded Google."
)


def test_document_transformer_keeps_metadata() -> None:
    docs = [Document(VERBOSE, metadata={"source": "a"}, id="a")]
    (out,) = NoemaDocumentTransformer().transform_documents(docs)
    assert out.metadata["source"] == "a" and out.id == "a"
    assert out.metadata["noema_tokens_after"] == noema.count_tokens(out.page_content)
    assert out.page_content.endswith("#1 -found-> #2")
    assert out.metadata["noema_kept_original"] is False
    assert (
        NoemaDocumentTransformer(keep_empty=False).transform_documents([Document("Hello there.")])
        == []
    )


def test_document_transformer_never_returns_a_longer_text() -> None:
    # 40 documents of 1,678 tokens became 4,151 tokens of notation: a short text is kept
    short = Document("Larry Page founded Google. Google acquired YouTube in 2006.", id="s")
    out = NoemaDocumentTransformer().transform_documents([short, Document(VERBOSE)])
    assert out[0].page_content == short.page_content and out[0].id == "s"
    assert out[0].metadata["noema_kept_original"] is True
    before, after = out[0].metadata["noema_tokens_before"], out[0].metadata["noema_tokens_after"]
    assert before == after == noema.count_tokens(short.page_content)
    assert out[1].metadata["noema_kept_original"] is False
    for doc, original in zip(out, (short.page_content, VERBOSE), strict=True):
        assert noema.count_tokens(doc.page_content) <= noema.count_tokens(original)


async def test_document_transformer_async() -> None:
    out = await NoemaDocumentTransformer().atransform_documents([Document(VERBOSE)])
    assert out[0].page_content.endswith("#1 -found-> #2")


EXAMPLE_DOCS = Path(__file__).parent.parent / "examples" / "docs"


def _example_chunks() -> list[Document]:
    return [
        Document(p.read_text(), id=p.name, metadata={"source": str(p), "kind": "md"})
        for p in sorted(EXAMPLE_DOCS.glob("*.md"))
    ]


def test_compressor_keeps_chunk_sources() -> None:
    from langchain_core.retrievers import BaseRetriever

    chunks = _example_chunks()

    class ListRetriever(BaseRetriever):
        """A plain retriever returning fixed chunks (the 'other retriever' the compressor sits on)."""

        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            return chunks

    # ContextualCompressionRetriever lives in langchain-classic; the same wiring with LCEL:
    compressor = NoemaContextCompressor(max_tokens=80)
    question = "Who is the CEO of Google?"
    pipeline = ListRetriever() | (lambda docs: compressor.compress_documents(docs, question))
    (doc,) = pipeline.invoke(question)
    assert "-ceo_of->" in doc.page_content
    assert doc.metadata["token_count"] <= 80 < doc.metadata["tokens_before"]
    assert "google.md" in doc.metadata["source_ids"]
    cited = {c["document_id"] for cs in doc.metadata["citations"].values() for c in cs}
    assert cited <= {c.id for c in chunks}
    # the chunks' own metadata, by chunk id, and LangChain's "source" of each
    assert doc.metadata["source_metadata"]["google.md"] == {
        "source": str(EXAMPLE_DOCS / "google.md"),
        "kind": "md",
    }
    assert str(EXAMPLE_DOCS / "google.md") in doc.metadata["sources"]


def test_compressor_never_returns_more_tokens_than_came_in() -> None:
    # a short chunk became more tokens of notation than it held (108 -> 113)
    chunk = Document(
        "Larry Page and Sergey Brin founded Google in 1998.",
        id="c1",
        metadata={"source": "https://example.com/google"},
    )
    assert NoemaContextCompressor(max_tokens=200).compress_documents(
        [chunk], "Who founded Google?"
    ) == [chunk]


def test_compressor_builds_a_chunk_set_once() -> None:
    chunks = [noema.Document("Sundar Pichai is the CEO of Google.", id="c")]
    first = noema.compression_base(chunks)
    assert noema.compression_base(list(chunks)) is first  # the next question reuses it
    changed = [noema.Document("Sundar Pichai is the CEO of Google.", id="c", metadata={"a": 1})]
    assert noema.compression_base(changed) is not first


def test_ingest_takes_langchain_documents_with_their_ids_and_metadata(make_kb) -> None:  # type: ignore[no-untyped-def]
    kb = make_kb()
    report = kb.ingest(
        [Document("Larry Page founded Google.", id="g1", metadata={"source": "google.md"})]
    )
    assert report.documents == 1
    assert kb.graph.documents["g1"].metadata == {"source": "google.md"}


def test_a_source_ingested_again_with_new_text_replaces_its_document(make_kb) -> None:  # type: ignore[no-untyped-def]
    # LangChain loaders set metadata["source"], not Document.id: ids fell back to content hashes,
    # so a changed file was stored twice and its old facts stayed
    kb = make_kb()
    kb.ingest([Document("Larry Page founded Google.", metadata={"source": "notes/google.md"})])
    report = kb.ingest(
        [Document("Sergey Brin founded Google.", metadata={"source": "notes/google.md"})]
    )
    assert report.documents == 1 and list(kb.graph.documents) == ["notes/google.md"]
    text = kb.retrieve("Who founded Google?", format="natural_language").text
    assert "Sergey Brin" in text and "Larry Page" not in text
    assert kb.delete_documents(["notes/google.md"]) == (2, 1)
    assert kb.graph.documents == {} and kb.graph.entities == {}


def test_the_chunks_of_a_source_are_replaced_and_deleted_together(make_kb) -> None:  # type: ignore[no-untyped-def]
    # a text splitter's chunks share their document's source: three chunks, then two
    def chunks(*texts: str) -> list[Document]:
        return [
            Document(t, metadata={"source": "nvidia.md", "start": n}) for n, t in enumerate(texts)
        ]

    kb = make_kb()
    kb.ingest([Document("Ada Lovelace wrote the first program.", metadata={"source": "ada.md"})])
    kb.ingest(
        chunks("Jensen Huang founded Nvidia.", "Nvidia acquired Mellanox.", "Nvidia sells GPUs.")
    )
    assert sorted(kb.graph.documents) == ["ada.md", "nvidia.md#1", "nvidia.md#2", "nvidia.md#3"]
    kb.ingest(chunks("Jensen Huang founded Nvidia.", "Nvidia acquired Arm."))
    assert sorted(kb.graph.documents) == ["ada.md", "nvidia.md#1", "nvidia.md#2"]
    assert "Mellanox" not in kb.retrieve("What did Nvidia acquire?", format="natural_language").text
    kb.delete_documents(["nvidia.md"])  # the source names all its chunks
    assert list(kb.graph.documents) == ["ada.md"]


def test_document_identity_is_the_id_else_the_source_else_the_file_path(make_kb) -> None:  # type: ignore[no-untyped-def]
    kb = make_kb()
    kb.ingest(
        [
            Document("Larry Page founded Google.", id="g1", metadata={"source": "google.md"}),
            Document("Jensen Huang founded Nvidia.", metadata={"file_path": "/data/nvidia.pdf"}),
            Document("Ada Lovelace wrote the first program."),
        ]
    )
    first, second, third = kb.graph.documents  # in the order given
    assert (first, second) == ("g1", "/data/nvidia.pdf") and third.startswith("doc_")


def test_retriever_from_documents_and_texts(embedder, extractor) -> None:  # type: ignore[no-untyped-def]
    options = {"embedder": embedder, "extractor": extractor}
    retriever = NoemaRetriever.from_documents(
        [Document("Larry Page founded Google.", id="g1")],
        knowledge_base_options=options,
        format="sentences",
    )
    [doc] = retriever.invoke("Who founded Google?")
    assert doc.page_content == "# g1\nLarry Page founded Google." and doc.metadata[
        "source_ids"
    ] == ["g1"]
    from_texts = NoemaRetriever.from_texts(
        ["Jensen Huang founded Nvidia."], ids=["n1"], knowledge_base_options=options
    )
    assert "Jensen Huang" in from_texts.invoke("Who founded Nvidia?")[0].page_content
    with pytest.raises(ValueError, match="max_tokens"):
        NoemaRetriever(knowledge_base=retriever.knowledge_base, max_tokens=0)


def test_per_call_options_and_search_kwargs_are_honoured(company_kb: noema.KnowledgeBase) -> None:
    retriever = NoemaRetriever(knowledge_base=company_kb)
    question = "Who founded the company that acquired YouTube?"
    [small] = retriever.invoke(question, max_tokens=30)
    assert small.metadata["token_count"] <= 30
    [spec] = retriever.invoke(question, seeds="vector", hops=0, top_k=1)
    assert len(spec.metadata["fact_ids"]) == 1
    fixed = NoemaRetriever(knowledge_base=company_kb, search_kwargs={"max_tokens": 30})
    assert fixed.invoke(question)[0].metadata["token_count"] <= 30
    with pytest.raises(TypeError, match="tpo_k"):
        retriever.invoke(question, tpo_k=1)


@pytest.mark.parametrize("mode", ["block", "per_fact"])
def test_results_carry_the_original_source(embedder, extractor, mode: str) -> None:  # type: ignore[no-untyped-def]
    retriever = NoemaRetriever.from_documents(
        [
            Document(
                "Larry Page founded Google.",
                id="g1",
                metadata={"source": "docs/google.md", "lang": "en"},
            ),
            Document("Jensen Huang founded Nvidia.", id="n1"),
        ],
        knowledge_base_options={"embedder": embedder, "extractor": extractor},
        mode=mode,
        max_tokens=40,
    )
    first = retriever.invoke("Who founded Google?")[0]
    assert first.metadata["source"] == "docs/google.md"
    if mode == "per_fact":
        assert first.metadata["lang"] == "en"
    else:
        assert "docs/google.md" in first.metadata["sources"]


def test_retrievers_pickle_and_deepcopy_with_their_knowledge_base(
    company_kb: noema.KnowledgeBase,
) -> None:
    import copy
    import pickle

    from noema_llamaindex import NoemaRetriever as LlamaRetriever

    question = "Who founded the company that acquired YouTube?"
    retriever = NoemaRetriever(company_kb, mode="per_fact", k=3)  # positional, as in LlamaIndex
    assert retriever.knowledge_base is company_kb
    for clone in (pickle.loads(pickle.dumps(retriever)), copy.deepcopy(retriever)):
        assert clone.knowledge_base is not company_kb
        assert clone.knowledge_base.graph == company_kb.graph
        assert clone.invoke(question) == retriever.invoke(question)
    llama = LlamaRetriever(company_kb)
    clone = pickle.loads(pickle.dumps(llama))
    assert [n.node.text for n in clone.retrieve(question)] == [
        n.node.text for n in llama.retrieve(question)
    ]
    with pytest.raises(TypeError, match="both by position and by name"):
        NoemaRetriever(company_kb, knowledge_base=company_kb)


def test_dumpd_round_trips_a_retriever_of_a_bundle(
    company_kb: noema.KnowledgeBase, tmp_path: Path
) -> None:
    from langchain_core.load import dumpd, load

    path = str(company_kb.save(tmp_path / "kb.noema"))
    retriever = NoemaRetriever(path, mode="per_fact", k=2, max_tokens=150)
    data = dumpd(retriever)
    assert data["type"] == "constructor" and data["kwargs"]["knowledge_base"] == path
    again = load(data, valid_namespaces=["noema_langchain"], allowed_objects=[NoemaRetriever])
    assert isinstance(again, NoemaRetriever) and (again.k, again.max_tokens) == (2, 150)
    question = "Who founded Google?"
    assert again.invoke(question) == retriever.invoke(question)
    # a knowledge base held only in memory has no JSON form (pickle it): LangChain's own marker
    assert dumpd(NoemaRetriever(company_kb))["type"] == "not_implemented"
