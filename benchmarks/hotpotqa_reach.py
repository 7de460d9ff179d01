"""Where Noema's HotpotQA misses come from: coverage, reach through the graph, or the budget.

    python benchmarks/hotpotqa_reach.py --questions 100

Builds the same pooled knowledge base as ``hotpotqa.py`` and puts each question (yes/no answers
left out) in the first of these classes that holds:

1. hit: the gold answer is in the context at ``--max-tokens`` (default 200);
2. no entity: the answer is not inside the name of any entity in the graph, so no context
   of any size could hold it;
3. cut by the budget: the answer is in the context with hops=1 and no budget;
4. two hops: it is there with hops=2 and no budget;
5. farther: the entity exists but is not reached within two hops of the seeds.

The sum of classes 1 and 3 is the best any packing order could do at hops=1. Slow (about 12
minutes for 200 questions here): a retrieval without a budget encodes every fact it reaches.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, print_table  # noqa: E402
from hotpotqa import load  # noqa: E402

import noema  # noqa: E402
from noema.evaluate import answer_in_context, normalize_answer  # noqa: E402

UNLIMITED = 1_000_000
CLASSES = ("hit", "no entity", "cut by the budget", "two hops", "farther")


def classify(
    kb: noema.KnowledgeBase, names: list[str], question: str, answers: tuple[str, ...], budget: int
) -> str:
    if answer_in_context(answers, kb.retrieve(question, max_tokens=budget).text):
        return "hit"
    wanted = [w for w in map(normalize_answer, answers) if w]
    if not any(w in name for w in wanted for name in names):
        return "no entity"
    if answer_in_context(answers, kb.retrieve(question, max_tokens=UNLIMITED).text):
        return "cut by the budget"
    if answer_in_context(answers, kb.retrieve(question, max_tokens=UNLIMITED, hops=2).text):
        return "two hops"
    return "farther"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--max-tokens", type=int, default=200)
    args = parser.parse_args()
    questions, documents = load(args.questions)
    kb = noema.KnowledgeBase()
    kb.ingest(documents)
    names = [normalize_answer(e.name) for e in kb.graph.entities.values()]
    counts = Counter(classify(kb, names, q.text, q.answers, args.max_tokens) for q in questions)
    n = len(questions)
    print(
        f"HotpotQA dev: {args.questions} questions ({n} without yes/no answers), "
        f"{len(documents):,} paragraphs; Noema defaults, max_tokens={args.max_tokens}; {machine()}\n"
    )
    print_table(
        ["class", "questions", "share"],
        [[c, counts[c], f"{counts[c] / n:.1%}"] for c in CLASSES],
    )
    best = counts["hit"] + counts["cut by the budget"]
    print(f"\nbest possible at hops=1 with any packing order: {best} ({best / n:.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
