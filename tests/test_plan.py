"""The two seed strategies: ``"vector"`` must be retrieval.md's three steps exactly; ``"graph"``
must reach the document about an entity of its best sentences (the narrow hop)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import noema
from noema import KnowledgeBase, count_tokens
from noema.model.records import VALUE_TYPES

QUESTIONS = [
    "Who founded the company that acquired Mellanox?",
    "Who is Google's CEO?",
    "Where is Nvidia headquartered?",
]


def _spec_order(kb: KnowledgeBase, question: str, top_k: int, hops: int) -> list[str]:
    """retrieval.md, written out independently: the top_k facts by cosine similarity are the
    seeds; a walk of ``hops`` edges from their entities (not through dates, amounts and
    descriptions) records
    each entity's distance; seeds first, then the other facts by distance from a seed, ties to the
    more similar fact, then to the order the walk found them."""
    g = kb.graph
    facts = [*g.relations, *g.events]
    vectors = kb.embedder.embed([kb.fact_text(f) for f in facts])
    q = kb.embedder.embed([question])[0]
    sims = {f: float(v @ q) for f, v in zip(facts, vectors, strict=True)}
    seeds = sorted(facts, key=lambda f: -sims[f])[:top_k]

    def ends(f: str) -> tuple[str, ...]:
        r = g.relations.get(f)
        return (r.subject_id, r.object_id) if r else g.events[f].participant_ids

    distance = {e: 0 for f in seeds for e in ends(f)}
    frontier = list(dict.fromkeys(e for f in seeds for e in ends(f)))
    found: dict[str, int] = {}
    for step in range(hops):
        following = []
        for e in frontier:
            if g.entities[e].type in VALUE_TYPES or g.entities[e].name.split()[-1][0].islower():
                continue  # dates, amounts and descriptions ("technology company") join everything
            for f in g.facts_of(e):
                found.setdefault(f, step)
                for other in ends(f):
                    if other not in distance:
                        distance[other] = step + 1
                        following.append(other)
        frontier = following
    rest = [f for f in found if f not in seeds]
    position = {f: n for n, f in enumerate(rest)}
    rest.sort(key=lambda f: (found[f], -round(sims[f], 6), position[f]))
    return [*seeds, *rest]


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize(("top_k", "hops"), [(1, 2), (3, 1), (5, 0)])
def test_vector_seeds_are_the_three_steps_of_the_spec(
    company_kb: KnowledgeBase, question: str, top_k: int, hops: int
) -> None:
    order = _spec_order(company_kb, question, top_k, hops)
    result = company_kb.retrieve(
        question, top_k=top_k, hops=hops, max_tokens=10_000, seeds="vector", explain=True
    )
    assert result.explanation is not None
    assert [s.fact_id for s in result.explanation] == order
    assert list(result.fact_ids) == order
    # packing stops at the first fact that does not fit
    small = company_kb.retrieve(question, top_k=top_k, hops=hops, max_tokens=40, seeds="vector")
    packed = list(small.fact_ids)
    assert packed == order[: len(packed)]
    assert small.truncated == (len(packed) < len(order))


def test_graph_seeds_hop_to_the_document_about_a_seed_entity(
    ingested: Callable[..., KnowledgeBase],
) -> None:
    kb = ingested(
        [
            noema.Document(
                "Nvidia acquired Mellanox in 2020. Nvidia makes graphics chips.",
                id="nvidia",
                metadata={"title": "Nvidia"},
            ),
            noema.Document(
                "Jensen Huang founded Nvidia in 1993. Nvidia is headquartered in Santa Clara.",
                id="nvidia-history",
                metadata={"title": "Jensen Huang"},
            ),
            noema.Document(
                "Mellanox was based in Yokneam. Mellanox made network adapters.",
                id="mellanox",
                metadata={"title": "Mellanox"},
            ),
        ]
    )
    question = "Which company acquired Mellanox?"
    result = kb.retrieve(question, format="sentences", max_tokens=200, explain=True)
    assert result.explanation is not None
    hops = [s for s in result.explanation if s.reason == "hop"]
    assert hops, "the best sentences name entities that other documents are about"
    hopped_docs = {c.document_id for s in hops for c in kb.graph.citations(s.fact_id)}
    assert "nvidia" in hopped_docs or "mellanox" in hopped_docs
    assert result.token_count == count_tokens(result.text) <= 200


def test_sentences_format_groups_sentences_under_titles(company_kb: KnowledgeBase) -> None:
    result = company_kb.retrieve("Who is Google's CEO?", format="sentences", max_tokens=60)
    assert "Sundar Pichai is the CEO of Google." in result.text
    # every fact in the result is shown by one of its sentences
    for fact_id in result.fact_ids:
        assert any(
            " ".join(c.text.split()) in result.text for c in company_kb.graph.citations(fact_id)
        )
    # notation holds the same facts
    assert len(noema.parse_notation(result.notation).relations) == len(result.relation_ids)


def test_min_similarity_gives_nothing_for_an_unrelated_question(company_kb: KnowledgeBase) -> None:
    question = "What is the boiling point of water?"
    assert company_kb.retrieve(question).text  # without a floor, the budget is filled anyway
    assert company_kb.retrieve(question, min_similarity=0.5).text == ""
    assert company_kb.retrieve("Who is Google's CEO?", min_similarity=0.5).text


def test_same_question_same_result(company_kb: KnowledgeBase) -> None:
    first = company_kb.retrieve(QUESTIONS[0], format="sentences", explain=True)
    second = company_kb.retrieve(QUESTIONS[0], format="sentences", explain=True)
    assert first == second and first.explanation == second.explanation
    assert np.isfinite([s.similarity or 0.0 for s in first.explanation or ()]).all()


def test_packing_a_huge_budget_renders_a_logarithmic_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # packing re-rendered and re-counted the whole text once per fact, so 3,200
    # facts at max_tokens=10**6 took 128 s; the prefix search renders about 2 log2(n) times
    import noema.retrieval.pack

    graph = noema.SemanticGraph()
    hub = graph.add_entity("Hub Corp", "ORG")
    facts = []
    for n in range(3200):
        person = graph.add_entity(f"Person Number{n}", "PERSON")
        facts.append(graph.add_relation(person, "work_for", hub))
    renders = []
    real = noema.retrieval.pack._render_prefix

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        renders.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(noema.retrieval.pack, "_render_prefix", counting)
    packed = noema.retrieval.pack.pack(
        graph, [(f, None) for f in facts], 10**6, "notation", "cl100k_base"
    )
    assert len(packed.fact_ids) == 3200 and not packed.truncated
    assert len(renders) <= 2 * 12 + 2  # log2(3200) < 12; once per fact would be 3,200


def test_a_bridge_is_not_another_spelling_of_the_questions_own_entity() -> None:
    # MuSiQue: "Bubi River" was chosen as the bridge of a question about the Bubye River,
    # so the second search looked for the question's own river again
    from noema.retrieval.bridges import bridge_entity, question_words

    graph = noema.SemanticGraph()
    graph.add_document(noema.Document("The Bubi River flows past West Nicholson.", id="d"))
    river = graph.add_entity("Bubi River", "LOC", mentions=[noema.Mention("d", 4, 14)])
    town = graph.add_entity("West Nicholson", "GPE", mentions=[noema.Mention("d", 26, 40)])
    fact = graph.add_relation(river, "flow_past", town, mentions=[noema.Mention("d", 0, 41)])
    words = question_words("In which country does the Bubye River rise?")
    assert bridge_entity(graph, [fact], words, {}, set()) == (town, fact)
    # a name the question does not spell is still a bridge
    other = question_words("Which river flows past the town where the mine is?")
    assert bridge_entity(graph, [fact], other, {}, set()) == (river, fact)


def test_a_bridge_is_not_a_place_named_after_the_questions_own_name() -> None:
    # "Lake Ostmere" in a question about Ostmere Cider: its one telling word is the question's,
    # so a search with it finds what the question's own search found
    from noema.retrieval.bridges import bridge_entity, question_names, question_words

    graph = noema.SemanticGraph()
    text = "Ostmere Cider presses apples on the shore of Lake Ostmere near Greyling."
    graph.add_document(noema.Document(text, id="d"))
    lake = graph.add_entity("Lake Ostmere", "LOC", mentions=[noema.Mention("d", 45, 57)])
    town = graph.add_entity("Greyling", "GPE", mentions=[noema.Mention("d", 63, 71)])
    fact = graph.add_relation(lake, "near", town, mentions=[noema.Mention("d", 0, len(text))])
    asked = "Who is the mayor of the town where the founder of Ostmere Cider was born?"
    words, names = question_words(asked), question_names(asked)
    assert bridge_entity(graph, [fact], words, {}, set(), names=names) == (town, fact)
    # a lake the question does not name is still a bridge, and so is one whose telling word
    # the question uses as a common word, not in a name
    for other in (
        "Which lake lies near the town where the cider maker was born?",
        "Which ostmere lies near the town where the cider maker was born?",
    ):
        found = bridge_entity(
            graph, [fact], question_words(other), {}, set(), names=question_names(other)
        )
        assert found == (lake, fact), other
    # a name that opens a quotation is a name all the same
    quoted = 'Who is the mayor of the town where the founder of "Ostmere Cider" was born?'
    names = question_names(quoted)
    assert bridge_entity(graph, [fact], question_words(quoted), {}, set(), names=names) == (
        town,
        fact,
    )


@pytest.mark.parametrize(
    ("question", "evidence", "remaining"),
    [
        (
            "Who founded the company that acquired LinkedIn?",
            "Microsoft acquired LinkedIn in 2016 for 26 billion dollars.",
            "Who founded the company that",
        ),
        (
            "Who was the first president of the association which published Journal of "
            "Psychotherapy Integration?",
            "The Journal of Psychotherapy Integration is a peer-reviewed academic journal "
            "published by the American Psychological Association.",
            "Who was the first president of the which of",
        ),
        # nothing said yet: the whole question stays
        ("Where was Mara born?", "Tomas Berg works in Malmo.", "Where was Mara born?"),
    ],
    ids=["acquirer", "publisher", "nothing-said"],
)
def test_the_bridge_search_asks_what_the_evidence_has_not_said(
    question: str, evidence: str, remaining: str
) -> None:
    # the further search was the whole question plus the bridge's name, so the words
    # the evidence already matched pulled it back to the same sentences (MuSiQue sentences at
    # 200 tokens 33% -> 40% with the remaining question instead)
    from noema.retrieval.bridges import bridge_query, remaining_question

    assert remaining_question(question, evidence) == remaining
    graph = noema.SemanticGraph()
    bridge = graph.add_entity("Microsoft", "ORG")
    assert bridge_query(graph, question, bridge, evidence) == f"{remaining} Microsoft"
