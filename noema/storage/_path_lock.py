"""Saves to one path in turn: an advisory lock on a file beside the bundle.

A save checks that the file at its path is still the one its knowledge base loaded or last
saved, writes the new bundle and notes what it wrote. Two saves to one path at once (two
processes, two knowledge bases, or two threads saving one) each passed the check before either
had written, and both said they had saved while one's documents were lost; or one took the
other's new file for another program's. :func:`path_locked` makes the whole save one turn: it
holds an exclusive ``flock`` on ``.NAME.lock`` beside the bundle (a lock of each open file, so
two threads of one process exclude each other too), released when the save returns or fails, or
by the system when the process dies. Only Noema's saves take it: another program writing the
file is seen by the check, as before.

On POSIX the lock file is removed by the save holding it, so none is left beside a bundle. A save
that was waiting on the removed file finds that the path no longer names the file it locked, and
locks the file there now instead (the usual protocol: a lock is held on the file the path names).
A removal that fails is let be (the next save locks the file left, as any other): it never hides
whether the save itself succeeded. The lock file is opened without following a symbolic link, so
one put in its place makes no file where it points. On Windows (``msvcrt.locking`` on its first
byte) the empty lock file stays beside the bundle: Windows does not remove a file another
process holds open, and a save waiting on it would lock a file no longer named.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

__all__ = ["lock_path", "path_locked"]


def lock_path(target: Path) -> Path:
    """The lock file of saves to ``target``: hidden, beside it, as its temporary files are."""
    return target.parent / f".{target.name}.lock"


if sys.platform == "win32":  # pragma: no cover - the tests run on POSIX
    import msvcrt

    # what LK_LOCK raises once it has retried for about ten seconds while another holds it
    _HELD = frozenset({errno.EDEADLOCK, errno.EACCES})

    def _lock(fd: int) -> None:
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                return
            except OSError as exc:
                if exc.errno not in _HELD:  # not a held lock: waiting would never end
                    raise

    def _unlock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

    _REMOVED_WHEN_RELEASED = False  # Windows does not remove a file another process holds open

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)  # waits (the interpreter lock released meanwhile)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

    _REMOVED_WHEN_RELEASED = True


_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)  # not on Windows


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


@contextmanager
def path_locked(target: Path) -> Iterator[None]:
    """Hold the lock of saves to ``target`` (a resolved path; its folder is made if missing,
    as a save makes it), waiting for a save holding it to finish.

    Raises:
        OSError: the lock file cannot be made (a folder that cannot be written, where the save
            could not write its bundle either), or its path is a symbolic link.
    """
    lock = lock_path(target)
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        # a symbolic link put at the lock's path is refused (ELOOP), not followed
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | _NO_FOLLOW, 0o666)
        try:
            _lock(fd)
        except BaseException:
            os.close(fd)
            raise
        if not _REMOVED_WHEN_RELEASED or _same_file(fd, lock):
            break
        os.close(fd)  # removed by the save that held it: lock the file the path names now
    try:
        yield
    finally:
        try:
            if _REMOVED_WHEN_RELEASED:
                # while held: no other save holds this file. Left where it cannot be removed:
                # the save's own result (or error) is what the caller hears
                with suppress(OSError):
                    lock.unlink(missing_ok=True)
            _unlock(fd)
        finally:
            os.close(fd)
