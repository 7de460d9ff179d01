"""The CLI's smaller promises: ``eval --format``, ``--explain`` in names, the progress bars."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import noema
from noema.cli import main

EXAMPLES = Path(__file__).parent.parent / "examples" / "docs"


@pytest.fixture(scope="module")
def bundle(
    tmp_path_factory: pytest.TempPathFactory,
    embedder: noema.SentenceTransformerEmbedder,
    extractor: noema.SpacyExtractor,
) -> Path:
    path = tmp_path_factory.mktemp("edges") / "kb.noema"
    kb = noema.KnowledgeBase(embedder=embedder, extractor=extractor)
    kb.ingest(sorted(EXAMPLES.glob("*.md")), root=EXAMPLES)
    kb.save(path)
    return path


@pytest.mark.parametrize("format", ["sentences", "natural_language"])
def test_eval_measures_the_format_asked_for(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], format: str
) -> None:
    # eval had no --format: only notation could be measured on one's own data
    question = "Who founded LinkedIn?"
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": question, "answer": "Reid Hoffman"}))
    argv = ["eval", str(bundle), "--questions", str(questions), "--budgets", "200"]
    assert main([*argv, "--json", "--format", format]) == 0
    noema_row = json.loads(capsys.readouterr().out)[0]
    expected = noema.KnowledgeBase.load(bundle).retrieve(question, format=format, max_tokens=200)
    assert noema_row["method"] == "noema"
    assert noema_row["mean_tokens"] == expected.token_count
    assert main([*argv, "--format", format]) == 0
    assert f"format={format}" in capsys.readouterr().out


def test_explain_names_facts_and_entities_not_ids(
    bundle: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it printed "hop from rel_7cb9... to the document about ent_dc5b..."
    question = "Who founded the company that acquired LinkedIn?"
    assert main(["query", str(bundle), question, "--explain", "--hops", "2"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("# ")]
    assert lines and not any(("ent_" in line or "rel_" in line) for line in lines)
    assert "'Reid Hoffman found LinkedIn.': its sentence is a seed" in err
    assert any("the document about LinkedIn" in line or "bridge" in line for line in lines)
