"""Attacks from the catalogue in docs/security.md: what Noema saves always loads, a hostile
bundle is one clear error, and the CLI never shows a traceback."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import noema
from noema import KnowledgeBase
from noema.cli import main


def _nested(levels: int) -> object:
    value: object = "leaf"
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    "number", [2**64, -(2**63) - 1, 7 * 10**400], ids=["2**64", "-2**63-1", "400 digits"]
)
def test_an_integer_a_bundle_cannot_read_back_is_refused_at_ingest(
    make_kb: Callable[..., KnowledgeBase], number: int
) -> None:
    # json wrote it, orjson read it back as a float (changed) or as infinity (refused on load)
    kb = make_kb()
    with pytest.raises(ValueError, match="'serial'.*outside the 64-bit range"):
        kb.ingest([noema.Document("Larry Page founded Google.", metadata={"serial": number})])
    assert not kb.graph.documents


def test_the_widest_integers_come_back_exactly(
    make_kb: Callable[..., KnowledgeBase], tmp_path: Path
) -> None:
    kb = make_kb()
    metadata = {"high": 2**64 - 1, "low": -(2**63), "listed": [2**63, 1]}
    kb.ingest([noema.Document("Larry Page founded Google.", id="g", metadata=metadata)])
    loaded = KnowledgeBase.load(kb.save(tmp_path / "kb.noema"))
    stored = dict(loaded.graph.documents["g"].metadata)
    assert {k: stored[k] for k in metadata} == metadata
    assert all(type(v) is int for v in (stored["high"], stored["low"], *stored["listed"]))


def test_a_jsonl_record_with_a_huge_integer_is_skipped_and_the_bundle_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "Built", and every later query failed: the bundle held a number no reader takes
    (tmp_path / "r.jsonl").write_text(
        '{"text": "Larry Page founded Google.", "serial": ' + "7" * 400 + "}\n"
        '{"text": "Jensen Huang founded Nvidia.", "serial": 18446744073709551616}\n'
        '{"text": "Sundar Pichai is the CEO of Google.", "serial": 18446744073709551615}\n'
    )
    assert main(["build", str(tmp_path / "r.jsonl"), "-o", str(tmp_path / "kb.noema")]) == 0
    out, err = capsys.readouterr()
    assert "1 documents" in out
    assert "r.jsonl:1: skipped, holds an integer outside 64 bits" in err
    assert "r.jsonl:2: skipped, holds an integer outside 64 bits" in err
    (doc,) = KnowledgeBase.load(tmp_path / "kb.noema").graph.documents.values()
    assert doc.metadata["serial"] == 2**64 - 1


@pytest.mark.parametrize("levels", range(58, 66))
def test_metadata_ingest_accepts_is_saved_at_every_depth(
    make_kb: Callable[..., KnowledgeBase], tmp_path: Path, levels: int
) -> None:
    # graph.json holds metadata three levels below its top: 62 to 64 levels ingested and never
    # saved ("nested deeper than 64 levels" at every save)
    kb = make_kb()
    try:
        kb.ingest([noema.Document("Larry Page founded Google.", metadata={"n": _nested(levels)})])
    except ValueError as exc:
        assert "64 levels" in str(exc) and not kb.graph.documents
        return
    loaded = KnowledgeBase.load(kb.save(tmp_path / "kb.noema"))
    (doc,) = loaded.graph.documents.values()
    assert doc.metadata["n"] == _nested(levels)


# -- the zip directory against the members' bytes ------------------------------------------------
@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory, company_kb: KnowledgeBase) -> Path:
    path = tmp_path_factory.mktemp("attacks") / "kb.noema"
    company_kb.save(path)
    return path


def _said_deflated(source: Path, target: Path, member: str) -> Path:
    """``source`` with the central directory saying ``member`` is deflated; its bytes, and its
    local header, say stored."""
    data = bytearray(source.read_bytes())
    with zipfile.ZipFile(source) as zf:
        entry = zf.start_dir  # the central directory's first entry: 46 bytes, name, extras
    while True:
        assert data[entry : entry + 4] == b"PK\x01\x02"
        name_length, extra, comment = struct.unpack_from("<3H", data, entry + 28)
        if data[entry + 46 : entry + 46 + name_length] == member.encode():
            break
        entry += 46 + name_length + extra + comment
    assert struct.unpack_from("<H", data, entry + 10) == (zipfile.ZIP_STORED,)
    struct.pack_into("<H", data, entry + 10, zipfile.ZIP_DEFLATED)
    target.write_bytes(bytes(data))
    return target


@pytest.mark.parametrize(
    ("bundle", "member"),
    [("saved", "embeddings.bin"), ("saved", "graph.columns"), ("schema1", "embeddings.bin")],
)
def test_a_directory_saying_deflated_over_a_stored_member_is_one_error_line(
    saved: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], bundle: str, member: str
) -> None:
    # zlib.error escaped as a traceback (schema 1 bundles may hold deflated vectors, so theirs
    # are inflated, and fail there)
    source = saved if bundle == "saved" else Path(__file__).parent / "data" / "schema1.noema"
    bad = _said_deflated(source, tmp_path / "bad.noema", member)
    with pytest.raises(noema.BundleError, match=member):
        KnowledgeBase.load(bad)
    assert main(["query", str(bad), "Who founded Google?"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and err.count("\n") == 1 and member in err


_OPEN_UNDER_A_LIMIT = """
import resource, sys
import noema
noema.KnowledgeBase.load(sys.argv[1])  # models, faiss and a plain bundle: what a user has open
status = open("/proc/self/status").read()
size = int(status.split("VmSize:")[1].split()[0]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size + int(sys.argv[3]), resource.RLIM_INFINITY))
try:
    noema.KnowledgeBase.load(sys.argv[2])
    print("loaded")
except noema.BundleError as exc:
    print(f"BundleError: {exc}")
except MemoryError:
    print("MemoryError")
"""


def _open_under_a_limit(plain: Path, bundle: Path, headroom: int) -> str:
    """What a process that already opened ``plain`` makes of ``bundle`` when it may map only
    ``headroom`` more bytes."""
    result = subprocess.run(
        [sys.executable, "-c", _OPEN_UNDER_A_LIMIT, str(plain), str(bundle), str(headroom)],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "MALLOC_ARENA_MAX": "2"},
        timeout=600,
    )
    return result.stdout.strip() or f"exit {result.returncode}: {result.stderr[-300:]}"


def _zeros_bomb(source: Path, target: Path, member: str, size: int) -> Path:
    """``source`` with ``member`` replaced by ``size`` zero bytes, deflated (a few hundred
    kilobytes), and the manifest declaring that size."""
    with zipfile.ZipFile(source) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    manifest = json.loads(members["manifest.json"])
    manifest["members"][member]["size"] = size
    members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(target, "w") as zf:
        for name, data in members.items():
            if name != member:
                zf.writestr(name, data)
                continue
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w", force_zip64=True) as out:
                for _ in range(size >> 20):
                    out.write(bytes(1 << 20))
    return target


@pytest.mark.parametrize("member", ["embeddings.bin", "sentences.bin", "index.faiss"])
def test_a_deflated_vector_member_declaring_a_gigabyte_is_refused_before_inflating(
    saved: Path, tmp_path: Path, member: str
) -> None:
    # honest sizes, hashes aside: 1 GiB of zeros deflated to 1 MB; opening inflated it all
    # (2 GiB took 2.1 GB and ended in MemoryError), also from a LangChain retriever's JSON
    bomb = _zeros_bomb(saved, tmp_path / "bomb.noema", member, 1 << 30)
    assert bomb.stat().st_size < 4 << 20
    outcome = _open_under_a_limit(saved, bomb, 256 << 20)
    assert outcome.startswith("BundleError:") and f"{member} is compressed" in outcome, outcome


def test_schema_1_vectors_are_inflated_only_to_the_size_the_counts_give(tmp_path: Path) -> None:
    # bundles of the first schema deflated their vectors: still read, but not past their counts
    old = Path(__file__).parent / "data" / "schema1.noema"
    bomb = _zeros_bomb(old, tmp_path / "bomb.noema", "embeddings.bin", 1 << 30)
    outcome = _open_under_a_limit(old, bomb, 256 << 20)
    assert (
        outcome.startswith("BundleError:") and "embeddings.bin declares 1,073,741,824" in outcome
    ), outcome


# -- where a save writes --------------------------------------------------------------------------
def test_a_save_through_a_symbolic_link_writes_its_target(
    company_kb: KnowledgeBase, tmp_path: Path
) -> None:
    # the new file was moved over the link: the link became a file, its target stayed old
    (tmp_path / "store").mkdir()
    real = tmp_path / "store" / "kb.noema"
    real.write_bytes(b"old")
    link = tmp_path / "kb.noema"
    link.symlink_to(real)
    company_kb.save(link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert KnowledgeBase.load(real).graph == company_kb.graph
    assert sorted(p.name for p in real.parent.iterdir()) == ["kb.noema"]  # no temporary left


@pytest.mark.parametrize("kind", ["pipe", "directory", "link to a pipe"])
def test_a_save_over_anything_but_a_regular_file_is_refused(
    company_kb: KnowledgeBase, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    # as root, `noema build text.txt -o /dev/full` printed "Built /dev/full" and replaced the
    # device; a pipe here, which any user may make
    special = tmp_path / "special"
    if kind == "directory":
        special.mkdir()
    else:
        os.mkfifo(special)
    path = special if kind != "link to a pipe" else tmp_path / "link"
    if kind == "link to a pipe":
        path.symlink_to(special)
    with pytest.raises(ValueError, match="not a regular file|a directory"):
        company_kb.save(path)
    assert special.exists() and not special.is_file()
    (tmp_path / "a.txt").write_text("Larry Page founded Google.")
    assert main(["build", str(tmp_path / "a.txt"), "-o", str(path)]) == 1
    out, err = capsys.readouterr()
    assert err.startswith("Error: cannot save to") and err.count("\n") == 1 and "parsing" not in err
    assert not (special.is_file() or special.is_symlink())


def test_an_ingest_whose_save_fails_is_undone(
    make_kb: Callable[..., KnowledgeBase], tmp_path: Path
) -> None:
    kb = make_kb()
    kb.ingest(["Larry Page founded Google."], save_to=tmp_path / "kb.noema")
    before = kb.state
    (tmp_path / "folder").mkdir()
    with pytest.raises(ValueError, match="a directory"):
        kb.ingest(["Grace Hopper designed COBOL."], save_to=tmp_path / "folder")
    assert kb.state is before and "Hopper" not in kb.retrieve("Who designed COBOL?").text
    kb.ingest(["Grace Hopper designed COBOL."])  # the names of the undone ingest are forgotten
    assert len(kb.graph.documents) == 2
    assert KnowledgeBase.load(tmp_path / "kb.noema").graph.documents.keys() == {
        d for d in kb.graph.documents if "Larry" in kb.graph.documents[d].text
    }


# -- no network on load ----------------------------------------------------------------------------
_CONNECTIONS = """
import sys
connections = []


def record(event, args):
    if event in ("socket.connect", "socket.getaddrinfo", "socket.gethostbyname"):
        connections.append(repr(args)[:80])


sys.addaudithook(record)
import noema

try:
    kb = noema.KnowledgeBase.load(sys.argv[1])
    print(f"answered: {'Google' in kb.retrieve('Who founded Google?').text}")
except noema.MissingResourceError as exc:
    print(f"MissingResourceError: {exc}")
print(f"connections: {connections}")
"""


def _open_online(bundle: Path, hf_home: Path) -> list[str]:
    """What a process with downloads allowed (no HF_HUB_OFFLINE) prints opening ``bundle`` and
    asking it a question: the first line, then the connections it tried."""
    online = {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    }
    result = subprocess.run(
        [sys.executable, "-c", _CONNECTIONS, str(bundle)],
        capture_output=True,
        text=True,
        env={**online, "HF_HOME": str(hf_home)},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip().splitlines()[-2:]


def _naming(source: Path, target: Path, model: str) -> Path:
    with zipfile.ZipFile(source) as zf:
        members = {info: zf.read(info) for info in zf.infolist()}
    with zipfile.ZipFile(target, "w") as zf:
        for info, data in members.items():
            if info.filename == "manifest.json":
                manifest = json.loads(data)
                manifest["embedding_model"] = model
                data = json.dumps(manifest).encode()
            zf.writestr(info, data)
    return target


def test_a_bundle_naming_a_hub_model_opens_without_the_network(saved: Path, tmp_path: Path) -> None:
    # the clean MissingResourceError came after one HTTPS connection to huggingface.co: the Hub
    # client fetches its agent registry even with downloads off
    missing = _naming(saved, tmp_path / "missing.noema", "attacker/evil-model")
    first, connections = _open_online(missing, tmp_path / "hf")
    assert first.startswith("MissingResourceError: embedding model 'attacker/evil-model'")
    assert connections == "connections: []"
    # a model in the Hugging Face cache is read from its folder there, as a local one is
    from noema.resources import resolve_embedding_model

    repo = tmp_path / "hf" / "hub" / "models--someone--minilm"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("abc123")
    (repo / "snapshots").mkdir()
    (repo / "snapshots" / "abc123").symlink_to(resolve_embedding_model("all-MiniLM-L6-v2"))
    cached = _naming(saved, tmp_path / "cached.noema", "someone/minilm")
    first, connections = _open_online(cached, tmp_path / "hf")
    assert first == "answered: True" and connections == "connections: []"


# -- graph.columns: one string referenced many times -----------------------------------------------
def _shared_metadata(documents: int) -> Callable[[dict[str, bytes]], None]:
    """graph.columns with ``documents`` documents in all, the added ones sharing the first's
    text and all sharing one 390 KB metadata string of 130,000 empty lists (each parse of it
    makes about 8 MB of Python objects)."""
    from tests.test_bundle import _columns

    def update(arrays: dict[str, Any], strings: list[str]) -> None:
        import numpy as np

        added = documents - len(arrays["document_id"])
        ids = np.arange(len(strings), len(strings) + added, dtype=np.int32)
        strings.extend(f"copy{n}" for n in range(added))
        strings.append('{"a":[' + "[]," * 130_000 + "[]]}")
        text = arrays["document_text"][0]
        arrays["document_id"] = np.concatenate([arrays["document_id"], ids])
        arrays["document_text"] = np.concatenate(
            [arrays["document_text"], np.full(added, text, np.int32)]
        )
        arrays["document_metadata"] = np.full(documents, len(strings) - 1, np.int32)
        by_id = sorted(range(documents), key=lambda n: strings[arrays["document_id"][n]])
        arrays["document_id_order"] = np.asarray(by_id, np.int32)  # the documents' id order

    columns = _columns(update)

    def change(members: dict[str, bytes]) -> None:
        columns(members)
        manifest = json.loads(members["manifest.json"])
        manifest["counts"]["documents"] = documents
        members["manifest.json"] = json.dumps(manifest).encode()

    return change


def test_a_string_referenced_by_every_document_is_refused_before_it_is_multiplied(
    saved: Path, tmp_path: Path
) -> None:
    # a 0.4 MB bundle of 400 documents pointing at one metadata string peaked at 3.6 GB; one of
    # 10,000 documents sharing a 1 MB string opened, and its save needed a 10 GB graph.json
    from tests.test_bundle import rewrite

    bad = rewrite(saved, tmp_path / "shared.noema", _shared_metadata(400), fix_manifest=True)
    assert bad.stat().st_size < 1 << 20
    outcome = _open_under_a_limit(saved, bad, 512 << 20)
    assert outcome.startswith("BundleError:") and "made to be multiplied" in outcome, outcome
    # a budget the caller sets is what counts: the same bundle, trusted with 8 GiB, opens, its
    # metadata parsed once
    kb = KnowledgeBase.load(bad, max_memory=8 << 30)
    documents = list(kb.graph.documents.values())
    assert len(documents) == 400 and len(documents[-1].metadata["a"]) == 130_001
    assert documents[0].metadata is not documents[1].metadata
    with pytest.raises(noema.BundleError, match="more than the budget"):
        KnowledgeBase.load(bad, max_memory=1 << 30)
