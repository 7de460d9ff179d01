"""`make demo`: build a knowledge base from examples/docs and answer a two-hop question with it."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import noema

DOCS = Path(__file__).parent / "docs"
QUESTION = "Who founded the company that acquired Mellanox?"


def main() -> int:
    started = time.perf_counter()
    kb = noema.KnowledgeBase()
    report = kb.ingest(sorted(DOCS.glob("*.md")))
    print(
        f"Ingested {report.documents} documents in {time.perf_counter() - started:.1f}s: "
        f"{len(kb.graph.entities)} entities, {len(kb.graph.relations)} relations, "
        f"{len(report.merges)} merges (spaCy model {kb.spacy_model_name})"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = kb.save(Path(tmp) / "demo.noema")
        print(f"Saved {path.name} ({path.stat().st_size:,} bytes) and loaded it back")
        kb = noema.KnowledgeBase.load(path)
    for hops in (0, 2):
        result = kb.retrieve(QUESTION, top_k=3, hops=hops, max_tokens=200)
        print(f"\nQuestion: {QUESTION}  (top_k=3, hops={hops}, max_tokens=200)")
        print(result.text or "(nothing found)")
        print(f"-- {result.token_count} tokens, truncated={result.truncated}")
    print("\nThe same facts decoded (format='natural_language'):")
    print(kb.retrieve(QUESTION, top_k=3, hops=2, max_tokens=200, format="natural_language").text)
    print("\nThe sentences they came from (format='sentences', 100 tokens):")
    print(kb.retrieve(QUESTION, top_k=3, hops=2, max_tokens=100, format="sentences").text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
