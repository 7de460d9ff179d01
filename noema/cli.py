"""The ``noema`` command: a thin layer over the library, and the only module that prints.

Library errors are shown as one ``Error: ...`` line on stderr with exit status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from noema._version import __version__
from noema.errors import NoemaError
from noema.evaluate import EvalQuestion, evaluate
from noema.export import to_graphml
from noema.ingest.sources import read_documents
from noema.kb import IngestReport, KnowledgeBase
from noema.model.graph import Document
from noema.model.notation import decode, encode_graph
from noema.model.roundtrip import check_round_trip
from noema.retrieval.filters import check_filters
from noema.retrieval.options import (
    DEFAULT_SIMILARITY_THRESHOLD,
    FORMATS,
    SEED_STRATEGIES,
    RetrieveOptions,
)
from noema.storage.bundle import read_manifest
from noema.warmup import load_models

DEFAULTS = RetrieveOptions()

__all__ = ["main"]


class CommandError(Exception):
    """A usage problem found by the CLI itself (shown like a library error)."""


def _positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def _output(path: str) -> str:
    """An output path whose directory exists, checked before any work (a build parses and
    embeds for minutes first); the directory is not made, so a typo does not make one."""
    parent = Path(path).parent
    if not parent.is_dir():
        raise CommandError(f"{path}: the directory {str(parent)!r} does not exist; create it first")
    return path


def _question(text: str) -> str:
    if not text.strip():
        raise CommandError("question is empty; ask something to retrieve facts for")
    return text


def _warn(message: str) -> None:
    print(f"Warning: {message}", file=sys.stderr)


class _Progress:
    """A stage's progress on stderr, as a ``(done, total)`` callback: a tqdm bar on a terminal;
    elsewhere (CI logs, a notebook's subprocess) a plain line when the stage starts, every
    ``every`` seconds and when it ends, since a bar redrawn with carriage returns is noise
    in a log."""

    def __init__(self, label: str, unit: str, every: float = 10.0) -> None:
        self.label, self.unit, self.every = label, unit, every
        self.bar: Any = None
        self.last = 0.0
        self.printed: tuple[int, int] | None = None

    def __call__(self, done: int, total: int) -> None:
        if sys.stderr.isatty():
            self._draw(done, total)
            return
        now = time.monotonic()
        ended = done >= total
        if (done, total) == self.printed or (
            self.printed and not ended and now - self.last < self.every
        ):
            return
        self.last, self.printed = now, (done, total)
        share = f" ({100 * done // total}%)" if total else ""
        print(f"{self.label}: {done}/{total} {self.unit}{share}", file=sys.stderr, flush=True)

    def _draw(self, done: int, total: int) -> None:
        from tqdm import tqdm

        if self.bar is None:
            self.bar = tqdm(
                total=total,
                desc=self.label,
                unit=f" {self.unit}",
                file=sys.stderr,
                # a terminal that reports no size (some pseudo-terminals) gets 80x24: tqdm
                # itself would hide its bar there
                ncols=shutil.get_terminal_size().columns,
                nrows=shutil.get_terminal_size().lines,
            )
        if self.bar.total != total:
            self.bar.total = total
        self.bar.update(done - self.bar.n)
        if done >= total:
            self.bar.close()
            self.bar = None


def _ingest(kb: KnowledgeBase, documents: list[Document]) -> IngestReport:
    """``kb.ingest`` with the parsing and the embedding progress on stderr."""
    return kb.ingest(
        documents,
        progress=_Progress("parsing", "documents"),
        embed_progress=_Progress("embedding facts and sentences", "texts"),
    )


def _add_root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="document ids are file paths relative to DIR (default: file: and the absolute path)",
    )


# -- commands ------------------------------------------------------------------------------------
def cmd_build(args: argparse.Namespace) -> int:
    _output(args.output)
    documents = list(read_documents(args.paths, on_skip=_warn, root=args.root))
    if not documents:
        raise CommandError("no documents to build from")
    options = {
        "similarity_threshold": args.similarity_threshold,
        "spacy_model": args.spacy_model,
        "embedding_model": args.embedding_model,
    }
    if args.ray is not None:
        return _build_on_ray(args, documents, options)
    kb = KnowledgeBase(**options, n_process=args.n_process)
    report = _ingest(kb, documents)
    kb.save(args.output)
    g = kb.graph
    print(
        f"Built {args.output}: {report.documents} documents, {len(g.entities)} entities, "
        f"{len(g.relations)} relations, {len(g.events)} events "
        f"({len(report.merges)} merges, {report.skipped_documents} duplicate documents skipped)"
    )
    return 0


def _build_on_ray(
    args: argparse.Namespace, documents: list[Document], options: dict[str, Any]
) -> int:
    from noema.distributed import build_on_ray

    try:
        built = build_on_ray(
            documents,
            workers=args.workers,
            partitions=args.partitions,
            address=args.ray or None,
            progress=lambda line: print(line, file=sys.stderr, flush=True),
            **options,
        )
    except Exception as exc:
        if not type(exc).__module__.startswith("ray."):
            raise
        # a worker killed for good (out of memory, a machine gone): one line, not a traceback
        # through Ray's internals; nothing was written (ray is imported only if installed)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CommandError(f"the Ray build failed ({type(exc).__name__}): {first}") from None
    for failure in built.failed:
        _warn(f"{failure.document_id}: not ingested ({failure.error})")
    kb = built.knowledge_base
    kb.save(args.output)
    g = kb.graph
    print(
        f"Built {args.output} on Ray (workers: {built.workers}, partitions: {built.partitions}, "
        f"{built.build_seconds:.1f} s building, {built.merge_seconds:.1f} s merging): "
        f"{len(g.documents)} documents, {len(g.entities)} entities, {len(g.relations)} "
        f"relations, {len(g.events)} events ({len(built.failed)} documents failed)"
    )
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    # options first: a bad one is reported at once, not after the bundle and models load
    options = RetrieveOptions.of(vars(args))
    filters = _filters(args)
    check_filters(filters)
    question = _question(args.question)
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
        how = {
            "seed": f"seed, similarity {step.similarity}",
            "sentence": f"its sentence is a seed, similarity {step.similarity}",
            "hop": f"hop from {step.seed_id} to the document about {step.path[-1] if step.path else '?'}, similarity {step.similarity}",
            "bridge": f"step {step.step}: a search with the bridge {step.path[-1] if step.path else '?'} named by {step.seed_id}, similarity {step.similarity}",
            "expansion": f"{step.hops} hop(s) from {step.seed_id}, similarity {step.similarity}",
        }[step.reason]
        print(
            f"# {step.order:>3} {'in ' if step.included else 'cut'} {step.fact_id}: {how}",
            file=sys.stderr,
        )
    print(
        f"-- {result.token_count} tokens ({result.token_model})"
        + (", truncated by the budget" if result.truncated else ""),
        file=sys.stderr,
    )
    return 0


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


def cmd_show(args: argparse.Namespace) -> int:
    _output(args.output)
    options = RetrieveOptions.of(vars(args))
    question = None if args.question is None else _question(args.question)
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


def cmd_info(args: argparse.Namespace) -> int:
    # the manifest says it all from schema 3 on: nothing else is inflated, parsed or embedded
    manifest = read_manifest(args.bundle)
    merges = manifest.get("merges")
    if not isinstance(merges, int):  # an older bundle: the merge log is inside graph.json
        merges = len(KnowledgeBase.load(args.bundle).merge_log)
    info = {
        "path": args.bundle,
        "size_bytes": Path(args.bundle).stat().st_size,
        "schema_version": manifest.get("schema_version"),
        "noema_version": manifest.get("noema_version"),
        "counts": manifest.get("counts"),
        "embedding_model": manifest.get("embedding_model"),
        "embedding_dimension": manifest.get("embedding_dimension"),
        "spacy_model": manifest.get("spacy_model"),
        "similarity_threshold": manifest.get("similarity_threshold"),
        "merges": merges,
    }
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    counts = info["counts"] or {}
    print(
        f"{args.bundle}: {info['size_bytes']:,} bytes, schema {info['schema_version']}, Noema {info['noema_version']}"
    )
    print(
        "  "
        + ", ".join(
            f"{counts[k]} {k}" for k in ("documents", "entities", "relations", "events", "facts")
        )
    )
    print(
        f"  embedding model: {info['embedding_model']} ({info['embedding_dimension']} dimensions)"
    )
    print(
        f"  spaCy model: {info['spacy_model']}; similarity threshold {info['similarity_threshold']}"
    )
    print(f"  merges recorded: {info['merges']}")
    return 0


def cmd_notation(args: argparse.Namespace) -> int:
    kb = KnowledgeBase.load(args.bundle)
    text = encode_graph(kb.graph)
    if text:
        print(text)
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    if args.file == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(args.file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{args.file}: cannot read ({exc})") from exc
    sentences = decode(text)
    if sentences:
        print(sentences)
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    kb = KnowledgeBase.load(args.bundle)
    report = check_round_trip(kb.graph)
    g = kb.graph
    if report.ok:
        print(
            f"OK: {len(g.entities)} entities, {len(g.relations)} relations and {len(g.events)} events round-trip"
        )
        return 0
    for label, items in (
        ("entity", report.lost_entities),
        ("relation", report.lost_relations),
        ("event", report.lost_events),
    ):
        for item in items:
            print(f"lost {label}: {item}")
    print(
        f"Error: {len(report.lost_entities) + len(report.lost_relations) + len(report.lost_events)} items did not survive the round trip",
        file=sys.stderr,
    )
    return 1


def cmd_merge(args: argparse.Namespace) -> int:
    _output(args.output)
    kb = KnowledgeBase.load(args.bundles[0])
    for path in args.bundles[1:]:
        report = kb.merge(KnowledgeBase.load(path))
        print(
            f"merged {path}: {report.documents} documents, {report.new_relations} new relations, {len(report.merges)} entity merges",
            file=sys.stderr,
        )
    kb.save(args.output)
    g = kb.graph
    print(
        f"Wrote {args.output}: {len(g.documents)} documents, {len(g.entities)} entities, {len(g.relations)} relations, {len(g.events)} events"
    )
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from noema import serve
    except ImportError:  # pragma: no cover - without the extra
        raise CommandError("noema serve needs the MCP SDK: pip install 'noema[mcp]'") from None
    token = args.token or os.environ.get("NOEMA_MCP_TOKEN") or None
    host = port = None
    if args.http is not None:
        host, port = _host_port(args.http)
        serve.check_http_binding(host, token)  # before loading anything
    elif args.token:
        raise CommandError("--token is for --http; over stdio the client starts the server itself")
    if args.root is not None and not Path(args.root).is_dir():
        raise CommandError(f"--root {args.root!r} is not a folder")
    kb = KnowledgeBase.load(args.bundle)
    server = serve.build_server(
        kb, bundle=args.bundle, allow_ingest=args.allow_ingest, root=args.root
    )
    # the models load beside the handshake, so the first question does not wait for them
    threading.Thread(target=load_models, daemon=True).start()
    if host is None or port is None:
        serve.run_stdio(server)
    else:
        print(f"Serving {args.bundle} at http://{host}:{port}/mcp", file=sys.stderr, flush=True)
        serve.run_http(server, host, port, token)
    return 0


def _host_port(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``HOST`` or ``:PORT``, with 127.0.0.1 and the default port for what is
    left out."""
    from noema.serve import DEFAULT_PORT

    host, sep, port_text = text.rpartition(":") if ":" in text else (text, "", "")
    host = host.strip("[]") or "127.0.0.1"
    if not sep:
        return host, DEFAULT_PORT
    try:
        port = int(port_text)
    except ValueError:
        port = -1
    if not 0 < port < 65536:
        raise CommandError(f"--http takes HOST:PORT with a port from 1 to 65535, got {text!r}")
    return host, port


def cmd_eval(args: argparse.Namespace) -> int:
    questions = list(_read_questions(Path(args.questions)))
    if not questions:
        raise CommandError(f"{args.questions}: no questions")
    if len(args.paths) == 1 and _is_bundle(Path(args.paths[0])):
        # a built knowledge base: its documents (stored in graph.json) feed the chunk retriever
        kb = KnowledgeBase.load(args.paths[0])
        documents = list(kb.graph.documents.values())
    else:
        documents = list(read_documents(args.paths, on_skip=_warn, root=args.root))
        if not documents:
            raise CommandError("no documents to evaluate on")
        kb = KnowledgeBase(embedding_model=args.embedding_model, spacy_model=args.spacy_model)
        _ingest(kb, documents)
    rows = evaluate(
        kb,
        documents,
        questions,
        budgets=args.budgets,
        top_k=args.top_k,
        hops=args.hops,
        progress=_Progress("retrieving", "questions"),
    )
    if args.json:
        print(json.dumps([row.__dict__ for row in rows], indent=2))
        return 0
    answered = sum(bool(q.answers) for q in questions)
    print(
        f"{len(documents)} documents, {len(questions)} questions ({answered} with answers); top_k={args.top_k} hops={args.hops}"
    )
    print(
        f"{'method':8} {'budget':>6} {'mean tokens':>11} {'answer recall':>13} {'p50 ms':>7} {'p95 ms':>7}"
    )
    for row in rows:
        recall = "-" if row.recall is None else f"{row.recall:.1%}"
        print(
            f"{row.method:8} {row.max_tokens:>6} {row.mean_tokens:>11.1f} {recall:>13} {row.p50_ms:>7.1f} {row.p95_ms:>7.1f}"
        )
    return 0


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
        yield EvalQuestion(record["question"], tuple(answers))


# -- parser ----------------------------------------------------------------------------------------
def _command(sub: Any, name: str, help: str, example: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help,
        description=f"{help}\n\nExample:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``noema`` command."""
    parser = argparse.ArgumentParser(
        prog="noema",
        description="Build knowledge bases from documents and retrieve facts as compact notation.\n\n"
        'Example:\n  noema build docs/ -o kb.noema\n  noema query kb.noema "Who is Google\'s CEO?"',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"noema {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = _command(
        sub,
        "build",
        "Build a .noema knowledge base from text, Markdown and JSONL files.",
        "noema build examples/docs -o kb.noema",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="files or folders (.txt, .md, .jsonl with a 'text' field)",
    )
    p.add_argument("-o", "--output", required=True, help="bundle to write, e.g. kb.noema")
    _add_root(p)
    p.add_argument("--spacy-model", default="en_core_web_sm")
    p.add_argument("--embedding-model", default="all-MiniLM-L6-v2")
    p.add_argument("--similarity-threshold", type=float, default=DEFAULT_SIMILARITY_THRESHOLD)
    p.add_argument("--n-process", type=int, default=1, help="spaCy processes")
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="build on Ray: a cluster's address, or none for a local Ray started on demand",
    )
    p.add_argument("--workers", type=_positive, default=2, help="Ray workers (with --ray)")
    p.add_argument("--partitions", type=_positive, default=None, help="parts to build (with --ray)")
    p.set_defaults(run=cmd_build)

    p = _command(
        sub,
        "query",
        "Retrieve the facts relevant to a question.",
        'noema query kb.noema "Who is Google\'s CEO?" --top-k 5 --hops 1 --max-tokens 200',
    )
    p.add_argument("bundle")
    p.add_argument("question")
    _retrieve_arguments(p)
    p.add_argument("--format", choices=FORMATS, default=DEFAULTS.format)
    p.add_argument("--token-model", default=DEFAULTS.token_model)
    p.add_argument(
        "--seeds",
        choices=SEED_STRATEGIES,
        default=DEFAULTS.seeds,
        help="'graph': fact and sentence seeds with a hop to the documents about their entities; "
        "'vector': only the top-k fact vectors (the original design)",
    )
    p.add_argument(
        "--min-similarity",
        type=float,
        default=DEFAULTS.min_similarity,
        help="return nothing when no fact or sentence is at least this similar to the question",
    )
    p.add_argument(
        "--min-confidence",
        type=float,
        default=DEFAULTS.min_confidence,
        help="state no fact read with less confidence than this: natural_language leaves it "
        "out, notation keeps its entities (default: 0.3 for notation, 0 otherwise; 0 states "
        "every fact)",
    )
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    p.add_argument("--explain", action="store_true", help="say why each fact is there (on stderr)")
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
    p.set_defaults(run=cmd_query)

    p = _command(
        sub,
        "show",
        "Write a bundle, or what a question retrieves, as a self-contained HTML picture (or GraphML).",
        'noema show kb.noema --question "Who founded Google?" -o graph.html',
    )
    p.add_argument("bundle")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--question")
    _retrieve_arguments(p)
    p.add_argument(
        "--graphml", action="store_true", help="write the whole graph as GraphML instead"
    )
    p.set_defaults(run=cmd_show)

    p = _command(sub, "info", "Show a bundle's counts, models and size.", "noema info kb.noema")
    p.add_argument("bundle")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_info)

    p = _command(
        sub, "notation", "Print the whole graph of a bundle as notation.", "noema notation kb.noema"
    )
    p.add_argument("bundle")
    p.set_defaults(run=cmd_notation)

    p = _command(
        sub, "decode", "Turn notation into sentences.", "noema notation kb.noema | noema decode -"
    )
    p.add_argument("file", nargs="?", default="-", help="notation file, or - for stdin (default)")
    p.set_defaults(run=cmd_decode)

    p = _command(
        sub,
        "merge",
        "Combine bundles into one, canonicalizing across them without parsing any text again.",
        "noema merge part1.noema part2.noema -o all.noema",
    )
    p.add_argument("bundles", nargs="+", metavar="BUNDLE")
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(run=cmd_merge)

    p = _command(
        sub,
        "eval",
        "Measure tokens per query and answer recall on your documents, beside a chunk retriever.",
        "noema eval docs/ --questions questions.jsonl --budgets 100 200 400\n"
        "  noema eval kb.noema --questions questions.jsonl",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="documents, as for noema build, or one built .noema bundle",
    )
    _add_root(p)
    p.add_argument(
        "--questions",
        required=True,
        help='JSONL: {"question": ..., "answer": ...} per line (answer optional)',
    )
    p.add_argument("--budgets", type=int, nargs="+", default=[100, 200, 400])
    p.add_argument("--top-k", type=int, default=DEFAULTS.top_k)
    p.add_argument("--hops", type=int, default=DEFAULTS.hops)
    p.add_argument("--spacy-model", default="en_core_web_sm")
    p.add_argument("--embedding-model", default="all-MiniLM-L6-v2")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_eval)

    p = _command(
        sub,
        "serve",
        "Serve a bundle to agents over the Model Context Protocol (stdio, or streamable HTTP).",
        'noema serve kb.noema\n  noema serve kb.noema --http 127.0.0.1:8765 --token "$TOKEN"',
    )
    p.add_argument("bundle")
    p.add_argument(
        "--http",
        nargs="?",
        const="127.0.0.1",
        metavar="HOST:PORT",
        help="streamable HTTP at http://HOST:PORT/mcp instead of stdio (default 127.0.0.1:8765)",
    )
    p.add_argument(
        "--token",
        help="with --http: the bearer token every request must carry (or NOEMA_MCP_TOKEN); "
        "required to bind anything but loopback",
    )
    p.add_argument(
        "--allow-ingest",
        action="store_true",
        help="add an ingest tool that saves the bundle after each call (read-only otherwise)",
    )
    p.add_argument(
        "--root", metavar="DIR", help="with --allow-ingest: the folder files may be ingested from"
    )
    p.set_defaults(run=cmd_serve)

    p = _command(
        sub,
        "validate",
        "Check that a bundle's graph survives notation round trip.",
        "noema validate kb.noema",
    )
    p.add_argument("bundle")
    p.set_defaults(run=cmd_validate)
    return parser


def _retrieve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--top-k", type=int, default=DEFAULTS.top_k)
    p.add_argument("--hops", type=int, default=DEFAULTS.hops)
    p.add_argument("--max-tokens", type=int, default=DEFAULTS.max_tokens)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``noema`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except BrokenPipeError:
        # the reader went away (`noema notation kb.noema | head`): stop quietly, as Unix tools
        # do, with the status of a process ended by SIGPIPE; stdout goes to /dev/null so the
        # interpreter's last flush does not fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except (NoemaError, CommandError, ValueError, OSError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("Error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
