"""What LangChain and LlamaIndex users expect of both adapters alike: one source of
truth for the options, unknown fields refused, filters, stable ids, scores in result order."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import subprocess
import sys
import typing
from collections.abc import Callable
from typing import Any, get_args

import pytest
from langchain_core.documents import Document
from llama_index.core.postprocessor import SimilarityPostprocessor
from llama_index.core.schema import NodeWithScore

import noema
import noema_langchain
import noema_llamaindex
from noema.adapters import unknown_option_message
from noema.retrieval.formats import FORMATS
from noema.retrieval.options import option_names
from noema.retrieval.strategies import STRATEGIES

QUESTION = "Who founded the company that acquired YouTube?"


def _accepted(hint: Any) -> set[object]:
    """The values a ``Literal`` (possibly inside ``Optional``) accepts, or the hint itself."""
    if typing.get_origin(hint) is typing.Literal:
        return set(get_args(hint))
    return {hint}


def _core() -> dict[str, tuple[object, set[object]]]:
    hints = typing.get_type_hints(noema.RetrieveOptions)
    return {
        f.name: (f.default, _accepted(hints[f.name]))
        for f in dataclasses.fields(noema.RetrieveOptions)
    }


def _pydantic_options(model: type[Any]) -> dict[str, tuple[object, set[object]]]:
    return {
        name: (model.model_fields[name].default, _accepted(model.model_fields[name].annotation))
        for name in option_names()
        if name in model.model_fields
    }


@pytest.mark.parametrize(
    "options",
    [
        lambda: _pydantic_options(noema_langchain.NoemaRetriever),
        lambda: _pydantic_options(noema_langchain.NoemaContextCompressor),
        lambda: _pydantic_options(noema_llamaindex.NoemaNodePostprocessor),
    ],
    ids=[
        "langchain-retriever",
        "langchain-compressor",
        "llamaindex-postprocessor",
    ],
)
def test_every_adapter_takes_every_option_with_the_core_default_and_values(options: Any) -> None:
    assert options() == _core()


def test_the_option_types_and_default_models_are_exported() -> None:
    # the exported types name what the registries hold, so a new format or strategy is offered
    assert set(get_args(noema.Format)) == set(FORMATS)
    assert set(get_args(noema.SeedStrategy)) == set(STRATEGIES)
    assert noema.DEFAULT_SPACY_MODEL == "en_core_web_sm"
    assert noema.DEFAULT_EMBEDDING_MODEL == "all-MiniLM-L6-v2"
    for model in ("spacy_model", "embedding_model"):
        default = getattr(noema, f"DEFAULT_{model.upper()}")
        assert noema_langchain.NoemaContextCompressor.model_fields[model].default == default
        assert noema_llamaindex.NoemaNodePostprocessor.model_fields[model].default == default
        assert inspect.signature(noema.KnowledgeBase).parameters[model].default == default


@pytest.mark.parametrize(
    "field", [{"filter": {"lang": "en"}}, {"search_type": "mmr"}, {"max_token": 50}]
)
def test_langchain_unknown_constructor_fields_raise(
    company_kb: noema.KnowledgeBase, field: dict[str, Any]
) -> None:
    with pytest.raises(ValueError, match=next(iter(field))):
        noema_langchain.NoemaRetriever(company_kb, **field)
    with pytest.raises(ValueError, match=next(iter(field))):
        noema_langchain.NoemaContextCompressor(**field)


@pytest.mark.parametrize("build", [noema_langchain.NoemaRetriever, noema_llamaindex.NoemaRetriever])
def test_a_retriever_pays_its_first_call_costs_when_it_is_built(
    company_kb: noema.KnowledgeBase, embedder: noema.SentenceTransformerEmbedder, build: Any
) -> None:
    # the real embedder behind a counter: the test is about when the retriever calls it
    from conftest import CountingEmbedder

    counting = CountingEmbedder(embedder)
    kb = noema.KnowledgeBase.from_bytes(company_kb.to_bytes(), embedder=counting)
    build(kb)
    assert counting.calls and counting.calls[0] == ["Who founded Google?"]


@pytest.mark.parametrize("build", [noema_langchain.NoemaRetriever, noema_llamaindex.NoemaRetriever])
def test_a_retriever_whose_encoding_is_missing_fails_when_it_is_built(
    company_kb: noema.KnowledgeBase, build: Any
) -> None:
    with pytest.raises(noema.MissingResourceError, match="o200k_base"):
        build(company_kb, token_model="o200k_base")


@pytest.fixture(scope="module")
def two_language_kb(ingested: Callable[..., noema.KnowledgeBase]) -> noema.KnowledgeBase:
    return ingested(
        [
            noema.Document(text, id=doc_id, metadata={"lang": lang})
            for doc_id, lang, text in (
                ("g", "en", "Larry Page founded Google. Google acquired YouTube."),
                ("n", "de", "Jensen Huang founded Nvidia. Nvidia acquired Mellanox."),
            )
        ]
    )


def _text(documents: list[Document]) -> str:
    return " ".join(d.page_content for d in documents)


@pytest.mark.parametrize("mode", ["block", "per_fact"])
def test_langchain_filters_in_every_place_a_user_puts_them(
    two_language_kb: noema.KnowledgeBase, mode: str
) -> None:
    question = "Who founded the company?"
    retriever = noema_langchain.NoemaRetriever(two_language_kb, mode=mode, max_tokens=400)
    assert "Nvidia" in _text(retriever.invoke(question))
    english = [
        retriever.invoke(question, filters={"metadata": {"lang": "en"}}),
        retriever.invoke(question, filter={"lang": "en"}),
        noema_langchain.NoemaRetriever(
            two_language_kb, mode=mode, max_tokens=400, search_kwargs={"filter": {"lang": "en"}}
        ).invoke(question),
        noema_langchain.NoemaRetriever(
            two_language_kb, mode=mode, max_tokens=400, filters={"document_ids": ["g"]}
        ).invoke(question),
    ]
    for documents in english:
        assert "Google" in _text(documents) and "Nvidia" not in _text(documents)
    with pytest.raises(ValueError, match="unknown filter field 'lang'"):
        retriever.invoke(question, filters={"lang": "en"})
    with pytest.raises(ValueError, match="filter"):
        noema_langchain.NoemaRetriever(two_language_kb, filters={"lang": "en"})
    with pytest.raises(ValueError, match="filter must be a dict"):
        retriever.invoke(question, filter="lang=en")


def test_langchain_block_documents_have_a_stable_id_and_citations(
    company_kb: noema.KnowledgeBase,
) -> None:
    retriever = noema_langchain.NoemaRetriever(company_kb)
    (first,) = retriever.invoke(QUESTION)
    (again,) = noema_langchain.NoemaRetriever(company_kb).invoke(QUESTION)
    assert first.id is not None and first.id == again.id
    (other,) = retriever.invoke("Where is Nvidia headquartered?")
    assert other.id != first.id
    assert set(first.metadata["citations"]) == set(first.metadata["fact_ids"])
    parts = retriever.invoke(QUESTION, k=2)
    assert len({d.id for d in parts}) == 2 and all(d.id for d in parts)


def test_llamaindex_block_mode_similarity_top_k_splits_the_block(
    company_kb: noema.KnowledgeBase,
) -> None:
    whole = noema_llamaindex.NoemaRetriever(company_kb, max_tokens=120).retrieve(QUESTION)
    parts = noema_llamaindex.NoemaRetriever(
        company_kb, max_tokens=120, similarity_top_k=2
    ).retrieve(QUESTION)
    assert len(whole) == 1 and len(parts) == 2
    assert sum(p.node.metadata["token_count"] for p in parts) <= 120
    facts = [f for p in parts for f in p.node.metadata["fact_ids"]]
    assert facts == whole[0].node.metadata["fact_ids"][: len(facts)]
    for part in parts:
        assert part.node.get_content().startswith("#1 ")  # self-contained
    assert parts[0].score is not None and parts[1].score is not None
    assert parts[0].score >= parts[1].score


def _scores_fall(scores: list[float]) -> bool:
    return all(a >= b for a, b in zip(scores, scores[1:], strict=False))


def test_per_fact_scores_fall_in_result_order(company_kb: noema.KnowledgeBase) -> None:
    nodes = noema_llamaindex.NoemaRetriever(company_kb, mode="per_fact", hops=2).retrieve(QUESTION)
    raw = [n.node.metadata["similarity"] for n in nodes]
    assert not _scores_fall(raw), "the case needs facts packed out of similarity order"
    scores = [n.score for n in nodes]
    assert all(isinstance(s, float) for s in scores) and _scores_fall(scores)  # type: ignore[arg-type]
    # a cutoff keeps a prefix of the ranking, never a fact ranked below one it drops
    for cutoff in sorted(set(scores)):  # type: ignore[type-var]
        kept = SimilarityPostprocessor(similarity_cutoff=cutoff).postprocess_nodes(nodes)
        assert [n.node.node_id for n in kept] == [n.node.node_id for n in nodes[: len(kept)]]
    documents = noema_langchain.NoemaRetriever(company_kb, mode="per_fact", hops=2).invoke(QUESTION)
    assert [d.metadata["score"] for d in documents] == scores
    assert [d.metadata["similarity"] for d in documents] == raw


def test_nodes_with_score_carry_the_rank_consistent_score(company_kb: noema.KnowledgeBase) -> None:
    nodes: list[NodeWithScore] = noema_llamaindex.NoemaRetriever(
        company_kb, mode="per_fact"
    ).retrieve(QUESTION)
    running = float("inf")
    for node in nodes:
        running = min(running, node.node.metadata["similarity"])
        assert node.score == running


@pytest.mark.parametrize(
    "build",
    [
        "from noema_langchain import NoemaContextCompressor as C; C(max_tokens=60)",
        "from noema_llamaindex import NoemaNodePostprocessor as C; C(max_tokens=60)",
    ],
)
def test_compressors_load_their_models_when_built(build: str) -> None:
    # a first compression of 6 short chunks took 9 s, 7 of them loading the models: they load
    # when the compressor is built, so a call costs its parsing and embedding
    program = (
        f"{build}\n"
        "from noema.resources import _load_embedding_model, _load_spacy_model\n"
        "print('EMBEDDER', _load_embedding_model.cache_info().currsize)\n"
        "print('SPACY', _load_spacy_model.cache_info().currsize)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    ).stdout
    assert "EMBEDDER 1" in out and "SPACY 1" in out


def test_compress_takes_plain_strings() -> None:
    # noema.compress(["plain text"], q) raised AttributeError; strings work as in ingest
    result = noema.compress(
        ["Larry Page founded Google.", "Sundar Pichai is the CEO of Google."], "Who runs Google?"
    )
    assert "-ceo_of->" in result.text
    documents = {c.document_id for cs in result.citations.values() for c in cs}
    assert documents and all(d.startswith("doc_") for d in documents)


def test_adapters_raise_only_noemas_errors() -> None:
    # the bare-raise scan of tests/test_public_api.py covered noema/ only, and the
    # adapters raised ten bare ValueError/TypeError an `except noema.NoemaError` missed
    from pathlib import Path

    root = Path(__file__).parent.parent
    bare = []
    for package in ("noema_langchain", "noema_llamaindex"):
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.Raise) or node.exc is None:
                    continue
                raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                name = getattr(raised, "id", None)
                if name in ("ValueError", "TypeError", "KeyError", "RuntimeError", "Exception"):
                    bare.append(f"{package}/{path.name}:{node.lineno} {name}")
    assert bare == []


@pytest.mark.parametrize(
    ("package", "expected"),
    [
        (
            noema_langchain,
            ["NoemaContextCompressor", "NoemaDocumentTransformer", "NoemaRetriever"],
        ),
        (noema_llamaindex, ["NoemaNodePostprocessor", "NoemaRetriever"]),
    ],
    ids=["langchain", "llamaindex"],
)
def test_adapter_public_names_are_pinned_and_sorted(package: Any, expected: list[str]) -> None:
    assert package.__all__ == sorted(expected)
    for name in package.__all__:
        assert hasattr(package, name), name


@pytest.mark.parametrize(
    "call",
    [
        lambda kb: noema_langchain.NoemaRetriever(kb).invoke(QUESTION, k=0),
        lambda kb: noema_langchain.NoemaRetriever(kb).invoke(QUESTION, filter="lang=en"),
        lambda kb: noema_llamaindex.NoemaRetriever(kb, mode="all"),  # type: ignore[arg-type]
        lambda kb: noema_llamaindex.NoemaRetriever(kb, similarity_top_k=0),
        lambda kb: noema_llamaindex.NoemaNodePostprocessor().postprocess_nodes([]),
    ],
    ids=["k", "filter", "mode", "similarity_top_k", "no-query"],
)
def test_adapter_option_errors_are_noema_errors(company_kb: noema.KnowledgeBase, call: Any) -> None:
    with pytest.raises(noema.OptionError) as caught:
        call(company_kb)
    assert isinstance(caught.value, ValueError)  # what the adapters promised before


def test_adapter_type_errors_are_noema_errors(company_kb: noema.KnowledgeBase) -> None:
    with pytest.raises(noema.InputTypeError, match="both by position and by name"):
        noema_langchain.NoemaRetriever(company_kb, knowledge_base=company_kb)
    with pytest.raises(noema.InputTypeError, match="MetadataFilters or a mapping"):
        noema_llamaindex.NoemaRetriever(company_kb, filters=["lang"])  # type: ignore[arg-type]


@pytest.mark.parametrize("format", ["notation", "natural_language", "sentences"])
def test_both_adapters_map_the_same_fact_views(
    company_kb: noema.KnowledgeBase, format: noema.Format
) -> None:
    # the two adapters projected a result onto its facts and blocks each in its own
    # copy; both now map the result's views, so a per-fact Document and node hold the same
    options = {"mode": "per_fact", "format": format, "hops": 2, "max_tokens": 150}
    documents = noema_langchain.NoemaRetriever(company_kb, **options).invoke(QUESTION)
    nodes = noema_llamaindex.NoemaRetriever(company_kb, **options).retrieve(QUESTION)  # type: ignore[arg-type]
    result = company_kb.retrieve(QUESTION, format=format, hops=2, max_tokens=150, explain=True)
    views = result.fact_views(company_kb.graph)
    assert [v.text for v in views] == [company_kb.render_fact(f, format) for f in result.fact_ids]
    assert [v.score for v in views] == result.scores()
    assert [d.page_content for d in documents] == [n.node.get_content() for n in nodes]
    assert [d.page_content for d in documents] == [v.text for v in views]
    assert [d.id for d in documents] == [n.node.node_id for n in nodes] == list(result.fact_ids)
    assert [d.metadata["score"] for d in documents] == [n.score for n in nodes]
    for document, node, view in zip(documents, nodes, views, strict=True):
        for key in ("fact_id", "rank", "similarity", "source_ids", "citations"):
            assert document.metadata[key] == node.node.metadata[key] == getattr(view, key)
        assert document.metadata["token_count"] == noema.count_tokens(view.text)


def test_both_adapters_map_the_same_block_views(company_kb: noema.KnowledgeBase) -> None:
    result = company_kb.retrieve(QUESTION, max_tokens=120)  # block mode does not explain
    graph = company_kb.graph
    blocks = result.block_views(graph, 2)  # within the result's own tokens, as LlamaIndex asks
    assert [(b.fact_ids, b.text, b.token_count) for b in blocks] == [
        tuple(item) for item in company_kb.render_blocks(result, 2)
    ]
    scores = dict(zip(result.fact_ids, result.scores(), strict=True))
    assert [b.score for b in blocks] == [scores[b.fact_ids[0]] for b in blocks]
    nodes = noema_llamaindex.NoemaRetriever(
        company_kb, max_tokens=120, similarity_top_k=2
    ).retrieve(QUESTION)
    assert [(n.node.node_id, n.node.get_content(), n.score) for n in nodes] == [
        (b.id, b.text, b.score) for b in blocks
    ]
    documents = noema_langchain.NoemaRetriever(company_kb, max_tokens=120).invoke(QUESTION, k=2)
    assert [(d.id, d.page_content, d.metadata["fact_ids"]) for d in documents] == [
        (b.id, b.text, b.fact_ids) for b in result.block_views(graph, 2, 120)
    ]
    whole = result.block_view(graph)
    (document,) = noema_langchain.NoemaRetriever(company_kb, max_tokens=120).invoke(QUESTION)
    assert (document.id, document.page_content) == (whole.id, result.text)
    assert whole.source_ids == result.source_ids() and whole.fact_ids == list(result.fact_ids)


# The adapters built on pydantic, each given a knowledge base it may ignore.
PYDANTIC_ADAPTERS = {
    "langchain-retriever": lambda kb, **fields: noema_langchain.NoemaRetriever(kb, **fields),
    "langchain-compressor": lambda kb, **fields: noema_langchain.NoemaContextCompressor(**fields),
    "llamaindex-postprocessor": lambda kb, **fields: noema_llamaindex.NoemaNodePostprocessor(
        **fields
    ),
}


@pytest.mark.parametrize("build", PYDANTIC_ADAPTERS.values(), ids=PYDANTIC_ADAPTERS.keys())
@pytest.mark.parametrize(
    ("field", "message"),
    [
        ({"hops": "x"}, r"^hops should be a valid integer.*, got 'x'$"),
        ({"max_tokens": 2.5}, r"^max_tokens should be a valid integer.*, got 2\.5$"),
        ({"format": "prose"}, r"^format should be 'notation', .*, got 'prose'$"),
        ({"top_k": 0}, r"^top_k must be an integer >= 1, got 0$"),
        ({"as_of": "yesterday"}, r"^as_of "),
        ({"min_similarity": "high"}, r"^min_similarity should be a valid number"),
    ],
    ids=["hops", "max_tokens", "format", "top_k", "as_of", "min_similarity"],
)
def test_a_bad_option_field_is_a_noema_error_naming_it(
    company_kb: noema.KnowledgeBase, build: Any, field: dict[str, Any], message: str
) -> None:
    # pydantic's ValidationError escaped, which `except noema.NoemaError` missed
    with pytest.raises(noema.OptionError, match=message) as caught:
        build(company_kb, **field)
    assert isinstance(caught.value, ValueError)  # as pydantic's error was
    assert "pydantic" not in str(caught.value)


@pytest.mark.parametrize("build", PYDANTIC_ADAPTERS.values(), ids=PYDANTIC_ADAPTERS.keys())
def test_an_unknown_field_is_refused_with_the_valid_names(
    company_kb: noema.KnowledgeBase, build: Any
) -> None:
    # NoemaNodePostprocessor(max_token=20) was taken, and the budget stayed 200
    with pytest.raises(noema.OptionError, match="max_token") as caught:
        build(company_kb, max_token=20)
    message = str(caught.value)
    assert "did you mean 'max_tokens'?" in message
    assert all(name in message for name in ("hops", "top_k", "as_of"))


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda kb: noema_langchain.NoemaRetriever(kb, mode="all"),
            r"^mode should be 'block' or 'per_fact', got 'all'$",
        ),
        (
            lambda kb: noema_langchain.NoemaRetriever(kb, filters=["lang"]),
            r"^filters should be a valid dictionary, got \['lang'\]$",
        ),
        (
            lambda kb: noema_langchain.NoemaRetriever(42),
            r"^knowledge_base should be an instance of KnowledgeBase, got 42$",
        ),
        (
            lambda kb: noema_langchain.NoemaContextCompressor(similarity_threshold="high"),
            r"^similarity_threshold should be a valid number",
        ),
        (
            lambda kb: noema_llamaindex.NoemaNodePostprocessor(spacy_model=3),
            r"^spacy_model should be a valid string, got 3$",
        ),
    ],
    ids=["mode", "filters", "knowledge_base", "similarity_threshold", "spacy_model"],
)
def test_a_bad_adapter_field_is_a_noema_error_naming_it(
    company_kb: noema.KnowledgeBase, build: Any, message: str
) -> None:
    with pytest.raises(noema.OptionError, match=message):
        build(company_kb)


def test_a_long_bad_value_is_quoted_short(company_kb: noema.KnowledgeBase) -> None:
    with pytest.raises(noema.OptionError) as caught:
        noema_langchain.NoemaRetriever(company_kb, mode="x" * 100_000)
    assert len(str(caught.value)) < 200


LONG = "x" * 5_000_000


@pytest.mark.parametrize(
    "build",
    [
        lambda kb: noema_langchain.NoemaRetriever(kb, mode=LONG),
        lambda kb: noema_langchain.NoemaRetriever(kb, search_kwargs={LONG: 1}),
        lambda kb: noema_langchain.NoemaRetriever(kb, search_kwargs={"k": LONG}),
        lambda kb: noema_langchain.NoemaRetriever(kb).invoke("Who founded Google?", filter=[LONG]),
        lambda kb: noema_llamaindex.NoemaRetriever(kb, mode=LONG),
        lambda kb: noema_llamaindex.NoemaRetriever(kb, similarity_top_k=LONG),
        lambda kb: noema_langchain.NoemaDocumentTransformer(keep_empty=LONG),
        lambda kb: noema_langchain.NoemaDocumentTransformer(**{LONG: 1}),
    ],
    ids=[
        "langchain mode",
        "search_kwargs key",
        "k",
        "filter",
        "llamaindex mode",
        "similarity_top_k",
        "keep_empty",
        "unknown option",
    ],
)
def test_an_adapter_error_quotes_a_long_value_as_noema_does(
    company_kb: noema.KnowledgeBase, build: Any
) -> None:
    # the value was echoed whole, or its whole repr made and cut without its length
    with pytest.raises(noema.NoemaError) as caught:
        build(company_kb)
    message = str(caught.value)
    assert len(message) < 1_000 and "x" * 81 not in message


def test_an_unknown_option_holding_a_quote_is_matched_as_written() -> None:
    # the name's repr was stripped of single quotes before matching: "top'" was matched as
    # '"top\'"', quotes and all, and had no close name
    message = unknown_option_message("Retriever", ["top'"], ["hops", "top_k"])
    assert message == (
        "Retriever takes no option \"top'\" (did you mean 'top_k'?); it takes hops, top_k"
    )
