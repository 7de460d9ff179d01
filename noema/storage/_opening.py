"""A bundle being read: where its members come from (the zip, or the bytes mapped from its file),
which of them are hashed as they are read and which only later, and the graph and fact index
that every later member is read against.

Apart from :mod:`noema.storage.members` because the table says what each member is and how it is
written and read, and this is the state those readers share: the hash policy and the checks it
defers are the same for every member, whatever the member holds.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from noema.errors import BundleError
from noema.model.graph import SemanticGraph
from noema.model.records import MergeRecord
from noema.storage.container import (
    MAX_MEMBER_BYTES,
    Blob,
    check_hash,
    checked_member,
    member_info,
    read_member,
)
from noema.storage.manifest import declared_entry
from noema.storage.names import StoredNames
from noema.vectors.index import VectorIndex
from noema.vectors.sentences import SentenceIndex, StoredSentences

__all__ = ["COLUMNS_MEMBER", "HASHED_ON_OPENING_BYTES", "Core", "Opening", "named"]

COLUMNS_MEMBER = "graph.columns"

# Members up to this size are hashed on every opening; larger ones (vectors, columns) only by
# load(verify=True), `noema validate` and before they go into another bundle. Structure checks
# guard against hostile bundles (their writer writes the manifest too); the hash catches damage.
# Hashing every member cost 3.1 s warm, about 45 s cold, at a million facts; 1 MiB hashes in ~1 ms.
HASHED_ON_OPENING_BYTES = 1 << 20


@dataclass(frozen=True)
class Core:
    """What every other member is read against: the graph and the fact index."""

    graph: SemanticGraph
    merge_log: tuple[MergeRecord, ...]
    index: VectorIndex
    dimension: int
    stored: StoredSentences | None  # the sidecar's sentences where graph.columns holds them


@dataclass
class Opening:
    """A bundle being read: where its members come from, and what the members read so far."""

    zf: zipfile.ZipFile
    name: str  # what error messages call the bundle
    manifest: dict[str, Any]
    max_memory: int | None
    mapped: memoryview | None  # the bundle's bytes, in memory or mapped from its file
    check: Callable[[], None] | None  # what the indexes call before reading a mapped file again
    verified: bool = False  # every member's sha256 checked before any was read
    blobs: dict[str, Blob] = field(default_factory=dict)  # the members index.faiss builds from
    unhashed: list[str] = field(default_factory=list)  # read without their sha256 checked
    # checks of what unhashed members hold that hash their contents too, run with their sha256
    deferred: list[Callable[[], None]] = field(default_factory=list)
    spent: list[Blob] = field(default_factory=list)  # read, checked, and needed no more
    built: Core | None = None
    sentences: SentenceIndex | None = None
    name_vectors: StoredNames | None = None
    # the digest of the sentence keys sentences.words was written for, where it was read
    words_digest: bytes | None = None

    @property
    def declared(self) -> dict[str, Any]:
        members: dict[str, Any] = self.manifest["members"]
        return members

    @property
    def columnar(self) -> bool:
        """The graph is read from graph.columns (graph.json is then only hashed)."""
        return COLUMNS_MEMBER in self.declared

    @property
    def core(self) -> Core:
        assert self.built is not None, "index.faiss builds the core before any later member"
        return self.built

    def hash_now(self, member: str, size: int) -> bool:
        """Whether ``member`` (``size`` bytes) is to be hashed as it is read: unless ``verified``
        hashed it already, when it is small (:data:`HASHED_ON_OPENING_BYTES`) or there are no
        bytes to hash it from later (a bundle not mapped is inflated member by member, each
        checked by the zip's CRC-32 anyway). Else it is listed in ``unhashed``."""
        if self.verified:
            return False
        if self.mapped is None or size <= HASHED_ON_OPENING_BYTES:
            return True
        self.unhashed.append(member)
        return False

    def fetch(self, member: str) -> Blob:
        """The member's bytes, checked against its declared size, and its sha256 where
        :meth:`hash_now` says so."""
        size, digest = declared_entry(self.declared, member, self.name)
        if self.hash_now(member, size):
            return checked_member(self.zf, member, size, digest, self.name, self.mapped)
        blob = read_member(self.zf, member, min(MAX_MEMBER_BYTES, size), self.name, self.mapped)
        if len(blob) != size:
            raise BundleError(
                f"{self.name!r}: {member} holds {len(blob)} bytes, the manifest declares {size}"
            )
        return blob

    def check_unread(self, member: str) -> None:
        """A member opening does not read (graph.json beside graph.columns): its size in the
        zip directory, and its sha256 (as a stream) where :meth:`hash_now` says so."""
        size, digest = declared_entry(self.declared, member, self.name)
        if self.hash_now(member, size):
            check_hash(self.zf, member, size, digest, self.name, self.mapped)
        elif (stored := member_info(self.zf, member, self.name).file_size) != size:
            raise BundleError(
                f"{self.name!r}: {member} holds {stored} bytes, the manifest declares {size}"
            )

    def checks_now(self, member: str) -> bool:
        """Whether what ``member`` holds is checked in full as it is read: where its sha256 was
        checked (on opening, or by ``verified`` first). A large member read without its hash
        has such checks (every vector of unit length) run with its hash instead, by
        :meth:`defer`: opening checks the structure of what it reads, not every byte of it."""
        return member not in self.unhashed

    def defer(self, member: str, check: Callable[[], None]) -> None:
        """Run ``check`` of what ``member`` holds once its sha256 is checked (before its
        contents go into another bundle), its failure naming the bundle and the member."""
        self.deferred.append(named(check, self.name, member))

    def keep(self, member: str) -> None:
        """Fetch ``member`` and keep it for index.faiss, which builds the graph and the fact
        index from it."""
        self.blobs[member] = self.fetch(member)


def named(check: Callable[[], None], name: str, member: str = "") -> Callable[[], None]:
    """``check``, its :class:`BundleError` naming the bundle (and the member, if given)."""
    where = f"{name!r}: {member}: " if member else f"{name!r}: "

    def named() -> None:
        try:
            check()
        except BundleError as exc:
            raise BundleError(f"{where}{exc}") from None

    return named
