"""``noema query`` and ``noema show``: what a question retrieves, as text or as a picture."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from noema.cli.common import (
    Command,
    CommandError,
    add_retrieve_arguments,
    checked_output,
    checked_question,
)
from noema.export import to_graphml
from noema.kb import KnowledgeBase
from noema.retrieval.filters import check_filters
from noema.retrieval.formats import render_fact
from noema.retrieval.options import RetrieveOptions
from noema.retrieval.steps import explain_reason

if TYPE_CHECKING:
    from noema import FactExplanation, SemanticGraph

__all__ = ["QUERY", "SHOW"]


def add_query_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("bundle")
    p.add_argument("question")
    add_retrieve_arguments(p)
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    p.add_argument("--explain", action="store_true", help="say why each fact is there (on stderr)")
    _add_filter_arguments(p)


def _add_filter_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--type", action="append", metavar="TYPE", help="only facts between entities of these types"
    )
    p.add_argument("--predicate", action="append", help="only facts with these predicates")
    p.add_argument(
        "--document", action="append", metavar="ID", help="only facts from these documents"
    )
    p.add_argument(
        "--where",
        action="append",
        metavar="KEY=VALUE",
        help="only facts from documents with this metadata",
    )


def cmd_query(args: argparse.Namespace) -> int:
    # options first: a bad one is reported at once, not after the bundle and models load
    options = RetrieveOptions.of(vars(args))
    filters = _filters(args)
    check_filters(filters)
    question = checked_question(args.question)
    kb = KnowledgeBase.load(args.bundle)
    result = kb.retrieve_with(question, options, filters=filters, explain=args.explain)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return 0
    if result.text:
        print(result.text)
    else:
        print("(no facts found)", file=sys.stderr)
    for step in result.explanation or ():
        print(_explanation_line(step, kb.graph), file=sys.stderr)
    print(
        f"-- {result.token_count} tokens ({result.token_model})"
        + (", truncated by the budget" if result.truncated else ""),
        file=sys.stderr,
    )
    return 0


def _explanation_line(step: FactExplanation, graph: SemanticGraph) -> str:
    """Why one fact is in the result (or was cut), for ``--explain``: facts as their sentences and
    entities by name, since a reader cannot look ids up (``--json`` keeps the ids)."""

    def fact(fact_id: str) -> str:
        return repr(render_fact(graph, fact_id, "natural_language"))

    def name(entity_id: str) -> str:
        entity = graph.entities.get(entity_id)
        return entity.name if entity is not None else entity_id

    last = name(step.path[-1]) if step.path else "?"
    seed = fact(step.seed_id)
    how = explain_reason(
        step.reason,
        seed=seed,
        last=last,
        similarity=step.similarity,
        step=step.step,
        hops=step.hops,
    )
    if step.time:
        how = f"{how}; {step.time}"
    return f"# {step.order:>3} {'in ' if step.included else 'cut'} {fact(step.fact_id)}: {how}"


def _filters(args: argparse.Namespace) -> dict[str, Any] | None:
    filters: dict[str, Any] = {}
    if args.type:
        filters["entity_types"] = args.type
    if args.predicate:
        filters["predicates"] = args.predicate
    if args.document:
        filters["document_ids"] = args.document
    if args.where:
        metadata = {}
        for item in args.where:
            key, sep, value = item.partition("=")
            if not sep:
                raise CommandError(f"--where takes KEY=VALUE, got {item!r}")
            metadata[key] = value
        filters["metadata"] = metadata
    return filters or None


def add_show_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("bundle")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--question")
    add_retrieve_arguments(p, ("top_k", "hops", "max_tokens"))
    p.add_argument(
        "--graphml", action="store_true", help="write the whole graph as GraphML instead"
    )


def cmd_show(args: argparse.Namespace) -> int:
    checked_output(args.output)
    options = RetrieveOptions.of(vars(args))
    question = None if args.question is None else checked_question(args.question)
    kb = KnowledgeBase.load(args.bundle)
    if args.graphml:
        Path(args.output).write_text(to_graphml(kb.graph), encoding="utf-8")
        print(f"Wrote {args.output} (GraphML, {len(kb.graph.entities)} nodes)")
        return 0
    body = kb.to_html() if question is None else kb.retrieve_with(question, options).to_html()
    page = f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>noema</title></head><body>{body}</body></html>'
    Path(args.output).write_text(page, encoding="utf-8")
    print(f"Wrote {args.output}")
    return 0


QUERY = Command(
    "query",
    "Retrieve the facts relevant to a question.",
    'noema query kb.noema "Who is Google\'s CEO?" --top-k 5 --hops 1 --max-tokens 200',
    add_query_arguments,
    cmd_query,
)
SHOW = Command(
    "show",
    "Write a bundle, or what a question retrieves, as a self-contained HTML picture (or GraphML).",
    'noema show kb.noema --question "Who founded Google?" -o graph.html',
    add_show_arguments,
    cmd_show,
)
