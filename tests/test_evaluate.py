"""The answer inside a stated fact: what a result states, apart from the names it only lists."""

from __future__ import annotations

import noema
from noema.evaluate import answer_in_context, stated_text


def test_names_listed_without_a_claim_are_not_stated(company_kb: noema.KnowledgeBase) -> None:
    # over every fact's confidence, notation lists the names it reached and states nothing
    result = company_kb.retrieve("Who acquired YouTube?", min_confidence=0.99)
    assert answer_in_context(["Google"], result.text)
    assert stated_text(company_kb, result) == ""


def test_a_stated_fact_holds_its_ends(company_kb: noema.KnowledgeBase) -> None:
    for format in ("notation", "natural_language"):
        result = company_kb.retrieve("Who acquired YouTube?", format=format, min_confidence=0)
        stated = stated_text(company_kb, result)
        assert stated is not None and answer_in_context(["Google"], stated), format
        assert "Also named" not in stated


def test_sentences_state_no_facts(company_kb: noema.KnowledgeBase) -> None:
    result = company_kb.retrieve("Who acquired YouTube?", format="sentences")
    assert stated_text(company_kb, result) is None
