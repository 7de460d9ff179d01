"""The document pools the verifier's labels are drawn from, built into bundles.

    python training/pools.py --out /tmp/pools            # every pool
    python training/pools.py --out /tmp/pools hotpotqa   # one

Each pool is a seeded selection of documents from one source, chosen to leave out the
documents the shared benchmarks tune on where a source allows it (HotpotQA: the paragraphs of
dev questions 201-300 only; the first 200 are the benchmark's pool), built with Noema's defaults
and saved as ``<out>/<pool>.noema``. The data sets are read from ``NOEMA_DATA`` (default
``../shared/data``); nothing of them is written into the repository but the labelled facts.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import data_file  # noqa: E402

import noema  # noqa: E402

SEED = 73
PER_POOL = 600


def _seeded(docs: list[noema.Document], n: int = PER_POOL) -> list[noema.Document]:
    if len(docs) <= n:
        return docs
    kept = sorted(random.Random(SEED).sample(range(len(docs)), n))
    return [docs[i] for i in kept]


def hotpotqa() -> list[noema.Document]:
    rows = [json.loads(line) for line in data_file("hotpotqa/hotpotqa_dev_300.jsonl").open()]
    tuned = {t for row in rows[:200] for t in row["context"]["title"]}
    docs: dict[str, noema.Document] = {}
    for row in rows[200:]:
        for title, sentences in zip(
            row["context"]["title"], row["context"]["sentences"], strict=True
        ):
            if title not in docs and title not in tuned:
                docs[title] = noema.Document(
                    "".join(sentences).strip(), id=title, metadata={"title": title}
                )
    return list(docs.values())


def musique() -> list[noema.Document]:
    rows = json.loads(data_file("musique/musique_train_100.json").read_text())
    docs: dict[str, noema.Document] = {}
    for row in rows:
        for paragraph in row["paragraphs"]:
            title, text = paragraph["title"], paragraph["paragraph_text"].strip()
            if title not in docs:
                docs[title] = noema.Document(text, id=title, metadata={"title": title})
    return _seeded(list(docs.values()))


def timeqa() -> list[noema.Document]:
    import timeqa as bench

    _, docs = bench.load(1)
    return _seeded(docs)


def redocred() -> list[noema.Document]:
    import redocred as bench

    docs = json.loads(data_file("redocred/dev_revised.json").read_text())
    return _seeded(bench.build_documents(docs), 300)


def wiki() -> list[noema.Document]:
    """Paragraphs of the pool none of the question sets draws on (2WikiMultihopQA's)."""
    docs: dict[str, noema.Document] = {}
    for line in data_file("wiki/wiki_paragraphs.jsonl").open():
        row = json.loads(line)
        if "2wiki" in row.get("source", "").lower() and row["title"] not in docs:
            docs[row["title"]] = noema.Document(
                row["text"].strip(), id=row["title"], metadata={"title": row["title"]}
            )
    return _seeded(list(docs.values()))


def corpora() -> list[noema.Document]:
    docs = []
    for folder in sorted((ROOT / "benchmarks" / "corpora").glob("*/docs")):
        for path in sorted(folder.glob("*.md")):
            docs.append(noema.Document(path.read_text(), id=f"{folder.parent.name}/{path.stem}"))
    return docs


POOLS: dict[str, Callable[[], list[noema.Document]]] = {
    "hotpotqa": hotpotqa,
    "musique": musique,
    "timeqa": timeqa,
    "redocred": redocred,
    "wiki": wiki,
    "corpora": corpora,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("pools", nargs="*", choices=[*POOLS, []], default=list(POOLS))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.pools:
        target = args.out / f"{name}.noema"
        if target.exists():
            print(f"{name}: {target} exists, kept")
            continue
        docs = POOLS[name]()
        kb = noema.KnowledgeBase()
        kb.ingest(docs)
        kb.save(target)
        print(f"{name}: {len(docs)} documents, {len(kb.graph.relations)} relations -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
