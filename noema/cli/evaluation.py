"""``noema eval``: tokens per query and answer recall, beside a chunk retriever."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from noema.cli.common import (
    Command,
    CommandError,
    add_models,
    add_paths,
    add_retrieve_arguments,
    add_root,
    warn,
)
from noema.cli.progress import Progress, ingest_with_progress
from noema.errors import OptionError
from noema.evaluate import EvalQuestion, EvalRow, evaluate
from noema.ingest.sources import read_documents
from noema.kb import KnowledgeBase
from noema.model.records import Document
from noema.retrieval.times import as_of_period

__all__ = ["EVAL"]


def add_eval_arguments(p: argparse.ArgumentParser) -> None:
    add_paths(p, "documents, as for noema build, or one built .noema bundle")
    add_root(p)
    p.add_argument(
        "--questions",
        required=True,
        help='JSONL: {"question": ..., "answer": ...} per line (answer optional; "as_of": '
        "the day to ask it as of, passed to retrieval)",
    )
    p.add_argument(
        "--no-as-of",
        action="store_true",
        help="ask every question without the as_of its line gives (to measure what as_of does)",
    )
    p.add_argument("--budgets", type=int, nargs="+", default=[100, 200, 400])
    # the retrieve options' own flags: the format the README recommends can be measured too
    add_retrieve_arguments(p, ("top_k", "hops", "format"))
    add_models(p)
    p.add_argument("--json", action="store_true")


def cmd_eval(args: argparse.Namespace) -> int:
    questions = list(_read_questions(Path(args.questions)))
    if not questions:
        raise CommandError(f"{args.questions}: no questions")
    if args.no_as_of:
        questions = [replace(q, as_of=None) for q in questions]
    kb, documents = _knowledge_base(args)
    rows = evaluate(
        kb,
        documents,
        questions,
        budgets=args.budgets,
        top_k=args.top_k,
        hops=args.hops,
        format=args.format,
        progress=Progress("retrieving", "questions"),
    )
    if args.json:
        print(json.dumps([row.__dict__ for row in rows], indent=2))
        return 0
    _print_table(args, documents, questions, rows)
    return 0


def _knowledge_base(args: argparse.Namespace) -> tuple[KnowledgeBase, list[Document]]:
    """The knowledge base to evaluate and the documents the chunk retriever reads."""
    if len(args.paths) == 1 and _is_bundle(Path(args.paths[0])):
        # a built knowledge base: its documents (stored in graph.json) feed the chunk retriever
        kb = KnowledgeBase.load(args.paths[0])
        return kb, list(kb.graph.documents.values())
    documents = list(read_documents(args.paths, on_skip=warn, root=args.root))
    if not documents:
        raise CommandError("no documents to evaluate on")
    kb = KnowledgeBase(embedding_model=args.embedding_model, spacy_model=args.spacy_model)
    ingest_with_progress(kb, documents)
    return kb, documents


def _print_table(
    args: argparse.Namespace,
    documents: list[Document],
    questions: list[EvalQuestion],
    rows: list[EvalRow],
) -> None:
    answered = sum(bool(q.answers) for q in questions)
    timed = sum(q.as_of is not None for q in questions)
    print(
        f"{len(documents)} documents, {len(questions)} questions ({answered} with answers, "
        f"{timed} asked with as_of); top_k={args.top_k} hops={args.hops} format={args.format}"
    )
    print(
        f"{'method':8} {'budget':>6} {'mean tokens':>11} {'answer recall':>13} "
        f"{'in a stated fact':>16} {'p50 ms':>7} {'p95 ms':>7}"
    )
    for row in rows:
        recall = "-" if row.recall is None else f"{row.recall:.1%}"
        stated = "-" if row.stated_recall is None else f"{row.stated_recall:.1%}"
        print(
            f"{row.method:8} {row.max_tokens:>6} {row.mean_tokens:>11.1f} {recall:>13} "
            f"{stated:>16} {row.p50_ms:>7.1f} {row.p95_ms:>7.1f}"
        )


def _is_bundle(path: Path) -> bool:
    """A ``.noema`` file: what ``noema build`` writes (a zip whose first member is named)."""
    return path.is_file() and path.suffix == ".noema"


def _read_questions(path: Path) -> Iterator[EvalQuestion]:
    try:
        lines = path.read_text(encoding="utf-8").split("\n")  # not splitlines(): U+2028 is text
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"{path}: cannot read ({exc})") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            raise CommandError(f"{path}:{number}: not JSON") from None
        if not isinstance(record, dict) or not isinstance(record.get("question"), str):
            raise CommandError(f"{path}:{number}: needs a string 'question' field")
        answers = record.get("answers", record.get("answer", []))
        answers = [answers] if isinstance(answers, str) else answers
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise CommandError(
                f"{path}:{number}: 'answer' must be a string or 'answers' a list of strings"
            )
        as_of = record.get("as_of")
        if as_of is not None:
            try:
                as_of_period(as_of)
            except OptionError as exc:
                raise CommandError(f"{path}:{number}: {exc}") from None
        yield EvalQuestion(record["question"], tuple(answers), as_of)


EVAL = Command(
    "eval",
    "Measure tokens per query and answer recall on your documents, beside a chunk retriever.",
    "noema eval docs/ --questions questions.jsonl --budgets 100 200 400\n"
    "  noema eval kb.noema --questions questions.jsonl --format sentences\n"
    "  noema eval kb.noema --questions questions.jsonl --no-as-of",
    add_eval_arguments,
    cmd_eval,
)
