"""What ingest or load accepts can be saved, bad input is one clear error, and a save
keeps the bundle's permissions."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noema
from noema import KnowledgeBase
from noema.cli import main
from tests.test_bundle import _columns, _without_columns, rewrite

DEEP = "[" * 1000 + "]" * 1000


@pytest.fixture(scope="module")
def small_kb(
    embedder: noema.SentenceTransformerEmbedder, extractor: noema.SpacyExtractor
) -> KnowledgeBase:
    kb = KnowledgeBase(embedder=embedder, extractor=extractor)
    kb.ingest(
        [noema.Document("Larry Page founded Google.", id="g", metadata={"deep": "PLACEHOLDER"})]
    )
    return kb


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_save_keeps_the_mode_of_the_file_it_replaces(
    small_kb: KnowledgeBase, tmp_path: Path
) -> None:
    # save() left every bundle at 0600 (mkstemp's mode): other users lost access after a save
    target = tmp_path / "kb.noema"
    old = os.umask(0o022)
    try:
        small_kb.save(target)
        assert _mode(target) == 0o644  # a new file: what open() gives under the umask
        target.chmod(0o640)
        small_kb.save(target)
        assert _mode(target) == 0o640
    finally:
        os.umask(old)


def test_a_file_name_that_is_not_utf8_is_saved(
    make_kb: Callable[..., KnowledgeBase], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it ingested, then every save, to_bytes and pickle raised UnicodeEncodeError
    name = os.fsdecode(b"caf\xe9.txt")  # what Python makes of the byte: a lone surrogate
    (tmp_path / name).write_text("Larry Page founded Google.", encoding="utf-8")
    kb = make_kb()
    kb.ingest(Path(tmp_path / name))
    (doc_id,) = kb.graph.documents
    assert doc_id.endswith("caf\\xe9.txt")
    kb.save(tmp_path / "kb.noema")
    assert list(KnowledgeBase.load(tmp_path / "kb.noema").graph.documents) == [doc_id]
    assert main(["build", str(tmp_path), "-o", str(tmp_path / "cli.noema")]) == 0
    assert "1 documents" in capsys.readouterr().out


def _deep_bundle(small_kb: KnowledgeBase, tmp_path: Path) -> Path:
    """The small bundle with metadata nested too deeply, read from graph.json (no columns)."""
    small_kb.save(tmp_path / "plain.noema")

    def deepen(members: dict[str, bytes]) -> None:
        _without_columns(members)
        members["graph.json"] = members["graph.json"].replace(b'"PLACEHOLDER"', DEEP.encode())

    return rewrite(tmp_path / "plain.noema", tmp_path / "deep.noema", deepen, fix_manifest=True)


def _deep_metadata(arrays: dict[str, Any], strings: list[str]) -> None:
    (number,) = [n for n, text in enumerate(strings) if '"PLACEHOLDER"' in text]
    strings[number] = strings[number].replace('"PLACEHOLDER"', DEEP)


def test_a_bundle_whose_metadata_could_not_be_saved_again_is_refused_on_load(
    small_kb: KnowledgeBase, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it loaded (orjson reads 1,024 levels), and the next save raised RecursionError
    deep = _deep_bundle(small_kb, tmp_path)
    with pytest.raises(noema.BundleError, match="nested deeper than 64 levels"):
        KnowledgeBase.load(deep)
    # the same metadata in graph.columns, which is read instead of graph.json
    columnar = rewrite(
        tmp_path / "plain.noema",
        tmp_path / "deep_columns.noema",
        _columns(_deep_metadata),
        fix_manifest=True,
    )
    with pytest.raises(noema.BundleError, match="nested deeper than 64 levels"):
        KnowledgeBase.load(columnar)
    assert (
        main(["merge", str(deep), str(tmp_path / "plain.noema"), "-o", str(tmp_path / "m.noema")])
        == 1
    )
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and err.count("\n") == 1 and "64 levels" in err


def test_ingest_refuses_metadata_a_bundle_cannot_hold(
    make_kb: Callable[..., KnowledgeBase],
) -> None:
    kb = make_kb()
    deep: object = "leaf"
    for _ in range(100):
        deep = [deep]
    with pytest.raises(ValueError, match="'nested'.*64 levels"):
        kb.ingest([noema.Document("Larry Page founded Google.", metadata={"nested": deep})])
    with pytest.raises(ValueError, match="'who'"):
        kb.ingest([noema.Document("Larry Page founded Google.", metadata={"who": "caf\udce9"})])
    with pytest.raises(ValueError, match="document id"):
        kb.ingest([noema.Document("Larry Page founded Google.", id="caf\udce9")])
    assert not kb.graph.documents


# text with lone surrogates too (hypothesis leaves them out by default): Python strings hold them
_TEXT = st.text(st.characters(categories=["Cs", "Lu", "Ll", "Nd", "Zs", "Po", "Cc"]), max_size=8)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _TEXT,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(), children, max_size=3)
    ),
    max_leaves=12,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(metadata=st.dictionaries(_TEXT, _JSON, max_size=3), doc_id=_TEXT)
def test_whatever_ingest_accepts_save_can_write(
    embedder: noema.SentenceTransformerEmbedder, metadata: dict[str, object], doc_id: str
) -> None:
    # with a blank extractor (no facts): the property is about documents reaching the bundle
    kb = KnowledgeBase(embedder=embedder, extractor=_NoFacts())
    try:
        kb.ingest([noema.Document("Some text.", id=doc_id, metadata=metadata)])
    except (TypeError, ValueError):
        return  # refused at the boundary: nothing to save
    data = kb.to_bytes()
    assert (
        KnowledgeBase.from_bytes(
            data, embedder=embedder, extractor=_NoFacts()
        ).graph.documents.keys()
        == kb.graph.documents.keys()
    )


class _NoFacts:
    """An extractor that finds nothing: the documents alone reach the graph (a stand-in, for a
    test about what the bundle can hold, not about extraction)."""

    def extract(self, documents: list[noema.Document]) -> noema.SemanticGraph:
        graph = noema.SemanticGraph()
        for doc in documents:
            graph.add_document(doc)
        return graph


def test_jsonl_records_with_nan_or_infinity_are_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the whole build aborted with a TypeError
    (tmp_path / "r.jsonl").write_text(
        '{"text": "Larry Page founded Google.", "score": NaN}\n'
        '{"text": "Jensen Huang founded Nvidia.", "n": 1e400}\n'
        '{"text": "Sundar Pichai is the CEO of Google."}\n'
    )
    assert main(["build", str(tmp_path / "r.jsonl"), "-o", str(tmp_path / "kb.noema")]) == 0
    out, err = capsys.readouterr()
    assert "1 documents" in out
    assert "r.jsonl:1: skipped, holds NaN" in err and "r.jsonl:2: skipped, holds NaN" in err


def test_a_question_that_is_not_unicode_is_one_clear_error(
    company_kb: KnowledgeBase, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="lone surrogate at index 3"):
        company_kb.retrieve("Caf\udce9?")
    company_kb.save(tmp_path / "kb.noema")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "noema",
            "query",
            str(tmp_path / "kb.noema"),
            os.fsdecode(b"Caf\xe9"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert (
        result.stderr.startswith("Error: question holds a lone surrogate")
        and result.stderr.count("\n") == 1
    )


def test_a_mention_of_a_document_the_bundle_does_not_hold_is_refused(
    small_kb: KnowledgeBase, tmp_path: Path
) -> None:
    # it loaded, although every id graph.json references is said to be checked
    small_kb.save(tmp_path / "plain.noema")

    def stray(members: dict[str, bytes]) -> None:
        _without_columns(members)  # (graph.columns holds a document row: out of range)
        graph = json.loads(members["graph.json"])
        graph["entities"][0]["mentions"][0][0] = "nowhere"
        members["graph.json"] = json.dumps(graph).encode()

    bad = rewrite(tmp_path / "plain.noema", tmp_path / "bad.noema", stray, fix_manifest=True)
    with pytest.raises(noema.BundleError, match="'nowhere'"):
        KnowledgeBase.load(bad)


class _StrayMentions(_NoFacts):
    """An extractor breaking its contract: an entity mentioned in a document it was not given."""

    def extract(self, documents: list[noema.Document]) -> noema.SemanticGraph:
        graph = super().extract(documents)
        graph.add_entity("Google", "ORG", mentions=[noema.Mention("elsewhere", 0, 6)])
        return graph


def test_an_extractor_mentioning_a_document_it_was_not_given_is_refused(
    embedder: noema.SentenceTransformerEmbedder,
) -> None:
    kb = KnowledgeBase(embedder=embedder, extractor=_StrayMentions())
    with pytest.raises(noema.GraphError, match="'elsewhere'"):
        kb.ingest(["Google is a company."])
    assert not kb.graph.documents


def test_opening_a_bundle_that_names_a_hub_model_reaches_no_network(
    small_kb: KnowledgeBase, tmp_path: Path
) -> None:
    # a manifest naming "attacker/evil-model" made noema do 25 DNS lookups without
    # HF_HUB_OFFLINE; loading now looks only at installed packages, local paths and the cache
    small_kb.save(tmp_path / "plain.noema")

    def hub_model(members: dict[str, bytes]) -> None:
        manifest = json.loads(members["manifest.json"])
        manifest["embedding_model"] = "attacker/evil-model"
        members["manifest.json"] = json.dumps(manifest).encode()

    bundle = rewrite(tmp_path / "plain.noema", tmp_path / "hub.noema", hub_model)
    online = {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    }
    online["HF_HOME"] = str(tmp_path / "hf")  # an empty cache: nothing to find locally
    result = subprocess.run(
        [sys.executable, "-m", "noema", "query", str(bundle), "Who founded Google?"],
        capture_output=True,
        text=True,
        env=online,
        timeout=300,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("Error: embedding model 'attacker/evil-model' is not installed")
    assert "allow_download=True" in result.stderr and result.stderr.count("\n") == 1
    with pytest.raises(noema.MissingResourceError, match="allow_download"):
        KnowledgeBase.load(bundle)


def _padded_bundle(small_kb: KnowledgeBase, tmp_path: Path, padding: int) -> Path:
    """The small bundle with ``padding`` spaces after graph.json's opening brace (still valid
    JSON), its true size and sha256 in the manifest, deflated as a bomb is."""
    import hashlib
    import zipfile

    small_kb.save(tmp_path / "plain.noema")
    with zipfile.ZipFile(tmp_path / "plain.noema") as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    # read from graph.json: with graph.columns, graph.json is only streamed through its hash
    _without_columns(members)
    members["graph.json"] = b"{" + b" " * padding + members["graph.json"][1:]
    manifest = json.loads(members["manifest.json"])
    manifest["members"]["graph.json"] = {
        "size": len(members["graph.json"]),
        "sha256": hashlib.sha256(members["graph.json"]).hexdigest(),
    }
    members["manifest.json"] = json.dumps(manifest).encode()
    target = tmp_path / "padded.noema"
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return target


_PEAK_RSS = """
import resource, sys
import noema
try:
    noema.KnowledgeBase.load(sys.argv[1], **eval(sys.argv[2]))
    outcome = "loaded"
except noema.BundleError as exc:
    outcome = f"BundleError: {exc}"
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, outcome)
"""


def _open_in_subprocess(path: Path, options: str) -> tuple[int, str]:
    """Peak RSS (MiB) of a fresh process that opens the bundle, and what happened."""
    result = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, str(path), options],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    peak, outcome = result.stdout.strip().split(" ", 1)
    return int(peak), outcome


def test_a_small_bundle_that_declares_a_huge_graph_is_refused_before_inflating(
    small_kb: KnowledgeBase, tmp_path: Path
) -> None:
    # a 1 MB file padded with spaces, its true size in the manifest, took
    # 2.1 GB to open, and loaded; 512 MiB of spaces deflate to about half a megabyte
    bomb = _padded_bundle(small_kb, tmp_path, 512 << 20)
    assert bomb.stat().st_size < 2 << 20
    baseline, outcome = _open_in_subprocess(tmp_path / "plain.noema", "{}")
    assert outcome == "loaded"
    peak, outcome = _open_in_subprocess(bomb, "{}")
    assert outcome.startswith("BundleError:") and "looks like padding" in outcome
    assert peak < baseline + 64  # MiB: nothing of the declared 512 MiB was inflated
    # a budget the caller sets is what counts: too small for the declared graph, refused
    peak, outcome = _open_in_subprocess(bomb, "{'max_memory': 1 << 30}")
    assert "more than the budget of 1,024 MiB" in outcome and peak < baseline + 64


def test_the_budget_counts_what_opening_holds_of_the_vectors(
    small_kb: KnowledgeBase, tmp_path: Path
) -> None:
    """Vectors stored as they are are read in place: the budget counts exact search's float16
    copy of the fact and sentence vectors (half their size) and nothing of the other vector
    members. Counted at one and a half times every vector member, a three-million-fact base was
    refused under the default budget of a 24 GB machine it opens in 4.4 GB of."""
    import math
    import zipfile

    path = small_kb.save(tmp_path / "kb.noema")
    with zipfile.ZipFile(path) as zf:
        sizes = {info.filename: info.file_size for info in zf.infolist()}
    assert sizes["index.faiss"] > 0  # counted as nothing
    searched = sizes["embeddings.bin"] + sizes.get("sentences.bin", 0)
    needed = math.ceil(4 * sizes["graph.columns"] + 0.5 * searched)
    assert KnowledgeBase.load(path, max_memory=needed).graph.documents.keys() == {"g"}
    with pytest.raises(noema.BundleError, match="pass max_memory="):
        KnowledgeBase.load(path, max_memory=needed - 2)


def test_the_budget_counts_the_vectors_whole_where_the_file_cannot_be_read_in_place(
    small_kb: KnowledgeBase, tmp_path: Path
) -> None:
    """Where the file cannot be mapped, the members are read into memory: every vector member,
    and the word index, counts its whole size besides (a budget for reading in place would let
    it run out)."""
    import math
    import zipfile

    from noema.storage._reading import check_budget

    path = small_kb.save(tmp_path / "kb.noema")
    with zipfile.ZipFile(path) as zf:
        sizes = {info.filename: info.file_size for info in zf.infolist()}
        searched = sizes["embeddings.bin"] + sizes.get("sentences.bin", 0)
        in_place = math.ceil(4 * sizes["graph.columns"] + 0.5 * searched)
        # and the word index, read in place too
        read_in_place = (".bin", ".faiss", ".ivf", ".words")
        vectors = sum(n for m, n in sizes.items() if m.endswith(read_in_place))
        check_budget(zf, "kb", in_place, columnar=True, in_place=True)
        with pytest.raises(noema.BundleError, match="pass max_memory="):
            check_budget(zf, "kb", in_place, columnar=True, in_place=False)
        check_budget(zf, "kb", in_place + vectors + 1, columnar=True, in_place=False)


def test_a_budget_the_caller_sets_bounds_what_opening_may_take(
    small_kb: KnowledgeBase, tmp_path: Path
) -> None:
    path = small_kb.save(tmp_path / "kb.noema")
    with pytest.raises(noema.BundleError, match="pass max_memory="):
        KnowledgeBase.load(path, max_memory=10_000)
    with pytest.raises(noema.BundleError, match="pass max_memory="):
        KnowledgeBase.from_bytes(path.read_bytes(), max_memory=10_000)
    assert KnowledgeBase.load(path, max_memory=1 << 30).graph.documents.keys() == {"g"}
    with pytest.raises(ValueError, match="max_memory must be a positive number"):
        KnowledgeBase.load(path, max_memory=0)
