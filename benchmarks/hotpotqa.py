"""Answer recall per token on HotpotQA: Noema beside a chunk retriever and BM25, same process.

    python benchmarks/hotpotqa.py --questions 200 [--top-k 5 --hops 1 --n-process 1]
    python benchmarks/hotpotqa.py --questions 200 --precision float32

Follows ../shared/data/README.md: the paragraphs of N dev questions are pooled into one knowledge
base (titles de-duplicated); for each question a context is retrieved at 100, 200 and 400
cl100k_base tokens, and a hit is the normalized gold answer occurring in the normalized context.
Yes/no answers are left out. Passage recall@k ranks source paragraphs by the first retrieved fact
(or chunk) citing them and counts the gold supporting titles among the first k.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import (  # noqa: E402
    add_embedder_options,
    data_file,
    embedder_from,
    machine,
    peak_rss_mb,
    print_table,
    timer,
)

import noema  # noqa: E402
from noema.evaluate import ChunkRetriever, answer_in_context  # noqa: E402

BUDGETS = (100, 200, 400)


def load(n: int) -> tuple[list[dict], list[noema.Document]]:  # type: ignore[type-arg]
    rows = [
        json.loads(line)
        for line in data_file("hotpotqa/hotpotqa_dev_300.jsonl").read_text().splitlines()
    ][:n]
    docs: dict[str, noema.Document] = {}
    for row in rows:
        for title, sentences in zip(
            row["context"]["title"], row["context"]["sentences"], strict=True
        ):
            if title not in docs:
                docs[title] = noema.Document(
                    "".join(sentences).strip(), id=title, metadata={"title": title}
                )
    questions = [r for r in rows if r["answer"].strip().lower() not in ("yes", "no")]
    return questions, list(docs.values())


class BM25Chunks:
    """BM25 (bm25s) over the same title-prefixed paragraphs, packed the same way."""

    def __init__(self, documents: list[noema.Document], chunks: ChunkRetriever) -> None:
        import bm25s

        self.ids = [d.id for d in documents]
        self.chunks = chunks
        self.retriever = bm25s.BM25()
        self.retriever.index(
            bm25s.tokenize(
                [ChunkRetriever.text_of(d) for d in documents], stopwords="en", show_progress=False
            ),
            show_progress=False,
        )

    def retrieve(self, question: str, max_tokens: int) -> tuple[str, list[str]]:
        import bm25s

        results, _ = self.retriever.retrieve(
            bm25s.tokenize([question], stopwords="en", show_progress=False),
            k=min(20, len(self.ids)),
            show_progress=False,
        )
        ranked = [self.ids[i] for i in results[0]]
        return self.chunks.pack(ranked, max_tokens), ranked


def passage_recall(ranked: list[str], gold: set[str], k: int) -> float:
    return len(set(ranked[:k]) & gold) / len(gold)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--hops", type=int, default=1)
    parser.add_argument("--n-process", type=int, default=1, help="spaCy processes")
    add_embedder_options(parser)
    parser.add_argument("--skip-bm25", action="store_true")
    args = parser.parse_args()

    questions, documents = load(args.questions)
    embedder, precision = embedder_from(args)
    noema.SpacyExtractor().extract([noema.Document("Warm up.")])
    rss_start = peak_rss_mb()

    kb = noema.KnowledgeBase(embedder=embedder, n_process=args.n_process)
    with timer() as noema_build:
        kb.ingest(documents)
        with tempfile.TemporaryDirectory() as tmp:
            bundle = kb.save(Path(tmp) / "hotpot.noema")  # builds the fact index
            bundle_size = bundle.stat().st_size
    rss_noema = peak_rss_mb()
    with timer() as chunk_build:
        chunks = ChunkRetriever(embedder, documents)
    bm25 = None
    if not args.skip_bm25:
        with timer() as bm25_build:
            bm25 = BM25Chunks(documents, chunks)

    methods: dict[str, object] = {"noema": kb, "chunks": chunks}
    if bm25 is not None:
        methods["bm25"] = bm25
    hits = {(m, b): 0 for m in methods for b in BUDGETS}
    bridge_hits = {(m, b): 0 for m in methods for b in BUDGETS}
    tokens = {(m, b): [] for m in methods for b in BUDGETS}  # type: ignore[var-annotated]
    latency = {m: [] for m in methods}  # type: ignore[var-annotated]
    recall2 = {m: [] for m in methods}  # type: ignore[var-annotated]
    recall5 = {m: [] for m in methods}  # type: ignore[var-annotated]
    bridges = sum(q["type"] == "bridge" for q in questions)
    for q in questions:
        gold = set(q["supporting_facts"]["title"])
        for name, method in methods.items():
            for budget in BUDGETS:
                start = time.perf_counter()
                if name == "noema":
                    result = kb.retrieve(
                        q["question"], top_k=args.top_k, hops=args.hops, max_tokens=budget
                    )
                    context, used = result.text, result.token_count
                    ranked = list(
                        dict.fromkeys(
                            c.document_id for f in result.fact_ids for c in result.citations[f]
                        )
                    )
                else:
                    context, ranked = method.retrieve(q["question"], budget)  # type: ignore[attr-defined]
                    used = noema.count_tokens(context)
                elapsed = time.perf_counter() - start
                if budget == 200:
                    latency[name].append(elapsed)
                if budget == 400:
                    recall2[name].append(passage_recall(ranked, gold, 2))
                    recall5[name].append(passage_recall(ranked, gold, 5))
                tokens[(name, budget)].append(used)
                hit = answer_in_context([q["answer"]], context)
                hits[(name, budget)] += hit
                bridge_hits[(name, budget)] += hit and q["type"] == "bridge"

    n = len(questions)
    print(
        f"HotpotQA dev: {args.questions} questions ({n} without yes/no answers, {bridges} bridge), {len(documents):,} paragraphs pooled"
    )
    print(
        f"Noema top_k={args.top_k} hops={args.hops} n_process={args.n_process}; spaCy {kb.spacy_model_name}; embeddings {kb.embedding_model} ({precision}); {machine()}\n"
    )
    rows = []
    for name in methods:
        row: list[object] = [name]
        for budget in BUDGETS:
            row.append(
                f"{hits[(name, budget)] / n:.1%} / {bridge_hits[(name, budget)] / max(bridges, 1):.1%}"
            )
        row.append(" / ".join(f"{np.mean(tokens[(name, b)]):.0f}" for b in BUDGETS))
        row.append(f"{np.mean(recall2[name]):.1%} / {np.mean(recall5[name]):.1%}")
        ms = np.array(latency[name]) * 1000
        row.append(f"{np.percentile(ms, 50):.1f} / {np.percentile(ms, 95):.1f}")
        rows.append(row)
    print_table(
        [
            "method",
            "recall@100 all / bridge",
            "recall@200 all / bridge",
            "recall@400 all / bridge",
            "mean tokens 100/200/400",
            "passage R@2 / R@5",
            "query ms p50 / p95",
        ],
        rows,
    )
    g = kb.graph
    print()
    print_table(
        ["build", "seconds", "notes"],
        [
            [
                "noema (parse, canonicalize, embed facts, save)",
                f"{noema_build[0]:.1f}",
                f"{len(g.entities):,} entities, {len(g.relations):,} facts, bundle {bundle_size / 1e6:.1f} MB, peak RSS {rss_noema:,.0f} MB (from {rss_start:,.0f})",
            ],
            [
                "chunks (embed paragraphs)",
                f"{chunk_build[0]:.1f}",
                f"ratio noema/chunks = {noema_build[0] / chunk_build[0]:.2f}",
            ],
            *([["bm25 (bm25s index)", f"{bm25_build[0]:.1f}", ""]] if bm25 is not None else []),
        ],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
