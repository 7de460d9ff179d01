"""How many of the facts Noema shows are true: precision on a labelled sample, for any bundle.

    python benchmarks/fact_precision.py score --bundle /tmp/b/hotpot.noema --bundle /tmp/b/musique.noema
    python benchmarks/fact_precision.py sample --bundle /tmp/b/hotpot.noema --corpus hotpotqa -n 150

``sample`` draws facts at random (seeded) from a bundle, relations and two-participant events
(``--min-confidence 0.3``: only among those notation states), none labelled before, and writes
them as JSON lines with an empty ``label``, to be judged by hand against their sentence. ``score`` reads the judged sample
(``benchmarks/fact_labels.jsonl``), finds each labelled fact in the bundles given by its document,
sentence and the surface form of its subject, predicate and object (so the labels survive a
rebuild), and prints precision overall, by extraction pattern (the confidence names it, see
``noema.ingest.confidence.CONFIDENCE``), by type, and for the facts that notation and natural_language show at
a confidence floor.

The rule a label follows (written before labelling, applied to every fact alike):

- ``true``: the fact as notation states it (subject, predicate, object, and the type tags of
  both ends) is what its sentence says or directly implies, reading pronouns and "the band" as
  the document means them. The predicate may be terse ("found_in") but must not lose the point
  of the sentence, and must point the right way.
- ``wrong_end``: the sentence says something about other things: the subject or the object is
  the wrong entity (a topic fallback that does not hold, a description node, the wrong noun of a
  phrase), or subject and object are swapped.
- ``meaningless``: no reader would take the pair as a statement: pieces of one noun compound or
  particle ("Rankin/Bass Productions -stop-> motion"), a predicate that drops what the sentence
  is about ("-become_in-> 1991" for "became a citizen of Canada in 1991"), a time or number with
  no role.
- ``wrong_type``: the statement holds but a type tag misleads ("Kiss Land :PERSON" for an
  album). OTHER never misleads: it claims nothing. The judge also writes the types that would
  be right (``right_types``, subject then object), so a rebuild that fixes the type scores the
  fact true without judging it again.

A row with ``drawn_at`` names the commit whose pools it was drawn from. The 360 rows with
``drawn_from: "stated"`` were drawn only among the facts notation states at its default floor, 120
from the pools of ``5bddd69`` (60 from each; the HotpotQA pool was built before that commit's
review fixes), 120 from those of ``86d4a54`` and 120 from those of ``15bb45e`` (events
included, with ``sample --min-confidence 0.3``), each 120 judged by three other readers in one
pass with 12 labelled facts mixed blind into their batches (11, 12, then 12 the same
true-or-not; the last batch also rules an event with the wrong time ``wrong_end``): a
fresh estimate of what notation states, not of every fact, so with them the "every fact" figures
lean towards stated facts. The 150 rows with ``drawn_from: "fitted"`` (75 from each pool of
``500bddf`` rebuilt with each fact's confidence from the model ``fit_confidence.py`` fits, a
trial not kept) were drawn among the facts that model put at 0.4 or above
(``fitted_confidence``), judged the same way (12 of 12 controls the same true-or-not): the
held-out check of that model. The 360 rows drawn at ``e2cf8d8`` were judged by four other
readers with the same rule; 60 facts of the first sample, mixed blind into their batches, got the same verdict in 46 cases and the same true-or-not in 51
(85%). Those readers are stricter than the first: where they differ, they mostly call
"meaningless" a terse fact the first judge let stand ("Tom Nowatzke -induct_in-> 2008").

The 4,350 rows with a ``judge`` other than "earlier readers" were drawn by ``training/draw.py``
from the pools of ``training/pools.py`` at any confidence and judged by helpers in batches of 300
with 32 labelled facts mixed in blind (see ``training/README.md``); they also carry the error
kind (``error``), the ends' character spans in the sentence, the document's title and the
fact's time. Every row has its ``split``: ``test`` rows (one document title in four) are never
fitted on.

The 522 rows judged by "helper:stated-..." were drawn from the facts notation states at 200
tokens for the questions of the six hand-written corpora (``benchmarks/corpora``), on bundles
built at ``c209849`` and ``2ef11c3`` (``drawn_at``), each judged against its sentence and its
document by one of four helpers with 25 labelled corpora facts mixed blind into each batch: 84
of 100 got the same true-or-not, and in every disagreement the new judge was the stricter
("Samuel Torvane is director since 2021" meaningless, where an earlier reader let it stand).
The 46 rows judged by "helper:stated-new1" were drawn the same way at ``2d26099`` (every
stated fact not judged before: most are facts of a verb's object, "Gannet Sonar -sell_to->
Lindqvist Marine"), judged by a fifth helper with 25 controls mixed in blind: 23 of 25 the same
true-or-not, and both disagreements the new judge's leniency ("Dunmarrow Rovers reach final"
true, where an earlier reader had it meaningless).

Only ``true`` counts as true. A fact judged true whose ends a rebuild types otherwise (not
OTHER) is left out of the figures and counted, to be judged again.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import print_table  # noqa: E402

from noema.ingest.confidence import pattern_of  # noqa: E402
from noema.model.facttext import fact_block  # noqa: E402
from noema.model.graph import SemanticGraph  # noqa: E402
from noema.model.notation import decode  # noqa: E402
from noema.retrieval.options import NOTATION_MIN_CONFIDENCE  # noqa: E402
from noema.storage.bundle import read_bundle  # noqa: E402

LABELS = Path(__file__).with_name("fact_labels.jsonl")
VERDICTS = ("true", "wrong_end", "meaningless", "wrong_type")


@dataclass(frozen=True)
class Found:
    """A relation of a bundle, by the surface forms a label names it with."""

    subject_type: str
    object_type: str
    confidence: float


def key(document: str, sentence: str, subject: str, predicate: str, obj: str) -> tuple[str, ...]:
    return (document, sentence, subject, predicate, obj)


def facts_of(graph: SemanticGraph) -> Iterator[tuple[tuple[str, ...], Found, str]]:
    """Every relation and two-participant event of ``graph`` once per sentence it was read
    from, with its id. An event is named as a relation is (its label as the predicate, its
    participants as subject and object), so a label of a fact still matches once a time makes
    the fact an event."""
    facts: list[tuple[str, str, str, Any]] = [
        (rel.id, rel.subject_id, rel.predicate, rel) for rel in graph.relations.values()
    ]
    facts += [
        (event.id, event.participant_ids[0], event.label, event)
        for event in graph.events.values()
        if len(event.participant_ids) == 2
    ]
    for fact_id, subject_id, predicate, fact in facts:
        object_id = fact.object_id if fact_id in graph.relations else fact.participant_ids[1]
        subject, obj = graph.entities[subject_id], graph.entities[object_id]
        for mention in fact.mentions:
            document = graph.documents.get(mention.document_id)
            if document is None:
                continue
            sentence = document.text[mention.start : mention.end]
            yield (
                key(mention.document_id, sentence, subject.name, predicate, obj.name),
                Found(subject.type, obj.type, fact.confidence),
                fact_id,
            )


def sample(bundle: Path, corpus: str, n: int, seed: int, min_confidence: float) -> None:
    graph = read_bundle(bundle).graph
    labelled = {
        key(r["document"], r["sentence"], r["subject"], r["predicate"], r["object"])
        for r in read_labels(LABELS)
    }
    rows = sorted(
        (
            row
            for row in facts_of(graph)
            if row[1].confidence >= min_confidence and row[0] not in labelled
        ),
        key=lambda row: row[0],
    )
    for (document, sentence, subject, predicate, obj), found, rel_id in random.Random(seed).sample(
        rows, n
    ):
        print(
            json.dumps(
                {
                    "corpus": corpus,
                    "document": document,
                    "sentence": sentence,
                    "subject": subject,
                    "subject_type": found.subject_type,
                    "predicate": predicate,
                    "object": obj,
                    "object_type": found.object_type,
                    "pattern": pattern_of(found.confidence),
                    "confidence": found.confidence,
                    "notation": fact_block(graph, rel_id).strip(),
                    "decoded": decode(fact_block(graph, rel_id)).strip(),
                    "label": "",
                },
                ensure_ascii=False,
            )
        )


def read_labels(path: Path) -> list[dict[str, Any]]:
    labels = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for n, row in enumerate(labels, 1):
        if row["label"] not in VERDICTS:
            raise SystemExit(f"{path}:{n}: label {row['label']!r} is not one of {VERDICTS}")
    return labels


def verdict_now(row: dict[str, Any], found: Found) -> str | None:
    """The label for the fact as the bundle types it now: a ``wrong_type`` fact whose ends now
    have types the judge named right (``right_types``; OTHER claims nothing) is true; a true
    fact retyped to something else than OTHER is ``None`` (judge again)."""
    now = (found.subject_type, found.object_type)
    if row["label"] == "wrong_type":
        right = row["right_types"]
        return "true" if now[0] in right[0] and now[1] in right[1] else "wrong_type"
    if row["label"] == "true":
        judged = (row["subject_type"], row["object_type"])
        if any(n not in (j, "OTHER") for n, j in zip(now, judged, strict=True)):
            return None
    return str(row["label"])


def precision(labels: Iterable[str]) -> tuple[int, str]:
    values = list(labels)
    if not values:
        return 0, "-"
    return len(values), f"{100 * sum(v == 'true' for v in values) / len(values):.1f}%"


def score(bundles: list[Path], floors: list[float]) -> None:
    found: dict[tuple[str, ...], Found] = {}
    for bundle in bundles:
        for k, f, _ in facts_of(read_bundle(bundle).graph):
            found[k] = f
    labels = read_labels(LABELS)
    matched: list[tuple[dict[str, Any], Found]] = []
    gone = retyped = 0
    for row in labels:
        f = found.get(
            key(row["document"], row["sentence"], row["subject"], row["predicate"], row["object"])
        )
        if f is None:
            gone += 1
            continue
        verdict = verdict_now(row, f)
        if verdict is None:
            retyped += 1
            continue
        matched.append(({**row, "label": verdict}, f))
    verdicts = Counter(row["label"] for row in labels)
    print(
        f"{len(labels)} labelled facts ({', '.join(f'{v} {verdicts[v]}' for v in VERDICTS)}); "
        f"in these bundles: {len(matched)}, no longer extracted: {gone}, "
        f"retyped away from a type judged true: {retyped}\n"
    )
    n, p = precision(row["label"] for row, _ in matched)
    print(f"Precision of every extracted labelled fact: {p} of {n}\n")

    by_pattern: dict[str, list[str]] = defaultdict(list)
    confidence_of: dict[str, float] = {}
    for row, f in matched:
        pattern = pattern_of(f.confidence) or f"{f.confidence:.2f}"
        by_pattern[pattern].append(row["label"])
        confidence_of[pattern] = f.confidence
    print(
        "By extraction pattern (confidence: what the bundle records; smoothed: (true + 1) / "
        "(facts + 2), what the confidence is calibrated to):"
    )
    print_table(
        ["pattern", "confidence", "facts", "precision", "smoothed", *VERDICTS[1:]],
        [
            [
                pattern,
                f"{confidence_of[pattern]:.2f}",
                *precision(values),
                f"{(values.count('true') + 1) / (len(values) + 2):.2f}",
                *(Counter(values)[v] for v in VERDICTS[1:]),
            ]
            for pattern, values in sorted(by_pattern.items(), key=lambda kv: -confidence_of[kv[0]])
        ],
    )
    print()
    print("Calibration (facts by the confidence the bundle gives them):")
    bins: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for row, f in matched:
        low = min(int(f.confidence * 5), 4) / 5
        bins[f"{low:.1f}-{low + 0.2:.1f}"].append((f.confidence, row["label"]))
    print_table(
        ["confidence", "facts", "mean confidence", "true"],
        [
            [
                name,
                len(items),
                f"{sum(c for c, _ in items) / len(items):.2f}",
                f"{sum(v == 'true' for _, v in items) / len(items):.2f}",
            ]
            for name, items in sorted(bins.items())
        ],
    )
    print()
    by_type: dict[str, list[str]] = defaultdict(list)
    for row, f in matched:
        by_type[f.subject_type].append(row["label"])
    print("By subject type:")
    print_table(
        ["type", "facts", "precision"],
        [[t, *precision(v)] for t, v in sorted(by_type.items(), key=lambda kv: -len(kv[1]))],
    )
    print()
    print("Facts notation and natural_language show at a confidence floor (min_confidence):")
    true_total = sum(row["label"] == "true" for row, _ in matched)
    rows = []
    for floor in sorted({*floors, NOTATION_MIN_CONFIDENCE}):
        shown = [row["label"] for row, f in matched if f.confidence >= floor]
        kept = sum(v == "true" for v in shown)
        default = (
            " (notation's and natural_language's default)"
            if floor == NOTATION_MIN_CONFIDENCE
            else " (every fact)"
            if floor == 0
            else ""
        )
        rows.append(
            [
                f"{floor:.2f}{default}",
                *precision(shown),
                f"{100 * kept / max(true_total, 1):.1f}%",
            ]
        )
    print_table(["min_confidence", "facts shown", "precision", "true facts kept"], rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sample", help="draw unlabelled facts from a bundle")
    s.add_argument("--bundle", type=Path, required=True)
    s.add_argument("--corpus", required=True)
    s.add_argument("-n", type=int, default=150)
    s.add_argument("--seed", type=int, default=33)
    s.add_argument(
        "--min-confidence",
        type=float,
        default=0.0,
        help="draw only among facts at this confidence or above (notation's default: 0.3)",
    )
    c = sub.add_parser("score", help="precision of the labelled facts in these bundles")
    c.add_argument("--bundle", type=Path, action="append", required=True)
    c.add_argument("--floor", type=float, action="append", default=[0.0, 0.2, 0.3, 0.5, 0.6, 0.7])
    args = parser.parse_args()
    if args.command == "sample":
        sample(args.bundle, args.corpus, args.n, args.seed, args.min_confidence)
    else:
        score(args.bundle, args.floor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
