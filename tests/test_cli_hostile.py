"""Every hostile bundle and odd input ends in one ``Error:`` line (or
succeeds), never a traceback. ``main`` is called in-process, so an exception it does not turn
into an exit code fails the test as the traceback a user would have seen."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_bundle import (
    CORRUPTIONS,
    _bomb,
    _claim_gigabytes,
    _foreign_ivf_claiming_gigabytes,
    _manifest,
    rewrite,
)

from noema import KnowledgeBase
from noema.cli import main

HOSTILE = {
    # (all of tests/test_bundle.py's but the index of another bundle, which needs a second one)
    **{n: (change, fix) for n, (change, fix, _) in CORRUPTIONS.items() if "another" not in n},
    "flat index claims 3 GiB": (_claim_gigabytes(37), True),
    "ivf index claims 3 GiB": (_foreign_ivf_claiming_gigabytes, True),
    "member inflates past its size": (_bomb, False),
    "embedding model is a directory without a model": (
        _manifest(lambda m: m.update(embedding_model="/etc")),
        False,
    ),
    # info read them from the manifest alone and raised TypeError or KeyError
    "counts is a string": (_manifest(lambda m: m.update(counts="many")), False),
    "counts is a list": (_manifest(lambda m: m.update(counts=[1, 2])), False),
    "counts is empty": (_manifest(lambda m: m.update(counts={})), False),
    "a count is not a number": (_manifest(lambda m: m["counts"].update(facts="7")), False),
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory, company_kb: KnowledgeBase) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "kb.noema"
    company_kb.save(path)
    return path


def _one_error_line(err: str) -> None:
    assert "Traceback" not in err
    assert err.startswith("Error: ") and err.count("\n") == 1, err


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_bundles_are_one_error_line(
    saved: Path, tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    change, fix = HOSTILE[case]
    bad = rewrite(saved, tmp_path / "bad.noema", change, fix_manifest=fix)
    for argv in (["query", str(bad), "Who founded Google?"], ["info", str(bad)]):
        code = main(argv)
        out, err = capsys.readouterr()
        if argv[0] == "info" and code == 0:
            continue  # info reads the manifest only; a bad graph is found by query
        assert code == 1, (argv, out)
        _one_error_line(err)


def _jsonl(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


INPUTS = {
    # item 7: one fact repeated (was quadratic)
    "repeated sentences": lambda d: (d / "log.txt").write_text("Larry Page founded Google. " * 500),
    # item 10: U+2028 and U+0085 inside a JSONL record
    "line separators in jsonl": lambda d: _jsonl(
        d / "a.jsonl", {"id": "a", "text": "Larry Page\u2028founded Google.\u0085"}
    ),
    # item 11: a JSONL line nested too deeply to parse
    "deeply nested jsonl": lambda d: (d / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000),
    # item 13: a lone surrogate in a record
    "lone surrogate": lambda d: (d / "s.jsonl").write_text(
        '{"id": "s", "text": "Google \\ud800 Inc"}\n'
    ),
    # item 14: the same id twice in one file
    "duplicate ids": lambda d: _jsonl(
        d / "dup.jsonl",
        {"id": "x", "text": "Larry Page founded Google."},
        {"id": "x", "text": "Y."},
    ),
    # item 16: a NUL inside a name, exported as GraphML afterwards
    "nul in a name": lambda d: _jsonl(
        d / "n.jsonl", {"id": "n", "text": "Acme\u0000Corp hired Ann Lee."}
    ),
}


@pytest.mark.parametrize("case", sorted(INPUTS))
def test_odd_inputs_build_or_fail_in_one_line(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    INPUTS[case](docs)
    out_path = tmp_path / "kb.noema"
    code = main(["build", str(docs), "-o", str(out_path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if code == 1:
        _one_error_line(err.splitlines()[-1] + "\n")
        return
    assert code == 0
    for argv in (
        ["query", str(out_path), "Who founded Google?", "--hops", str(10**9)],  # item 9
        ["query", str(out_path), "Google", "--hops", "50", "--max-tokens", str(10**6)],  # item 8
        ["show", str(out_path), "-o", str(tmp_path / "g.graphml")],  # item 16
        ["validate", str(out_path)],
    ):
        assert main(argv) == 0, argv
        assert "Traceback" not in capsys.readouterr().err


def test_notation_with_a_huge_local_id_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "n.txt").write_text("#" + "1" * 5000 + " A :ORG\n")  # item 15
    assert main(["decode", str(tmp_path / "n.txt")]) == 1
    err = capsys.readouterr().err
    _one_error_line(err)
    assert "line 1" in err


def test_n_process_zero_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ok.txt").write_text("Larry Page founded Google.")  # item 17
    argv = ["build", str(tmp_path / "ok.txt"), "-o", str(tmp_path / "x.noema"), "--n-process", "0"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    _one_error_line(err)
    assert "n_process" in err


def test_a_bug_in_noema_is_a_traceback_not_an_error_line(
    saved: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every ValueError was shown as one `Error:` line, so a bug in Noema read as the
    # user's mistake; only Noema's errors, the CLI's and the OS's are
    import noema.cli.bundles

    def broken(graph: object) -> str:
        raise ValueError("a bug")

    monkeypatch.setattr(noema.cli.bundles, "encode_graph", broken)
    with pytest.raises(ValueError, match="a bug"):
        main(["notation", str(saved)])


@pytest.mark.parametrize("option", ["--embedding-model", "--spacy-model"])
def test_an_empty_model_name_is_one_error_line_before_parsing(
    tmp_path: Path, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # --embedding-model '' parsed every document, then raised TypeError from int(None)
    (tmp_path / "ok.txt").write_text("Larry Page founded Google.")
    assert (
        main(["build", str(tmp_path / "ok.txt"), "-o", str(tmp_path / "x.noema"), option, ""]) == 1
    )
    out, err = capsys.readouterr()
    _one_error_line(err)
    assert "must name" in err and "parsing" not in err
    assert not (tmp_path / "x.noema").exists()


def test_a_build_with_stderr_closed_writes_its_bundle(tmp_path: Path) -> None:
    # with 2>&- sys.stderr is None: the first progress line raised AttributeError, unseen
    (tmp_path / "ok.txt").write_text("Larry Page founded Google.")
    out = tmp_path / "kb.noema"
    result = subprocess.run(
        f"{shlex.quote(sys.executable)} -m noema build {shlex.quote(str(tmp_path / 'ok.txt'))} "
        f"-o {shlex.quote(str(out))} 2>&-",
        shell=True,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        timeout=300,
    )
    assert result.returncode == 0 and result.stdout.startswith(f"Built {out}")
    assert list(KnowledgeBase.load(out).graph.documents)
