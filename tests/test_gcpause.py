"""Pausing the cyclic garbage collector while a bundle is read or a write is published."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

import noema
from noema.gcpause import paused_gc
from noema.store import read


@pytest.fixture
def eager_collector() -> Iterator[list[str]]:
    """A collector that runs after every allocation, and the runs it makes inside the bundle
    reader (a run can start anywhere an object is allocated)."""
    phases: list[str] = []

    def record(phase: str, info: dict[str, int]) -> None:
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename.endswith(str(Path("noema", "bundle.py"))):
                phases.append(phase)
                return
            frame = frame.f_back

    threshold = gc.get_threshold()
    gc.set_threshold(1)
    gc.callbacks.append(record)
    try:
        yield phases
    finally:
        gc.callbacks.remove(record)
        gc.set_threshold(*threshold)


def test_no_collection_runs_while_a_bundle_is_read(
    company_kb: noema.KnowledgeBase, tmp_path: Path, eager_collector: list[str]
) -> None:
    path = company_kb.save(tmp_path / "kb.noema")
    eager_collector.clear()
    contents = read(path)
    assert eager_collector == []
    assert gc.isenabled()
    # the same reading without the pause collects: the assertion above can fail
    from noema.bundle import read_bundle

    assert read_bundle(path).graph == contents.graph
    assert eager_collector


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
