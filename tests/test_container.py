"""The bundle's container: a bundle another program rewrites in place while it is open (the same
file, not a new one moved over it) never crashes Noema, never answers from another bundle's
bytes, and is never saved from them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from noema import KnowledgeBase

# Opens ``path`` mapped from its file (as every bundle past the size read whole is), changes
# the file as ``scenario`` says, then asks a question and saves to ``saved``; prints what each
# gave. Run in a subprocess: on a truncated mapping a read is SIGBUS, which kills the process.
_SCRIPT = """
import os, sys
import noema
from noema.storage import container

path, other, saved, scenario, mapped = sys.argv[1:6]
if mapped == "1":
    container.READ_WHOLE_BELOW = 0  # mapped, as a large bundle is
kb = noema.KnowledgeBase.load(path)
assert "Larry Page" in kb.retrieve("Who founded Google?").text
if scenario == "truncate":
    os.truncate(path, 0)
elif scenario == "copy":  # cp other.noema kb.noema: the same inode, other bytes
    with open(other, "rb") as source, open(path, "r+b") as target:
        target.write(source.read())
        target.truncate()
elif scenario == "same size":
    with open(path, "r+b") as target:
        start, end, rows = (int(n) for n in sys.argv[6:9])
        target.seek(start)
        block = bytearray(target.read(end - start))
        width = len(block) // rows
        target.seek(start)  # the fact rows in reverse order: same size, other answers
        target.write(b"".join(block[n * width : (n + 1) * width] for n in reversed(range(rows))))
elif scenario == "own save":  # a save replaces the file: the mapped one is left as it was
    kb.save(path)
    os.replace(other, path)
for step in ("retrieve", "save"):
    try:
        if step == "retrieve":
            print("retrieve:", "Larry Page" in kb.retrieve("Who founded Google?").text)
        else:
            kb.save(saved)
            loaded = noema.KnowledgeBase.load(saved)
            print("save:", "Larry Page" in loaded.retrieve("Who founded Google?").text)
    except noema.BundleError as exc:
        print(f"{step}: BundleError: {exc}")
"""


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory, company_kb: KnowledgeBase) -> Path:
    """A folder holding ``kb.noema`` (the company base) and ``other.noema`` (another base)."""
    folder = tmp_path_factory.mktemp("container")
    company_kb.save(folder / "kb.noema")
    other = KnowledgeBase(embedder=company_kb.embedder, extractor=company_kb.extractor)
    other.ingest(  # larger than kb.noema: a copy over it leaves every mapped byte readable
        [
            f"{person} designed {language} in {year}. {person} taught at Stanford University."
            for person, language, year in [
                ("Grace Hopper", "COBOL", 1959),
                ("John Backus", "Fortran", 1957),
                ("Dennis Ritchie", "C", 1972),
                ("Bjarne Stroustrup", "C++", 1985),
                ("Guido van Rossum", "Python", 1991),
                ("James Gosling", "Java", 1995),
                ("Niklaus Wirth", "Pascal", 1970),
                ("John McCarthy", "Lisp", 1958),
            ]
        ]
    )
    other.save(folder / "other.noema")
    assert (folder / "other.noema").stat().st_size > (folder / "kb.noema").stat().st_size
    return folder


def _embedding_rows(path: Path) -> list[str]:
    """Where embeddings.bin's bytes lie in the file, and how many rows it holds."""
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("embeddings.bin")
    with path.open("rb") as handle:
        handle.seek(info.header_offset + 26)
        lengths = np.frombuffer(handle.read(4), "<u2")
    start = info.header_offset + 30 + int(lengths.sum())
    return [str(start), str(start + info.file_size), str(info.file_size // (384 * 4))]


def _run(bundles: Path, tmp_path: Path, scenario: str, *, mapped: bool) -> dict[str, str]:
    """What the script printed for each step, by step; the exit status when it died."""
    path, other = tmp_path / "kb.noema", tmp_path / "other.noema"
    shutil.copy(bundles / "kb.noema", path)
    shutil.copy(bundles / ("kb.noema" if scenario == "own save" else "other.noema"), other)
    extra = _embedding_rows(path) if scenario == "same size" else []
    argv = [str(path), str(other), str(tmp_path / "saved.noema"), scenario, str(int(mapped))]
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT, *argv, *extra],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    if result.returncode != 0:
        return {"died": f"exit status {result.returncode}: {result.stderr[-600:]}"}
    return dict(line.split(": ", 1) for line in result.stdout.strip().splitlines())


_CHANGED = "was changed on disk by another program after it was opened"


@pytest.mark.parametrize("scenario", ["truncate", "copy", "same size"])
def test_a_mapped_bundle_rewritten_in_place_is_refused_not_read(
    bundles: Path, tmp_path: Path, scenario: str
) -> None:
    # truncate -s 0: SIGBUS at the next retrieval; cp other.noema: retrieval found nothing and a
    # save wrote NaN vectors; a same-size rewrite answered with other facts
    outcome = _run(bundles, tmp_path, scenario, mapped=True)
    assert outcome.get("retrieve", "").startswith("BundleError:"), outcome
    assert _CHANGED in outcome["retrieve"] and "Load it again" in outcome["retrieve"]
    assert outcome["save"].startswith("BundleError:") and _CHANGED in outcome["save"]
    assert not (tmp_path / "saved.noema").exists()


def test_a_bundle_replaced_by_a_save_is_still_read_from_the_file_it_opened(
    bundles: Path, tmp_path: Path
) -> None:
    # a save (ours or another's) moves a new file over the path: the mapped one is unchanged
    outcome = _run(bundles, tmp_path, "own save", mapped=True)
    assert outcome == {"retrieve": "True", "save": "True"}, outcome


@pytest.mark.parametrize("scenario", ["truncate", "copy"])
def test_a_small_bundle_is_read_whole_and_outlives_its_file(
    bundles: Path, tmp_path: Path, scenario: str
) -> None:
    # a small bundle is held in memory: what another program does to the file changes nothing
    outcome = _run(bundles, tmp_path, scenario, mapped=False)
    assert outcome == {"retrieve": "True", "save": "True"}, outcome
