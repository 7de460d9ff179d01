"""Answer recall on time-sensitive questions (TimeQA): Noema beside chunks and BM25, same process.

    python benchmarks/timeqa.py [--questions 300] [--bundle timeqa.noema]
    python benchmarks/timeqa.py --check-times 100 --bundle timeqa.noema

TimeQA's human-annotated train split (``../shared/data/timeqa/human_annotated_train.json``) asks
about facts that change ("Which team did X play for from 2004 to 2005?", "Who owned the house
before 1811?") over the Wikipedia article of their subject. Every paragraph of all 320 articles
is pooled into one knowledge base, so a question's article stands among 319 others and, within
it, among the paragraphs of the other periods. The data's text is tokenized ("D . Baker ,
1916-1920 ."); the spaces it puts before punctuation and inside brackets are taken out before
ingesting, for every method alike. Questions whose answers are all empty (unanswerable in the
article) are left out; ``--questions N`` takes N of the rest, the same N on every run (a fixed
seed), in the data's order. A hit is a normalized answer span occurring in the normalized context,
at 50, 100 and 200 ``cl100k_base`` tokens; the subset column is the questions about one time ("in
2005", "before 1999", "after 2010") rather than a span ("from 2004 to 2005"). Passage recall
counts the paragraphs holding an answer span.

``--check-times N`` builds (or loads) the same pool and prints N facts that notation states,
sampled with a fixed seed among those whose source sentence holds a year, each as its sentence
and its notation, for a person to mark. The rule for marking one:

- **applicable** when the sentence ties a time to *this* fact: the year or date is on the fact's
  verb or its clause ("led X from 2010 to 2019", "in March 2004 she joined Y", "X, Y's chairman
  since 2015", "the former CEO"); not when the date belongs to something else in the sentence
  (a birth date beside an unrelated fact, a founding year in an apposition about the object),
  nor when the fact's other end is the date itself (``#1 -build_in-> #2`` with ``#2 1874 :DATE``
  says the time as what it claims, and claims nothing timeless);
- **with its time** when it is applicable and notation states it as an event line carrying
  ``@`` a time that covers the sentence's time for it (``@2010/2019`` for "from 2010 to 2019",
  ``@2015/..`` for "since 2015", ``@../2019`` for "until 2019"; a year where the sentence gives a
  month counts);
- **without its time** when it is applicable and notation states it as a relation line
  (``#1 -pred-> #2``), or as an event whose time is wrong or missing.

The figure is *with its time* / *applicable*; the facts not applicable are counted apart.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _recall  # noqa: E402
from _common import data_file, embedder_from  # noqa: E402
from _recall import Question  # noqa: E402

import noema  # noqa: E402

BUDGETS = (50, 100, 200)
SEED = 20261204
_SPACE_BEFORE = re.compile(r" ([.,;:!?%)\]}]|'s\b|n't\b)")
_SPACE_AFTER = re.compile(r"([(\[{]) ")
_SPAN = re.compile(r"\b(from|between)\b.+\b(to|and|until)\b")
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")


def detokenize(text: str) -> str:
    """The tokenized text with its spaces before punctuation and inside brackets taken out.

    Example:
        >>> detokenize("Newton D . Baker , Secretary of War ( 1916-1920 ) .")
        'Newton D. Baker, Secretary of War (1916-1920).'
    """
    return _SPACE_AFTER.sub(r"\1", _SPACE_BEFORE.sub(r"\1", text.strip()))


def load(n: int) -> tuple[list[Question], list[noema.Document]]:
    """``n`` answerable questions (every one when ``n`` is 0) and every article's paragraphs.

    A paragraph's id is its article's title and its position in the article's ``paras`` list
    (where 0 is the title), the position the answer spans name.
    """
    articles = json.loads(data_file("timeqa/human_annotated_train.json").read_text())
    docs: list[noema.Document] = []
    questions: list[Question] = []
    for article in articles:
        title = detokenize(article["paras"][0])
        ids = {}
        for at, paragraph in enumerate(article["paras"][1:], start=1):
            if paragraph.strip():
                ids[at] = f"{title} [{at}]"
                docs.append(
                    noema.Document(detokenize(paragraph), id=ids[at], metadata={"title": title})
                )
        for text, spans in article["questions"]:
            answers = tuple(dict.fromkeys(s["answer"] for s in spans if s["answer"].strip()))
            if answers:
                questions.append(
                    Question(
                        text=text,
                        answers=answers,
                        gold=frozenset(ids[s["para"]] for s in spans if s["para"] in ids),
                        in_subset=not _SPAN.search(text.lower()),
                    )
                )
    if 0 < n < len(questions):
        kept = sorted(random.Random(SEED).sample(range(len(questions)), n))
        questions = [questions[i] for i in kept]
    return questions, docs


def check_times(args: argparse.Namespace, count: int) -> int:
    """Print ``count`` stated facts whose source sentence holds a year, for the hand check."""
    from noema.model.spans import first_sentence, sentence_text
    from noema.retrieval.formats import NOTATION_MIN_CONFIDENCE, render_fact

    _, documents = load(0)
    embedder, _ = embedder_from(args)
    kb, _, _ = _recall.open_pool(args, documents, embedder)
    graph = kb.graph
    dated = []
    for fact in graph.iter_facts():
        if fact.confidence < NOTATION_MIN_CONFIDENCE and fact.id in graph.relations:
            continue  # notation does not state it
        sentence = first_sentence(graph, fact.id)
        if sentence is not None and _YEAR.search(text := sentence_text(graph, sentence)):
            dated.append((fact.id, text))
    picked = random.Random(SEED).sample(dated, min(count, len(dated)))
    print(
        f"{len(picked)} of {len(dated):,} stated facts whose source sentence holds a year "
        f"({len(graph.relations):,} relations, {len(graph.events):,} events in the pool); "
        "mark each applicable or not, and with or without its time (rule: benchmarks/timeqa.py)\n"
    )
    for n, (fact_id, text) in enumerate(sorted(picked), start=1):
        print(f"{n}. {text}")
        for line in render_fact(graph, fact_id, "notation").splitlines():
            print(f"   {line}")
        print("   applicable: [ ]  with its time: [ ]\n")
    return 0


if __name__ == "__main__":
    parser = _recall.parser_for(__doc__, default_questions=0)
    parser.add_argument(
        "--check-times",
        type=int,
        metavar="N",
        help="print N stated facts whose source sentence holds a year, for the hand check",
    )
    args = parser.parse_args()
    if args.check_times:
        sys.exit(check_times(args, args.check_times))
    title = "TimeQA human-annotated train, " + (
        f"{args.questions} sampled questions" if args.questions else "every answerable question"
    )
    sys.exit(_recall.main(args, load, title, subset="one time", budgets=BUDGETS))
