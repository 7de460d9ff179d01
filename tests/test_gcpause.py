"""Pausing the cyclic garbage collector while a bundle is read and while a write works on every
fact and sentence (never while it embeds)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

import noema
from noema.model.gcpause import paused_gc
from noema.storage.store import read


@pytest.fixture
def eager_collector() -> Iterator[list[str]]:
    """A collector that runs after every allocation, and for each run, the Noema module whose
    code it interrupted (the innermost one on the stack; "" outside Noema, "pause" while a
    pause is being set up: making the context manager allocates before the collector stops)."""
    modules: list[str] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase != "start":
            return
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            parts = Path(frame.f_code.co_filename).parts
            if parts[-1] == "contextlib.py":
                modules.append("pause")
                return
            if "noema" in parts[-3:-1]:  # noema/kb.py, noema/storage/bundle.py
                modules.append(parts[-1])
                return
            frame = frame.f_back
        modules.append("")

    threshold = gc.get_threshold()
    gc.set_threshold(1)
    gc.callbacks.append(record)
    try:
        yield modules
    finally:
        gc.callbacks.remove(record)
        gc.set_threshold(*threshold)


def test_no_collection_runs_while_a_bundle_is_read(
    company_kb: noema.KnowledgeBase, tmp_path: Path, eager_collector: list[str]
) -> None:
    path = company_kb.save(tmp_path / "kb.noema")
    eager_collector.clear()
    contents = read(path)
    assert "bundle.py" not in eager_collector
    assert gc.isenabled()
    # the same reading without the pause collects: the assertion above can fail
    from noema.storage.bundle import read_bundle

    assert read_bundle(path).graph == contents.graph
    assert "bundle.py" in eager_collector


def test_a_sidecar_rebuild_collects_only_while_embedding_and_where_its_pauses_begin(
    company_kb: noema.KnowledgeBase, eager_collector: list[str]
) -> None:
    from noema.vectors.sentences import SentenceIndex

    sidecar = SentenceIndex.build(company_kb.graph, company_kb.embedder)
    # collections may run while the model embeds (embed.py), never in the work on every
    # sentence: at most one where each of the two pauses begins and one as the model is called
    # (the allocations of those lines themselves); without the pauses, 22 on these documents
    assert eager_collector.count("sentences.py") <= 3 and "embed.py" in eager_collector
    assert len(sidecar) == len(company_kb._snapshot.sentences or ())
    assert gc.isenabled()


def test_filing_every_stored_name_collects_only_where_its_pause_begins(
    company_kb: noema.KnowledgeBase, eager_collector: list[str]
) -> None:
    from noema.ingest.canonical import Canonicalizer

    canonicalizer = Canonicalizer(company_kb.embedder, 0.85)  # as after a bundle load
    canonicalizer._sync(company_kb.graph)
    # at most two as the pause begins (the allocations of the call and its line); 63 without it
    assert eager_collector.count("canonical.py") <= 2
    assert "names.py" not in eager_collector
    assert gc.isenabled()


def test_the_collector_comes_back_when_the_outermost_pause_ends() -> None:
    assert gc.isenabled()
    with paused_gc():
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_program_that_disabled_the_collector_keeps_it_disabled() -> None:
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_collector_comes_back_after_an_error_inside_the_pause() -> None:
    with pytest.raises(ValueError), paused_gc():
        raise ValueError("inside")
    assert gc.isenabled()
