"""Ingest throughput on Wikipedia paragraphs, beside the floor of the same work.

    python benchmarks/ingest.py --sizes 1000 5000 10000
    python benchmarks/ingest.py --sizes 1000 --n-process 2 --precision float32

For each size: Noema's whole ingest (parse, canonicalize, embed the facts and their source
sentences, index both), spaCy's ``nlp.pipe`` alone over the same texts, and the embedding of the
same fact texts and of the same sentence texts alone, in the same process. The difference between
Noema and the sum of those floors is Noema's own work (rules, entity names embedded for
canonicalization, merging, indexing). The last column is what a chunk retriever spends on the
same paragraphs: embedding each one whole.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

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
from noema.evaluate import ChunkRetriever  # noqa: E402
from noema.resources import load_spacy_model  # noqa: E402
from noema.vectors.sentences import sentence_text_for_embedding, source_sentences  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 10000])
    parser.add_argument("--n-process", type=int, default=1, help="spaCy processes")
    add_embedder_options(parser)
    args = parser.parse_args()
    lines = data_file("wiki/wiki_paragraphs.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines[: max(args.sizes)]]
    embedder, precision = embedder_from(args)
    nlp = load_spacy_model().nlp
    rows = []
    for size in args.sizes:
        docs = [
            noema.Document(r["text"], id=f"{n}:{r['title']}", metadata={"title": r["title"]})
            for n, r in enumerate(records[:size])
        ]
        words = sum(len(d.text.split()) for d in docs)
        with timer() as spacy_time:
            for _ in nlp.pipe((d.text for d in docs), batch_size=64, n_process=args.n_process):
                pass
        kb = noema.KnowledgeBase(embedder=embedder, n_process=args.n_process)
        with timer() as noema_time:
            kb.ingest(docs)  # embeds and indexes the facts and sentences too
        facts = [*kb.graph.relations, *kb.graph.events]
        texts = [kb.fact_text(f) for f in facts]
        with timer() as embed_time:
            embedder.embed(texts)
        sentences = [sentence_text_for_embedding(kb.graph, s) for s in source_sentences(kb.graph)]
        with timer() as sentence_time:
            embedder.embed(sentences)
        with timer() as chunk_time:
            ChunkRetriever(embedder, docs)
        floor = spacy_time[0] + embed_time[0] + sentence_time[0]
        rows.append(
            [
                f"{size:,}",
                f"{words:,}",
                f"{noema_time[0]:.0f}s ({words / noema_time[0]:,.0f} w/s)",
                f"{spacy_time[0]:.0f}s",
                f"{embed_time[0]:.0f}s ({len(facts):,} facts)",
                f"{sentence_time[0]:.0f}s ({len(sentences):,} sentences)",
                f"{noema_time[0] - floor:+.0f}s ({(noema_time[0] - floor) / noema_time[0]:.0%})",
                f"{peak_rss_mb():,.0f} MB",
                f"{chunk_time[0]:.0f}s ({noema_time[0] / chunk_time[0]:.2f}x)",
            ]
        )
        print(f"done {size}", file=sys.stderr, flush=True)
    print(
        f"Ingest of Wikipedia paragraphs ({machine()}, n_process={args.n_process}, "
        f"embeddings {embedder.name}, precision {precision})\n"
    )
    print_table(
        [
            "paragraphs",
            "words",
            "noema ingest",
            "spaCy pipe alone",
            "embed facts alone",
            "embed sentences alone",
            "noema overhead",
            "peak RSS",
            "chunk index build",
        ],
        rows,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
