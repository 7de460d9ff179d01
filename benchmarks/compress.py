"""The compressor and node postprocessor on HotpotQA: tokens before and after, and whether the
gold answer survives.

    python benchmarks/compress.py --questions 100 --max-tokens 200

For each question the "retrieved chunks" are its 10 paragraphs (2 gold + 8 distractors), or with
``--chunks 5`` the 5 the chunk retriever ranks first among them. Each is compressed by
``noema.compress`` (what NoemaContextCompressor and NoemaNodePostprocessor run) into notation
within ``--max-tokens``. Yes/no answers are left out. Each set of chunks is compressed twice: the
second call (a follow-up question over the same retrieval) finds the chunks' knowledge base in
``compression_base``'s cache and only embeds the question.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import data_file, machine, print_table  # noqa: E402

import noema  # noqa: E402
from noema.evaluate import ChunkRetriever, answer_in_context  # noqa: E402
from noema.retrieval.options import FORMATS  # noqa: E402


def main() -> int:
    import json

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--max-tokens", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--format", default="notation", choices=FORMATS)
    args = parser.parse_args()
    rows = [
        json.loads(line)
        for line in data_file("hotpotqa/hotpotqa_dev_300.jsonl").read_text().splitlines()
    ]
    rows = [r for r in rows[: args.questions] if r["answer"].strip().lower() not in ("yes", "no")]
    embedder = noema.SentenceTransformerEmbedder()  # ranks chunks; compress uses its own (cached)
    before, after, hit_before, hit_after, seconds, again = [], [], 0, 0, [], []
    for row in rows:
        docs = [
            noema.Document("".join(s).strip(), id=t, metadata={"title": t})
            for t, s in zip(row["context"]["title"], row["context"]["sentences"], strict=True)
        ]
        if args.chunks < len(docs):
            _, ranked = ChunkRetriever(embedder, docs).retrieve(row["question"], 10_000)
            keep = set(ranked[: args.chunks])
            docs = [d for d in docs if d.id in keep]
        original = "\n\n".join(ChunkRetriever.text_of(d) for d in docs)
        for times in (seconds, again):
            start = time.perf_counter()
            result = noema.compress(
                docs, row["question"], max_tokens=args.max_tokens, format=args.format
            )
            times.append(time.perf_counter() - start)
        before.append(noema.count_tokens(original))
        after.append(result.token_count)
        hit_before += answer_in_context([row["answer"]], original)
        hit_after += answer_in_context([row["answer"]], result.text)
    n = len(rows)
    print(
        f"HotpotQA dev, {n} questions, {args.chunks} chunks each, max_tokens={args.max_tokens}, format={args.format} ({machine()})\n"
    )
    print_table(
        ["", "mean tokens", "answer in context", "s per call p50 (same chunks again)"],
        [
            ["chunks as retrieved", f"{np.mean(before):.0f}", f"{hit_before / n:.1%}", ""],
            [
                "after noema.compress",
                f"{np.mean(after):.0f}",
                f"{hit_after / n:.1%}",
                f"{np.median(seconds):.2f} ({np.median(again):.3f})",
            ],
        ],
    )
    print(f"\ntokens kept: {np.sum(after) / np.sum(before):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
