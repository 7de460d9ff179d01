"""The README's Python snippets run as written, in order, in one namespace, in a directory with
the example documents under ``docs/`` (issue 16, item 11)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
BLOCKS = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), re.M | re.S)


def test_the_readme_has_snippets() -> None:
    assert len(BLOCKS) >= 8


def test_readme_snippets_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(ROOT / "examples" / "docs", tmp_path / "docs")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "readme"}
    for number, block in enumerate(BLOCKS, start=1):
        try:
            exec(compile(block, f"README.md python block {number}", "exec"), namespace)
        except Exception as exc:  # name the block: the traceback alone says "<string>"
            raise AssertionError(f"README python block {number} fails: {exc!r}\n{block}") from exc
