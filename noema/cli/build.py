"""``noema build``: a bundle from documents, in this process or on Ray."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from noema.cli.common import (
    Command,
    CommandError,
    add_paths,
    add_root,
    checked_output,
    positive,
    warn,
)
from noema.cli.progress import ingest_with_progress
from noema.ingest.sources import read_documents
from noema.kb import KnowledgeBase
from noema.model.graph import Document
from noema.resources import DEFAULT_EMBEDDING_MODEL, DEFAULT_SPACY_MODEL
from noema.retrieval.options import DEFAULT_SIMILARITY_THRESHOLD

__all__ = ["BUILD"]


def add_build_arguments(p: argparse.ArgumentParser) -> None:
    add_paths(p, "files or folders (.txt, .md, .jsonl with a 'text' field)")
    p.add_argument("-o", "--output", required=True, help="bundle to write, e.g. kb.noema")
    add_root(p)
    p.add_argument("--spacy-model", default=DEFAULT_SPACY_MODEL)
    p.add_argument("--embedding-model", default=DEFAULT_EMBEDDING_MODEL)
    p.add_argument("--similarity-threshold", type=float, default=DEFAULT_SIMILARITY_THRESHOLD)
    p.add_argument("--n-process", type=int, default=1, help="spaCy processes")
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="build on Ray: a cluster's address, or none for a local Ray started on demand",
    )
    p.add_argument("--workers", type=positive, default=2, help="Ray workers (with --ray)")
    p.add_argument("--partitions", type=positive, default=None, help="parts to build (with --ray)")


def cmd_build(args: argparse.Namespace) -> int:
    checked_output(args.output)
    documents = list(read_documents(args.paths, on_skip=warn, root=args.root))
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
    report = ingest_with_progress(kb, documents)
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
        warn(f"{failure.document_id}: not ingested ({failure.error})")
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


BUILD = Command(
    "build",
    "Build a .noema knowledge base from text, Markdown and JSONL files.",
    "noema build examples/docs -o kb.noema",
    add_build_arguments,
    cmd_build,
)
