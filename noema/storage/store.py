"""The storage seam: what a knowledge base's readers see, how its writers publish the next
state, and how that state goes to and comes from a bundle.

A :class:`Snapshot` is a graph with the fact index and sentence sidecar built for it. Writers make
a new one aside (copying the index, embedding only the facts they added, reusing vectors a merge
brings) and publish it in one assignment (:meth:`Store.publish`); readers never wait and never
see half a write. :class:`Store` holds the current snapshot and the writers' lock, writes it as a
bundle (:mod:`noema.storage.bundle` is the file format) and opens one, bringing an older bundle's state
up to date (fact vectors embedded from another text, a missing sentence sidecar).
:class:`noema.KnowledgeBase` keeps ingest and retrieval and goes through this module for the rest.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from noema.errors import BundleError
from noema.model.facttext import FACT_RENDERING, NOTATION_RENDERING, fact_text
from noema.model.gcpause import paused_gc
from noema.model.graph import SemanticGraph
from noema.model.records import MergeRecord, Relation, make_event_id, make_relation_id
from noema.storage._path_lock import path_locked
from noema.storage.bundle import (
    BundleContents,
    BundleSettings,
    bundle_bytes,
    read_bundle,
    read_bundle_bytes,
    write_bundle,
)
from noema.storage.container import (
    FileIdentity,
    UnhashedMembers,
    file_identity,
    write_target,
)
from noema.storage.copying import Copying, OpenedBundle, copy_plan
from noema.storage.members import NAMES_MEMBER
from noema.vectors.embed import Embedder, embedding_stage
from noema.vectors.index import SearchMode, VectorIndex
from noema.vectors.sentences import SentenceIndex

__all__ = [
    "NOT_MERGED",
    "Snapshot",
    "Store",
    "prepared",
    "read",
    "synced_index",
    "with_reused_vectors",
]

NameVectors = Mapping[str, npt.NDArray[np.float32]]
# What a save, or a merge of a base opened from a bundle, refused for the bundle's damage says
# after the reason.
_NOT_WRITTEN = (
    "nothing was written, so the damage is not carried into another bundle. Restore the "
    "bundle from a copy, or build it again"
)
NOT_MERGED = (
    "nothing was merged, so the damage is not carried into this knowledge base. Restore the "
    "bundle from a copy, or build it again"
)
_T = TypeVar("_T")


@dataclass(frozen=True)
class Snapshot:
    """What a reader sees: a graph with the fact index and sentence sidecar built for it (both
    ``None`` until the first write), and the merges that made its entities. All four are
    published together, so a save never pairs a graph with another graph's merge log."""

    graph: SemanticGraph
    index: VectorIndex | None
    sentences: SentenceIndex | None
    merge_log: tuple[MergeRecord, ...] = ()


def prepared(snapshot: Snapshot, search: SearchMode) -> Snapshot:
    """The snapshot with its search structures built, before any reader can see it."""
    if snapshot.index is not None:
        snapshot.index.prepare(search)
    if snapshot.sentences is not None:
        snapshot.sentences.vectors.prepare(search)
    return snapshot


def synced_index(
    index: VectorIndex | None, graph: SemanticGraph, embedder: Embedder
) -> VectorIndex:
    """A copy of ``index`` holding exactly the facts of ``graph``: removed facts dropped, new ones
    embedded. ``index`` itself is left as it is, for the readers still using it."""
    if index is None:
        index = VectorIndex(embedder.dimension)
    with paused_gc():  # over the work on every fact, not over the embedding (noema.model.gcpause)
        facts = [*graph.relations, *graph.events]
        stale = [f for f in index.ids if f not in graph.relations and f not in graph.events]
        missing = [f for f in facts if f not in index]
        if not stale and not missing:
            return index
    texts = [fact_text(graph, f) for f in missing]
    vectors = embedder.embed(texts) if texts else np.zeros((0, index.dimension), np.float32)
    with paused_gc():
        return index.changed(stale, missing, vectors)


def with_reused_vectors(
    index: VectorIndex, graph: SemanticGraph, theirs: Snapshot, mapping: dict[str, str]
) -> VectorIndex:
    """``index`` plus the vectors of another base's facts that kept their text after its
    entities were mapped into ``graph``: a merge embeds none of those again."""
    other_index = theirs.index
    assert other_index is not None
    reused_ids, rows = [], []
    for fact in theirs.graph.iter_facts():
        if not all(e in mapping for e in fact.entity_ids):
            continue
        ends = [mapping[e] for e in fact.entity_ids]
        if isinstance(fact, Relation):
            new_id = make_relation_id(ends[0], fact.predicate, ends[1])
        else:  # events too: the docstring promised it, and they were embedded again
            new_id = make_event_id(fact.label, tuple(dict.fromkeys(ends)), fact.time)
        if (
            (new_id in graph.relations or new_id in graph.events)
            and new_id not in index
            and fact.id in other_index
            and fact_text(graph, new_id) == fact_text(theirs.graph, fact.id)
        ):
            reused_ids.append(new_id)
            rows.append(other_index.vector(fact.id))
    if not rows:
        return index
    return index.changed((), reused_ids, np.stack(rows))


class Store:
    """The current :class:`Snapshot` of one knowledge base, and everything that replaces it.

    Readers take :attr:`snapshot` once and use nothing else. Writers hold :attr:`lock`, build
    the next graph aside and :meth:`publish` it; opening a bundle (:meth:`open`) publishes what
    it holds the same way.
    """

    def __init__(self, embedder: Embedder, search: SearchMode) -> None:
        self.embedder = embedder
        self.search: SearchMode = search
        self.snapshot = Snapshot(SemanticGraph(), None, None)
        self.lock = threading.Lock()
        # each bundle file this store was opened from or saved to, and what it was then: a save
        # over one that has changed since would drop another program's save
        self._files: dict[Path, FileIdentity | None] = {}
        # the members of the bundle it was opened from that opening did not hash
        self._unhashed: UnhashedMembers | None = None
        # the state opened from a bundle, with that bundle's bytes: while it is the current
        # state, a save copies the members the bundle holds as they would be written
        self._opened: tuple[Snapshot, OpenedBundle] | None = None

    def publish(
        self,
        graph: SemanticGraph,
        index: VectorIndex | None = None,
        sentence_pool: SentenceIndex | None = None,
        *,
        merge_log: tuple[MergeRecord, ...] | None = None,
    ) -> None:
        """Make ``graph`` the current state, with a fact index and sentence sidecar that hold
        exactly its facts and sentences; embeds only what no vector exists for. Called by
        writers, under :attr:`lock`: the diff against the previous index is write-side work,
        so no reader ever compares the facts with the index. ``index`` replaces the current
        index as the starting point (a merge's reused vectors); ``sentence_pool`` holds
        sentence vectors to reuse besides the current sidecar's; ``merge_log`` replaces the
        current merge log (kept when ``None``)."""
        # (the collector is paused inside, around the work on every fact and sentence but not
        # around the embedding, which runs for minutes on a large ingest; see noema.model.gcpause)
        self._opened = None  # the state is no longer the bundle's (and its bytes are let go)
        current = self.snapshot
        index = index if index is not None else current.index
        with embedding_stage("facts"):
            index = synced_index(index, graph, self.embedder)
        previous = sentence_pool if sentence_pool is not None else current.sentences
        with embedding_stage("sentences"):
            sentences = SentenceIndex.build(graph, self.embedder, previous)
        log = current.merge_log if merge_log is None else merge_log
        self.snapshot = prepared(Snapshot(graph, index, sentences, log), self.search)

    def complete(self) -> Snapshot:
        """The current snapshot, with its index and sentences made if nothing was written yet."""
        if self.snapshot.index is None or self.snapshot.sentences is None:
            with self.lock:
                if self.snapshot.index is None or self.snapshot.sentences is None:
                    self.publish(self.snapshot.graph)
        return self.snapshot

    def check_hashes(self, consequence: str, *, copied: frozenset[str] = frozenset()) -> None:
        """Check the members of the bundle this store was opened from that opening left
        unhashed (large ones, read in place), once: a save or a merge then never carries a
        damaged member's contents into another bundle under a new, matching sha256. Those
        ``copied`` by the save about to run are left to it: it hashes them as it copies them
        and refuses before its bundle is moved into place (:func:`~noema.storage.copying.copy_member`).

        Raises:
            BundleError: naming the member that does not match, then ``consequence``.
        """
        unhashed = self._unhashed
        if unhashed is not None:
            self._unhashed = unhashed.verify(consequence, copied=copied)

    def save(
        self,
        path: str | os.PathLike[str],
        *,
        settings: BundleSettings,
        name_vectors: Callable[[SemanticGraph], NameVectors],
        names_kept: bool = False,
        written: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Write the current state as a bundle at ``path``, atomically (the previous bundle
        there survives a failure), and return the manifest written. ``name_vectors`` gives the
        entity-name vectors to keep for the graph that is written; ``names_kept``: they are
        still those of the bundle this store was opened from, untouched (its names.bin can then
        be copied); ``written`` is given the manifest within the save's turn, so of two saves
        to one path the later one's is given last.

        Saves to one path take turns (:mod:`noema.storage._path_lock`): the check that the file
        there is the one this store knew, the write and the note of what it wrote are one turn,
        so two saves at once never both pass the check, and this store's own save in another
        thread is never taken for another program's.

        Where the current state is the one opened from a bundle (nothing written since), the
        members that bundle holds as this version writes them are copied from it, not made
        again (:mod:`noema.storage.copying`), after the sha256 check of :meth:`check_hashes`.

        Raises:
            BundleError: ``path`` is a bundle this store was opened from or saved to, and
                another program (another process saving the same knowledge base) has
                replaced or written it since: saving would drop what that program saved. Or
                a member of the bundle this store was opened from does not match its sha256
                (:meth:`check_hashes`).
        """
        write_target(path)  # a directory or a device is refused before a lock is made beside it
        target = Path(os.path.realpath(path))
        # made before the turn is taken: a save waiting for another never holds the writers'
        # lock meanwhile (an ingest saving under it would wait on this save's turn)
        self.complete()
        with path_locked(target):
            known, found = self._files.get(target), file_identity(target)
            # a path never opened or saved here, or nothing there now: no one's work is lost
            if known is not None and found is not None and found != known:
                raise BundleError(
                    f"{str(path)!r} was replaced by another program since this knowledge base "
                    "loaded or saved it; saving would drop what that program saved. Load it "
                    "again and repeat the changes, or save to another path"
                )
            manifest: dict[str, Any] = self._written(
                partial(write_bundle, path), settings, name_vectors, names_kept
            )
            self._files[target] = file_identity(target)
            if written is not None:
                written(manifest)
            return manifest

    def to_bytes(
        self,
        *,
        settings: BundleSettings,
        name_vectors: Callable[[SemanticGraph], NameVectors],
        names_kept: bool = False,
    ) -> bytes:
        """The bytes :meth:`save` writes."""
        return self._written(bundle_bytes, settings, name_vectors, names_kept)

    def _written(
        self,
        write: Callable[..., _T],
        settings: BundleSettings,
        name_vectors: Callable[[SemanticGraph], NameVectors],
        names_kept: bool,
    ) -> _T:
        """``write`` (the bundle writer to a file, or to bytes) called on the current state."""
        snapshot = self.complete()
        assert snapshot.index is not None
        copying = self._copying(snapshot, names_kept)
        copied = copying.members if copying is not None else frozenset()
        self.check_hashes(_NOT_WRITTEN, copied=copied)
        if copying is not None:
            self._check_agreement(snapshot, copying.source)
        names_copied = NAMES_MEMBER in copied
        written = write(
            snapshot.graph,
            snapshot.index,
            settings=settings,
            merge_log=snapshot.merge_log,
            sentences=snapshot.sentences,
            # taken only where names.bin is made: the stored names are copied out of the
            # bundle's file into the canonicalizer once taken (0.5 GB at a million facts)
            name_vectors=None if names_copied else name_vectors(snapshot.graph),
            copying=copying,
        )
        unhashed = self._unhashed
        if copied and unhashed is not None:  # each copied member matched its sha256
            self._unhashed = unhashed.without(copied)
        return written

    def _check_agreement(self, snapshot: Snapshot, source: OpenedBundle) -> None:
        """Check, once, that the members of the bundle a save copies agree with one another
        (:mod:`noema.storage._agreement`): a copy never passes on a member that opening did
        not read, as ``graph.json`` beside ``graph.columns``, unless ``validate`` would pass it.

        Raises:
            BundleError: naming the member that does not agree; or ``graph.json``, not what
                this version writes, would have to be parsed over the memory budget the bundle
                was loaded with. Nothing is written.
        """
        if source.agree is None:
            return
        # a member damaged since it was hashed (or never hashed: copied ones are hashed as
        # they are copied) is named as damaged, not as another member's disagreement
        source.agree(_NOT_WRITTEN, partial(self.check_hashes, _NOT_WRITTEN))
        opened = self._opened
        if opened is not None and opened[0] is snapshot:
            self._opened = (snapshot, replace(source, agree=None))

    def _copying(self, snapshot: Snapshot, names_kept: bool) -> Copying | None:
        """The members a save of ``snapshot`` copies from the bundle this store was opened
        from: none unless ``snapshot`` is the state opened from it (any write publishes
        another); names.bin only where the name vectors are still the bundle's."""
        opened = self._opened
        if opened is None or opened[0] is not snapshot or snapshot.index is None:
            return None
        return copy_plan(opened[1], snapshot.index, snapshot.sentences, names_kept=names_kept)

    def open(self, contents: BundleContents) -> None:
        """Make a bundle's contents the current state. A bundle's manifest and members are
        migrated as they are read (:mod:`noema.storage.bundle`); what is left is the state itself:
        fact vectors embedded from another text than today's are embedded again, never
        mixed with new ones, and a bundle from before the sentence sidecar gets one."""
        if contents.source is not None:
            path, identity = contents.source
            self._files[Path(os.path.realpath(path))] = identity
        self._unhashed = contents.unhashed
        current = contents.manifest.get("fact_rendering", NOTATION_RENDERING) == FACT_RENDERING
        if current and contents.sentences is not None:
            snapshot = Snapshot(
                contents.graph, contents.index, contents.sentences, contents.merge_log
            )
            self.snapshot = prepared(snapshot, self.search)  # faiss and numpy: nothing to pause
            if contents.opened is not None:
                self._opened = (self.snapshot, contents.opened)
            return
        index = contents.index if current else VectorIndex(contents.index.dimension)
        with self.lock:
            self.publish(contents.graph, index, contents.sentences, merge_log=contents.merge_log)


def read(
    source: str | os.PathLike[str] | bytes, *, max_memory: int | None = None, verify: bool = False
) -> BundleContents:
    """A bundle's checked contents, from its path or its bytes; ``verify``: every member
    hashed, not only the small ones."""
    with paused_gc():
        if isinstance(source, bytes):
            return read_bundle_bytes(source, max_memory=max_memory, verify=verify)
        return read_bundle(source, max_memory=max_memory, verify=verify)
