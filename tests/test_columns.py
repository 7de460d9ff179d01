"""graph.columns: the graph read from arrays instead of parsing graph.json."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

import noema
from noema import BundleError, KnowledgeBase
from noema.model.graph import SemanticGraph
from noema.model.records import LINE_BREAKS, Document, record_to_dict
from noema.storage._column_records import _may_be_blank_or_broken
from noema.storage.columns import columns_bytes, read_columns
from tests.conftest import record_normalized_names
from tests.test_bundle import _without_columns, rewrite

QUESTIONS = [
    "Who founded the company that acquired YouTube?",
    "Where is Nvidia headquartered?",
    "When did Google acquire YouTube?",
]


def _counts(graph: SemanticGraph) -> dict[str, int]:
    facts = len(graph.relations) + len(graph.events)
    return {
        "entities": len(graph.entities),
        "relations": len(graph.relations),
        "events": len(graph.events),
        "documents": len(graph.documents),
        "facts": facts,
    }


def _every_kind_of_record() -> SemanticGraph:
    g = SemanticGraph()
    g.add_document(Document("Ada Lovelace met Charles Babbage in London in 1833.", id="a"))
    g.add_document(
        Document(
            "Héloïse wrote to Abélard. \U0001f600 Then nothing.",
            id="b",
            metadata={"title": "Letters", "tags": ["x", {"deep": [1, 2.5, None, True]}]},
        )
    )
    ada = g.add_entity(
        "Ada Lovelace",
        "PERSON",
        aliases=("Augusta Ada King", "Lady Lovelace"),
        mentions=[noema.Mention("a", 0, 12)],
        confidence=0.75,
    )
    charles = g.add_entity("Charles Babbage", "PERSON", mentions=[noema.Mention("a", 17, 32)])
    london = g.add_entity("London", "GPE", mentions=[noema.Mention("a", 36, 42)])
    heloise = g.add_entity("Héloïse", "PERSON", mentions=[noema.Mention("b", 0, 7)])
    abelard = g.add_entity("Abélard", "PERSON", mentions=[noema.Mention("b", 17, 24)])
    g.add_relation(heloise, "wrote_to", abelard, mentions=[noema.Mention("b", 0, 25)])
    g.add_relation(ada, "met", charles, mentions=[noema.Mention("a", 0, 51)], confidence=0.5)
    g.add_event(
        "meeting", [ada, charles, london], time="1833", mentions=[noema.Mention("a", 0, 51)]
    )
    g.add_event("correspondence", [heloise, abelard])
    return g


def test_the_columns_hold_every_record_field_and_the_merge_log() -> None:
    graph = _every_kind_of_record()
    log = [{"entity_id": "ent_x", "rule": "exact", "similarity": None, "document_ids": ["a"]}]
    blob = columns_bytes(graph, log)
    read = read_columns(blob, _counts(graph))
    assert read.graph.to_dict() == graph.to_dict()  # every field, in graph order
    assert read.merge_log == log
    assert all(read.graph.facts_of(e) == graph.facts_of(e) for e in graph.entities)
    assert read.sentences is None  # written without a sidecar
    assert columns_bytes(read.graph, read.merge_log) == blob  # the same graph, the same bytes


def test_the_columnar_and_the_graph_json_paths_give_identical_results(
    company_kb: KnowledgeBase, tmp_path: Path
) -> None:
    """Retrieval identical (text, ids, scores) between the columnar path
    and the graph.json path, and before and after a save/open round trip."""
    saved = company_kb.save(tmp_path / "kb.noema")
    plain = rewrite(saved, tmp_path / "plain.noema", _without_columns, fix_manifest=True)
    columnar, from_json = KnowledgeBase.load(saved), KnowledgeBase.load(plain)
    assert columnar.graph == from_json.graph == company_kb.graph
    assert columnar.merge_log == from_json.merge_log == company_kb.merge_log
    ours, theirs = columnar._store.snapshot.sentences, from_json._store.snapshot.sentences
    assert ours is not None and theirs is not None
    assert list(ours.facts.items()) == list(theirs.facts.items())
    assert dict(ours.keys) == dict(theirs.keys) and list(ours.topics.items()) == list(
        theirs.topics.items()
    )
    for question in QUESTIONS:
        for fmt in ("notation", "natural_language", "sentences"):
            results = [
                kb.retrieve(question, format=fmt) for kb in (company_kb, columnar, from_json)
            ]
            assert results[0] == results[1] == results[2]
            scores = [[(m.relation_id, m.similarity) for m in r.fact_matches] for r in results]
            assert scores[0] == scores[1] == scores[2] and scores[0]


def test_opening_a_columnar_bundle_parses_and_lists_nothing_again(
    company_kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """graph.json is not parsed, and the sidecar's sentences, keys and topics are read, not
    worked out from the graph (at a million facts those two took 31 s of opening)."""
    import noema.vectors.sentences

    saved = company_kb.save(tmp_path / "kb.noema")

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("worked out again on opening")

    monkeypatch.setattr(SemanticGraph, "from_dict", refused)
    for name in ("_source_sentences", "sentence_key", "document_topics_and_forms"):
        monkeypatch.setattr(noema.vectors.sentences, name, refused)
    kb = KnowledgeBase.load(saved)
    assert kb.retrieve(QUESTIONS[0]) == company_kb.retrieve(QUESTIONS[0])


def test_a_compressed_columns_member_is_refused(company_kb: KnowledgeBase, tmp_path: Path) -> None:
    saved = company_kb.save(tmp_path / "kb.noema")
    bad = tmp_path / "deflated.noema"
    with zipfile.ZipFile(saved) as src, zipfile.ZipFile(bad, "w") as out:
        for info in src.infolist():
            kind = zipfile.ZIP_DEFLATED if info.filename == "graph.columns" else info.compress_type
            out.writestr(info.filename, src.read(info.filename), compress_type=kind)
    with pytest.raises(BundleError, match="graph.columns is compressed"):
        KnowledgeBase.load(bad)


def test_a_sidecar_stored_by_another_topic_rule_is_worked_out_again(
    company_kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import noema.storage._column_write
    import noema.vectors.sentences

    monkeypatch.setattr(noema.storage._column_write, "TOPIC_RULE", "an older rule")
    saved = company_kb.save(tmp_path / "kb.noema")
    monkeypatch.undo()

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("topics of another rule were used")

    monkeypatch.setattr(noema.vectors.sentences.SentenceIndex, "from_stored", refused)
    loaded = KnowledgeBase.load(saved)
    sidecar = loaded._store.snapshot.sentences
    expected = company_kb._store.snapshot.sentences
    assert sidecar is not None and expected is not None
    assert list(sidecar.topics.items()) == list(expected.topics.items())
    assert loaded.retrieve(QUESTIONS[0]) == company_kb.retrieve(QUESTIONS[0])


def test_merge_records_are_read_back_from_the_columns(
    tmp_path: Path, embedder: noema.SentenceTransformerEmbedder
) -> None:
    kb = KnowledgeBase(embedder=embedder)
    kb.ingest(["Google Inc. is based in Mountain View.", "Google acquired YouTube in 2006."])
    assert kb.merge_log  # "Google Inc." and "Google" are one entity
    loaded = KnowledgeBase.load(kb.save(tmp_path / "kb.noema"))
    assert loaded.merge_log == kb.merge_log
    assert [record_to_dict(r) for r in loaded.merge_log] == [
        record_to_dict(r) for r in kb.merge_log
    ]


def test_the_first_write_after_opening_works_out_only_new_compared_forms(
    embedder: noema.SentenceTransformerEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compared forms of names and titles are stored with the topics: the first write after
    opening worked out every stored one again (2.8 s at a million facts)."""

    kb = KnowledgeBase(embedder=embedder)
    kb.ingest([noema.Document("Larry Page founded Google.", id="a", metadata={"title": "Google"})])
    opened = KnowledgeBase.load(kb.save(tmp_path / "kb.noema"), embedder=embedder)
    asked = record_normalized_names(monkeypatch)
    opened.ingest([noema.Document("Lisa Su leads AMD.", id="c", metadata={"title": "AMD"})])
    assert sorted(asked) == ["AMD", "AMD", "Lisa Su"]  # the new names and the new title only
    index, fresh = opened._snapshot.sentences, kb._snapshot.sentences
    assert index is not None and fresh is not None
    names = {opened.graph.entities[e].name: d for e, d in index.topics.items()}
    assert names == {"Google": ("a",), "AMD": ("c",)}


@pytest.mark.parametrize(
    ("texts", "suspect"),
    [
        (["Ada Lovelace", "Bank of England", "ü"], False),
        (["Ada"], False),
        (["Ada", ""], True),
        (["   ", "Ada"], True),
        (["Ada", "\u2003\t"], True),
        *((["Ada", f"Bank{mark}of England"], True) for mark in sorted(LINE_BREAKS)),
        (["Ada\x00 ", "Bob"], True),  # a NUL inside a name: looked at alone (and found fine)
    ],
    ids=lambda value: repr(value)[:40] if isinstance(value, list) else str(value),
)
def test_blank_or_broken_names_are_never_passed_over(texts: list[str], suspect: bool) -> None:
    assert _may_be_blank_or_broken(texts) is suspect
    exact = any(not t.strip() or not LINE_BREAKS.isdisjoint(t) for t in texts)
    assert not exact or suspect  # never False where one string alone fails
