"""Add judged batches to the labelled facts, after checking each batch's blind controls.

    python training/merge_labels.py /tmp/judge/batch00 /tmp/judge/batch01 ...

A batch is ``<name>.key.jsonl`` (the drawn facts, written by ``draw.py``) and
``<name>.judged.jsonl`` (the judge's verdicts by fact id). A batch is taken only when every fact
has one verdict by the rule of ``benchmarks/fact_precision.py`` and its controls (facts labelled
before, mixed in blind) agree with their labels true-or-not at least 90% of the time; otherwise
it is reported and left out, to be judged again. A batch judged twice, by two judges who did not
see each other's verdicts, is taken when the two agree true-or-not on at least 95% of its new facts
and both part from the same controls (the earlier label is then the doubtful one); the second
judging's verdicts are kept, and the note says so. Facts already labelled are never added twice.
Every row gets its ``split`` (by document, see ``draw.split_of``) and its ``judge``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from draw import split_of  # noqa: E402
from fact_precision import LABELS, VERDICTS, key  # noqa: E402

ERRORS = {
    "wrong_type",
    "wrong_noun",
    "name_fragment",
    "predicate_drops_point",
    "topic_fallback",
    "number_no_role",
    "description_end",
    "scope_dropped",
    "swapped",
    "wrong_time",
    "other",
}
TYPES = {"PERSON", "ORG", "GPE", "LOC", "DATE", "EVENT", "PRODUCT", "MONEY", "OTHER"}
AGREEMENT = 0.9
BETWEEN_JUDGES = 0.95


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def checked(batch: Path, judge: str) -> tuple[list[dict[str, Any]], str]:
    keys = _rows(batch.with_name(batch.name + ".key.jsonl"))
    verdicts: dict[str, dict[str, Any]] = {}
    for v in _rows(batch.with_name(batch.name + ".judged.jsonl")):
        verdicts.setdefault(v["id"], v)
    missing = [k["id"] for k in keys if k["id"] not in verdicts]
    if missing:
        return [], f"{len(missing)} facts without a verdict ({missing[:3]}...)"
    rows, agree, controls = [], 0, 0
    for k in keys:
        v = verdicts[k["id"]]
        if v["label"] not in VERDICTS:
            return [], f"{k['id']}: label {v['label']!r}"
        if k.get("_control"):
            controls += 1
            agree += (v["label"] == "true") == (k["label"] == "true")
            continue
        row = {x: y for x, y in k.items() if x != "id"}
        row["label"] = v["label"]
        row["judge"] = judge
        if v["label"] != "true":
            row["error"] = v.get("error") if v.get("error") in ERRORS else "other"
        if v["label"] == "wrong_type":
            right = v.get("right_types")
            if not (
                isinstance(right, list)
                and len(right) == 2
                and all(isinstance(r, list) and set(r) <= TYPES for r in right)
            ):
                return [], f"{k['id']}: right_types {right!r}"
            row["right_types"] = [sorted(set(r) | {"OTHER"}) for r in right]
        rows.append(row)
    share = agree / controls if controls else 0.0
    note = f"{len(rows)} facts, controls {agree}/{controls} the same true-or-not"
    if share >= AGREEMENT:
        return rows, note
    first = batch.with_name(batch.name + ".judged.first.jsonl")
    if first.exists():
        earlier = {v["id"]: v["label"] == "true" for v in _rows(first)}
        both = [
            (earlier.get(k["id"]), verdicts[k["id"]]["label"] == "true")
            for k in keys
            if not k.get("_control")
        ]
        same = sum(a == b for a, b in both)
        parted = {
            k["id"]
            for k in keys
            if k.get("_control")
            and (verdicts[k["id"]]["label"] == "true") != (k["label"] == "true")
        }
        parted_first = {
            k["id"]
            for k in keys
            if k.get("_control") and earlier.get(k["id"]) != (k["label"] == "true")
        }
        note += f"; two judgings agree on {same}/{len(both)} new facts"
        if same / len(both) >= BETWEEN_JUDGES and parted <= parted_first:
            return rows, note + ", both part from the same controls: taken"
    return [], note + f": under {AGREEMENT:.0%}, judge again"


def _same(row: dict[str, Any]) -> tuple[str, ...]:
    """A fact by its sentence and surface forms: one paragraph may be pooled under two ids."""
    return key("", row["sentence"], row["subject"], row["predicate"], row["object"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("batches", nargs="+", type=Path, help="batch paths without suffix")
    parser.add_argument("--judge", default="helper", help="who judged, recorded with each row")
    args = parser.parse_args()
    existing = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    for row in existing:
        row.setdefault("split", split_of(row["corpus"], row["document"]))
        row.setdefault("judge", "earlier readers")
    seen = {_same(r) for r in existing}
    added = 0
    for batch in args.batches:
        rows, note = checked(batch, f"{args.judge}:{batch.name}")
        print(f"{batch.name}: {note}")
        for row in rows:
            k = _same(row)
            if k not in seen:
                seen.add(k)
                existing.append(row)
                added += 1
    with LABELS.open("w") as f:
        for row in existing:
            f.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"{added} facts added; {len(existing)} labelled")
    return 0


if __name__ == "__main__":
    sys.exit(main())
