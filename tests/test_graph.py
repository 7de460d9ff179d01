from __future__ import annotations

import dataclasses

import pytest

import noema
from noema import GraphError, Mention, SemanticGraph


def build() -> tuple[SemanticGraph, str, str, str]:
    g = SemanticGraph()
    a = g.add_entity("Larry Page", "PERSON", mentions=[Mention("d1", 0, 10)])
    b = g.add_entity("Google", "ORG", aliases=["Google LLC"])
    c = g.add_entity("Alphabet", "ORG")
    g.add_relation(a, "found", b, mentions=[Mention("d1", 0, 26)], confidence=0.9)
    g.add_event("ipo", [b], time="2004-08-19")
    g.add_document(noema.Document("Larry Page founded Google.", id="d1", metadata={"year": 1998}))
    return g, a, b, c


def test_items_are_frozen() -> None:
    g, a, *_ = build()
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.entities[a].name = "x"  # type: ignore[misc]


def test_ids_are_stable_and_prefixed() -> None:
    g1, a1, *_ = build()
    g2, a2, *_ = build()
    assert a1 == a2 and a1.startswith("ent_")
    assert all(r.startswith("rel_") for r in g1.relations)
    assert all(v.startswith("evt_") for v in g1.events)


def test_same_name_twice_gives_two_entities() -> None:
    g = SemanticGraph()
    assert g.add_entity("Washington", "PERSON") != g.add_entity("Washington", "PERSON")


def test_duplicate_relation_unites_mentions() -> None:
    g, a, b, _ = build()
    rid = g.add_relation(a, "found", b, mentions=[Mention("d2", 5, 9)])
    assert len(g.relations) == 1
    assert g.relations[rid].mentions == (Mention("d1", 0, 26), Mention("d2", 5, 9))


@pytest.mark.parametrize(
    "call",
    [
        lambda g, a, b: g.add_entity("X", "COMPANY"),
        lambda g, a, b: g.add_entity("  ", "ORG"),
        lambda g, a, b: g.add_relation(a, "found", "ent_missing"),
        lambda g, a, b: g.add_relation(a, "!!", b),
        lambda g, a, b: g.add_event("ipo", ["ent_missing"]),
        lambda g, a, b: g.add_event("ipo", []),
        lambda g, a, b: g.add_entity("X", "ORG", confidence=1.5),
        lambda g, a, b: g.merge_entities(a, b),
        lambda g, a, b: g.update_entity(a, type="COMPANY"),
    ],
    ids=[
        "unknown type",
        "empty name",
        "dangling relation",
        "empty predicate",
        "dangling event",
        "no participants",
        "bad confidence",
        "cross-type merge",
        "unknown type in an update",
    ],
)
def test_invalid_operations_raise_value_error(call) -> None:  # type: ignore[no-untyped-def]
    g, a, b, _ = build()
    with pytest.raises(ValueError):
        call(g, a, b)
    with pytest.raises(GraphError):
        call(g, a, b)


def test_merge_remaps_relations_and_events() -> None:
    g, a, b, c = build()
    g.add_relation(c, "own", b)
    g.add_relation(a, "advise", c)
    g.merge_entities(b, c)
    assert c not in g.entities
    names = {
        (g.entities[r.subject_id].name, r.predicate, g.entities[r.object_id].name)
        for r in g.relations.values()
    }
    assert names == {
        ("Larry Page", "found", "Google"),
        ("Larry Page", "advise", "Google"),
    }  # self-loop dropped
    assert "Alphabet" in g.entities[b].aliases
    assert set(g.facts_of(b)) == set(g.relations) | set(g.events)


def test_an_entity_changes_type_and_keeps_its_id_and_facts() -> None:
    g, a, b, _ = build()
    facts = g.facts_of(b)
    updated = g.update_entity(b, type="PRODUCT")
    assert updated.type == g.entities[b].type == "PRODUCT" and updated.id == b
    assert g.facts_of(b) == facts and updated.aliases == ("Google LLC",)


def test_remove_entity_drops_its_facts() -> None:
    g, a, b, _ = build()
    g.remove_entity(b)
    assert not g.relations and not g.events
    assert g.facts_of(a) == []


def test_json_is_lossless_and_deterministic() -> None:
    g, *_ = build()
    again, *_ = build()
    assert g.to_json() == again.to_json()
    back = SemanticGraph.from_json(g.to_json())
    assert back == g
    assert back.to_json() == g.to_json()
    assert back.documents["d1"].metadata == {"year": 1998}


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d["relations"][0].update(subject_id="ent_nope"),
        lambda d: d["entities"][0].update(type="ALIEN"),
        lambda d: d["entities"].append(dict(d["entities"][0])),
        lambda d: d["entities"][0].update(name=5),
        lambda d: d["events"][0].update(participant_ids=["ent_nope"]),
        lambda d: d.pop("relations"),
        lambda d: d.update(format_version=99),
        lambda d: d["entities"][0].update(mentions=[["d1", "a", 3]]),
    ],
    ids=[
        "dangling",
        "type",
        "duplicate id",
        "name type",
        "event dangling",
        "missing key",
        "version",
        "mention type",
    ],
)
def test_from_dict_refuses_bad_data(mutate) -> None:  # type: ignore[no-untyped-def]
    g, *_ = build()
    data = g.to_dict()
    mutate(data)
    with pytest.raises(GraphError):
        SemanticGraph.from_dict(data)


def test_document_id_defaults_to_text_hash() -> None:
    assert noema.Document("same").id == noema.Document("same").id != noema.Document("other").id


def test_graphml_of_names_with_characters_xml_cannot_hold_is_valid_xml() -> None:
    import xml.etree.ElementTree as ET

    from noema.export import to_graphml

    g = SemanticGraph()
    a = g.add_entity("Null\x00Corp\x1b", "ORG")
    b = g.add_entity("Tab\tand \ufffe", "ORG")
    g.add_relation(a, "own", b)
    root = ET.fromstring(to_graphml(g))
    names = [
        d.text
        for d in root.iter("{http://graphml.graphdrawing.org/xmlns}data")
        if d.get("key") == "name"
    ]
    assert names == ["Null\ufffdCorp\ufffd", "Tab\tand \ufffd"]


def test_a_fact_repeated_in_order_is_not_resorted_each_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a spy that delegates: sorting every stored mention again on each repeat made a fact
    # repeated n times cost n^2 log n (8,000 identical sentences: 148 s)
    import noema.model.graph
    import noema.model.records

    calls = []
    union = noema.model.records.union_mentions

    def counted(*groups: object) -> object:
        calls.append(sum(len(g) for g in groups))  # type: ignore[arg-type]
        return union(*groups)  # type: ignore[arg-type]

    for module in (
        noema.model.graph,
        noema.model.records,
    ):  # new facts, and mentions added to stored ones
        monkeypatch.setattr(module, "union_mentions", counted)
    g = SemanticGraph()
    a, b = g.add_entity("Larry Page", "PERSON"), g.add_entity("Google", "ORG")
    for n in range(2000):
        rid = g.add_relation(a, "found", b, mentions=[Mention("d", 30 * n, 30 * n + 26)])
    assert len(g.relations[rid].mentions) == 2000
    assert list(g.relations[rid].mentions) == sorted(g.relations[rid].mentions)
    assert sum(calls) <= 1  # only the first add sorted anything
    g.add_relation(a, "found", b, mentions=[Mention("d", 5, 10)])  # out of order: still sorted
    assert list(g.relations[rid].mentions) == sorted(g.relations[rid].mentions)
    assert len(g.relations[rid].mentions) == 2001
