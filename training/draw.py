"""Draw unlabelled facts from the pools and write them as batches for judges, with controls.

    python training/draw.py --pools /tmp/pools --out /tmp/judge --per-pool hotpotqa=800 ...

Every fact of a pool bundle (relations and two-participant events, once per sentence, at any
confidence) not labelled before is a candidate; ``n`` are drawn per pool with a seeded random
generator. Each drawn fact gets its split by its document (``split_of``), fixed before any model
is fitted: a document's facts are all in ``test`` or all in ``train``.

A batch is a text file a judge reads (each document's text once, then its facts) and a key file
(``.key.jsonl``) holding the drawn rows. About one fact in ten of every batch is a control: a
fact labelled before, mixed in blind, whose verdict the merge compares with the judge's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import data_file  # noqa: E402
from fact_precision import LABELS, facts_of, key, read_labels  # noqa: E402

from noema.ingest.confidence import pattern_of  # noqa: E402
from noema.model.facttext import fact_block  # noqa: E402
from noema.model.notation import decode  # noqa: E402
from noema.storage.bundle import read_bundle  # noqa: E402

SEED = 73
BATCH = 300
CONTROLS = 32


def split_of(corpus: str, document: str) -> str:
    """``test`` for about one document in four, else ``train``: by a hash of the document's title
    (its id without a paragraph counter such as `` [3]``), so the paragraphs of one article, and
    one paragraph pooled under two ids, fall on one side whatever pool drew them. ``corpus`` is
    not hashed: HotpotQA, MuSiQue and the Wikipedia pool share articles."""
    title = re.sub(r" \[\d+\]$", "", document)
    digest = hashlib.sha256(title.encode()).hexdigest()
    return "test" if int(digest, 16) % 4 == 0 else "train"


def spans_in(graph: Any, entity_id: str, document_id: str, start: int, end: int) -> list[int]:
    """The first mention of the entity inside ``[start, end)``, relative to ``start``."""
    for m in graph.entities[entity_id].mentions:
        if m.document_id == document_id and start <= m.start and m.end <= end:
            return [m.start - start, m.end - start]
    return []


def draw(pool: Path, corpus: str, n: int, labelled: set[tuple[str, ...]]) -> list[dict[str, Any]]:
    graph = read_bundle(pool).graph
    candidates = []
    for k, found, fact_id in facts_of(graph):
        if ("", *k[1:]) not in labelled:
            candidates.append((k, found, fact_id))
    candidates.sort(key=lambda c: c[0])
    rng = random.Random(f"{SEED}:{corpus}")
    rows = []
    for (document, sentence, subject, predicate, obj), found, fact_id in rng.sample(
        candidates, min(n, len(candidates))
    ):
        fact = graph.relations.get(fact_id) or graph.events[fact_id]
        if fact_id in graph.relations:
            ends = (fact.subject_id, fact.object_id)
            time = None
        else:
            ends = (fact.participant_ids[0], fact.participant_ids[1])
            time = fact.time
        text = graph.documents[document].text
        start = text.index(sentence)
        end = start + len(sentence)
        block = fact_block(graph, fact_id)
        rows.append(
            {
                "corpus": corpus,
                "document": document,
                "title": (graph.documents[document].metadata or {}).get("title", ""),
                "sentence": sentence,
                "subject": subject,
                "subject_type": found.subject_type,
                "subject_span": spans_in(graph, ends[0], document, start, end),
                "predicate": predicate,
                "object": obj,
                "object_type": found.object_type,
                "object_span": spans_in(graph, ends[1], document, start, end),
                "time": time,
                "pattern": pattern_of(found.confidence),
                "confidence": found.confidence,
                "notation": block.strip(),
                "decoded": decode(block).strip(),
                "split": split_of(corpus, document),
                "_text": text,
            }
        )
    return rows


def paragraph_texts() -> list[str]:
    """Every paragraph of the data sets the earlier labels came from, to show controls whole."""
    texts = []
    for line in data_file("hotpotqa/hotpotqa_dev_300.jsonl").open():
        for sentences in json.loads(line)["context"]["sentences"]:
            texts.append("".join(sentences).strip())
    for row in json.loads(data_file("musique/musique_train_100.json").read_text()):
        texts += [p["paragraph_text"].strip() for p in row["paragraphs"]]
    return texts


def write_batches(
    rows: list[dict[str, Any]], controls: list[dict[str, Any]], out: Path, first: int = 0
) -> None:
    rng = random.Random(SEED)
    rng.shuffle(rows)
    texts = paragraph_texts()
    usable = []
    for c in controls:
        text = next((t for t in texts if c["sentence"] in t), None)
        if text is not None:
            usable.append({**c, "_text": text, "_control": True})
    rng.shuffle(usable)
    out.mkdir(parents=True, exist_ok=True)
    for b, at in enumerate(range(0, len(rows), BATCH), start=first):
        batch = rows[at : at + BATCH] + usable[b * CONTROLS : (b + 1) * CONTROLS]
        rng.shuffle(batch)
        by_doc: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for row in batch:
            by_doc[(row["corpus"], row["document"])].append(row)
        lines, keys, n = [], [], 0
        for d, ((_, document), facts) in enumerate(by_doc.items(), 1):
            lines.append(f"=== D{d} document {document!r}")
            lines.append(facts[0]["_text"])
            lines.append("")
            for row in facts:
                n += 1
                fid = f"B{b:02d}F{n:03d}"
                lines.append(f"{fid} | sentence: {row['sentence']}")
                lines.append(f"{fid} | fact: {row['notation'].replace(chr(10), ' ; ')}")
                lines.append(f"{fid} | reads: {row['decoded']}")
                keys.append({"id": fid, **{k: v for k, v in row.items() if k != "_text"}})
            lines.append("")
        (out / f"batch{b:02d}.txt").write_text("\n".join(lines))
        with (out / f"batch{b:02d}.key.jsonl").open("w") as f:
            for k in keys:
                f.write(json.dumps(k, ensure_ascii=False) + "\n")
        print(
            f"batch{b:02d}: {len(keys)} facts ({sum(k.get('_control', False) for k in keys)} controls)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pools", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--per-pool", nargs="+", required=True, help="pool=n")
    parser.add_argument("--first-batch", type=int, default=0, help="the number of the first batch")
    args = parser.parse_args()
    labels = read_labels(LABELS)
    # by sentence and surface forms: one paragraph may be pooled under two ids
    labelled = {key("", r["sentence"], r["subject"], r["predicate"], r["object"]) for r in labels}
    rows = []
    for spec in args.per_pool:
        corpus, n = spec.split("=")
        drawn = draw(args.pools / f"{corpus}.noema", corpus, int(n), labelled)
        print(f"{corpus}: {len(drawn)} drawn")
        rows += drawn
    write_batches(rows, labels, args.out, args.first_batch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
