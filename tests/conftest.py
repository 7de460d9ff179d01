"""Shared fixtures: the real spaCy pipeline and embedding model, loaded once per test session."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from collections.abc import Callable, Sequence  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

import noema  # noqa: E402
from noema.vectors.embed import Vectors  # noqa: E402


def is_bridge_query(question: str, text: str) -> bool:
    """``text`` starts with the question's first word and goes on with some of its words in
    order, then a name: a bridge query (see ``noema.retrieval.bridges.bridge_query``)."""
    asked, words = question.split(), text.split()
    if len(words) < 2 or words[0] != asked[0] or text.endswith("?"):  # "?": the next question
        return False
    at = 0
    for n, word in enumerate(words):
        while at < len(asked) and asked[at] != word:
            at += 1
        if at == len(asked):
            return n > 0  # the rest is the bridge's name
        at += 1
    return False  # the question's own words only


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed (not a fake: it delegates)."""

    def __init__(self, inner: noema.SentenceTransformerEmbedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls: list[list[str]] = []

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        return self.inner.embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        # a retrieval's texts go the way the wrapped embedder sends them (without torch), so a
        # base read through this wrapper retrieves what one read through the embedder does
        self.calls.append(list(texts))
        return self.inner.embed_queries(texts)

    @property
    def asked(self) -> list[list[str]]:
        """The calls without the bridge searches' queries, which a retrieval embeds after its
        question: each is words of the question, in its order, then a name."""
        kept: list[list[str]] = []
        for call in self.calls:
            last = kept[-1][0] if kept and len(kept[-1]) == 1 else None
            if last is not None and all(is_bridge_query(last, t) for t in call):
                continue
            kept.append(call)
        return kept

    @property
    def texts_embedded(self) -> int:
        return sum(len(c) for c in self.calls)


@pytest.fixture(scope="session")
def embedder() -> noema.SentenceTransformerEmbedder:
    model = noema.SentenceTransformerEmbedder()
    model.embed(["warm up"])
    return model


@pytest.fixture(scope="session")
def extractor() -> noema.SpacyExtractor:
    x = noema.SpacyExtractor()
    x.extract([noema.Document("Warm up.")])
    return x


@pytest.fixture
def make_kb(
    embedder: noema.SentenceTransformerEmbedder, extractor: noema.SpacyExtractor
) -> Callable[..., noema.KnowledgeBase]:
    def make(**options: object) -> noema.KnowledgeBase:
        options.setdefault("embedder", embedder)
        options.setdefault("extractor", extractor)
        return noema.KnowledgeBase(**options)  # type: ignore[arg-type]

    return make


@pytest.fixture(scope="session")
def ingested(
    embedder: noema.SentenceTransformerEmbedder, extractor: noema.SpacyExtractor
) -> Callable[..., noema.KnowledgeBase]:
    """Makes a knowledge base of the real models that has read ``documents`` (with ``ingest``'s
    own options), for a fixture of any scope."""

    def ingest(documents: Sequence[Any], **options: Any) -> noema.KnowledgeBase:
        kb = noema.KnowledgeBase(embedder=embedder, extractor=extractor)
        kb.ingest(documents, **options)
        return kb

    return ingest


COMPANY_DOCS = [
    "Larry Page and Sergey Brin founded Google. Sundar Pichai is the CEO of Google.",
    "Google acquired YouTube in 2006. Google is headquartered in Mountain View.",
    "YouTube was founded by Chad Hurley. Neal Mohan is the CEO of YouTube.",
    "Nvidia acquired Mellanox in 2020. Mellanox was based in Yokneam.",
    "Jensen Huang founded Nvidia in 1993. Nvidia is headquartered in Santa Clara.",
]


@pytest.fixture(scope="session")
def company_kb(ingested: Callable[..., noema.KnowledgeBase]) -> noema.KnowledgeBase:
    return ingested(COMPANY_DOCS)


# The members a save of company_kb writes, sorted: the layout test_bundle pins and
# test_bundle_hashes damages one by one.
BUNDLE_MEMBERS = [
    "embeddings.bin",
    "graph.columns",
    "graph.json",
    "index.faiss",
    "manifest.json",
    "names.bin",
    "sentences.bin",
    "sentences.words",
]


def record_normalized_names(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every name the sentence sidecar works out a compared form of from now on (the real
    ``normalize_name``, each call recorded)."""
    from noema.vectors import _topics

    asked: list[str] = []
    real = _topics.normalize_name

    def recorded(name: str) -> str:
        asked.append(name)
        return real(name)

    monkeypatch.setattr(_topics, "normalize_name", recorded)
    return asked


class NamedAndTyped:
    """An extractor of one's own, as ``KnowledgeBase(extractor=...)`` takes it: each document
    reads "NAME works in PLACE." and NAME gets the type its metadata names. It stands in for the
    recognizer's mistakes, so the types are what a test says whatever spaCy would make of the
    name; the knowledge base calling it and the embedding model are the real ones."""

    def extract(self, documents: Sequence[noema.Document]) -> noema.SemanticGraph:
        graph = noema.SemanticGraph()
        for doc in documents:
            graph.add_document(doc)
            name, _, rest = doc.text.partition(" works in ")
            place = rest.removesuffix(".")
            at = len(name) + len(" works in ")
            entity = graph.add_entity(
                name, doc.metadata["type"], mentions=[noema.Mention(doc.id, 0, len(name))]
            )
            where = graph.add_entity(
                place, "GPE", mentions=[noema.Mention(doc.id, at, at + len(place))]
            )
            graph.add_relation(
                entity, "work_in", where, mentions=[noema.Mention(doc.id, 0, len(doc.text))]
            )
        return graph


def typed(doc_id: str, name: str, type_: str, place: str = "Tarbes") -> noema.Document:
    """A document :class:`NamedAndTyped` reads as ``name``, typed ``type_``, working in ``place``."""
    return noema.Document(f"{name} works in {place}.", id=doc_id, metadata={"type": type_})


@pytest.fixture
def harrow(embedder: noema.SentenceTransformerEmbedder) -> noema.KnowledgeBase:
    """A knowledge base that read the name "Harrow Avionics" as a company in two documents and
    as a person in a third: two entities, as two mentions against one are no clear majority for
    the type rule."""
    kb = noema.KnowledgeBase(embedder=embedder, extractor=NamedAndTyped())
    kb.ingest(
        [
            typed("o1", "Harrow Avionics", "ORG"),
            typed("o2", "Harrow Avionics", "ORG", "Toulouse"),
            typed("p", "Harrow Avionics", "PERSON", "Lleida"),
        ]
    )
    assert set(types_of(kb, "Harrow Avionics")) == {"ORG", "PERSON"}
    return kb


def types_of(kb: noema.KnowledgeBase, name: str) -> dict[str, str]:
    """The entities named ``name``: type -> id."""
    return {e.type: e.id for e in kb.graph.entities.values() if e.name == name}


@pytest.fixture(scope="module")
def bundle(
    tmp_path_factory: pytest.TempPathFactory, ingested: Callable[..., noema.KnowledgeBase]
) -> Path:
    """A bundle of the example documents, one per test module (a module may write to it)."""
    examples = Path(__file__).parent.parent / "examples" / "docs"
    path = tmp_path_factory.mktemp("examples") / "kb.noema"
    ingested(sorted(examples.glob("*.md")), root=examples).save(path)
    return path
