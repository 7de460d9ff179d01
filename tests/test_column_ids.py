"""The ids of graph.columns read in place: each kind's id order and the entity -> facts adjacency
a save writes, the lookups through them, and what opening, ``verify=True`` and ``noema validate``
check of them."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import noema
from noema import BundleError, KnowledgeBase
from noema.cli import main
from noema.model.graph import SemanticGraph
from noema.storage import _column_ids, _column_write, _opening
from noema.storage._column_write import _pack
from noema.storage.columns import _ADDED_IN_2, _arrays, columns_bytes, read_columns
from tests.test_bundle import _columns, rewrite
from tests.test_columns import QUESTIONS, _counts, _every_kind_of_record


def _graph() -> SemanticGraph:
    """Every kind of record, an entity with a relation to itself, and ids whose order is not
    the graph's."""
    graph = _every_kind_of_record()
    ada = next(iter(graph.entities))
    graph.add_relation(ada, "admires", ada)
    return graph


def _stored(blob: bytes) -> dict[str, np.ndarray]:
    return dict(_arrays(memoryview(blob))[0])


def test_a_save_stores_each_kind_in_id_order_and_the_facts_of_each_entity() -> None:
    graph = _graph()
    arrays = _stored(columns_bytes(graph))
    for kind, records in (
        ("document", graph.documents),
        ("entity", graph.entities),
        ("relation", graph.relations),
        ("event", graph.events),
    ):
        ids = list(records)
        assert arrays[f"{kind}_id_order"].tolist() == sorted(range(len(ids)), key=ids.__getitem__)
        assert arrays[f"{kind}_id_order"].dtype == np.dtype("<i4")
    fact_row = {f: n for n, f in enumerate([*graph.relations, *graph.events])}
    expected = [sorted(fact_row[f] for f in graph.facts_of(e)) for e in graph.entities]
    starts, facts = arrays["entity_fact_range"], arrays["entity_fact"]
    assert starts.tolist() == [0, *np.cumsum([len(f) for f in expected]).tolist()]
    assert facts.tolist() == [row for rows in expected for row in rows]
    ada = next(iter(graph.entities))
    assert len(graph.facts_of(ada)) == 3  # the relation to itself listed once


def test_opening_lists_no_id_and_sorts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """No list of every id, no dict of them, no argsort of the fact ends (at a million facts
    they took half of opening)."""
    graph = SemanticGraph()
    graph.add_document(noema.Document("Ada met Charles.", id="a"))
    ada = graph.add_entity("Ada", "PERSON", mentions=[noema.Mention("a", 0, 3)])
    charles = graph.add_entity("Charles", "PERSON", mentions=[noema.Mention("a", 8, 15)])
    for n in range(300):  # many facts, few distinct strings besides their ids
        graph.add_relation(ada, "met", charles, mentions=[noema.Mention("a", 0, n % 16)])
    blob = columns_bytes(graph)
    picked: list[int] = []
    real = _column_ids.Heap.picked

    def recorded(self: _column_ids.Heap, numbers: Any) -> list[str]:
        picked.append(len(numbers))
        return real(self, numbers)

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the fact ends were sorted on opening")

    monkeypatch.setattr(_column_ids.Heap, "picked", recorded)
    monkeypatch.setattr(np, "argsort", refused)
    read = read_columns(blob, _counts(graph), check_keys=False)
    monkeypatch.undo()
    assert max(picked, default=0) < 10  # the names and predicates, not the 300 ids
    assert read.graph.to_dict() == graph.to_dict()
    assert read.graph.facts_of(ada) == graph.facts_of(ada)


def test_the_ids_read_in_place_are_a_sequence_and_a_mapping() -> None:
    graph = _graph()
    read = read_columns(columns_bytes(graph), _counts(graph))
    ids, rows = read.facts
    expected = [*graph.relations, *graph.events]
    assert not isinstance(ids, list) and not isinstance(rows, dict)
    assert list(ids) == expected and len(ids) == len(expected)
    assert [ids[n] for n in range(-len(expected), len(expected))] == expected * 2
    assert ids[1:4] == expected[1:4] and ids[::-2] == expected[::-2]
    with pytest.raises(IndexError):
        ids[len(expected)]
    assert dict(rows) == {f: n for n, f in enumerate(expected)}
    assert expected[-1] in ids and "rel_nothing" not in ids and "rel_nothing" not in rows
    assert rows.get("rel_nothing", -1) == -1
    assert list(read.graph.relations) == list(graph.relations)
    assert list(read.graph.entities) == list(graph.entities)


def test_every_lookup_answers_alike_once_the_lookups_are_many(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A writer looks up every id: past a number of searches the ids are held in a dict."""
    monkeypatch.setattr(_column_ids, "SEARCHES_BEFORE_HOLDING", 3)
    graph = _graph()
    read = read_columns(columns_bytes(graph), _counts(graph)).graph
    for _ in range(2):
        for kind in ("documents", "entities", "relations", "events"):
            records = getattr(graph, kind)
            opened = getattr(read, kind)
            assert all(opened[key] == record for key, record in records.items())
            assert "nothing" not in opened


def _reordered(blob: bytes, kind: str, order: Callable[[np.ndarray], np.ndarray]) -> bytes:
    arrays, header = _arrays(memoryview(blob))
    copies = {name: array.copy() for name, array in arrays.items()}
    copies[f"{kind}_id_order"] = order(copies[f"{kind}_id_order"])
    return _pack(copies, {k: v for k, v in header.items() if k != "arrays"})


def test_a_damaged_order_never_gives_another_record() -> None:
    graph = _graph()
    blob = _reordered(columns_bytes(graph), "relation", lambda order: order[::-1].copy())
    read = read_columns(blob, _counts(graph), check_keys=False)
    found = 0
    for key, relation in graph.relations.items():
        if key in read.graph.relations:
            found += 1
            assert read.graph.relations[key] == relation
    assert found < len(graph.relations)  # some lookups missed: the order is damaged
    with pytest.raises(BundleError, match="relation ids are not in the order"):
        for check in read.deferred:
            check()
    with pytest.raises(BundleError, match="relation ids are not in the order"):
        read_columns(blob, _counts(graph))  # checked at once where the member was hashed


def test_a_lookup_that_meets_a_damaged_order_says_so() -> None:
    """Where the ids on either side of a missed id are out of order, the lookup names the damage
    rather than answering that the id is not there; it never answers another row."""
    ids = [f"id{n:03d}" for n in range(40)]
    offsets = np.concatenate([[0], np.cumsum([len(i) for i in ids])]).astype(np.int64)
    heap = _column_ids.Heap("".join(ids), offsets)
    numbers = np.arange(40, dtype=np.int32)
    sound = _column_ids.Ids(heap, numbers, np.arange(40, dtype=np.int32))
    assert [sound.row_of(i) for i in ids] == list(range(40)) and sound.row_of("id9") is None
    damaged = _column_ids.Ids(heap, numbers, np.arange(40, dtype=np.int32)[::-1].copy())
    refused = 0
    for row, key in enumerate(ids):
        try:
            assert damaged.row_of(key) in (row, None)
        except BundleError as exc:
            assert "id order does not sort its ids" in str(exc)
            refused += 1
    assert refused > 0


def test_a_kind_with_many_ids_keeps_few_of_them_for_its_first_lookup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The ids a search bisects first are bounded (slicing every sixteenth of millions made the
    first retrieval after opening four times a later one); every id is still found, and every
    id between two is still missed."""
    monkeypatch.setattr(_column_ids, "_FENCES", 10)
    ids = [f"id{n:04d}" for n in range(0, 2000, 2)]
    offsets = np.concatenate([[0], np.cumsum([len(i) for i in ids])]).astype(np.int64)
    heap = _column_ids.Heap("".join(ids), offsets)
    order = np.arange(len(ids), dtype=np.int32)
    rows = np.random.default_rng(7).permutation(len(ids)).astype(np.int32)
    kept: list[int] = []
    real = _column_ids.Heap.picked

    def recorded(self: _column_ids.Heap, numbers: Any) -> list[str]:
        kept.append(len(numbers))
        return real(self, numbers)

    monkeypatch.setattr(_column_ids.Heap, "picked", recorded)
    found = _column_ids.Ids(heap, rows, np.argsort(rows).astype(np.int32)[order])
    assert [found.row_of(ids[rows[n]]) for n in range(len(ids))] == list(range(len(ids)))
    assert kept == [10]  # 1,000 ids, ten kept: every hundredth
    assert all(found.row_of(f"id{n:04d}") is None for n in range(1, 2001, 2))
    assert found.row_of("id") is None and found.row_of("idz") is None


def _one_order(kind: str, bad: Callable[[np.ndarray], None]) -> Callable[[dict[str, bytes]], None]:
    def update(arrays: dict[str, np.ndarray], strings: list[str]) -> None:
        bad(arrays[f"{kind}_id_order"])

    return _columns(update)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda order: order.__setitem__(0, order[1]), "entity_id_order is not a permutation"),
        (lambda order: order.__setitem__(0, 10**6), "entity row in entity_id_order is out"),
        (lambda order: order.__setitem__(0, -1), "entity row in entity_id_order is out"),
    ],
    ids=["repeated row", "row past the end", "negative row"],
)
def test_an_order_that_is_not_a_permutation_is_refused_on_every_opening(
    saved_large: Path,
    tmp_path: Path,
    change: Callable[[np.ndarray], None],
    message: str,
) -> None:
    bad = rewrite(
        saved_large, tmp_path / "bad.noema", _one_order("entity", change), fix_manifest=True
    )
    with pytest.raises(BundleError, match=message):
        KnowledgeBase.load(bad)


def _adjacency(bad: Callable[[dict[str, np.ndarray]], None]) -> Callable[[dict[str, bytes]], None]:
    def update(arrays: dict[str, np.ndarray], strings: list[str]) -> None:
        bad(arrays)

    return _columns(update)


def _swap_two_facts(arrays: dict[str, np.ndarray]) -> None:
    starts, facts = arrays["entity_fact_range"], arrays["entity_fact"]
    n = int(np.flatnonzero(np.diff(starts) >= 2)[0])
    a = int(starts[n])
    facts[a], facts[a + 1] = facts[a + 1], facts[a]


def _a_fact_of_another_entity(arrays: dict[str, np.ndarray]) -> None:
    starts, facts = arrays["entity_fact_range"], arrays["entity_fact"]
    subject, obj = arrays["relation_subject"], arrays["relation_object"]
    for n in np.flatnonzero(np.diff(starts) >= 1).tolist():
        for fact in range(len(subject)):
            if n not in (subject[fact], obj[fact]):
                facts[starts[n]] = fact
                return
    raise AssertionError("every relation touches every entity")


def _one_fact_dropped(arrays: dict[str, np.ndarray]) -> None:
    arrays["entity_fact"] = arrays["entity_fact"][:-1].copy()
    arrays["entity_fact_range"][-1] -= 1


def _an_event_participant_moved(arrays: dict[str, np.ndarray]) -> None:
    """An event's fact row listed under an entity that is not its participant, the count kept."""
    starts, facts = arrays["entity_fact_range"], arrays["entity_fact"]
    events = np.flatnonzero(facts >= len(arrays["relation_id"]))
    at = int(events[-1])
    entity = int(np.searchsorted(starts, at, side="right") - 1)
    other = (entity + 1) % (len(starts) - 1)
    moved = np.delete(facts, at)
    where = int(starts[other + 1]) - (1 if other > entity else 0)
    arrays["entity_fact"] = np.insert(moved, where, facts[at]).astype("<i4")
    sizes = np.diff(starts)
    sizes[entity] -= 1
    sizes[other] += 1
    arrays["entity_fact_range"] = np.concatenate([[0], np.cumsum(sizes)]).astype("<i8")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: a["entity_fact_range"].__setitem__(1, 10**6), "entity_fact_range goes"),
        (lambda a: a["entity_fact_range"].__setitem__(-1, 0), "does not cover entity_fact"),
        (lambda a: a["entity_fact"].__setitem__(0, 10**6), "fact row of an entity is out"),
        (_swap_two_facts, "facts of an entity are not in fact order"),
        (_a_fact_of_another_entity, "not facts of that entity"),
        (_an_event_participant_moved, "not facts of that entity"),
        (_one_fact_dropped, r"entity_fact lists \d+ facts of entities"),
    ],
    ids=[
        "range backwards",
        "range short",
        "fact past the end",
        "facts out of order",
        "fact of another entity",
        "event of another entity",
        "fact dropped",
    ],
)
def test_an_adjacency_other_than_the_graphs_is_refused_on_every_opening(
    saved_large: Path,
    tmp_path: Path,
    change: Callable[[dict[str, np.ndarray]], None],
    message: str,
) -> None:
    bad = rewrite(saved_large, tmp_path / "bad.noema", _adjacency(change), fix_manifest=True)
    with pytest.raises(BundleError, match=message):
        KnowledgeBase.load(bad)


@pytest.fixture(scope="module")
def saved_large(
    tmp_path_factory: pytest.TempPathFactory, embedder: noema.SentenceTransformerEmbedder
) -> Path:
    """A bundle with events, opened below with every member counted as large (its sha256, and
    what is checked with it, waits for verify=True)."""
    kb = KnowledgeBase(embedder=embedder)
    kb.ingest(
        [
            "Google acquired YouTube in 2006. Larry Page founded Google.",
            "In 1833, Ada Lovelace met Charles Babbage in London.",
            "Sundar Pichai leads Google. Google is based in Mountain View.",
        ]
    )
    assert kb.graph.events and kb.graph.relations
    path = tmp_path_factory.mktemp("ids") / "kb.noema"
    kb.save(path)
    return path


def _shared_entity_id(arrays: dict[str, np.ndarray], strings: list[str]) -> None:
    arrays["entity_id"][1] = arrays["entity_id"][0]


def _shared_fact_id(arrays: dict[str, np.ndarray], strings: list[str]) -> None:
    """The first event's id made the first relation's, the events kept in id order."""
    ids = arrays["event_id"]
    ids[0] = arrays["relation_id"][0]
    arrays["event_id_order"][:] = sorted(range(len(ids)), key=lambda n: strings[ids[n]])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_shared_entity_id, "two entity records share an id"),
        (_shared_fact_id, "a relation and an event share an id"),
    ],
    ids=["two entities", "a relation and an event"],
)
def test_records_sharing_an_id_are_refused_by_verify_validate_and_a_save(
    saved_large: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[dict[str, np.ndarray], list[str]], None],
    message: str,
) -> None:
    bad = rewrite(saved_large, tmp_path / "bad.noema", _columns(change), fix_manifest=True)
    with pytest.raises(BundleError, match=message):
        KnowledgeBase.load(bad)  # a small member is hashed, and all of it checked, on opening
    monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", 0)
    opened = KnowledgeBase.load(bad)  # a large one: reading every id waits for its sha256
    with pytest.raises(BundleError, match=message):
        KnowledgeBase.load(bad, verify=True)
    assert main(["validate", str(bad)]) == 1
    assert re.search(f"^Error: .*{message}", capsys.readouterr().err, re.M)
    with pytest.raises(BundleError, match=f"{message}.*nothing was written"):
        opened.save(tmp_path / "new.noema")
    assert not (tmp_path / "new.noema").exists()


def _version_1_dtypes() -> dict[str, str]:
    return {k: v for k, v in _column_write.DTYPES.items() if k not in _ADDED_IN_2}


def _version_1(graph: SemanticGraph, monkeypatch: pytest.MonkeyPatch) -> Callable[[], bytes]:
    """What writes graph.columns as version 1 did: without the id orders and the adjacency."""

    def written(*args: Any) -> bytes:
        with monkeypatch.context() as patched:
            patched.setattr(_column_write, "COLUMNS_VERSION", 1)
            patched.setattr(_column_write, "DTYPES", _version_1_dtypes())
            return columns_bytes(*args)

    return lambda: written(graph)


def test_a_version_1_member_is_read_with_its_order_and_adjacency_worked_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph = _graph()
    old = _version_1(graph, monkeypatch)()
    assert old[8:12] == (1).to_bytes(4, "little") and "entity_fact" not in old[:4000].decode(
        "latin-1"
    )
    read, now = (
        read_columns(old, _counts(graph)),
        read_columns(columns_bytes(graph), _counts(graph)),
    )
    assert read.graph.to_dict() == now.graph.to_dict() == graph.to_dict()
    assert all(read.graph.facts_of(e) == now.graph.facts_of(e) for e in graph.entities)
    assert list(read.facts[0]) == list(now.facts[0])
    assert all(key in read.graph.relations for key in graph.relations)
    assert columns_bytes(read.graph) == columns_bytes(graph)  # saved again as version 2


def test_a_version_1_member_sharing_an_id_is_refused_on_opening(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph = _graph()
    arrays, header = _arrays(memoryview(_version_1(graph, monkeypatch)()))
    assert not set(_ADDED_IN_2) & set(arrays)
    copies = {name: array.copy() for name, array in arrays.items()}
    copies["entity_id"][1] = copies["entity_id"][0]
    with monkeypatch.context() as patched:
        patched.setattr(_column_write, "COLUMNS_VERSION", 1)
        patched.setattr(_column_write, "DTYPES", _version_1_dtypes())
        bad = _pack(copies, {k: v for k, v in header.items() if k != "arrays"})
    with pytest.raises(BundleError, match="two entity records share an id"):
        read_columns(bad, _counts(graph), check_keys=False)


def test_a_bundle_with_a_version_1_member_retrieves_as_one_saved_now(
    company_kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patched:
        patched.setattr(_column_write, "COLUMNS_VERSION", 1)
        patched.setattr(_column_write, "DTYPES", _version_1_dtypes())
        saved_old = company_kb.save(tmp_path / "old.noema")
    opened_old = KnowledgeBase.load(saved_old, verify=True)
    opened_new = KnowledgeBase.load(company_kb.save(tmp_path / "new.noema"))
    assert opened_old.graph == opened_new.graph == company_kb.graph
    for question in QUESTIONS:
        for fmt in ("notation", "natural_language", "sentences"):
            assert opened_old.retrieve(question, format=fmt) == opened_new.retrieve(
                question, format=fmt
            )
    again = opened_old.save(tmp_path / "again.noema")
    assert again.read_bytes() == (tmp_path / "new.noema").read_bytes()
