"""Repairing entities: ``retype``, ``merge_entities`` across types only when the type is named,
and ``split_entity`` undoing a merge; each recorded in the merge log, kept by a bundle, and
published whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CountingEmbedder, NamedAndTyped, typed, types_of

import noema
from noema import KnowledgeBase


def facts(kb: KnowledgeBase) -> set[tuple[str, str, str, str]]:
    g = kb.graph
    return {
        (
            g.entities[r.subject_id].name,
            g.entities[r.subject_id].type,
            r.predicate,
            g.entities[r.object_id].name,
        )
        for r in g.relations.values()
    }


# -- retype ------------------------------------------------------------------------------------
def test_a_retype_shows_at_once_everywhere_and_embeds_nothing(
    make_kb: Callable[..., KnowledgeBase], embedder: noema.SentenceTransformerEmbedder
) -> None:
    counting = CountingEmbedder(embedder)
    kb = make_kb(embedder=counting)
    kb.ingest(["Jensen Huang founded Nvidia in 1993. Nvidia acquired Mellanox in 2020."])
    (nvidia,) = [e for e in kb.graph.entities.values() if e.name == "Nvidia"]
    assert nvidia.type != "PRODUCT"
    founders = {"entity_types": ["PERSON", "PRODUCT"]}
    assert "found" not in kb.retrieve("Who founded Nvidia?", filters=founders).text
    before = kb.state
    counting.calls.clear()

    retyped = kb.retype(nvidia.id, "PRODUCT")

    assert retyped.type == kb.graph.entities[nvidia.id].type == "PRODUCT"
    assert retyped.id == nvidia.id and retyped.mentions == nvidia.mentions
    # published whole: the snapshot a reader took before still holds the old type
    assert before.graph.entities[nvidia.id].type == nvidia.type
    # a fact's text holds names, not types: no vector is made again, none goes stale
    assert counting.calls == []
    assert kb.state.index is not None and before.index is not None
    assert kb.state.index.ids == before.index.ids
    assert "Nvidia :PRODUCT" in kb.render_facts(kb.graph.facts_of(nvidia.id))
    assert "*found (" in kb.retrieve("Who founded Nvidia?", filters=founders).text
    (record,) = [r for r in kb.merge_log if r.rule == "retype"]
    assert (record.entity_id, record.merged_name, record.type) == (nvidia.id, "Nvidia", nvidia.type)


def test_retyping_back_undoes_a_retype_and_the_log_keeps_one_record(
    harrow: KnowledgeBase,
) -> None:
    person = types_of(harrow, "Harrow Avionics")["PERSON"]
    log = harrow.merge_log
    harrow.retype(person, "GPE")
    harrow.retype(person, "ORG")
    retypes = [r for r in harrow.merge_log if r.rule == "retype"]
    assert [(r.entity_id, r.type) for r in retypes] == [(person, "PERSON")]  # the first type
    harrow.retype(person, "PERSON")
    assert harrow.merge_log == log and harrow.graph.entities[person].type == "PERSON"
    state = harrow.state
    assert harrow.retype(person, "PERSON").type == "PERSON"
    assert harrow.state is state  # the same type: nothing written


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda kb, e: kb.retype(e, "COMPANY"), noema.OptionError, "type= one of PERSON, ORG"),
        (lambda kb, e: kb.retype("ent_missing", "ORG"), noema.UnknownIdError, "ent_missing"),
        (
            lambda kb, e: kb.merge_entities(e, "ent_missing", type="ORG"),
            noema.UnknownIdError,
            "ent_missing",
        ),
        (lambda kb, e: kb.merge_entities(e, e), noema.OptionError, "into itself"),
        (
            lambda kb, e: kb.merge_entities(e, e, type="PLANET"),
            noema.OptionError,
            "got 'PLANET'",
        ),
    ],
    ids=["unknown type", "unknown entity", "unknown other", "itself", "merge to unknown type"],
)
def test_a_refused_repair_says_why_and_changes_nothing(
    harrow: KnowledgeBase, call: Callable[..., object], error: type[Exception], message: str
) -> None:
    state = harrow.state
    with pytest.raises(error, match=message):
        call(harrow, types_of(harrow, "Harrow Avionics")["ORG"])
    assert harrow.state is state


def test_later_documents_join_a_retyped_entity_by_its_new_type(harrow: KnowledgeBase) -> None:
    person = types_of(harrow, "Harrow Avionics")["PERSON"]
    harrow.retype(person, "PRODUCT")
    harrow.ingest([typed("later", "Harrow Avionics", "PRODUCT", "Pau")])
    assert types_of(harrow, "Harrow Avionics")["PRODUCT"] == person
    assert {m.document_id for m in harrow.graph.entities[person].mentions} == {"p", "later"}
    # one the recognizer types the old way is not joined to it unasked
    harrow.ingest([typed("again", "Harrow Avionics", "PERSON", "Pau")])
    assert set(types_of(harrow, "Harrow Avionics")) == {"ORG", "PRODUCT", "PERSON"}


def test_split_entity_points_a_retype_to_its_own_undo(harrow: KnowledgeBase) -> None:
    person = types_of(harrow, "Harrow Avionics")["PERSON"]
    harrow.retype(person, "ORG")
    with pytest.raises(ValueError, match=r"retype\('ent_\w+', 'PERSON'\) undoes"):
        harrow.split_entity(person, "Harrow Avionics")


# -- merges across types -----------------------------------------------------------------------
def test_a_merge_across_types_is_refused_unless_the_type_is_named(harrow: KnowledgeBase) -> None:
    ids = types_of(harrow, "Harrow Avionics")
    state = harrow.state
    with pytest.raises(noema.OptionError, match=r"type='ORG'"):
        harrow.merge_entities(ids["ORG"], ids["PERSON"])
    assert harrow.state is state

    merged = harrow.merge_entities(ids["ORG"], ids["PERSON"], type="ORG")

    assert types_of(harrow, "Harrow Avionics") == {"ORG": ids["ORG"]}
    assert {m.document_id for m in merged.mentions} == {"o1", "o2", "p"}
    assert ("Harrow Avionics", "ORG", "work_in", "Lleida") in facts(harrow)
    record = harrow.merge_log[-1]
    assert (record.rule, record.entity_id, record.merged_name, record.type) == (
        "user",
        ids["ORG"],
        "Harrow Avionics",
        "PERSON",
    )
    assert record.document_ids == ("p",)


def test_split_entity_undoes_a_merge_across_types(harrow: KnowledgeBase) -> None:
    ids = types_of(harrow, "Harrow Avionics")
    before, log = facts(harrow), harrow.merge_log
    harrow.merge_entities(ids["ORG"], ids["PERSON"], type="ORG")
    split = harrow.split_entity(ids["ORG"], "Harrow Avionics")
    assert harrow.graph.entities[split].type == "PERSON"
    assert {m.document_id for m in harrow.graph.entities[split].mentions} == {"p"}
    assert facts(harrow) == before and harrow.merge_log == log


def test_a_merge_into_another_type_retypes_the_kept_entity_too(harrow: KnowledgeBase) -> None:
    ids = types_of(harrow, "Harrow Avionics")
    merged = harrow.merge_entities(ids["PERSON"], ids["ORG"], type="ORG")
    assert merged.id == ids["PERSON"] and merged.type == "ORG"
    assert [(r.rule, r.type) for r in harrow.merge_log[-2:]] == [
        ("user", "ORG"),
        ("retype", "PERSON"),
    ]
    split = harrow.split_entity(merged.id, "Harrow Avionics")
    assert harrow.graph.entities[split].type == "ORG"
    assert harrow.retype(merged.id, "PERSON").type == "PERSON"
    assert all(r.rule not in ("user", "retype") for r in harrow.merge_log)


def test_the_merges_into_a_merged_entity_can_still_be_split_off(
    embedder: noema.SentenceTransformerEmbedder,
) -> None:
    kb = KnowledgeBase(embedder=embedder, extractor=NamedAndTyped())
    kb.ingest(
        [
            typed("o", "Harrow Avionics", "ORG"),
            typed("p1", "Harrow Avionics", "PERSON", "Lleida"),
            typed("p2", "Harrow Avionics Ltd", "PERSON", "Pau"),
        ]
    )
    ids = types_of(kb, "Harrow Avionics")
    assert [r.merged_name for r in kb.merge_log if r.entity_id == ids["PERSON"]] == [
        "Harrow Avionics Ltd"
    ]
    kb.merge_entities(ids["ORG"], ids["PERSON"], type="ORG")
    moved = [r for r in kb.merge_log if r.merged_name == "Harrow Avionics Ltd"]
    assert [(r.entity_id, r.rule) for r in moved] == [(ids["ORG"], "exact")]
    split = kb.split_entity(ids["ORG"], "Harrow Avionics Ltd")
    assert {m.document_id for m in kb.graph.entities[split].mentions} == {"p2"}


# -- in a bundle ---------------------------------------------------------------------------------
def test_repairs_survive_a_save_and_load_and_are_undone_after_it(
    harrow: KnowledgeBase, tmp_path: Path
) -> None:
    ids = types_of(harrow, "Harrow Avionics")
    before, log = facts(harrow), harrow.merge_log
    harrow.merge_entities(ids["ORG"], ids["PERSON"], type="ORG")
    (tarbes,) = [e.id for e in harrow.graph.entities.values() if e.name == "Tarbes"]
    harrow.retype(tarbes, "LOC")
    harrow.save(tmp_path / "kb.noema")

    loaded = KnowledgeBase.load(
        tmp_path / "kb.noema", embedder=harrow.embedder, extractor=harrow.extractor
    )
    assert loaded.graph.entities[tarbes].type == "LOC"
    assert loaded.merge_log == harrow.merge_log
    assert [r.rule for r in loaded.merge_log[-2:]] == ["user", "retype"]

    loaded.split_entity(ids["ORG"], "Harrow Avionics")
    loaded.retype(tarbes, "GPE")
    assert facts(loaded) == before and loaded.merge_log == log
    assert set(types_of(loaded, "Harrow Avionics")) == {"ORG", "PERSON"}
