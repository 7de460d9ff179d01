"""What a retrieval returns, and the views of it the LangChain and LlamaIndex adapters map.

:class:`RetrievalResult` is the whole retrieval; :class:`FactExplanation` says why a fact is in
it; :class:`FactMatch` is a vector-search hit. :meth:`RetrievalResult.fact_views` and
:meth:`RetrievalResult.block_views` project a result onto its facts, one at a time, or onto
self-contained blocks of consecutive facts, and :meth:`RetrievalResult.block_view` onto the
whole block: each view holds what a host framework's Document or node needs (the text, its
token count, a score that falls in result order, the sources and citations, JSON-ready), so an
adapter maps a view's fields to its host's names and adds nothing of its own.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from noema.model.graph import SemanticGraph
from noema.model.notation import parse_notation
from noema.model.records import Citation
from noema.resources import count_tokens
from noema.retrieval.formats import Format, render_fact
from noema.retrieval.options import RetrieveOptions
from noema.retrieval.pack import split_blocks
from noema.retrieval.steps import Reason

__all__ = ["BlockView", "FactExplanation", "FactMatch", "FactView", "RetrievalResult"]


@dataclass(frozen=True)
class FactMatch:
    """A vector-search hit: the fact's id and its cosine similarity to the question.

    ``relation_id`` is the documented name for the fact id and holds an ``evt_`` id when the hit is
    an event; :attr:`fact_id` says the same without suggesting otherwise.
    """

    relation_id: str
    similarity: float

    @property
    def fact_id(self) -> str:
        """The relation or event id (the same as ``relation_id``)."""
        return self.relation_id


@dataclass(frozen=True)
class FactExplanation:
    """Why a fact is in a retrieval result, or why it was left out.

    Attributes:
        fact_id: the relation or event.
        reason: why it is there: ``"seed"``, ``"sentence"``, ``"hop"``, ``"bridge"``,
            ``"expansion"`` or ``"time"``, each explained in
            :data:`noema.retrieval.steps.REASONS`.
        order: its place in the packing order, from 0.
        included: True when it is stated in the text; False when the budget cut it, or when
            its confidence is under ``min_confidence`` (notation then still lists its entities).
        similarity: cosine similarity of what chose it to the query that found it: the fact's
            own vector for seeds and expansion facts, its sentence's vector for sentence, hop
            and bridge facts (for a bridge, to the bridge search's query); ``None`` when no
            vector was compared.
        seed_id: the seed it was reached from (itself for a seed or sentence fact; for a hop,
            the fact whose entity led to the document; for a bridge, the fact of the earlier
            evidence that names the bridge entity).
        hops: relation edges walked from that seed's entities (0 for seeds, 1 for a hop).
        path: entity ids walked, from an entity of the seed to the fact's nearer entity (for a
            hop, the entity the document is about; for a bridge, the bridge entity).
        step: the search that found it: 1 for the question's own search (and the seeds, hops
            and walk that follow from it), 2 for a search with a bridge of step 1's evidence,
            3 for one with a bridge of step 2's.
        time: how its time placed it, in words: it matches the question's time ("matches 'in
            2005' of the question (2004/2006)"), or it is valid later than a rival ("valid
            later (2019/..) than evt_... (2010/2019), of the same predicate and end");
            ``None`` when its time did not move it.
    """

    fact_id: str
    reason: Reason
    order: int
    included: bool
    similarity: float | None
    seed_id: str
    hops: int
    path: tuple[str, ...]
    step: int = 1
    time: str | None = None


@dataclass(frozen=True, kw_only=True)
class _Sourced:
    """Where a view's facts came from. Fields are JSON-ready, as a host's metadata wants them.

    Attributes:
        source_ids: the documents the facts came from, sorted.
        sources: each of those documents' metadata, by id, in ``source_ids`` order.
        source_id: the document most of the facts cite (ties: the one an earlier fact cites,
            then the text that sorts first), ``None`` when no fact is cited. Chosen by the facts
            and texts, never by document id: readers such as LlamaIndex's
            ``SimpleDirectoryReader`` give random ids, and the source of the same answer must
            not change from run to run.
    """

    source_ids: list[str]
    sources: dict[str, dict[str, Any]]
    source_id: str | None


@dataclass(frozen=True, kw_only=True)
class FactView(_Sourced):
    """One fact of a result on its own: what a per-fact Document or node holds.

    Attributes:
        fact_id: the relation or event, and the view's id.
        rank: its place in the result's (packing) order, from 1.
        text: the fact alone in the result's format (:meth:`noema.KnowledgeBase.render_fact`).
        token_count: tokens in ``text`` under the result's token model.
        score: its rank-consistent score (:meth:`RetrievalResult.scores`).
        similarity: its own similarity to the question, ``None`` when none was compared.
        citations: where it came from, as dicts.
    """

    fact_id: str
    rank: int
    text: str
    token_count: int
    score: float
    similarity: float | None
    citations: list[dict[str, Any]]


@dataclass(frozen=True, kw_only=True)
class BlockView(_Sourced):
    """Consecutive facts of a result as one self-contained text (its own ``#n`` ids).

    Attributes:
        id: ``noema-`` and a digest of the format and the facts: the same facts in the same
            format are the same block whatever the question, so a retriever that merges
            results by id (an ensemble) sees it once.
        rank: the block's place among the result's blocks, from 1.
        fact_ids: its facts, in the result's order.
        text: the block's text; token_count: its tokens under the result's token model.
        score: the rank-consistent score of its first fact (:meth:`RetrievalResult.scores`), so
            the scores fall in block order; ``None`` for a block without a stated fact.
        citations: where each fact came from, as dicts, by fact id.
    """

    id: str
    rank: int
    fact_ids: list[str]
    text: str
    token_count: int
    score: float | None
    citations: dict[str, list[dict[str, Any]]]


@dataclass(frozen=True)
class RetrievalResult:
    """What :meth:`noema.KnowledgeBase.retrieve` returns.

    Attributes:
        text: the context in the requested format; empty when nothing was found or fitted.
        notation: the same facts as notation, whatever the format.
        entity_ids, relation_ids, event_ids: graph ids in the order they appear in the text.
        fact_ids: the relations and events of the text in packing (priority) order.
        token_count: tokens in ``text`` under ``token_model``; never above ``max_tokens``.
        truncated: True when the budget left out facts the walk had reached.
        fact_matches: the vector-search hits, best first.
        citations: for each fact in the text, where it came from (document, span, sentence).
        explanation: with ``explain=True``, a :class:`FactExplanation` for every fact
            considered, in packing order; ``None`` otherwise.
        format, token_model: the options used.
    """

    text: str
    notation: str
    entity_ids: tuple[str, ...] = ()
    relation_ids: tuple[str, ...] = ()
    event_ids: tuple[str, ...] = ()
    fact_ids: tuple[str, ...] = ()
    token_count: int = 0
    truncated: bool = False
    fact_matches: tuple[FactMatch, ...] = ()
    citations: Mapping[str, tuple[Citation, ...]] = field(default_factory=dict)
    explanation: tuple[FactExplanation, ...] | None = field(default=None, compare=False)
    format: Format = "notation"
    token_model: str = "cl100k_base"
    question: str = ""

    @classmethod
    def empty(
        cls, question: str, options: RetrieveOptions, *, explain: bool = False
    ) -> RetrievalResult:
        """What a retrieval from a knowledge base with no facts returns."""
        return cls(
            text="",
            notation="",
            format=options.format,
            token_model=options.token_model,
            question=question,
            explanation=() if explain else None,
        )

    def __str__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        return bool(self.text)

    def source_ids(self, fact_ids: Sequence[str] | None = None) -> list[str]:
        """Sorted ids of the documents the facts came from (all facts of the text by default)."""
        chosen = self.fact_ids if fact_ids is None else fact_ids
        return sorted({c.document_id for f in chosen for c in self.citations.get(f, ())})

    def similarities(self) -> dict[str, float]:
        """Each fact's cosine similarity to the question: its own vector hit, else (with
        ``explain=True``) the similarity of the sentence or fact that chose it."""
        similarity = {m.relation_id: m.similarity for m in self.fact_matches}
        similarity.update(
            {e.fact_id: e.similarity for e in self.explanation or () if e.similarity is not None}
        )
        return similarity

    def scores(self) -> list[float]:
        """A score per fact of :attr:`fact_ids`, falling in their (packing) order: each fact's
        similarity capped by those of the facts above it, so a score cutoff keeps a prefix of the
        ranking and never drops a fact ranked above one it keeps. A fact without a similarity
        takes the score above it (0.0 for the first).

        Example:
            >>> RetrievalResult("", "", fact_ids=("a", "b"), fact_matches=(
            ...     FactMatch("a", 0.5), FactMatch("b", 0.7))).scores()
            [0.5, 0.5]
        """
        similarity = self.similarities()
        scores: list[float] = []
        for fact_id in self.fact_ids:
            above = scores[-1] if scores else None
            own = similarity.get(fact_id)
            if own is None:
                scores.append(0.0 if above is None else above)
            else:
                scores.append(own if above is None else min(above, own))
        return scores

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (citations and explanation as plain dicts).

        Example:
            >>> RetrievalResult(text="", notation="").to_dict()["token_count"]
            0
        """
        data = asdict(self, dict_factory=_json_ready)
        data["citations"] = self._citation_dicts()
        data["source_ids"] = self.source_ids()
        return data

    def fact_views(self, graph: SemanticGraph, k: int | None = None) -> list[FactView]:
        """The first ``k`` facts (all by default), each on its own, in the result's order.
        ``graph`` is the knowledge base's (:attr:`noema.KnowledgeBase.graph`).

        Example:
            >>> import noema
            >>> kb = noema.KnowledgeBase()
            >>> _ = kb.ingest(["Larry Page founded Google."])
            >>> [v.text for v in kb.retrieve("Who founded Google?").fact_views(kb.graph)]
            ['#1 Larry Page :PERSON\\n#2 Google :ORG\\n#1 -found-> #2']
        """
        similarity = self.similarities()
        citations = self._citation_dicts()
        chosen = self.fact_ids if k is None else self.fact_ids[:k]
        views = []
        for rank, (fact_id, score) in enumerate(zip(chosen, self.scores(), strict=False), 1):
            text = render_fact(graph, fact_id, self.format)
            views.append(
                FactView(
                    fact_id=fact_id,
                    rank=rank,
                    text=text,
                    token_count=count_tokens(text, self.token_model),
                    score=score,
                    similarity=similarity.get(fact_id),
                    citations=citations.get(fact_id, []),
                    **self._sourced(graph, [fact_id]),
                )
            )
        return views

    def block_views(
        self, graph: SemanticGraph, k: int, max_tokens: int | None = None
    ) -> list[BlockView]:
        """The facts as at most ``k`` self-contained blocks of consecutive facts (the first ones
        fuller), together within ``max_tokens`` (default: the result's own token count). Each
        block repeats the entity lines it needs, so a split holds a few facts fewer
        (:meth:`noema.KnowledgeBase.render_blocks`).

        Example:
            >>> import noema
            >>> kb = noema.KnowledgeBase()
            >>> _ = kb.ingest(["Larry Page founded Google. Google acquired YouTube."])
            >>> result = kb.retrieve("Who founded Google?", max_tokens=100)
            >>> [len(b.fact_ids) for b in result.block_views(kb.graph, 2, 100)]
            [1, 1]
        """
        budget = self.token_count if max_tokens is None else max_tokens
        blocks = split_blocks(graph, self.fact_ids, k, budget, self.format, self.token_model)
        scores = dict(zip(self.fact_ids, self.scores(), strict=True))
        citations = self._citation_dicts()
        return [
            BlockView(
                id=self._block_id(group),
                rank=rank,
                fact_ids=group,
                text=text,
                token_count=count,
                score=scores[group[0]],
                citations={f: citations.get(f, []) for f in group},
                **self._sourced(graph, group),
            )
            for rank, (group, text, count) in enumerate(blocks, start=1)
        ]

    def block_view(self, graph: SemanticGraph) -> BlockView:
        """The whole text as one block (``#n`` ids are local to one block, so the text is only
        self-contained whole); its score is that of the first fact."""
        citations = self._citation_dicts()
        scores = self.scores()
        return BlockView(
            id=self._block_id(self.fact_ids),
            rank=1,
            fact_ids=list(self.fact_ids),
            text=self.text,
            token_count=self.token_count,
            score=scores[0] if scores else None,
            citations={f: citations.get(f, []) for f in self.fact_ids},
            **self._sourced(graph, self.fact_ids),
        )

    def _block_id(self, fact_ids: Sequence[str]) -> str:
        key = "\x1f".join((self.format, *fact_ids))
        return f"noema-{hashlib.sha256(key.encode()).hexdigest()[:16]}"

    def _citation_dicts(self) -> dict[str, list[dict[str, Any]]]:
        return {f: [asdict(c) for c in cs] for f, cs in self.citations.items()}

    def _sourced(self, graph: SemanticGraph, fact_ids: Sequence[str]) -> dict[str, Any]:
        """The :class:`_Sourced` fields of a view of ``fact_ids``."""
        source_ids = self.source_ids(fact_ids)
        return {
            "source_ids": source_ids,
            "sources": {d: _metadata(graph, d) for d in source_ids},
            "source_id": self._main_source(graph, fact_ids),
        }

    def _main_source(self, graph: SemanticGraph, fact_ids: Sequence[str]) -> str | None:
        """The document most of ``fact_ids`` cite (see :class:`_Sourced`)."""
        cited: Counter[str] = Counter()
        first: dict[str, int] = {}
        for rank, fact_id in enumerate(fact_ids):
            documents = {c.document_id for c in self.citations.get(fact_id, ())}
            cited.update(documents)  # once per fact, however often the fact is cited there
            for document_id in documents:
                first.setdefault(document_id, rank)
        if not cited:
            return None

        def text(document_id: str) -> str:
            doc = graph.documents.get(document_id)
            return doc.text if doc is not None else ""

        return min(cited, key=lambda d: (-cited[d], first[d], text(d)))

    def _repr_html_(self) -> str:
        return self.to_html()

    def to_html(self) -> str:
        """The facts as a picture and a table: self-contained HTML (no scripts, no network)."""
        from noema.model.view import render_html

        title = f"{self.question!r}: {len(self.fact_ids)} facts, {self.token_count} tokens"
        if self.truncated:
            title += ", truncated by the budget"
        return render_html(parse_notation(self.notation), title=title)


def _metadata(graph: SemanticGraph, document_id: str) -> dict[str, Any]:
    """A copy of the document's metadata ({} when it has none or is not in the graph)."""
    doc = graph.documents.get(document_id)
    return dict(doc.metadata) if doc is not None and doc.metadata else {}


def _json_ready(items: list[tuple[str, Any]]) -> dict[str, Any]:
    """``asdict`` factory: tuples become lists, as JSON would make them."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in items}
