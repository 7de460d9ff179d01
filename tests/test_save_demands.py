"""What a save of an opened bundle will demand is checked when it is opened: a bundle that opens,
answers and ingests must save again, so one whose save could only fail is refused at once."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import noema
from noema import KnowledgeBase
from noema.model.records import record_to_dict
from noema.storage.members import encode_json
from noema.storage.store import read
from tests.test_bundle import _columns, rewrite

Update = Callable[[dict[str, Any], list[str]], None]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory, company_kb: KnowledgeBase) -> Path:
    path = tmp_path_factory.mktemp("save_demands") / "kb.noema"
    company_kb.save(path)
    return path


def _swap_sentences(arrays: dict[str, Any], strings: list[str]) -> None:
    """The sidecar's first two sentences listed the other way round, each with its facts."""
    ranges = arrays["sentence_fact_range"]
    first = arrays["sentence_fact"][ranges[0] : ranges[1]].copy()
    second = arrays["sentence_fact"][ranges[1] : ranges[2]].copy()
    arrays["sentence_fact"][: len(first) + len(second)] = np.concatenate([second, first])
    ranges[1] = len(second)
    for name in ("sentence_document", "sentence_start", "sentence_end", "sentence_digest"):
        arrays[name][[0, 1]] = arrays[name][[1, 0]]


def _swap_digests(arrays: dict[str, Any], strings: list[str]) -> None:
    """Two sentences keep their places and facts, and trade the hashes in their keys."""
    arrays["sentence_digest"][[0, 1]] = arrays["sentence_digest"][[1, 0]]


def _other_fact(arrays: dict[str, Any], strings: list[str]) -> None:
    """The first sentence lists another fact than the first it was stated in (the sentences
    themselves in place and in order)."""
    facts = len(arrays["relation_id"]) + len(arrays["event_id"])
    arrays["sentence_fact"][0] = (arrays["sentence_fact"][0] + 1) % facts


def _edit_text(arrays: dict[str, Any], strings: list[str]) -> None:
    """The first document's text edited (same length, every span still inside it)."""
    number = int(arrays["document_text"][0])
    assert "Larry" in strings[number]
    strings[number] = strings[number].replace("Larry", "Harry")


@pytest.mark.parametrize(
    ("update", "match"),
    [
        (_swap_sentences, "other sentences than the graph's facts come from"),
        (_other_fact, "other sentences than the graph's facts come from"),
        (_swap_digests, "does not hash to its key"),
        (_edit_text, "does not hash to its key"),
    ],
    ids=["swapped sidecar rows", "another fact", "swapped keys", "edited document text"],
)
def test_a_sidecar_a_save_would_refuse_is_refused_on_opening(
    saved: Path, tmp_path: Path, update: Update, match: str
) -> None:
    # each opened, answered and ingested, and every save failed: "the sentence sidecar was
    # built for another graph"
    bad = rewrite(saved, tmp_path / "bad.noema", _columns(update), fix_manifest=True)
    with pytest.raises(noema.BundleError, match=match):
        KnowledgeBase.load(bad)


def test_a_bundle_that_opens_saves_and_opens_again(saved: Path, tmp_path: Path) -> None:
    kb = KnowledgeBase.load(saved)
    kb.ingest(["Grace Hopper designed COBOL."])
    again = KnowledgeBase.load(kb.save(tmp_path / "again.noema"))
    assert "Hopper" in again.retrieve("Who designed COBOL?").text


def _long_id_mentioned(mentions: int, id_length: int) -> Update:
    """The first document's id made ``id_length`` characters longer (keeping its place in id
    order), and the first entity given
    ``mentions`` more mentions in it: graph.columns stores the id once, graph.json writes it
    in every mention."""

    def update(arrays: dict[str, Any], strings: list[str]) -> None:
        strings[int(arrays["document_id"][0])] += "d" * id_length
        ranges = arrays["entity_mention_range"]
        at = int(ranges[1])
        for field, value in (("document", 0), ("start", 0), ("end", 5)):
            name = f"entity_mention_{field}"
            arrays[name] = np.insert(arrays[name], at, np.full(mentions, value))
        ranges[1:] += mentions

    return update


def _graph_json_of_the_columns(path: Path) -> Callable[[dict[str, bytes]], None]:
    """What sets graph.json to the graph and merge log the columns of ``path`` hold."""
    contents = read(path)
    data = contents.graph.to_dict()
    data["merge_log"] = [record_to_dict(r) for r in contents.merge_log]
    return lambda members: members.update({"graph.json": encode_json(data)})


def _without_words(members: dict[str, bytes]) -> None:
    del members["sentences.words"]
    manifest = json.loads(members["manifest.json"])
    del manifest["words"], manifest["members"]["sentences.words"]
    members["manifest.json"] = json.dumps(manifest).encode()


def test_ids_a_save_writes_in_every_mention_are_held_to_the_budget(
    saved: Path, tmp_path: Path
) -> None:
    # a 1 MB document id stored once and mentioned 10,000 times opened at once; a save would
    # write it 10,000 times (10 GB of graph.json)
    bad = rewrite(
        saved,
        tmp_path / "mentioned.noema",
        _columns(_long_id_mentioned(10_000, 1 << 20)),
        fix_manifest=True,
    )
    assert bad.stat().st_size < 2 << 20
    with pytest.raises(noema.BundleError, match="made to be multiplied"):
        KnowledgeBase.load(bad)
    with pytest.raises(noema.BundleError, match="more than the budget"):
        KnowledgeBase.load(bad, max_memory=8 << 30)
    # the same id mentioned a few times is an ordinary bundle, saved and opened again (its
    # graph.json written to agree with its columns, as a save copying it demands, and its word
    # index, written for the sentences of the id before, left out)
    fine = rewrite(
        saved, tmp_path / "fine.noema", _columns(_long_id_mentioned(3, 1000)), fix_manifest=True
    )
    fine = rewrite(fine, fine, _graph_json_of_the_columns(fine), fix_manifest=True)
    fine = rewrite(fine, fine, _without_words, fix_manifest=True)
    kb = KnowledgeBase.load(fine)
    assert KnowledgeBase.load(kb.save(tmp_path / "again.noema")).graph == kb.graph


@pytest.mark.parametrize(
    ("update", "match"),
    [
        (_swap_digests, "does not hash to its key"),
        (_edit_text, "does not hash to its key"),
        (_other_fact, "other sentences than the graph's facts come from"),
    ],
    ids=["swapped keys", "edited document text", "another fact"],
)
def test_large_columns_check_the_sidecar_contents_with_their_hash(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, update: Update, match: str
) -> None:
    """Where graph.columns is large (read in place, not hashed on opening), the keys, which hash
    each sentence's text, and the sentences, compared with every mention, are checked with its
    sha256: on load(verify=True), and before a save, which then writes nothing."""
    from noema.storage import _opening

    bad = rewrite(saved, tmp_path / "bad.noema", _columns(update), fix_manifest=True)
    monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", 0)
    with pytest.raises(noema.BundleError, match=match):
        KnowledgeBase.load(bad, verify=True)
    opened = KnowledgeBase.load(bad)  # its structure is intact: it opens and answers
    assert "Larry Page" in opened.retrieve("Who founded Google?").text
    before = bad.read_bytes()
    with pytest.raises(noema.BundleError, match=f"bad.noema.*{match}.*was written"):
        opened.save(bad)
    assert bad.read_bytes() == before


def test_large_columns_refuse_sentences_out_of_order_on_opening(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What reading the sidecar in place relies on is checked on every opening."""
    from noema.storage import _opening

    bad = rewrite(saved, tmp_path / "bad.noema", _columns(_swap_sentences), fix_manifest=True)
    monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", 0)
    with pytest.raises(noema.BundleError, match="not grouped by document and ordered by span"):
        KnowledgeBase.load(bad)


def test_a_document_whose_sentences_are_two_runs_is_refused() -> None:
    """Reading the sidecar in place takes each document's sentences as one run of rows."""
    from noema.storage._save_checks import check_sentence_runs

    def arrays(documents: list[int]) -> dict[str, Any]:
        n = len(documents)
        return {
            "sentence_document": np.array(documents, np.int32),
            "sentence_start": np.arange(n, dtype=np.int64) * 10,
            "sentence_end": np.arange(n, dtype=np.int64) * 10 + 5,
        }

    check_sentence_runs(arrays([0, 0, 2, 1, 1]))  # one run each, in any document order
    check_sentence_runs(arrays([]))
    with pytest.raises(noema.BundleError, match="grouped by document"):
        check_sentence_runs(arrays([0, 1, 1, 0]))
