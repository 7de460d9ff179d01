"""Record stores: a graph read in place from a bundle's columns behaves as the graph it was
saved from, through every change, and makes a record only when one is read."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

import noema
from noema import KnowledgeBase
from noema.model.graph import SemanticGraph
from noema.model.spans import Sentence
from noema.model.stores import RecordStore
from noema.storage.columns import columns_bytes, read_columns
from tests.test_columns import _counts, _every_kind_of_record


class _Rows:
    """Three rows, counting the records it makes (a base a test can watch)."""

    def __init__(self) -> None:
        self.ids = ["a", "b", "c"]
        self.made: list[int] = []

    def __len__(self) -> int:
        return len(self.ids)

    def id_at(self, row: int) -> str:
        return self.ids[row]

    def all_ids(self) -> list[str]:
        return self.ids

    def row_of(self, record_id: str) -> int | None:
        return self.ids.index(record_id) if record_id in self.ids else None

    def record(self, row: int) -> str:
        self.made.append(row)
        return self.ids[row].upper()


def test_a_store_over_rows_changes_as_a_dict_does() -> None:
    rows = _Rows()
    store: RecordStore[str] = RecordStore(rows)
    plain = {"a": "A", "b": "B", "c": "C"}
    steps = [
        ("set", "b", "B2"),  # replaced: keeps its place
        ("del", "a", None),
        ("set", "d", "D"),
        ("set", "a", "A2"),  # removed and added again: goes last
        ("del", "d", None),
        ("set", "c", "C2"),
    ]
    for op, key, value in steps:
        for mapping in (store, plain):
            if op == "set":
                mapping[key] = value
            else:
                del mapping[key]
        assert list(store.items()) == list(plain.items())
        assert len(store) == len(plain) and list(store) == list(plain)
    assert store.popitem() == plain.popitem() == ("a", "A2")  # added again: last
    assert store.popitem() == plain.popitem() == ("c", "C2")  # then the base's last
    assert store.popitem() == plain.popitem() == ("b", "B2")
    with pytest.raises(KeyError):
        store.popitem()
    store["a"], plain["a"] = "A3", "A3"
    assert list(store.items()) == list(plain.items())
    assert "d" not in store and store.get("d") is None
    with pytest.raises(KeyError):
        del store["d"]
    copy = store.copy()
    copy["e"] = "E"
    assert "e" not in store and copy["e"] == "E"


def test_a_store_makes_a_record_only_when_it_is_read() -> None:
    rows = _Rows()
    store: RecordStore[str] = RecordStore(rows)
    assert list(store) == ["a", "b", "c"] and "b" in store and len(store) == 3
    assert rows.made == []
    assert store["b"] == "B"
    assert rows.made == [1]
    assert list(store.values()) == ["A", "B", "C"]  # each row read in order, not looked up
    assert rows.made == [1, 0, 1, 2]


def _changed(graph: SemanticGraph) -> None:
    """Every kind of change a writer makes, in an order that moves records around."""
    ids = {e.name: e.id for e in graph.entities.values()}
    graph.update_entity(ids["London"], aliases=["Londinium"], confidence=0.5)
    graph.merge_entities(ids["Ada Lovelace"], ids["Charles Babbage"])
    graph.add_document(noema.Document("Paris is in France.", id="c"))
    paris = graph.add_entity("Paris", "GPE", mentions=[noema.Mention("c", 0, 5)])
    france = graph.add_entity("France", "GPE", mentions=[noema.Mention("c", 15, 21)])
    graph.add_relation(paris, "located_in", france, mentions=[noema.Mention("c", 0, 20)])
    graph.add_relation(ids["Ada Lovelace"], "visited", paris)
    graph.remove_entity(ids["Héloïse"])
    graph.split_entity(ids["Ada Lovelace"], "Charles Babbage", document_ids=["a"])
    graph.remove_document_support(["b"])


def test_a_graph_read_in_place_changes_as_the_graph_it_was_saved_from() -> None:
    graph = _every_kind_of_record()
    read = read_columns(columns_bytes(graph), _counts(graph)).graph
    assert read.to_dict() == graph.to_dict()
    copy = read.copy()
    _changed(graph)
    _changed(copy)
    assert copy.to_dict() == graph.to_dict()
    for entity_id in graph.entities:
        assert copy.facts_of(entity_id) == graph.facts_of(entity_id)
    # the graph read is unchanged: a copy shares its rows, never writes them
    assert read.to_dict() == read_columns(columns_bytes(read), _counts(read)).graph.to_dict()
    assert len(read.entities) == 5
    # a graph read in place pickles as one held in memory does (its recent records are not kept)
    assert pickle.loads(pickle.dumps(copy)).to_dict() == graph.to_dict()


def test_opening_a_bundle_makes_no_record_until_one_is_read(
    company_kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from noema.storage import _column_records, _opening

    # as a large bundle opens: a small one's sidecar keys are hashed on opening, which reads
    # the documents' texts
    monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", 0)
    made: list[str] = []
    for kind in ("_Documents", "_Entities", "_Relations", "_Events"):
        table = getattr(_column_records, kind)
        original = table.make

        def counted(self: object, row: int, _kind: str = kind, _made: object = original) -> object:
            made.append(_kind)
            return _made(self, row)  # type: ignore[operator]

        monkeypatch.setattr(table, "make", counted)
    saved = company_kb.save(tmp_path / "kb.noema")
    kb = KnowledgeBase.load(saved)
    assert made == []
    some = list(kb.graph.entities)[3]  # the ids are listed without making a record
    assert kb.graph.entities[some] == company_kb.graph.entities[some]
    assert made == ["_Entities"]
    question = "Who founded the company that acquired YouTube?"
    assert kb.retrieve(question) == company_kb.retrieve(question)


def test_a_write_after_opening_works_out_only_what_it_changed(
    company_kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records read in place are made anew at each read, so a write cannot tell a kept record
    by its being the same object: it asks the graph which ids either copy changed. The result
    is the write into the same base read from graph.json (records held in memory)."""
    import noema.vectors.sentences
    from noema.storage import _column_records
    from tests.test_bundle import _without_columns, rewrite

    # every read makes a new record (no recent documents kept), as in a large base
    monkeypatch.setattr(_column_records, "_RECENT_DOCUMENTS", 0)
    monkeypatch.setattr(_column_records, "_RECENT_RECORDS", 0)
    saved = company_kb.save(tmp_path / "kb.noema")
    plain = rewrite(saved, tmp_path / "plain.noema", _without_columns, fix_manifest=True)
    in_place, in_memory = KnowledgeBase.load(saved), KnowledgeBase.load(plain)
    before = in_place.graph
    hashed: list[str] = []
    original = noema.vectors.sentences.sentence_key

    def counted(graph: SemanticGraph, sentence: noema.vectors.sentences.Sentence) -> str:
        hashed.append(sentence.document_id)
        return original(graph, sentence)

    monkeypatch.setattr(noema.vectors.sentences, "sentence_key", counted)
    new = noema.Document("Ada Lovelace founded Analytical Works in London.", id="new")
    in_place.ingest([new])
    assert hashed and set(hashed) == {"new"}
    _, added = noema.vectors.sentences._changed_facts(in_place.graph, before)
    assert added and {m.document_id for fact in added for m in fact.mentions} == {"new"}
    in_memory.ingest([new])
    assert in_place.graph == in_memory.graph
    ours, theirs = in_place._store.snapshot.sentences, in_memory._store.snapshot.sentences
    assert ours is not None and theirs is not None
    assert list(ours.facts.items()) == list(theirs.facts.items())
    assert dict(ours.keys) == dict(theirs.keys)


def test_opening_reads_the_sentence_sidecar_in_place(
    company_kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No sentence, key or topic is made on opening: the sidecar's mappings look each up in the
    bundle's arrays when a retrieval asks, and give what the sidecar held in memory gave."""
    from noema.storage import _column_sentences, _opening

    monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", 0)  # as a large bundle opens
    made: list[int] = []
    original = _column_sentences._Rows.sentence

    def counted(self: object, row: int) -> object:
        made.append(row)
        return original(self, row)  # type: ignore[arg-type]

    monkeypatch.setattr(_column_sentences._Rows, "sentence", counted)
    kb = KnowledgeBase.load(company_kb.save(tmp_path / "kb.noema"))
    assert made == []
    ours, theirs = kb._store.snapshot.sentences, company_kb._store.snapshot.sentences
    assert ours is not None and theirs is not None
    assert list(ours.facts.items()) == list(theirs.facts.items())
    assert dict(ours.keys) == dict(theirs.keys)
    assert list(ours.topics.items()) == list(theirs.topics.items())
    assert list(ours.by_document.items()) == list(theirs.by_document.items())
    assert ours.vectors.ids == theirs.vectors.ids
    for sentence, key in theirs.keys.items():
        assert sentence in ours.facts and ours.keys[sentence] == key
        assert ours.search(theirs.vectors.vector(key), 1)[0][0] == sentence
    missing = Sentence("no such document", 0, 5)
    assert missing not in ours.facts and ours.facts.get(missing) is None
