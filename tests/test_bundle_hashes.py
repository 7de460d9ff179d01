"""Which sha256 checks opening a bundle makes, and which wait: small members and the manifest on
every opening; the large members (the vectors and columns read in place) on ``load(verify=True)``,
``noema validate``, and before their contents go into another bundle (a save, a merge). The
damage here is on disk (one bit of a member's stored bytes), with the manifest and the zip
directory left as they were."""

from __future__ import annotations

import re
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from noema import BundleError, KnowledgeBase
from noema.cli import main
from noema.storage import _opening, bundle, container
from tests.conftest import BUNDLE_MEMBERS
from tests.test_bundle import rewrite


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory, company_kb: KnowledgeBase) -> Path:
    path = tmp_path_factory.mktemp("hashes") / "kb.noema"
    company_kb.save(path)
    return path


def _manifest(path: Path) -> dict[str, Any]:
    import json

    with zipfile.ZipFile(path) as zf:
        manifest: dict[str, Any] = json.loads(zf.read("manifest.json"))
    return manifest


def _flipped(source: Path, target: Path, member: str, at: int) -> Path:
    """A copy of ``source`` with the lowest bit of byte ``at`` of ``member``'s stored bytes
    flipped (counted from its end when negative)."""
    data = bytearray(source.read_bytes())
    with zipfile.ZipFile(source) as zf:
        info = zf.getinfo(member)
    name_length, extra_length = struct.unpack_from("<HH", data, info.header_offset + 26)
    start = info.header_offset + 30 + name_length + extra_length
    data[start + at % info.compress_size] ^= 0x01
    target.write_bytes(bytes(data))
    return target


# Where one flipped bit leaves a member readable: the lowest bit of a float32 (little-endian, so
# its first byte) keeps a unit vector within the unit-length check; graph.json is not read on
# opening beside graph.columns
_STILL_READABLE: dict[str, Callable[[dict[str, Any]], int]] = {
    "sentences.bin": lambda manifest: 4 * 100,
    "names.bin": lambda manifest: 4 * manifest["names"]["rows"] + 4 * 100,
    "graph.json": lambda manifest: 200,
}


def _damage_named(member: str) -> str:
    """What an error about damage to ``member`` says: its sha256 differs, or (graph.json and
    the manifest are deflated) its stream no longer inflates."""
    return f"{re.escape(member)} (does not match its sha256|cannot be read)"


def _damaged_large_member(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, member: str, *, mapped: bool
) -> Path:
    """A copy of ``saved`` whose ``member`` has a flipped bit that leaves it readable, opened
    with every member counted as a large one (read whole, or mapped as a bundle past 64 MiB is)."""
    monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", 0)
    if mapped:
        monkeypatch.setattr(container, "READ_WHOLE_BELOW", 0)
    at = _STILL_READABLE[member](_manifest(saved))
    return _flipped(saved, tmp_path / "bad.noema", member, at)


_MAPPED = pytest.mark.parametrize("mapped", [False, True], ids=["read-whole", "mapped"])
_MEMBER = pytest.mark.parametrize("member", sorted(_STILL_READABLE))


@_MAPPED
@_MEMBER
def test_damage_in_a_large_member_opens_and_verify_and_validate_name_it(
    saved: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    company_kb: KnowledgeBase,
    member: str,
    mapped: bool,
) -> None:
    bad = _damaged_large_member(saved, tmp_path, monkeypatch, member, mapped=mapped)
    assert KnowledgeBase.load(bad).graph == company_kb.graph  # its structure is intact
    with pytest.raises(BundleError, match=_damage_named(member)):
        KnowledgeBase.load(bad, verify=True)
    with pytest.raises(BundleError, match=_damage_named(member)):
        KnowledgeBase.from_bytes(bad.read_bytes(), verify=True)
    assert main(["validate", str(bad)]) == 1
    assert re.search(f"^Error: .*{_damage_named(member)}", capsys.readouterr().err)


@_MAPPED
@_MEMBER
def test_a_save_of_a_base_opened_from_a_damaged_bundle_refuses_and_keeps_the_old_file(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, member: str, mapped: bool
) -> None:
    bad = _damaged_large_member(saved, tmp_path, monkeypatch, member, mapped=mapped)
    damaged = KnowledgeBase.load(bad)
    damaged.ingest(["Sundar Pichai was born in Madurai."])  # a write keeps the stored vectors
    before = bad.read_bytes()
    other = tmp_path / "other.noema"
    other.write_bytes(saved.read_bytes())
    for target in (bad, other, tmp_path / "new.noema"):
        with pytest.raises(BundleError, match=f"{_damage_named(member)}.*nothing was written"):
            damaged.save(target)
    with pytest.raises(BundleError, match=_damage_named(member)):
        damaged.to_bytes()
    assert bad.read_bytes() == before and other.read_bytes() == saved.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.noema", "other.noema"]


@_MEMBER
def test_a_base_opened_from_a_damaged_bundle_is_not_merged(
    saved: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    company_kb: KnowledgeBase,
    member: str,
) -> None:
    bad = _damaged_large_member(saved, tmp_path, monkeypatch, member, mapped=False)
    base = KnowledgeBase(embedder=company_kb.embedder, extractor=company_kb.extractor)
    base.ingest(["Marie Curie was born in Warsaw."])
    graph = base.graph
    with pytest.raises(BundleError, match=f"{_damage_named(member)}.*nothing was merged"):
        base.merge(KnowledgeBase.load(bad))
    assert base.graph is graph


def test_an_intact_large_member_is_hashed_once_by_a_save_that_copies_it(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # it was hashed before the save, then again as it was copied: at a million facts, 3 GB read
    # twice. The copy refuses bytes that do not match before its bundle is moved into place.
    monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", 0)
    monkeypatch.setattr(container, "READ_WHOLE_BELOW", 0)
    kb = KnowledgeBase.load(saved)
    hashed: list[str] = []
    real = container.check_hash

    def recorded(zf: zipfile.ZipFile, member: str, *args: Any) -> None:
        hashed.append(member)
        real(zf, member, *args)

    copied: list[str] = []
    real_copy = bundle.copy_member

    def copy_recorded(zf: zipfile.ZipFile, source: Any, member: str) -> tuple[int, str]:
        copied.append(member)
        return real_copy(zf, source, member)

    monkeypatch.setattr(container, "check_hash", recorded)
    monkeypatch.setattr(bundle, "copy_member", copy_recorded)
    kb.save(tmp_path / "a.noema")
    assert hashed == [] and sorted(copied) == sorted(_manifest(saved)["members"])
    kb.save(tmp_path / "b.noema")
    assert hashed == []  # each copy hashes what it copies, and nothing else is hashed
    assert (tmp_path / "a.noema").read_bytes() == saved.read_bytes()


@pytest.mark.parametrize("member", ["names.bin", "sentences.bin"])
def test_a_member_a_save_does_not_copy_is_hashed_before_it(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, member: str
) -> None:
    bad = _damaged_large_member(saved, tmp_path, monkeypatch, member, mapped=True)
    kb = KnowledgeBase.load(bad)
    kb.delete_documents([next(iter(kb.graph.documents))])  # a write: every member is made
    with pytest.raises(BundleError, match=f"{_damage_named(member)}.*nothing was written"):
        kb.save(tmp_path / "new.noema")


def test_a_member_up_to_the_limit_is_hashed_on_every_opening(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = _flipped(saved, tmp_path / "bad.noema", "sentences.bin", 4 * 100)
    size = _manifest(saved)["members"]["sentences.bin"]["size"]
    monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", size)
    with pytest.raises(BundleError, match="sentences.bin does not match its sha256"):
        KnowledgeBase.load(bad)
    monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", size - 1)
    KnowledgeBase.load(bad)  # a byte larger: its sha256 waits for verify=True or a save


def test_a_damaged_manifest_fails_every_opening(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", 0)
    bad = _flipped(saved, tmp_path / "bad.noema", "manifest.json", 100)
    with pytest.raises(BundleError, match="manifest.json"):
        KnowledgeBase.load(bad)


@pytest.mark.parametrize("member", BUNDLE_MEMBERS)
def test_validate_names_a_flipped_bit_in_every_member(
    saved: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], member: str
) -> None:
    with zipfile.ZipFile(saved) as zf:
        assert member in zf.namelist()
        middle = zf.getinfo(member).compress_size // 2
    bad = _flipped(saved, tmp_path / "bad.noema", member, middle)
    assert main(["validate", str(bad)]) == 1
    assert re.search(f"^Error: .*{_damage_named(member)}", capsys.readouterr().err)


# Where each vector member's first row starts, and what its refusal says: a hostile bundle (its
# manifest's sha256 rewritten to match) whose first row is 1000 times too long.
_FIRST_ROW: dict[str, tuple[Callable[[dict[str, Any]], int], str]] = {
    "embeddings.bin": (lambda manifest: 0, "unit vector"),
    "sentences.bin": (lambda manifest: 0, "unit vector"),
    "names.bin": (lambda manifest: 4 * manifest["names"]["rows"], "unit length"),
}


def _first_row_changed(
    saved: Path, target: Path, member: str, how: Callable[[np.ndarray], np.ndarray]
) -> Path:
    """A copy of ``saved`` whose ``member``'s first vector is ``how`` of it, the manifest's
    sha256 rewritten to match."""
    at = _FIRST_ROW[member][0](_manifest(saved))

    def change(stored: dict[str, bytes]) -> None:
        data = bytearray(stored[member])
        row = how(np.frombuffer(bytes(data[at : at + 4 * 384]), dtype="<f4").copy())
        data[at : at + 4 * 384] = row.astype("<f4").tobytes()
        stored[member] = bytes(data)

    return rewrite(saved, target, change, fix_manifest=True)


def _longer_first_row(saved: Path, target: Path, member: str) -> Path:
    return _first_row_changed(saved, target, member, lambda row: row * 1000)


@_MAPPED
@pytest.mark.parametrize("member", sorted(_FIRST_ROW))
def test_a_longer_vector_in_a_large_member_is_refused_by_verify_validate_and_a_save(
    saved: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    member: str,
    mapped: bool,
) -> None:
    message = f"{re.escape(member)}.*{_FIRST_ROW[member][1]}"
    small = _longer_first_row(saved, tmp_path / "small.noema", member)
    with pytest.raises(BundleError, match=_FIRST_ROW[member][1]):
        KnowledgeBase.load(small)  # a member hashed on opening has every row checked too
    monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", 0)
    if mapped:
        monkeypatch.setattr(container, "READ_WHOLE_BELOW", 0)
    bad = _longer_first_row(saved, tmp_path / "bad.noema", member)
    damaged = KnowledgeBase.load(bad)  # a large one: every row is read with its sha256
    with pytest.raises(BundleError, match=_FIRST_ROW[member][1]):
        KnowledgeBase.load(bad, verify=True)
    assert main(["validate", str(bad)]) == 1
    assert _FIRST_ROW[member][1] in capsys.readouterr().err
    with pytest.raises(BundleError, match=f"{message}.*nothing was written"):
        damaged.save(tmp_path / "new.noema")
    assert not (tmp_path / "new.noema").exists()


def _not_finite_first_row(saved: Path, target: Path, member: str) -> Path:
    def with_nan(row: np.ndarray) -> np.ndarray:
        row[0] = np.nan
        return row

    return _first_row_changed(saved, target, member, with_nan)


@_MAPPED
@pytest.mark.parametrize("member", sorted(_FIRST_ROW))
def test_a_value_that_is_not_finite_is_refused_where_it_is_read(
    saved: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    member: str,
    mapped: bool,
) -> None:
    # a large member is not read whole on opening; a NaN is refused when the row is read, by
    # a search (the vectors) or by the first write (the names), never ranked or kept
    monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", 0)
    if mapped:
        monkeypatch.setattr(container, "READ_WHOLE_BELOW", 0)
    damaged = KnowledgeBase.load(_not_finite_first_row(saved, tmp_path / "bad.noema", member))
    with pytest.raises(BundleError, match="NaN or infinite"):
        if member == "names.bin":
            damaged.ingest(["Larry Page founded Google."])
        else:
            damaged.retrieve("Who founded Google?", format="sentences", top_k=50)
