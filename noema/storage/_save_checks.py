"""What a save of an opened bundle will demand of its sentence sidecar, checked when it is opened.

A save works the sidecar's sentences and keys out again from the graph and refuses a sidecar that
differs (its vectors would be filed under other sentences). ``graph.columns`` stores them, so
opening does not work them out; a sidecar listing other sentences, in another order, or under
keys of another text (an edited document with a consistent manifest) opened, answered and took
ingests, then failed every save. Opening now compares the sentences and their facts with
vectorized numpy; the keys, by hashing each sentence's text as a save does, where the member was
hashed on opening, else with its sha256 (``load(verify=True)``, ``noema validate``, and before
a save or merge: 7 s of opening 300,000 sentences).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from noema.errors import BundleError
from noema.model.graph import SemanticGraph
from noema.model.spans import Sentence
from noema.vectors.sentences import sentence_key

__all__ = ["check_sentence_keys", "check_sentence_runs", "check_sentence_sources"]


def _fact_mentions(
    arrays: Mapping[str, npt.NDArray[Any]], relations: int, events: int
) -> tuple[npt.NDArray[Any], ...]:
    """Every fact mention's document row, start, end and fact row (relations, then events), in
    the order the graph lists them."""
    per_fact = [
        np.repeat(np.arange(relations), np.diff(arrays["relation_mention_range"])),
        np.repeat(np.arange(relations, relations + events), np.diff(arrays["event_mention_range"])),
    ]
    fields = [
        np.concatenate([arrays[f"{kind}_mention_{field}"] for kind in ("relation", "event")])
        for field in ("document", "start", "end")
    ]
    return (*fields, np.concatenate(per_fact))


def check_sentence_runs(arrays: Mapping[str, npt.NDArray[Any]]) -> None:
    """What reading the sidecar in place relies on, checked on every opening (a scan, where
    :func:`check_sentence_sources` sorts every mention): each document's sentences are one run
    of rows, ordered by span.

    Raises:
        BundleError: they are not.
    """
    document, start, end = (arrays[f"sentence_{n}"] for n in ("document", "start", "end"))
    same = document[1:] == document[:-1]
    runs = document[np.flatnonzero(np.concatenate([[True], ~same]))] if len(document) else document
    later = (start[1:] > start[:-1]) | ((start[1:] == start[:-1]) & (end[1:] > end[:-1]))
    # each document once among the runs: counted by row, not sorted (np.unique took 0.13 s of
    # opening a million facts); rows are already known to be in bounds
    repeated = len(runs) > 0 and np.count_nonzero(np.bincount(runs)) != len(runs)
    if repeated or not np.all(later | ~same):
        raise BundleError(
            "graph.columns: the sentence sidecar's sentences are not grouped by document and "
            "ordered by span (damaged or edited)"
        )


def check_sentence_sources(
    arrays: Mapping[str, npt.NDArray[Any]], relations: int, events: int
) -> None:
    """The sidecar's sentences (arrays already in bounds) are what
    :func:`~noema.vectors.sentences.source_sentences` makes of the graph: the distinct spans of
    the facts' mentions, by document id then span, each with the facts mentioned there in graph
    order.

    Raises:
        BundleError: they are other sentences, or in another order.
    """
    documents, starts, ends, facts = _fact_mentions(arrays, relations, events)
    by_id = arrays["document_id_order"]  # checked to sort the ids before this check runs
    rank = np.empty(len(by_id), np.int64)  # each document's place in id order
    rank[by_id] = np.arange(len(by_id))
    order = np.lexsort((np.arange(len(facts)), ends, starts, rank[documents]))
    documents, starts, ends, facts = (a[order] for a in (documents, starts, ends, facts))
    first = np.ones(len(facts), bool)  # where a sentence starts among the sorted mentions
    first[1:] = (
        (documents[1:] != documents[:-1]) | (starts[1:] != starts[:-1]) | (ends[1:] != ends[:-1])
    )
    at = np.flatnonzero(first)
    expected = {
        "sentence_document": documents[at],
        "sentence_start": starts[at],
        "sentence_end": ends[at],
        "sentence_fact_range": np.append(at, len(facts)),
        "sentence_fact": facts,
    }
    if not all(np.array_equal(arrays[name], value) for name, value in expected.items()):
        raise BundleError(
            "graph.columns: the sentence sidecar lists other sentences than the graph's facts "
            "come from, or in another order (damaged or edited); a save would refuse it"
        )


def check_sentence_keys(graph: SemanticGraph, keys: Mapping[Sentence, str]) -> None:
    """Each stored key is the one a save makes from the sentence's text (measured on the MuSiQue
    benchmark bundle: 6,246 sentences in 0.04 s of a 0.65 s opening).

    Raises:
        BundleError: naming the first sentence whose text hashes to another key.
    """
    for sentence, key in keys.items():
        if sentence_key(graph, sentence) != key:
            raise BundleError(
                f"graph.columns: the text of document {sentence.document_id!r} at "
                f"{sentence.start}-{sentence.end} does not hash to its key in the sentence "
                "sidecar (the text was edited, or the key damaged); a save would refuse it"
            )
