"""Lexical search: BM25 over the source sentences, beside the vector search.

An embedding of a question finds sentences that say the same thing in other words, but it can miss
the one sentence that holds a rare name, a number or a word the model knows little of ("Which
album did Orlin release in 1994?"). A BM25 ranking finds exactly those. Retrieval fuses the two
rankings by rank (reciprocal rank fusion), so neither score scale has to be compared with the
other.

The index (:mod:`noema.vectors.words`, its scoring and the layout a bundle stores it in) is the
sentence sidecar's: read in place from a bundle that stores it, else made from the sidecar's
sentences by the first retrieval that needs it, and kept with the sidecar.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from noema.model.graph import SemanticGraph
from noema.vectors import words as words_module
from noema.vectors.sentences import SentenceIndex
from noema.vectors.words import LexicalIndex, words

__all__ = ["LexicalIndex", "fused", "lexical_index", "words"]

# Reciprocal rank fusion's constant: a hit at rank r scores 1 / (RRF_K + r) in each ranking.
RRF_K = 60


def lexical_index(graph: SemanticGraph, sentences: SentenceIndex) -> LexicalIndex | None:
    """The index of the sidecar's sentences: the one its bundle stored, else made from
    ``graph``'s documents on first use and kept while the sidecar lives (a write makes a new
    sidecar, and so a new index: 0.3 s for the 11,616 sentences of the 300-question HotpotQA
    pool on a busy machine, which ``warm_up`` pays for a service before its first question);
    ``None`` where none is stored and the sidecar holds more than
    :data:`~noema.vectors.words.LEXICAL_LIMIT` sentences."""
    return sentences.word_index(graph, limit=words_module.LEXICAL_LIMIT)


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
