"""Concurrent use, bad documents and awkward text: clear behaviour, nothing lost."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

import noema
from noema import KnowledgeBase

QUESTIONS = [
    "Who founded Google?",
    "Who is Google's CEO?",
    "Who acquired YouTube?",
    "Where is Nvidia headquartered?",
    "Who founded the company that acquired Mellanox?",
    "When did Nvidia acquire Mellanox?",
    "Who runs YouTube?",
    "Where was Mellanox based?",
]


def test_many_threads_give_the_sequential_results(company_kb: KnowledgeBase) -> None:
    """8 threads, 2,000 queries: no error, and every answer identical to the sequential one."""
    expected = {(q, h): company_kb.retrieve(q, hops=h) for q in QUESTIONS for h in (0, 1, 2)}
    jobs = [(q, h) for _ in range(84) for q in QUESTIONS for h in (0, 1, 2)][:2000]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda job: (job, company_kb.retrieve(job[0], hops=job[1])), jobs))
    assert len(results) == 2000
    assert all(result == expected[job] for job, result in results)


def test_ingest_during_retrieval_is_safe(make_kb: Callable[..., KnowledgeBase]) -> None:
    kb = make_kb()
    kb.ingest(["Larry Page founded Google.", "Google acquired YouTube in 2006."])
    before = kb.retrieve("Who founded Google?", max_tokens=400)
    stop = threading.Event()
    seen: list[noema.RetrievalResult] = []
    errors: list[BaseException] = []

    def reader() -> None:
        while not stop.is_set():
            try:
                seen.append(kb.retrieve("Who founded Google?", max_tokens=400))
            except BaseException as exc:  # pragma: no cover - the assertion below reports it
                errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    kb.ingest(
        ["Sergey Brin co-founded Google with Larry Page.", "Sundar Pichai is the CEO of Google."]
    )
    after = kb.retrieve("Who founded Google?", max_tokens=400)
    stop.set()
    for t in threads:
        t.join()
    assert not errors
    assert seen and all(r in (before, after) for r in seen)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\t  ",
        "\x00\x01\x02",
        "😀🚀 emoji only ✨",
        "Ceci n'est pas une pipe. Der Hund bellt.",
        "A" * 5000,
    ],
    ids=["empty", "whitespace", "control", "emoji", "non-english", "one long word"],
)
def test_odd_texts_ingest_without_error(make_kb: Callable[..., KnowledgeBase], text: str) -> None:
    kb = make_kb()
    kb.ingest([text])
    assert noema.check_round_trip(kb.graph).ok
    kb.retrieve("anything")


def test_names_with_notation_characters(make_kb: Callable[..., KnowledgeBase]) -> None:
    kb = make_kb()
    kb.ingest(
        [
            "Larry Page founded Google: Search -> Ads. #1 Fan Club was founded by Sergey\nBrin.\x0bIt grew."
        ]
    )
    assert noema.check_round_trip(kb.graph).ok
    for entity in kb.graph.entities.values():
        assert "\n" not in entity.name and "\x0b" not in entity.name
    text = kb.retrieve("Who founded Google?").text
    parsed = noema.parse_notation(text)  # (a parse result is truthy even when empty)
    assert parsed.relations and {e.name for e in parsed.entities.values()} <= {
        e.name for e in kb.graph.entities.values()
    }


def test_user_names_with_line_breaks_are_refused_not_corrupted() -> None:
    g = noema.SemanticGraph()
    a = g.add_entity("Evil\n#9 Injected :ORG", "ORG")
    b = g.add_entity("B", "ORG")
    g.add_relation(a, "own", b)
    with pytest.raises(noema.NotationError):
        noema.encode_graph(g)


def test_binary_file_is_skipped_with_a_warning(
    make_kb: Callable[..., KnowledgeBase], tmp_path
) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "bin.txt").write_bytes(b"\x00\xff\xfe")
    (tmp_path / "ok.txt").write_text("Larry Page founded Google.")
    kb = make_kb()
    with pytest.warns(UserWarning, match="bin.txt"):
        kb.ingest([tmp_path])
    assert len(kb.graph.relations) == 1


def test_a_huge_local_id_is_a_notation_error_with_its_line() -> None:
    with pytest.raises(noema.NotationError) as caught:
        noema.parse_notation("#1 A :ORG\n#" + "1" * 5000 + " B :ORG")
    assert caught.value.line_number == 2


def test_jsonl_records_keep_unicode_line_separators(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from noema.ingest.sources import read_documents

    path = tmp_path / "docs.jsonl"
    path.write_text(
        json.dumps({"id": "a", "text": "Larry Page\u2028founded Google."}, ensure_ascii=False)
        + "\n"
        + "[" * 100_000
        + "\n",
        encoding="utf-8",
    )
    skipped: list[str] = []
    docs = list(read_documents([path], on_skip=skipped.append))
    assert [d.text for d in docs] == ["Larry Page\u2028founded Google."]
    assert len(skipped) == 1 and ":2:" in skipped[0]


def test_ingest_refuses_what_it_could_not_save(make_kb) -> None:  # type: ignore[no-untyped-def]
    import datetime

    kb = make_kb()
    with pytest.raises(TypeError, match="'when'"):
        kb.ingest(
            [
                noema.Document(
                    "Larry Page founded Google.", metadata={"when": datetime.date(2020, 1, 1)}
                )
            ]
        )
    with pytest.raises(ValueError, match="'a'"):
        kb.ingest([noema.Document("One text.", id="a"), noema.Document("Another text.", id="a")])
    with pytest.raises(TypeError, match="dict"):
        kb.ingest({"text": "Larry Page founded Google."})  # type: ignore[arg-type]
    assert len(kb.graph.documents) == 0  # nothing was half-ingested


def test_n_process_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="n_process"):
        noema.SpacyExtractor(n_process=0)


def test_lone_surrogates_and_non_text_documents_are_clear_errors() -> None:
    # UnicodeEncodeError from deep inside, and "sequence item 0" for None
    with pytest.raises(ValueError, match="lone surrogate at index 7"):
        noema.Document("Google \ud800 Inc")
    with pytest.raises(noema.GraphError, match="lone surrogate at index 1"):
        noema.SemanticGraph().add_entity("A\ud800", "ORG")
    with pytest.raises(TypeError, match="Document text must be a string, got NoneType"):
        noema.Document(None)  # type: ignore[arg-type]


def test_documents_are_hashable() -> None:
    # frozen but unhashable, because of the metadata mapping
    a = noema.Document("x", id="a", metadata={"tags": ["t"]})
    assert hash(a) == hash(noema.Document("x", id="a", metadata={"tags": ["t"]}))
    assert len({a, noema.Document("x", id="a", metadata={"tags": ["t"]})}) == 1
