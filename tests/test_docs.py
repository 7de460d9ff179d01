"""The documentation keeps up with the code: every CLI command and flag is in docs/cli.md, every
public name is documented, links resolve, and README and docs name only the public API."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

import noema
from noema.cli import build_parser

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
USER_FILES = [ROOT / "README.md", *PAGES]
CLI_PAGE = DOCS / "cli.md"


def subcommands() -> dict[str, argparse.ArgumentParser]:
    """The ``noema`` command's subcommands by name, walked from its argparse parser."""
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("the noema parser has no subcommands")


def flags(parser: argparse.ArgumentParser) -> list[str]:
    """Every option string of ``parser`` except the automatic ``-h``/``--help``."""
    return [
        option
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction)
        for option in action.option_strings
    ]


def sections(path: Path) -> dict[str, str]:
    """A Markdown page's ``##`` sections: heading text -> body (to the next ``##``)."""
    parts = re.split(r"^## +(.+)$", path.read_text(encoding="utf-8"), flags=re.M)
    return {heading.strip(): body for heading, body in zip(parts[1::2], parts[2::2], strict=True)}


def mentions(text: str, option: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


def command_section(name: str) -> str:
    found = [body for heading, body in sections(CLI_PAGE).items() if f"`noema {name}`" in heading]
    assert found, f"docs/cli.md has no '## `noema {name}`' section: document the command"
    return found[0]


def test_the_cli_has_the_commands_the_docs_expect() -> None:
    assert {"build", "query", "serve", "merge", "eval"} <= set(subcommands())


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_cli_command_is_documented(name: str) -> None:
    command_section(name)


@pytest.mark.parametrize(
    ("name", "option"),
    [(name, option) for name, parser in sorted(subcommands().items()) for option in flags(parser)],
    ids=lambda value: value,
)
def test_every_cli_flag_is_documented(name: str, option: str) -> None:
    assert mentions(command_section(name), option), (
        f"docs/cli.md, section `noema {name}`, does not mention {option}: document the flag"
    )


def test_the_top_level_flags_are_documented() -> None:
    text = CLI_PAGE.read_text(encoding="utf-8")
    for option in flags(build_parser()):
        assert mentions(text, option), f"docs/cli.md does not mention {option}"


def test_the_cli_page_documents_no_command_that_does_not_exist() -> None:
    documented = {
        match
        for heading in sections(CLI_PAGE)
        for match in re.findall(r"`noema ([a-z]+)`", heading)
    }
    assert documented <= set(subcommands()), documented - set(subcommands())


@pytest.mark.parametrize("name", sorted(noema.__all__))
def test_every_public_name_is_documented(name: str) -> None:
    text = "\n".join(path.read_text(encoding="utf-8") for path in USER_FILES)
    assert re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)|noema\.{re.escape(name)}\b", text), (
        f"noema.{name} is public but neither README.md nor docs/ mentions it"
    )


@pytest.mark.parametrize("path", USER_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_only_the_public_api_is_named(path: Path) -> None:
    """Modules inside noema/ move; users are shown only what stays."""
    text = path.read_text(encoding="utf-8")
    public = {*noema.__all__, "__all__", "distributed"}
    dotted = {m for m in re.findall(r"(?<![\w.])noema\.([a-z_]\w*)", text) if m not in public}
    assert not dotted, f"{path.name} names internal modules: {sorted(dotted)}"
    files = re.findall(r"(?<![\w./])noema/[\w/]+\.py", text)
    assert not files, f"{path.name} names internal files: {files}"


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {github_anchor(h) for h in re.findall(r"^#{1,6} +(.+)$", text, flags=re.M)}


@pytest.mark.parametrize(
    "path",
    [*USER_FILES, ROOT / "CHANGELOG.md", ROOT / "benchmarks" / "RESULTS.md"],
    ids=lambda p: p.relative_to(ROOT).as_posix(),
)
def test_relative_links_resolve(path: Path) -> None:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        assert linked.exists(), f"{path.name} links to {target}, which does not exist"
        if anchor and linked.suffix == ".md":
            assert anchor in anchors(linked), f"{path.name} links to {target}: no such heading"


def test_every_docs_page_is_listed_in_the_docs_index() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for page in PAGES:
        if page.name != "README.md":
            assert f"({page.name})" in index, f"docs/README.md does not link {page.name}"


def test_the_readme_is_short_and_in_order() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    headings = re.findall(r"^## +(.+)$", text, flags=re.M)
    assert headings == [
        "Install",
        "Quick start",
        "Choosing a format",
        "LangChain and LlamaIndex",
        "Agents (MCP)",
        "How it works",
        "Benchmarks",
        "Guarantees",
        "Development",
        "License",
    ]


# What the product says must stand on its own: a reader has no tracker, no work sessions and no
# decision log, so the reason is written out (or a commit named) instead of a reference to them.
TRACKER_WORDS = re.compile(r"session \d|this\ssession|issue \d+|\bR\d+\b", re.IGNORECASE)
CHECKED_FOLDERS = ("docs", "noema", "noema_langchain", "noema_llamaindex", "tests", "benchmarks")
CHECKED_SUFFIXES = {".py", ".md", ".toml", ".txt", ".ipynb", ".jsonl"}


def _product_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "Makefile", ROOT / "pyproject.toml"]
    for folder in (*CHECKED_FOLDERS, "examples", "scripts"):
        files += [p for p in sorted((ROOT / folder).rglob("*")) if p.suffix in CHECKED_SUFFIXES]
    return files


def test_nothing_in_the_product_names_a_session_an_issue_or_a_decision_id() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}"
        for path in _product_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if TRACKER_WORDS.search(line.replace('scope="session"', ""))
    ]
    assert found == []
