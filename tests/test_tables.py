"""A Markdown table is read as rows, not as sentences (noema/ingest/tables.py).

Wiki pages write successions and key facts as tables. Read as text, a table ran into the
sentence after it and the rules made facts of its cells ("Kelderby Athletic -play_from-> Result",
"Spindle -release-> Maintainer"), while the manager of each period stayed without a fact. A
table whose first column names holders of a role, with their periods, states each as a fact in
time about the page's topic; a two-column table of labels reads like a "Key facts" list; any
other table states nothing, and its rows stay sentences of their own. Each case was written,
with what it should give, before the reader was.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

import noema
from noema.evaluate import stated_text
from noema.ingest.listings import line_entries, list_entries
from noema.ingest.sections import scoped_entries
from noema.ingest.tables import table_entries, table_lines
from noema.model.graph import SemanticGraph

MANAGERS = (
    "Kelderby Athletic is a football club based in Kelderby, founded in 1904.\n\n"
    "## Managers\n\n"
    "| Manager | From | To |\n"
    "|---|---|---|\n"
    "| Graham Tulley | 2012 | 2018 |\n"
    "| Ines Morland | 2018 | 2022 |\n"
    "| Pavel Drozd | 2022 | present |\n\n"
    "## Honours\n\n"
    "| Season | Competition | Result |\n"
    "|--------|-------------|--------|\n"
    "| 2015 | County Cup | Winners |\n"
    "| 2020 | Northern League | Champions |\n\n"
    "## Stadium\n\n"
    "The club plays at Ashgrove Park, which it bought in 1999.\n"
)
RELEASES = (
    "Spindle is a build tool written in Rust.\n\n"
    "| Version | Released | Maintainer |\n"
    "| ------- | -------- | ---------- |\n"
    "| Spindle 2.0 | March 2021 | Priya Raman |\n"
    "| Spindle 3.0 | June 2024 | Tomas Ekholm |\n"
)


def _read(text: str) -> list[tuple[list[str], str | None, str]]:
    return [([text[a:b] for a, b in e.names], e.time, e.predicate) for e in table_entries(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            MANAGERS,
            [
                (["Graham Tulley"], "2012/2018", "manager_of"),
                (["Ines Morland"], "2018/2022", "manager_of"),
                (["Pavel Drozd"], "2022/..", "manager_of"),
            ],
            id="name-from-to",
        ),
        pytest.param(
            "| Years | Head coach |\n| :--- | :---: |\n| 2015–2019 | Trond Olaussen |\n"
            "| 2019–present | Ruth Okafor and Lars Vik |\n",
            [
                (["Trond Olaussen"], "2015/2019", "head_coach_of"),
                (["Ruth Okafor", "Lars Vik"], "2019/..", "head_coach_of"),
            ],
            id="period-first-two-names",
        ),
        pytest.param(
            "| Chair | Tenure |\n|---|---|\n| Beatrix Olenska | 2021–2024 |\n"
            "| Hamid Qureshi | 2024– |\n",
            [
                (["Beatrix Olenska"], "2021/2024", "chair_of"),
                (["Hamid Qureshi"], "2024/..", "chair_of"),
            ],
            id="name-tenure-open",
        ),
        pytest.param(
            "| | |\n|---|---|\n| Ground | Ashgrove Park |\n| Chair | Beatrix Olenska (2021–) |\n"
            "| Founded | 1904 |\n",
            [(["Ashgrove Park"], None, "ground_of"), (["Beatrix Olenska"], "2021/..", "chair_of")],
            id="labels",
        ),
        pytest.param(
            "| Ground | Ashgrove Park |\n|---|---|\n| Chair | Beatrix Olenska |\n",
            [(["Ashgrove Park"], None, "ground_of"), (["Beatrix Olenska"], None, "chair_of")],
            id="labels-in-the-header-row",
        ),
        pytest.param(RELEASES, [], id="rows-about-something-else"),
        pytest.param(
            "| Manager | From | To |\n| Graham Tulley | 2012 | 2018 |\n", [], id="no-delimiter-row"
        ),
        pytest.param(
            "| Manager | From | To |\n|---|---|---|\n| Graham Tulley | 2012 | unknown |\n",
            [],
            id="an-end-that-is-no-date",
        ),
        pytest.param(
            "| Manager | From | To |\r\n|---|---|---|\r\n| Ines Morland | 2018 | 2022 |\r\n",
            [(["Ines Morland"], "2018/2022", "manager_of")],
            id="crlf",
        ),
        pytest.param(
            "| Manager | From | To |\n|--|--|--|\n| Ines Morland | 2018 | 2022 |\n",
            [(["Ines Morland"], "2018/2022", "manager_of")],
            id="two-dashes",
        ),
        pytest.param(
            "| Manager | From | To |\n|---|---|---|\n| Graham Tulley | 2012 | 2018 |\n"
            "| Pavel Drozd | 2022 | |\n",
            [
                (["Graham Tulley"], "2012/2018", "manager_of"),
                (["Pavel Drozd"], "2022/..", "manager_of"),
            ],
            id="an-empty-end-is-in-post",
        ),
        pytest.param(
            "| Season | Champion |\n|---|---|\n| 2015–2016 | Kelderby Athletic |\n",
            [],
            id="two-columns-by-period-are-no-labels",
        ),
        pytest.param(
            "| Manager | From | To |\n|---|---|---|\n| Ines Morland | 2018 |\n|||\n| | | |\n",
            [],
            id="ragged-and-empty-rows",
        ),
    ],
)
def test_a_table_of_holders_or_labels_gives_the_entries_of_its_rows(
    text: str, expected: list[tuple[list[str], str | None, str]]
) -> None:
    assert _read(text) == expected


def test_every_line_of_a_table_is_a_line_the_sentence_rules_leave_alone() -> None:
    text = "Intro line.\n\n| A | B |\n|---|---|\n| x | y |\n\nAfter it."
    lines = [text[a:b] for a, b in table_lines(text)]
    assert lines == ["| A | B |", "|---|---|", "| x | y |"]


def _facts(graph: SemanticGraph) -> set[tuple[str, str, str, str | None]]:
    name = {e.id: e.name for e in graph.entities.values()}
    facts: set[tuple[str, str, str, str | None]] = {
        (name[r.subject_id], r.predicate, name[r.object_id], None) for r in graph.relations.values()
    }
    facts |= {
        (name[e.participant_ids[0]], e.label, name[e.participant_ids[-1]], e.time)
        for e in graph.events.values()
    }
    return facts


def test_a_table_of_managers_states_each_in_its_period_and_no_cell_as_a_fact(
    extractor: noema.SpacyExtractor,
) -> None:
    graph = extractor.extract(
        [noema.Document(MANAGERS, metadata={"title": "Kelderby Athletic"}, id="kelderby")]
    )
    facts = _facts(graph)
    assert {
        ("Graham Tulley", "manager_of", "Kelderby Athletic", "2012/2018"),
        ("Ines Morland", "manager_of", "Kelderby Athletic", "2018/2022"),
        ("Pavel Drozd", "manager_of", "Kelderby Athletic", "2022/.."),
    } <= facts
    cells = {"Result", "Champions", "Winners", "Season", "Manager", "County Cup", "2015"}
    assert not [f for f in facts if f[0] in cells or f[2] in cells]
    # the sentence after the tables is its own: the club plays at the park, not "from" a manager
    plays = {f for f in facts if f[0] == "Kelderby Athletic" and f[1].startswith("play")}
    assert {f[2] for f in plays} == {"Ashgrove Park"}
    types = {e.name: e.type for e in graph.entities.values()}
    assert types["Ines Morland"] == "PERSON"


def test_a_table_of_releases_states_no_fact_of_its_cells(
    extractor: noema.SpacyExtractor,
) -> None:
    graph = extractor.extract(
        [noema.Document(RELEASES, metadata={"title": "Spindle"}, id="spindle")]
    )
    cells = {"Version", "Released", "Maintainer", "Spindle 2.0", "Spindle 3.0", "Priya Raman"}
    cells |= {"Tomas Ekholm", "March 2021", "June 2024"}
    assert not [f for f in _facts(graph) if f[0] in cells or f[2] in cells]


def test_the_manager_of_a_year_is_stated_from_a_table(
    make_kb: Callable[..., noema.KnowledgeBase],
) -> None:
    kb = make_kb()
    kb.ingest([noema.Document(MANAGERS, metadata={"title": "Kelderby Athletic"}, id="k")])
    for format in ("notation", "natural_language"):
        result = kb.retrieve(
            "Who was the manager of Kelderby Athletic in 2020?", format=format, as_of="2020"
        )
        assert "Ines Morland" in (stated_text(kb, result) or ""), format


def test_a_line_of_many_spaces_is_read_in_time() -> None:
    """Lines padded with spaces once made the readers backtrack for minutes (no clock here:
    on that code this test hangs)."""
    padded = " " * 20000
    assert list(table_entries(f"| Manager |{padded}| From | To |\n|---|---|---|\n")) == []
    line = f"Owners: Ann{padded}Lee, Bob Smith"
    assert [line[a:b] for e in line_entries(line, 0, (0, 0)) for a, b in e.names][1:] == [
        "Bob Smith"
    ]
    text = f"## Managers{padded}x\n- 2012–2018: Gareth Pollard"
    assert [e.predicate for e in scoped_entries(list_entries(text), text)] == ["listed_for"]
