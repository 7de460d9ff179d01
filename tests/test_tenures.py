"""The end the graph knows of a role stated without one (noema/retrieval/tenures.py), over
graphs of one's own: only the facts' labels, ends and times count."""

from __future__ import annotations

from datetime import date

import pytest

import noema
from noema.retrieval.filters import FactFilter
from noema.retrieval.tenures import known_end
from noema.retrieval.times import as_of_period

# the graph, Graham Tulley, Mira Solberg, the club and the timeless fact
Club = tuple[noema.SemanticGraph, str, str, str, str]


@pytest.fixture
def club() -> Club:
    """A club whose FAQ says "Graham Tulley is the manager", with no time."""
    graph = noema.SemanticGraph()
    tulley = graph.add_entity("Graham Tulley", "PERSON")
    solberg = graph.add_entity("Mira Solberg", "PERSON")
    club = graph.add_entity("Kelderby Athletic", "ORG")
    timeless = graph.add_relation(tulley, "manager_of", club)
    return graph, tulley, solberg, club, timeless


def test_a_timeless_role_nothing_ends_has_no_known_end(club: Club) -> None:
    graph, tulley, solberg, place, timeless = club
    graph.add_event("manager_of", [solberg, place], time="2018/2022")  # a rival ends nothing
    graph.add_event("found", [tulley, place], time="1990")  # nor an act of his
    assert known_end(graph, timeless) is None


@pytest.mark.parametrize(
    ("label", "ends", "time"),
    [
        pytest.param("leave", "holder-place", "2018", id="left"),
        pytest.param("succeed", "successor-holder", "2018", id="succeeded"),
        pytest.param("manager_of", "holder-place", "2011/2018", id="tenure-until"),
        pytest.param("manager_of", "holder-place", "../2018", id="tenure-open-start"),
    ],
)
def test_a_departure_a_succession_or_an_ended_tenure_ends_a_timeless_role(
    club: Club, label: str, ends: str, time: str
) -> None:
    graph, tulley, solberg, place, timeless = club
    graph.add_event("manage", [solberg, place], time="2018/..")  # the successor holds it
    participants = [tulley, place] if ends == "holder-place" else [solberg, tulley]
    graph.add_event(label, participants, time=time)
    assert known_end(graph, timeless) == date(2018, 12, 31)
    # as_of after the end leaves it out; in the year of the end and before, it stands
    assert not FactFilter(valid_on=as_of_period("2020")).allows(graph, timeless)
    assert FactFilter(valid_on=as_of_period("2018")).allows(graph, timeless)
    assert FactFilter(valid_on=as_of_period("2015")).allows(graph, timeless)


def test_a_succession_ends_only_the_role_the_successor_takes(club: Club) -> None:
    graph, tulley, solberg, place, timeless = club
    graph.add_event("captain_of", [solberg, place], time="2018/..")
    graph.add_event("succeed", [solberg, tulley], time="2018")  # as captain, not as manager
    assert known_end(graph, timeless) is None


def test_a_role_held_again_after_its_end_is_not_known_to_have_ended(club: Club) -> None:
    graph, tulley, _, place, timeless = club
    graph.add_event("leave", [tulley, place], time="2018")
    graph.add_event("manager_of", [tulley, place], time="2023/..")  # he came back
    assert known_end(graph, timeless) is None


def test_an_open_tenure_ends_where_a_later_page_writes_its_end() -> None:
    graph = noema.SemanticGraph()
    merino = graph.add_entity("Odalys Merino", "PERSON")
    larkspur = graph.add_entity("Larkspur", "PRODUCT")
    opened = graph.add_event("lead_maintainer_of", [merino, larkspur], time="2021/..")
    assert known_end(graph, opened) is None
    graph.add_event("lead_maintainer_of", [merino, larkspur], time="2021/2025")
    assert known_end(graph, opened) == date(2025, 12, 31)
    assert not FactFilter(valid_on=as_of_period("2026")).allows(graph, opened)
    # an earlier tenure with an end is not this one
    earlier = graph.add_event("lead_maintainer_of", [merino, larkspur], time="2030/..")
    assert known_end(graph, earlier) is None
