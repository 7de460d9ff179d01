"""The members of a bundle agree with one another (noema/storage/_agreement.py): graph.json holds
the graph graph.columns holds, and index.faiss the rows of embeddings.bin. ``load(verify=True)``,
``noema validate`` and a save copying the members check it; the bundles here lie with hashes
written to match, so no sha256 check sees them."""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from noema import BundleError, Document, KnowledgeBase, SemanticGraph
from noema.cli import main
from noema.errors import quote_value
from noema.model.records import json_bytes
from noema.storage import _agreement, container
from noema.storage._agreement import written_graph_json_digest
from noema.vectors.index import FLAT_HEADER_BYTES


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory, company_kb: KnowledgeBase) -> Path:
    return company_kb.save(tmp_path_factory.mktemp("agreement") / "kb.noema")


def lying(source: Path, target: Path, change: Callable[[dict[str, bytes]], None]) -> Path:
    """A copy of ``source`` with ``change`` made to its members, each stored or deflated as
    before, and a manifest declaring the new sizes and sha256: what a hostile writer, or another
    tool, writes."""
    with zipfile.ZipFile(source) as zf:
        infos = zf.infolist()
        members = {info.filename: zf.read(info) for info in infos}
    change(members)
    manifest = json.loads(members["manifest.json"])
    for name, entry in manifest["members"].items():
        entry.update(size=len(members[name]), sha256=hashlib.sha256(members[name]).hexdigest())
    members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(target, "w") as zf:
        for info in infos:
            zf.writestr(info.filename, members[info.filename], compress_type=info.compress_type)
    return target


def _graph_json(update: Callable[[dict], None]) -> Callable[[dict[str, bytes]], None]:  # type: ignore[type-arg]
    def change(members: dict[str, bytes]) -> None:
        graph = json.loads(members["graph.json"])
        update(graph)
        members["graph.json"] = json.dumps(graph, sort_keys=True).encode()

    return change


def _not_json(members: dict[str, bytes]) -> None:
    members["graph.json"] = b'{"documents": [not json'


def _empty(graph: dict) -> None:  # type: ignore[type-arg]
    for kind in ("documents", "entities", "relations", "events", "merge_log"):
        graph[kind] = []


def _other_text(graph: dict) -> None:  # type: ignore[type-arg]
    document = graph["documents"][0]
    document["text"] = document["text"].replace("Google", "Gooble")  # the spans still fit
    document["text"] = document["text"].replace("Nvidia", "Nvidio")


def _other_entity_name(graph: dict) -> None:  # type: ignore[type-arg]
    graph["entities"][0]["name"] += " Jr"


def _fewer_facts(graph: dict) -> None:  # type: ignore[type-arg]
    graph["relations"].pop()


def _reversed_index_rows(members: dict[str, bytes]) -> None:
    index = members["index.faiss"]
    header, rows = index[:FLAT_HEADER_BYTES], index[FLAT_HEADER_BYTES:]
    width = len(rows) // json.loads(members["manifest.json"])["counts"]["facts"]
    flipped = [rows[at : at + width] for at in range(0, len(rows), width)][::-1]
    members["index.faiss"] = header + b"".join(flipped)


def _words_of_other_sentences(members: dict[str, bytes]) -> None:
    """sentences.words as a writer of another sidecar's word index leaves it: the digest of
    the sentence keys it was written for is another."""
    data = bytearray(members["sentences.words"])
    data[48:80] = hashlib.sha256(b"other sentences").digest()  # the header's keys digest
    members["sentences.words"] = bytes(data)


LIES = {
    "graph.json-not-json": (_not_json, "graph.json"),
    "graph.json-empty": (_graph_json(_empty), "graph.json"),
    "graph.json-other-text": (_graph_json(_other_text), "graph.json"),
    "graph.json-other-entity": (_graph_json(_other_entity_name), "graph.json"),
    "graph.json-fewer-facts": (_graph_json(_fewer_facts), "graph.json"),
    "index.faiss-rows-reversed": (_reversed_index_rows, "index.faiss"),
    "sentences.words-other-sentences": (_words_of_other_sentences, "sentences.words"),
}


@pytest.fixture(params=sorted(LIES))
def lie(request: pytest.FixtureRequest, saved: Path, tmp_path: Path) -> tuple[Path, str]:
    """A bundle that lies, and the member named when it is refused."""
    change, member = LIES[request.param]
    return lying(saved, tmp_path / "lying.noema", change), member


@pytest.fixture(params=[False, True], ids=["read-whole", "mapped"])
def mapped(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    if request.param:
        monkeypatch.setattr(container, "READ_WHOLE_BELOW", 0)
    return bool(request.param)


def test_the_lying_bundles_open_and_every_sha256_matches(
    lie: tuple[Path, str], company_kb: KnowledgeBase
) -> None:
    # what the checks below are about: no hash sees the lie, and opening reads graph.columns
    bad, _ = lie
    assert KnowledgeBase.load(bad, embedder=company_kb.embedder).graph == company_kb.graph


def test_validate_and_verify_refuse_members_that_disagree(
    lie: tuple[Path, str], capsys: pytest.CaptureFixture[str], company_kb: KnowledgeBase
) -> None:
    # graph.json that was not JSON, an empty graph or another graph passed `noema validate`
    bad, member = lie
    with pytest.raises(BundleError, match=member):
        KnowledgeBase.load(bad, embedder=company_kb.embedder, verify=True)
    with pytest.raises(BundleError, match=member):
        KnowledgeBase.from_bytes(bad.read_bytes(), embedder=company_kb.embedder, verify=True)
    assert main(["validate", str(bad)]) == 1
    error = capsys.readouterr().err
    assert error.startswith("Error: ") and member in error


def test_a_save_copying_members_that_disagree_refuses_and_writes_nothing(
    lie: tuple[Path, str], tmp_path: Path, company_kb: KnowledgeBase, mapped: bool
) -> None:
    # the save copied the lying member byte for byte into a bundle that validate also passed
    bad, member = lie
    kb = KnowledgeBase.load(bad, embedder=company_kb.embedder)
    for _ in range(2):  # refused again: the check is not spent by a failure
        with pytest.raises(BundleError, match=f"{member}.*nothing was written"):
            kb.save(tmp_path / "copied.noema")
    with pytest.raises(BundleError, match=member):
        kb.to_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lying.noema"]


def test_a_bundle_whose_members_agree_is_checked_once_then_copied(
    saved: Path, tmp_path: Path, company_kb: KnowledgeBase, mapped: bool
) -> None:
    kb = KnowledgeBase.load(saved, embedder=company_kb.embedder)
    assert kb.save(tmp_path / "copied.noema").read_bytes() == saved.read_bytes()
    assert kb.to_bytes() == saved.read_bytes()
    assert main(["validate", str(tmp_path / "copied.noema")]) == 0


def test_verify_parses_graph_json_within_the_memory_budget(saved: Path) -> None:
    with zipfile.ZipFile(saved) as zf:
        size = {info.filename: info.file_size for info in zf.infolist()}
    # enough to open from graph.columns (4 bytes a byte of it, half a byte a vector byte), not
    # to parse graph.json as well (8 bytes a byte of it)
    vectors = (size["embeddings.bin"] + size["sentences.bin"]) // 2
    budget = 4 * size["graph.columns"] + vectors + 1
    assert 8 * size["graph.json"] + vectors > budget
    KnowledgeBase.load(saved, max_memory=budget)
    with pytest.raises(BundleError, match="graph.json.*max_memory"):
        KnowledgeBase.load(saved, max_memory=budget, verify=True)
    KnowledgeBase.load(saved, max_memory=8 * size["graph.json"] + vectors + 1, verify=True)


def _budgets(saved: Path) -> tuple[int, int]:
    """A memory budget that opens ``saved`` from graph.columns but not from graph.json, and one
    that does both (as in the test above)."""
    with zipfile.ZipFile(saved) as zf:
        size = {info.filename: info.file_size for info in zf.infolist()}
    vectors = (size["embeddings.bin"] + size["sentences.bin"]) // 2
    return 4 * size["graph.columns"] + vectors + 1, 8 * size["graph.json"] + vectors + 1


def _reformatted(members: dict[str, bytes]) -> None:
    # the same graph in another writer's formatting: spaces, another key order
    members["graph.json"] = json.dumps(json.loads(members["graph.json"]), indent=1).encode()


def test_the_graph_json_digest_is_that_of_the_bytes_a_save_writes(
    saved: Path, company_kb: KnowledgeBase
) -> None:
    with zipfile.ZipFile(saved) as zf:
        written = zf.read("graph.json")
    digest = written_graph_json_digest(company_kb.graph, company_kb.state.merge_log)
    assert digest == (len(written), hashlib.sha256(written).hexdigest())
    empty = json_bytes({**SemanticGraph().to_dict(), "merge_log": []})
    assert written_graph_json_digest(SemanticGraph(), ()) == (
        len(empty),
        hashlib.sha256(empty).hexdigest(),
    )


def test_a_save_copies_a_bundle_it_wrote_without_parsing_graph_json(
    saved: Path, tmp_path: Path, company_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a bundle opened within a budget that allows graph.columns but not parsing graph.json was
    # refused by its copying save, as damaged ("restore the bundle from a copy")
    def not_parsed(*args: object) -> None:
        raise AssertionError("graph.json was parsed")

    monkeypatch.setattr(_agreement, "load_json", not_parsed)
    opening_only, _ = _budgets(saved)
    kb = KnowledgeBase.load(saved, embedder=company_kb.embedder, max_memory=opening_only)
    assert kb.save(tmp_path / "copied.noema").read_bytes() == saved.read_bytes()


def test_graph_json_in_another_writers_formatting_is_compared_record_by_record(
    saved: Path, tmp_path: Path, company_kb: KnowledgeBase
) -> None:
    other = lying(saved, tmp_path / "other.noema", _reformatted)
    opening_only, parsing = _budgets(other)
    KnowledgeBase.load(other, embedder=company_kb.embedder, verify=True, max_memory=parsing)
    kb = KnowledgeBase.load(other, embedder=company_kb.embedder, max_memory=parsing)
    copied = kb.save(tmp_path / "copied.noema")
    with zipfile.ZipFile(copied) as new, zipfile.ZipFile(other) as old:
        assert new.read("graph.json") == old.read("graph.json")  # copied as it was
    assert main(["validate", str(copied)]) == 0
    # parsing it takes more than the budget it was opened with: said so, not called damage
    kb = KnowledgeBase.load(other, embedder=company_kb.embedder, max_memory=opening_only)
    with pytest.raises(BundleError) as refused:
        kb.save(tmp_path / "refused.noema")
    message = str(refused.value)
    assert "KnowledgeBase.load(..., max_memory=)" in message and "graph.json" in message
    assert "damage" not in message and "restore" not in message.lower()
    assert not (tmp_path / "refused.noema").exists()


def test_a_refusal_quotes_at_most_80_characters_of_a_record_id(
    tmp_path: Path, ingested: Callable[..., KnowledgeBase]
) -> None:
    long_id = "doc-" + "x" * 5_000
    kb = ingested([Document("Jensen Huang founded Nvidia in 1993.", long_id)])
    bad = lying(kb.save(tmp_path / "kb.noema"), tmp_path / "bad.noema", _graph_json(_other_text))
    with pytest.raises(BundleError, match="graph.json") as refused:
        KnowledgeBase.load(bad, embedder=kb.embedder, verify=True)
    assert quote_value(long_id) in str(refused.value)
    assert len(str(refused.value)) < 500
