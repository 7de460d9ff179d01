"""A question dated by an event ("Who ran Lindqvist Marine when it acquired Gannet Sonar?") reads
the time of the event its "when" clause names and orders the facts valid then first, as a
written year would: the chief executive of 2013 on comes before the sonar maker's facts. Real
models; documents from the ventures corpus (benchmarks/corpora)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import noema
from noema.evaluate import answer_in_context

DOCUMENTS = [
    "Lindqvist Marine is a boatbuilder in Solvik that makes aluminium workboats and small "
    "ferries. Astrid Lindqvist founded the company in 1998. She led it until 2013, when Teodor "
    "Brandt took over. The firm acquired Gannet Sonar in 2017 and now fits its own depth "
    "sounders.",
    "Teodor Brandt succeeded Astrid Lindqvist as chief executive of Lindqvist Marine in 2013. "
    "Brandt, who was born in Quillby, had run the boatbuilder's repair yard for six years "
    "before that.",
    "Gannet Sonar designs sonar units and depth sounders for small vessels. It was founded in "
    "2011 by Ines Marlow in Brackenford. Lindqvist Marine bought the company in 2017, but it "
    "still works from its Brackenford office, with Marlow as its head.",
    "Ines Marlow is an acoustic engineer who was born in Oxmoor. She set up Gannet Sonar in "
    "2011 and sold it to Lindqvist Marine six years later. Marlow still manages the sonar "
    "business inside the boatbuilder.",
]
QUESTION = "Who ran Lindqvist Marine when it acquired Gannet Sonar?"


@pytest.fixture(scope="module")
def kb(ingested: Callable[..., noema.KnowledgeBase]) -> noema.KnowledgeBase:
    return ingested([noema.Document(text, id=f"d{n}") for n, text in enumerate(DOCUMENTS)])


def test_the_event_a_when_clause_names_dates_the_question(kb: noema.KnowledgeBase) -> None:
    result = kb.retrieve(QUESTION, max_tokens=200, explain=True)
    assert answer_in_context(["Teodor Brandt"], result.text), result.text
    moved = [step for step in result.explanation if step.time and "when it acquired" in step.time]
    assert moved, [(step.fact_id, step.time) for step in result.explanation]


def test_a_question_opening_with_when_is_not_dated_by_its_own_clause(
    kb: noema.KnowledgeBase,
) -> None:
    result = kb.retrieve("When did Lindqvist Marine acquire Gannet Sonar?", explain=True)
    assert not any(step.time and "when" in step.time for step in result.explanation)
