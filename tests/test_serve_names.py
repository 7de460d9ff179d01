"""The MCP tools name documents read from files without showing the server's absolute paths."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from mcp import Client

import noema
from noema.serve import build_server

EXAMPLES = Path(__file__).parent.parent / "examples" / "docs"


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
    embedder: noema.SentenceTransformerEmbedder,
    extractor: noema.SpacyExtractor,
) -> tuple[noema.KnowledgeBase, Path]:
    """A base of files read without a root: their ids are ``file:`` and absolute paths."""
    folder = tmp_path_factory.mktemp("private-home") / "docs"
    shutil.copytree(EXAMPLES, folder)
    (folder / "notes").mkdir()
    (folder / "notes" / "ada.txt").write_text("Ada Lovelace wrote the first computer program.")
    kb = noema.KnowledgeBase(embedder=embedder, extractor=extractor)
    kb.ingest([*sorted(folder.glob("*.md")), folder / "notes" / "ada.txt"])
    assert all(i.startswith(f"file:{folder}") for i in kb.graph.documents)
    return kb, folder


async def test_documents_are_shown_relative_to_the_served_folder(
    served: tuple[noema.KnowledgeBase, Path],
) -> None:
    # the documents tool showed "file:/home/.../docs/google.md" and the absolute source path
    kb, folder = served
    async with Client(build_server(kb)) as client:
        listed = (await client.call_tool("documents", {})).structured_content
        assert listed is not None
        assert str(folder.parent) not in json.dumps(listed)
        ids = sorted(d["document_id"] for d in listed["documents"])
        assert ids == sorted([p.name for p in EXAMPLES.glob("*.md")] + ["notes/ada.txt"])
        google = next(d for d in listed["documents"] if d["document_id"] == "google.md")
        assert google["metadata"]["source"] == "google.md"
        text = (await client.read_resource(google["uri"])).contents[0]
        assert text.text == (EXAMPLES / "google.md").read_text()  # type: ignore[union-attr]

        # the same names in citations, and taken back in filters
        arguments = {"question": "Who founded Google?", "filters": {"document_ids": ["google.md"]}}
        reply = (await client.call_tool("retrieve", arguments)).structured_content
        assert reply is not None and reply["facts"]
        cited = {c["document_id"] for f in reply["facts"] for c in f["citations"]}
        assert cited == {"google.md"}
        found = (await client.call_tool("entity", {"name": "Ada Lovelace"})).structured_content
        assert found is not None and str(folder) not in json.dumps(found)


async def test_with_a_root_documents_are_shown_relative_to_it(
    served: tuple[noema.KnowledgeBase, Path],
) -> None:
    kb, folder = served
    async with Client(build_server(kb, root=folder.parent)) as client:
        listed = (await client.call_tool("documents", {})).structured_content
    assert listed is not None
    assert "docs/notes/ada.txt" in {d["document_id"] for d in listed["documents"]}
