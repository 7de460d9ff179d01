"""Names listed without a claim: never a common noun with no type, nor a name cut at a comma.

The graph is built by hand (no model runs): the tests are about which names a fact format lists
for the facts under its confidence floor."""

from __future__ import annotations

import pytest

import noema
from noema.retrieval.pack import pack

TEXT = (
    "Ardmoy Dairy was founded in 1921 by Maren Holt. "
    "The dairy gave its backing to Trondheim. "
    "It sold cheese to the Argentine Confederation."
)


def _graph() -> noema.SemanticGraph:
    """One sure fact (founded) and links under the notation floor to a date, a common noun typed
    OTHER, a place and a name cut with its comma."""
    graph = noema.SemanticGraph()
    graph.add_document(noema.Document(TEXT, id="d"))

    def entity(name: str, type_: str) -> str:
        at = TEXT.find(name.rstrip(","))
        return graph.add_entity(name, type_, mentions=[noema.Mention("d", at, at + len(name))])

    dairy, year = entity("Ardmoy Dairy", "ORG"), entity("1921", "DATE")
    holt, backing = entity("Maren Holt", "PERSON"), entity("backing", "OTHER")
    city, confederation = entity("Trondheim", "GPE"), entity("Argentine Confederation,", "ORG")
    low = 0.15
    first, second = [noema.Mention("d", 0, 46)], [noema.Mention("d", 47, 87)]
    graph.add_relation(holt, "found", dairy, mentions=first)
    graph.add_relation(dairy, "in", year, mentions=first, confidence=low)
    graph.add_relation(dairy, "give", backing, mentions=second, confidence=low)
    graph.add_relation(backing, "to", city, mentions=second, confidence=low)
    third = [noema.Mention("d", 88, len(TEXT))]
    graph.add_relation(city, "sell_to", confederation, mentions=third, confidence=low)
    return graph


@pytest.mark.parametrize("format", ["notation", "natural_language"])
def test_a_common_noun_or_a_cut_name_is_never_listed(format: noema.Format) -> None:
    graph = _graph()
    text = pack(graph, [(f, None) for f in graph.relations], 400, format, "cl100k_base", 0.3).text
    assert "backing" not in text and "Argentine Confederation" not in text, text
    # the names a reader can use are still listed, and the stated fact stated
    assert "1921" in text and "Trondheim" in text and "Maren Holt" in text, text


def test_every_name_is_shown_when_its_fact_is_stated() -> None:
    graph = _graph()
    text = pack(graph, [(f, None) for f in graph.relations], 400, "notation", "cl100k_base").text
    assert "backing" in text and "Argentine Confederation," in text, text
