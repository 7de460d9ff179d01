"""Lexical search: BM25 over the source sentences, beside the vector search.

An embedding of a question finds sentences that say the same thing in other words, but it can miss
the one sentence that holds a rare name, a number or a word the model knows little of ("Which
album did Orlin release in 1994?"). A BM25 ranking finds exactly those. Retrieval fuses the two
rankings by rank (reciprocal rank fusion), so neither score scale has to be compared with the
other.

The index is built in memory, on first use, from the sentences of the sentence sidecar (each as it is embedded:
its document's title, then its text), so it needs nothing stored and is the same for a bundle
however it was made. The scoring is Lucene's BM25 (``k1=1.5``, ``b=0.75``, idf
``ln(1 + (N - df + 0.5) / (df + 0.5))``, no ``k1 + 1`` factor), the same as ``bm25s``'s
default, over lower-cased words with accents folded and English function words left out.
"""

from __future__ import annotations

import re
import threading
import unicodedata
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from noema.model.graph import SemanticGraph
from noema.model.spans import Sentence
from noema.vectors.sentences import SentenceIndex

__all__ = ["LEXICAL_LIMIT", "LexicalIndex", "fused", "lexical_index", "words"]

K1 = 1.5
B = 0.75
# Reciprocal rank fusion's constant: a hit at rank r scores 1 / (RRF_K + r) in each ranking.
RRF_K = 60
# Up to this many sentences the index is made in memory by the first retrieval that needs it
# (0.3 s for 11,616 sentences on a busy machine, the 300-question HotpotQA pool; ``warm_up``
# makes it for a service before its first question); above it, making it would hold a first
# retrieval for seconds, and retrieval searches by vector alone. Opening a bundle reads no
# record, so it does not make it.
LEXICAL_LIMIT = 200_000

_MADE: weakref.WeakKeyDictionary[SentenceIndex, LexicalIndex | None] = weakref.WeakKeyDictionary()
_MAKING = threading.Lock()  # held while one is made: each sidecar's index is made once

_WORD = re.compile(r"[a-z0-9]+")
_MARKS = re.compile("[\u0300-\u036f]")  # the combining accents NFKD splits off letters
# Words that say how a question is put, not what it is about: in nearly every sentence or none.
_STOPWORD_LIST = (
    "a about above after again against all also am an and any are as at be because been before "
    "being below between both but by can could did do does doing down during each few for from "
    "further had has have having he her here hers herself him himself his how i if in into is it "
    "its itself just me more most my myself no nor not now of off on once only or other our ours "
    "ourselves out over own same she should so some such than that the their theirs them "
    "themselves then there these they this those through to too under until up very was we were "
    "what when where which while who whom whose why will with would you your yours yourself s"
)
_STOPWORDS = frozenset(_STOPWORD_LIST.split())


def words(text: str) -> list[str]:
    """The words BM25 counts: lower case, accents folded ("Zoë" is "zoe"), no function words."""
    folded = text.lower()
    if not folded.isascii():
        folded = _MARKS.sub("", unicodedata.normalize("NFKD", folded))
    return [w for w in _WORD.findall(folded) if w not in _STOPWORDS]


class LexicalIndex:
    """BM25 over a fixed list of sentences; built once, then only read (shared without locks).

    Each word's postings are one slice of two flat arrays, the sentence rows and the word's BM25
    weight in each, so a query adds a few slices into one score array.

        >>> from noema.model.spans import Sentence
        >>> rows = [Sentence("a", 0, 9), Sentence("b", 0, 9)]
        >>> index = LexicalIndex(rows, ["Orlin released Tallow.", "The band toured."])
        >>> index.search("When did Orlin release it?", 5)
        [(Sentence(document_id='a', start=0, end=9), 0.254366)]
    """

    def __init__(self, sentences: Sequence[Sentence], texts: Iterable[str]) -> None:
        self.sentences = tuple(sentences)
        every: list[str] = []
        lengths = np.zeros(len(self.sentences), dtype=np.int64)
        for row, text in enumerate(texts):
            found = words(text)
            every.extend(found)
            lengths[row] = len(found)
        self.vocabulary = {word: n for n, word in enumerate(dict.fromkeys(every))}
        size = max(len(self.vocabulary), 1)
        terms = np.fromiter(map(self.vocabulary.__getitem__, every), np.int64, len(every))
        rows = np.repeat(np.arange(len(self.sentences), dtype=np.int64), lengths)
        # one entry per (sentence, word) with its count, by sentence then word
        pairs, counts = np.unique(rows * size + terms, return_counts=True)
        self.rows, self.weights, self.starts = _postings(
            (pairs // size).astype(np.int32),
            pairs % size,
            counts.astype(np.float32),
            lengths.astype(np.float32),
            len(self.vocabulary),
        )

    @classmethod
    def of_documents(
        cls, graph: SemanticGraph, by_document: Mapping[str, Sequence[Sentence]]
    ) -> LexicalIndex:
        """The index of the sentences of each document, each read as its document's title and
        its own text (one look-up of each document: a bundle read in place looks records up one
        by one)."""
        order: list[Sentence] = []
        texts: list[str] = []
        for document_id, sentences in by_document.items():
            document = graph.documents[document_id]
            title = document.metadata.get("title") if document.metadata else None
            heading = title if isinstance(title, str) else ""
            text = document.text
            for sentence in sentences:
                order.append(sentence)
                texts.append(f"{heading} {text[sentence.start : sentence.end]}")
        return cls(order, texts)

    def __len__(self) -> int:
        return len(self.sentences)

    def scores(self, text: str) -> npt.NDArray[np.float32]:
        """Every sentence's BM25 score for ``text`` (each distinct word counted once)."""
        total = np.zeros(len(self.sentences), dtype=np.float32)
        for word in dict.fromkeys(words(text)):
            term = self.vocabulary.get(word)
            if term is None:
                continue
            start, end = self.starts[term], self.starts[term + 1]
            total[self.rows[start:end]] += self.weights[start:end]
        return total

    def search(self, text: str, k: int) -> list[tuple[Sentence, float]]:
        """The ``k`` best sentences for ``text`` with a score above 0, best first (ties in the
        sentences' order)."""
        scores = self.scores(text)
        hit = np.flatnonzero(scores > 0)
        if not len(hit) or k <= 0:
            return []
        best = hit[np.lexsort((hit, -scores[hit]))][:k]
        return [(self.sentences[i], round(float(scores[i]), 6)) for i in best]


def lexical_index(graph: SemanticGraph, sentences: SentenceIndex) -> LexicalIndex | None:
    """The index of the sidecar's sentences, made on first use and kept while the sidecar lives
    (a write makes a new sidecar, and so a new index); ``None`` above :data:`LEXICAL_LIMIT`."""
    with _MAKING:
        if sentences in _MADE:
            return _MADE[sentences]
        made = (
            LexicalIndex.of_documents(graph, sentences.by_document)
            if len(sentences) <= LEXICAL_LIMIT
            else None
        )
        _MADE[sentences] = made
        return made


def _postings(
    rows: npt.NDArray[np.int32],
    terms: npt.NDArray[np.int64],
    counts: npt.NDArray[np.float32],
    lengths: npt.NDArray[np.float32],
    vocabulary: int,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """The postings sorted by word (rows, BM25 weights) and each word's first position."""
    n = len(lengths)
    order = np.argsort(terms, kind="stable")  # stable: within a word, rows stay in order
    rows, terms, counts = rows[order], terms[order], counts[order]
    frequency = np.bincount(terms, minlength=vocabulary)
    starts = np.zeros(vocabulary + 1, dtype=np.int64)
    np.cumsum(frequency, out=starts[1:])
    idf = np.log(1 + (n - frequency + 0.5) / (frequency + 0.5))
    average = float(lengths.mean()) if n and lengths.sum() else 1.0
    norm = K1 * (1 - B + B * lengths[rows] / average)
    weights = (idf[terms] * counts / (counts + norm)).astype(np.float32)
    return rows, weights, starts


def fused(*rankings: Sequence[Any], k: int = RRF_K) -> list[Any]:
    """The items of several rankings (best first) by reciprocal rank fusion: each scores
    ``1 / (k + rank)`` in each ranking that holds it; ties in first appearance order.

        >>> fused(["a", "b", "c"], ["c", "d"])
        ['c', 'a', 'b', 'd']
    """
    score: dict[Any, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            score[item] = score.get(item, 0.0) + 1 / (k + rank)
    order = {item: n for n, item in enumerate(score)}
    return sorted(score, key=lambda item: (-score[item], order[item]))
