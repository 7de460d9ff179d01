from __future__ import annotations

from collections.abc import Callable

import pytest

import noema
from noema import KnowledgeBase, count_tokens


def test_result_fields(company_kb: KnowledgeBase) -> None:
    result = company_kb.retrieve("Who is Google's CEO?")
    assert "Sundar Pichai" in result.text
    assert result.notation == result.text
    assert result.token_count == count_tokens(result.text) <= 200
    assert result.fact_matches and all(-1 <= m.similarity <= 1 for m in result.fact_matches)
    sims = [m.similarity for m in result.fact_matches]
    assert sims == sorted(sims, reverse=True) and len(sims) == 5
    parsed = noema.parse_notation(result.notation)
    assert len(parsed.entities) == len(result.entity_ids)
    names = [company_kb.graph.entities[e].name for e in result.entity_ids]
    assert names == [parsed.entities[n].name for n in sorted(parsed.entities)]
    assert len(result.relation_ids) == len(parsed.relations)


def test_relation_ids_follow_text_order(company_kb: KnowledgeBase) -> None:
    result = company_kb.retrieve("Who founded Google?", hops=2, max_tokens=400)
    g = company_kb.graph
    parsed = noema.parse_notation(result.notation)
    local = {eid: n for n, eid in enumerate(result.entity_ids, start=1)}
    expected = [
        (
            local[g.relations[r].subject_id],
            g.relations[r].predicate,
            local[g.relations[r].object_id],
        )
        for r in result.relation_ids
    ]
    assert expected == [(r.subject_id, r.predicate, r.object_id) for r in parsed.relations]


@pytest.mark.parametrize("max_tokens", [10, 15, 20, 30, 45, 60, 80, 100, 150, 200, 300, 400])
@pytest.mark.parametrize("format", ["notation", "natural_language", "sentences"])
def test_budget_is_exact_and_never_exceeded(
    company_kb: KnowledgeBase, max_tokens: int, format: str
) -> None:
    result = company_kb.retrieve(
        "Who founded the company that acquired YouTube?",
        hops=2,
        max_tokens=max_tokens,
        format=format,
    )  # type: ignore[arg-type]
    assert result.token_count == count_tokens(result.text)
    assert result.token_count <= max_tokens
    bigger = company_kb.retrieve(
        "Who founded the company that acquired YouTube?", hops=2, max_tokens=10_000, format=format
    )  # type: ignore[arg-type]
    cut = len(result.relation_ids) < len(bigger.relation_ids)
    assert result.truncated == cut
    assert not bigger.truncated


def test_natural_language_decodes_the_same_facts(company_kb: KnowledgeBase) -> None:
    result = company_kb.retrieve("Who is Google's CEO?", format="natural_language")
    stated = [line for line in result.text.splitlines() if not line.startswith("Also named: ")]
    assert "\n".join(stated) == noema.decode(result.notation)
    assert "Sundar Pichai is the ceo of Google." in result.text.splitlines()


def test_two_hop_question_needs_hops(company_kb: KnowledgeBase) -> None:
    question = "Who founded the company that acquired Mellanox?"
    deep = company_kb.retrieve(question, top_k=1, hops=2, max_tokens=400, seeds="vector")
    assert "Jensen Huang" in deep.text and "Mellanox" in deep.text
    shallow = company_kb.retrieve(question, top_k=1, hops=0, max_tokens=400, seeds="vector")
    assert len(shallow.fact_ids) == 1


def test_seeds_come_first_in_similarity_order(company_kb: KnowledgeBase) -> None:
    result = company_kb.retrieve(
        "Who acquired Mellanox?", top_k=3, hops=1, max_tokens=400, seeds="vector"
    )
    assert list(result.fact_ids[:3]) == [m.relation_id for m in result.fact_matches]


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("format", "json"),
        ("format", "Notation"),
        ("top_k", 0),
        ("top_k", -1),
        ("hops", -1),
        ("max_tokens", 0),
        ("top_k", 1.5),
    ],
)
def test_bad_options_raise_value_error(
    company_kb: KnowledgeBase, option: str, value: object
) -> None:
    with pytest.raises(ValueError, match=option):
        company_kb.retrieve("x", **{option: value})  # type: ignore[arg-type]


def test_empty_knowledge_base_gives_empty_text(make_kb: Callable[..., KnowledgeBase]) -> None:
    result = make_kb().retrieve("anything")
    assert result.text == "" and result.token_count == 0 and not result.truncated and not result
    assert make_kb().retrieve("anything", format="natural_language").text == ""


def test_budget_smaller_than_one_fact(company_kb: KnowledgeBase) -> None:
    result = company_kb.retrieve("Who is Google's CEO?", max_tokens=1)
    assert result.text == "" and result.truncated


def test_retrieve_is_deterministic(company_kb: KnowledgeBase) -> None:
    a = company_kb.retrieve("Where is Nvidia headquartered?", hops=2)
    b = company_kb.retrieve("Where is Nvidia headquartered?", hops=2)
    assert a == b


def test_writes_embed_only_new_facts_and_reads_embed_only_the_question(
    embedder: noema.SentenceTransformerEmbedder, extractor: noema.SpacyExtractor
) -> None:
    from conftest import CountingEmbedder

    counting = CountingEmbedder(embedder)
    kb = KnowledgeBase(embedder=counting, extractor=extractor)
    kb.ingest(["Larry Page founded Google."])
    embedded = [t for call in counting.calls for t in call]
    assert kb.fact_text(next(iter(kb.graph.relations))) in embedded  # the write built the index
    counting.calls.clear()
    kb.ingest(["Sundar Pichai is the CEO of Google."])
    new_fact = next(r for r in kb.graph.relations.values() if r.predicate == "ceo_of")
    embedded = [t for call in counting.calls for t in call]
    fact_texts = [t for t in embedded if t in {kb.fact_text(f) for f in kb.graph.relations}]
    assert fact_texts == [kb.fact_text(new_fact.id)]
    counting.calls.clear()
    kb.retrieve("Who runs Google?")
    kb.retrieve("Who founded Google?", format="sentences")
    assert counting.asked == [["Who runs Google?"], ["Who founded Google?"]]


def test_retrieve_never_syncs_the_index_with_the_graph(
    embedder: noema.SentenceTransformerEmbedder,
    extractor: noema.SpacyExtractor,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # spies that count and delegate to the real functions: the work that compares every fact
    # with the index, and the sidecar rebuild, happen once per write and never in a read
    import noema.storage.store

    calls = {"index": 0, "sentences": 0}
    sync, build = noema.storage.store.synced_index, noema.storage.store.SentenceIndex.build

    def counted_sync(*args: object) -> object:
        calls["index"] += 1
        return sync(*args)  # type: ignore[arg-type]

    def counted_build(*args: object) -> object:
        calls["sentences"] += 1
        return build(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(noema.storage.store, "synced_index", counted_sync)
    monkeypatch.setattr(noema.storage.store.SentenceIndex, "build", counted_build)
    kb = KnowledgeBase(embedder=embedder, extractor=extractor)
    kb.ingest(["Larry Page founded Google.", "Sundar Pichai is the CEO of Google."])
    assert calls == {"index": 1, "sentences": 1}
    for question in ("Who runs Google?", "Who founded Google?", "Where is Google?"):
        kb.retrieve(question)
        kb.retrieve(question, seeds="vector", format="natural_language")
    assert calls == {"index": 1, "sentences": 1}
    kb.delete_documents([next(iter(kb.graph.documents))])
    assert calls == {"index": 2, "sentences": 2}


def test_failed_ingest_leaves_knowledge_base_unchanged(
    make_kb: Callable[..., KnowledgeBase],
    extractor: noema.SpacyExtractor,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import noema.kb

    class FailsInSecondBatch:  # the first batch is parsed and canonicalized into the copy
        calls = 0

        def extract(self, documents: list[noema.Document]) -> noema.SemanticGraph:
            FailsInSecondBatch.calls += 1
            if FailsInSecondBatch.calls == 3:  # call 1 is the first ingest below
                raise RuntimeError("extractor failed")
            return extractor.extract(documents)

    monkeypatch.setattr(noema.ingest.extractor, "INGEST_BATCH", 1)
    kb = make_kb(extractor=FailsInSecondBatch())
    kb.ingest(["Sundar Pichai is the CEO of Google."])
    before, keys = kb.graph.to_json(), dict(kb._canonicalizer._keys)
    snapshot = kb._snapshot
    with pytest.raises(RuntimeError, match="extractor failed"):
        kb.ingest(["Google LLC acquired YouTube.", "Larry Page founded Google."])
    assert kb.graph.to_json() == before and kb._snapshot is snapshot
    # no name filed from the dropped copy survives to steer the next ingest
    assert kb._canonicalizer._keys.items() <= keys.items()
    fresh = make_kb(extractor=extractor)
    fresh.ingest(["Sundar Pichai is the CEO of Google."])
    for target in (kb, fresh):
        target.ingest(["Google LLC acquired YouTube."])
    assert kb.graph == fresh.graph


async def test_aretrieve_matches_retrieve(company_kb: KnowledgeBase) -> None:
    assert await company_kb.aretrieve("Who founded Google?") == company_kb.retrieve(
        "Who founded Google?"
    )


def test_every_fact_in_the_text_is_cited(company_kb: KnowledgeBase) -> None:
    from conftest import COMPANY_DOCS

    result = company_kb.retrieve("Who is Google's CEO?", hops=1)
    assert set(result.citations) == set(result.relation_ids) | set(result.event_ids)
    for fact_id, citations in result.citations.items():
        assert citations, fact_id
        for c in citations:
            assert c.text and any(c.text in doc for doc in COMPANY_DOCS)
            assert company_kb.graph.documents[c.document_id].text[c.start : c.end] == c.text


def test_to_dict_is_json_ready(company_kb: KnowledgeBase) -> None:
    import json

    result = company_kb.retrieve("Who is Google's CEO?", explain=True)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["text"] == result.text and data["relation_ids"] == list(result.relation_ids)
    assert data["source_ids"] == result.source_ids() and result.source_ids()
    assert set(data["citations"]) == set(result.fact_ids)
    assert len(data["explanation"]) == len(result.explanation or ())


@pytest.mark.parametrize("seeds", ["graph", "vector"])
def test_a_huge_hop_count_stops_when_nothing_is_left(company_kb: KnowledgeBase, seeds: str) -> None:
    # the walk ends once no new entity is reached; before, hops=10**9 looped for minutes
    huge = company_kb.retrieve("Who founded Google?", hops=10**9, max_tokens=10_000, seeds=seeds)  # type: ignore[arg-type]
    enough = company_kb.retrieve("Who founded Google?", hops=20, max_tokens=10_000, seeds=seeds)  # type: ignore[arg-type]
    assert huge == enough


@pytest.mark.parametrize("question", [None, {"q": 1}, 123, b"x", ["x"]])
def test_a_question_that_is_not_text_is_a_type_error(
    company_kb: KnowledgeBase, question: object
) -> None:
    # these gave "unhashable" or a PIL-image message
    with pytest.raises(TypeError, match="question must be a string"):
        company_kb.retrieve(question)  # type: ignore[arg-type]


@pytest.mark.parametrize("question", ["", "   \n"])
def test_an_empty_question_is_a_clear_error(company_kb: KnowledgeBase, question: str) -> None:
    # "" returned 190 tokens of facts
    with pytest.raises(ValueError, match="question is empty"):
        company_kb.retrieve(question)
