"""The LangChain retriever refuses at construction what it would refuse at ``invoke``."""

from __future__ import annotations

from typing import Any

import pytest

import noema
from noema_langchain import NoemaRetriever


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
