"""A save of a base opened from a bundle and not written to since copies the bundle's members
(noema/storage/copying.py) rather than making them again, and writes what a save making them
writes: the oracle here is the same base saved with copying turned off, byte for byte."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import noema.kb
from noema import BundleError, Document, KnowledgeBase
from noema.ingest.canonical import Canonicalizer
from noema.storage import _column_write, _opening, bundle, container, copying, members
from noema.storage.store import Store
from tests.test_bundle import rewrite
from tests.test_bundle_hashes import _damage_named, _damaged_large_member, _flipped
from tests.test_column_ids import _version_1_dtypes

QUESTIONS = ["Who founded Google?", "Where is Nvidia headquartered?", "Who runs YouTube?"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory, company_kb: KnowledgeBase) -> Path:
    path = tmp_path_factory.mktemp("copying") / "kb.noema"
    company_kb.save(path)
    return path


@pytest.fixture(params=[False, True], ids=["read-whole", "mapped"])
def mapped(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Opened as a bundle past 64 MiB is (mapped from its file), or read whole."""
    if request.param:
        monkeypatch.setattr(container, "READ_WHOLE_BELOW", 0)
    return bool(request.param)


def _made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The members a save makes from now on (the real writers, each call recorded)."""
    made: list[str] = []

    def recorded(member: members.Member) -> members.Member:
        def write(saving: members.Saving) -> Any:
            made.append(member.name)
            return member.write(saving)

        return dataclasses.replace(member, write=write)

    monkeypatch.setattr(bundle, "MEMBERS", tuple(recorded(m) for m in members.MEMBERS))
    return made


def _names_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    """The canonicalizer's name vectors are never asked for (names.bin is copied)."""

    def refused(self: Canonicalizer, graph: Any) -> Any:
        raise AssertionError("the name vectors were taken")

    monkeypatch.setattr(Canonicalizer, "name_vectors", refused)


@pytest.fixture
def making_all(monkeypatch: pytest.MonkeyPatch) -> Callable[[], Iterator[None]]:
    """A context in which every save makes every member, as before copying (the oracle)."""
    from contextlib import contextmanager

    @contextmanager
    def making() -> Iterator[None]:
        with monkeypatch.context() as patched:
            patched.setattr(Store, "_copying", lambda self, snapshot, names_kept: None)
            yield

    return making


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _answers(kb: KnowledgeBase) -> list[Any]:
    return [kb.retrieve(q, format=f) for q in QUESTIONS for f in ("notation", "sentences")]


@pytest.mark.parametrize("hashed", [True, False], ids=["hashed-on-opening", "large"])
def test_an_opened_base_saved_again_copies_every_member_and_writes_the_same_bytes(
    saved: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    company_kb: KnowledgeBase,
    mapped: bool,
    hashed: bool,
) -> None:
    if not hashed:  # its members checked against their sha256 by the save, then copied
        monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", 0)
    kb = KnowledgeBase.load(saved, embedder=company_kb.embedder)
    made = _made(monkeypatch)
    _names_untouched(monkeypatch)
    kb.save(tmp_path / "again.noema")
    data = kb.to_bytes()
    assert made == []  # nothing made: each member copied
    assert (tmp_path / "again.noema").read_bytes() == saved.read_bytes() == data
    again = KnowledgeBase.load(tmp_path / "again.noema", embedder=company_kb.embedder, verify=True)
    assert again.graph == company_kb.graph and again.merge_log == company_kb.merge_log
    assert _answers(again) == _answers(company_kb)


def test_the_manifest_is_written_with_the_saving_bases_own_settings(
    saved: Path, monkeypatch: pytest.MonkeyPatch, company_kb: KnowledgeBase
) -> None:
    kb = KnowledgeBase.load(saved, embedder=company_kb.embedder, similarity_threshold=0.9)
    made = _made(monkeypatch)
    monkeypatch.setattr(noema.kb, "__version__", "9.9.9")  # as a later Noema saving it
    with zipfile.ZipFile(io.BytesIO(kb.to_bytes())) as zf:
        manifest = json.loads(zf.read("manifest.json"))
        copied = {name: zf.read(name) for name in zf.namelist() if name != "manifest.json"}
    assert made == [] and copied == {
        name: data for name, data in _members(saved).items() if name != "manifest.json"
    }
    with zipfile.ZipFile(saved) as zf:
        expected = json.loads(zf.read("manifest.json"))
    assert manifest == {**expected, "similarity_threshold": 0.9, "noema_version": "9.9.9"}


def _mapped_copy(saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of ``saved`` opened as a large bundle is: mapped, its members hashed at the save."""
    monkeypatch.setattr(container, "READ_WHOLE_BELOW", 0)
    monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", 0)
    path = tmp_path / "kb.noema"
    path.write_bytes(saved.read_bytes())
    return path


def test_a_save_over_the_bundle_it_was_opened_from_copies_from_the_mapped_file(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, company_kb: KnowledgeBase
) -> None:
    path = _mapped_copy(saved, tmp_path, monkeypatch)
    kb = KnowledgeBase.load(path, embedder=company_kb.embedder)
    made = _made(monkeypatch)
    kb.save(path)  # the new file moved over the one mapped, which stays as it was
    kb.save(path)  # and again, over its own save
    kb.save(tmp_path / "elsewhere.noema")
    assert made == []
    assert path.read_bytes() == saved.read_bytes()
    assert (tmp_path / "elsewhere.noema").read_bytes() == saved.read_bytes()
    assert _answers(kb) == _answers(KnowledgeBase.load(path, embedder=company_kb.embedder))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.noema", "kb.noema"]


@pytest.mark.parametrize("search", ["exact", "approximate"])
def test_kept_approximate_indexes_are_copied_and_ones_trained_on_opening_made(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    company_kb: KnowledgeBase,
    making_all: Callable[[], Any],
    search: str,
) -> None:
    approximate = KnowledgeBase.from_bytes(
        company_kb.to_bytes(), embedder=company_kb.embedder, search="approximate"
    )
    kept = approximate.save(tmp_path / "kept.noema")  # with facts.ivf and sentences.ivf
    assert {"facts.ivf", "sentences.ivf"} <= set(_members(kept))
    kb = KnowledgeBase.load(kept, embedder=company_kb.embedder, search=search)  # type: ignore[arg-type]
    made = _made(monkeypatch)
    assert kb.to_bytes() == kept.read_bytes() and made == []
    # a bundle without them, opened with approximate search, trains them: those two are made
    exact = KnowledgeBase.load(
        company_kb.save(tmp_path / "exact.noema"),
        embedder=company_kb.embedder,
        search="approximate",
    )
    made.clear()
    data = exact.to_bytes()
    assert sorted(made) == ["facts.ivf", "sentences.ivf"]
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert {"facts.ivf", "sentences.ivf"} <= set(zf.namelist())
    with making_all():
        assert data == exact.to_bytes()


def test_members_this_version_writes_otherwise_are_made_again(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, company_kb: KnowledgeBase
) -> None:
    # graph.columns as version 1 wrote it, and graph.json stored rather than deflated (as
    # another zip tool may write it): those two are made, the others copied
    with monkeypatch.context() as patched:
        patched.setattr(_column_write, "COLUMNS_VERSION", 1)
        patched.setattr(_column_write, "DTYPES", _version_1_dtypes())
        old = company_kb.save(tmp_path / "old.noema")
    restored = rewrite(old, tmp_path / "stored.noema", lambda stored: None)
    with zipfile.ZipFile(restored) as zf:
        assert zf.getinfo("graph.json").compress_type == zipfile.ZIP_STORED
    kb = KnowledgeBase.load(restored, embedder=company_kb.embedder)
    made = _made(monkeypatch)
    kb.save(tmp_path / "again.noema")
    assert made == ["graph.json", "graph.columns"]
    assert (tmp_path / "again.noema").read_bytes() == saved.read_bytes()


def test_a_bundle_of_an_older_schema_is_made_again_whole(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, company_kb: KnowledgeBase
) -> None:
    def older(stored: dict[str, bytes]) -> None:
        stored["manifest.json"] = stored["manifest.json"].replace(
            b'"schema_version":6', b'"schema_version":5'
        )

    old = rewrite(saved, tmp_path / "old.noema", older)
    kb = KnowledgeBase.load(old, embedder=company_kb.embedder)
    assert kb.manifest is not None and kb.manifest["schema_version"] == 6  # migrated on reading
    made = _made(monkeypatch)
    kb.save(tmp_path / "again.noema")
    assert made == [m.name for m in members.MEMBERS]
    assert (tmp_path / "again.noema").read_bytes() == saved.read_bytes()


@pytest.mark.parametrize("write", ["ingest", "delete", "merge"])
def test_a_write_after_opening_has_every_member_made_again(
    saved: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    company_kb: KnowledgeBase,
    making_all: Callable[[], Any],
    write: str,
) -> None:
    kb = KnowledgeBase.load(saved, embedder=company_kb.embedder, extractor=company_kb.extractor)
    gone = sorted(kb.graph.documents)[0]
    if write == "ingest":
        kb.ingest([Document("Marie Curie was born in Warsaw.", id="curie")])
    elif write == "delete":
        kb.delete_documents([gone])
    else:
        other = KnowledgeBase(embedder=company_kb.embedder, extractor=company_kb.extractor)
        other.ingest([Document("Grace Hopper designed COBOL.", id="curie")])
        kb.merge(other)
    made = _made(monkeypatch)
    data = kb.to_bytes()
    assert made == [m.name for m in members.MEMBERS]
    with making_all():
        assert data == kb.to_bytes()
    again = KnowledgeBase.from_bytes(data, embedder=company_kb.embedder)
    assert again.graph == kb.graph != company_kb.graph
    if write == "delete":
        assert set(again.graph.documents) == set(company_kb.graph.documents) - {gone}
    else:
        assert set(again.graph.documents) == {*company_kb.graph.documents, "curie"}


def _written_in_place(path: Path, member: str, keep_time: bool) -> None:
    """Flip a bit of ``member``'s stored bytes in the file itself (as a disk error or another
    program would), keeping its modification time where ``keep_time``."""
    before = os.stat(path)
    damaged = _flipped(path, path.with_suffix(".tmp"), member, 200).read_bytes()
    path.with_suffix(".tmp").unlink()
    with path.open("r+b") as handle:
        handle.write(damaged)
    if keep_time:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


@pytest.mark.parametrize("member", ["embeddings.bin", "graph.columns", "graph.json", "names.bin"])
def test_a_member_damaged_after_opening_is_refused_before_anything_is_copied(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, member: str
) -> None:
    path = _mapped_copy(saved, tmp_path, monkeypatch)
    kb = KnowledgeBase.load(path)
    # unseen by the file's size and time: its sha256 refuses it
    _written_in_place(path, member, keep_time=True)
    damaged = path.read_bytes()
    for target in (tmp_path / "new.noema", path):
        with pytest.raises(BundleError, match=f"{_damage_named(member)}.*nothing was written"):
            kb.save(target)
    assert path.read_bytes() == damaged
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kb.noema"]


def test_a_file_written_in_place_after_opening_is_refused_as_before(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(container, "READ_WHOLE_BELOW", 0)
    path = tmp_path / "kb.noema"
    path.write_bytes(saved.read_bytes())
    kb = KnowledgeBase.load(path)
    _written_in_place(path, "embeddings.bin", keep_time=False)
    with pytest.raises(BundleError, match="changed on disk by another program"):
        kb.save(tmp_path / "new.noema")
    assert not (tmp_path / "new.noema").exists()


@pytest.mark.parametrize("member", ["sentences.bin", "names.bin", "graph.json"])
def test_a_member_damaged_before_opening_is_refused_by_a_save_that_would_copy_it(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mapped: bool, member: str
) -> None:
    bad = _damaged_large_member(saved, tmp_path, monkeypatch, member, mapped=mapped)
    kb = KnowledgeBase.load(bad)  # nothing written: the save would copy every member
    with pytest.raises(BundleError, match=f"{_damage_named(member)}.*nothing was written"):
        kb.save(tmp_path / "new.noema")
    assert not (tmp_path / "new.noema").exists()


def test_a_bundle_replaced_on_disk_after_opening_is_copied_from_what_was_opened(
    saved: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    company_kb: KnowledgeBase,
    mapped: bool,
) -> None:
    path = tmp_path / "kb.noema"
    path.write_bytes(saved.read_bytes())
    kb = KnowledgeBase.load(path, embedder=company_kb.embedder, extractor=company_kb.extractor)
    theirs = KnowledgeBase(embedder=company_kb.embedder, extractor=company_kb.extractor)
    theirs.ingest(["Grace Hopper designed COBOL."])
    theirs.save(tmp_path / "theirs.noema")
    os.replace(tmp_path / "theirs.noema", path)  # another program's save moved over it
    replaced = path.read_bytes()
    with pytest.raises(BundleError, match="replaced by another program since"):
        kb.save(path)  # as before: that program's save is not dropped
    assert path.read_bytes() == replaced
    made = _made(monkeypatch)
    kb.save(tmp_path / "elsewhere.noema")  # the bytes opened, not the file there now
    assert made == []
    assert (tmp_path / "elsewhere.noema").read_bytes() == saved.read_bytes()


@pytest.mark.parametrize(
    "member",
    ["embeddings.bin", "graph.columns", "graph.json", "index.faiss", "names.bin", "sentences.bin"],
)
@pytest.mark.parametrize("saved_before", [False, True], ids=["first-save", "after-a-save"])
def test_a_member_written_in_place_unseen_is_refused_as_it_is_copied(
    saved: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    company_kb: KnowledgeBase,
    member: str,
    saved_before: bool,
) -> None:
    # a mapped bundle written in place with its size and time kept (touch -r) after its
    # members were hashed (on opening, or before an earlier save) was copied into a bundle that
    # then refused to open
    monkeypatch.setattr(container, "READ_WHOLE_BELOW", 0)
    path = tmp_path / "kb.noema"
    path.write_bytes(saved.read_bytes())
    kb = KnowledgeBase.load(path, embedder=company_kb.embedder)
    if saved_before:
        kb.save(tmp_path / "before.noema")
    _written_in_place(path, member, keep_time=True)
    with pytest.raises(BundleError, match=f"{re.escape(member)}.*nothing was written"):
        kb.save(tmp_path / "new.noema")
    assert not (tmp_path / "new.noema").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_deflated_member_is_inflated_from_a_mebibyte_of_its_stream_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a 64 MiB block was fed whole, and what the inflater left of it copied again at each step
    content = os.urandom(1 << 20) * 3 + bytes(3 << 20)
    deflater = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    stream = deflater.compress(content) + deflater.flush()
    fed: list[int] = []

    class Recorded:
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def decompress(self, data: Any, limit: int) -> bytes:
            fed.append(len(data))
            return bytes(self._inner.decompress(data, limit))

        def __getattr__(self, name: str) -> Any:
            return getattr(self._inner, name)

    real = zlib.decompressobj
    monkeypatch.setattr(copying.zlib, "decompressobj", lambda *a: Recorded(real(*a)))
    copied = copying._CopiedContent("kb.noema", "graph.json", len(content), inflate=True)
    copied.update(stream)
    copied.check(hashlib.sha256(content).hexdigest())
    assert max(fed) <= 1 << 20 and len(stream) > 3 << 20
    assert copied.crc == zlib.crc32(content)
