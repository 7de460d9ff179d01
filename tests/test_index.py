from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

import noema
from noema import KnowledgeBase
from noema.vectors.index import VectorIndex


def _clustered(n: int, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, 32)).astype(np.float32)
    points = centres[rng.integers(0, 40, n)] + 0.5 * rng.standard_normal((n, 32)).astype(np.float32)
    return points / np.linalg.norm(points, axis=1, keepdims=True)


def _exact_top(vectors: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    scores = [round(float(v @ query), 6) for v in vectors]  # row by row, as reported
    return sorted(range(len(vectors)), key=lambda n: (-scores[n], n))[:k]


def test_exact_search_is_brute_force_with_ties_by_row() -> None:
    vectors = _clustered(500)
    index = VectorIndex(32)
    index.add([f"v{n}" for n in range(500)], vectors)
    index.add(["dup"], vectors[7:8])  # the same vector as v7, one row later
    ids = [*(f"v{n}" for n in range(500)), "dup"]
    rows = np.concatenate([vectors, vectors[7:8]])
    for query in vectors[:20]:
        expected = [ids[n] for n in _exact_top(rows, query, 10)]
        assert [i for i, _ in index.search(query, 10)] == expected
    assert [i for i, _ in index.search(vectors[7], 2)] == ["v7", "dup"]


def _near_duplicates(n: int, seed: int = 5) -> np.ndarray:
    """Rows in small bunches, in the model's dimension: many scores a float16 rounding apart."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((1000, 384)).astype(np.float32)
    noise = rng.standard_normal((n, 384)).astype(np.float32) * rng.choice([0.01, 0.5], (n, 1))
    points = centres[rng.integers(0, 1000, n)] + noise
    return points / np.linalg.norm(points, axis=1, keepdims=True)


def test_the_float16_prefilter_finds_exactly_what_the_full_scan_finds() -> None:
    # ids and scores alike: a row is scored the same whichever rows are scored beside it
    vectors = _near_duplicates(6000)
    ids = [f"v{n}" for n in range(6000)]
    full, prefiltered = VectorIndex(384), VectorIndex(384)
    full.add(ids, vectors)
    prefiltered.add(ids, vectors)
    prefiltered.add(["dup"], vectors[11:12])  # ties stay in row order through the prefilter
    full.add(["dup"], vectors[11:12])
    prefiltered.prepare("exact")
    rng = np.random.default_rng(8)
    narrowed = 0
    for n in range(0, 6000, 50):
        query = vectors[n] + rng.uniform(0, 0.05) * rng.standard_normal(384).astype(np.float32)
        query /= np.linalg.norm(query)
        for k in (1, 5, 40):
            assert prefiltered.search(query, k) == full.search(query, k)
        candidates = prefiltered._prefilter.candidates(query, 5)
        narrowed += candidates is not None and len(candidates) < 600
    assert narrowed >= 100  # it did narrow the search, not fall back to the full scan
    assert [i for i, _ in prefiltered.search(vectors[11], 2)] == ["v11", "dup"]


def test_an_opened_index_searches_alike_before_and_after_its_prefilter_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rows read in place from a large bundle get their float16 prefilter on another thread, so
    opening does not wait for it; a search before it is made scans every row and finds the
    same. The prefilter thread is held at its start (its first step is the file check). A
    smaller index makes it while opening."""
    import threading

    from noema.vectors import index as index_module
    from noema.vectors._exact import Prefilter, PrefilterSoon

    monkeypatch.setattr(index_module, "PREFILTER_ON_THREAD_FROM", 5000)  # 5,000 rows: large

    vectors = _near_duplicates(5000, seed=9).astype(np.float32)
    ids = [f"v{n}" for n in range(5000)]
    gate = threading.Event()

    def check() -> None:
        if threading.current_thread().name == "noema-prefilter":
            gate.wait(30)

    opened = VectorIndex.from_rows(ids, vectors)
    opened._source_check = check  # as opening a bundle sets it: the rows are in a mapped file
    opened.prepare("exact")
    soon = opened._prefilter
    assert isinstance(soon, PrefilterSoon)
    queries = [vectors[n] for n in range(0, 5000, 250)]
    before = [opened.search(q, k) for q in queries for k in (1, 5, 40)]
    assert soon._made is None  # not made yet: every one of those searches scanned every row
    gate.set()
    soon._thread.join(30)
    assert isinstance(soon._made, Prefilter)
    assert [opened.search(q, k) for q in queries for k in (1, 5, 40)] == before
    in_memory = VectorIndex.from_rows(ids, vectors).prepare("exact")
    assert isinstance(in_memory._prefilter, Prefilter)  # made at once: not read from a file
    assert [in_memory.search(q, k) for q in queries for k in (1, 5, 40)] == before
    monkeypatch.setattr(index_module, "PREFILTER_ON_THREAD_FROM", 5001)  # now a small index
    small = VectorIndex.from_rows(ids, vectors)
    small._source_check = check
    small.prepare("exact")
    assert isinstance(small._prefilter, PrefilterSoon)
    assert isinstance(small._prefilter._made, Prefilter)  # made while opening, no thread
    assert not small._prefilter._thread.is_alive()
    assert [small.search(q, k) for q in queries for k in (1, 5, 40)] == before


@pytest.mark.parametrize(("rows", "dimension"), [(0, 4), (3, 4), (70, 384)])
def test_the_stored_flat_index_is_byte_for_byte_what_faiss_writes(
    rows: int, dimension: int
) -> None:
    import faiss

    vectors = np.random.default_rng(rows).standard_normal((rows, dimension)).astype(np.float32)
    flat = faiss.IndexFlatIP(dimension)
    if rows:
        flat.add(vectors)
    index = VectorIndex(dimension)
    index.add([f"v{n}" for n in range(rows)], vectors)
    assert b"".join(index.index_pieces()) == bytes(faiss.serialize_index(flat))


def test_approximate_search_finds_most_exact_neighbours_with_exact_scores() -> None:
    vectors = _clustered(6000)
    index = VectorIndex(32)
    index.add([f"v{n}" for n in range(6000)], vectors)
    exact = {q: index.search(vectors[q], 10) for q in range(0, 6000, 60)}
    assert not index.approximate
    index.prepare("approximate")
    assert index.approximate
    found = total = 0
    for q, best in exact.items():
        approximate = index.search(vectors[q], 10)
        scores = dict(best)
        for item, score in approximate:
            assert score == pytest.approx(float(vectors[int(item[1:])] @ vectors[q]), abs=1e-5)
        found += len(scores.keys() & dict(approximate).keys())
        total += len(best)
    assert found / total >= 0.9
    index.add(["new"], vectors[:1])
    assert not index.approximate  # a changed index is prepared again by its writer


def test_auto_stays_exact_below_the_threshold() -> None:
    index = VectorIndex(32)
    index.add(["a", "b", "c"], _clustered(3))
    assert not index.prepare("auto").approximate
    with pytest.raises(ValueError, match="search must be one of"):
        index.prepare("fast")  # type: ignore[arg-type]


def test_an_approximate_index_is_built_again_on_load_never_read_from_the_bundle(
    make_kb, tmp_path: Path, embedder: noema.SentenceTransformerEmbedder
) -> None:  # type: ignore[no-untyped-def]
    from conftest import COMPANY_DOCS

    kb = make_kb(search="approximate")
    kb.ingest(COMPANY_DOCS)
    assert kb._snapshot.index.approximate and kb._snapshot.sentences.vectors.approximate
    question = "Who founded the company that acquired YouTube?"
    before = kb.retrieve(question, hops=2)
    path = kb.save(tmp_path / "kb.noema")
    with zipfile.ZipFile(path) as zf:
        assert zf.read("index.faiss")[:4] == b"IxFI"  # the flat index, checked byte for byte
    loaded = KnowledgeBase.load(path, embedder=embedder, search="approximate")
    assert loaded._snapshot.index.approximate
    assert loaded.retrieve(question, hops=2) == before
    exact = KnowledgeBase.load(tmp_path / "kb.noema", embedder=embedder, search="exact")
    assert not exact._snapshot.index.approximate


def _centroids(index: VectorIndex) -> np.ndarray:
    import faiss

    assert index._approximate is not None
    quantizer = faiss.downcast_index(index._approximate.ivf.quantizer)
    return faiss.vector_to_array(quantizer.codes).copy()


def test_a_write_extends_the_approximate_index_instead_of_training_another() -> None:
    """Training is what a write into a large base paid every time: rows added or
    removed keep the trained clusters until the rows double; the index the old snapshot's
    readers search is left as it was."""
    vectors = _clustered(6000)
    old = VectorIndex(32)
    old.add([f"v{n}" for n in range(4000)], vectors[:4000])
    old.prepare("approximate")
    trained = _centroids(old)

    new = old.copy()
    new.remove(["v5", "v6"])
    new.add([f"v{n}" for n in range(4000, 6000)], vectors[4000:])
    new.prepare("approximate")
    np.testing.assert_array_equal(_centroids(new), trained)
    for n in (0, 4000, 4500, 5999):  # old and added rows are found, with exact scores
        best, score = new.search(vectors[n], 1)[0]
        assert best == f"v{n}" and score == pytest.approx(1.0, abs=1e-5)
    assert all(i not in ("v5", "v6") for i, _ in new.search(vectors[5], 20))
    assert old.search(vectors[4500], 1)[0][0] != "v4500"  # the readers' index: unchanged
    assert old._approximate is not None and old._approximate.ivf.ntotal == 4000

    grown = new.copy()
    grown.add([f"w{n}" for n in range(4100)], _clustered(4100, seed=9))  # past twice 4,000
    grown.prepare("approximate")
    assert grown._approximate is not None and grown._approximate.trained == len(grown)


def test_a_changed_copy_holds_what_copy_remove_and_add_would_and_leaves_the_original() -> None:
    """A write made its index by copy, remove and add, writing a large matrix twice;
    ``changed`` makes the same rows in one pass. A removed id added back takes its new vector,
    an id held and not removed keeps its old one, and the readers' index stays as it was."""
    vectors = _clustered(60)
    old = VectorIndex(32)
    old.add([f"v{n}" for n in range(50)], vectors[:50])
    before = old.vectors.copy()
    added = ["v3", "v7", "n1", "n1", "n2"]  # v3 removed and added back; v7 held; n1 twice
    rows = np.stack([vectors[50], vectors[51], vectors[52], vectors[53], vectors[54]])

    new = old.changed(["v3", "v9", "unknown"], added, rows)
    expected = old.copy()
    expected.remove(["v3", "v9", "unknown"])
    expected.add(added, rows)
    assert new.ids == expected.ids
    assert new.ids == [f"v{n}" for n in range(50) if n not in (3, 9)] + ["v3", "n1", "n2"]
    np.testing.assert_array_equal(new.vectors, expected.vectors)
    np.testing.assert_array_equal(new.vector("v3"), vectors[50])
    np.testing.assert_array_equal(new.vector("v7"), vectors[7])
    np.testing.assert_array_equal(new.vector("n1"), vectors[52])
    assert old.ids == [f"v{n}" for n in range(50)]
    np.testing.assert_array_equal(old.vectors, before)
    assert old.changed([], ["v1"], vectors[:1]).ids == old.ids  # nothing new: the same rows


def test_an_index_over_a_handed_matrix_refuses_rows_that_do_not_fit() -> None:
    matrix = _clustered(3)
    index = VectorIndex.from_rows(["a", "b", "c"], matrix)
    assert index.search(matrix[1], 1)[0][0] == "b"
    with pytest.raises(noema.OptionError, match="appears twice"):
        VectorIndex.from_rows(["a", "b", "a"], matrix)
    with pytest.raises(noema.OptionError, match="float32 matrix of 2 rows"):
        VectorIndex.from_rows(["a", "b"], matrix)
