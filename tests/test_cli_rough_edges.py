"""The CLI's smaller promises: ``eval --format``, ``--explain`` in names, the progress bars."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import noema
from noema.cli import main

EXAMPLES = Path(__file__).parent.parent / "examples" / "docs"


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
    assert "'Reid Hoffman found LinkedIn in 2002.': its sentence is a seed" in err
    assert any("the document about LinkedIn" in line or "bridge" in line for line in lines)


def test_each_embedding_stage_has_its_own_bar_and_parsing_never_waits_unexplained(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # two bars were both called "embedding facts and sentences" (totals 44 and 64), and the
    # parsing bar sat at 256/320 while the first batch was merged, with nothing else moving
    folder = tmp_path / "docs"
    folder.mkdir()
    count = 260  # more than one batch of 256
    for n in range(count):
        (folder / f"{n:03}.txt").write_text(f"Person{n} Smith founded Company{n} Labs in Paris.")
    assert main(["build", str(folder), "-o", str(tmp_path / "kb.noema")]) == 0
    lines = capsys.readouterr().err.splitlines()
    labels = [line.split(":")[0] for line in lines if ": " in line and "/" in line]
    assert "embedding facts and sentences" not in labels
    assert {"embedding names", "embedding facts", "embedding sentences"} <= set(labels)
    # the first batch's merge is reported before the parsing ends
    names = next(n for n, line in enumerate(lines) if line.startswith("embedding names"))
    assert names < lines.index(f"parsing: {count}/{count} documents (100%)")
    for label in ("embedding facts", "embedding sentences"):
        totals = {line.split("/")[1].split()[0] for line in lines if line.startswith(label)}
        assert len(totals) == 1, (label, totals)  # one bar, one total
