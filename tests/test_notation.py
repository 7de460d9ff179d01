from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noema
from noema import NotationError, decode, encode_graph, parse_notation

SPEC_EXAMPLE = """#1 Larry Page :PERSON
#2 Google :ORG
#3 Sundar Pichai :PERSON
#1 -found-> #2
#3 -ceo_of-> #2"""


def spec_graph() -> noema.SemanticGraph:
    g = noema.SemanticGraph()
    page = g.add_entity("Larry Page", "PERSON")
    google = g.add_entity("Google", "ORG")
    pichai = g.add_entity("Sundar Pichai", "PERSON")
    g.add_relation(page, "found", google)
    g.add_relation(pichai, "ceo_of", google)
    return g


def test_spec_example_encodes_to_its_five_lines() -> None:
    assert encode_graph(spec_graph()) == SPEC_EXAMPLE


def test_decode_spec_example() -> None:
    sentences = decode(SPEC_EXAMPLE).splitlines()
    assert sentences == ["Larry Page found Google.", "Sundar Pichai is the ceo of Google."]


@pytest.mark.parametrize(
    ("predicate", "phrase"),
    [
        ("found", "found"),
        ("ceo_of", "is the ceo of"),
        ("headquarter_in", "is headquarter in"),
        ("work_for", "is work for"),
        ("set_up", "set up"),
    ],
)
def test_predicate_phrases(predicate: str, phrase: str) -> None:
    assert decode(f"#1 A :ORG\n#2 B :ORG\n#1 -{predicate}-> #2") == f"A {phrase} B."


def test_event_with_time_round_trips() -> None:
    g = spec_graph()
    google = next(e.id for e in g.entities.values() if e.name == "Google")
    g.add_event("ipo", [google], time="2004-08-19")
    text = encode_graph(g)
    assert text.splitlines()[-1] == "*ipo (#2) @2004-08-19"
    parsed = parse_notation(text)
    assert parsed.events == [noema.NotationEvent("ipo", (2,), "2004-08-19")]
    assert "Ipo involving Google on 2004-08-19." in decode(text)


@pytest.mark.parametrize(
    ("time", "sentence"),
    [
        ("2010/2019", "Mara Voss was the ceo of Veltrix Robotics from 2010 to 2019."),
        ("../2019", "Mara Voss was the ceo of Veltrix Robotics until 2019."),
        ("2019/..", "Mara Voss is the ceo of Veltrix Robotics since 2019."),
        (None, "Mara Voss is the ceo of Veltrix Robotics."),
    ],
)
def test_an_event_of_two_reads_like_a_relation_with_its_time(
    time: str | None, sentence: str
) -> None:
    text = "#1 Mara Voss :PERSON\n#2 Veltrix Robotics :ORG\n*ceo_of (#1,#2)"
    if time is not None:
        text += f" @{time}"
    assert decode(text) == sentence


def test_parse_returns_the_documented_shapes() -> None:
    parsed = parse_notation(SPEC_EXAMPLE)
    assert parsed.entities[3] == noema.NotationEntity(3, "Sundar Pichai", "PERSON")
    assert parsed.relations == [
        noema.NotationRelation(1, "found", 2),
        noema.NotationRelation(3, "ceo_of", 2),
    ]
    assert parsed.events == []


def test_isolated_entities_dropped_unless_named() -> None:
    g = spec_graph()
    lonely = g.add_entity("Mountain View", "GPE")
    assert "Mountain View" not in encode_graph(g)
    google = next(e.id for e in g.entities.values() if e.name == "Google")
    assert encode_graph(g, entity_ids=[google, lonely]) == "#1 Google :ORG\n#2 Mountain View :GPE"


def test_sub_graph_keeps_relations_among_chosen_entities() -> None:
    g = spec_graph()
    ids = [e.id for e in g.entities.values() if e.name in ("Larry Page", "Google")]
    assert (
        encode_graph(g, entity_ids=ids) == "#1 Larry Page :PERSON\n#2 Google :ORG\n#1 -found-> #2"
    )


MALFORMED = [
    ("#x Google :ORG", 1, "bad id"),
    ("#1 Google", 1, "missing type"),
    ("#1 Google :COMPANY", 1, "unknown type"),
    ("#1 Google :org", 1, "lowercase type"),
    ("#1 Google :ORG\n#1 -found-> #2", 2, "undeclared object"),
    ("#1 Google :ORG\n#1 -found-> #1\n#2 Larry :PERSON", 3, "entity after relation"),
    ("#1 Google :ORG\n*ipo (#1)\n#1 -found-> #1", 3, "relation after event"),
    ("#1 Google :ORG\n*ipo (#1,#2)", 2, "event naming undeclared entity"),
    ("#1 Google :ORG\n#1 Alphabet :ORG", 2, "id declared twice"),
    ("#1 Google :ORG\n#1 -Found-> #1", 2, "predicate not snake_case"),
    ("#1 Google :ORG\n#1 -found-> #1 extra", 2, "trailing garbage"),
    ("#1 Google :ORG\n\nhello world", 3, "garbage"),
    ("*ipo ()", 1, "event without participants"),
    ("#1 Google :ORG\n*IPO (#1)", 2, "event label not snake_case"),
    ("#1 Google :ORG\n*ipo (#1, #1)", 2, "space in participant list"),
]


@pytest.mark.parametrize(
    ("text", "line"), [(t, n) for t, n, _ in MALFORMED], ids=[i for *_, i in MALFORMED]
)
def test_malformed_notation_raises_value_error_with_line(text: str, line: int) -> None:
    with pytest.raises(ValueError, match=rf"^line {line}: ") as info:
        parse_notation(text)
    assert isinstance(info.value, NotationError)
    assert info.value.line_number == line


def test_a_long_malformed_line_is_quoted_in_part_and_kept_whole() -> None:
    bad = "#1 " + "Google " * 200_000
    with pytest.raises(NotationError, match="^line 1: ") as info:
        parse_notation(bad)
    assert len(str(info.value)) < 300 and info.value.line == bad


def test_blank_lines_and_crlf_are_tolerated() -> None:
    parsed = parse_notation("#1 A :ORG\r\n\r\n#2 B :GPE\r\n#1 -in-> #2\r\n")
    assert parsed.relations == [noema.NotationRelation(1, "in", 2)]


@pytest.mark.parametrize(
    "name",
    [
        "Foo :PERSON",
        "a -x-> #2",
        "#2",
        "*star",
        "  padded  ",
        "C:\\path",
        "Ünïcödé 名前",
        "emoji 🚀",
    ],
)
def test_awkward_names_round_trip(name: str) -> None:
    g = noema.SemanticGraph()
    a, b = g.add_entity(name, "ORG"), g.add_entity("B", "GPE")
    g.add_relation(a, "in", b)
    assert parse_notation(encode_graph(g)).entities[1].name == name
    assert noema.check_round_trip(g).ok


@pytest.mark.parametrize("name", ["two\nlines", "carriage\rreturn", "line\u2028separator"])
def test_names_with_line_breaks_are_refused_at_encode(name: str) -> None:
    g = noema.SemanticGraph()
    a, b = g.add_entity(name, "ORG"), g.add_entity("B", "GPE")
    g.add_relation(a, "in", b)
    with pytest.raises(NotationError, match="line break"):
        encode_graph(g)
    report = noema.check_round_trip(g)
    assert not report.ok and report.lost_entities and report.lost_relations


def test_predicates_are_normalized_on_insert() -> None:
    g = noema.SemanticGraph()
    a, b = g.add_entity("A", "ORG"), g.add_entity("B", "ORG")
    g.add_relation(a, "Headquartered In", b)
    assert encode_graph(g).endswith("#1 -headquartered_in-> #2")


# -- property-based round trips --------------------------------------------------------------------
names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20).filter(
    lambda s: s.strip() and not set(s) & set("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
)
predicates = st.from_regex(r"[a-z][a-z0-9]{0,6}(_[a-z0-9]{1,5}){0,2}", fullmatch=True)
times = st.one_of(st.none(), names)


@st.composite
def graphs(draw: st.DrawFn) -> noema.SemanticGraph:
    g = noema.SemanticGraph()
    ids = [
        g.add_entity(draw(names), draw(st.sampled_from(noema.ENTITY_TYPES)))
        for _ in range(draw(st.integers(1, 6)))
    ]
    for _ in range(draw(st.integers(0, 8))):
        g.add_relation(draw(st.sampled_from(ids)), draw(predicates), draw(st.sampled_from(ids)))
    for _ in range(draw(st.integers(0, 3))):
        participants = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3))
        g.add_event(draw(predicates), participants, time=draw(times))
    return g


@settings(max_examples=200, deadline=None)
@given(graphs())
def test_encode_parse_encode_is_identity(graph: noema.SemanticGraph) -> None:
    text = encode_graph(graph)
    parsed = parse_notation(text)
    rebuilt = noema.SemanticGraph()
    ids = {n: rebuilt.add_entity(e.name, e.type) for n, e in parsed.entities.items()}
    for r in parsed.relations:
        rebuilt.add_relation(ids[r.subject_id], r.predicate, ids[r.object_id])
    for v in parsed.events:
        rebuilt.add_event(v.label, [ids[p] for p in v.participant_ids], time=v.time)
    assert encode_graph(rebuilt) == text
    assert noema.check_round_trip(graph).ok


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_parse_arbitrary_text_parses_or_raises_value_error(text: str) -> None:
    with contextlib.suppress(ValueError):
        parse_notation(text)


# Valid and broken lines, shuffled into line soups (scripts/fuzz_notation.py uses them too).
NOTATION_LINES = [
    "#1 A :ORG",
    "#2 B :GPE",
    "#1 -x-> #2",
    "*e (#1)",
    "*e (#1,#2) @now",
    "#3 -y-> #1",
    "",
    "junk",
    "#1 A :ORG\r",
    "#01 X :DATE",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(NOTATION_LINES), max_size=8))
def test_parse_line_soup_parses_or_raises_value_error(lines: list[str]) -> None:
    try:
        parse_notation("\n".join(lines))
    except ValueError as exc:
        assert str(exc).startswith("line ")


def test_decoding_facts_from_the_graph_says_what_decoding_their_notation_says() -> None:
    """natural_language is rendered straight from the graph (no notation written and read back):
    the text must be the round trip's, names with colons, accents and odd spacing included."""
    from noema.model.notation import decode_facts, encode_facts

    g = noema.SemanticGraph()
    names = ["Star Wars: Episode IV", "Nestlé S.A.", "A :ORG", " spaced  out ", "Ōe", "Bob"]
    ids = [
        g.add_entity(n, t)
        for n, t in zip(names, ["PRODUCT", "ORG", "ORG", "PERSON", "PERSON", "PERSON"], strict=True)
    ]
    relations = [
        g.add_relation(ids[0], "direct_by", ids[3]),
        g.add_relation(ids[1], "ceo_of", ids[2]),
        g.add_relation(ids[4], "found", ids[1]),
    ]
    events = [
        g.add_event("sign_treaty", [ids[4], ids[5], ids[3]], time="1998"),
        g.add_event("ipo", [ids[1]]),
    ]
    for chosen_relations, chosen_events in [
        (relations, events),
        (relations[1:], []),
        ([], events[::-1]),
        (relations[::-1], events[:1]),
    ]:
        expected = decode(encode_facts(g, chosen_relations, chosen_events).text)
        assert decode_facts(g, chosen_relations, chosen_events) == expected
