"""Two-hop questions whose best sentence names another entity than the one the question means.

"Where was the founder of Kestrel Mills born?": the sentence most like the question is about the
company's later chief executive ("... taking over from its founder", with his own birthplace),
so a bridge taken from that sentence follows him. The question's own words say which fact of
Kestrel Mills leads on: "founder" is the founding, so the bridge is whoever founded it. Every
case has a distractor sentence of that kind, and the cases share one knowledge base.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

import noema


@dataclass(frozen=True)
class Case:
    id: str
    documents: tuple[str, ...]
    question: str
    answer: str


CASES = [
    Case(
        "founder-after-successor",
        (
            "Kestrel Mills makes paper and card for printers. The company was founded in 1990 "
            "by Ada Lorne and has its headquarters in Brindle.",
            "Ada Lorne was born in Tovey in 1950. She trained as a chemist.",
            "Piet Vahl grew up in Osk, where he was born in 1961. In 2005 he became chief "
            "executive of Kestrel Mills, taking over from its founder.",
        ),
        "Where was the founder of Kestrel Mills born?",
        "Tovey",
    ),
    Case(
        "buyer-chief",
        (
            "Marlin Pictures is a film studio in Corby. Quorra Media bought the studio in 2020.",
            "Quorra Media is a media group in Eastvale. Nils Aberg has led Quorra Media since "
            "2014.",
            "Dana Pike took over as head of Marlin Pictures in 2019 and moved the studio to "
            "larger offices in Corby.",
        ),
        "Who leads the company that bought Marlin Pictures?",
        "Nils Aberg",
    ),
    Case(
        "director-school",
        (
            "Iron Meadow is a 2011 drama film set in a mining town. It was directed by Tessa "
            "Lund.",
            "Tessa Lund studied at the University of Leeds before working in television.",
            "Omar Reyes, who produced Iron Meadow, studied at the University of Lagos and later "
            "ran a film school.",
        ),
        "Which university did the director of Iron Meadow attend?",
        "University of Leeds",
    ),
    Case(
        "acquirer-founder",
        (
            "Brisa Foods sold its bakery arm, Copper Loaf, to Harland Group in 2016.",
            "Harland Group was founded by Mei Tanaka in 1977.",
            "Copper Loaf bakes bread for supermarkets. Its chief executive, Lars Ebbe, joined "
            "from Brisa Foods and was born in Skagen.",
        ),
        "Who founded the company that acquired Copper Loaf?",
        "Mei Tanaka",
    ),
]


@pytest.fixture(scope="module")
def pool(ingested: Callable[..., noema.KnowledgeBase]) -> noema.KnowledgeBase:
    return ingested([text for case in CASES for text in case.documents])


@pytest.mark.parametrize("format", ["notation", "natural_language", "sentences"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_question_s_relation_chooses_the_bridge(
    pool: noema.KnowledgeBase, case: Case, format: str
) -> None:
    result = pool.retrieve(case.question, format=format)  # type: ignore[arg-type]
    assert case.answer in result.text, result.text
