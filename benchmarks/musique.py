"""Answer recall per token on MuSiQue: Noema beside a chunk retriever and BM25, same process.

    python benchmarks/musique.py --questions 100 [--top-k 5 --hops 1]

MuSiQue-Ans questions take two to four hops, each through a different paragraph, so no single
paragraph holds both the question's entity and the answer. The 20 paragraphs of each of the
first N questions (``../shared/data/musique/musique_train_100.json``) are pooled into one
knowledge base; a paragraph that appears under several questions is ingested once. A hit is the
normalized answer, or one of its aliases, occurring in the normalized context; the subset column
is the questions of three or four hops. Otherwise the same measure as ``hotpotqa.py``.
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
    """The first ``n`` questions and their pooled paragraphs.

    Titles repeat across different paragraphs here, so a paragraph's id is its title followed
    by a counter when the title was already taken by another text.
    """
    rows = json.loads(data_file("musique/musique_train_100.json").read_text())[:n]
    ids: dict[tuple[str, str], str] = {}
    taken: dict[str, int] = {}
    docs: list[noema.Document] = []
    questions = []
    for row in rows:
        gold = set()
        for paragraph in row["paragraphs"]:
            title, text = paragraph["title"], paragraph["paragraph_text"].strip()
            key = (title, text)
            if key not in ids:
                taken[title] = taken.get(title, 0) + 1
                ids[key] = title if taken[title] == 1 else f"{title} [{taken[title]}]"
                docs.append(noema.Document(text, id=ids[key], metadata={"title": title}))
            if paragraph["is_supporting"]:
                gold.add(ids[key])
        questions.append(
            Question(
                text=row["question"],
                answers=(row["answer"], *row["answer_aliases"]),
                gold=frozenset(gold),
                in_subset=len(row["question_decomposition"]) >= 3,
            )
        )
    return questions, docs


if __name__ == "__main__":
    args = _recall.parser_for(__doc__, default_questions=100).parse_args()
    title = f"MuSiQue-Ans train, first {args.questions} questions"
    sys.exit(_recall.main(args, load, title, subset="3-4 hops"))
