"""A save of a knowledge base that still holds what its bundle held, made by copying the
bundle's members instead of making them again.

Opening a bundle keeps the bytes it was read from (:class:`OpenedBundle`: the file mapped into
memory, or the bundle read whole) and which of its members this version writes the same way:

- none of a bundle of an older schema (its members are made again, as the format now writes
  them);
- a member stored or deflated as this version stores it, and not encrypted;
- ``graph.columns`` of :data:`~noema.storage.columns.COLUMNS_VERSION` holding the sidecar's
  sentences as this version describes them (a member of version 1 is made again);
- ``sentences.bin`` and ``sentences.ivf`` where the sidecar was read (embedded as this version
  embeds sentences), ``names.bin`` where the name vectors were read, ``sentences.words`` where
  the word index was read (scored as this version scores).

While nothing has been written since (:class:`~noema.storage.store.Store` has published no
other snapshot), a save copies each of those members as it lies in the zip (:func:`copy_member`;
names.bin only while the canonicalizer has not taken the stored names): its stored bytes or its
deflated stream, a block at a time, each block's pages released once written, under the zip
entry a fresh save writes for it; nothing is deflated or made from the graph. Saving an opened
million-fact base again took 37 s and 0.15 GB of memory beyond what opening held, where making
every member took about 3 minutes and 3.7 GB (measured before the agreement check below was
added, which streams the graph as graph.json once more). The members checked to agree with one
another first (once: :mod:`noema.storage._agreement`, so a copying save refuses what ``noema
validate`` refuses), and a file written in place since it was mapped is refused
(:class:`~noema.storage.container.FileCheck`). Each member copied is hashed as it is copied (a
deflated one inflated for it, a mebibyte of its stream at a time), from the very bytes written,
and a save whose copies do not match the manifest it writes is refused before it is moved into
place: a member damaged before opening, or a file written in place with its size and
modification time kept, is seen there, not in a bundle that would not open. The members opening
did not hash and the save does not copy are hashed before anything is written
(:meth:`~noema.storage.store.Store.check_hashes`). graph.json is copied as the bundle holds it
although opening read the graph from graph.columns: the agreement check found it the same
graph.

What is copied is what a fresh save writes: the same bytes for each member, so the same size
and sha256 in a manifest written as a fresh save writes it (this Noema's version and settings),
and the same zip entry byte for byte. One exception: the deflated ``graph.json`` keeps the
stream the bundle was written with, the one this Noema writes where the same zlib deflated it,
else another stream of the same bytes, read identically (its sha256 is of the inflated bytes).
A member that is not copied is made as before.
"""

from __future__ import annotations

import hashlib
import struct
import zipfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from noema.errors import BundleError
from noema.storage._column_write import COLUMNS_VERSION, MAGIC
from noema.storage.container import forget_pages, member_info, new_zip_info, raw_view
from noema.storage.manifest import SCHEMA_VERSION, declared_entry
from noema.storage.members import (
    COLUMNS_MEMBER,
    FACTS_IVF_MEMBER,
    MEMBERS,
    NAMES_MEMBER,
    SENTENCES_IVF_MEMBER,
    SENTENCES_MEMBER,
    WORDS_MEMBER,
    Opening,
)

if TYPE_CHECKING:
    from noema.vectors.index import VectorIndex
    from noema.vectors.sentences import SentenceIndex

__all__ = ["Copying", "OpenedBundle", "copy_member", "copy_plan", "opened_bundle"]

# Copied a block at a time, each block's pages of the mapped file released before the next.
_COPY_STEP = 64 << 20
# A deflated member is inflated (to hash what it holds) at most this much at a time.
_INFLATE_STEP = 1 << 20
# graph.columns starts with its magic and its version (noema.storage.columns).
_COLUMNS_PREFIX = struct.Struct("<8sI")


@dataclass(frozen=True)
class OpenedBundle:
    """The bytes a bundle was opened from and the members a save may copy from them.

    ``mapped``: the bundle's bytes, in memory or mapped from its file (then ``check`` refuses
    them once the file was written in place). ``manifest``: as the bundle declares it (each
    member's size and sha256, and what the sidecar and the names declare). ``members``: the
    zip entry of each member this version writes the same way. ``agree``: the check that the
    members agree with one another (:mod:`noema.storage._agreement`), to run before the first
    copy, given what a refusal says after its reason and what refuses a damaged member first;
    ``None`` once run (or where opening ran it).
    """

    name: str  # what error messages call the bundle
    mapped: memoryview
    check: Callable[[], None] | None
    manifest: dict[str, Any]
    members: Mapping[str, zipfile.ZipInfo]
    agree: Callable[[str, Callable[[], None]], None] | None = None


@dataclass(frozen=True)
class Copying:
    """What a save copies: ``members`` of ``source``. ``empty``: members the source does not
    hold and the state has nothing for (an approximate index neither kept nor built), so
    nothing is made for them either. The others are made."""

    source: OpenedBundle
    members: frozenset[str]
    empty: frozenset[str] = frozenset()


def copy_plan(
    source: OpenedBundle,
    index: VectorIndex,
    sentences: SentenceIndex | None,
    *,
    names_kept: bool,
) -> Copying:
    """What a save of the state opened from ``source`` (its fact index and sidecar as they are
    now) copies: every member ``source`` holds as it would be written, but names.bin unless
    ``names_kept`` (the name vectors are still those it held)."""
    copied = set(source.members)
    if not names_kept:
        copied.discard(NAMES_MEMBER)
    # an approximate index the bundle did not keep is made where opening trained one
    built = {
        FACTS_IVF_MEMBER: index.approximate,
        SENTENCES_IVF_MEMBER: sentences is not None and sentences.vectors.approximate,
    }
    declared = source.manifest["members"]
    empty = {member for member, made in built.items() if member not in declared and not made}
    return Copying(source, frozenset(copied), frozenset(empty))


def opened_bundle(opening: Opening, written_schema: int) -> OpenedBundle | None:
    """What a save of the state ``opening`` read may copy; ``None`` where it has no bytes to
    copy from (a bundle read member by member) or was written with an older schema."""
    if opening.mapped is None or written_schema != SCHEMA_VERSION:
        return None
    members: dict[str, zipfile.ZipInfo] = {}
    for member in MEMBERS:
        if member.name not in opening.declared or not _as_written(opening, member.name):
            continue
        info = member_info(opening.zf, member.name, opening.name)
        method = zipfile.ZIP_STORED if member.stored else zipfile.ZIP_DEFLATED
        if info.compress_type == method and not info.flag_bits & 1:  # bit 0: encrypted
            members[member.name] = info
    return OpenedBundle(opening.name, opening.mapped, opening.check, opening.manifest, members)


def _as_written(opening: Opening, member: str) -> bool:
    """Whether this version writes ``member`` of the state read as the bundle holds it."""
    if member == COLUMNS_MEMBER:
        blob = opening.blobs.get(COLUMNS_MEMBER)
        if blob is None or len(blob) < _COLUMNS_PREFIX.size:
            return False
        magic, version = _COLUMNS_PREFIX.unpack_from(blob)
        # the sidecar's sentences are in it only where they were embedded as this version does
        return (magic, version) == (MAGIC, COLUMNS_VERSION) and opening.core.stored is not None
    if member in (SENTENCES_MEMBER, SENTENCES_IVF_MEMBER):
        return opening.sentences is not None  # else embedded another way, and made again
    if member == NAMES_MEMBER:
        return opening.name_vectors is not None
    if member == WORDS_MEMBER:
        return opening.words_digest is not None  # else scored another way, and made again
    return True


def copy_member(zf: zipfile.ZipFile, source: OpenedBundle, member: str) -> tuple[int, str]:
    """Write ``member`` of ``source`` into ``zf`` (open for writing, to a seekable file, with no
    member open) as it lies in the source zip, under the entry :func:`zip_member` would write
    for it, and return its size and sha256 as the source declares them.

    What is written is hashed as it is written (a deflated member inflated for it, a block at a
    time): the hashes checked before the copy were of the file as it was then, and a file
    written in place with its size and time kept (``touch -r``) is not seen by
    :class:`~noema.storage.container.FileCheck`; such a copy is refused here, before the save
    is moved into place, rather than published in a bundle that would not open.

    zipfile has no call that writes a member's stream as it is, so this does what
    ``ZipFile.open(info, "w")`` and its ``close`` do, with the CRC and sizes known first: the
    local header, the bytes, then the entry in the directory ``close`` writes.

    Raises:
        BundleError: the bytes copied are not the member's declared size and sha256.
    """
    found = source.members[member]
    stored = found.compress_type == zipfile.ZIP_STORED
    raw = raw_view(source.mapped, found, source.name)
    size, digest = declared_entry(source.manifest["members"], member, source.name)
    info = new_zip_info(member, found.file_size, stored)
    info.CRC, info.compress_size, info.flag_bits = found.CRC, len(raw), 0
    zip64 = info.file_size * 1.05 > zipfile.ZIP64_LIMIT  # as ZipFile.open(info, "w") decides
    handle = zf.fp
    # the header is written before the bytes, and again where the CRC differs: as zipfile
    # writes to a file it can seek in (a file or a buffer, as every save writes to)
    assert handle is not None and handle.seekable(), "a zip open for writing to a seekable file"
    handle.seek(zf.start_dir)
    info.header_offset = handle.tell()
    handle.write(info.FileHeader(zip64))
    content = _CopiedContent(source.name, member, size, inflate=not stored)
    for start in range(0, len(raw), _COPY_STEP):
        view = raw[start : start + _COPY_STEP]
        block = bytes(view)  # read once from the file: what is hashed is what is written
        content.update(block)
        handle.write(block)
        del block
        forget_pages(source.mapped, view)
    content.check(digest)
    end = handle.tell()
    # the CRC of the bytes copied, as a fresh save's is (opening reads stored members in place,
    # past their CRC)
    if content.crc != info.CRC:
        info.CRC = content.crc
        handle.seek(info.header_offset)
        handle.write(info.FileHeader(zip64))
        handle.seek(end)
    zf.start_dir = end
    zf.filelist.append(info)
    zf.NameToInfo[member] = info
    zf._didModify = True  # type: ignore[attr-defined]
    return size, digest


class _CopiedContent:
    """The size, sha256 and CRC-32 of a member's content as its stored bytes or deflated stream
    are copied, a block at a time (a stream inflated a mebibyte at a time, and refused once
    past the declared size)."""

    def __init__(self, name: str, member: str, size: int, *, inflate: bool) -> None:
        self._name, self._member, self._size = name, member, size
        self._inflater = zlib.decompressobj(-zlib.MAX_WBITS) if inflate else None
        self._hasher = hashlib.sha256()
        self.crc = 0
        self._seen = 0

    def update(self, block: bytes) -> None:
        inflater = self._inflater
        if inflater is None:
            self._take(block)
            return
        view = memoryview(block)
        try:
            # fed a mebibyte at a time: the input left over from a call is copied for the next
            # (unconsumed_tail), and a whole block left over was copied again at every step
            for start in range(0, len(view), _INFLATE_STEP):
                pending: bytes | memoryview = view[start : start + _INFLATE_STEP]
                while True:
                    out = inflater.decompress(pending, _INFLATE_STEP)
                    self._take(out)
                    pending = inflater.unconsumed_tail
                    if not pending and len(out) < _INFLATE_STEP:
                        break
        except zlib.error as exc:
            self._refuse(f"its stream does not inflate ({exc})")

    def check(self, digest: str) -> None:
        """Raises :class:`BundleError` unless the content was whole, of the declared size and
        of sha256 ``digest``."""
        inflater = self._inflater
        if inflater is not None:
            self._take(inflater.flush())
            if not inflater.eof or inflater.unused_data:
                self._refuse("its stream does not end where its zip entry says")
        if self._seen != self._size or self._hasher.hexdigest() != digest:
            self._refuse("the bytes copied hash to another sha256, or are fewer")

    def _take(self, content: bytes) -> None:
        self._seen += len(content)
        if self._seen > self._size:
            self._refuse("it is larger than its declared size")
        self._hasher.update(content)
        self.crc = zlib.crc32(content, self.crc)

    def _refuse(self, why: str) -> NoReturn:
        # the save hashes a copied member only here: damaged before opening, or since
        raise BundleError(
            f"{self._name!r}: {self._member} does not match its sha256 in the manifest as it "
            f"is copied ({why}): damaged, or its file written in place since it was opened, "
            "its size and modification time kept; nothing was written. Load it again, or "
            "restore the bundle from a copy"
        )
