from __future__ import annotations

import re
from pathlib import Path

import pytest
from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

import noema
from noema_llamaindex import NoemaNodePostprocessor, NoemaRetriever


class MiniLMEmbedding(BaseEmbedding):
    """The real all-MiniLM-L6-v2 (through Noema's embedder) as a LlamaIndex embedding model."""

    def _vectors(self, texts: list[str]) -> list[list[float]]:
        return noema.SentenceTransformerEmbedder().embed(texts).tolist()  # type: ignore[no-any-return]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vectors([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vectors([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._vectors(texts)


def test_retriever_nodes(company_kb: noema.KnowledgeBase) -> None:
    (hit,) = NoemaRetriever(company_kb).retrieve("Who is Google's CEO?")
    result = company_kb.retrieve("Who is Google's CEO?")
    assert hit.node.get_content() == result.text
    assert hit.node.get_content(metadata_mode=MetadataMode.LLM) == result.text  # metadata kept out
    assert hit.node.metadata["relation_ids"] == list(result.relation_ids)
    assert hit.score == result.fact_matches[0].similarity


def test_per_fact_nodes_have_distinct_ids(company_kb: noema.KnowledgeBase) -> None:
    nodes = NoemaRetriever(company_kb, mode="per_fact", max_tokens=400).retrieve(
        "Who founded Google?"
    )
    assert len(nodes) > 3 and len({n.node.node_id for n in nodes}) == len(nodes)
    assert all(
        n.node.get_content(metadata_mode=MetadataMode.LLM) == n.node.get_content() for n in nodes
    )


def test_query_engine_carries_notation_to_the_llm(company_kb: noema.KnowledgeBase) -> None:
    engine = RetrieverQueryEngine.from_args(NoemaRetriever(company_kb), llm=MockLLM())
    response = str(engine.query("Who is Google's CEO?"))
    assert "#1 Sundar Pichai :PERSON" in response and "-ceo_of->" in response
    assert "entity_ids" not in response


async def test_async_query_engine(company_kb: noema.KnowledgeBase) -> None:
    engine = RetrieverQueryEngine.from_args(NoemaRetriever(company_kb), llm=MockLLM())
    response = await engine.aquery("Who founded Nvidia?")
    assert "-found->" in str(response)


CHUNKS = [
    "Larry Page and Sergey Brin founded Google in 1998.",
    "Sundar Pichai is the CEO of Google. Google is headquartered in Mountain View.",
    "Marie Curie was born in Warsaw. She won the Nobel Prize in Physics.",
]


def test_vector_index_then_postprocessor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Settings, "_embed_model", MiniLMEmbedding())
    index = VectorStoreIndex([TextNode(text=t, id_=f"n{k}") for k, t in enumerate(CHUNKS)])
    engine = index.as_query_engine(
        similarity_top_k=3,
        llm=MockLLM(),
        # three short chunks (49 tokens): only a budget below that makes notation worth it
        node_postprocessors=[NoemaNodePostprocessor(max_tokens=30)],
    )
    response = engine.query("Who is the CEO of Google?")
    assert "-ceo_of->" in str(response)
    (node,) = response.source_nodes
    assert set(node.node.metadata["source_node_ids"]) <= {"n0", "n1", "n2"}
    assert "n1" in node.node.metadata["source_node_ids"]
    assert node.node.metadata["token_count"] <= 30 < node.node.metadata["tokens_before"]


def test_postprocessor_needs_a_query() -> None:
    with pytest.raises(ValueError, match="query"):
        NoemaNodePostprocessor().postprocess_nodes([NodeWithScore(node=TextNode(text="x"))])


async def test_postprocessor_async() -> None:
    nodes = [NodeWithScore(node=TextNode(text=t, id_=f"n{k}")) for k, t in enumerate(CHUNKS)]
    out = await NoemaNodePostprocessor(max_tokens=30).apostprocess_nodes(
        nodes, query_str="Where was Marie Curie born?"
    )
    assert "Warsaw" in out[0].node.get_content() and len(out) == 1


def test_ingest_and_from_documents_take_llamaindex_nodes(embedder, extractor) -> None:  # type: ignore[no-untyped-def]
    from llama_index.core import Document as LlamaDocument

    nodes = [
        LlamaDocument(text="Larry Page founded Google.", id_="g1", metadata={"file_name": "g.md"}),
        TextNode(text="Jensen Huang founded Nvidia.", id_="n1"),
    ]
    retriever = NoemaRetriever.from_documents(
        nodes, knowledge_base_options={"embedder": embedder, "extractor": extractor}
    )
    graph = retriever.knowledge_base.graph
    assert sorted(graph.documents) == ["g1", "n1"]
    assert graph.documents["g1"].metadata == {"file_name": "g.md"}
    [hit] = retriever.retrieve("Who founded Nvidia?")
    assert "Jensen Huang" in hit.node.get_content()


@pytest.mark.parametrize("mode", ["block", "per_fact"])
def test_nodes_point_at_their_source_document(embedder, extractor, mode: str) -> None:  # type: ignore[no-untyped-def]
    from llama_index.core import Document as LlamaDocument

    retriever = NoemaRetriever.from_documents(
        [
            LlamaDocument(
                text="Larry Page founded Google.", id_="g1", metadata={"file_name": "g.md"}
            )
        ],
        knowledge_base_options={"embedder": embedder, "extractor": extractor},
        mode=mode,
    )
    [hit] = retriever.retrieve("Who founded Google?")
    assert hit.node.ref_doc_id == "g1"
    assert hit.node.source_node is not None and hit.node.source_node.metadata == {
        "file_name": "g.md"
    }
    assert hit.score is not None


@pytest.mark.parametrize("mode", ["block", "per_fact"])
def test_source_document_does_not_depend_on_document_ids(embedder, extractor, mode: str) -> None:  # type: ignore[no-untyped-def]
    """SimpleDirectoryReader gives random ids: the same texts must give the same source. The
    fact is in both documents; the one that also holds the second fact is the source."""
    from llama_index.core import Document as LlamaDocument

    texts = {
        "short.md": "Larry Page founded Google.",
        "long.md": "Larry Page founded Google. Sundar Pichai is the CEO of Google.",
    }
    chosen = set()
    for ids in (("a", "z"), ("z", "a")):
        documents = [
            LlamaDocument(text=text, id_=id_, metadata={"file_name": name})
            for id_, (name, text) in zip(ids, texts.items(), strict=True)
        ]
        retriever = NoemaRetriever.from_documents(
            documents,
            knowledge_base_options={"embedder": embedder, "extractor": extractor},
            mode=mode,
        )
        hits = retriever.retrieve("Who founded Google and who is its CEO?")
        chosen.add(tuple(h.node.source_node.metadata["file_name"] for h in hits))  # type: ignore[union-attr]
    assert len(chosen) == 1, chosen
    if mode == "block":
        assert chosen == {("long.md",)}


def test_similarity_top_k_and_metadata_filters(embedder, extractor) -> None:  # type: ignore[no-untyped-def]
    from llama_index.core.vector_stores.types import (
        FilterOperator,
        MetadataFilter,
        MetadataFilters,
    )

    kb = noema.KnowledgeBase(embedder=embedder, extractor=extractor)
    texts = {
        ("g", "en"): "Larry Page founded Google. Google acquired YouTube.",
        ("n", "de"): "Jensen Huang founded Nvidia. Nvidia acquired Mellanox.",
    }
    kb.ingest([noema.Document(t, id=i, metadata={"lang": lang}) for (i, lang), t in texts.items()])
    question = "Who founded the company?"
    everything = NoemaRetriever(kb, mode="per_fact", max_tokens=400).retrieve(question)
    assert len(everything) > 2
    capped = NoemaRetriever(kb, mode="per_fact", max_tokens=400, similarity_top_k=2).retrieve(
        question
    )
    assert [n.node.node_id for n in capped] == [n.node.node_id for n in everything[:2]]
    english = MetadataFilters(filters=[MetadataFilter(key="lang", value="en")])
    nodes = NoemaRetriever(kb, mode="per_fact", max_tokens=400, filters=english).retrieve(question)
    text = " ".join(n.node.get_content() for n in nodes)
    assert nodes and "Google" in text and "Nvidia" not in text
    not_equal = MetadataFilters(
        filters=[MetadataFilter(key="lang", value="en", operator=FilterOperator.NE)]
    )
    with pytest.raises(ValueError, match="only equality"):
        NoemaRetriever(kb, filters=not_equal)
    with pytest.raises(ValueError, match="similarity_top_k"):
        NoemaRetriever(kb, similarity_top_k=0)


def test_postprocessor_never_returns_more_tokens_than_came_in() -> None:
    # the postprocessor turned 119 tokens into 145
    node = NodeWithScore(node=TextNode(text="Larry Page founded Google in 1998.", id_="n1"))
    assert NoemaNodePostprocessor().postprocess_nodes([node], query_str="Who founded Google?") == [
        node
    ]


def test_postprocessor_keeps_node_metadata_and_source() -> None:
    from llama_index.core import SimpleDirectoryReader

    docs = SimpleDirectoryReader(
        str(Path(__file__).parent.parent / "examples" / "docs")
    ).load_data()
    nodes = [
        NodeWithScore(node=TextNode(text=d.text, id_=d.metadata["file_name"], metadata=d.metadata))
        for d in docs
    ]
    (out,) = NoemaNodePostprocessor(max_tokens=80).postprocess_nodes(
        nodes, query_str="Who is the CEO of Google?"
    )
    assert out.node.metadata["token_count"] <= 80 < out.node.metadata["tokens_before"]
    assert out.node.metadata["source_metadata"]["google.md"]["file_name"] == "google.md"
    assert out.node.ref_doc_id in out.node.metadata["source_node_ids"]
    assert "source_metadata" not in out.node.get_content(metadata_mode=MetadataMode.LLM)


def test_every_per_fact_node_has_a_score_llamaindex_tools_can_use(
    company_kb: noema.KnowledgeBase,
) -> None:
    # facts reached by expansion had score=None, which broke these two
    from llama_index.core.postprocessor import SimilarityPostprocessor
    from llama_index.core.retrievers import QueryFusionRetriever

    question = "Who founded the company that acquired YouTube?"
    retriever = NoemaRetriever(company_kb, mode="per_fact", hops=2)
    nodes = retriever.retrieve(question)
    assert len(nodes) > 1 and all(isinstance(n.score, float) for n in nodes)
    fused = QueryFusionRetriever(
        [retriever], llm=MockLLM(), num_queries=1, use_async=False, mode="relative_score"
    ).retrieve(question)
    assert fused and {n.node.node_id for n in fused} <= {n.node.node_id for n in nodes}
    assert all(isinstance(n.score, float) for n in fused)
    kept = SimilarityPostprocessor(similarity_cutoff=0.3).postprocess_nodes(nodes)
    assert [n.node.node_id for n in kept] == [n.node.node_id for n in nodes if n.score >= 0.3]


def test_reader_documents_get_a_stable_identity_title_and_metadata(
    embedder, extractor, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    # SimpleDirectoryReader gives random ids, so ingesting a folder twice
    # doubled the knowledge base and format="sentences" headed each document with its UUID
    from llama_index.core import SimpleDirectoryReader
    from llama_index.core.node_parser import SentenceSplitter

    folder = Path(__file__).parent.parent / "examples" / "docs"
    (tmp_path / "notes.txt").write_text("Ada Lovelace wrote the first computer program.")
    kb = noema.KnowledgeBase(embedder=embedder, extractor=extractor)
    kb.ingest(SimpleDirectoryReader(str(folder)).load_data())
    first = sorted(kb.graph.documents)
    kb.ingest(SimpleDirectoryReader(str(folder)).load_data())  # new random ids, the same files
    assert sorted(kb.graph.documents) == first and len(first) == len(list(folder.glob("*.md")))
    google = kb.graph.documents[f"file:{(folder / 'google.md').resolve().as_posix()}"]
    assert google.metadata["title"] == "Google" and google.metadata["file_name"] == "google.md"

    kb.ingest(SimpleDirectoryReader(str(tmp_path)).load_data())
    text = kb.retrieve("Who wrote the first computer program?", format="sentences").text
    assert "notes.txt" in text and "file:" not in text  # the file's name heads its sentences
    for line in text.splitlines():
        assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", line), line

    retriever = NoemaRetriever(kb, mode="per_fact")
    for hit in retriever.retrieve("Who is the CEO of Google?"):
        assert hit.node.metadata["file_name"].endswith((".md", ".txt"))
        assert "file_name" not in hit.node.get_content(metadata_mode=MetadataMode.LLM)
    (block,) = NoemaRetriever(kb).retrieve("Who is the CEO of Google?")
    # one file: its file_name; several: file_names, and no one file_name for all of them
    names = block.node.metadata.get("file_names") or [block.node.metadata["file_name"]]
    assert "google.md" in names

    # chunks of one file: one document each, the same ones the next time
    def chunks() -> list[TextNode]:
        splitter = SentenceSplitter(chunk_size=64, chunk_overlap=0)
        return splitter.get_nodes_from_documents(SimpleDirectoryReader(str(folder)).load_data())  # type: ignore[return-value]

    chunked = noema.KnowledgeBase(embedder=embedder, extractor=extractor)
    chunked.ingest(chunks())
    once = sorted(chunked.graph.documents)
    chunked.ingest(chunks())
    assert sorted(chunked.graph.documents) == once and len(once) > len(first)


def test_an_id_the_user_chose_is_kept(embedder, extractor) -> None:  # type: ignore[no-untyped-def]
    from llama_index.core import Document as LlamaDocument

    kb = noema.KnowledgeBase(embedder=embedder, extractor=extractor)
    kb.ingest(
        [
            LlamaDocument(
                text="Larry Page founded Google.", id_="mine", metadata={"file_path": "/x/g.md"}
            )
        ]
    )
    assert list(kb.graph.documents) == ["mine"]
