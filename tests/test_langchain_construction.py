"""The LangChain classes refuse bad options when they are built, with Noema's errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.load import dumpd, load

import noema
from noema_langchain import NoemaDocumentTransformer, NoemaRetriever


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"k": 0}, "k must be an integer >= 1, got 0"),
        ({"k": -2, "mode": "per_fact"}, "k must be an integer >= 1, got -2"),
        ({"search_kwargs": {"k": 0}}, "k must be an integer >= 1, got 0"),
        (
            {"search_kwargs": {"score_threshold": 0.5}},
            "unknown search_kwargs key 'score_threshold'",
        ),
        ({"search_kwargs": {"max_tokens": 0}}, "max_tokens must be an integer >= 1"),
        ({"search_kwargs": {"filters": {"lang": "en"}}}, "unknown filter field 'lang'"),
    ],
    ids=["k=0", "negative k", "k in search_kwargs", "score_threshold", "bad option", "bad filter"],
)
def test_bad_options_are_refused_when_built(
    company_kb: noema.KnowledgeBase, options: dict[str, Any], message: str
) -> None:
    # k=0 was accepted; search_kwargs={"score_threshold": 0.5} was refused only at invoke
    with pytest.raises(noema.OptionError, match=message):
        NoemaRetriever(company_kb, **options)


def test_known_search_kwargs_are_taken(company_kb: noema.KnowledgeBase) -> None:
    retriever = NoemaRetriever(
        company_kb, search_kwargs={"k": 2, "max_tokens": 60, "filter": {}, "filters": None}
    )
    assert retriever.invoke("Who founded Google?")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hops": "x"}, r"^hops should be a valid integer.*, got 'x'$"),
        (
            {"max_token": 50},
            r"^NoemaRetriever takes no option 'max_token' \(did you mean 'max_tokens'\?\)",
        ),
    ],
    ids=["bad value", "unknown field"],
)
def test_load_refuses_a_bad_option_with_noemas_error(
    company_kb: noema.KnowledgeBase, tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    # LangChain's load() builds the class from its kwargs: a bad one was pydantic's error
    path = str(company_kb.save(tmp_path / "kb.noema"))
    data = dumpd(NoemaRetriever(path))
    data["kwargs"].update(change)
    with pytest.raises(noema.OptionError, match=message):
        load(data, valid_namespaces=["noema_langchain"], allowed_objects=[NoemaRetriever])


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"max_tokens": 50}, noema.InputTypeError, r"no option 'max_tokens'; it takes "),
        ({"keep_empty": "no"}, noema.OptionError, r"^keep_empty must be True or False, got 'no'$"),
        ({"token_model": 3}, noema.OptionError, r"^token_model must be a tiktoken encoding"),
    ],
    ids=["unknown", "keep_empty", "token_model"],
)
def test_the_transformer_refuses_bad_options_when_built(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    # keep_empty="no" and token_model=3 were taken; an unknown name did not list the options
    with pytest.raises(error, match=message) as caught:
        NoemaDocumentTransformer(**options)
    if error is noema.InputTypeError:  # the names it does take
        assert "extractor, keep_empty, spacy_model, token_model" in str(caught.value)


@pytest.mark.parametrize(
    "documents",
    ["Larry Page founded Google.", ["Larry Page founded Google."], [noema.Document("Larry.")]],
    ids=["str", "list of str", "noema Document"],
)
def test_the_transformer_names_documents_of_the_wrong_kind(documents: Any) -> None:
    # AttributeError: 'str' object has no attribute 'page_content'
    with pytest.raises(noema.InputTypeError, match=r"^documents must be a list of LangChain"):
        NoemaDocumentTransformer().transform_documents(documents)
