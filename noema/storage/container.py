"""The container of a bundle: a zip file written atomically, mapped into memory when read, its
members read in place or inflated as a stream within their declared size, and hashed (as they
are read, or later from the same bytes: :class:`UnhashedMembers`).

Nothing here knows what a member holds (:mod:`noema.storage.bundle` does); every failure is a
:class:`~noema.errors.BundleError` naming the bundle and the member.
"""

from __future__ import annotations

import glob
import hashlib
import io
import lzma
import mmap
import os
import stat
import struct
import tempfile
import threading
import time
import weakref
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import numpy as np
import orjson

from noema.errors import BundleError, OptionError

__all__ = [
    "MAX_MEMBER_BYTES",
    "READ_WHOLE_BELOW",
    "Blob",
    "FileCheck",
    "FileIdentity",
    "UnhashedMembers",
    "ViewFile",
    "check_hash",
    "check_streamed",
    "checked_member",
    "file_identity",
    "forget_pages",
    "in_zip",
    "load_json",
    "mapped_file",
    "member_info",
    "new_zip_info",
    "raw_view",
    "read_member",
    "write_atomically",
    "write_target",
    "zip_member",
]

# Limits checked against the zip directory before a member is inflated.
MAX_MEMBER_BYTES = 8 << 30
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
# A temporary file of a save untouched this long belongs to a save that was killed.
STALE_TEMPORARY_SECONDS = 600
_T = TypeVar("_T")
# A member's bytes: read, or a view of the bundle mapped from its file.
Blob = bytes | memoryview


def write_atomically(path: str | os.PathLike[str], write: Callable[[BinaryIO], None]) -> None:
    """Call ``write`` on a temporary file beside ``path``, then move it into place, so the
    previous file survives a failure; the new file keeps the permissions of the one it
    replaces.

    Raises:
        OptionError: ``path`` is something other than a regular file (a directory, a device,
            a pipe), or a link to one.
    """
    target = write_target(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(target)
    mode = _file_mode(target)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            # mkstemp makes the file 0600: other users and services would lose access to a
            # bundle at every save
            os.fchmod(handle.fileno(), mode)
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def write_target(path: str | os.PathLike[str]) -> Path:
    """The file a save of ``path`` replaces: through a symbolic link, the file it names (moving
    the new file over the link left its target old and the link a copy); and refused unless it
    is a regular file or nothing yet (moved over ``/dev/full``, a save as root replaced the
    device and said it had saved)."""
    target = Path(path)
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    try:
        mode = target.stat().st_mode
    except OSError:  # not there yet (or unreachable: writing it says why)
        return target
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise OptionError(f"cannot save to {str(path)!r}: it is {kind}; give a file path")
    return target


_umask_lock = threading.Lock()


def _file_mode(target: Path) -> int:
    """The permissions the written bundle gets: those of the file it replaces, else what
    ``open()`` would give a new file (0666 less the umask)."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        pass
    with _umask_lock:  # the umask can only be read by setting it
        umask = os.umask(0o077)
        os.umask(umask)
    return 0o666 & ~umask


def zip_member(
    zf: zipfile.ZipFile, name: str, data: Blob | Sequence[Blob], stored: bool
) -> tuple[int, str]:
    """Write one member into ``zf`` (open for writing) with a fixed date and mode, so the same
    bytes give the same zip; as it is when ``stored``, else deflated. ``data``: its bytes, or
    pieces written in turn (the vectors as views of their matrix, never joined into one copy).
    Returns the member's size and sha256."""
    pieces = [data] if isinstance(data, (bytes, memoryview)) else list(data)
    views = [memoryview(piece).cast("B") for piece in pieces]
    info = new_zip_info(name, sum(view.nbytes for view in views), stored)
    digest = hashlib.sha256()
    with zf.open(info, "w") as dest:
        for view in views:
            digest.update(view)
            dest.write(view)
    return info.file_size, digest.hexdigest()


def new_zip_info(name: str, size: int, stored: bool) -> zipfile.ZipInfo:
    """The zip entry of a member of ``size`` bytes as a save writes it: a fixed date and mode,
    so the same bytes give the same zip; stored as it is, or deflated."""
    info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
    # float32 vectors barely compress: stored as they are, they open without inflating a
    # gigabyte and a half at a million facts
    info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    # known before the first byte, as ZipFile.writestr sets it: the same header, and zip64
    # where the member needs it
    info.file_size = size
    return info


def _remove_stale_temporaries(target: Path) -> None:
    """Delete temporary files an earlier save of ``target`` left when it was killed. A save in
    progress writes to its file all the time, so only files untouched for a while are taken."""
    cutoff = time.time() - STALE_TEMPORARY_SECONDS
    for leftover in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        try:
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()
        except OSError:
            pass  # gone already, or not ours to remove: the save itself does not depend on it


# A bundle up to this size is read into memory when opened rather than mapped from its file:
# another program rewriting the file in place (cp, rsync --inplace, truncate) then changes
# nothing the knowledge base reads, at the cost of memory a small bundle hardly takes. A larger
# one is mapped, and checked before each read (see FileCheck).
READ_WHOLE_BELOW = 64 << 20

# What a write in place changes in the file's status. Not the inode (the mapping holds its own
# inode whatever the path names later), and not the change time: it moves when the file is
# renamed, linked, made readable to others or unlinked by a save moving a new file over it,
# none of which changes a byte; a program that writes and then sets the modification time back
# (touch -r) is not seen.
_Signature = tuple[int, int]


def _signature(fd: int) -> _Signature:
    status = os.fstat(fd)
    return status.st_size, status.st_mtime_ns


class FileCheck:
    """Refuses, as :class:`BundleError`, any further read of a bundle mapped from its file once
    another program has written the file in place (its size or modification time moved since it
    was mapped). Checked before every read of the mapped rows: one ``fstat`` of the mapped file,
    about a microsecond, where copying the vectors out at opening would take their size in
    memory (1.5 GB at a million facts), and a private mapping would not help: its pages show
    the file's later writes until written to, and a truncated file is SIGBUS either way."""

    def __init__(self, fd: int, name: str) -> None:
        self._fd = fd  # the mapped file, whatever file the path names later
        self._name = name
        self._signature = _signature(fd)
        weakref.finalize(self, os.close, fd)

    def __call__(self) -> None:
        """Raises :class:`BundleError` when the file was written since it was mapped."""
        if _signature(self._fd) != self._signature:
            raise BundleError(
                f"{self._name!r} was changed on disk by another program after it was opened "
                "(written in place: cp, rsync --inplace, truncate); its vectors can no longer be "
                "read from it. Load it again"
            )


# Which file a path names and what it holds, as far as its status says: a save moving another
# file over the path changes the device or inode, a write in place the size or modification time.
FileIdentity = tuple[int, int, int, int]


def file_identity(path: str | os.PathLike[str]) -> FileIdentity | None:
    """What :data:`FileIdentity` says of the file at ``path`` (through links); ``None`` when
    there is none."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


def mapped_file(path: Path) -> tuple[memoryview, FileCheck | None] | None:
    """The file's bytes: read whole up to :data:`READ_WHOLE_BELOW` bytes, else mapped into
    memory (read-only), so stored members are read in place: nothing is copied, and only the
    pages read are loaded; with the check to call before reading a mapped file again. ``None``
    where it cannot be mapped (an empty file, a file system without mmap) and on Windows, where
    a mapped file cannot be replaced and a save over the bundle that was opened would fail."""
    if os.name == "nt":
        return None
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if 0 < size < READ_WHOLE_BELOW:
                return memoryview(handle.read()), None
            view = memoryview(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))
            return view, FileCheck(os.dup(handle.fileno()), str(path))
    except (OSError, ValueError):
        return None


def in_zip(source: Any, name: str, read: Callable[[zipfile.ZipFile], _T]) -> _T:
    """``read`` on the opened zip, its failures as :class:`BundleError`."""
    try:
        with zipfile.ZipFile(source) as zf:
            return read(zf)
    except BundleError:
        raise
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        EOFError,
        OSError,
        NotImplementedError,
        RuntimeError,  # an encrypted member: zipfile asks for a password
    ) as exc:
        raise BundleError(f"{name!r} is not a readable .noema bundle: {exc}") from exc


def member_info(zf: zipfile.ZipFile, member: str, name: str) -> zipfile.ZipInfo:
    try:
        return zf.getinfo(member)
    except KeyError:
        raise BundleError(f"{name!r} has no {member}; it is not a complete .noema bundle") from None


def checked_member(
    zf: zipfile.ZipFile, member: str, size: int, digest: str, name: str, mapped: memoryview | None
) -> Blob:
    """The member's bytes, refused unless they are the size and sha256 the manifest declares."""
    blob = read_member(zf, member, min(MAX_MEMBER_BYTES, size), name, mapped)
    if len(blob) != size or hashlib.sha256(blob).hexdigest() != digest:
        raise BundleError(
            f"{name!r}: {member} does not match its sha256 in the manifest (corrupt or altered)"
        )
    return blob


def check_hash(
    zf: zipfile.ZipFile, member: str, size: int, digest: str, name: str, mapped: memoryview | None
) -> None:
    """``member`` against its declared size and sha256, nothing kept: hashed in place where it
    is stored in ``mapped`` (its pages released as they are hashed), else inflated a mebibyte at
    a time."""
    info = member_info(zf, member, name)
    if mapped is None or info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 1:
        check_streamed(zf, member, size, digest, name)
        return
    _check_declared_size(info, size, name)
    view = raw_view(mapped, info, name)
    hasher = hashlib.sha256()
    for start in range(0, len(view), _HASH_STEP):
        block = view[start : start + _HASH_STEP]
        hasher.update(block)
        forget_pages(mapped, block)
    if len(view) != size or hasher.hexdigest() != digest:
        raise BundleError(
            f"{name!r}: {member} does not match its sha256 in the manifest (corrupt or altered)"
        )


# Hashed a block at a time, each block's pages released before the next: hashing the members a
# million-fact bundle maps would otherwise hold its 6 GB resident.
_HASH_STEP = 64 << 20


def check_streamed(zf: zipfile.ZipFile, member: str, size: int, digest: str, name: str) -> None:
    """``member`` against its declared size and sha256, inflated a mebibyte at a time."""
    info = member_info(zf, member, name)
    _check_declared_size(info, size, name)
    hasher, seen = hashlib.sha256(), 0
    with _inflating(member, name), zf.open(info) as handle:
        while chunk := handle.read(1 << 20):
            seen += len(chunk)
            if seen > size:
                raise BundleError(f"{name!r}: {member} is larger than its declared size")
            hasher.update(chunk)
    if seen != size or hasher.hexdigest() != digest:
        raise BundleError(
            f"{name!r}: {member} does not match its sha256 in the manifest (corrupt or altered)"
        )


def _check_declared_size(info: zipfile.ZipInfo, size: int, name: str) -> None:
    if info.file_size != size:
        raise BundleError(
            f"{name!r}: {info.filename} holds {info.file_size} bytes, the manifest declares {size}"
        )


def read_member(
    zf: zipfile.ZipFile, member: str, limit: int, name: str, mapped: memoryview | None = None
) -> Blob:
    """The member's bytes: a view of ``mapped`` (the whole bundle, in memory or mapped from its
    file) where the member is stored as it is, else inflated."""
    info = member_info(zf, member, name)
    if info.file_size > limit:
        raise BundleError(
            f"{name!r}: {member} declares {info.file_size} bytes, more than the {limit} allowed"
        )
    if mapped is not None and info.compress_type == zipfile.ZIP_STORED and not info.flag_bits & 1:
        return raw_view(mapped, info, name)
    # No compression-ratio test: a graph of repetitive text deflates far beyond any fixed ratio
    # and is still ours. The limit is the size the manifest declares (or a fixed cap), and the
    # member is inflated as a stream that stops one byte past it.
    with _inflating(member, name), zf.open(info) as handle:
        blob = handle.read(limit + 1)
    if len(blob) > limit:
        raise BundleError(f"{name!r}: {member} is larger than its declared size")
    return blob


@contextmanager
def _inflating(member: str, name: str) -> Iterator[None]:
    """Errors of a member's compressed stream as :class:`BundleError`: the zip directory may
    name a method its bytes were not written with (a stored member said to be deflated gave
    zlib.error), or the stream may be damaged."""
    try:
        yield
    except (zlib.error, lzma.LZMAError, EOFError, OSError, zipfile.BadZipFile) as exc:
        raise BundleError(
            f"{name!r}: {member} cannot be read with the compression its zip entry names "
            f"({type(exc).__name__}: {exc}); the bundle is damaged"
        ) from None


def forget_pages(mapped: memoryview | None, view: Blob) -> None:
    """Take a mapped member's pages, once read and no longer needed, out of this process's
    resident memory (they stay in the system's file cache, and a later read maps them again):
    at a million facts index.faiss, graph.columns and names.bin are 2.3 GB that opening reads
    whole and then never touches again."""
    if mapped is None or not isinstance(view, memoryview) or not isinstance(mapped.obj, mmap.mmap):
        return
    if not hasattr(mmap, "MADV_DONTNEED") or len(view) == 0:
        return
    start = np.frombuffer(view, np.uint8).ctypes.data - np.frombuffer(mapped, np.uint8).ctypes.data
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE  # only pages wholly inside the member
    end = (start + len(view)) // mmap.PAGESIZE * mmap.PAGESIZE
    if end > first:
        mapped.obj.madvise(mmap.MADV_DONTNEED, first, end - first)


_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # a zip member's local header (zipfile's own)


def raw_view(mapped: memoryview, info: zipfile.ZipInfo, name: str) -> memoryview:
    """A member's bytes as they lie within the whole bundle's (a stored member's bytes, or a
    deflated one's stream), found from its local header as zipfile finds them (no CRC: the
    member's sha256 is checked instead)."""
    at = info.header_offset
    if at + _LOCAL_HEADER.size > len(mapped):
        raise BundleError(f"{name!r}: {info.filename} lies past the end of the file (truncated?)")
    fields = _LOCAL_HEADER.unpack_from(mapped, at)
    signature, name_length, extra_length = fields[0], fields[-2], fields[-1]
    start = at + _LOCAL_HEADER.size + name_length + extra_length
    if signature != b"PK\x03\x04" or bytes(
        mapped[at + _LOCAL_HEADER.size : at + _LOCAL_HEADER.size + name_length]
    ) != info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437"):
        raise BundleError(f"{name!r}: {info.filename}'s local header is damaged")
    if start + info.compress_size > len(mapped):
        raise BundleError(f"{name!r}: {info.filename} lies past the end of the file (truncated?)")
    return mapped[start : start + info.compress_size]


def load_json(blob: Blob, member: str, name: str) -> dict[str, Any]:
    try:
        # orjson parses graph.json about 3x faster than the standard library (see
        # benchmarks/scale.py); both give the same objects for what write_bundle writes
        value = orjson.loads(blob)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BundleError(f"{name!r}: {member} is not valid UTF-8 JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise BundleError(f"{name!r}: {member} must hold a JSON object, not {type(value).__name__}")
    return value


@dataclass(frozen=True)
class UnhashedMembers:
    """Members a bundle was opened without hashing, and the bytes it was opened from, to hash
    them later: ``mapped`` (the bundle in memory, or mapped from its file and then ``check`` says
    whether the file was written in place since) is what the knowledge base reads, whatever
    file its path names now. ``members``: each member's name, declared size and sha256.
    ``then``: checks of what those members hold that hash their contents as well, run once the
    hashes match (each raises :class:`BundleError`)."""

    name: str  # what error messages call the bundle
    mapped: memoryview
    check: Callable[[], None] | None
    members: tuple[tuple[str, int, str], ...]
    then: tuple[Callable[[], None], ...] = ()

    def verify(
        self, consequence: str, *, copied: frozenset[str] = frozenset()
    ) -> UnhashedMembers | None:
        """Hash every member but ``copied``, each against what the manifest declares, then run
        :attr:`then`; return the members left unhashed (``copied``, which a save hashes as it
        copies them and refuses before its bundle is moved into place: hashed here too, each
        was read twice), or ``None``. Where a check of :attr:`then` fails, ``copied`` are
        hashed before it is reported, so a damaged member is named as damaged.

        Raises:
            BundleError: naming the first member whose bytes do not match, with
                ``consequence`` (what was not done) after the reason; or the file was written
                in place since it was opened.
        """
        if self.check is not None:
            self.check()

        def hash_all(zf: zipfile.ZipFile, skipped: frozenset[str]) -> None:
            for member, size, digest in self.members:
                if member not in skipped:
                    check_hash(zf, member, size, digest, self.name, self.mapped)

        try:
            in_zip(ViewFile(self.mapped), self.name, partial(hash_all, skipped=copied))
            try:
                for check in self.then:
                    check()
            except BundleError:  # the copied ones, hashed: damage is named as damage
                hashed = frozenset(member for member, _, _ in self.members) - copied
                in_zip(ViewFile(self.mapped), self.name, partial(hash_all, skipped=hashed))
                raise
        except BundleError as exc:
            raise BundleError(f"{exc}; {consequence}") from None
        return self.without(frozenset(m for m, _, _ in self.members) - copied)

    def without(self, hashed: frozenset[str]) -> UnhashedMembers | None:
        """These members but ``hashed`` (and :attr:`then`, run), or ``None`` where none is
        left."""
        left = tuple(entry for entry in self.members if entry[0] not in hashed)
        return replace(self, members=left, then=()) if left else None


class ViewFile(io.RawIOBase):
    """Bytes already in memory or mapped, read as a file (zipfile reads the directory and
    inflates members from it) without copying them, as ``io.BytesIO`` would."""

    def __init__(self, view: memoryview) -> None:
        super().__init__()
        self._view = view
        self._at = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._at

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._at, io.SEEK_END: len(self._view)}[whence]
        if base + offset < 0:
            raise OSError(f"cannot seek to {base + offset}")
        self._at = base + offset
        return self._at

    def readinto(self, buffer: Any) -> int:
        chunk = self._view[self._at : self._at + len(buffer)]
        memoryview(buffer).cast("B")[: len(chunk)] = chunk
        self._at += len(chunk)
        return len(chunk)
