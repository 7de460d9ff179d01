"""The LlamaIndex adapters' smaller promises: clear errors, file names, titles."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core import SimpleDirectoryReader
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import NodeWithScore, TextNode

import noema
from noema_llamaindex import NoemaNodePostprocessor, NoemaRetriever

EXAMPLES = Path(__file__).parent.parent / "examples" / "docs"
QUESTION = "Who founded the company that acquired LinkedIn?"


@pytest.fixture(scope="module")
def files_kb(
    embedder: noema.SentenceTransformerEmbedder, extractor: noema.SpacyExtractor
) -> noema.KnowledgeBase:
    kb = noema.KnowledgeBase(embedder=embedder, extractor=extractor)
    kb.ingest(SimpleDirectoryReader(str(EXAMPLES)).load_data())  # type: ignore[arg-type]
    return kb


@pytest.mark.parametrize("given", [None, 42, b"kb.noema"], ids=["None", "int", "bytes"])
def test_a_knowledge_base_that_is_none_is_a_clear_error(given: object) -> None:
    # NoemaRetriever(None) failed deep in pathlib
    with pytest.raises(noema.InputTypeError, match="knowledge_base must be a noema.KnowledgeBase"):
        NoemaRetriever(given)  # type: ignore[arg-type]


def test_a_block_from_several_files_names_them_all(files_kb: noema.KnowledgeBase) -> None:
    # a block node built from six files carried the file_name of one of them
    (hit,) = NoemaRetriever(files_kb, format="sentences", max_tokens=400).retrieve(QUESTION)
    metadata = hit.node.metadata
    sources = metadata["source_ids"]
    assert len(sources) > 1
    names = [files_kb.graph.documents[s].metadata["file_name"] for s in sources]
    assert metadata["file_names"] == list(dict.fromkeys(names))
    assert "file_name" not in metadata and "file_path" not in metadata
    assert "file_names" not in hit.node.get_content(metadata_mode="llm")  # type: ignore[arg-type]


def test_a_block_from_one_file_keeps_its_file_name(files_kb: noema.KnowledgeBase) -> None:
    [linkedin] = [
        d.id for d in files_kb.graph.documents.values() if d.metadata["file_name"] == "linkedin.md"
    ]
    only = {"document_ids": [linkedin]}
    (hit,) = NoemaRetriever(files_kb, filters=only).retrieve("Who founded LinkedIn?")
    assert hit.node.metadata["source_ids"] == [linkedin]
    assert hit.node.metadata["file_name"] == "linkedin.md"
    assert "file_names" not in hit.node.metadata


def test_the_postprocessor_heads_sentences_with_titles_as_the_retriever_does(
    files_kb: noema.KnowledgeBase,
) -> None:
    # the postprocessor headed them "# google.md" where the retriever wrote "# Google"
    documents = SimpleDirectoryReader(str(EXAMPLES)).load_data()
    nodes = SentenceSplitter(chunk_size=64, chunk_overlap=0).get_nodes_from_documents(documents)
    assert len(nodes) > len(documents)  # some titles are in another chunk of their file
    (out,) = NoemaNodePostprocessor(format="sentences", max_tokens=150).postprocess_nodes(
        [NodeWithScore(node=n) for n in nodes], query_str=QUESTION
    )
    (hit,) = NoemaRetriever(files_kb, format="sentences", max_tokens=400).retrieve(QUESTION)
    headings = [line for line in out.node.get_content().splitlines() if line.startswith("# ")]
    titled = {line for line in hit.node.get_content().splitlines() if line.startswith("# ")}
    assert headings and not any(h.endswith(".md") for h in headings)
    assert set(headings) <= titled | {"# Nvidia's early years", "# Nvidia"}
    assert all(  # the metadata handed back is the nodes' own
        "title" not in m for m in out.node.metadata["source_metadata"].values()
    )


def test_the_postprocessor_refuses_a_misspelled_option() -> None:
    # NoemaNodePostprocessor(max_token=20) was taken and the budget stayed 200
    with pytest.raises(noema.OptionError, match="did you mean 'max_tokens'"):
        NoemaNodePostprocessor(max_token=20)


def test_the_postprocessor_round_trips_through_its_dict() -> None:
    postprocessor = NoemaNodePostprocessor(max_tokens=60, hops=2)
    again = NoemaNodePostprocessor.from_dict(postprocessor.to_dict())
    assert (again.max_tokens, again.hops) == (60, 2)


@pytest.mark.parametrize(
    "nodes",
    ["Larry Page founded Google.", ["Larry Page founded Google."], [None]],
    ids=["str", "list of str", "None"],
)
def test_the_postprocessor_names_nodes_of_the_wrong_kind(nodes: object) -> None:
    # AttributeError: 'str' object has no attribute 'node'
    with pytest.raises(noema.InputTypeError, match=r"^nodes must be a list of NodeWithScore"):
        NoemaNodePostprocessor().postprocess_nodes(nodes, query_str=QUESTION)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"similarity_top_k": True}, noema.OptionError, "similarity_top_k must be"),
        ({"similarity_topk": 2}, noema.InputTypeError, "did you mean 'similarity_top_k'"),
        ({"max_token": 50}, noema.InputTypeError, "did you mean 'max_tokens'"),
    ],
    ids=["bool similarity_top_k", "misspelled own option", "misspelled retrieve option"],
)
def test_the_retriever_refuses_bad_options_with_the_valid_names(
    files_kb: noema.KnowledgeBase, options: dict[str, object], error: type[Exception], message: str
) -> None:
    # similarity_top_k=True was one node; an unknown name listed the retrieve options only
    with pytest.raises(error, match=message) as caught:
        NoemaRetriever(files_kb, **options)  # type: ignore[arg-type]
    if error is noema.InputTypeError:
        assert all(name in str(caught.value) for name in ("mode", "similarity_top_k", "hops"))


def test_the_postprocessor_reads_a_generator_of_nodes_once() -> None:
    # the check consumed it, and the postprocessor then saw no nodes and returned none
    texts = ["Larry Page founded Google.", "Google acquired YouTube in 2006."]
    nodes = [NodeWithScore(node=TextNode(text=t, id_=f"n{i}")) for i, t in enumerate(texts)]
    postprocessor = NoemaNodePostprocessor(max_tokens=200)
    from_list = postprocessor.postprocess_nodes(nodes, query_str="Who founded Google?")
    generated = postprocessor.postprocess_nodes(
        (n for n in nodes),  # type: ignore[arg-type]
        query_str="Who founded Google?",
    )
    assert from_list and [n.node.get_content() for n in generated] == [
        n.node.get_content() for n in from_list
    ]
