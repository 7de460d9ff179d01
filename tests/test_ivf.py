"""A bundle keeps its approximate indexes: opening builds them from the kept parts
instead of training them again, and searches as before the save."""

from __future__ import annotations

import json
import struct
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import noema
import noema.vectors._approximate
from noema import BundleError, KnowledgeBase
from noema.vectors.index import VectorIndex
from noema.vectors.ivf import ivf_bytes, read_ivf, reads_in_place, views_supported
from tests.conftest import COMPANY_DOCS
from tests.test_bundle import rewrite

QUESTIONS = ["Who founded the company that acquired YouTube?", "Where is Nvidia headquartered?"]


def _refuse_training(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(vectors: object) -> None:
        raise AssertionError("an approximate index was trained again")

    monkeypatch.setattr(noema.vectors._approximate, "_build_ivf", refused)


def _unit_rows(n: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, 384)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_an_index_made_again_from_its_parts_searches_as_the_original(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ids = [f"f{n}" for n in range(3000)]
    original = VectorIndex.from_rows(ids, _unit_rows(3000, 1)).prepare("approximate")
    original = original.changed(ids[:100], ["new1", "new2"], _unit_rows(2, 2))
    original.prepare("approximate")  # extended, not trained: labels no longer row numbers
    order = list(reversed(original.ids))  # a bundle writes rows in its own order
    parts = original.approximate_parts(order)
    assert parts is not None
    read = read_ivf(ivf_bytes(parts), len(order), 384)
    again = VectorIndex.from_rows(order, np.stack([original.vector(i) for i in order]))
    released: list[bool] = []
    again.keep_stored_approximate(read, release=lambda: released.append(True))
    _refuse_training(monkeypatch)
    again.prepare("approximate")
    assert again.approximate
    assert released == []  # faiss reads the codes where they lie: the bytes stay
    queries = _unit_rows(40, 3)
    assert again.search_many(queries, 10) == original.search_many(queries, 10)


@pytest.fixture(scope="module")
def approximate_kb(
    embedder: noema.SentenceTransformerEmbedder, extractor: noema.SpacyExtractor
) -> KnowledgeBase:
    kb = KnowledgeBase(embedder=embedder, extractor=extractor, search="approximate")
    kb.ingest(COMPANY_DOCS[:3])
    kb.ingest(COMPANY_DOCS[3:])  # the second write extends the indexes the first trained
    return kb


def test_a_round_trip_keeps_the_approximate_indexes_and_their_results(
    approximate_kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Results identical before and after a save/open round trip; an
    approximate index trained again on opening may differ from one extended by writes."""
    saved = approximate_kb.save(tmp_path / "kb.noema")
    with zipfile.ZipFile(saved) as zf:
        assert {"facts.ivf", "sentences.ivf"} <= set(zf.namelist())
    _refuse_training(monkeypatch)
    loaded = KnowledgeBase.load(saved, search="approximate")
    for question in QUESTIONS:
        for fmt in ("notation", "sentences"):
            assert loaded.retrieve(question, format=fmt) == approximate_kb.retrieve(
                question, format=fmt
            )
    assert loaded.save(tmp_path / "again.noema").read_bytes() == saved.read_bytes()


def _ivf(change: Callable[[bytearray], None]) -> Callable[[dict[str, bytes]], None]:
    def changed(members: dict[str, bytes]) -> None:
        blob = bytearray(members["facts.ivf"])
        change(blob)
        members["facts.ivf"] = bytes(blob)

    return changed


def _assign_past_the_lists(blob: bytearray) -> None:
    blob[-4:] = struct.pack("<i", 1 << 20)


def _claim_rows(blob: bytearray) -> None:
    blob[12:16] = struct.pack("<I", 1 << 30)


def _infinite_centroid(blob: bytearray) -> None:
    blob[36:40] = struct.pack("<f", float("inf"))


@pytest.mark.parametrize(
    ("change", "fix", "message"),
    [
        (_ivf(lambda b: b.__setitem__(slice(0, 8), b"NOTANIVF")), True, "NOEMAIVF"),
        (_ivf(_assign_past_the_lists), True, "outside the"),
        (_ivf(_claim_rows), True, "rows of"),
        (_ivf(_infinite_centroid), True, "not finite"),
        (_ivf(lambda b: b.extend(b"\0" * 8)), True, "bytes, not the"),
        (_ivf(lambda b: b.__setitem__(100, b[100] ^ 0x40)), False, "sha256"),
    ],
    ids=["not one", "list out of range", "rows claimed", "infinite", "longer", "bit flip"],
)
def test_a_damaged_approximate_index_is_a_bundle_error(
    approximate_kb: KnowledgeBase,
    tmp_path: Path,
    change: Callable[[dict[str, bytes]], None],
    fix: bool,
    message: str,
) -> None:
    saved = approximate_kb.save(tmp_path / "kb.noema")
    bad = rewrite(saved, tmp_path / "bad.noema", change, fix_manifest=fix)
    with pytest.raises(BundleError, match=f"facts.ivf.*{message}"):
        KnowledgeBase.load(bad, search="approximate")


def test_exact_search_opens_without_building_the_kept_index(
    approximate_kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = approximate_kb.save(tmp_path / "kb.noema")
    monkeypatch.setattr(noema.vectors.ivf.IVFParts, "build", _refused_build)
    loaded = KnowledgeBase.load(saved, search="exact")
    assert not loaded._snapshot.index.approximate  # type: ignore[union-attr]
    # saved again as it came: the next approximate opening need not train one either
    assert loaded.save(tmp_path / "again.noema").read_bytes() == saved.read_bytes()
    with zipfile.ZipFile(saved) as zf:
        manifest = json.loads(zf.read("manifest.json"))
    assert manifest["members"]["facts.ivf"]["size"] > 0


def _refused_build(self: object, vectors: object) -> None:
    raise AssertionError("built although exact search was asked for")


def test_codes_kept_give_the_lists_encoding_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening hands faiss each row's kept code instead of encoding the rows: every list then
    holds the same labels and codes, in the same order, as encoding them would give."""
    import faiss

    ids = [f"f{n}" for n in range(3000)]
    rows = _unit_rows(3000, 4)
    original = VectorIndex.from_rows(ids, rows).prepare("approximate")
    parts = read_ivf(ivf_bytes(original.approximate_parts(ids) or _no_parts()), 3000, 384)
    assert parts.codes is not None
    kept = parts.build(rows)
    encoded = replace(parts, codes=None).build(rows)
    lists = kept.nlist
    assert lists > 1 and kept.ntotal == encoded.ntotal == 3000
    size = kept.invlists.code_size
    for number in range(lists):
        n = kept.invlists.list_size(number)
        assert n == encoded.invlists.list_size(number)
        for index in (kept, encoded):
            assert index.invlists.list_size(number) == n
        kept_ids = faiss.rev_swig_ptr(kept.invlists.get_ids(number), n).tolist()
        assert kept_ids == faiss.rev_swig_ptr(encoded.invlists.get_ids(number), n).tolist()
        kept_codes = faiss.rev_swig_ptr(kept.invlists.get_codes(number), n * size).tobytes()
        assert (
            kept_codes == faiss.rev_swig_ptr(encoded.invlists.get_codes(number), n * size).tobytes()
        )


def _no_parts() -> Any:
    raise AssertionError("a prepared approximate index gave no parts")


def test_a_schema_4_bundle_without_codes_opens_and_is_saved_with_them(
    embedder: noema.SentenceTransformerEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tests/data/schema4.noema was written by Noema at schema 4 (approximate search over
    # COMPANY_DOCS, ingested in two writes): its facts.ivf and sentences.ivf hold no codes
    old = Path(__file__).parent / "data" / "schema4.noema"
    with zipfile.ZipFile(old) as zf:
        assert json.loads(zf.read("manifest.json"))["schema_version"] == 4
        assert struct.unpack_from("<I", zf.read("facts.ivf"), 8)[0] == 1
    _refuse_training(monkeypatch)
    loaded = KnowledgeBase.load(old, embedder=embedder, search="approximate")
    resaved = loaded.save(tmp_path / "again.noema")
    with zipfile.ZipFile(resaved) as zf:
        assert json.loads(zf.read("manifest.json"))["schema_version"] == 6
        for member in ("facts.ivf", "sentences.ivf"):
            assert struct.unpack_from("<I", zf.read(member), 8)[0] == 2
    again = KnowledgeBase.load(resaved, embedder=embedder, search="approximate")
    for question in QUESTIONS:
        for fmt in ("notation", "sentences"):
            assert again.retrieve(question, format=fmt) == loaded.retrieve(question, format=fmt)
    # opened with exact search and saved: the codes are made from the kept parts, once
    exact = KnowledgeBase.load(old, embedder=embedder, search="exact")
    assert exact.save(tmp_path / "exact.noema").read_bytes() == resaved.read_bytes()


def test_the_parts_for_other_rows_are_those_the_index_gives_for_them() -> None:
    ids = [f"f{n}" for n in range(3000)]
    index = VectorIndex.from_rows(ids, _unit_rows(3000, 5)).prepare("approximate")
    forward, backward = index.approximate_parts(ids), index.approximate_parts(ids[::-1])
    assert forward is not None and backward is not None
    moved = forward.for_rows(np.arange(2999, -1, -1))
    assert np.array_equal(moved.assignment, backward.assignment)
    assert moved.codes is not None and backward.codes is not None
    assert np.array_equal(moved.codes, backward.codes)
    assert not np.array_equal(forward.codes, backward.codes)  # the lists' rows moved


def _approximate_parts(rows: np.ndarray) -> Any:
    ids = [f"f{n}" for n in range(len(rows))]
    original = VectorIndex.from_rows(ids, rows).prepare("approximate")
    return ids, read_ivf(ivf_bytes(original.approximate_parts(ids) or _no_parts()), len(ids), 384)


def test_the_lists_read_the_kept_codes_where_they_lie() -> None:
    """No code is copied into faiss: each list's codes are the member's own bytes."""
    _, parts = _approximate_parts(_unit_rows(3000, 5))
    assert parts.codes is not None
    index = parts.build(_unit_rows(3000, 5))
    assert reads_in_place(index)
    first = parts.codes.ctypes.data
    last = first + parts.codes.nbytes
    lists = index.invlists
    held = 0
    for number in range(index.nlist):
        size = lists.list_size(number)
        if size:
            at = int(lists.get_codes(number))  # the address the list reads from
            assert first <= at and at + size * lists.code_size <= last
            held += size
    assert held == 3000


@contextmanager
def _no_views(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """faiss as an older release has it, without views of memory it does not own (the probe
    that finds out runs again, inside and after)."""
    import faiss

    views_supported.cache_clear()
    try:
        with monkeypatch.context() as patched:
            patched.delattr(faiss, "MaybeOwnedVectorUInt8")
            assert not views_supported()
            yield
    finally:
        views_supported.cache_clear()


def test_without_views_the_lists_copy_the_codes_and_search_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the faiss installed has no views of memory it does not own, the codes are copied
    into the lists as before, and both search alike."""
    rows = _unit_rows(3000, 6)
    _, parts = _approximate_parts(rows)
    viewed = parts.build(rows)
    with _no_views(monkeypatch):
        copied = parts.build(rows)
    assert reads_in_place(viewed) and not reads_in_place(copied)
    queries = _unit_rows(30, 7)
    for a, b in zip(viewed.search(queries, 50), copied.search(queries, 50), strict=True):
        assert np.array_equal(a, b)


def test_a_write_extends_an_index_that_reads_its_codes_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A write adds its rows to a copy that owns its codes (faiss aborts on adding to a view);
    the readers' index is unchanged and the writer's searches as one built from copied codes."""
    rows = _unit_rows(3000, 8)
    ids, parts = _approximate_parts(rows)
    opened = VectorIndex.from_rows(ids, rows)
    opened.keep_stored_approximate(parts)
    _refuse_training(monkeypatch)
    opened.prepare("approximate")
    queries = _unit_rows(30, 9)
    before = opened.search_many(queries, 10)
    written = opened.changed(ids[:50], ["new1", "new2"], _unit_rows(2, 10)).prepare("approximate")
    assert written.approximate and "new1" in written and ids[0] not in written
    assert opened.search_many(queries, 10) == before
    with _no_views(monkeypatch):
        copied = VectorIndex.from_rows(ids, rows)
        copied.keep_stored_approximate(parts)
        copied.prepare("approximate")
    again = copied.changed(ids[:50], ["new1", "new2"], _unit_rows(2, 10)).prepare("approximate")
    assert written.search_many(queries, 10) == again.search_many(queries, 10)


def test_the_viewed_codes_live_as_long_as_the_index() -> None:
    """The lists point into the member's bytes: the index keeps them, whatever else lets go."""
    import gc

    rows = _unit_rows(3000, 11)
    _, parts = _approximate_parts(rows)
    queries = _unit_rows(20, 12)
    expected = parts.build(rows).search(queries, 30)
    index = parts.build(rows)
    del parts
    gc.collect()
    _unit_rows(3000, 13)  # memory freed above, if any, is written over
    for a, b in zip(index.search(queries, 30), expected, strict=True):
        assert np.array_equal(a, b)
    assert views_supported()  # this faiss has them: the index above read its codes in place
