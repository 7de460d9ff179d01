from __future__ import annotations

import pytest

import noema
from noema import KnowledgeBase

QUESTION = "Who founded the company that acquired YouTube?"


def test_default_result_has_no_explanation(company_kb: KnowledgeBase) -> None:
    assert company_kb.retrieve(QUESTION).explanation is None


def test_explanation_holds_only_computed_values(company_kb: KnowledgeBase) -> None:
    plain = company_kb.retrieve(QUESTION, hops=2, max_tokens=60, seeds="vector")
    explained = company_kb.retrieve(QUESTION, hops=2, max_tokens=60, seeds="vector", explain=True)
    assert explained == plain  # the result itself is unchanged
    steps = explained.explanation
    assert steps is not None and [s.order for s in steps] == list(range(len(steps)))
    included = [s.fact_id for s in steps if s.included]
    assert included == list(plain.fact_ids)
    assert any(not s.included for s in steps) == plain.truncated
    seeds = {m.relation_id: m.similarity for m in plain.fact_matches}
    for step in steps:
        if step.reason == "seed":
            assert step.similarity == seeds[step.fact_id] and step.hops == 0 and step.path == ()
            assert step.seed_id == step.fact_id
        else:
            assert step.seed_id in seeds and step.hops >= 1 and len(step.path) == step.hops
            # a relation or an event ("founded ... in 1993" is one, with its time)
            assert step.path[-1] in company_kb.graph.fact(step.fact_id).entity_ids
            assert step.path[0] in company_kb.graph.fact(step.seed_id).entity_ids


@pytest.mark.parametrize("seeds", ["graph", "vector"])
def test_expansion_respects_the_hop_limit(company_kb: KnowledgeBase, seeds: str) -> None:
    steps = company_kb.retrieve(
        QUESTION, hops=1, max_tokens=400, explain=True, seeds=seeds
    ).explanation  # type: ignore[arg-type]
    assert steps and max(s.hops for s in steps) <= 1
    zero = company_kb.retrieve(
        QUESTION, hops=0, max_tokens=400, explain=True, seeds=seeds
    ).explanation  # type: ignore[arg-type]
    assert zero and all(s.reason in ("seed", "sentence") for s in zero)


def test_graph_explanation_gives_the_real_reason(company_kb: KnowledgeBase) -> None:
    result = company_kb.retrieve(
        "Who founded the company that acquired Mellanox?", max_tokens=400, explain=True
    )
    steps = result.explanation
    assert steps is not None and [s.fact_id for s in steps if s.included] == list(result.fact_ids)
    g = company_kb.graph
    seeds = {m.relation_id: m.similarity for m in result.fact_matches}
    for step in steps:
        fact = g.fact(step.fact_id)
        if step.reason == "seed":
            assert step.similarity == seeds[step.fact_id]
        elif step.reason in ("sentence", "hop"):
            # the similarity is that of a source sentence of the fact
            assert step.similarity is not None and fact.mentions
        if step.reason == "bridge":
            # found by a later search with an entity of the fact that named it
            assert step.step >= 2 and step.path[0] in g.fact(step.seed_id).entity_ids
        if step.reason == "hop":
            # reached from another fact's entity, into a document about that entity
            assert step.path[0] in g.fact(step.seed_id).entity_ids
            assert step.hops == 1
    reasons = [s.reason for s in steps]
    # the Nvidia article comes in by the narrow hop or, first, by a bridge search
    assert reasons.index("sentence") == 0 and ("hop" in reasons or "bridge" in reasons)


def test_filter_by_entity_type(company_kb: KnowledgeBase) -> None:
    result = company_kb.retrieve(
        QUESTION, hops=2, max_tokens=400, filters={"entity_types": ["PERSON", "ORG"]}
    )
    g = company_kb.graph
    assert result.relation_ids
    for rid in result.relation_ids:
        rel = g.relations[rid]
        assert {g.entities[rel.subject_id].type, g.entities[rel.object_id].type} <= {
            "PERSON",
            "ORG",
        }


def test_filter_by_predicate_and_document(company_kb: KnowledgeBase) -> None:
    result = company_kb.retrieve(QUESTION, hops=2, filters={"predicates": ["found"]})
    assert result.relation_ids and all(
        company_kb.graph.relations[r].predicate == "found" for r in result.relation_ids
    )
    doc_id = next(iter(company_kb.graph.documents))
    result = company_kb.retrieve(QUESTION, hops=2, filters={"document_ids": [doc_id]})
    for fact_id in result.fact_ids:
        assert any(c.document_id == doc_id for c in result.citations[fact_id])


def test_filter_by_metadata(make_kb) -> None:  # type: ignore[no-untyped-def]
    kb = make_kb()
    kb.ingest(
        [
            noema.Document(
                "Larry Page founded Google.", id="a", metadata={"lang": "en", "year": 2020}
            ),
            noema.Document(
                "Sergey Brin founded Google.", id="b", metadata={"lang": "de", "year": 2020}
            ),
        ]
    )
    text = kb.retrieve("Who founded Google?", filters={"metadata": {"lang": "en"}}).text
    assert "Larry Page" in text and "Sergey Brin" not in text
    assert kb.retrieve("Who founded Google?", filters={"metadata": {"lang": "fr"}}).text == ""


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"type": ["ORG"]}, "valid fields are entity_types"),
        ({"entity_types": "ORG"}, "list of strings"),
        ({"entity_types": ["COMPANY"]}, "unknown entity type"),
        ({"predicates": [1]}, "list of strings"),
        ({"metadata": ["x"]}, "mapping"),
        ({"metadata": {"k": [1]}}, "values must be"),
        (["entity_types"], "must be a dict"),
    ],
)
def test_bad_filters_raise_value_error(
    company_kb: KnowledgeBase, filters: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        company_kb.retrieve(QUESTION, filters=filters)  # type: ignore[arg-type]


def test_html_view(company_kb: KnowledgeBase) -> None:
    result = company_kb.retrieve(QUESTION, hops=2)
    html = result.to_html()
    assert result._repr_html_() == html  # what a notebook shows
    assert html.count('class="node"') == len(result.entity_ids)
    assert (
        "Chad Hurley" in html
        and "<script" not in html
        and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    )
    assert "<svg" in company_kb.to_html() and company_kb._repr_html_() == company_kb.to_html()


def test_html_renders_in_a_headless_browser(company_kb: KnowledgeBase, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Debian's chromium (installed by `make test` when missing) draws the nodes, offline."""
    import shutil
    import subprocess

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (make test installs it with apt-get on Debian)")
    result = company_kb.retrieve(QUESTION, hops=2)
    page = tmp_path / "view.html"
    page.write_text(
        f"<!DOCTYPE html><html><body>{result._repr_html_()}</body></html>", encoding="utf-8"
    )
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert dom.count('class="node"') == len(result.entity_ids) > 0
    assert "Chad Hurley" in dom
    shot = tmp_path / "view.png"
    subprocess.run(
        [browser, *flags, f"--screenshot={shot}", "--window-size=900,900", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.stat().st_size > 5000  # a real picture, not a blank page
