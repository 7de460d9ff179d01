"""What a name's form and the words around its mentions say it is: products, clubs and built
places typed by their own evidence, and OTHER where the evidence says only what a name is not."""

from __future__ import annotations

import pytest

from noema import Document, SpacyExtractor


def types_of(extractor: SpacyExtractor, texts: list[str], name: str) -> list[str]:
    """The types of the nodes named ``name`` in the graph of ``texts``, one document each."""
    graph = extractor.extract([Document(text) for text in texts])
    return sorted(e.type for e in graph.entities.values() if e.name == name)


@pytest.mark.parametrize(
    ("texts", "name", "expected"),
    [
        pytest.param(
            [
                "Ostrander Therapeutics licensed the drug Velotrexin in 2016. Velotrexin was "
                "approved in 2021."
            ],
            "Velotrexin",
            "PRODUCT",
            id="the-drug-X",
        ),
        pytest.param(
            ["Patients in the trial took Velotrexin, a drug for severe inflammation."],
            "Velotrexin",
            "PRODUCT",
            id="X-a-drug",
        ),
        pytest.param(
            ["Corvid 4.2 was released in May by Halvard Systems."],
            "Corvid 4.2",
            "PRODUCT",
            id="version-number",
        ),
        pytest.param(
            [
                "Spindle 3.0, the new version of the image analysis software, was released on "
                "22 May 2023."
            ],
            "Spindle 3.0",
            "PRODUCT",
            id="version-number-NER-missed",
        ),
        pytest.param(
            ["Ines Marlow joined the Magpie project in 2020 and wrote its parser."],
            "Magpie",
            "PRODUCT",
            id="the-X-project",
        ),
        pytest.param(
            ["Hearthloom is a free toolkit for desktop applications, forked from Emberloom."],
            "Hearthloom",
            "PRODUCT",
            id="kind-noun-of-the-topic",
        ),
        pytest.param(
            [
                "Marrowby Town beat Wexcombe United 2-1 on Saturday. The club from Marrowby is "
                "second in the league."
            ],
            "Marrowby Town",
            "ORG",
            id="town-name-and-Town",
        ),
        pytest.param(
            [
                "Marrowby Town beat Wexcombe United 2-1 on Saturday. The club from Marrowby is "
                "second in the league."
            ],
            "Wexcombe United",
            "ORG",
            id="club-word-and-no-score",
        ),
        pytest.param(
            [
                "Kilnworth Stadium is the home of Tarrowby United. It was built in 1956 on the "
                "site of the town's brickworks."
            ],
            "Kilnworth Stadium",
            "LOC",
            id="stadium-no-town",
        ),
        pytest.param(
            ["Eskridge Athletic played their first match at Glenmoor Arena on 6 August 2022."],
            "Glenmoor Arena",
            "LOC",
            id="arena",
        ),
        pytest.param(
            [
                "Mossgate Field Station is a malaria research station run by the Hollinsworth "
                "Centre."
            ],
            "Mossgate Field Station",
            "LOC",
            id="field-station",
        ),
        pytest.param(
            [
                "# Yusuf Marchetti\n\nYusuf Marchetti is a biophysicist.\n\n## Key facts\n\n"
                "- Born: Tallowmere, 1975\n- Head of the Quarrie Laboratory: 2015–2024\n"
            ],
            "Tallowmere",
            "GPE",
            id="list-label-born",
        ),
        # nothing says what it is, only what it is not: a wrong type is worse than none
        pytest.param(
            [
                "It replaces Ashcombe Park, where the club had played for 101 years. Ashcombe "
                "Park will be turned into housing."
            ],
            "Ashcombe Park",
            "OTHER",
            id="where-clause-no-person",
        ),
    ],
)
def test_a_name_is_typed_by_its_own_evidence(
    extractor: SpacyExtractor, texts: list[str], name: str, expected: str
) -> None:
    assert types_of(extractor, texts, name) == [expected]


def test_a_thing_its_own_document_names_is_one_node_where_ner_calls_it_a_person(
    extractor: SpacyExtractor,
) -> None:
    texts = [
        "# Larkspur\n\nLarkspur is an open-source web framework written in Python. Ferdinand "
        "Aulich started it in 2014.",
        "Odalys Merino became lead maintainer of Larkspur in 2021. Larkspur is used by many firms.",
    ]
    assert types_of(extractor, texts, "Larkspur") == ["PRODUCT", "PRODUCT"]


def test_a_person_her_own_page_calls_she_is_a_person_where_ner_calls_her_a_firm(
    extractor: SpacyExtractor,
) -> None:
    # a given name NER does not know: two ORG labels in each document, and her own page's
    # "she" and "founder" the only words that say what she is
    texts = [
        "Contributors fork Emberloom as Hearthloom\n\nVELLSTRAND, 9 June 2020 \u2014 A group of "
        "Emberloom contributors led by Imogen Thrale today announced Hearthloom, a fork of the "
        "desktop toolkit. Thrale said the group had no quarrel with Nettlecombe Software.",
        "# Imogen Thrale\n\nImogen Thrale is a software developer from Vellstrand and the "
        "founder of Hearthloom. She contributed to Emberloom for eight years before the 2020 "
        "licence change. She works for the Open Tern Collective, which pays her to lead "
        "Hearthloom.",
    ]
    assert types_of(extractor, texts, "Imogen Thrale") == ["PERSON", "PERSON"]


def test_a_given_name_ner_reads_as_a_people_starts_a_persons_name(
    extractor: SpacyExtractor,
) -> None:
    # NER reads "Anneliese" as a nationality (NORP) and "Dorrow" as a product or nothing: the
    # surname alone was a PRODUCT node in every document that wrote her name in full
    texts = [
        "# Ravelle Institute FAQ\n\nQ: Who is the director?\nA: Anneliese Dorrow is the "
        "director. She has led the institute since 2017.",
        "Velotrexin was discovered in 2012 by Anneliese Dorrow and Lucian Marsh.",
        "Ottilie Brandvold took over the laboratory from Anneliese Dorrow in 2017.",
    ]
    graph = extractor.extract([Document(text) for text in texts])
    names = {e.name: e.type for e in graph.entities.values()}
    assert names.get("Anneliese Dorrow") == "PERSON"
    assert "Dorrow" not in names and "Anneliese" not in names


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("The Sunni Triangle lies north of Baghdad.", "Sunni"),
        ("The German Bundestag met in Berlin.", "German"),
        ("German Chancellor Angela Merkel spoke in Berlin.", "German"),
        # a title after a given name that is also a party's
        ("Tory Chancellor Jeremy Hunt spoke in Leeds.", "Tory"),
        ("Tory MP Jacob Rees-Mogg voted against the bill.", "Tory"),
    ],
)
def test_a_people_before_a_name_stays_a_people(
    extractor: SpacyExtractor, text: str, name: str
) -> None:
    graph = extractor.extract([Document(text)])
    people = [e.name for e in graph.entities.values() if e.type == "PERSON"]
    assert not any(person.startswith(f"{name} ") for person in people)


def test_the_short_form_of_a_named_body_is_of_its_type(extractor: SpacyExtractor) -> None:
    # "the Hollinsworth Centre" is how other pages write the institute, which NER calls a place
    texts = [
        "# Hollinsworth Centre for Tropical Medicine\n\nThe Hollinsworth Centre for Tropical "
        "Medicine is a research institute in Tallowmere.",
        "Florian Vesey worked at the Hollinsworth Centre for twelve years. He left the "
        "Hollinsworth Centre in 2013.",
    ]
    assert types_of(extractor, texts, "Hollinsworth Centre") == ["ORG"]


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        # a maker is a person as often as a firm
        ("The cider maker Georgia Tremayne was born in Pennick.", "Georgia Tremayne", "PERSON"),
        # "Cape" is no town's name: "Town" makes no club of it
        ("Cape Town is a port city. Marta Quell moved to Cape Town in 2001.", "Cape Town", "GPE"),
    ],
)
def test_the_new_evidence_leaves_these_alone(
    extractor: SpacyExtractor, text: str, name: str, expected: str
) -> None:
    assert types_of(extractor, [text], name) == [expected]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Thornquist Books published her first novel in 2011.", "Thornquist Books"),
        ("Her second novel came out from Lampwick Editions in 2017.", "Lampwick Editions"),
        ("Kellaway Distribution moves the books of all three houses.", "Kellaway Distribution"),
        ("Wrenfield Press was founded in 1994 by two booksellers.", "Wrenfield Press"),
        ("Caddisford General Hospital opened a new wing in 2019.", "Caddisford General Hospital"),
        ("Mira Oduya ran Tessmoor Royal Infirmary for a decade.", "Tessmoor Royal Infirmary"),
        ("She chaired Amberlea Hospitals Trust until 2024.", "Amberlea Hospitals Trust"),
        ("Quenby Instruments makes the surgical robot.", "Quenby Instruments"),
        ("Kestrin Medical was founded in 2009 by Oona Farthing.", "Kestrin Medical"),
        ("Orrery House is a publishing house based in Lathermere.", "Orrery House"),
        ("Quinta do Vessal is a wine estate in Quintarela.", "Quinta do Vessal"),
    ],
)
def test_a_body_whose_name_ends_in_its_kind_is_an_organisation(
    extractor: SpacyExtractor, text: str, name: str
) -> None:
    # publishers, imprints, hospitals and trusts end their names with what they are, where NER
    # reads a person or a place into a name it has never seen
    assert types_of(extractor, [text], name) == ["ORG"]


def test_a_warehouse_is_a_place(extractor: SpacyExtractor) -> None:
    text = "The books are kept at Sedge Lane Warehouse before they go to the shops."
    assert types_of(extractor, [text], "Sedge Lane Warehouse") == ["LOC"]


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        ("In 2014 she opened the Lannock Hangar at Kelvaig Airport.", "Lannock Hangar", "LOC"),
        ("Ostrey Airways flew from Ostrey Airfield until 2003.", "Ostrey Airfield", "LOC"),
        (
            "Tours of the Quarry Cellar, where the wine is aged, run every Saturday.",
            "Quarry Cellar",
            "LOC",
        ),
        (
            "The Encosta Vineyard is one of the great sites of Esterra, said Okonkwo.",
            "Encosta Vineyard",
            "LOC",
        ),
        (
            "Millstone Rosé, first made in 1998, is the cooperative's best-selling wine.",
            "Millstone Rosé",
            "PRODUCT",
        ),
        ("The Talvio is a bedside infusion pump made by Kestrin Medical.", "Talvio", "PRODUCT"),
        ("The hospital bought a Halcyra, a surgical robot, in 2019.", "Halcyra", "PRODUCT"),
        # a publisher is the person who runs an imprint as often as the firm
        (
            "Fergus Drury, the house's publisher, said there was no offer.",
            "Fergus Drury",
            "PERSON",
        ),
    ],
)
def test_devices_and_wines_are_products_hangars_and_cellars_places_a_publisher_a_person(
    extractor: SpacyExtractor, text: str, name: str, expected: str
) -> None:
    # NER's guess from a name it has never seen: a person, a firm, or OTHER where they tie
    assert types_of(extractor, [text], name) == [expected]


def test_a_name_ends_before_a_bracket_it_leaves_open(extractor: SpacyExtractor) -> None:
    # a list line's "(house)" after a title: NER ran the book's name into the bracket, and the
    # name with the bracket was a node apart from the book
    texts = [
        "# Corran Prize\n\nThe Corran Prize is an annual award for a first novel.\n\n"
        "## Recent winners\n\n- 2019: The Pale Orchard (Lampwick Editions)\n- 2020: A Season "
        "of Moths (Orrery House)\n- 2021: Glasshouse Summer (Wrenfield Press)\n- 2022: The Tin "
        "Road (Orrery House)\n- 2023: The Long Frost (Vantage & Moyle)",
        "Rosa Quill wrote The Tin Road. The novel was edited by Noor Haskett.",
    ]
    graph = extractor.extract([Document(text) for text in texts])
    assert not [e.name for e in graph.entities.values() if "(" in e.name or ")" in e.name]
