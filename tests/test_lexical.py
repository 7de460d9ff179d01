"""Lexical search beside the vector search: BM25 over the source sentences, fused by rank."""

from __future__ import annotations

import threading
import zipfile
from collections.abc import Callable
from pathlib import Path

import bm25s
import numpy as np
import pytest

import noema
import noema.vectors.words
from noema.model.spans import Sentence
from noema.retrieval.lexical import LexicalIndex, fused, lexical_index, words
from noema.retrieval.plan import first_hits

TOWNS = ("Tarbes", "Corvell", "Halloran", "Pennick", "Marlow", "Dunmore")
TOWNS += ("Ostmere", "Wexcombe", "Portwell", "Ashcombe", "Kelderby", "Rusholt")
# Twelve sentences nearer the question's meaning than the one that answers it, which alone
# holds the question's rare name.
PUMPS = [
    noema.Document(f"Arden Works repaired the water pump in {town} in {2010 + n}.", id=f"pump-{n}")
    for n, town in enumerate(TOWNS)
]
ANSWER = noema.Document(
    "Calla Brigg restored the engine house at Vindelmoor in 1990.", id="vindelmoor"
)
QUESTION = "Who repaired the Vindelmoor pump?"


@pytest.fixture(scope="module")
def pumps(ingested: Callable[..., noema.KnowledgeBase]) -> noema.KnowledgeBase:
    return ingested([*PUMPS, ANSWER])


def test_scores_are_bm25s_scores_for_the_same_words() -> None:
    texts = [
        "Orlin released Tallow in 1994 and Tallow sold well.",
        "The band Orlin toured Europe.",
        "Tallow is an album.",
        "Nothing here matches.",
        "Orlin Orlin Orlin.",
    ]
    rows = [Sentence(f"d{n}", 0, 1) for n in range(len(texts))]
    index = LexicalIndex(rows, texts)
    reference = bm25s.BM25()  # Lucene's BM25, k1=1.5, b=0.75: the same formula
    reference.index([words(t) for t in texts], show_progress=False)
    for question in ("When did Orlin release Tallow?", "Which album is Tallow?", "Europe"):
        expected = reference.get_scores(list(dict.fromkeys(words(question))))
        np.testing.assert_allclose(index.scores(question), expected, rtol=1e-5)


def test_words_are_folded_and_leave_out_function_words() -> None:
    assert words("Who founded Zoë's Café in BESANÇON?") == ["founded", "zoe", "cafe", "besancon"]
    assert words("What is it?") == []


def test_a_search_ranks_best_first_and_only_what_matches() -> None:
    rows = [Sentence(f"d{n}", 0, 1) for n in range(3)]
    index = LexicalIndex(rows, ["Orlin Tallow", "Orlin", "something else"])
    assert [s.document_id for s, _ in index.search("Orlin Tallow", 5)] == ["d0", "d1"]
    assert index.search("Orlin Tallow", 1)[0][0].document_id == "d0"
    assert index.search("nothing matches", 5) == []


def test_fusion_adds_each_rankings_reciprocal_ranks() -> None:
    # c: 1/63 + 1/61 just above b: 1/62 + 1/62
    assert fused(["a", "b", "c"], ["c", "b"]) == ["c", "b", "a"]
    assert fused(["a", "b"], []) == ["a", "b"]


def test_the_first_search_takes_what_only_the_lexical_search_finds(
    pumps: noema.KnowledgeBase,
) -> None:
    """The vectors rank the answer below the twelve pump sentences (each nearer the question's
    meaning); the word "Vindelmoor" is in that sentence alone, and fused by rank it comes right
    after the two best sentences by vector, with its similarity to the question."""
    snapshot = pumps._snapshot
    vector = pumps.embedder.embed_queries([QUESTION])[0]
    dense = snapshot.sentences.search(vector, 13)
    assert [s.document_id for s, _ in dense].index("vindelmoor") >= 8  # the premise
    index = lexical_index(snapshot.graph, snapshot.sentences)
    assert index is not None
    found = index.search(QUESTION, 3)
    assert found[0][0].document_id == "vindelmoor"
    # first of one ranking and absent from the other, it comes before the vectors' third
    hits = first_hits(snapshot.sentences, vector, dense[:4], found[:1])
    expected = [dense[0][0].document_id, dense[1][0].document_id, "vindelmoor"]
    assert [s.document_id for s, _ in hits][:3] == expected
    answer = found[0][0]
    similarity = snapshot.sentences.similarities([answer], vector)[answer]
    assert dict(hits)[answer] == similarity


def test_a_base_makes_its_lexical_index_once_on_its_first_retrieval(
    ingested: Callable[..., noema.KnowledgeBase],
) -> None:
    kb = ingested([*PUMPS, ANSWER])
    snapshot = kb._snapshot
    assert snapshot.sentences is not None and snapshot.sentences._words is None
    kb.retrieve("Who founded Google?")
    made = snapshot.sentences._words
    assert made is not None and len(made) == len(snapshot.sentences) and not made.stored
    assert lexical_index(snapshot.graph, snapshot.sentences) is made  # made once


def test_two_bases_make_their_lexical_indexes_without_waiting_on_each_other(
    ingested: Callable[..., noema.KnowledgeBase], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each sidecar makes its index under its own lock: a base whose index takes long to make
    holds no other base's first retrieval (one lock for every base did)."""
    slow, fast = ingested(PUMPS[:6]), ingested(PUMPS[6:])
    started, release = threading.Event(), threading.Event()
    made = LexicalIndex.of_documents.__func__  # type: ignore[attr-defined]

    def held(cls: type[LexicalIndex], graph: noema.SemanticGraph, by_document: object) -> object:
        if graph is slow._snapshot.graph:
            started.set()
            release.wait(10)
        return made(cls, graph, by_document)

    monkeypatch.setattr(LexicalIndex, "of_documents", classmethod(held))
    worker = threading.Thread(
        target=lexical_index, args=(slow._snapshot.graph, slow._snapshot.sentences)
    )
    worker.start()
    try:
        assert started.wait(10)
        done: list[object] = []
        other = threading.Thread(
            target=lambda: done.append(
                lexical_index(fast._snapshot.graph, fast._snapshot.sentences)
            )
        )
        other.start()
        other.join(5)
        assert done and done[0] is not None  # made while the slow base still makes its own
    finally:
        release.set()
        worker.join()
    sentences = slow._snapshot.sentences
    assert sentences is not None and sentences._words is not None
    assert lexical_index(slow._snapshot.graph, sentences) is sentences._words  # made once


def test_one_base_asked_by_many_threads_makes_its_index_once(
    ingested: Callable[..., noema.KnowledgeBase], monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = ingested(PUMPS[:4])
    calls: list[int] = []
    made = LexicalIndex.of_documents.__func__  # type: ignore[attr-defined]

    def counted(cls: type[LexicalIndex], graph: noema.SemanticGraph, by_document: object) -> object:
        calls.append(1)
        return made(cls, graph, by_document)

    monkeypatch.setattr(LexicalIndex, "of_documents", classmethod(counted))
    found: list[object] = []
    threads = [
        threading.Thread(
            target=lambda: found.append(lexical_index(kb._snapshot.graph, kb._snapshot.sentences))
        )
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(found) == 8 and all(f is found[0] for f in found)


def test_above_the_limit_retrieval_searches_by_vector_alone(
    ingested: Callable[..., noema.KnowledgeBase], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(noema.vectors.words, "LEXICAL_LIMIT", 5)
    kb = ingested([*PUMPS, ANSWER])
    snapshot = kb._snapshot
    assert lexical_index(snapshot.graph, snapshot.sentences) is None
    # nor is one written: a base loaded from its bundle searches as the one saved did
    saved = kb.save(tmp_path / "kb.noema")
    with zipfile.ZipFile(saved) as zf:
        assert "sentences.words" not in zf.namelist()
    vector = kb.embedder.embed_queries([QUESTION])[0]
    dense = snapshot.sentences.search(vector, 40)
    assert first_hits(snapshot.sentences, vector, dense, None) == dense
    result = kb.retrieve(QUESTION, format="sentences", max_tokens=400, explain=True)
    assert result.explanation is not None
    first = [e for e in result.explanation if e.reason == "sentence"]
    assert first[0].similarity == dense[0][1]
