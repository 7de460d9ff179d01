"""Measuring Noema on your own data: answer-in-context recall per token, beside chunk retrieval.

The chunk retriever is the baseline users would otherwise pick: the same embedding model over
whole documents (title-prefixed when they have a title), packed in rank order and cut at the
token budget.
"""

from __future__ import annotations

import re
import string
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from noema.kb import KnowledgeBase
from noema.model.records import Document
from noema.resources import DEFAULT_TOKEN_MODEL, count_tokens, get_encoding
from noema.retrieval.formats import FORMATS
from noema.retrieval.options import Format, RetrieveOptions
from noema.retrieval.result import RetrievalResult
from noema.vectors.embed import Embedder, query_embedding
from noema.vectors.index import VectorIndex, one_blas_thread

__all__ = [
    "ChunkRetriever",
    "EvalQuestion",
    "EvalRow",
    "answer_in_context",
    "evaluate",
    "normalize_answer",
    "stated_text",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD-style normalization: lowercase, no punctuation or articles, single spaces.

    Example:
        >>> normalize_answer("The Walt Disney Company!")
        'walt disney company'
    """
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split())


def answer_in_context(answers: Sequence[str], context: str) -> bool:
    """True when any normalized answer occurs in the normalized context (as whole words)."""
    haystack = f" {normalize_answer(context)} "
    return any(f" {a} " in haystack for a in map(normalize_answer, answers) if a)


def stated_text(kb: KnowledgeBase, result: RetrievalResult) -> str | None:
    """What ``result`` states as fact, one sentence per stated fact: the relations and events
    its text writes out, without the names it lists with no claim (notation's entity lines,
    natural_language's "Also named:" line). An answer found here is inside a stated fact, which a
    reader can use; one found only in a listed name is not. ``None`` for a format that shows
    source sentences rather than stating facts (``sentences``).

    Example:
        >>> kb = KnowledgeBase()
        >>> stated_text(kb, kb.retrieve("Who founded Acme?"))
        ''
    """
    if not FORMATS[result.format].states_facts:
        return None
    return kb.render_facts(result.fact_ids, format="natural_language")


def cut_to_budget(text: str, max_tokens: int, token_model: str = DEFAULT_TOKEN_MODEL) -> str:
    """The longest prefix of ``text`` within ``max_tokens`` tokens (cut on a token boundary)."""
    encoding = get_encoding(token_model)
    tokens = encoding.encode(text, disallowed_special=())
    if len(tokens) <= max_tokens:
        return text
    cut = encoding.decode(tokens[:max_tokens])
    while count_tokens(cut, token_model) > max_tokens:  # re-encoding a cut can merge differently
        cut = cut[:-1]
    return cut


class ChunkRetriever:
    """Plain dense retrieval over whole documents, for comparison.

    Example:
        >>> from noema.vectors.embed import SentenceTransformerEmbedder
        >>> chunks = ChunkRetriever(SentenceTransformerEmbedder(), [Document("Paris is in France.", id="p")])
        >>> chunks.retrieve("Where is Paris?", max_tokens=4)[1]
        ['p']
    """

    def __init__(
        self,
        embedder: Embedder,
        documents: Sequence[Document],
        *,
        token_model: str = DEFAULT_TOKEN_MODEL,
    ):
        self.documents = {d.id: d for d in documents}
        self.token_model = token_model
        self.embedder = embedder
        self.index = VectorIndex(embedder.dimension)
        texts = [self.text_of(d) for d in self.documents.values()]
        if texts:
            self.index.add(list(self.documents), embedder.embed(texts))

    @staticmethod
    def text_of(document: Document) -> str:
        title = document.metadata.get("title") if document.metadata else None
        return f"{title}: {document.text}" if isinstance(title, str) and title else document.text

    def retrieve(self, question: str, max_tokens: int) -> tuple[str, list[str]]:
        """The context within ``max_tokens`` and the document ids in rank order."""
        with one_blas_thread():  # as KnowledgeBase.retrieve searches, so both are timed alike
            query = query_embedding(self.embedder)([question])[0]
            ranked = [doc_id for doc_id, _ in self.index.search(query, len(self.index))]
        return self.pack(ranked, max_tokens), ranked

    def pack(self, ranked: Sequence[str], max_tokens: int) -> str:
        text = ""
        for doc_id in ranked:
            text = (
                f"{text}\n\n{self.text_of(self.documents[doc_id])}"
                if text
                else self.text_of(self.documents[doc_id])
            )
            if count_tokens(text, self.token_model) >= max_tokens:
                break
        return cut_to_budget(text, max_tokens, self.token_model)


@dataclass(frozen=True)
class EvalQuestion:
    """A question with optional gold answers (any one counts), and the day it is asked as of
    (``retrieve``'s ``as_of``: ``"2020"``, ``"now"``; ``None``: no ``as_of``)."""

    question: str
    answers: tuple[str, ...] = ()
    as_of: str | None = None


@dataclass(frozen=True)
class EvalRow:
    """One method at one budget."""

    method: str
    max_tokens: int
    questions: int
    mean_tokens: float
    recall: float | None
    p50_ms: float
    p95_ms: float
    # the answer inside a stated fact (see stated_text); None for sentences, chunks, no answers
    stated_recall: float | None = None


def evaluate(
    kb: KnowledgeBase,
    documents: Sequence[Document],
    questions: Sequence[EvalQuestion],
    *,
    budgets: Sequence[int] = (100, 200, 400),
    top_k: int = RetrieveOptions.top_k,
    hops: int = RetrieveOptions.hops,
    token_model: str = RetrieveOptions.token_model,
    format: Format = RetrieveOptions.format,
    progress: Callable[[int, int], None] | None = None,
) -> list[EvalRow]:
    """Noema and the chunk retriever on the same documents and questions.

    ``kb`` must already hold ``documents``. Recall is ``None`` when no question has answers.
    ``progress(done, total)`` is called after each retrieval (each question, budget and method).
    """
    chunks = ChunkRetriever(kb.embedder, documents, token_model=token_model)
    rows = []
    total = len(budgets) * 2 * len(questions)
    done = 0
    for budget in budgets:
        for method in ("noema", "chunks"):
            tokens, hits, stated_hits, answered, times = [], 0, 0, 0, []
            stated: str | None = None
            for q in questions:
                start = time.perf_counter()
                if method == "noema":
                    result = kb.retrieve(
                        q.question,
                        top_k=top_k,
                        hops=hops,
                        max_tokens=budget,
                        token_model=token_model,
                        format=format,
                        as_of=q.as_of,
                    )
                    context, used = result.text, result.token_count
                    stated = stated_text(kb, result)
                else:
                    context, _ = chunks.retrieve(q.question, budget)
                    used = count_tokens(context, token_model)
                times.append(time.perf_counter() - start)
                tokens.append(used)
                if q.answers:
                    answered += 1
                    hits += answer_in_context(q.answers, context)
                    stated_hits += stated is not None and answer_in_context(q.answers, stated)
                done += 1
                if progress is not None:
                    progress(done, total)
            ms = np.array(times) * 1000 if times else np.zeros(1)
            rows.append(
                EvalRow(
                    method=method,
                    max_tokens=budget,
                    questions=len(questions),
                    mean_tokens=float(np.mean(tokens)) if tokens else 0.0,
                    recall=hits / answered if answered else None,
                    p50_ms=float(np.percentile(ms, 50)),
                    p95_ms=float(np.percentile(ms, 95)),
                    stated_recall=stated_hits / answered
                    if answered and method == "noema" and FORMATS[format].states_facts
                    else None,
                )
            )
    return rows
