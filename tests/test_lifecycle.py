"""Deleting documents, changed documents, and merging knowledge bases give the same facts as a
fresh build, without embedding stored facts again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import noema
from noema import Document, KnowledgeBase

DOCS = [
    Document("Larry Page founded Google. Sundar Pichai is the CEO of Google.", id="google"),
    Document("Google acquired YouTube in 2006. YouTube was founded by Chad Hurley.", id="youtube"),
    Document("Nvidia acquired Mellanox in 2020. Jensen Huang founded Nvidia.", id="nvidia"),
]


def facts(kb: KnowledgeBase) -> set[tuple[str, str, str]]:
    g = kb.graph
    return {
        (g.entities[r.subject_id].name, r.predicate, g.entities[r.object_id].name)
        for r in g.relations.values()
    }


def entities(kb: KnowledgeBase) -> set[tuple[str, str]]:
    return {(e.name, e.type) for e in kb.graph.entities.values()}


def test_delete_gives_the_same_facts_as_building_without(
    make_kb: Callable[..., KnowledgeBase],
) -> None:
    kb = make_kb()
    kb.ingest(DOCS)
    kb.retrieve("warm up")
    fresh = make_kb()
    fresh.ingest([DOCS[0], DOCS[2]])
    removed_entities, removed_facts = kb.delete_documents(["youtube"])
    assert removed_facts > 0 and removed_entities > 0
    assert facts(kb) == facts(fresh) and entities(kb) == entities(fresh)
    assert "youtube" not in kb.graph.documents
    question = "Who founded Google?"
    assert kb.retrieve(question).text == fresh.retrieve(question).text


def test_delete_keeps_what_other_documents_support(make_kb: Callable[..., KnowledgeBase]) -> None:
    kb = make_kb()
    kb.ingest(
        [
            Document("Larry Page founded Google.", id="a"),
            Document("Google was founded by Larry Page.", id="b"),
        ]
    )
    kb.delete_documents(["a"])
    (rel,) = kb.graph.relations.values()
    assert {m.document_id for m in rel.mentions} == {"b"}


def test_delete_does_not_re_embed_the_rest(
    embedder: noema.SentenceTransformerEmbedder, extractor: noema.SpacyExtractor
) -> None:
    from conftest import CountingEmbedder

    counting = CountingEmbedder(embedder)
    kb = KnowledgeBase(embedder=counting, extractor=extractor)
    kb.ingest(DOCS)
    kb.retrieve("warm up")
    counting.calls.clear()
    kb.delete_documents(["nvidia"])
    kb.retrieve("Who founded Google?")
    assert counting.asked == [["Who founded Google?"]]


def test_unknown_document_id(make_kb: Callable[..., KnowledgeBase]) -> None:
    with pytest.raises(KeyError, match="nope"):
        make_kb().delete_documents(["nope"])


def test_changed_document_replaces_its_facts(make_kb: Callable[..., KnowledgeBase]) -> None:
    kb = make_kb()
    kb.ingest([Document("Larry Page founded Google.", id="a")])
    kb.ingest([Document("Sundar Pichai is the CEO of Google.", id="a")])
    assert facts(kb) == {("Sundar Pichai", "ceo_of", "Google")}


def test_merge_gives_the_same_facts_as_one_build(
    embedder: noema.SentenceTransformerEmbedder, extractor: noema.SpacyExtractor
) -> None:
    from conftest import CountingEmbedder

    a = KnowledgeBase(embedder=embedder, extractor=extractor)
    a.ingest(DOCS[:2])
    b = KnowledgeBase(embedder=embedder, extractor=extractor)
    b.ingest(DOCS[1:])
    a.retrieve("warm up")
    b.retrieve("warm up")
    whole = KnowledgeBase(embedder=embedder, extractor=extractor)
    whole.ingest(DOCS)

    counting = CountingEmbedder(embedder)
    merged = KnowledgeBase(embedder=counting, extractor=extractor)
    merged.merge(a)
    merged.merge(b)
    assert facts(merged) == facts(whole) and entities(merged) == entities(whole)
    counting.calls.clear()
    question = "Who founded the company that acquired YouTube?"
    assert merged.retrieve(question, hops=2).text == whole.retrieve(question, hops=2).text
    fact_texts = [t for call in counting.calls for t in call if t.startswith("#")]
    assert fact_texts == []  # every fact vector came from the merged bundles


def test_merge_refuses_another_embedding_model(
    make_kb: Callable[..., KnowledgeBase], extractor: noema.SpacyExtractor
) -> None:
    class Other(noema.SentenceTransformerEmbedder):
        pass

    other = KnowledgeBase(embedder=Other("another-model"), extractor=extractor)
    with pytest.raises(noema.ModelMismatchError):
        make_kb().merge(other)


def test_split_entity_undoes_a_merge(make_kb: Callable[..., KnowledgeBase]) -> None:
    kb = make_kb()
    kb.ingest(
        [
            Document("Larry Page founded Google.", id="a"),
            Document("Google, Inc. is headquartered in Mountain View.", id="b"),
        ]
    )
    (google,) = [e for e in kb.graph.entities.values() if e.type == "ORG"]
    assert "Google, Inc." in google.aliases
    (record,) = [r for r in kb.merge_log if r.merged_name == "Google, Inc."]
    new_id = kb.split_entity(record.entity_id, "Google, Inc.")
    g = kb.graph
    assert (
        g.entities[new_id].name == "Google, Inc."
        and "Google, Inc." not in g.entities[google.id].aliases
    )
    assert facts(kb) == {
        ("Larry Page", "found", "Google"),
        ("Google, Inc.", "headquarter_in", "Mountain View"),
    }
    assert all(r.merged_name != "Google, Inc." for r in kb.merge_log)
    assert "Mountain View" in kb.retrieve("Where is Google, Inc. headquartered?").text
    with pytest.raises(ValueError, match="merged names"):
        kb.split_entity(google.id, "Alphabet")


def test_readers_do_not_wait_for_a_writer(make_kb) -> None:  # type: ignore[no-untyped-def]
    import threading

    kb = make_kb()
    kb.ingest(["Larry Page founded Google.", "Sundar Pichai is the CEO of Google."])
    first = kb.retrieve("Who founded Google?")
    answers: list[noema.RetrievalResult] = []
    # a writer mid-way holds the write lock; a reader reads the last published snapshot
    with kb._store.lock:
        reader = threading.Thread(target=lambda: answers.append(kb.retrieve("Who founded Google?")))
        reader.start()
        reader.join(timeout=120)
        assert not reader.is_alive(), "retrieve waited for the writer"
    assert answers == [first]


def test_a_file_is_one_document_however_its_path_is_spelled(
    make_kb: Callable[..., KnowledgeBase], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "google.md").write_text("# Google\\n\\nLarry Page founded Google.\\n")
    monkeypatch.chdir(tmp_path)
    kb = make_kb()
    kb.ingest(Path("corpus"))
    report = kb.ingest((corpus / "google.md").resolve())
    assert report.documents == 0 and report.skipped_documents == 1
    assert list(kb.graph.documents) == [f"file:{(corpus / 'google.md').resolve().as_posix()}"]


def test_ids_relative_to_a_root_work_as_the_readme_uses_them(
    make_kb: Callable[..., KnowledgeBase], tmp_path: Path
) -> None:
    (tmp_path / "google.md").write_text("# Google\\n\\nLarry Page founded Google.\\n")
    (tmp_path / "nvidia.md").write_text("# Nvidia\\n\\nJensen Huang founded Nvidia.\\n")
    kb = make_kb()
    kb.ingest(tmp_path, root=tmp_path)
    assert sorted(kb.graph.documents) == ["google.md", "nvidia.md"]
    only = kb.retrieve("Who founded it?", filters={"document_ids": ["google.md"]}, max_tokens=400)
    assert "Larry Page" in only.text and "Jensen" not in only.text
    kb.delete_documents(["google.md"])
    assert list(kb.graph.documents) == ["nvidia.md"]
    with pytest.raises(noema.NoemaError, match="not inside the root folder"):
        kb.ingest(tmp_path / "nvidia.md", root=tmp_path / "elsewhere")


def test_an_ingest_report_is_one_short_line(make_kb) -> None:  # type: ignore[no-untyped-def]
    # the notebook printed every MergeRecord of the report
    report = make_kb().ingest(["Google LLC is big. Google was founded by Larry Page."])
    assert repr(report) == (
        f"IngestReport(documents=1, skipped_documents=0, new_entities={report.new_entities}, "
        f"new_relations={report.new_relations}, new_events={report.new_events}, "
        f"merges=<{len(report.merges)}>)"
    )


class _WithEvents:
    """The real extractor, plus one event per document ("X met Y" as an event of the two first
    entities): the built-in extractor makes no events, and this test is about how a merge
    treats their vectors."""

    def __init__(self, inner: noema.SpacyExtractor) -> None:
        self.inner = inner

    def extract(self, documents: list[Document]) -> noema.SemanticGraph:
        graph = self.inner.extract(documents)
        for doc in documents:
            ids = [
                e.id
                for e in graph.entities.values()
                if any(m.document_id == doc.id for m in e.mentions)
            ]
            if len(ids) >= 2:
                graph.add_event(
                    "meeting", ids[:2], mentions=[noema.Mention(doc.id, 0, len(doc.text))]
                )
        return graph


def test_a_merge_embeds_no_fact_or_event_again(
    embedder: noema.SentenceTransformerEmbedder, extractor: noema.SpacyExtractor
) -> None:
    # kb.merge reused relation vectors but embedded every event again
    from tests.conftest import CountingEmbedder

    counting = CountingEmbedder(embedder)
    part = KnowledgeBase(embedder=counting, extractor=_WithEvents(extractor))
    part.ingest(
        ["Larry Page met Sergey Brin at Stanford.", "Jensen Huang met Morris Chang in Taipei."]
    )
    assert part.graph.events
    whole = KnowledgeBase(embedder=counting, extractor=_WithEvents(extractor))
    whole.ingest(["Sundar Pichai met Satya Nadella in Seattle."])
    counting.calls.clear()
    whole.merge(part)
    embedded = {t for call in counting.calls for t in call}
    for event_id in part.graph.events:
        assert part.fact_text(event_id) not in embedded
    for relation_id in part.graph.relations:
        assert part.fact_text(relation_id) not in embedded
    assert set(part.graph.events) <= set(whole.graph.events)
