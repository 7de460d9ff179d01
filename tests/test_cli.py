from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import types_of

import noema
from noema.cli import build_parser, main
from noema.storage.bundle import SCHEMA_VERSION

EXAMPLES = Path(__file__).parent.parent / "examples" / "docs"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "kb.noema"
    assert main(["build", str(EXAMPLES), "-o", str(path)]) == 0
    return path


def query(bundle: Path, question: str, flags: str = "") -> int:
    """``noema query BUNDLE QUESTION`` with ``flags`` written as on a command line."""
    return main(["query", str(bundle), question, *flags.split()])


def test_build_prints_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Larry Page founded Google.")
    (docs / "b.jsonl").write_text(
        json.dumps({"id": "b1", "text": "Sundar Pichai is the CEO of Google.", "title": "Pichai"})
        + "\n"
    )
    (docs / "empty.md").write_text("   ")
    (docs / "latin1.txt").write_bytes("caf\xe9 Z\xfcrich".encode("latin-1"))
    (docs / "binary.txt").write_bytes(b"\x00\x01\x02binary")
    assert main(["build", str(docs), "-o", str(tmp_path / "kb.noema")]) == 0
    out, err = capsys.readouterr()
    assert "2 documents" in out and "2 relations" in out
    for name in ("empty.md", "latin1.txt", "binary.txt"):
        assert name in err


def test_query_matches_retrieval_md(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = query(bundle, "Who is Google's CEO?", "--top-k 5 --hops 1 --max-tokens 200")
    out, err = capsys.readouterr()
    assert code == 0
    assert "-ceo_of->" in out and "tokens" in err


def test_query_json_and_format(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert query(bundle, "Who founded LinkedIn?", "--json --format natural_language") == 0
    data = json.loads(capsys.readouterr().out)
    assert "Reid Hoffman found LinkedIn in 2002." in data["text"].splitlines()
    assert data["token_count"] <= 200 and data["fact_matches"][0]["relation_id"].startswith("rel_")


def test_query_sentences_and_vector_seeds(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    question = "Who founded LinkedIn?"
    assert main(["query", str(bundle), question, "--format", "sentences", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["format"] == "sentences" and "Reid Hoffman" in data["text"]
    assert data["text"].startswith("# ")  # grouped under the document's title
    assert main(["query", str(bundle), question, "--seeds", "vector", "--explain"]) == 0
    err = capsys.readouterr().err
    assert "seed, similarity" in err and "sentence is a seed" not in err
    assert main(["query", str(bundle), question, "--min-similarity", "0.99"]) == 0
    assert "(no facts found)" in capsys.readouterr().err


def test_info_notation_decode_validate(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["info", str(bundle)]) == 0
    assert "entities" in capsys.readouterr().out
    assert main(["info", str(bundle), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["relations"] > 10
    assert main(["notation", str(bundle)]) == 0
    notation = capsys.readouterr().out
    assert "*found (" in notation  # "founded ... in 2002": an event with its year
    (tmp_path / "n.txt").write_text(notation)
    assert main(["decode", str(tmp_path / "n.txt")]) == 0
    assert "Reid Hoffman found LinkedIn in 2002." in capsys.readouterr().out
    assert main(["validate", str(bundle)]) == 0
    assert capsys.readouterr().out.startswith("OK")


def test_decode_reads_stdin() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "noema", "decode", "-"],
        input="#1 Sundar Pichai :PERSON\n#2 Google :ORG\n#1 -ceo_of-> #2\n",
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == "Sundar Pichai is the ceo of Google.\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["query", "missing.noema", "q"], "not a file"),
        (["decode", "missing.txt"], "cannot read"),
        (["build", "no/such/dir", "-o", "x.noema"], "no such file"),
        (["query", "{bundle}", "q", "--top-k", "0"], "top_k"),
    ],
)
def test_errors_are_one_line_and_exit_1(
    bundle: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    argv = [a.replace("{bundle}", str(bundle)) for a in argv]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and message in err and err.count("\n") == 1


def test_entity_shows_the_type_history_and_facts(
    harrow: noema.KnowledgeBase, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = types_of(harrow, "Harrow Avionics")
    harrow.merge_entities(ids["PERSON"], ids["ORG"], type="ORG")  # the kept one is retyped too
    path = harrow.save(tmp_path / "kb.noema")
    assert main(["entity", str(path), "harrow avionics"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == [
        f"Harrow Avionics :ORG ({ids['PERSON']})",
        "  'Harrow Avionics' joined it: the same name once normalized [o2]",
        "  'Harrow Avionics' joined it (was ORG): merged on request [o1, o2]",
        "  type changed from PERSON to ORG on request [p]",
    ]
    assert "#1 -work_in-> #2" in lines
    assert main(["entity", str(path), "Harrow Avionics", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["entity_id"], shown["type"]) == (ids["PERSON"], "ORG")
    assert [(h["rule"], h["type"]) for h in shown["history"]] == [
        ("exact", "ORG"),
        ("user", "ORG"),
        ("retype", "PERSON"),
    ]
    assert shown["history"][2]["description"] == "type changed from PERSON to ORG on request"
    assert len(shown["facts"]) == 3
    assert main(["entity", str(path), "Atlantis"]) == 1
    assert "Error: no entity named 'Atlantis'" in capsys.readouterr().err


def test_malformed_notation_error_names_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.txt").write_text("#1 Google :ORG\n#1 -found-> #9\n")
    assert main(["decode", str(tmp_path / "bad.txt")]) == 1
    assert "line 2" in capsys.readouterr().err


def test_every_command_has_help_with_an_example() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    commands = sub.choices  # type: ignore[attr-defined]
    assert set(commands) == {
        "build",
        "query",
        "info",
        "entity",
        "notation",
        "decode",
        "validate",
        "eval",
        "merge",
        "show",
        "serve",
    }
    for name, command in commands.items():
        assert "Example:" in command.format_help(), name
        assert f"noema {name}" in command.format_help()


def test_eval_on_a_small_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        "\n".join(
            json.dumps(q)
            for q in [
                {"question": "Who founded LinkedIn?", "answer": "Reid Hoffman"},
                {"question": "Where is Nvidia headquartered?", "answers": ["Santa Clara"]},
                {"question": "What does Nvidia design?"},
            ]
        )
    )
    assert (
        main(
            [
                "eval",
                str(EXAMPLES),
                "--questions",
                str(questions),
                "--budgets",
                "50",
                "200",
                "--json",
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    assert {(r["method"], r["max_tokens"]) for r in rows} == {
        ("noema", 50),
        ("chunks", 50),
        ("noema", 200),
        ("chunks", 200),
    }
    for row in rows:
        assert (
            row["questions"] == 3
            and 0 <= row["recall"] <= 1
            and row["mean_tokens"] <= row["max_tokens"]
        )
    noema_200 = next(r for r in rows if r["method"] == "noema" and r["max_tokens"] == 200)
    assert noema_200["recall"] == 1.0
    assert main(["eval", str(EXAMPLES), "--questions", str(questions), "--budgets", "100"]) == 0
    assert "answer recall" in capsys.readouterr().out


def test_merge_bundles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = sorted(EXAMPLES.glob("*.md"))
    assert main(["build", *map(str, docs[:3]), "-o", str(tmp_path / "a.noema")]) == 0
    assert main(["build", *map(str, docs[3:]), "-o", str(tmp_path / "b.noema")]) == 0
    assert main(["build", str(EXAMPLES), "-o", str(tmp_path / "whole.noema")]) == 0
    assert (
        main(
            [
                "merge",
                str(tmp_path / "a.noema"),
                str(tmp_path / "b.noema"),
                "-o",
                str(tmp_path / "c.noema"),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["notation", str(tmp_path / "c.noema")]) == 0
    merged = set(capsys.readouterr().out.splitlines())
    assert main(["notation", str(tmp_path / "whole.noema")]) == 0
    whole = set(capsys.readouterr().out.splitlines())
    assert len(merged & whole) / len(whole) > 0.9


def test_query_explain_and_filters(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flags = "--explain --type PERSON --type ORG --predicate found"
    assert query(bundle, "Who founded Microsoft?", flags) == 0
    out, err = capsys.readouterr()
    assert "*found (" in out and "seed, similarity" in err
    assert main(["query", str(bundle), "x", "--where", "novalue"]) == 1
    assert "KEY=VALUE" in capsys.readouterr().err


def test_show_writes_html_and_graphml(bundle: Path, tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    assert (
        main(
            [
                "show",
                str(bundle),
                "--question",
                "Who founded Google?",
                "-o",
                str(tmp_path / "q.html"),
            ]
        )
        == 0
    )
    assert "<svg" in (tmp_path / "q.html").read_text()
    assert main(["show", str(bundle), "-o", str(tmp_path / "kb.html")]) == 0
    assert main(["show", str(bundle), "--graphml", "-o", str(tmp_path / "kb.graphml")]) == 0
    root = ET.parse(tmp_path / "kb.graphml").getroot()
    assert len(root.findall(".//{http://graphml.graphdrawing.org/xmlns}edge")) > 10


def test_eval_takes_a_built_bundle(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # eval could only parse documents again
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"question": "Who founded LinkedIn?", "answer": "Reid Hoffman"})
    )
    argv = ["--questions", str(questions), "--budgets", "200", "--json"]
    assert main(["eval", str(bundle), *argv]) == 0
    from_bundle = json.loads(capsys.readouterr().out)
    assert main(["eval", str(EXAMPLES), *argv]) == 0
    from_documents = json.loads(capsys.readouterr().out)
    drop = ("p50_ms", "p95_ms")
    assert [{k: v for k, v in r.items() if k not in drop} for r in from_bundle] == [
        {k: v for k, v in r.items() if k not in drop} for r in from_documents
    ]


class _Terminal:
    """stderr as a terminal, to see the progress the CLI draws there."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


def test_build_shows_progress_bars_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["build", str(EXAMPLES), "-o", str(tmp_path / "kb.noema")]) == 0
    total = len(list(EXAMPLES.glob("*.md")))
    assert re.search(rf"parsing: 100%\S* {total}/{total} ", terminal.text), terminal.text
    for stage in ("facts", "sentences"):  # a bar of its own each, counting its own texts
        embedded = re.search(rf"embedding {stage}: 100%\S* (\d+)/(\d+) ", terminal.text)
        assert embedded and embedded.group(1) == embedded.group(2), terminal.text
        assert int(embedded.group(1)) >= total


def test_build_prints_plain_progress_lines_in_a_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # on a non-terminal nothing was printed for minutes, and the embedding
    # stage had no progress at all
    assert main(["build", str(EXAMPLES), "-o", str(tmp_path / "kb.noema")]) == 0
    lines = capsys.readouterr().err.splitlines()
    total = len(list(EXAMPLES.glob("*.md")))
    assert f"parsing: {total}/{total} documents (100%)" in lines
    for stage in ("facts", "sentences"):
        embedding = [line for line in lines if line.startswith(f"embedding {stage}: ")]
        assert embedding and embedding[-1].endswith("(100%)")
    assert all("\r" not in line for line in lines)


# -- a CLI that feels instant, quiet in pipes, careful with paths ----------------------
_HEAVY = ("torch", "sentence_transformers", "transformers", "spacy")


@pytest.mark.parametrize(
    "argv",
    [
        ["info", "{bundle}"],
        ["info", "{bundle}", "--json"],
        ["notation", "{bundle}"],
        ["entity", "{bundle}", "Google"],
        ["validate", "{bundle}"],
        ["show", "{bundle}", "-o", "{tmp}/kb.html"],
        ["show", "{bundle}", "--graphml", "-o", "{tmp}/kb.graphml"],
    ],
)
def test_commands_that_embed_nothing_load_no_model(
    bundle: Path, tmp_path: Path, argv: list[str]
) -> None:
    # noema info took 7.7 s: opening a bundle loaded torch and the embedding model to read the
    # vectors' dimension, which the model's files say
    argv = [a.replace("{bundle}", str(bundle)).replace("{tmp}", str(tmp_path)) for a in argv]
    program = (
        "import sys; from noema.cli import main; code = main(sys.argv[1:]); "
        f"print('LOADED', [m for m in {_HEAVY!r} if m in sys.modules], file=sys.stderr); "
        "sys.exit(code)"
    )
    result = subprocess.run(
        [sys.executable, "-c", program, *argv], capture_output=True, text=True, check=True
    )
    assert "LOADED []" in result.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["query", "{missing}", "q", "--max-tokens", "0"], "max_tokens must be"),
        (["query", "{missing}", "q", "--type", "PLANET"], "unknown entity type 'PLANET'"),
        (["query", "{missing}", "  "], "question is empty"),
        (
            ["query", "{missing}", "q", "--format", "notation", "--min-similarity", "2"],
            "min_similarity",
        ),
        (["show", "{missing}", "-o", "{tmp}/x.html", "--question", "q", "--hops", "-1"], "hops"),
        (["build", "{missing}", "-o", "{tmp}/no/such/dir/kb.noema"], "no/such/dir"),
        (["merge", "{missing}", "-o", "{tmp}/no/such/dir/kb.noema"], "no/such/dir"),
        (["show", "{missing}", "-o", "{tmp}/no/such/dir/kb.html"], "no/such/dir"),
    ],
)
def test_options_and_output_paths_are_checked_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    # the bundle does not exist: the option's own error must come first, before opening anything
    missing = str(tmp_path / "missing.noema")
    argv = [a.replace("{missing}", missing).replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "no").exists()  # no directory was made


def test_output_into_a_missing_directory_is_refused(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "no" / "such" / "dir" / "kb.noema"
    assert main(["merge", str(bundle), "-o", str(target)]) == 1
    err = capsys.readouterr().err
    assert "directory" in err and "does not exist" in err
    assert not (tmp_path / "no").exists()


def test_a_closed_pipe_ends_quietly(bundle: Path) -> None:
    # `noema notation kb | noema decode - | head` ended in "Error: [Errno 32] Broken pipe"
    notation = subprocess.run(
        [sys.executable, "-m", "noema", "notation", str(bundle)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    decoder = subprocess.Popen(
        [sys.executable, "-m", "noema", "decode", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert decoder.stdout is not None and decoder.stdin is not None
    decoder.stdout.close()  # the reader (head) has gone before the decoder writes
    _, err = decoder.communicate(notation)
    assert err == ""
    assert decoder.returncode == 141  # what a Unix tool killed by SIGPIPE reports in a shell


def test_a_ray_build_whose_workers_die_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `noema build --ray` whose workers were killed printed Ray's ActorDiedError traceback. The
    # build is replaced by one that raises what Ray raises then: this test is about the CLI's
    # handling of it (killing workers for real is test_distributed's job)
    from ray.exceptions import ActorDiedError

    import noema.distributed

    def dies(*args: object, **kwargs: object) -> None:
        raise ActorDiedError()

    monkeypatch.setattr(noema.distributed, "build_on_ray", dies)
    target = tmp_path / "kb.noema"
    assert main(["build", str(EXAMPLES), "-o", str(target), "--ray"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: the Ray build failed (ActorDiedError)") and err.count("\n") == 1
    assert not target.exists()


def test_info_reads_the_manifest_alone(
    tmp_path: Path,
    company_kb: noema.KnowledgeBase,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`noema info` showed the manifest after loading the whole bundle (graph,
    vectors, sidecar); from schema 3 the manifest holds the merge count too, and nothing else
    is read. An older bundle still has its merge log counted from graph.json."""
    from noema.model.graph import SemanticGraph

    path = company_kb.save(tmp_path / "kb.noema")
    real = SemanticGraph.from_dict

    def unread(data: object) -> SemanticGraph:
        raise AssertionError("graph.json was parsed")

    monkeypatch.setattr(SemanticGraph, "from_dict", unread)
    assert main(["info", "--json", str(path)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (
        shown["merges"] == len(company_kb.merge_log) and shown["schema_version"] == SCHEMA_VERSION
    )
    facts = len(company_kb.graph.relations) + len(company_kb.graph.events)
    assert shown["counts"]["facts"] == facts

    monkeypatch.setattr(SemanticGraph, "from_dict", real)
    old = Path(__file__).parent / "data" / "schema2.noema"
    assert main(["info", "--json", str(old)]) == 0
    merges = len(noema.KnowledgeBase.load(old).merge_log)
    assert json.loads(capsys.readouterr().out)["merges"] == merges == 1


def test_eval_asks_each_question_as_of_its_lines_day(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = tmp_path / "q.jsonl"
    row = {"question": "Who founded LinkedIn?", "answer": "Reid Hoffman", "as_of": "2020"}
    questions.write_text(json.dumps(row))
    argv = ["eval", str(bundle), "--questions", str(questions), "--budgets", "200"]
    assert main(argv) == 0
    assert "1 asked with as_of" in capsys.readouterr().out
    assert main([*argv, "--no-as-of"]) == 0
    assert "0 asked with as_of" in capsys.readouterr().out
    # the day is checked as retrieve checks it, with the line it is on
    questions.write_text(json.dumps({**row, "as_of": "last year"}))
    assert main(argv) == 1
    assert "q.jsonl:1: as_of must be a date" in capsys.readouterr().err


def test_evaluate_passes_each_questions_as_of(company_kb: noema.KnowledgeBase) -> None:
    from noema.evaluate import EvalQuestion, evaluate

    documents = list(company_kb.graph.documents.values())
    with pytest.raises(noema.OptionError, match="as_of must be"):
        evaluate(company_kb, documents, [EvalQuestion("Who founded Google?", (), "someday")])
