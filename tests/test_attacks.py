"""Attacks from the catalogue in docs/security.md: what Noema saves always loads, a hostile
bundle is one clear error, and the CLI never shows a traceback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import noema
from noema import KnowledgeBase
from noema.cli import main


def _nested(levels: int) -> object:
    value: object = "leaf"
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    "number", [2**64, -(2**63) - 1, 7 * 10**400], ids=["2**64", "-2**63-1", "400 digits"]
)
def test_an_integer_a_bundle_cannot_read_back_is_refused_at_ingest(
    make_kb: Callable[..., KnowledgeBase], number: int
) -> None:
    # json wrote it, orjson read it back as a float (changed) or as infinity (refused on load)
    kb = make_kb()
    with pytest.raises(ValueError, match="'serial'.*outside the 64-bit range"):
        kb.ingest([noema.Document("Larry Page founded Google.", metadata={"serial": number})])
    assert not kb.graph.documents


def test_the_widest_integers_come_back_exactly(
    make_kb: Callable[..., KnowledgeBase], tmp_path: Path
) -> None:
    kb = make_kb()
    metadata = {"high": 2**64 - 1, "low": -(2**63), "listed": [2**63, 1]}
    kb.ingest([noema.Document("Larry Page founded Google.", id="g", metadata=metadata)])
    loaded = KnowledgeBase.load(kb.save(tmp_path / "kb.noema"))
    stored = dict(loaded.graph.documents["g"].metadata)
    assert {k: stored[k] for k in metadata} == metadata
    assert all(type(v) is int for v in (stored["high"], stored["low"], *stored["listed"]))


def test_a_jsonl_record_with_a_huge_integer_is_skipped_and_the_bundle_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "Built", and every later query failed: the bundle held a number no reader takes
    (tmp_path / "r.jsonl").write_text(
        '{"text": "Larry Page founded Google.", "serial": ' + "7" * 400 + "}\n"
        '{"text": "Jensen Huang founded Nvidia.", "serial": 18446744073709551616}\n'
        '{"text": "Sundar Pichai is the CEO of Google.", "serial": 18446744073709551615}\n'
    )
    assert main(["build", str(tmp_path / "r.jsonl"), "-o", str(tmp_path / "kb.noema")]) == 0
    out, err = capsys.readouterr()
    assert "1 documents" in out
    assert "r.jsonl:1: skipped, holds an integer outside 64 bits" in err
    assert "r.jsonl:2: skipped, holds an integer outside 64 bits" in err
    (doc,) = KnowledgeBase.load(tmp_path / "kb.noema").graph.documents.values()
    assert doc.metadata["serial"] == 2**64 - 1


@pytest.mark.parametrize("levels", range(58, 66))
def test_metadata_ingest_accepts_is_saved_at_every_depth(
    make_kb: Callable[..., KnowledgeBase], tmp_path: Path, levels: int
) -> None:
    # graph.json holds metadata three levels below its top: 62 to 64 levels ingested and never
    # saved ("nested deeper than 64 levels" at every save)
    kb = make_kb()
    try:
        kb.ingest([noema.Document("Larry Page founded Google.", metadata={"n": _nested(levels)})])
    except ValueError as exc:
        assert "64 levels" in str(exc) and not kb.graph.documents
        return
    loaded = KnowledgeBase.load(kb.save(tmp_path / "kb.noema"))
    (doc,) = loaded.graph.documents.values()
    assert doc.metadata["n"] == _nested(levels)
