"""Build one knowledge base on a Ray cluster: partitions parsed and embedded by long-lived actors,
merged in a tree into one canonical base.

Needs the ``ray`` extra (``pip install 'noema-graph[ray]'``). Each actor loads the spaCy pipeline
and the embedding model once and builds a partial knowledge base per partition (``ingest``, exactly
as one process does); partial bases travel through Ray's object store as bundle bytes and are
merged in pairs on the actors, level by level, so the driver only reads documents and receives the
result.

Partitions are runs of whole ingest batches (256 documents), so every document is parsed in the
same batch, with the same type votes, as a one-process ``ingest`` would parse it.

The result holds the same documents, entities (names, types, aliases, mentions), facts and
merges as a one-process ``ingest`` of the same documents in the same order, whenever
canonicalization does not depend on the order names are met (exact-name merges never do).
Three things may differ:

- The merge log's grouping: where two parts meet, a merge is one record listing every
  document of the later part that names the entity, where ``ingest`` writes one record per
  document. Expanded to (canonical name, merged name, rule, document) the merges are the same.
- An embedding merge of a name close to two names that are not close to each other: the
  first one met wins in both builds, but "first" is per part here.
- The aliases an entity gathered by embedding within its part: where two parts meet, it joins
  the other part's entity by its canonical name and brings them along. A part's "Kennedy"
  holding "George Kennedy" joins "A. R. Kennedy", who has the alias "Kennedy", where
  ``ingest`` compares "George Kennedy" with "A. R. Kennedy" and keeps them apart.

Entity ids of such names, and with them the bundle's bytes, may then differ.
``benchmarks/distributed.py`` counts such differences on real data (0.3-0.5% of entities on
10,000 Wikipedia paragraphs).

A part with a document the extractor refuses, or that the bundle writer then cannot write, is
ingested document by document, so the good ones arrive (parsed alone, their type votes are not
pooled with the rest of their batch). A part whose build raises what the worker does not catch
is built in halves, as below.
A part whose worker dies at every retry (a document that crashes the parser or exhausts
memory) is built in halves, each on a new worker and without retries, down to the document
that kills it, which is reported in ``failed``; the halves that build are merged in order.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from noema.errors import MissingResourceError, OptionError
from noema.ingest.extractor import INGEST_BATCH
from noema.ingest.sources import Source, as_documents
from noema.kb import KnowledgeBase
from noema.model.records import Document
from noema.resources import install_hint

__all__ = ["DistributedBuild", "FailedDocument", "build_on_ray", "partition"]

# KnowledgeBase options that KnowledgeBase.from_bytes takes too
_LOAD_OPTIONS = (
    "embedder",
    "embedding_model",
    "extractor",
    "search",
    "similarity_threshold",
    "spacy_model",
)


@dataclass(frozen=True)
class FailedDocument:
    """A document no worker could ingest, and why."""

    partition: int
    document_id: str
    error: str


@dataclass(frozen=True)
class DistributedBuild:
    """What :func:`build_on_ray` built and how long each stage took."""

    knowledge_base: KnowledgeBase
    partitions: int
    workers: int
    failed: tuple[FailedDocument, ...]
    failed_partitions: tuple[int, ...]  # partitions of which no document could be ingested
    build_seconds: float  # partitions parsed, canonicalized and embedded
    merge_seconds: float  # the merge tree, after the last partition was built
    level_seconds: tuple[float, ...]  # each level of the merge tree, first (smallest parts) first


def partition(documents: Sequence[Document], partitions: int) -> list[list[Document]]:
    """At most ``partitions`` consecutive runs of whole ingest batches, as even as batches allow.

    Example:
        >>> [len(p) for p in partition([Document(str(i)) for i in range(600)], 2)]
        [512, 88]
    """
    if isinstance(partitions, bool) or not isinstance(partitions, int) or partitions < 1:
        raise OptionError(f"partitions must be an integer >= 1, got {partitions!r}")
    batches = -(-len(documents) // INGEST_BATCH)
    per_part = max(1, -(-batches // partitions)) * INGEST_BATCH
    return [list(documents[i : i + per_part]) for i in range(0, len(documents), per_part)]


class PartitionBuilder:
    """One worker's models, loaded once; builds and merges partial knowledge bases as bytes."""

    def __init__(self, options: dict[str, Any], threads: int) -> None:
        import torch

        # Ray starts an actor with one thread per CPU it reserves; the count is set here so a
        # worker computes like a process with that many threads (bfloat16 kernels add up in an
        # order that depends on it)
        torch.set_num_threads(threads)
        self.options = {k: v for k, v in options.items() if k not in ("embedder", "extractor")}
        warm = KnowledgeBase(**options)
        warm.embedder.embed(["warm up"])
        warm.extractor.extract([Document("Warm up.")])
        self.shared: dict[str, Any] = {"embedder": warm.embedder, "extractor": warm.extractor}

    def build(
        self, number: int, documents: list[Document]
    ) -> tuple[bytes | None, list[FailedDocument]]:
        """The partial base of one partition as bundle bytes (``None`` when no document could
        be ingested) and the documents that failed, with the error each gave alone."""
        kb = KnowledgeBase(**self.options, **self.shared)
        try:
            kb.ingest(documents)
            return kb.to_bytes(), []
        except Exception:  # noqa: BLE001  one bad document must not cost the partition
            pass
        failed: list[FailedDocument] = []
        kb, kept = self._ingest_each(number, documents, failed)
        if not kept:
            return None, failed
        try:
            return kb.to_bytes(), failed
        except Exception:  # noqa: BLE001  a document that ingested and cannot be saved
            pass
        # each alone, to find those the bundle writer refuses (a slow path for a rare case)
        saved = [doc for doc in kept if self._saves(number, doc, failed)]
        # the documents that saved alone, together: whatever fails now is reported too
        kb, kept = self._ingest_each(number, saved, failed)
        order = {doc.id: n for n, doc in enumerate(documents)}
        failed.sort(key=lambda f: order[f.document_id])
        if not kept:
            return None, failed
        try:
            return kb.to_bytes(), failed
        except Exception as exc:  # noqa: BLE001  reported to the driver, not raised
            error = f"{type(exc).__name__}: {exc}"
            together = [FailedDocument(number, doc.id, error) for doc in kept]
            return None, sorted([*failed, *together], key=lambda f: order[f.document_id])

    def _ingest_each(
        self, number: int, documents: list[Document], failed: list[FailedDocument]
    ) -> tuple[KnowledgeBase, list[Document]]:
        """A base of the documents that ingest one by one, and those documents; the others are
        added to ``failed``."""
        kb = KnowledgeBase(**self.options, **self.shared)
        kept = []
        for doc in documents:  # ingest leaves the base unchanged when a document fails
            try:
                kb.ingest([doc])
                kept.append(doc)
            except Exception as exc:  # noqa: BLE001  reported to the driver, not raised
                failed.append(FailedDocument(number, doc.id, f"{type(exc).__name__}: {exc}"))
        return kb, kept

    def _saves(self, number: int, doc: Document, failed: list[FailedDocument]) -> bool:
        try:
            self._ingest_each(number, [doc], [])[0].to_bytes()
        except Exception as exc:  # noqa: BLE001  reported to the driver, not raised
            failed.append(FailedDocument(number, doc.id, f"{type(exc).__name__}: {exc}"))
            return False
        return True

    def merge(self, left: bytes, right: bytes) -> bytes:
        """``right`` canonicalized into ``left`` (left holds the earlier documents)."""
        kb = KnowledgeBase.from_bytes(left, **self.shared)
        kb.merge(KnowledgeBase.from_bytes(right, **self.shared))
        return kb.to_bytes()


def build_on_ray(
    sources: Source | Iterable[Source] | Any,
    *,
    workers: int = 2,
    partitions: int | None = None,
    address: str | None = None,
    root: str | os.PathLike[str] | None = None,
    progress: Callable[[str], None] | None = None,
    max_retries: int = 3,
    threads_per_worker: int | None = None,
    **options: Any,
) -> DistributedBuild:
    """Build a knowledge base from ``sources`` on Ray with ``workers`` actors.

    Args:
        sources: what :meth:`KnowledgeBase.ingest` takes (texts, documents, paths, JSONL files),
            or a ``ray.data.Dataset`` whose rows have ``text`` and optionally ``id`` and
            ``metadata``. The driver reads them into documents and ships each partition once.
        workers: actors to start; each holds the spaCy pipeline and the embedding model once
            and reserves ``threads_per_worker`` CPUs.
        partitions: parts to build (default: ``workers``); more parts than workers balance
            uneven partitions, at the cost of more merges.
        address: a running Ray cluster (``"auto"``, ``"ray://head:10001"``); by default a
            local Ray is started on demand and stopped afterwards. An already initialised Ray is
            used as it is.
        progress: called with one line per finished partition and merge level.
        max_retries: how often Ray restarts a worker that died and retries its partition.
        threads_per_worker: torch threads (and Ray CPUs) per worker. By default, on a local
            Ray (started here, or initialised by the caller without an address), this
            process's torch thread count shared among the workers, within the CPUs Ray has:
            one worker computes as this process does. On a cluster (``address``), 1.
        options: :class:`KnowledgeBase` options (``similarity_threshold``, ``spacy_model``,
            ``embedding_model``, ``extractor``, ``embedder``...), sent to every worker.

    What may differ from a one-process ``ingest``, and what becomes of a part that fails: see
    the module docstring.

    Raises:
        MissingResourceError: Ray is not installed.
    """
    ray = _import_ray()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise OptionError(f"workers must be an integer >= 1, got {workers!r}")
    started_here = not ray.is_initialized()
    threads = _threads(threads_per_worker, workers, address)
    parts = partition(_documents(sources, root), partitions or workers)
    say = progress or (lambda line: None)
    if started_here:
        ray.init(
            address=address,
            num_cpus=None if address else workers * threads,
            **_QUIET_RAY,
        )
    elif threads_per_worker is None and address is None:
        threads = _threads_within(ray, threads, workers)
    try:
        return _build(ray, parts, workers, threads, max_retries, options, say)
    finally:
        if started_here:
            ray.shutdown()


# a local Ray started for one build: no dashboard, and its logs not mixed into the caller's
_QUIET_RAY: dict[str, Any] = {
    "include_dashboard": False,
    "log_to_driver": False,
    "configure_logging": False,
}


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise MissingResourceError(
            f"building on Ray needs ray; install it with: {install_hint('ray')}"
        ) from exc
    return ray


def _threads_within(ray: Any, threads: int, workers: int) -> int:
    """The threads per worker within the CPUs of a Ray the caller started."""
    cpus = int(ray.cluster_resources().get("CPU", 1))
    return max(1, min(threads * workers, cpus) // workers)


def _threads(asked: int | None, workers: int, address: str | None) -> int:
    if asked is not None:
        if isinstance(asked, bool) or not isinstance(asked, int) or asked < 1:
            raise OptionError(f"threads_per_worker must be an integer >= 1, got {asked!r}")
        return asked
    if address is not None:  # the driver cannot know the CPUs of the cluster's machines
        return 1
    import torch

    return max(1, torch.get_num_threads() // workers)


def _documents(sources: Any, root: str | os.PathLike[str] | None) -> list[Document]:
    # recognised by its module, so ray.data (and pandas, which it needs) is imported only by a
    # user who already has a dataset
    if type(sources).__module__.startswith("ray.data"):
        return [
            Document(row["text"], id=row.get("id"), metadata=dict(row.get("metadata") or {}))
            for row in sources.iter_rows()
        ]
    return as_documents(sources, root)


@dataclass(frozen=True)
class _Piece:
    """A partition, or a part of one that is bisected after its worker died: ``key`` orders the
    pieces of a partition in document order (0 is the first half, 1 the second, at each cut)."""

    partition: int
    key: tuple[int, ...]
    documents: list[Document]
    bisected: bool = False  # a part of a partition whose worker died: not retried by Ray


class _Workers:
    """The actors, each given one piece at a time, so a worker that dies was building exactly the
    piece it was given (a queue of several would blame the innocent ones behind it). An actor
    that died is replaced by a new one."""

    def __init__(
        self, ray: Any, actor_class: Any, count: int, options: dict[str, Any], threads: int
    ) -> None:
        self.ray, self.actor_class, self.options, self.threads = ray, actor_class, options, threads
        self.idle = [actor_class.remote(options, threads) for _ in range(count)]
        self.count = count
        # the ref of a running piece's failed documents -> (its actor, the piece, its bundle ref)
        self.running: dict[Any, tuple[Any, _Piece, Any]] = {}

    def start(self, piece: _Piece) -> None:
        actor = self.idle.pop()
        # a half of a piece whose worker died is not retried: the document that killed it
        # would kill the worker again at every retry
        retries = {"max_task_retries": 0} if piece.bisected else {}
        method = actor.build.options(num_returns=2, **retries)
        bundle, failed = method.remote(piece.partition, piece.documents)
        self.running[failed] = (actor, piece, bundle)

    def finished(self) -> tuple[_Piece, Any, list[FailedDocument] | None, str]:
        """The next piece to finish: its bundle ref, its failed documents (``None`` when its
        worker died, with the error in the last item)."""
        done, _ = self.ray.wait(list(self.running), num_returns=1)
        actor, piece, bundle = self.running.pop(done[0])
        try:
            failed = self.ray.get(done[0])
        except self.ray.exceptions.RayActorError as exc:
            self.ray.kill(actor, no_restart=True)
            self.idle.append(self.actor_class.remote(self.options, self.threads))
            return piece, bundle, None, f"{type(exc).__name__}: its worker died while building it"
        except self.ray.exceptions.RayTaskError as exc:
            # the build raised what it does not catch: the worker lives on, and the piece is
            # built in halves as for a dead worker, down to the document that raises
            self.idle.append(actor)
            cause = exc.cause if isinstance(exc.cause, BaseException) else exc
            return piece, bundle, None, f"{type(cause).__name__}: {cause}"
        self.idle.append(actor)
        return piece, bundle, failed, ""


def _build(
    ray: Any,
    parts: list[list[Document]],
    workers: int,
    threads: int,
    max_retries: int,
    options: dict[str, Any],
    say: Callable[[str], None],
) -> DistributedBuild:
    start = time.perf_counter()
    actor_class = ray.remote(
        num_cpus=threads, max_restarts=max_retries, max_task_retries=max_retries
    )(PartitionBuilder)
    pool = _Workers(ray, actor_class, min(workers, max(len(parts), 1)), options, threads)
    queue = [_Piece(number, (), part) for number, part in enumerate(parts)][::-1]
    built: dict[tuple[int, tuple[int, ...]], Any] = {}  # bundle refs of the pieces that built
    lost_by_piece: dict[tuple[int, tuple[int, ...]], list[FailedDocument]] = {}
    remaining = Counter(range(len(parts)))  # pieces of each partition not finished yet
    while queue or pool.running:  # reported as they finish; the bundles stay in the object store
        while queue and pool.idle:
            pool.start(queue.pop())
        piece, bundle, lost, error = pool.finished()
        remaining[piece.partition] -= 1
        if lost is None and len(piece.documents) > 1:
            # a document that kills its worker every time: build each half apart, down to it
            half = len(piece.documents) // 2
            for n, documents in ((1, piece.documents[half:]), (0, piece.documents[:half])):
                queue.append(_Piece(piece.partition, (*piece.key, n), documents, True))
            remaining[piece.partition] += 2
            continue
        if lost is None:
            lost = [FailedDocument(piece.partition, piece.documents[0].id, error)]
        lost_by_piece[(piece.partition, piece.key)] = lost
        if len(lost) < len(piece.documents):
            built[(piece.partition, piece.key)] = bundle
        if remaining[piece.partition] == 0:
            say(f"partition {piece.partition + 1}/{len(parts)} built")
    failed = [f for key in sorted(lost_by_piece) for f in lost_by_piece[key]]
    lost_count = Counter(f.partition for f in failed)
    empty = tuple(n for n, part in enumerate(parts) if lost_count[n] == len(part))
    level = [built[key] for key in sorted(built)]
    actors = pool.idle
    if level:
        ray.wait(level, num_returns=len(level))
    build_seconds = time.perf_counter() - start
    level, levels = _merged(ray, actors, level, say)
    merge_seconds = sum(levels)
    load = {k: v for k, v in options.items() if k in _LOAD_OPTIONS}
    kb = KnowledgeBase.from_bytes(ray.get(level[0]), **load) if level else KnowledgeBase(**options)
    return DistributedBuild(
        knowledge_base=kb,
        partitions=len(parts),
        workers=pool.count,
        failed=tuple(failed),
        failed_partitions=empty,
        build_seconds=build_seconds,
        merge_seconds=merge_seconds,
        level_seconds=tuple(levels),
    )


def _merged(
    ray: Any, actors: list[Any], level: list[Any], say: Callable[[str], None]
) -> tuple[list[Any], list[float]]:
    """The built parts merged in a tree, neighbours in pairs, so the earlier documents stay on
    the left; returns the last level (one ref, or none) and the seconds of each level."""
    levels: list[float] = []
    while len(level) > 1:
        started = time.perf_counter()
        merged = [
            actors[(i // 2) % len(actors)].merge.remote(level[i], level[i + 1])
            for i in range(0, len(level) - 1, 2)
        ]
        level = merged + level[len(merged) * 2 :]
        ray.wait(level, num_returns=len(level))
        levels.append(time.perf_counter() - started)
        say(f"merge level {len(levels)}: {len(level)} part(s) left")
    return level, levels
