"""Saves to one path take turns (an advisory lock beside the file, held from the check that the
file is still the one the base knew to the note of what it wrote): two bases that loaded one
bundle and save it at once never both succeed with one's documents lost, and a base's own save
in one thread is never taken for another program's by its save in another."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from noema import BundleError, KnowledgeBase
from noema.storage import store


@pytest.fixture
def path(tmp_path: Path, company_kb: KnowledgeBase) -> Path:
    return company_kb.save(tmp_path / "kb.noema")


def _loaded(path: Path, company_kb: KnowledgeBase) -> KnowledgeBase:
    return KnowledgeBase.load(path, embedder=company_kb.embedder, extractor=company_kb.extractor)


def _paused_writes(
    monkeypatch: pytest.MonkeyPatch, thread: str, *, after: bool
) -> tuple[threading.Event, threading.Event]:
    """The store's bundle writer, pausing in the thread named ``thread`` before it writes (or,
    ``after``, once the new file is in place) until released: a save as slow as a large one."""
    reached, release = threading.Event(), threading.Event()
    real = store.write_bundle

    def write(*args: Any, **kwargs: Any) -> Any:
        paused = threading.current_thread().name == thread
        if paused and not after:
            reached.set()
            release.wait(120)
        manifest = real(*args, **kwargs)
        if paused and after:
            reached.set()
            release.wait(120)
        return manifest

    monkeypatch.setattr(store, "write_bundle", write)
    return reached, release


def _saves_at_once(
    first: KnowledgeBase,
    second: KnowledgeBase,
    path: Path,
    reached: threading.Event,
    release: threading.Event,
) -> dict[str, str]:
    """``first`` saves to ``path`` until its writer pauses, ``second`` saves meanwhile; each
    outcome is "saved" or the error's message."""
    outcomes: dict[str, str] = {}

    def save(kb: KnowledgeBase) -> None:
        name = threading.current_thread().name
        try:
            kb.save(path)
            outcomes[name] = "saved"
        except BundleError as exc:
            outcomes[name] = str(exc)

    threads = {
        n: threading.Thread(target=save, args=(kb,), name=n)
        for n, kb in (("first", first), ("second", second))
    }
    threads["first"].start()
    assert reached.wait(120)
    threads["second"].start()
    # a grace period, not an assertion: a save that does not take turns is done by then
    threads["second"].join(timeout=3)
    release.set()
    for thread in threads.values():
        thread.join()
    return outcomes


def test_two_bases_saving_one_bundle_at_once_take_turns_and_the_later_one_refuses(
    path: Path, company_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two processes saving what they loaded from one bundle both succeeded, one's documents lost
    ours, theirs = _loaded(path, company_kb), _loaded(path, company_kb)
    documents = sorted(company_kb.graph.documents)
    ours.delete_documents(documents[:1])
    theirs.delete_documents(documents[1:2])
    reached, release = _paused_writes(monkeypatch, "first", after=False)
    outcomes = _saves_at_once(ours, theirs, path, reached, release)
    assert outcomes["first"] == "saved"
    assert "replaced by another program since" in outcomes["second"]
    assert set(_loaded(path, company_kb).graph.documents) == set(documents[1:])
    assert sorted(p.name for p in path.parent.iterdir()) == ["kb.noema"]


def test_one_base_saving_its_own_bundle_from_two_threads_saves_twice(
    path: Path, company_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the second save saw the first's new file before the first noted it as its own, and
    # refused it as another program's
    kb = _loaded(path, company_kb)
    kb.delete_documents(sorted(company_kb.graph.documents)[:1])
    reached, release = _paused_writes(monkeypatch, "first", after=True)
    assert _saves_at_once(kb, kb, path, reached, release) == {"first": "saved", "second": "saved"}
    assert _loaded(path, company_kb).graph == kb.graph
    kb.save(path)  # and it is still its own
    assert sorted(p.name for p in path.parent.iterdir()) == ["kb.noema"]


_SAVER = """
import sys, time
from pathlib import Path
from noema import BundleError, KnowledgeBase

path, document, go = sys.argv[1], sys.argv[2], Path(sys.argv[3])
kb = KnowledgeBase.load(path)
kb.delete_documents([document])
print("ready", flush=True)
while not go.exists():
    time.sleep(0.001)
try:
    kb.save(path)
    print("saved", flush=True)
except BundleError as exc:
    print(f"refused: {exc}", flush=True)
"""


def test_two_processes_saving_one_bundle_never_both_succeed(
    tmp_path: Path, company_kb: KnowledgeBase
) -> None:
    documents = sorted(company_kb.graph.documents)
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    for round_ in range(3):
        path = company_kb.save(tmp_path / f"kb{round_}.noema")
        go = tmp_path / f"go{round_}"
        savers = [
            subprocess.Popen(
                [sys.executable, "-c", _SAVER, str(path), document, str(go)],
                stdout=subprocess.PIPE,
                text=True,
                env=environment,
            )
            for document in documents[:2]
        ]
        for saver in savers:
            assert saver.stdout is not None and saver.stdout.readline() == "ready\n"
        go.touch()
        outcomes = [saver.communicate()[0].strip() for saver in savers]
        assert [saver.returncode for saver in savers] == [0, 0]
        saved = [n for n, outcome in enumerate(outcomes) if outcome == "saved"]
        assert len(saved) == 1, outcomes
        refused = outcomes[1 - saved[0]]
        assert refused.startswith("refused:") and "replaced by another program" in refused
        kept = set(_loaded(path, company_kb).graph.documents)
        assert kept == set(documents) - {documents[saved[0]]}


def test_a_lock_file_that_cannot_be_removed_does_not_hide_the_save(
    tmp_path: Path, company_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the removal's PermissionError was raised from a save that had written its bundle
    real = Path.unlink

    def unlink(self: Path, missing_ok: bool = False) -> None:
        if self.name.endswith(".lock"):
            raise PermissionError(13, "Permission denied", str(self))
        real(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink)
    saved = company_kb.save(tmp_path / "kb.noema")
    assert KnowledgeBase.load(saved, embedder=company_kb.embedder).graph == company_kb.graph
    assert company_kb.save(saved) == saved  # the lock file left is locked as any other


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="O_NOFOLLOW is POSIX")
def test_a_symbolic_link_at_the_lock_path_is_not_followed(
    tmp_path: Path, company_kb: KnowledgeBase
) -> None:
    # the lock was opened through it, making (and locking) a file wherever it pointed
    elsewhere = tmp_path / "elsewhere" / "made.txt"
    elsewhere.parent.mkdir()
    (tmp_path / ".kb.noema.lock").symlink_to(elsewhere)
    with pytest.raises(OSError):
        company_kb.save(tmp_path / "kb.noema")
    assert not elsewhere.exists() and not (tmp_path / "kb.noema").exists()
