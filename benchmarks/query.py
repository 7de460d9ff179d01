"""Retrieve latency as the knowledge base grows, beside the chunk retriever on the same texts.

python benchmarks/query.py --sizes 250 500 1000 2000 --queries 100
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import data_file, machine, print_table  # noqa: E402

import noema  # noqa: E402
from noema.evaluate import ChunkRetriever  # noqa: E402


def percentiles(samples: list[float]) -> str:
    ms = np.array(samples) * 1000
    return f"{np.percentile(ms, 50):.1f} / {np.percentile(ms, 95):.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000])
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    records = [
        json.loads(line)
        for line in data_file("wiki/wiki_paragraphs.jsonl")
        .read_text()
        .splitlines()[: max(args.sizes)]
    ]
    questions = [f"What is known about {r['title']}?" for r in records[: args.queries]]
    embedder = noema.SentenceTransformerEmbedder()
    kb = noema.KnowledgeBase(embedder=embedder)
    done = 0
    rows = []
    for size in args.sizes:
        docs = [
            noema.Document(r["text"], id=f"{n}:{r['title']}", metadata={"title": r["title"]})
            for n, r in enumerate(records)
        ]
        kb.ingest(docs[done:size])
        done = size
        kb.retrieve("warm up")
        chunks = ChunkRetriever(embedder, docs[:size])
        timings: dict[str, list[float]] = {"noema hops=1": [], "noema hops=2": [], "chunks": []}
        for q in questions:
            for hops in (1, 2):
                start = time.perf_counter()
                kb.retrieve(q, hops=hops, max_tokens=200)
                timings[f"noema hops={hops}"].append(time.perf_counter() - start)
            start = time.perf_counter()
            chunks.retrieve(q, 200)
            timings["chunks"].append(time.perf_counter() - start)
        facts = len(kb.graph.relations) + len(kb.graph.events)
        rows.append([f"{size:,}", f"{facts:,}", *(percentiles(t) for t in timings.values())])
    print(
        f"Query latency, ms p50 / p95 over {args.queries} questions, max_tokens=200 ({machine()})\n"
    )
    print_table(["paragraphs", "facts", "noema hops=1", "noema hops=2", "chunks"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
