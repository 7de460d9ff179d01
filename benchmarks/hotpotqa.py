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

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _recall  # noqa: E402
from _common import data_file  # noqa: E402
from _recall import Question  # noqa: E402

import noema  # noqa: E402


def load(n: int) -> tuple[list[Question], list[noema.Document]]:
    """The first ``n`` dev questions without yes/no answers, and their pooled paragraphs."""
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
    questions = [
        Question(
            text=r["question"],
            answers=(r["answer"],),
            gold=frozenset(r["supporting_facts"]["title"]),
            in_subset=r["type"] == "bridge",
        )
        for r in rows
        if r["answer"].strip().lower() not in ("yes", "no")
    ]
    return questions, list(docs.values())


if __name__ == "__main__":
    args = _recall.parser_for(__doc__, default_questions=200).parse_args()
    title = f"HotpotQA dev, first {args.questions} questions, yes/no answers left out"
    sys.exit(_recall.main(args, load, title, subset="bridge"))
