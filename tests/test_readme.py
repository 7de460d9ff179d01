"""The Python code blocks of README.md and of every page under docs/ run as written.

Each file's blocks run in order, in one namespace, in a fresh directory holding the example
documents under ``docs/`` (so a block can ingest ``Path("docs")``, as a reader's own folder).
Only blocks fenced as ```` ```python ```` run: shell commands, JSON and notation are fenced
``bash``, ``json`` and ``text`` and are shown, not run. A Python block that cannot run here
does not belong in the documentation.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PAGES = sorted((ROOT / "docs").glob("*.md"))
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def python_blocks(path: Path) -> list[str]:
    return PYTHON_BLOCK.findall(path.read_text(encoding="utf-8"))


def run_blocks(path: Path, directory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run ``path``'s Python blocks in order in one namespace, inside ``directory``."""
    shutil.copytree(ROOT / "examples" / "docs", directory / "docs")
    monkeypatch.chdir(directory)
    name = path.relative_to(ROOT).as_posix()
    namespace: dict[str, object] = {"__name__": name}
    for number, block in enumerate(python_blocks(path), start=1):
        try:
            exec(compile(block, f"{name} python block {number}", "exec"), namespace)
        except Exception as exc:  # name the block: the traceback alone says "<string>"
            raise AssertionError(f"{name} python block {number} fails: {exc!r}\n{block}") from exc


def test_the_readme_has_snippets() -> None:
    assert len(python_blocks(ROOT / "README.md")) >= 3


def test_the_docs_have_snippets() -> None:
    assert len(PAGES) >= 13
    assert sum(len(python_blocks(page)) for page in PAGES) >= 30


def test_readme_snippets_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_blocks(ROOT / "README.md", tmp_path, monkeypatch)


@pytest.mark.parametrize(
    "page", [p for p in PAGES if python_blocks(p)], ids=lambda p: p.name.removesuffix(".md")
)
def test_docs_snippets_run_as_written(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_blocks(page, tmp_path, monkeypatch)
