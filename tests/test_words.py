"""The word index of the sentence sidecar (noema/vectors/words.py) and the ``sentences.words``
member a bundle stores it in: written at save, read in place on opening, searched as the index
made from the sentences is, refused when damaged."""

from __future__ import annotations

import hashlib
import json
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import noema
from noema import BundleError, KnowledgeBase
from noema.model.spans import Sentence
from noema.storage import _opening, _reading
from noema.vectors import words as words_module
from noema.vectors.words import (
    HEADER,
    LexicalIndex,
    read_word_index,
    sentence_keys_digest,
    word_index_pieces,
)
from tests.test_bundle import rewrite

MEMBER = "sentences.words"
QUESTIONS = (
    "Who founded Google?",
    "Which company acquired Mellanox in 2020?",
    "Where is Nvidia headquartered?",
    "Who is the CEO of YouTube?",
)
OLD = Path(__file__).parent / "data" / "schema5.noema"


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory, company_kb: KnowledgeBase) -> Path:
    return company_kb.save(tmp_path_factory.mktemp("words") / "kb.noema")


def _loaded(path: Path, embedder: noema.SentenceTransformerEmbedder) -> KnowledgeBase:
    return KnowledgeBase.load(path, embedder=embedder)


def _stored_and_made(kb: KnowledgeBase) -> tuple[LexicalIndex, LexicalIndex]:
    snapshot = kb._snapshot
    assert snapshot.sentences is not None
    stored = snapshot.sentences.word_index(snapshot.graph)
    assert stored is not None and stored.stored
    made = LexicalIndex.of_documents(snapshot.graph, snapshot.sentences.by_document)
    return stored, made


def _pieces(index: LexicalIndex, digest: bytes = b"\0" * 32) -> bytes:
    return b"".join(bytes(piece) for piece in word_index_pieces(index, digest))


def _small() -> tuple[list[Sentence], LexicalIndex]:
    rows = [Sentence(f"d{n}", 0, 9) for n in range(3)]
    texts = ["Orlin released Tallow in 1994.", "The band Orlin toured.", "Café Zoë"]
    return rows, LexicalIndex(rows, texts)


def test_the_member_read_back_scores_as_the_index_it_was_written_from() -> None:
    rows, index = _small()
    read = read_word_index(_pieces(index, b"k" * 32), rows)
    assert read.keys_digest == b"k" * 32 and read.stored and len(read) == 3
    assert index.keys_digest is None and not index.stored
    assert list(read.vocabulary()) == list(index.vocabulary()) == sorted(index.vocabulary())
    for question in ("When did Orlin release Tallow?", "cafe zoe", "nothing here", "1994"):
        assert np.array_equal(read.scores(question), index.scores(question))
        assert read.search(question, 5) == index.search(question, 5)


def test_a_saved_base_keeps_its_word_index_and_scores_as_one_made_from_the_documents(
    saved: Path, embedder: noema.SentenceTransformerEmbedder
) -> None:
    with zipfile.ZipFile(saved) as zf:
        manifest = json.loads(zf.read("manifest.json"))
        assert zf.getinfo(MEMBER).compress_type == zipfile.ZIP_STORED  # read in place
    assert manifest["words"] == {"rows": 10, "scoring": words_module.WORD_SCORING}
    stored, made = _stored_and_made(_loaded(saved, embedder))
    assert list(stored.sentences) == list(made.sentences)
    for question in QUESTIONS:
        np.testing.assert_allclose(stored.scores(question), made.scores(question), atol=1e-6)
        assert stored.search(question, 10) == made.search(question, 10)
        assert stored.search(question, 10)  # the questions have words in the sentences


def test_the_first_retrieval_after_opening_makes_no_word_index(
    saved: Path,
    company_kb: KnowledgeBase,
    embedder: noema.SentenceTransformerEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected = [company_kb.retrieve(q, format="sentences").text for q in QUESTIONS]

    def refused(*args: object, **kwargs: object) -> LexicalIndex:
        raise AssertionError("the word index was made, not read from the bundle")

    monkeypatch.setattr(LexicalIndex, "of_documents", classmethod(refused))
    kb = _loaded(saved, embedder)
    assert [kb.retrieve(q, format="sentences").text for q in QUESTIONS] == expected


def test_a_schema_5_bundle_opens_and_makes_its_word_index_on_the_first_retrieval(
    embedder: noema.SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    # tests/data/schema5.noema was written by Noema at schema 5 (before sentences.words), from
    # the company documents
    with zipfile.ZipFile(OLD) as zf:
        assert json.loads(zf.read("manifest.json"))["schema_version"] == 5
        assert MEMBER not in zf.namelist()
    old = _loaded(OLD, embedder)
    sentences = old._snapshot.sentences
    assert sentences is not None and sentences._words is None  # nothing stored, nothing made
    resaved = _loaded(old.save(tmp_path / "kb.noema"), embedder)
    for question in QUESTIONS:
        assert old.retrieve(question).text == resaved.retrieve(question).text
    made = sentences._words
    assert made is not None and not made.stored
    stored, _ = _stored_and_made(resaved)
    for question in QUESTIONS:
        assert stored.search(question, 10) == made.search(question, 10)


def test_a_save_after_an_ingest_writes_the_new_sentences_index(
    saved: Path, embedder: noema.SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    kb = _loaded(saved, embedder)
    kb.ingest(["Orlin Vesk founded Tallowmere Records in Reykjavik in 1994."])
    after = _loaded(kb.save(tmp_path / "after.noema"), embedder)
    stored, made = _stored_and_made(after)
    assert len(stored) == len(made) == 11
    assert stored.search("Who founded Tallowmere Records?", 3)[0][0].document_id.startswith("doc_")
    assert stored.search("Tallowmere Reykjavik", 5) == made.search("Tallowmere Reykjavik", 5)


def test_a_save_of_an_opened_base_copies_the_member(
    saved: Path, embedder: noema.SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    again = _loaded(saved, embedder).save(tmp_path / "again.noema")
    assert again.read_bytes() == saved.read_bytes()


def _member_changed(change: Callable[[bytearray], bytes]) -> Callable[[dict[str, bytes]], None]:
    def changed(members: dict[str, bytes]) -> None:
        members[MEMBER] = change(bytearray(members[MEMBER]))

    return changed


def _with_header(**fields: int) -> Callable[[bytearray], bytes]:
    names = ("magic", "version", "zero", "rows", "terms", "postings", "heap", "keys")

    def change(data: bytearray) -> bytes:
        values = dict(zip(names, HEADER.unpack_from(data), strict=True))
        values.update(fields)
        HEADER.pack_into(data, 0, *values.values())
        return bytes(data)

    return change


def _row_past_the_end(data: bytearray) -> bytes:
    _, _, _, rows, terms, postings, _, _ = HEADER.unpack_from(data)
    at = HEADER.size + 16 * (terms + 1)  # the first posting's row
    struct.pack_into("<i", data, at, rows + 5)
    return bytes(data)


def _not_finite(data: bytearray) -> bytes:
    _, _, _, _, terms, postings, _, _ = HEADER.unpack_from(data)
    struct.pack_into("<f", data, HEADER.size + 16 * (terms + 1) + 4 * postings, float("nan"))
    return bytes(data)


DAMAGE = {
    "truncated": (lambda data: bytes(data[:-7]), "holds .* bytes; its header's counts"),
    "too-short": (lambda data: bytes(data[:20]), "holds 20 bytes, fewer than its 80-byte header"),
    "not-ours": (lambda data: b"NOTWORDS" + bytes(data[8:]), "does not start with"),
    "newer": (_with_header(version=2), "is of version 2.*Upgrade Noema"),
    "other-rows": (_with_header(rows=9), "indexes 9 sentences, the sidecar holds 10"),
    "row-past-the-end": (
        _row_past_the_end,
        "has postings that name a sentence row past the 10 sentences",
    ),
    "weight-not-finite": (_not_finite, "has postings that hold a weight that is not a finite"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_member_is_refused_on_opening_saying_what_is_wrong(
    damage: str, saved: Path, tmp_path: Path
) -> None:
    change, message = DAMAGE[damage]
    bad = rewrite(saved, tmp_path / "bad.noema", _member_changed(change), fix_manifest=True)
    with pytest.raises(BundleError, match=f"bad.noema.*{MEMBER} {message}"):
        KnowledgeBase.load(bad)


def test_a_member_that_does_not_match_its_sha256_is_refused(saved: Path, tmp_path: Path) -> None:
    flipped = _member_changed(lambda data: bytes(data[:-1]) + bytes([data[-1] ^ 1]))
    bad = rewrite(saved, tmp_path / "bad.noema", flipped)  # the manifest's sha256 kept
    with pytest.raises(BundleError, match=f"{MEMBER} does not match its sha256"):
        KnowledgeBase.load(bad)  # a small member is hashed on every opening
    with pytest.raises(BundleError, match=f"{MEMBER} does not match its sha256"):
        KnowledgeBase.load(bad, verify=True)


def test_a_large_member_read_unhashed_checks_each_postings_slice_it_searches(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening checks the postings of a member it does not hash (a large one) only as a search
    reads them, and all of them with the sha256 (verify, validate, a save)."""
    monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", 0)
    bad = rewrite(saved, tmp_path / "bad.noema", _member_changed(_not_finite), fix_manifest=True)
    kb = KnowledgeBase.load(bad)
    index = kb._snapshot.sentences.word_index(kb._snapshot.graph)  # type: ignore[union-attr]
    assert index is not None and index.stored
    word = next(index.vocabulary())  # the first posting is the first word's
    with pytest.raises(BundleError, match=f"index's postings of {word!r} hold a weight"):
        index.scores(word)
    with pytest.raises(BundleError, match=f"{MEMBER}: its postings hold a weight"):
        kb.save(tmp_path / "again.noema")
    with pytest.raises(BundleError, match=f"{MEMBER} has postings that hold a weight"):
        KnowledgeBase.load(bad, verify=True)


def test_a_manifest_describing_the_member_in_part_is_refused(saved: Path, tmp_path: Path) -> None:
    def undescribed(members: dict[str, bytes]) -> None:
        manifest = json.loads(members["manifest.json"])
        del manifest["words"]
        members["manifest.json"] = json.dumps(manifest).encode()

    bad = rewrite(saved, tmp_path / "bad.noema", undescribed)
    with pytest.raises(BundleError, match=f"manifest describes {MEMBER} only in part"):
        KnowledgeBase.load(bad)


def test_a_member_scored_another_way_is_left_out_and_made_again(
    saved: Path, embedder: noema.SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    def other_scoring(members: dict[str, bytes]) -> None:
        manifest = json.loads(members["manifest.json"])
        manifest["words"]["scoring"] = "bm25 k1=1.2"
        members["manifest.json"] = json.dumps(manifest).encode()

    other = rewrite(saved, tmp_path / "other.noema", other_scoring)
    kb = _loaded(other, embedder)
    sentences = kb._snapshot.sentences
    assert sentences is not None and sentences._words is None
    kb.retrieve(QUESTIONS[0])
    assert sentences._words is not None and not sentences._words.stored


def test_the_member_names_the_keys_of_the_sentences_it_indexes(saved: Path) -> None:
    with zipfile.ZipFile(saved) as zf:
        data = zf.read(MEMBER)
    kb = KnowledgeBase.load(saved)
    sentences = kb._snapshot.sentences
    assert sentences is not None
    assert HEADER.unpack_from(data)[-1] == sentence_keys_digest(sentences.vectors.ids)
    expected = hashlib.sha256("".join(f"{k}\n" for k in sentences.vectors.ids).encode())
    assert sentence_keys_digest(sentences.vectors.ids) == expected.digest()


def test_opening_counts_the_member_where_it_is_read_into_memory(saved: Path) -> None:
    """Read in place, opening holds none of it; read into memory (a bundle that cannot be
    mapped), its size."""
    with zipfile.ZipFile(saved) as zf:
        size = zf.getinfo(MEMBER).file_size

        def needed(in_place: bool) -> int:
            low, high = 1, 1 << 30  # the least budget that opens it
            while low < high:
                middle = (low + high) // 2
                try:
                    _reading.check_budget(zf, "kb", middle, columnar=True, in_place=in_place)
                    high = middle
                except BundleError:
                    low = middle + 1
            return low

        in_place, read_whole = needed(True), needed(False)
        vectors = sum(
            zf.getinfo(m).file_size
            for m in ("embeddings.bin", "index.faiss", "sentences.bin", "names.bin")
        )
    assert read_whole - in_place == pytest.approx(vectors + size, abs=2)


def test_a_save_that_makes_every_member_refuses_an_index_kept_for_other_sentences(
    saved: Path, embedder: noema.SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    """A bundle of an older schema is saved by making every member, not copying: the index it
    kept is written from what was read, and one written for other sentences is refused there
    rather than passed on under the right digest."""

    def lying_and_older(members: dict[str, bytes]) -> None:
        data = bytearray(members[MEMBER])
        data[48:80] = hashlib.sha256(b"other sentences").digest()  # the header's keys digest
        members[MEMBER] = bytes(data)
        manifest = json.loads(members["manifest.json"])
        manifest["schema_version"] = 5
        members["manifest.json"] = json.dumps(manifest).encode()

    bad = rewrite(saved, tmp_path / "bad.noema", lying_and_older, fix_manifest=True)
    kb = _loaded(bad, embedder)
    with pytest.raises(BundleError, match=f"{MEMBER} .* is not the word index of its sentences"):
        kb.save(tmp_path / "again.noema")
    assert not (tmp_path / "again.noema").exists()
