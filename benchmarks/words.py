"""The word index at scale: making it, writing ``sentences.words``, reading it back, searching.

    python benchmarks/words.py --sentences 100000 500000

Synthetic sentences written like Wikipedia's: real sentences of the wiki paragraphs, each
capitalized word replaced by a made-up name (so the vocabulary grows with the base, as rare names
do), five sentences a document under a made-up title. No model runs: the figures are about the
word index alone, to set beside a save (about 0.17 ms a sentence at a million, RESULTS.md) and an
ingest (minutes per thousand documents on this machine).
"""

from __future__ import annotations

import argparse
import random
import re
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import data_file, machine, print_table  # noqa: E402

import noema  # noqa: E402
from noema.model.spans import Sentence  # noqa: E402
from noema.vectors.words import (  # noqa: E402
    LexicalIndex,
    read_word_index,
    word_index_pieces,
)

SENTENCES_PER_DOCUMENT = 5
_SYLLABLES = [
    "ka",
    "lo",
    "mer",
    "vin",
    "dra",
    "tes",
    "ol",
    "an",
    "quin",
    "ber",
    "su",
    "ith",
    "gar",
    "nor",
    "pel",
    "vo",
    "ric",
    "ta",
    "den",
    "sha",
]
_CAPITALIZED = re.compile(r"\b[A-Z][a-z]+\b")


def wiki_sentences() -> list[str]:
    """The sentences of the wiki paragraphs, split at a full stop before a capital."""
    import json

    found: list[str] = []
    with data_file("wiki/wiki_paragraphs.jsonl").open() as handle:
        for line in handle:
            text = json.loads(line)["text"]
            found.extend(s for s in re.split(r"(?<=\.)\s+(?=[A-Z])", text) if len(s) > 20)
    return found


def made_up_name(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))).capitalize()


def synthetic_graph(n: int, seed: int = 0) -> tuple[noema.SemanticGraph, dict[str, list[Sentence]]]:
    """A graph of documents holding ``n`` sentences, and each document's sentences."""
    rng = random.Random(seed)
    pool = wiki_sentences()
    names = [made_up_name(rng) for _ in range(max(1000, n // 4))]
    graph = noema.SemanticGraph()
    by_document: dict[str, list[Sentence]] = {}
    for first in range(0, n, SENTENCES_PER_DOCUMENT):
        count = min(SENTENCES_PER_DOCUMENT, n - first)
        texts = [
            _CAPITALIZED.sub(lambda _: rng.choice(names), rng.choice(pool)) for _ in range(count)
        ]
        text = " ".join(texts)
        document_id = f"doc{first // SENTENCES_PER_DOCUMENT:07d}"
        title = f"{rng.choice(names)} {rng.choice(names)}"
        graph.add_document(noema.Document(text, id=document_id, metadata={"title": title}))
        spans, at = [], 0
        for sentence in texts:
            spans.append(Sentence(document_id, at, at + len(sentence)))
            at += len(sentence) + 1
        by_document[document_id] = spans
    return graph, by_document


def measure(n: int, questions: list[str]) -> list[str]:
    graph, by_document = synthetic_graph(n)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    index = LexicalIndex.of_documents(graph, by_document)
    made = time.perf_counter() - start
    peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    start = time.perf_counter()
    data = b"".join(bytes(p) for p in word_index_pieces(index, b"\0" * 32))
    written = time.perf_counter() - start
    start = time.perf_counter()
    stored = read_word_index(data, index.sentences)
    read = time.perf_counter() - start
    times: dict[str, list[float]] = {"made": [], "stored": []}
    for question in questions:
        for name, searched in (("made", index), ("stored", stored)):
            start = time.perf_counter()
            searched.search(question, 40)
            times[name].append(time.perf_counter() - start)
        assert stored.search(question, 40) == index.search(question, 40)
    return [
        f"{n:,}",
        f"{made:.1f} s",
        f"+{peak:,.0f} MB",
        f"{len(data) / 2**20:,.1f} MB ({len(data) / n:,.0f} B a sentence)",
        f"{sum(1 for _ in index.vocabulary()):,}",
        f"{written:.2f} s",
        f"{read * 1e3:.1f} ms",
        f"{statistics.median(times['made']) * 1e3:.1f} / "
        f"{statistics.median(times['stored']) * 1e3:.1f} ms",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, nargs="+", default=[100_000, 500_000])
    args = parser.parse_args()
    import json

    rows = [json.loads(line) for line in data_file("hotpotqa/hotpotqa_dev_300.jsonl").open()]
    questions = [row["question"] for row in rows[:40]]
    print(machine())
    print_table(
        [
            "sentences",
            "make",
            "peak memory",
            "member",
            "words",
            "write",
            "read",
            "search p50 made / stored",
        ],
        [measure(n, questions) for n in args.sentences],
    )


if __name__ == "__main__":
    main()
