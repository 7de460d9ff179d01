"""The distribution's name and its extras: every install hint names this library, never PyPI's
``noema`` (a different project), and each optional extra, when missing, names the pip command
that installs it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
# an install hint: pip install 'something[extra]' or pip install "something[extra]"
INSTALL_HINT = re.compile(r"""pip install ['"]([^'"\[\s]+)\[([\w,]+)\]['"]""")


def distribution_name() -> str:
    """``[project] name`` of pyproject.toml (read with a pattern: tomllib is 3.11+)."""
    project = re.search(
        r"^\[project\]\n(.*?)(?=^\[)", (ROOT / "pyproject.toml").read_text(), re.M | re.S
    )
    assert project, "pyproject.toml has no [project] table"
    name = re.search(r'^name = "([^"]+)"$', project.group(1), re.M)
    assert name, "pyproject.toml's [project] table has no name"
    return name.group(1)


def test_the_distribution_is_not_the_pypi_project_named_noema() -> None:
    # PyPI's ``noema`` is another library: ``pip install -U noema`` would replace this one
    assert distribution_name().lower().replace("_", "-") != "noema"
    all_extra = re.search(r"^all = \[\"(.+)\"\]$", (ROOT / "pyproject.toml").read_text(), re.M)
    assert all_extra, "pyproject.toml has no 'all' extra"
    assert all_extra.group(1).startswith(f"{distribution_name()}[")


def product_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "Makefile"]
    for folder in ("noema", "noema_langchain", "noema_llamaindex", "docs", "examples", "scripts"):
        files += [p for p in sorted((ROOT / folder).rglob("*")) if p.suffix in {".py", ".md"}]
    return files


def test_every_install_hint_names_this_distribution_or_the_checkout() -> None:
    hints = [
        (path.relative_to(ROOT).as_posix(), match.group(1))
        for path in product_files()
        for match in INSTALL_HINT.finditer(path.read_text(encoding="utf-8"))
    ]
    assert len(hints) >= 8
    assert [hint for hint in hints if hint[1] not in {".", distribution_name()}] == []


@pytest.mark.parametrize(
    ("hidden", "use", "extra"),
    [
        ("langchain_core", "import noema_langchain", "langchain"),
        ("llama_index.core", "import noema_llamaindex", "llamaindex"),
        ("ray", "import noema.distributed as d; d.build_on_ray(['x'])", "ray"),
    ],
)
def test_a_missing_extra_is_named(hidden: str, use: str, extra: str) -> None:
    code = f"import sys; sys.modules[{hidden!r}] = None\ntry:\n    {use}\nexcept (ImportError, LookupError) as e:\n    print(e)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert f"pip install '{distribution_name()}[{extra}]'" in out
    assert f"pip install '.[{extra}]'" in out  # from a checkout, where pip finds it
