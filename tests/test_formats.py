"""The registry of output formats: one entry per ``format`` value, read by packing,
the strategies, the options and ``render_fact`` instead of a branch on the format's name.

The graphs here are built by hand (no model runs): the tests are about rendering."""

from __future__ import annotations

from typing import get_args

import pytest

import noema
from noema.retrieval.formats import FORMATS, Format, get_format, render_fact, render_facts
from noema.retrieval.pack import pack


def test_every_format_value_names_a_registered_format() -> None:
    assert tuple(FORMATS) == get_args(Format)  # the CLI's choices keep their order
    assert tuple(FORMATS) == get_args(noema.Format)
    for name, entry in FORMATS.items():
        assert entry.name == name
        assert entry.description and "\n" not in entry.description


@pytest.mark.parametrize("name", get_args(Format))
def test_the_default_floor_is_the_formats(name: Format) -> None:
    assert noema.RetrieveOptions(format=name).confidence_floor() == FORMATS[name].default_floor
    assert noema.RetrieveOptions(format=name, min_confidence=0.5).confidence_floor() == 0.5


def test_an_unknown_format_is_an_option_error_naming_the_choices() -> None:
    graph, (founded, _) = _graph()
    choices = "'notation', 'natural_language', 'sentences'"
    with pytest.raises(noema.OptionError, match=f"format must be one of {choices}, got 'json'"):
        get_format("json")
    with pytest.raises(noema.OptionError, match="got 'json'"):
        render_fact(graph, founded, "json")  # type: ignore[arg-type]
    with pytest.raises(noema.OptionError, match="got 'json'"):
        render_facts(graph, [founded], "json")  # type: ignore[arg-type]
    with pytest.raises(noema.OptionError, match=r"got \['notation'\]"):
        noema.RetrieveOptions(format=["notation"])  # type: ignore[arg-type]


def _graph() -> tuple[noema.SemanticGraph, tuple[str, str]]:
    """Two facts of one titled document: a sure one and a topic link under the notation floor."""
    text = "Larry Page founded Google. Google is a topic of Search."
    graph = noema.SemanticGraph()
    graph.add_document(noema.Document(text, id="d", metadata={"title": "Google"}))
    page = graph.add_entity("Larry Page", "PERSON", mentions=[noema.Mention("d", 0, 10)])
    google = graph.add_entity("Google", "ORG", mentions=[noema.Mention("d", 19, 25)])
    search = graph.add_entity("Search", "ORG", mentions=[noema.Mention("d", 48, 54)])
    founded = graph.add_relation(page, "found", google, mentions=[noema.Mention("d", 0, 26)])
    topic = graph.add_relation(
        google, "topic_of", search, mentions=[noema.Mention("d", 27, 55)], confidence=0.15
    )
    return graph, (founded, topic)


@pytest.mark.parametrize(
    ("name", "alone", "both"),
    [
        (
            "notation",
            "#1 Larry Page :PERSON\n#2 Google :ORG\n#1 -found-> #2",
            "#1 Larry Page :PERSON\n#2 Google :ORG\n#3 Search :ORG\n#1 -found-> #2\n"
            "#2 -topic_of-> #3",
        ),
        ("natural_language", "Larry Page found Google.", None),
        (
            "sentences",
            "Larry Page founded Google.",
            "# Google\nLarry Page founded Google. Google is a topic of Search.",
        ),
    ],
    ids=["notation", "natural_language", "sentences"],
)
def test_each_format_renders_one_fact_and_several(
    name: Format, alone: str, both: str | None
) -> None:
    graph, facts = _graph()
    assert render_fact(graph, facts[0], name) == alone
    if both is not None:
        assert render_facts(graph, list(facts), name) == both


@pytest.mark.parametrize(
    ("name", "stated"),
    [("notation", 1), ("natural_language", 1), ("sentences", 2)],
    ids=["notation", "natural_language", "sentences"],
)
def test_the_floor_as_packing_applies_it(name: Format, stated: int) -> None:
    # pack applies the floor it is given: both fact formats state the same facts and keep the
    # names of a relation under it, without its claim
    graph, facts = _graph()
    floor = FORMATS[name].default_floor
    packed = pack(graph, [(f, None) for f in facts], 1000, name, "cl100k_base", floor)
    assert len(packed.fact_ids) == stated
    assert "topic_of" not in packed.text and "topic of" not in packed.text or name == "sentences"
    if name == "notation":
        assert "#3 Search :ORG" in packed.text
    if name == "natural_language":
        assert packed.text == "Larry Page found Google.\nAlso named: Search (organization)."
