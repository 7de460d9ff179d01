"""``noema build`` over an existing bundle: only new or changed documents are parsed and
embedded, documents no longer given leave, and a bundle of other settings is built again."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import noema
from noema.cli import main
from noema.storage import _opening, _reading
from tests.test_bundle import rewrite
from tests.test_bundle_hashes import _flipped

EXAMPLES = Path(__file__).parent.parent / "examples" / "docs"


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the real embedder is given from now on: a wrapper that records the texts and
    calls the real ``SentenceTransformerEmbedder.embed`` (no fake model)."""
    texts: list[str] = []
    real = noema.SentenceTransformerEmbedder.embed

    def counting(self: noema.SentenceTransformerEmbedder, batch: list[str]) -> object:
        texts.extend(batch)
        return real(self, batch)

    monkeypatch.setattr(noema.SentenceTransformerEmbedder, "embed", counting)
    return texts


def build(docs: Path, output: Path) -> str:
    assert main(["build", str(docs), "--root", str(docs), "-o", str(output)]) == 0
    return output.read_bytes().hex()


def test_a_build_over_a_bundle_embeds_only_the_changed_document(
    tmp_path: Path, embedded: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    docs = Path(shutil.copytree(EXAMPLES, tmp_path / "docs"))
    output = tmp_path / "kb.noema"
    build(docs, output)
    first = len(embedded)
    embedded.clear()
    capsys.readouterr()

    (docs / "linkedin.md").write_text(
        "# LinkedIn\n\nLinkedIn was founded by Allen Blue in 2003. LinkedIn is based in Sunnyvale.\n"
    )
    build(docs, output)
    assert "1 new or changed" in capsys.readouterr().out
    assert embedded and len(embedded) < first / 4, (len(embedded), first)
    assert any("Allen Blue" in text for text in embedded)
    others = ("Larry Page", "Sundar Pichai", "Bill Gates", "Jensen Huang", "Chad Hurley")
    assert [t for t in embedded if any(name in t for name in others)] == []
    kb = noema.KnowledgeBase.load(output)
    assert sorted(kb.graph.documents) == sorted(p.name for p in docs.glob("*.md"))
    text = kb.retrieve("Who founded LinkedIn?", format="natural_language").text
    assert "Allen Blue" in text and "Reid Hoffman" not in text


def test_an_unchanged_build_writes_nothing_and_a_removed_file_leaves(
    tmp_path: Path, embedded: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    docs = Path(shutil.copytree(EXAMPLES, tmp_path / "docs"))
    output = tmp_path / "kb.noema"
    before = build(docs, output)
    embedded.clear()
    assert build(docs, output) == before and embedded == []
    assert "up to date" in capsys.readouterr().out

    (docs / "youtube.md").unlink()
    build(docs, output)
    assert embedded == []
    assert "youtube.md" not in noema.KnowledgeBase.load(output).graph.documents


def test_other_settings_or_rebuild_build_from_the_start(
    tmp_path: Path, embedded: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("Larry Page founded Google.")
    output = tmp_path / "kb.noema"
    build(docs, output)
    argv = ["build", str(docs), "--root", str(docs), "-o", str(output)]
    embedded.clear()
    assert main([*argv, "--similarity-threshold", "0.9"]) == 0
    out, err = capsys.readouterr()
    assert embedded and "similarity threshold" in err and "Built" in out
    assert noema.KnowledgeBase.load(output).similarity_threshold == 0.9
    embedded.clear()
    assert main([*argv, "--similarity-threshold", "0.9", "--rebuild"]) == 0
    assert embedded and "Built" in capsys.readouterr().out


def _facts(path: Path) -> tuple[set[tuple[str, str]], set[tuple[str, str, str]]]:
    """The entities (name, type) and relations (subject, predicate, object names) of a bundle."""
    graph = noema.KnowledgeBase.load(path).graph
    name = {e.id: e.name for e in graph.entities.values()}
    entities = {(e.name, e.type) for e in graph.entities.values()}
    relations = {
        (name[r.subject_id], r.predicate, name[r.object_id]) for r in graph.relations.values()
    }
    return entities, relations


def test_a_build_over_a_bundle_holds_what_a_fresh_build_holds(tmp_path: Path) -> None:
    docs = Path(shutil.copytree(EXAMPLES, tmp_path / "docs"))
    updated = tmp_path / "updated.noema"
    build(docs, updated)
    (docs / "linkedin.md").write_text(
        "# LinkedIn\n\nLinkedIn was founded by Allen Blue in 2003. LinkedIn is based in Sunnyvale.\n"
    )
    (docs / "youtube.md").unlink()
    (docs / "tesla.md").write_text(
        "# Tesla\n\nTesla was founded by Martin Eberhard in 2003. Tesla is based in Austin.\n"
    )
    build(docs, updated)
    fresh = tmp_path / "fresh.noema"
    build(docs, fresh)
    assert _facts(updated) == _facts(fresh)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A folder of one document, and the bundle ``noema build`` made of it."""
    docs = tmp_path_factory.mktemp("docs")
    (docs / "a.md").write_text("Larry Page founded Google.")
    output = docs.parent / "built.noema"
    build(docs, output)
    return docs, output


def _newer(path: Path) -> None:
    def schema_7(members: dict[str, bytes]) -> None:
        manifest = members["manifest.json"]
        members["manifest.json"] = manifest.replace(b'"schema_version":6', b'"schema_version":7')

    rewrite(path, path, schema_7)


def _damaged(path: Path) -> None:
    _flipped(path, path, "embeddings.bin", 100)


def _not_a_bundle(path: Path) -> None:
    path.write_text("notes I keep here\n")


@pytest.mark.parametrize(
    ("spoil", "options"),
    [
        (_newer, []),
        (_damaged, []),
        (_damaged, ["--similarity-threshold", "0.9"]),
        (None, []),
        (_not_a_bundle, []),
        (_newer, ["--ray"]),
    ],
    ids=["newer-schema", "damaged", "damaged-other-settings", "over-budget", "not-a-bundle", "ray"],
)
def test_a_bundle_build_cannot_read_is_left_as_it_is_unless_rebuild_is_asked(
    built: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    spoil: Callable[[Path], None] | None,
    options: list[str],
) -> None:
    # "building it from the start" replaced a bundle of a newer Noema, a damaged one, or one
    # the memory budget refused, and said nothing else: the user's bundle was gone
    docs, bundle = built
    output = tmp_path / "kb.noema"
    output.write_bytes(bundle.read_bytes())
    if spoil is not None:
        spoil(output)
    before = output.read_bytes()
    argv = ["build", str(docs), "--root", str(docs), "-o", str(output), *options]
    with monkeypatch.context() as patched:
        if spoil is None:  # a bundle larger than this machine's default budget
            patched.setattr(_reading, "default_max_memory", lambda: 1024)
        assert main(argv) == 1
    error = capsys.readouterr().err
    assert error.startswith("Error: ") and len(error.splitlines()) == 1
    assert "left as it is" in error and "--rebuild" in error
    assert output.read_bytes() == before
    if "--ray" in options:
        return  # (Ray is not needed to see the refusal)
    assert main([*argv, "--rebuild"]) == 0
    assert sorted(noema.KnowledgeBase.load(output).graph.documents) == ["a.md"]


@pytest.mark.parametrize("options", [["--similarity-threshold", "0.9"], ["--ray"]])
def test_a_large_bundle_with_a_damaged_graph_json_is_left_as_it_is(
    built: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
) -> None:
    # opening hashes only the members up to 1 MiB: a large bundle's damaged graph.json opened,
    # and a bundle of other settings (or any, with --ray) was replaced
    docs, bundle = built
    output = _flipped(bundle, tmp_path / "kb.noema", "graph.json", -40)
    before = output.read_bytes()
    monkeypatch.setattr(_opening, "HASHED_ON_OPENING_BYTES", 0)  # every member counted large
    noema.KnowledgeBase.load(output)  # what a build saw: it opens
    argv = ["build", str(docs), "--root", str(docs), "-o", str(output), *options]
    assert main(argv) == 1
    error = capsys.readouterr().err
    assert error.startswith("Error: ") and "graph.json" in error and "left as it is" in error
    assert output.read_bytes() == before
