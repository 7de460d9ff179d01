"""The answer-recall comparison shared by the QA benchmarks: Noema, chunks and BM25 on one pool.

A dataset script loads its questions and paragraphs into :class:`Question` and
:class:`noema.Document` records and calls :func:`main`; this module builds the three retrievers in
the same process, runs every question at three budgets of cl100k_base tokens (100, 200 and 400
unless the script asks for others), and prints the tables (answer-in-context recall, passage
recall at the largest budget, tokens, latency at the middle one, build time and memory).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _common import add_embedder_options, embedder_from, machine, peak_rss_mb, print_table, timer

import noema
from noema.evaluate import ChunkRetriever, answer_in_context, stated_text
from noema.retrieval.options import FORMATS, SEED_STRATEGIES

BUDGETS = (100, 200, 400)
# Questions are split in two halves by this seed: levers are tuned on "tune" and reported on
# "report" (--half), so a figure quoted was not fitted to the questions it is measured on.
HALF_SEED = 20261207
# what one method answers: the context, its tokens, source ids in rank order, facts in it, and
# what it states as fact (None: a method that states none, see noema.evaluate.stated_text)
Answer = tuple[str, int, list[str], int, str | None]


@dataclass(frozen=True)
class Question:
    """One question: its text, every accepted answer, the ids of its gold paragraphs, and whether
    it belongs to the subset the table reports apart (bridge questions, or three hops or more)."""

    text: str
    answers: tuple[str, ...]
    gold: frozenset[str]
    in_subset: bool


class BM25Chunks:
    """BM25 (bm25s) over the same title-prefixed paragraphs, packed the same way."""

    def __init__(self, documents: Sequence[noema.Document], chunks: ChunkRetriever) -> None:
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


def half_of(questions: Sequence[Question], half: str) -> list[Question]:
    """``all``, or the seeded ``tune`` or ``report`` half of the questions."""
    if half == "all":
        return list(questions)
    order = list(range(len(questions)))
    random.Random(HALF_SEED).shuffle(order)
    chosen = set(order[: len(order) // 2] if half == "tune" else order[len(order) // 2 :])
    return [q for i, q in enumerate(questions) if i in chosen]


def _share(count: int | None, n: int) -> str:
    return "-" if count is None else f"{count / n:.1%}"


def passage_recall(ranked: list[str], gold: frozenset[str], k: int) -> float:
    return len(set(ranked[:k]) & gold) / len(gold) if gold else 0.0


def parser_for(doc: str | None, default_questions: int) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=default_questions)
    parser.add_argument(
        "--half",
        default="all",
        choices=("all", "tune", "report"),
        help="the seeded half of the questions to ask (the pool holds every question's paragraphs)",
    )
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--hops", type=int, default=1)
    parser.add_argument("--n-process", type=int, default=1, help="spaCy processes")
    add_embedder_options(parser)
    parser.add_argument("--skip-bm25", action="store_true")
    parser.add_argument(
        "--formats", nargs="+", default=list(FORMATS), choices=FORMATS, help="Noema formats"
    )
    parser.add_argument("--seeds", default="graph", choices=SEED_STRATEGIES)
    parser.add_argument(
        "--bundle",
        type=Path,
        help="load the knowledge base from this bundle when it exists, else build and save it there",
    )
    parser.add_argument(
        "--skip-vector", action="store_true", help="leave out the vector-seeds (spec) row"
    )
    parser.add_argument(
        "--min-confidence",
        type=float,
        help="retrieve()'s min_confidence (default: each format's own floor)",
    )
    return parser


def open_pool(
    args: argparse.Namespace, documents: Sequence[noema.Document], embedder: noema.Embedder
) -> tuple[noema.KnowledgeBase, bool, int]:
    """The knowledge base of the pool: loaded from ``--bundle`` when that file exists, else built
    (and saved there when given). Also whether it was loaded, and the bundle's size in bytes."""
    kb = noema.KnowledgeBase(embedder=embedder, n_process=args.n_process)
    cached = args.bundle is not None and args.bundle.is_file()
    if cached:  # a bundle of an earlier run: retrieval figures only, no build time
        kb = noema.KnowledgeBase.load(args.bundle, embedder=embedder)
        return kb, cached, args.bundle.stat().st_size  # not written again: it holds every index
    kb.ingest(documents)
    with tempfile.TemporaryDirectory() as tmp:
        # saving builds the fact index and the sentence sidecar
        bundle = kb.save(args.bundle or Path(tmp) / "pool.noema")
        return kb, cached, bundle.stat().st_size


def main(
    args: argparse.Namespace,
    load: Callable[[int], tuple[list[Question], list[noema.Document]]],
    title: str,
    subset: str,
    budgets: Sequence[int] = BUDGETS,
) -> int:
    """Build the three retrievers on the loaded pool, ask every question at each of the three
    ``budgets``, print the tables."""
    middle, largest = budgets[len(budgets) // 2], budgets[-1]
    questions, documents = load(args.questions)
    questions = half_of(questions, args.half)
    embedder, precision = embedder_from(args)
    noema.SpacyExtractor().extract([noema.Document("Warm up.")])
    rss_start = peak_rss_mb()

    with timer() as noema_build:
        kb, cached, bundle_size = open_pool(args, documents, embedder)
    rss_noema = peak_rss_mb()
    with timer() as chunk_build:
        chunks = ChunkRetriever(embedder, documents)
    bm25 = None
    if not args.skip_bm25:
        with timer() as bm25_build:
            bm25 = BM25Chunks(documents, chunks)

    def noema_method(format: str, seeds: str) -> Callable[[str, int], Answer]:
        def run(question: str, budget: int) -> Answer:
            result = kb.retrieve(
                question,
                top_k=args.top_k,
                hops=args.hops,
                max_tokens=budget,
                format=format,  # type: ignore[arg-type]
                seeds=seeds,  # type: ignore[arg-type]
                min_confidence=args.min_confidence,
            )
            ranked = list(
                dict.fromkeys(c.document_id for f in result.fact_ids for c in result.citations[f])
            )
            stated = stated_text(kb, result)
            return result.text, result.token_count, ranked, len(result.fact_ids), stated

        return run

    def baseline(method: ChunkRetriever | BM25Chunks) -> Callable[[str, int], Answer]:
        def run(question: str, budget: int) -> Answer:
            context, ranked = method.retrieve(question, budget)
            return context, noema.count_tokens(context), ranked, 0, None

        return run

    methods: dict[str, Callable[[str, int], Answer]] = {
        f"noema {f}": noema_method(f, args.seeds) for f in args.formats
    }
    if args.seeds == "graph" and not args.skip_vector:
        methods["noema notation, vector seeds (spec)"] = noema_method("notation", "vector")
    methods["chunks"] = baseline(chunks)
    if bm25 is not None:
        methods["bm25"] = baseline(bm25)
    hits = {(m, b): 0 for m in methods for b in budgets}
    stated_hits: dict[tuple[str, int], int | None] = {
        (m, b): None for m in methods for b in budgets
    }
    subset_hits = {(m, b): 0 for m in methods for b in budgets}
    tokens = {(m, b): [] for m in methods for b in budgets}  # type: ignore[var-annotated]
    facts = {m: [] for m in methods}  # type: ignore[var-annotated]
    latency = {m: [] for m in methods}  # type: ignore[var-annotated]
    recall2 = {m: [] for m in methods}  # type: ignore[var-annotated]
    recall5 = {m: [] for m in methods}  # type: ignore[var-annotated]
    in_subset = sum(q.in_subset for q in questions)
    for q in questions:
        for name, method in methods.items():
            for budget in budgets:
                start = time.perf_counter()
                context, used, ranked, fact_count, stated = method(q.text, budget)
                if stated is not None:
                    found = answer_in_context(q.answers, stated)
                    stated_hits[(name, budget)] = (stated_hits[(name, budget)] or 0) + found
                elapsed = time.perf_counter() - start
                if budget == middle:
                    latency[name].append(elapsed)
                    if fact_count:
                        facts[name].append(used / fact_count)
                if budget == largest:
                    recall2[name].append(passage_recall(ranked, q.gold, 2))
                    recall5[name].append(passage_recall(ranked, q.gold, 5))
                tokens[(name, budget)].append(used)
                hit = answer_in_context(q.answers, context)
                hits[(name, budget)] += hit
                subset_hits[(name, budget)] += hit and q.in_subset

    n = len(questions)
    print(
        f"{title}: {n} questions ({in_subset} {subset}; half: {args.half}), "
        f"{len(documents):,} paragraphs pooled"
    )
    print(
        f"Noema top_k={args.top_k} hops={args.hops} seeds={args.seeds} n_process={args.n_process}; spaCy {kb.spacy_model_name}; embeddings {kb.embedding_model} ({precision}); {machine()}\n"
    )
    rows = []
    for name in methods:
        row: list[object] = [name]
        for budget in budgets:
            row.append(
                f"{hits[(name, budget)] / n:.1%} / {subset_hits[(name, budget)] / max(in_subset, 1):.1%}"
            )
        row.append(" / ".join(_share(stated_hits[(name, b)], n) for b in budgets))
        row.append(" / ".join(f"{np.mean(tokens[(name, b)]):.0f}" for b in budgets))
        row.append(f"{np.mean(recall2[name]):.1%} / {np.mean(recall5[name]):.1%}")
        ms = np.array(latency[name]) * 1000
        row.append(f"{np.percentile(ms, 50):.1f} / {np.percentile(ms, 95):.1f}")
        row.append(f"{np.mean(facts[name]):.1f}" if facts[name] else "")
        rows.append(row)
    print_table(
        [
            "method",
            *(f"recall@{b} all / {subset}" for b in budgets),
            "in a stated fact " + "/".join(map(str, budgets)),
            "mean tokens " + "/".join(map(str, budgets)),
            "passage R@2 / R@5",
            "query ms p50 / p95",
            f"tokens per fact @{middle}",
        ],
        rows,
    )
    g = kb.graph
    print()
    print_table(
        ["build", "seconds", "notes"],
        [
            [
                "noema (parse, canonicalize, embed facts and sentences, save)"
                + (" [loaded from --bundle]" if cached else ""),
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
