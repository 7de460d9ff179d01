from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import noema
from noema import Document, KnowledgeBase
from noema.model.spans import Sentence
from noema.vectors.sentences import (
    SentenceIndex,
    document_topics,
    sentence_text_for_embedding,
    source_sentences,
)
from tests.conftest import CountingEmbedder, record_normalized_names


def _titled(text: str, doc_id: str, title: str) -> Document:
    """A document whose metadata names its title (what a document's topic is read from first)."""
    return Document(text, id=doc_id, metadata={"title": title})


def _topics_by_name(kb: KnowledgeBase) -> dict[str, Any]:
    """The documents each entity is the topic of (:func:`document_topics`), by entity name."""
    return {kb.graph.entities[e].name: docs for e, docs in document_topics(kb.graph).items()}


def test_source_sentences_are_the_spans_of_fact_mentions(
    ingested: Callable[..., KnowledgeBase],
) -> None:
    text = "Larry Page founded Google. The weather was fine. Sundar Pichai is the CEO of Google."
    kb = ingested([Document(text, id="g")])
    found = source_sentences(kb.graph)
    spans = [text[s.start : s.end] for s in found]
    assert spans == ["Larry Page founded Google.", "Sundar Pichai is the CEO of Google."]
    for sentence, facts in found.items():
        for fact_id in facts:
            mentions = kb.graph.relations[fact_id].mentions
            assert Sentence(sentence.document_id, sentence.start, sentence.end) in {
                Sentence(m.document_id, m.start, m.end) for m in mentions
            }


def test_a_document_is_about_the_entity_its_title_names(
    ingested: Callable[..., KnowledgeBase],
) -> None:
    kb = ingested(
        [
            _titled(
                "Google hired Sundar Pichai in 2004. He was born in Madurai.", "p", "Sundar Pichai"
            ),
            Document("Larry Page founded Google in 1998.", id="g"),
        ]
    )
    names = _topics_by_name(kb)
    # the title wins over the first name in the text; without a title, the first name does
    assert list(names["Sundar Pichai"]) == ["p"]
    assert list(names["Larry Page"]) == ["g"]


def test_a_title_with_a_leading_the_names_its_entity(
    ingested: Callable[..., KnowledgeBase],
) -> None:
    text = "Paul McCartney joined The Beatles in 1957. The Beatles formed in Liverpool."
    kb = ingested([_titled(text, "b", "The Beatles")])
    names = _topics_by_name(kb)
    assert names == {"Beatles": ("b",)} or names == {"Beatles": ["b"]}
    assert "Google" not in names


def test_rebuild_embeds_only_new_sentences(
    make_kb: Callable[..., KnowledgeBase], embedder: noema.SentenceTransformerEmbedder
) -> None:
    counting = CountingEmbedder(embedder)
    kb = make_kb(embedder=counting)
    kb.ingest([Document("Larry Page founded Google. Sundar Pichai is the CEO of Google.", id="a")])
    counting.calls.clear()
    kb.ingest([Document("Jensen Huang founded Nvidia.", id="b")])
    # the write embeds the one new fact and the one new sentence (after any entity names)
    assert counting.calls[-2:] == [
        [kb.fact_text(next(reversed(kb.graph.relations)))],
        ["Jensen Huang founded Nvidia."],
    ]
    counting.calls.clear()
    kb.retrieve("Who founded Nvidia?")
    assert counting.asked == [["Who founded Nvidia?"]]


def test_changed_document_text_is_embedded_again(
    make_kb: Callable[..., KnowledgeBase], embedder: noema.SentenceTransformerEmbedder
) -> None:
    kb = make_kb()
    kb.ingest([Document("Larry Page founded Google.", id="a")])
    old = SentenceIndex.build(kb.graph, embedder)
    kb.ingest([Document("Larry Page founded Alphabet.", id="a")])
    new = SentenceIndex.build(kb.graph, embedder, old)
    [sentence] = new.facts
    expected = embedder.embed(["Larry Page founded Alphabet."])[0]
    assert np.allclose(new.similarities([sentence], expected)[sentence], 1.0, atol=1e-4)


def test_bundle_keeps_the_sidecar_and_an_old_bundle_rebuilds_it(
    ingested: Callable[..., KnowledgeBase], tmp_path, embedder
) -> None:  # type: ignore[no-untyped-def]
    import json
    import zipfile

    kb = ingested([Document("Larry Page founded Google.", id="a")])
    path = kb.save(tmp_path / "kb.noema")
    with zipfile.ZipFile(path) as zf:
        assert "sentences.bin" in zf.namelist()
        manifest = json.loads(zf.read("manifest.json"))
    assert manifest["sentences"]["rows"] == 1
    counting = CountingEmbedder(embedder)
    loaded = KnowledgeBase.load(path, embedder=counting)
    assert loaded.retrieve("Who founded Google?", format="sentences").text == (
        "# a\nLarry Page founded Google."
    )
    assert counting.asked == [["Who founded Google?"]]  # facts and sentences came from the bundle

    # the same bundle as an older Noema wrote it: no sidecar member; it is rebuilt on load
    old = tmp_path / "old.noema"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(old, "w") as dst:
        manifest.pop("sentences")
        manifest["members"].pop("sentences.bin")
        for name in src.namelist():
            if name == "manifest.json":
                dst.writestr(name, json.dumps(manifest))
            elif name != "sentences.bin":
                dst.writestr(name, src.read(name))
    counting.calls.clear()
    reopened = KnowledgeBase.load(old, embedder=counting)
    assert counting.calls == [["Larry Page founded Google."]]
    result = reopened.retrieve("Who founded Google?", format="sentences")
    assert result.text == "# a\nLarry Page founded Google."


def test_a_markdown_heading_is_not_part_of_the_first_sentence(
    ingested: Callable[..., KnowledgeBase],
) -> None:
    kb = ingested([_titled("# Nvidia\n\nNvidia acquired Mellanox in 2020.", "n", "Nvidia")])
    result = kb.retrieve("Who acquired Mellanox?", format="sentences")
    assert result.text == "# Nvidia\nNvidia acquired Mellanox in 2020."


def test_a_write_hashes_only_the_sentences_of_the_documents_it_touched(
    make_kb: Callable[..., KnowledgeBase],
    embedder: noema.SentenceTransformerEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every write hashed every sentence of the base again to key its vector; the
    keys of unchanged documents now come from the previous sidecar. A document replaced under
    its id with text of the same length (same spans) still gets new keys and vectors."""
    from noema.vectors import sentences

    kb = make_kb()
    kb.ingest(
        [
            Document("Larry Page founded Google. Sundar Pichai is the CEO of Google.", id="a"),
            Document("Jensen Huang founded Nvidia.", id="b"),
        ]
    )
    before = kb._snapshot.sentences
    assert before is not None
    hashed: list[str] = []
    real = sentences.sentence_key

    def counted(graph: noema.SemanticGraph, sentence: Sentence) -> str:  # the real function
        hashed.append(sentence.document_id)
        return real(graph, sentence)

    monkeypatch.setattr(sentences, "sentence_key", counted)
    kb.ingest([Document("Lisa Su leads AMD.", id="c")])
    assert set(hashed) == {"c"}
    after = kb._snapshot.sentences
    assert after is not None
    for s in before.facts:  # the untouched sentences keep their keys and vectors
        assert after._keys[s] == before._keys[s]
        np.testing.assert_array_equal(
            after.vectors.vector(after._keys[s]), before.vectors.vector(before._keys[s])
        )

    hashed.clear()
    kb.ingest([Document("Jensen Huang founded Nvidea.", id="b")])  # same length: same span
    assert set(hashed) == {"b"}
    [changed] = kb._snapshot.sentences.by_document["b"]
    expected = embedder.embed(["Jensen Huang founded Nvidea."])[0]
    assert kb._snapshot.sentences.similarities([changed], expected)[changed] > 0.999


def test_a_write_puts_each_sentence_vector_on_its_own_row(
    make_kb: Callable[..., KnowledgeBase], embedder: noema.SentenceTransformerEmbedder
) -> None:
    """A write gathers the kept rows into the new matrix in one pass and writes the
    new sentences' vectors after; a document whose id sorts between stored ones puts its
    sentences in the middle of the rows, and every row must still be its own sentence's."""
    kb = make_kb()
    kb.ingest(
        [
            Document("Larry Page founded Google. Sundar Pichai is the CEO of Google.", id="a"),
            Document("Lisa Su leads AMD.", id="c"),
        ]
    )
    kb.ingest([Document("Jensen Huang founded Nvidia. Nvidia acquired Mellanox.", id="b")])
    index = kb._snapshot.sentences
    assert index is not None
    assert [s.document_id for s in index.facts] == ["a", "a", "b", "b", "c"]
    texts = [sentence_text_for_embedding(kb.graph, s) for s in index.facts]
    expected = embedder.embed(texts)
    similar = index.vectors.vectors @ expected.T
    assert np.all(np.diag(similar) > 0.99)
    assert np.all(similar - np.diag(np.diag(similar)) < 0.95)  # no two sentences alike


def _full(graph: noema.SemanticGraph) -> list[tuple[Sentence, tuple[str, ...]]]:
    return [(s, tuple(f)) for s, f in source_sentences(graph).items()]


def test_a_write_works_out_only_the_sentences_it_changed(
    make_kb: Callable[..., KnowledgeBase], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every write listed every fact's sentences again; now it compares the facts
    with the previous graph's and changes only their sentences, with the same sentences, facts
    and order as the full listing after ingests (a document sorting between stored ones, an
    alias merged, a fact said again elsewhere), a changed text, a split and a delete."""
    from noema.vectors import sentences

    full_listings: list[int] = []
    real = sentences._source_sentences

    def counted(graph: noema.SemanticGraph) -> tuple[dict[Sentence, list[str]], bool]:
        full_listings.append(len(graph))  # the real function, counted
        return real(graph)

    kb = make_kb()
    kb.ingest([Document("Larry Page founded Google. Sundar Pichai is the CEO of Google.", id="a")])
    monkeypatch.setattr(sentences, "_source_sentences", counted)
    writes = [
        lambda: kb.ingest([Document("Lisa Su leads AMD. AMD acquired Xilinx in 2022.", id="c")]),
        lambda: kb.ingest(
            [Document("Google, Inc. is headquartered in Mountain View.", id="b", metadata={})]
        ),
        lambda: kb.ingest([Document("Larry Page founded Google in 1998.", id="d")]),
        lambda: kb.ingest([Document("Larry Page founded Google in Menlo Park.", id="a")]),
        lambda: kb.split_entity(
            next(r.entity_id for r in kb.merge_log if r.merged_name == "Google, Inc."),
            "Google, Inc.",
        ),
        lambda: kb.delete_documents(["c"]),
    ]
    for write in writes:
        write()
        assert full_listings == []
        index = kb._snapshot.sentences
        assert index is not None
        assert list(index.facts.items()) == _full(kb.graph)
        assert dict(index.by_document) == {
            d: tuple(s for s in index.facts if s.document_id == d)
            for d in dict.fromkeys(s.document_id for s in index.facts)
        }
        assert list(index.topics.items()) == [
            (e, tuple(d)) for e, d in document_topics(kb.graph).items()
        ]
        full_listings.clear()  # the one just made to compare
    assert {s.document_id for s in kb._snapshot.sentences.facts} == {"a", "b", "d"}


def test_a_fact_changed_in_place_keeps_its_place_in_a_sentence(
    embedder: noema.SentenceTransformerEmbedder,
) -> None:
    """A fact said again in a sentence that has others is a changed record, not a new one: it
    stays where the graph holds it (before the sentence's other fact), as the full listing
    has it."""
    g = noema.SemanticGraph()
    g.add_document(Document("Ann met Bob. Cy met Dee.", id="d"))
    ann, bob, cy, dee = (g.add_entity(n, "PERSON") for n in ("Ann", "Bob", "Cy", "Dee"))
    first = noema.Mention("d", 0, 12)
    second = noema.Mention("d", 13, 24)
    said_first = g.add_relation(ann, "meet", bob, mentions=[first])
    g.add_relation(cy, "meet", dee, mentions=[second])
    before = SentenceIndex.build(g, embedder)
    after = g.copy()
    assert after.add_relation(ann, "meet", bob, mentions=[second]) == said_first
    built = SentenceIndex.build(after, embedder, before)
    assert list(built.facts.items()) == _full(after)
    assert built.facts[Sentence("d", 13, 24)][0] == said_first


def test_a_write_works_out_the_compared_form_only_of_new_names_and_titles(
    make_kb: Callable[..., KnowledgeBase], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The topics of every document are found again at each write, and working out
    every stored name's compared form was most of it; the forms come from the previous sidecar."""
    kb = make_kb()
    kb.ingest([Document("Larry Page founded Google.", id="a", metadata={"title": "Google"})])
    asked = record_normalized_names(monkeypatch)
    kb.ingest([Document("Lisa Su leads AMD.", id="c", metadata={"title": "AMD (company)"})])
    assert sorted(asked) == ["AMD", "AMD", "Lisa Su"]  # a name, and the title without "(company)"
    asked.clear()
    index = kb._snapshot.sentences
    assert index is not None
    names = {kb.graph.entities[e].name: d for e, d in index.topics.items()}
    assert names == {"Google": ("a",), "AMD": ("c",)}
