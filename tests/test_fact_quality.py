"""Facts that are true as stated: each fixed extraction pattern on a sentence of our
own, the confidence that names the pattern, and the floor that keeps weak facts out of notation."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import noema
from noema import Document, SpacyExtractor
from noema.ingest.confidence import CONFIDENCE, pattern_of
from noema.model.graph import SemanticGraph
from noema.retrieval.options import NOTATION_MIN_CONFIDENCE


def graph_of(extractor: SpacyExtractor, text: str, title: str | None = None) -> SemanticGraph:
    return extractor.extract([Document(text, metadata={"title": title} if title else {})])


def triples(graph: SemanticGraph) -> set[tuple[str, str, str]]:
    return {
        (graph.entities[r.subject_id].name, r.predicate, graph.entities[r.object_id].name)
        for r in graph.relations.values()
    }


def type_of(graph: SemanticGraph, name: str) -> str:
    (entity,) = [e for e in graph.entities.values() if e.name == name]
    return entity.type


@pytest.mark.parametrize(
    ("title", "text", "name", "expected"),
    [
        # NER types these by their form (a film title that reads as a person or a company)
        (
            "Lanternfall (2011 film)",
            "Lanternfall is a 2011 British mystery film directed by Oren Vale.",
            "Lanternfall",
            "PRODUCT",
        ),
        (
            "Copper Wren",
            "Copper Wren is an American indie rock band from Tulsa, Oklahoma.",
            "Copper Wren",
            "ORG",
        ),
        # a place by a kind that needs its modifier ("place" and "area" alone say nothing)
        (
            None,
            "Dunmore is an unincorporated census-designated place located in the town of "
            "Dunmore, Pepin County, Wisconsin.",
            "Dunmore",
            "GPE",
        ),
        (
            "Batu Lintang",
            "Batu Lintang is a suburban area located next to the Jalan Ong Tiang Swee roundabout "
            "in Kuching.",
            "Batu Lintang",
            "GPE",
        ),
        (
            "Elm Ridge, West Virginia",
            "Elm Ridge is an unincorporated community in Wood County, West Virginia.",
            "Elm Ridge",
            "GPE",
        ),
    ],
)
def test_the_documents_own_kind_noun_types_its_topic(
    extractor: SpacyExtractor, title: str | None, text: str, name: str, expected: str
) -> None:
    assert type_of(graph_of(extractor, text, title), name) == expected


def test_a_clause_on_a_description_is_about_the_subject_of_is(extractor: SpacyExtractor) -> None:
    # "raised in" hangs on "teacher", the complement of "was": Marta Quell was raised there
    found = triples(
        graph_of(extractor, "Marta Quell was a sculptor and teacher raised in Tampere.")
    )
    assert ("Marta Quell", "raise_in", "Tampere") in found
    assert not any(s in ("sculptor", "teacher") for s, _, _ in found)


def test_a_film_starring_someone_is_the_named_film(extractor: SpacyExtractor) -> None:
    text = "Lanternfall is a 2011 British mystery film starring Ada Brenn."
    found = triples(graph_of(extractor, text, "Lanternfall"))
    assert ("Lanternfall", "star", "Ada Brenn") in found
    assert not any(s.endswith("film") for s, _, _ in found)


def test_a_title_that_says_more_than_its_place_is_not_that_place(
    extractor: SpacyExtractor,
) -> None:
    graph = graph_of(
        extractor, "The flag was adopted in 1921 by the parliament of Norway.", "Flag of Norway"
    )
    assert type_of(graph, "Norway") == "GPE"
    assert type_of(graph, "Flag of Norway") == "OTHER"


def test_every_pattern_has_its_own_confidence() -> None:
    assert len(set(CONFIDENCE.values())) == len(CONFIDENCE)
    assert all(pattern_of(value) == pattern for pattern, value in CONFIDENCE.items())


def test_a_fact_about_a_pronoun_is_confident_as_a_topic_fact(extractor: SpacyExtractor) -> None:
    graph = graph_of(
        extractor,
        "Oren Vale is a British director. He directed Lanternfall. Ada Brenn acquired Moonrise.",
        "Oren Vale",
    )
    confidence = {
        (graph.entities[r.subject_id].name, graph.entities[r.object_id].name): r.confidence
        for r in graph.relations.values()
    }
    assert pattern_of(confidence["Oren Vale", "Lanternfall"]) == "svo+topic"
    assert pattern_of(confidence["Ada Brenn", "Moonrise"]) == "svo"


def brightloop(make_kb: Callable[..., noema.KnowledgeBase]) -> noema.KnowledgeBase:
    """A base whose second sentence gives topic links (weak facts) beside a sure one."""
    kb = make_kb()
    kb.ingest(
        [
            Document(
                "Piet Halsma founded Brightloop Labs in Utrecht. "
                "The firm's first product line was sold mostly during the winter months.",
                metadata={"title": "Brightloop Labs"},
            )
        ]
    )
    return kb


def test_min_confidence_leaves_weak_facts_out_of_notation_but_not_their_sentences(
    make_kb: Callable[..., noema.KnowledgeBase],
) -> None:
    kb = brightloop(make_kb)
    question, floor = "What did Brightloop Labs sell?", 0.5
    every = kb.retrieve(question, max_tokens=400, min_confidence=0.0)
    weak = {f for f in every.fact_ids if kb.graph.fact(f).confidence < floor}
    assert weak, "the text must give a fact below the floor"
    for format in ("notation", "natural_language"):
        strong = kb.retrieve(question, max_tokens=400, format=format, min_confidence=floor)
        assert set(strong.fact_ids) == set(every.fact_ids) - weak
        assert set(strong.relation_ids) == set(every.relation_ids) - weak
    # notation keeps the names the weak facts reached, as entity lines without a relation
    notation = kb.retrieve(question, max_tokens=400, min_confidence=floor)
    parsed = noema.parse_notation(notation.text)
    names = {e.name for e in parsed.entities.values()}
    for fact_id in weak:
        fact = kb.graph.relations[fact_id]
        assert {kb.graph.entities[e].name for e in fact.entity_ids} <= names
        assert f"-{fact.predicate}->" not in notation.text
    sentences = [
        kb.retrieve(question, max_tokens=400, format="sentences", min_confidence=low).text
        for low in (0.0, floor)
    ]
    assert sentences[0] == sentences[1]


def test_became_keeps_its_complement_in_the_predicate(extractor: SpacyExtractor) -> None:
    # "Lena Voss became in 1998" says nothing; she became famous then
    found = triples(graph_of(extractor, "Lena Voss became famous in 1998 as a climber."))
    assert ("Lena Voss", "become_famous_in", "1998") in found
    assert not any(p == "become_in" for _, p, _ in found)


def test_who_never_stands_for_a_name_that_is_not_a_person(extractor: SpacyExtractor) -> None:
    text = (
        "Tom Arkle is an American former right-handed outfielder in Major League Baseball "
        "who played for the Houston Astros."
    )
    found = triples(graph_of(extractor, text, "Tom Arkle"))
    assert not any(s == "Major League Baseball" and p == "play_for" for s, p, _ in found)


def test_a_proper_noun_ner_missed_is_not_a_role(extractor: SpacyExtractor) -> None:
    found = triples(graph_of(extractor, "Mara Quist was born in Slough, Berkshire in 1969."))
    assert ("Mara Quist", "born_in", "Slough") in found
    assert not any("berkshire" in p for _, p, _ in found)


def test_this_noun_is_not_the_documents_topic(extractor: SpacyExtractor) -> None:
    # the fallback reads "the band" as the main entity; "this expedition" is something else
    text = "Oren Vale is a Welsh climber. This expedition was the first winter ascent of Snowdon."
    found = triples(graph_of(extractor, text, "Oren Vale"))
    assert ("Oren Vale", "first_winter_ascent_of", "Snowdon") not in found


def test_a_title_the_text_names_whole_is_one_entity(extractor: SpacyExtractor) -> None:
    # NER sees a part of the title; the text holds the whole title, and so does the graph
    text = "A Sailor's Promise is a lost 1916 silent film drama starring Ada Brenn."
    graph = graph_of(extractor, text, "A Sailor's Promise")
    assert ("A Sailor's Promise", "star", "Ada Brenn") in triples(graph)
    assert "Promise" not in {e.name for e in graph.entities.values()}


def test_a_topic_link_names_what_governs_the_whole_name(extractor: SpacyExtractor) -> None:
    # "last" hangs from "weeks", inside the name: the predicate is the verb above the name
    text = "Its plot centers on the last two weeks of a girl's life in Tulsa."
    found = triples(graph_of(extractor, text, "Harrow Lane (novel)"))
    assert ("Harrow Lane", "center_on", "last two weeks") in found


def test_a_sentence_that_is_only_a_name_is_read(extractor: SpacyExtractor) -> None:
    # the climb to the name's head word stops at the sentence's root (an infobox fragment)
    graph = graph_of(extractor, "Topeka is the capital. Kansas Legislature.", "Kansas")
    assert "Kansas Legislature" in {e.name for e in graph.entities.values()}


def test_by_default_both_fact_formats_state_no_topic_link_and_name_its_ends(
    make_kb: Callable[..., noema.KnowledgeBase],
) -> None:
    kb = brightloop(make_kb)
    question = "What did Brightloop Labs sell?"
    assert noema.RetrieveOptions().confidence_floor() == NOTATION_MIN_CONFIDENCE
    weak = {r.id for r in kb.graph.relations.values() if r.confidence < NOTATION_MIN_CONFIDENCE}
    assert weak, "the text must give a topic link"
    notation = kb.retrieve(question, max_tokens=400)
    assert not weak & set(notation.relation_ids)
    assert notation.relation_ids, "the sure facts are still stated"
    prose = kb.retrieve(question, max_tokens=400, format="natural_language")
    assert set(prose.relation_ids) == set(notation.relation_ids)
    (also,) = [line for line in prose.text.splitlines() if line.startswith("Also named: ")]
    shown = {kb.graph.entities[e].name for r in weak for e in kb.graph.relations[r].entity_ids}
    assert any(name in also for name in shown), also
    every = kb.retrieve(question, max_tokens=400, format="natural_language", min_confidence=0)
    assert weak & set(every.relation_ids)
    assert "Also named" not in every.text


def test_a_participle_hung_on_the_author_is_about_the_work(extractor: SpacyExtractor) -> None:
    # the parser hangs "published in 1969" on the author, the nearest noun
    facts = triples(
        graph_of(
            extractor,
            "The Warlock in Spite of Himself is a science fantasy novel by American author "
            "Christopher Stasheff, published in 1969. It was a painting by Paul Klee, born in 1879.",
            "The Warlock in Spite of Himself",
        )
    )
    assert ("Warlock in Spite of Himself", "publish_in", "1969") in facts
    assert ("Christopher Stasheff", "publish_in", "1969") not in facts
    written = triples(
        graph_of(extractor, "It is a novel written by Christopher Stasheff, published in 1969.")
    )
    assert ("Christopher Stasheff", "publish_in", "1969") not in written
    assert ("Paul Klee", "born_in", "1879") in facts  # a participle of a person stays his


def test_a_role_in_a_list_belongs_to_the_name_beside_it(extractor: SpacyExtractor) -> None:
    facts = triples(
        graph_of(
            extractor,
            "Neil Mallon Bush is an American businessman. His siblings are George W. Bush, the "
            "43rd President of the United States; Jeb Bush, a former governor of Florida; and "
            "Marvin. Ann Kell and Bob Ruiz, the founders of Kestrel Labs, met in 1990.",
            "Neil Bush",
        )
    )
    roles = {(s, p, o) for s, p, o in facts if p.endswith(("president_of", "governor_of"))}
    assert roles == {
        ("George W. Bush", "43rd_president_of", "United States"),
        ("Jeb Bush", "former_governor_of", "Florida"),
    }
    # a plural role is every listed name's, though the parser hangs it on the last
    assert {
        ("Ann Kell", "founder_of", "Kestrel Labs"),
        ("Bob Ruiz", "founder_of", "Kestrel Labs"),
    } <= facts


def test_a_noun_that_says_nothing_alone_is_no_end_and_stays_in_the_verb(
    extractor: SpacyExtractor,
) -> None:
    graph = graph_of(
        extractor,
        "The Hornpipe Heights are a group of partly exposed ridges. The Koman Hydroelectric Power "
        "Station has taken the name of the settlement. The Battle of Ajdabiya took place near "
        "Ajdabiya. Austria formed part of the Holy Roman Empire.",
    )
    facts = triples(graph)
    assert not {o for _, _, o in facts} & {"group", "name", "place"}
    assert ("Battle of Ajdabiya", "take_place_near", "Ajdabiya") in facts
    assert ("Austria", "form_part_of", "Holy Roman Empire") in facts  # not "form_part_part_of"


def facts_and_events(graph: SemanticGraph) -> set[tuple[str, str, str]]:
    """Every two-ended fact, relation or event (without its time), as names."""
    name = {e.id: e.name for e in graph.entities.values()}
    events = {
        (name[e.participant_ids[0]], e.label, name[e.participant_ids[1]])
        for e in graph.events.values()
        if len(e.participant_ids) == 2
    }
    return triples(graph) | events


def test_what_there_is_is_no_fact_of_the_topic(extractor: SpacyExtractor) -> None:
    facts = facts_and_events(
        graph_of(
            extractor,
            "Velmora is a strategy game. There are 4,096 such positions in total. There have been "
            "three Velmora films released in Japan.",
        )
    )
    assert {(p, o) for s, p, o in facts if s == "Velmora"} == {("is", "strategy game")}


def test_the_places_and_times_of_a_passive_verb_are_not_the_agents(
    extractor: SpacyExtractor,
) -> None:
    facts = facts_and_events(
        graph_of(
            extractor,
            "Kestrel Labs was founded in 2004 in Oslo by Ann Kell. The Quillon Circle was a group "
            "of poets, founded in 1890 by Ada Merrow. The Harlan Games were held every four "
            "years, interrupted in 1944 by the Second World War. In 2015 Kestrel Labs was sold "
            "by Ann Kell to Harrow Avionics.",
        )
    )
    assert ("Kestrel Labs", "found_in", "Oslo") in facts
    assert ("Ann Kell", "found", "Kestrel Labs") in facts
    agents = {"Ann Kell", "Ada Merrow", "Second World War"}
    assert not {(s, p) for s, p, _ in facts if s in agents and p.endswith("_in")}
    # whom it was sold to is the seller's, not the company's
    assert ("Ann Kell", "sell_to", "Harrow Avionics") in facts
    assert ("Kestrel Labs", "sell_to", "Harrow Avionics") not in facts


def test_a_name_ending_in_an_events_or_a_places_word_is_that(extractor: SpacyExtractor) -> None:
    graph = graph_of(
        extractor,
        "In 2011, Omar Haddad was involved in the Libyan Civil War. Hans Mott represented his "
        "country at the 3rd Chess Olympiad. Kestrel Labs was founded in 2004 in Oslo by Ann Kell. "
        "Frank Ocean released the album Blonde in 2016.",
    )
    assert type_of(graph, "Libyan Civil War") == "EVENT"  # NER: ORG
    assert type_of(graph, "3rd Chess Olympiad") == "EVENT"  # NER: ORG
    # a place word that is a surname too, after a name the given-name list lacks, stays a person
    assert type_of(graph, "Frank Ocean") == "PERSON"
    # a founded thing NER called a person is what its company word says, not OTHER
    assert type_of(graph, "Kestrel Labs") == "ORG"


def test_a_light_verbs_object_stays_in_the_fact_of_its_preposition(
    extractor: SpacyExtractor,
) -> None:
    facts = facts_and_events(
        graph_of(
            extractor,
            "When Canada declared war against Germany in September 1939, the command had only "
            "five squadrons.",
        )
    )
    assert ("Canada", "declare_war_in", "September 1939") in facts
    assert not {p for _, p, _ in facts if p == "declare_in"}


def test_a_share_of_something_is_no_end(extractor: SpacyExtractor) -> None:
    facts = facts_and_events(
        graph_of(
            extractor,
            "Oskari Frösén is a Finnish high jumper, who won a total of five national titles. "
            "The Halden Board administers the majority of the schools. Halden has a population "
            "of 30,000.",
        )
    )
    assert not {o for _, _, o in facts} & {"total", "majority", "population"}
    # a share stands for what it is a share of
    assert ("Oskari Frösén", "win", "five national titles") in facts


def test_they_in_a_places_document_is_not_the_place_unless_its_name_is_plural(
    extractor: SpacyExtractor,
) -> None:
    graph = graph_of(
        extractor,
        "The Gold Coast is a region of West Africa on the Gulf of Guinea. From here they "
        "acquired slaves and gold in trade for European goods.",
        "Gold Coast (region)",
    )
    # what notation states (a topic link at the lowest confidence still reaches the names)
    stated = [r for r in graph.relations.values() if r.confidence >= NOTATION_MIN_CONFIDENCE]
    assert not [r for r in stated if r.predicate.startswith("acquire")]
    islands = facts_and_events(
        graph_of(
            extractor,
            "The Faroe Islands are an archipelago in the North Atlantic. Their capital is "
            "Tórshavn.",
            "Faroe Islands",
        )
    )
    assert ("Tórshavn", "capital_of", "Faroe Islands") in islands


def test_a_date_that_names_no_time_is_no_end(extractor: SpacyExtractor) -> None:
    # "today", "that season", "annually" name no day: each was one node joining unrelated
    # facts ("Ravelle Institute -name-> today"); a year, a month and a length of time stay
    texts = [
        "The Ravelle Institute today named Yusuf Marchetti as its director.",
        "The Denholm Festival is held annually in Denholm.",
        "Carlow Rovers won the league that season, their fourth title in seven years.",
        "Marta Quell joined Carlow Rovers in 2015. She left the club in August.",
        "Durham Cathedral was built in the eleventh century.",
        "Mara Voss coached the Carlow Hawks for a decade.",
        "The Delhi Festival is held in the middle of the summer.",
    ]
    graph = extractor.extract([Document(text) for text in texts])
    facts = facts_and_events(graph)
    ends = {o for _, _, o in facts} | {s for s, _, _ in facts}
    assert not ends & {"today", "annually", "that season"}, facts
    assert ("Ravelle Institute", "name", "Yusuf Marchetti") in facts
    assert ("Marta Quell", "join", "Carlow Rovers") in facts  # a year
    assert ("Marta Quell", "leave_in", "August") in facts  # a month
    assert ("Durham Cathedral", "build_in", "eleventh century") in facts  # a century
    assert ("Mara Voss", "coach_for", "a decade") in facts  # a length
    assert "middle of the summer" in ends, facts  # a season answers "when"


@pytest.mark.parametrize(
    ("text", "stated", "not_stated"),
    [
        (
            "Ines Marlow sold Gannet Sonar to Lindqvist Marine in 2017.",
            ("Gannet Sonar", "sell_to", "Lindqvist Marine"),
            ("Ines Marlow", "sell_to", "Lindqvist Marine"),
        ),
        (
            "Grete Solberg founded Nettlecombe Software in Tamsford in 2008.",
            ("Nettlecombe Software", "found_in", "Tamsford"),
            ("Grete Solberg", "found_in", "Tamsford"),
        ),
        (
            "Halvard Systems gave Tidewrack to the Brightwater Software Foundation.",
            ("Tidewrack", "give_to", "Brightwater Software Foundation"),
            ("Halvard Systems", "give_to", "Brightwater Software Foundation"),
        ),
        (
            "Tarrowby United signed Samir Haddou from Quillmoor Town.",
            ("Samir Haddou", "sign_from", "Quillmoor Town"),
            ("Tarrowby United", "sign_from", "Quillmoor Town"),
        ),
        (
            "Walter O'Malley moved the Dodgers to Los Angeles.",
            ("Dodgers", "move_to", "Los Angeles"),
            ("Walter O'Malley", "move_to", "Los Angeles"),
        ),
        (
            "Anneliese Dorrow discovered Velotrexin at the Amberline Laboratory in 2012.",
            ("Velotrexin", "discover_at", "Amberline Laboratory"),
            ("Anneliese Dorrow", "discover_at", "Amberline Laboratory"),
        ),
    ],
)
def test_a_preposition_after_a_named_object_says_where_the_object_went(
    extractor: SpacyExtractor,
    text: str,
    stated: tuple[str, str, str],
    not_stated: tuple[str, str, str],
) -> None:
    # "sold Gannet Sonar to Lindqvist Marine": what went to Lindqvist Marine is Gannet Sonar, as
    # "Gannet Sonar was sold to Lindqvist Marine" says; the seller "sold to" it dropped the point
    facts = facts_and_events(graph_of(extractor, text))
    assert stated in facts and not_stated not in facts, facts


@pytest.mark.parametrize(
    ("text", "stated"),
    [
        # the mover's own way, and a partner: the subject's
        (
            "Ada Brenn joined Tarrowby United from Quillmoor Town in 2016.",
            ("Ada Brenn", "join_from", "Quillmoor Town"),
        ),
        (
            "Miriam Harrow founded Harrow Avionics with Oskar Bellweather.",
            ("Miriam Harrow", "found_with", "Oskar Bellweather"),
        ),
        # where the subject did it
        (
            "Ridley Scott directed Russell Crowe in Gladiator.",
            ("Ridley Scott", "direct_in", "Gladiator"),
        ),
        # a value is no thing that went anywhere
        (
            "Frank Lampard spent two seasons at Manchester City.",
            ("Frank Lampard", "spend_at", "Manchester City"),
        ),
        ("Facebook paid $19 billion for WhatsApp.", ("Facebook", "pay_for", "WhatsApp")),
        (
            "Dunmarrow Rovers lost 2–1 to Eskridge Athletic in the final.",
            ("Dunmarrow Rovers", "lose_to", "Eskridge Athletic"),
        ),
    ],
)
def test_a_preposition_of_the_subjects_own_stays_the_subjects(
    extractor: SpacyExtractor, text: str, stated: tuple[str, str, str]
) -> None:
    assert stated in facts_and_events(graph_of(extractor, text))
