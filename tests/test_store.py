"""The storage seam: publishing a write, saving the current state, opening a bundle."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import noema
from noema.model.graph import SemanticGraph
from noema.storage import store
from noema.storage.bundle import BundleSettings
from noema.storage.store import Store, read
from tests.conftest import CountingEmbedder

_SETTINGS = BundleSettings(
    embedding_model="all-MiniLM-L6-v2",
    spacy_model="en_core_web_sm",
    similarity_threshold=0.85,
    noema_version=noema.__version__,
)


def _ingested(
    embedder: noema.SentenceTransformerEmbedder, extractor: noema.SpacyExtractor, *texts: str
) -> SemanticGraph:
    kb = noema.KnowledgeBase(embedder=embedder, extractor=extractor)
    kb.ingest([noema.Document(t, id=f"d{n}") for n, t in enumerate(texts)])
    return kb.graph


def test_publishing_a_write_embeds_only_the_facts_and_sentences_it_added(
    embedder: noema.SentenceTransformerEmbedder, extractor: noema.SpacyExtractor
) -> None:
    counting = CountingEmbedder(embedder)
    store = Store(counting, "exact")
    store.publish(_ingested(embedder, extractor, "Larry Page founded Google."))
    before = store.snapshot
    counting.calls.clear()

    grown = _ingested(
        embedder, extractor, "Larry Page founded Google.", "Jensen Huang founded Nvidia."
    )
    with store.lock:
        store.publish(grown)

    embedded = [t for call in counting.calls for t in call]
    assert embedded and all("Google" not in t for t in embedded)
    assert any("Nvidia" in t for t in embedded)
    # the snapshot a reader took before the write still holds exactly what it held
    assert before.index is not None and set(before.index.ids) == set(before.graph.relations)
    assert store.snapshot is not before
    assert store.snapshot.index is not None
    assert set(store.snapshot.index.ids) == {*grown.relations, *grown.events}


def test_saving_a_store_nothing_was_published_to_writes_an_empty_bundle_that_opens(
    embedder: noema.SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    store = Store(embedder, "exact")
    path = tmp_path / "empty.noema"
    manifest = store.save(path, settings=_SETTINGS, name_vectors=lambda g: {})
    assert manifest["counts"]["facts"] == 0
    opened = Store(embedder, "exact")
    opened.open(read(path))
    assert opened.snapshot.index is not None and len(opened.snapshot.index) == 0
    assert opened.snapshot.sentences is not None and len(opened.snapshot.sentences) == 0


def test_a_store_opened_from_its_own_bytes_holds_the_same_state_and_embeds_nothing(
    embedder: noema.SentenceTransformerEmbedder, extractor: noema.SpacyExtractor
) -> None:
    store = Store(embedder, "exact")
    store.publish(_ingested(embedder, extractor, "Larry Page founded Google."))
    data = store.to_bytes(settings=_SETTINGS, name_vectors=lambda g: {})

    counting = CountingEmbedder(embedder)
    opened = Store(counting, "exact")
    opened.open(read(data))

    assert counting.calls == []
    assert opened.snapshot.graph == store.snapshot.graph
    assert opened.snapshot.index is not None and store.snapshot.index is not None
    for fact_id in store.snapshot.index.ids:
        assert (opened.snapshot.index.vector(fact_id) == store.snapshot.index.vector(fact_id)).all()


def test_a_save_while_an_ingest_publishes_writes_the_graph_with_its_own_merge_log(
    make_kb: Callable[..., noema.KnowledgeBase], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Saving does not take the writers' lock, so a save from another thread may run at any
    # moment of an ingest. The moment right after the new graph is published is the one that
    # matters: the bytes written then must hold that graph's merges, not the log before them.
    kb = make_kb()
    kb.ingest([noema.Document("Larry Page founded Google.", id="a")])
    saved: list[bytes] = []
    publish = kb._store.publish

    def publish_then_save(*args: Any, **kwargs: Any) -> None:
        publish(*args, **kwargs)
        saved.append(kb.to_bytes())

    monkeypatch.setattr(kb._store, "publish", publish_then_save)
    report = kb.ingest([noema.Document("Google, Inc. hired Sundar Pichai.", id="b")])

    assert [m.merged_name for m in report.merges] == ["Google, Inc."]
    opened = noema.KnowledgeBase.from_bytes(saved[0], embedder=kb.embedder)
    assert set(opened.graph.documents) == {"a", "b"}
    assert opened.merge_log == kb.merge_log == report.merges


def test_the_state_a_reader_takes_holds_the_graph_and_merge_log_of_one_write(
    make_kb: Callable[..., noema.KnowledgeBase],
) -> None:
    kb = make_kb()
    kb.ingest([noema.Document("Larry Page founded Google.", id="a")])
    before = kb.state
    kb.ingest([noema.Document("Google, Inc. hired Sundar Pichai.", id="b")])
    after = kb.state
    assert set(before.graph.documents) == {"a"} and before.merge_log == ()
    assert set(after.graph.documents) == {"a", "b"} and len(after.merge_log) == 1
    assert after.index is not None and set(after.index.ids) == set(after.graph.relations)


def test_a_save_over_a_bundle_another_saved_since_is_refused(
    make_kb: Callable[..., noema.KnowledgeBase], tmp_path: Path
) -> None:
    # two processes that loaded one bundle and saved it: the last one silently dropped the
    # documents the first had saved
    path = tmp_path / "kb.noema"
    first = make_kb()
    first.ingest([noema.Document("Larry Page founded Google.", id="google")])
    first.save(path)
    ours = noema.KnowledgeBase.load(path, embedder=first.embedder, extractor=first.extractor)
    theirs = noema.KnowledgeBase.load(path, embedder=first.embedder, extractor=first.extractor)
    theirs.ingest([noema.Document("Grace Hopper designed COBOL.", id="cobol")])
    theirs.save(path)
    theirs.save(path)  # its own earlier save is no one else's
    ours.ingest([noema.Document("Jensen Huang founded Nvidia.", id="nvidia")])
    with pytest.raises(noema.BundleError, match="replaced by another program since"):
        ours.save(path)
    assert set(noema.KnowledgeBase.load(path).graph.documents) == {"google", "cobol"}
    ours.save(tmp_path / "elsewhere.noema")  # another path is free
    path.unlink()  # nothing there to lose
    ours.save(path)
    assert set(noema.KnowledgeBase.load(path).graph.documents) == {"google", "nvidia"}


def test_a_save_sets_the_manifest_of_the_bundle_it_wrote(
    make_kb: Callable[..., noema.KnowledgeBase], tmp_path: Path
) -> None:
    # a base built and saved had no manifest until it was loaded again
    kb = make_kb()
    kb.ingest([noema.Document("Larry Page founded Google.", id="google")])
    assert kb.manifest is None
    path = kb.save(tmp_path / "kb.noema")
    assert kb.manifest is not None
    assert kb.manifest == noema.KnowledgeBase.load(path).manifest == read(path).manifest
    kb.ingest([noema.Document("Grace Hopper designed COBOL.", id="cobol")])
    kb.save(tmp_path / "again.noema")
    assert kb.manifest["counts"]["documents"] == 2
    again = noema.KnowledgeBase.load(tmp_path / "again.noema", embedder=kb.embedder)
    again.save(tmp_path / "copied.noema")  # a save copying the members sets it too
    assert again.manifest == read(tmp_path / "copied.noema").manifest


def test_two_saves_to_one_path_leave_the_manifest_of_the_later(
    company_kb: noema.KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # kb.manifest was set once the save's turn was over: the earlier save, resuming after the
    # later one had written, set its own manifest over the later one's
    kb = noema.KnowledgeBase.load(
        company_kb.save(tmp_path / "a.noema"), embedder=company_kb.embedder
    )
    path = tmp_path / "kb.noema"
    written: list[dict[str, Any]] = []
    real_write, real_lock = store.write_bundle, store.path_locked
    first_done, second_done = threading.Event(), threading.Event()

    def write(*args: Any, **kwargs: Any) -> dict[str, Any]:
        written.append(real_write(*args, **kwargs))
        return written[-1]

    @contextmanager
    def locked(target: Path) -> Iterator[None]:
        with real_lock(target):
            yield
        if threading.current_thread().name == "first":  # its turn over, its caller waits
            first_done.set()
            second_done.wait(60)

    monkeypatch.setattr(store, "write_bundle", write)
    monkeypatch.setattr(store, "path_locked", locked)
    first = threading.Thread(target=kb.save, args=(path,), name="first")
    first.start()
    assert first_done.wait(60)
    kb.save(path)
    second_done.set()
    first.join(60)
    assert len(written) == 2 and written[0] is not written[1]
    assert kb.manifest is written[1]
