"""Facts in time at retrieval: ``as_of``, a time in the question, rival facts, the confidence
floor on events, and events through filters, citations and every format.

The graph is made by an extractor of one's own (as ``KnowledgeBase(extractor=...)`` takes it)
that writes the time-bound facts as events, as a user may; the knowledge base, its indexes and
the embedding model are the real ones. The last two sections read their documents with the
built-in extractor: a role an older page states without a time that a later one ends, and an
update naming a new holder "2025–present"."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path

import pytest

import noema
from noema.evaluate import answer_in_context
from noema.ingest.sources import read_documents
from noema.model.records import Relation
from noema.retrieval.filters import FactFilter
from noema.retrieval.plan import Step
from noema.retrieval.timeorder import fact_time, order_by_time
from noema.retrieval.times import as_of_period, read_question_time

# each sentence the documents hold, and the fact read from it: subject (type), label, object
# (type), time (None: a relation), confidence
FACTS: dict[str, tuple[str, str, str, str, str, str | None, float]] = {
    "Veltrix Robotics builds warehouse robots in Trondheim.": (
        "Veltrix Robotics",
        "ORG",
        "build_robots_in",
        "Trondheim",
        "GPE",
        None,
        0.9,
    ),
    "Mara Voss led Veltrix Robotics from 2010 until 2019.": (
        "Mara Voss",
        "PERSON",
        "ceo_of",
        "Veltrix Robotics",
        "ORG",
        "2010/2019",
        0.8,
    ),
    "In 2019 Dario Fenn took over as chief executive of Veltrix Robotics.": (
        "Dario Fenn",
        "PERSON",
        "ceo_of",
        "Veltrix Robotics",
        "ORG",
        "2019/..",
        0.8,
    ),
    "Ada Ring played for Harbor City FC from 2001 to 2003.": (
        "Ada Ring",
        "PERSON",
        "play_for",
        "Harbor City FC",
        "ORG",
        "2001/2003",
        0.8,
    ),
    "Ada Ring moved to Norvale United, where she played from 2004 to 2006.": (
        "Ada Ring",
        "PERSON",
        "play_for",
        "Norvale United",
        "ORG",
        "2004/2006",
        0.8,
    ),
    "Since 2007 Ada Ring has played for Kestrel Athletic.": (
        "Ada Ring",
        "PERSON",
        "play_for",
        "Kestrel Athletic",
        "ORG",
        "2007/..",
        0.8,
    ),
    "Tomas Bell owned the Orrin House until 1810.": (
        "Tomas Bell",
        "PERSON",
        "own",
        "Orrin House",
        "ORG",
        "../1810",
        0.8,
    ),
    "Edda Lorne owned the Orrin House from 1811 to 1850.": (
        "Edda Lorne",
        "PERSON",
        "own",
        "Orrin House",
        "ORG",
        "1811/1850",
        0.8,
    ),
    "Pell Harbour was the capital of Ostra until 1921.": (
        "Pell Harbour",
        "GPE",
        "capital_of",
        "Ostra",
        "GPE",
        "../1921",
        0.8,
    ),
    "Jensen Huang founded Nvidia in 1993.": (
        "Jensen Huang",
        "PERSON",
        "found",
        "Nvidia",
        "ORG",
        "1993",
        0.8,
    ),
    "Rumour has it that Ivo Kant sang with the Ostra Choir in 1990.": (
        "Ivo Kant",
        "PERSON",
        "sing_with",
        "Ostra Choir",
        "ORG",
        "1990",
        0.1,
    ),
}

DOCUMENTS = {
    "veltrix": [
        "Veltrix Robotics builds warehouse robots in Trondheim.",
        "Mara Voss led Veltrix Robotics from 2010 until 2019.",
        "In 2019 Dario Fenn took over as chief executive of Veltrix Robotics.",
    ],
    "ada": [
        "Ada Ring played for Harbor City FC from 2001 to 2003.",
        "Ada Ring moved to Norvale United, where she played from 2004 to 2006.",
        "Since 2007 Ada Ring has played for Kestrel Athletic.",
    ],
    "house": [
        "Tomas Bell owned the Orrin House until 1810.",
        "Edda Lorne owned the Orrin House from 1811 to 1850.",
    ],
    "nvidia": ["Jensen Huang founded Nvidia in 1993."],
    "ostra": [
        "Pell Harbour was the capital of Ostra until 1921.",
        "Rumour has it that Ivo Kant sang with the Ostra Choir in 1990.",
    ],
}


class TimedFacts:
    """Reads each sentence of :data:`FACTS` into its fact: an event when it has a time."""

    def extract(self, documents: Sequence[noema.Document]) -> noema.SemanticGraph:
        graph = noema.SemanticGraph()
        for doc in documents:
            graph.add_document(doc)
            for sentence in FACTS:
                at = doc.text.find(sentence)
                if at >= 0:
                    self._read(graph, doc.id, at, sentence)
        return graph

    @staticmethod
    def _read(graph: noema.SemanticGraph, doc_id: str, at: int, sentence: str) -> None:
        subject, subject_type, label, obj, obj_type, time, confidence = FACTS[sentence]
        ids = []
        for name, type_ in ((subject, subject_type), (obj, obj_type)):
            start = at + sentence.index(name)
            mention = noema.Mention(doc_id, start, start + len(name))
            ids.append(graph.add_entity(name, type_, mentions=[mention]))
        whole = [noema.Mention(doc_id, at, at + len(sentence))]
        if time is None:
            graph.add_relation(ids[0], label, ids[1], mentions=whole, confidence=confidence)
        else:
            graph.add_event(label, ids, time=time, mentions=whole, confidence=confidence)


@pytest.fixture(scope="module")
def timed_kb(embedder: noema.SentenceTransformerEmbedder) -> noema.KnowledgeBase:
    kb = noema.KnowledgeBase(embedder=embedder, extractor=TimedFacts())
    kb.ingest([noema.Document(" ".join(s), id=d) for d, s in DOCUMENTS.items()])
    assert len(kb.graph.events) == 10 and len(kb.graph.relations) == 1
    return kb


def event_of(kb: noema.KnowledgeBase, subject: str, obj: str) -> str:
    graph = kb.graph
    for event in graph.events.values():
        names = [graph.entities[p].name for p in event.participant_ids]
        if names == [subject, obj]:
            return event.id
    raise AssertionError(f"no event of {subject} and {obj}")


FORMATS = ("notation", "natural_language", "sentences")


# -- as_of ------------------------------------------------------------------------------------
@pytest.mark.parametrize("format", FORMATS)
def test_as_of_keeps_only_the_facts_valid_then(timed_kb: noema.KnowledgeBase, format: str) -> None:
    result = timed_kb.retrieve("Which team did Ada Ring play for?", as_of="2005", format=format)
    assert "Norvale United" in result.text
    assert "Harbor City" not in result.text and "Kestrel" not in result.text
    assert event_of(timed_kb, "Ada Ring", "Norvale United") in result.event_ids


@pytest.mark.parametrize("format", FORMATS)
def test_as_of_now_keeps_the_open_fact_and_the_facts_without_a_time(
    timed_kb: noema.KnowledgeBase, format: str
) -> None:
    result = timed_kb.retrieve("Who runs Veltrix Robotics?", as_of="now", format=format)
    assert "Dario Fenn" in result.text and "Mara Voss" not in result.text
    # a relation has no time: nothing says it no longer holds
    assert "Trondheim" in result.text


@pytest.mark.parametrize("format", FORMATS)
def test_as_of_keeps_what_happened_by_then_and_not_what_came_after(
    timed_kb: noema.KnowledgeBase, format: str
) -> None:
    # a founding in 1993 is still what happened, as of any later day; before it, it is not yet
    question = "Who founded Nvidia?"
    assert "Jensen Huang" in timed_kb.retrieve(question, as_of="now", format=format).text
    assert "Jensen Huang" in timed_kb.retrieve(question, as_of="1993-06", format=format).text
    assert "Jensen Huang" not in timed_kb.retrieve(question, as_of="1992", format=format).text


def test_a_single_date_stands_until_the_two_it_joins_part() -> None:
    # a graph of one's own: the filter reads only the events' labels, ends and times
    graph = noema.SemanticGraph()
    house = graph.add_entity("Calloway House", "ORG")
    ondry = graph.add_entity("Silas Ondry", "PERSON")
    morrow = graph.add_entity("Agnes Morrow", "PERSON")
    built = graph.add_event("build_for", [house, ondry], time="1874")
    sold = graph.add_event("sell", [ondry, house], time="1902")
    sold_to = graph.add_event("sell_to", [ondry, morrow], time="1902")

    def valid(fact_id: str, day: str) -> bool:
        return FactFilter(valid_on=as_of_period(day)).allows(graph, fact_id)

    assert valid(built, "1890") and valid(built, "1902") and not valid(built, "1920")
    assert not valid(built, "1873")
    # the sale is what ended the tie: on its date, not after
    assert valid(sold, "1902") and not valid(sold, "1920") and not valid(sold, "1901")
    # selling to the buyer parts nobody from the buyer
    assert valid(sold_to, "1920")


def test_a_role_held_on_one_date_stands_before_it_until_it_ends() -> None:
    # minutes of 30 May 2018 name the chair: she held it then, since a time they do not say
    graph = noema.SemanticGraph()
    rourke = graph.add_entity("Philippa Rourke", "PERSON")
    rovers = graph.add_entity("Dunmarrow Rovers", "ORG")
    valk = graph.add_entity("Teodor Valk", "PERSON")
    arvik = graph.add_entity("Arvik United", "ORG")
    chair = graph.add_event("chair_of", [rourke, rovers], time="2018-05-30")
    signed = graph.add_event("sign_for", [valk, arvik], time="2015")

    def valid(fact_id: str, day: str) -> bool:
        return FactFilter(valid_on=as_of_period(day)).allows(graph, fact_id)

    assert valid(chair, "2015") and valid(chair, "2019")
    # a role taken on its date ("signed for") is not held before it
    assert not valid(signed, "2010") and valid(signed, "2016")
    graph.add_event("leave", [rourke, rovers], time="2020")
    assert valid(chair, "2015") and not valid(chair, "2021")


def test_as_of_takes_a_date_and_a_month(timed_kb: noema.KnowledgeBase) -> None:
    question = "Who owned the Orrin House?"
    by_day = timed_kb.retrieve(question, as_of=date(1805, 6, 1))
    by_month = timed_kb.retrieve(question, as_of="1830-02")
    assert "Tomas Bell" in by_day.text and "Edda Lorne" not in by_day.text
    assert "Edda Lorne" in by_month.text and "Tomas Bell" not in by_month.text


@pytest.mark.parametrize("value", ["2005/2006", "yesterday", "2005-13", 2005, True, ""], ids=repr)
def test_a_bad_as_of_is_an_option_error_naming_the_forms(value: object) -> None:
    with pytest.raises(noema.OptionError, match="as_of must be a date, an ISO date string"):
        noema.RetrieveOptions(as_of=value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "value",
    [
        "\u0662\u0660\u0660\u0665",  # 2005 in Arabic-Indic digits
        "\uff12\uff10\uff10\uff15-\uff10\uff16",  # 2005-06 in full-width digits
        "2005\n",
        " 2005",
        "2005-06-01\t",
        " now",
        "NOW",
    ],
    ids=repr,
)
def test_as_of_takes_only_the_ascii_forms(value: str) -> None:
    with pytest.raises(noema.OptionError, match="as_of must be a date, an ISO date string"):
        noema.RetrieveOptions(as_of=value)


def test_the_query_command_reads_as_of(timed_kb: noema.KnowledgeBase) -> None:
    from noema.cli import build_parser

    args = build_parser().parse_args(["query", "kb", "q", "--as-of", "2005-06"])
    assert noema.RetrieveOptions.of(vars(args)).as_of == "2005-06"


# -- a time in the question -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "subject", "obj"),
    [
        ("Which team did Ada Ring play for in 2005?", "Ada Ring", "Norvale United"),
        ("Which team did Ada Ring play for from 2001 to 2002?", "Ada Ring", "Harbor City FC"),
        ("Who owned the Orrin House before 1811?", "Tomas Bell", "Orrin House"),
        ("Who owned the Orrin House after 1820?", "Edda Lorne", "Orrin House"),
        ("Who is the current CEO of Veltrix Robotics?", "Dario Fenn", "Veltrix Robotics"),
        ("Who was the former CEO of Veltrix Robotics?", "Mara Voss", "Veltrix Robotics"),
        ("Which was the first team of Ada Ring?", "Ada Ring", "Harbor City FC"),
        ("Which was the latest team of Ada Ring?", "Ada Ring", "Kestrel Athletic"),
    ],
)
@pytest.mark.parametrize("format", FORMATS)
def test_the_fact_matching_the_question_time_comes_first(
    timed_kb: noema.KnowledgeBase, question: str, subject: str, obj: str, format: str
) -> None:
    result = timed_kb.retrieve(question, format=format, explain=True)
    wanted = event_of(timed_kb, subject, obj)
    assert result.fact_ids[0] == wanted
    first = next(e for e in result.explanation or () if e.fact_id == wanted)
    assert first.time is not None and "of the question" in first.time


def test_the_wrong_period_is_stated_with_its_time(timed_kb: noema.KnowledgeBase) -> None:
    result = timed_kb.retrieve("Who is the current CEO of Veltrix Robotics?")
    assert result.text.index("Dario Fenn") < result.text.index("Mara Voss")
    assert re.search(r"\*ceo_of \(#\d+,#\d+\) @2010/2019", result.notation)
    prose = timed_kb.retrieve(
        "Who is the current CEO of Veltrix Robotics?", format="natural_language"
    )
    assert "Mara Voss was the ceo of Veltrix Robotics from 2010 to 2019." in prose.text


def test_of_rival_facts_the_one_valid_latest_comes_first(timed_kb: noema.KnowledgeBase) -> None:
    # the question's words are Mara Voss's sentence's; without a time in it, the rival valid
    # later still comes before her
    result = timed_kb.retrieve("Who led Veltrix Robotics?", explain=True)
    dario = event_of(timed_kb, "Dario Fenn", "Veltrix Robotics")
    mara = event_of(timed_kb, "Mara Voss", "Veltrix Robotics")
    assert result.fact_ids.index(dario) < result.fact_ids.index(mara)
    why = {e.fact_id: e for e in result.explanation or ()}
    assert why[dario].reason == "time" and why[dario].seed_id == mara
    assert why[dario].time is not None and "valid later (2019/..)" in why[dario].time


def test_a_question_time_that_matches_no_fact_keeps_the_order(
    timed_kb: noema.KnowledgeBase,
) -> None:
    graph = timed_kb.graph
    facts = [*graph.relations, event_of(timed_kb, "Pell Harbour", "Ostra")]
    steps = [Step(f, "seed", 0.5, f, 0, (), None) for f in facts]
    asked = read_question_time("What was the capital of Ostra after 1950?")
    ordered = order_by_time(graph, steps, asked, allowed=lambda f: True, sentence_of=lambda f: None)
    assert list(ordered) == steps
    # a graph without events (every graph the built-in extractor made so far) is not touched
    assert (
        order_by_time(
            noema.SemanticGraph(), steps, asked, allowed=lambda f: True, sentence_of=lambda f: None
        )
        is steps
    )


@pytest.mark.parametrize(
    ("question", "kind", "phrase"),
    [
        ("Which team did X play for from 2004 to 2005?", "period", "from 2004 to 2005"),
        ("Which team did X play for between 2004 and 2005?", "period", "between 2004 and 2005"),
        ("Who owned it before 1999?", "period", "before 1999"),
        ("Who ran it after 2010?", "period", "after 2010"),
        ("Who has run it since 2015?", "period", "since 2015"),
        ("Who ran it until 2019?", "period", "until 2019"),
        ("Who ran it in March 2005?", "period", "in March 2005"),
        ("Who is the CEO now?", "current", "now"),
        ("Is she still the owner?", "current", "still"),
        ("Who was the previous owner?", "former", "previous"),
        ("Who was the earliest owner?", "first", "earliest"),
        ("Who is the most recent owner?", "last", "most recent"),
    ],
)
def test_the_question_time_is_read(question: str, kind: str, phrase: str) -> None:
    asked = read_question_time(question)
    assert asked is not None and (asked.kind, asked.phrase) == (kind, phrase)


def test_a_question_without_a_time_reads_none() -> None:
    assert read_question_time("Who founded Google in Menlo Park?") is None
    assert read_question_time("How many robots does Veltrix build?") is None


# -- the confidence floor, and events through the rest of retrieval -----------------------
def test_an_event_under_the_floor_is_not_stated(timed_kb: noema.KnowledgeBase) -> None:
    question = "Who sang with the Ostra Choir?"
    rumour = event_of(timed_kb, "Ivo Kant", "Ostra Choir")
    notation = timed_kb.retrieve(question, hops=0, top_k=1)
    assert "sing_with" not in notation.text and "Ivo Kant" in notation.text
    assert rumour not in notation.fact_ids
    prose = timed_kb.retrieve(question, hops=0, top_k=1, format="natural_language")
    assert "Also named:" in prose.text and "sang" not in prose.text
    stated = timed_kb.retrieve(question, hops=0, top_k=1, min_confidence=0)
    assert rumour in stated.fact_ids and "@1990" in stated.text


def test_events_pass_filters_and_carry_citations(timed_kb: noema.KnowledgeBase) -> None:
    result = timed_kb.retrieve(
        "Which teams did Ada Ring play for?", filters={"predicates": ["play_for"]}
    )
    assert result.event_ids and set(result.fact_ids) == set(result.event_ids)
    for fact_id in result.fact_ids:
        (citation,) = result.citations[fact_id]
        assert citation.document_id == "ada" and "Ada Ring" in citation.text
    views = result.fact_views(timed_kb.graph)
    assert all(re.search(r"@\S+", v.text) for v in views)


def test_sentences_as_of_shows_no_sentence_of_facts_invalid_then(
    timed_kb: noema.KnowledgeBase,
) -> None:
    result = timed_kb.retrieve(
        "Who led Veltrix Robotics?", as_of="2015", format="sentences", max_tokens=400
    )
    assert "Mara Voss led" in result.text and "Dario Fenn" not in result.text


# -- the other surfaces: MCP tools, the CLI's explanation, the adapters ---------------------
async def test_the_mcp_tools_take_as_of_and_explain_the_time(timed_kb: noema.KnowledgeBase) -> None:
    from noema.serve.tools import Tools

    tools = Tools(timed_kb)
    reply = await tools.retrieve("Who runs Veltrix Robotics?", format="notation", as_of="now")
    text = reply.content[0].text  # type: ignore[union-attr]
    assert "Dario Fenn" in text and "Mara Voss" not in text
    explained = await tools.explain("Who is the current CEO of Veltrix Robotics?")
    assert any(e.time and "'current' of the question" in e.time for e in explained.explanation)


def test_the_cli_explanation_names_the_time(timed_kb: noema.KnowledgeBase) -> None:
    from noema.cli.query import _explanation_line

    result = timed_kb.retrieve("Who led Veltrix Robotics?", explain=True)
    lines = [_explanation_line(e, timed_kb.graph) for e in result.explanation or ()]
    assert any("a rival of" in line and "valid later (2019/..)" in line for line in lines)


def test_the_adapters_take_as_of_and_check_it(timed_kb: noema.KnowledgeBase) -> None:
    import noema_langchain
    import noema_llamaindex

    retriever = noema_langchain.NoemaRetriever(knowledge_base=timed_kb, as_of="2005")
    assert retriever.retrieve_options().as_of == "2005"
    (document,) = retriever.invoke("Which team did Ada Ring play for?")
    assert "Norvale United" in document.page_content and "Kestrel" not in document.page_content
    with pytest.raises(ValueError, match="as_of must be"):
        noema_langchain.NoemaRetriever(knowledge_base=timed_kb, as_of="yesterday")
    nodes = noema_llamaindex.NoemaRetriever(timed_kb, as_of="2005").retrieve(
        "Which team did Ada Ring play for?"
    )
    assert (
        "Norvale United" in nodes[0].node.get_content()
        and "Kestrel" not in nodes[0].node.get_content()
    )


# -- a role the graph knows has ended, read by the built-in extractor -------------------------
# An older FAQ names the manager with no time; a history ingested after it (an update, in
# another call) says in one of three ways that he left in 2018, and who held the role since.
# ("Kelderby Athletic FC": NER types "Kelderby Athletic" of the FAQ a person, and one of the
# histories gives it a node of its own as an organisation.)
KELDERBY_FAQ = (
    "Kelderby Athletic FC supporters' FAQ\n\n"
    "Q: Who is the manager?\n"
    "A: Graham Tulley is the manager of Kelderby Athletic FC.\n\n"
    "Q: Where does the club play?\n"
    "A: At Harl Road, since 1920."
)
KELDERBY_ENDS = {
    "left": "Graham Tulley left Kelderby Athletic FC in 2018. Mira Solberg was the manager of "
    "Kelderby Athletic FC from 2018 to 2022. Oren Blake has been the manager of Kelderby Athletic FC "
    "since 2022.",
    "succeeded": "Mira Solberg succeeded Graham Tulley as manager of Kelderby Athletic FC in 2018. "
    "Solberg was the manager of Kelderby Athletic FC until 2022, when Oren Blake took over.",
    "manager-until": "Graham Tulley was the manager of Kelderby Athletic FC until 2018. Mira Solberg "
    "was the manager of Kelderby Athletic FC from 2018 to 2022. Oren Blake has been the manager of "
    "Kelderby Athletic FC since 2022.",
}
STATING = ("notation", "natural_language")


@pytest.fixture(scope="module", params=list(KELDERBY_ENDS))
def club_kb(
    request: pytest.FixtureRequest, ingested: Callable[..., noema.KnowledgeBase]
) -> noema.KnowledgeBase:
    kb = ingested([noema.Document(KELDERBY_FAQ, id="faq")])
    history = f"Kelderby Athletic FC history\n\n{KELDERBY_ENDS[request.param]}"
    kb.ingest([noema.Document(history, id="history")])
    return kb


def managers(kb: noema.KnowledgeBase, result: noema.RetrievalResult) -> list[tuple[str, str]]:
    """The holder and the time ("-": none) of each stated fact of a manager of Kelderby
    Athletic, in the order stated."""
    graph = kb.graph
    found = []
    for fact_id in result.fact_ids:
        fact = graph.fact(fact_id)
        label = fact.predicate if isinstance(fact, Relation) else fact.label
        names = [graph.entities[e].name for e in fact.entity_ids]
        if label in ("manager_of", "manage") and names[1:] == ["Kelderby Athletic FC"]:
            found.append((names[0], getattr(fact, "time", None) or "-"))
    return found


def tulley_stated_timeless(kb: noema.KnowledgeBase, result: noema.RetrievalResult) -> bool:
    return ("Graham Tulley", "-") in managers(kb, result)


@pytest.mark.parametrize("format", STATING)
def test_as_of_keeps_the_question_time_first(club_kb: noema.KnowledgeBase, format: str) -> None:
    question = "Who was Kelderby Athletic FC's manager in 2020?"
    without = club_kb.retrieve(question, format=format)  # type: ignore[arg-type]
    with_as_of = club_kb.retrieve(question, format=format, as_of="2020")  # type: ignore[arg-type]
    assert managers(club_kb, without)[0][0] == "Mira Solberg", without.text
    assert managers(club_kb, with_as_of)[0][0] == "Mira Solberg", with_as_of.text


@pytest.mark.parametrize("format", STATING)
def test_as_of_after_a_known_end_leaves_out_the_timeless_role(
    club_kb: noema.KnowledgeBase, format: str
) -> None:
    # "Graham Tulley is the manager" has no time, but the history ends it in 2018
    question = "Who managed Kelderby Athletic FC?"
    later = club_kb.retrieve(question, format=format, as_of="2020")  # type: ignore[arg-type]
    assert not tulley_stated_timeless(club_kb, later), later.text
    assert "Mira Solberg" in later.text
    # before the end nothing says it did not hold
    earlier = club_kb.retrieve(question, format=format, as_of="2015")  # type: ignore[arg-type]
    assert tulley_stated_timeless(club_kb, earlier), earlier.text


@pytest.mark.parametrize(
    "question",
    [
        "Who is the current manager of Kelderby Athletic FC?",
        "Who is the manager of Kelderby Athletic FC?",
        "Who manages Kelderby Athletic FC?",
    ],
)
@pytest.mark.parametrize("format", STATING)
def test_the_holder_valid_now_comes_before_a_timeless_role_that_ended(
    club_kb: noema.KnowledgeBase, question: str, format: str
) -> None:
    result = club_kb.retrieve(question, format=format)  # type: ignore[arg-type]
    stated = managers(club_kb, result)
    assert stated and stated[0][0] == "Oren Blake", result.text
    now = club_kb.retrieve(question, format=format, as_of="now")  # type: ignore[arg-type]
    assert managers(club_kb, now)[0][0] == "Oren Blake", now.text
    assert not tulley_stated_timeless(club_kb, now), now.text


# -- an update naming a new holder "2025–present" ---------------------------------------------
LARKSPUR_PAGE = (
    "# Larkspur\n\n"
    "Larkspur is an open-source web framework written in Python. Ferdinand Aulich started it "
    "in 2014.\n\n"
    "## Key facts\n\n"
    "- Lead maintainer: Odalys Merino (2021–)\n"
    "- Host: Brightwater Software Foundation (2018–)\n"
)
LARKSPUR_UPDATE = (
    "Larkspur: a new lead maintainer\n\n"
    "Posted on 3 September 2025 on the Larkspur blog.\n\n"
    "Odalys Merino has stepped down as lead maintainer of Larkspur. The steering committee "
    "has chosen Keziah Bramwell to succeed her.\n\n"
    "Roles:\n\n"
    "{line}\n"
    "- Odalys Merino: lead maintainer, 2021–2025\n"
)


@pytest.mark.parametrize(
    "line",
    [
        "- Keziah Bramwell: lead maintainer, 2025–present",
        "- Lead maintainer: Keziah Bramwell (since 2025)",
        "- Keziah Bramwell: lead maintainer, since 2025",
    ],
)
@pytest.mark.parametrize("format", STATING)
def test_an_update_states_its_holder_since_as_the_current_one(
    ingested: Callable[..., noema.KnowledgeBase], line: str, format: str
) -> None:
    kb = ingested([noema.Document(LARKSPUR_PAGE, id="page")])
    kb.ingest([noema.Document(LARKSPUR_UPDATE.format(line=line), id="update")])
    graph = kb.graph
    for as_of in (None, "now"):
        result = kb.retrieve(
            "Who is the current lead maintainer of Larkspur?",
            format=format,  # type: ignore[arg-type]
            as_of=as_of,
        )
        stated = [
            ([graph.entities[e].name for e in graph.fact(f).entity_ids], fact_time(graph, f))
            for f in result.fact_ids
        ]
        holders = [names[0] for names, _ in stated if names[1:] == ["Larkspur"]]
        # a fact valid from 2025 with no end, stated first of the holders
        assert (["Keziah Bramwell", "Larkspur"], "2025/..") in stated, result.text
        assert holders[0] == "Keziah Bramwell", result.text
        stated_text = kb.render_facts(result.fact_ids, format="natural_language")
        assert "Keziah Bramwell" in stated_text


PROJECTS = Path(__file__).parent.parent / "benchmarks" / "corpora" / "projects"


@pytest.fixture(scope="module")
def projects_kb(ingested: Callable[..., noema.KnowledgeBase]) -> noema.KnowledgeBase:
    # read as `noema build benchmarks/corpora/projects/docs --root ...` reads them
    return ingested(list(read_documents([PROJECTS / "docs"], root=PROJECTS)))


@pytest.mark.parametrize("format", FORMATS)
def test_as_of_never_loses_an_answer_the_same_call_without_it_finds(
    projects_kb: noema.KnowledgeBase, format: str
) -> None:
    # the row of 2011-2017 of Quernstone's table is the best sentence for "Who was the lead
    # maintainer of Quernstone in 2019?": left out before the search, it let another project's
    # 2019 facts fill the budget and the answer was lost
    lines = (PROJECTS / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    asked = [json.loads(line) for line in lines if line.strip()]
    lost = []
    for q in (q for q in asked if q.get("as_of")):
        plain = projects_kb.retrieve(q["question"], format=format)  # type: ignore[arg-type]
        dated = projects_kb.retrieve(q["question"], format=format, as_of=q["as_of"])  # type: ignore[arg-type]
        if answer_in_context([q["answer"]], plain.text) and not answer_in_context(
            [q["answer"]], dated.text
        ):
            lost.append(q["question"])
    assert not lost


def test_as_of_states_the_valid_facts_when_every_fact_seed_is_invalid(
    ingested: Callable[..., noema.KnowledgeBase],
) -> None:
    # fifteen holders by period: the two best fact seeds are rows of other years, and with
    # hops=0 nothing else leads anywhere
    holders = "Tobiah Varga, Senna Okafor, Wendell Marsh, Ada Brenn, Ilse Kovac, Ravi Nand, "
    holders += "Oona Pike, Lars Feld, Mina Soto, Piet Kral, Nora Lind, Emil Roth, Kai Sun, Lea Moor"
    names = [*holders.split(", "), "Ugo Bell"]
    rows = "".join(
        f"| {y}\u2013{y + 2} | {n} |\n" for y, n in zip(range(1990, 2020, 2), names, strict=True)
    )
    table = (
        f"# Quernstone\n\n## Maintainers\n\n| Years | Lead maintainer |\n| :--- | :--- |\n{rows}"
    )
    other = (
        "# Ferdinand Aulich\n\nFerdinand Aulich started Larkspur in 2014 and was its lead "
        "maintainer until 2021. Since 2016 he has worked at Halvard Systems."
    )
    kb = ingested([noema.Document(table, id="q"), noema.Document(other, id="l")])
    question = "Who was the lead maintainer of Quernstone?"
    options = {"seeds": "vector", "hops": 0, "top_k": 2, "max_tokens": 300}
    result = kb.retrieve(question, format="natural_language", as_of="2005", **options)  # type: ignore[arg-type]
    valid = FactFilter(valid_on=as_of_period("2005"))
    assert result.fact_ids, result.fact_matches
    assert all(valid.allows(kb.graph, f) for f in result.fact_ids), result.text


QUERNSTONE = (
    "# Quernstone\n\nQuernstone is an open-source image codec library written in C.\n\n"
    "## Maintainers\n\n| Years | Lead maintainer |\n| :--- | :--- |\n"
    "| 2011–2017 | Tobiah Varga |\n| 2017–2022 | Senna Okafor |\n| 2022–present | Wendell Marsh |\n"
)
LARKSPUR = (
    "# Ferdinand Aulich\n\nFerdinand Aulich started Larkspur in 2014 and was its lead maintainer "
    "until 2021. In 2019 he released Larkspur 2.0. In 2019 he spent time on the project's "
    "governance. Since 2016 he has worked at Halvard Systems."
)


@pytest.mark.parametrize("format", FORMATS)
def test_as_of_states_what_the_same_call_without_it_states_valid_then(
    ingested: Callable[..., noema.KnowledgeBase], format: str
) -> None:
    # the order is the one the same call without as_of makes, less the facts invalid then,
    # at every budget (the same property over a whole corpus is the test above)
    kb = ingested([noema.Document(QUERNSTONE, id="q"), noema.Document(LARKSPUR, id="l")])
    question = "Who was the lead maintainer of Quernstone in 2019?"
    valid = FactFilter(valid_on=as_of_period("2019"))
    for budget in (60, 100, 200, 4000):
        plain = kb.retrieve(question, format=format, max_tokens=budget)  # type: ignore[arg-type]
        as_of = kb.retrieve(question, format=format, max_tokens=budget, as_of="2019")  # type: ignore[arg-type]
        kept = [f for f in plain.fact_ids if valid.allows(kb.graph, f)]
        assert list(as_of.fact_ids[: len(kept)]) == kept, (budget, plain.text, as_of.text)
