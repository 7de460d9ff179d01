"""The verifier's training and test examples: labelled facts, corruptions and Re-DocRED pairs.

An :class:`Example` is what the verifier reads of a fact (R: the sentence, the document's title,
the two ends with their character spans in the sentence, where the sentence names them, the
predicate, the types and the time) and whether it is true as stated. Three sources:

- the labelled facts of ``benchmarks/fact_labels.jsonl`` (``true`` is 1, every other verdict 0),
  each in the split its document fell in (``draw.split_of``);
- corruptions of the true facts of the train split, all false: the ends swapped, an end replaced
  by another capitalized name of the sentence, a name cut to one of its words, a predicate cut to
  its first word or to a light verb;
- Re-DocRED dev (MIT licence), documents of the train split only: each gold triple whose ends
  are named in one sentence, true in its direction, false the other way round for the relations
  that are not symmetric, and pairs of one sentence the gold triples do not relate, false with
  a relation of another pair.
"""

from __future__ import annotations

import json
import random
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "benchmarks"))
from _common import data_file  # noqa: E402
from draw import split_of  # noqa: E402
from fact_precision import LABELS  # noqa: E402

SEED = 73
LIGHT_VERBS = ("be", "have", "make", "take", "get", "give", "do", "go")
_NAME = re.compile(r"\b[A-Z][\w'.&-]*(?: (?:of |the |de )?[A-Z][\w'.&-]*)*")
_REDOCRED_TYPES = {"PER": "PERSON", "ORG": "ORG", "LOC": "GPE", "TIME": "DATE", "NUM": "OTHER"}
_SYMMETRIC = {
    "P47",
    "P530",
    "P3373",
    "P26",
    "P1327",
}  # borders, relations, sibling, spouse, partner


@dataclass(frozen=True)
class Example:
    sentence: str
    title: str
    subject: str
    subject_type: str
    subject_span: tuple[int, int] | None
    predicate: str
    object: str
    object_type: str
    object_span: tuple[int, int] | None
    time: str | None
    label: int
    source: str  # label, corruption:<kind>, redocred
    split: str
    pattern: str = ""


def _span(row: dict[str, Any], end: str) -> tuple[int, int] | None:
    span = row.get(f"{end}_span")
    if span:
        return (span[0], span[1])
    at = row["sentence"].find(row[end])  # rows drawn before spans were recorded
    return (at, at + len(row[end])) if at >= 0 else None


def labelled() -> list[Example]:
    rows = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    return [
        Example(
            sentence=r["sentence"],
            title=r.get("title") or re.sub(r" \[\d+\]$", "", r["document"]),
            subject=r["subject"],
            subject_type=r["subject_type"],
            subject_span=_span(r, "subject"),
            predicate=r["predicate"],
            object=r["object"],
            object_type=r["object_type"],
            object_span=_span(r, "object"),
            time=r.get("time"),
            label=int(r["label"] == "true"),
            source="label",
            split=r.get("split") or split_of(r["corpus"], r["document"]),
            pattern=r.get("pattern") or "",
        )
        for r in rows
    ]


def corruptions(examples: list[Example]) -> list[Example]:
    """False facts made from the true ones, one or two of each kind a fact allows."""
    rng = random.Random(SEED)
    made = []
    for e in examples:
        if e.label != 1 or e.source != "label":
            continue
        bad = replace(e, label=0)
        made.append(
            replace(
                bad,
                subject=e.object,
                subject_type=e.object_type,
                subject_span=e.object_span,
                object=e.subject,
                object_type=e.subject_type,
                object_span=e.subject_span,
                source="corruption:swapped",
            )
        )
        taken = [s for s in (e.subject_span, e.object_span) if s]
        others = [
            m
            for m in _NAME.finditer(e.sentence)
            if not any(m.start() < b and a < m.end() for a, b in taken)
            and m.group() not in (e.subject, e.object)
            and m.start() > 0
        ]
        if others:
            m = rng.choice(others)
            end = rng.choice(("subject", "object"))
            made.append(
                replace(
                    bad,
                    **{end: m.group(), f"{end}_span": (m.start(), m.end())},  # type: ignore[arg-type]
                    source="corruption:other_name",
                )
            )
        for end in ("subject", "object"):
            words = getattr(e, end).split()
            span = getattr(e, f"{end}_span")
            if len(words) >= 2 and span:
                word = rng.choice((words[0], words[-1]))
                at = e.sentence.find(word, span[0])
                cut = (at, at + len(word)) if 0 <= at < span[1] else None
                made.append(
                    replace(
                        bad,
                        **{end: word, f"{end}_span": cut},  # type: ignore[arg-type]
                        source="corruption:cut_name",
                    )
                )
                break
        parts = e.predicate.split("_")
        light = parts[0] if len(parts) >= 2 and parts[0] not in ("be",) else rng.choice(LIGHT_VERBS)
        if light != e.predicate:
            made.append(replace(bad, predicate=light, source="corruption:light_verb"))
    return made


def redocred(limit: int = 4000) -> list[Example]:
    docs = json.loads(data_file("redocred/dev_revised.json").read_text())
    names = json.loads(data_file("redocred/rel_info.json").read_text())
    rng = random.Random(SEED)
    made = []
    for n, doc in enumerate(docs):
        if split_of("redocred", str(n)) == "train":
            made += _redocred_document(doc, names, rng)
    rng.shuffle(made)
    return made[:limit]


def _redocred_document(
    doc: dict[str, Any], names: dict[str, str], rng: random.Random
) -> list[Example]:
    sentences = [" ".join(tokens) for tokens in doc["sents"]]

    def mention(entity: int, sent: int) -> tuple[str, tuple[int, int]] | None:
        for m in doc["vertexSet"][entity]:
            if m["sent_id"] == sent:
                tokens = doc["sents"][sent]
                start = len(" ".join(tokens[: m["pos"][0]])) + (1 if m["pos"][0] else 0)
                text = " ".join(tokens[m["pos"][0] : m["pos"][1]])
                return text, (start, start + len(text))
        return None

    def example(h: int, t: int, rel: str, sent: int, label: int) -> Example | None:
        a, b = mention(h, sent), mention(t, sent)
        if a is None or b is None:
            return None
        return Example(
            sentence=sentences[sent],
            title=doc["title"],
            subject=a[0],
            subject_type=_REDOCRED_TYPES.get(doc["vertexSet"][h][0]["type"], "OTHER"),
            subject_span=a[1],
            predicate=re.sub(r"\W+", "_", names[rel].lower()).strip("_"),
            object=b[0],
            object_type=_REDOCRED_TYPES.get(doc["vertexSet"][t][0]["type"], "OTHER"),
            object_span=b[1],
            time=None,
            label=label,
            source="redocred",
            split="train",
        )

    made = []
    related = {(x["h"], x["t"]) for x in doc["labels"]}
    rels = [x["r"] for x in doc["labels"]]
    for x in doc["labels"]:
        for sent in x["evidence"][:1]:
            made.append(example(x["h"], x["t"], x["r"], sent, 1))
            if x["r"] not in _SYMMETRIC and (x["t"], x["h"]) not in related:
                made.append(example(x["t"], x["h"], x["r"], sent, 0))
    for sent in range(len(sentences)):
        present = [v for v in range(len(doc["vertexSet"])) if mention(v, sent)]
        pairs = [(h, t) for h in present for t in present if h != t and (h, t) not in related]
        if rels and pairs:
            h, t = rng.choice(pairs)
            made.append(example(h, t, rng.choice(rels), sent, 0))
    return [e for e in made if e is not None]


def all_examples(redocred_pairs: int = 4000) -> tuple[list[Example], list[Example]]:
    """The train examples (labels, corruptions, up to ``redocred_pairs`` Re-DocRED pairs) and
    the frozen test labels."""
    labels = labelled()
    train = [e for e in labels if e.split == "train"]
    test = [e for e in labels if e.split == "test"]
    return train + corruptions(train) + redocred(redocred_pairs), test


if __name__ == "__main__":
    from collections import Counter

    train, test = all_examples()
    print("train", len(train), Counter((e.source, e.label) for e in train))
    print("test", len(test), Counter(e.label for e in test))
