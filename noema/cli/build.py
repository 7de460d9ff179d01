"""``noema build``: a bundle from documents, in this process or on Ray.

Over a bundle of the same settings, a build updates it: documents are identified by their ids
(a file's path), so only new or changed ones are parsed and embedded, and those no longer given
leave; the result holds exactly the documents given, as a build from the start would. A file at
the output that does not open as a bundle is never replaced without ``--rebuild``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from noema.cli.common import (
    Command,
    CommandError,
    add_models,
    add_paths,
    add_root,
    checked_output,
    positive,
    warn,
)
from noema.cli.progress import ingest_with_progress
from noema.errors import BundleError
from noema.ingest.parse import SpacyExtractor
from noema.ingest.sources import read_documents
from noema.kb import KnowledgeBase
from noema.model.records import Document
from noema.resources import same_spacy_model
from noema.retrieval.options import DEFAULT_SIMILARITY_THRESHOLD
from noema.storage.bundle import read_manifest
from noema.storage.store import read

__all__ = ["BUILD"]


def add_build_arguments(p: argparse.ArgumentParser) -> None:
    add_paths(p, "files or folders (.txt, .md, .jsonl with a 'text' field)")
    p.add_argument("-o", "--output", required=True, help="bundle to write, e.g. kb.noema")
    add_root(p)
    add_models(p)
    p.add_argument("--similarity-threshold", type=float, default=DEFAULT_SIMILARITY_THRESHOLD)
    p.add_argument("--n-process", type=int, default=1, help="spaCy processes")
    p.add_argument(
        "--rebuild",
        action="store_true",
        help="build from the start even when OUTPUT is a bundle of the same settings, and "
        "replace OUTPUT when it cannot be read as a bundle (else refused)",
    )
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
        if not args.rebuild:
            _check_replaceable(args.output)
        return _build_on_ray(args, documents, options)
    extractor = SpacyExtractor(args.spacy_model, n_process=args.n_process)
    existing = None if args.rebuild else _bundle_to_update(args.output, options, extractor)
    if existing is not None:
        return _update(args.output, existing, documents)
    kb = KnowledgeBase(**options, extractor=extractor)
    report = ingest_with_progress(kb, documents)
    kb.save(args.output)
    g = kb.graph
    print(
        f"Built {args.output}: {report.documents} documents, {len(g.entities)} entities, "
        f"{len(g.relations)} relations, {len(g.events)} events "
        f"({len(report.merges)} merges, {report.skipped_documents} duplicate documents skipped)"
    )
    return 0


def _bundle_to_update(
    path: str, options: dict[str, Any], extractor: SpacyExtractor
) -> KnowledgeBase | None:
    """The bundle at ``path``, opened to be updated, when it was built with these settings;
    else None, and it is built again from the start (its vectors or merges would differ).

    Raises:
        CommandError: there is a file at ``path`` that does not open as a bundle (see
            :func:`_check_replaceable`).
    """
    if not Path(path).is_file():
        return None
    with _refused_unless_readable(path):
        reason = _other_settings(read_manifest(path), options)
        if reason is None:
            return KnowledgeBase.load(path, spacy_model=options["spacy_model"], extractor=extractor)
        # replaced only once it is known to be a bundle this Noema reads, every member hashed
        # (opening hashes only the small ones): it is read once, and made again anyway
        read(path, verify=True)
    print(f"{path}: {reason}; building it from the start", file=sys.stderr)
    return None


def _check_replaceable(path: str) -> None:
    """Refuse, unless ``--rebuild`` is given, to replace a file at ``path`` that does not open as
    a bundle: one of a newer Noema, a damaged one, one over the memory budget, or another file.
    A build replaced them all with "building it from the start", and the user's bundle was gone.

    Raises:
        CommandError: saying what is wrong, that the file is left as it is, and ``--rebuild``.
    """
    if Path(path).is_file():
        with _refused_unless_readable(path):
            read(path, verify=True)  # every member hashed, as validate does


@contextmanager
def _refused_unless_readable(path: str) -> Iterator[None]:
    """A failure to read the bundle at ``path`` as the :class:`CommandError` of
    :func:`_check_replaceable`."""
    try:
        yield
    except BundleError as exc:
        reason = str(exc)
    except (KeyError, TypeError, ValueError) as exc:  # a manifest without the settings it needs
        reason = f"its manifest does not say how it was built ({exc!r})"
    else:
        return
    raise CommandError(
        f"{path} cannot be read as a bundle, so it is left as it is: {reason}. To replace it "
        "with a bundle built from the start, pass --rebuild"
    ) from None


def _other_settings(manifest: dict[str, Any], options: dict[str, Any]) -> str | None:
    """What the bundle of ``manifest`` was built with that ``options`` do not ask for."""
    threshold = float(manifest.get("similarity_threshold", DEFAULT_SIMILARITY_THRESHOLD))
    differences = []
    if manifest["embedding_model"] != options["embedding_model"]:
        differences.append(f"embedding model {manifest['embedding_model']!r}")
    if not same_spacy_model(options["spacy_model"], manifest["spacy_model"]):
        differences.append(f"spaCy model {manifest['spacy_model']!r}")
    if threshold != options["similarity_threshold"]:
        differences.append(f"similarity threshold {threshold}")
    return f"it was built with {', '.join(differences)}" if differences else None


def _update(path: str, kb: KnowledgeBase, documents: list[Document]) -> int:
    """Bring the bundle ``kb`` opened from ``path`` to ``documents``: the ones stored with the
    same text are kept as they are (not parsed or embedded again), the others ingested, and
    those no longer given removed. An unchanged bundle is not written again."""
    stored = kb.graph.documents
    gone = sorted(set(stored) - {d.id for d in documents})
    # a record whose metadata changed (a JSONL title, a field) is built again, as from the start
    edited = [d.id for d in documents if d.id in stored and stored[d.id].metadata != d.metadata]
    if gone or edited:
        kb.delete_documents([*gone, *edited])
    report = ingest_with_progress(kb, documents)
    if not gone and not edited and not report.documents:
        print(f"{path} is up to date: {len(kb.graph.documents)} documents unchanged")
        return 0
    kb.save(path)
    g = kb.graph
    print(
        f"Updated {path}: {report.documents} new or changed documents, "
        f"{len(g.documents) - report.documents} unchanged, {len(gone)} removed; "
        f"{len(g.entities)} entities, {len(g.relations)} relations, {len(g.events)} events "
        f"({len(report.merges)} merges)"
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
