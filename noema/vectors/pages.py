"""How the kernel is told a bundle's mapped vectors will be read.

A search through the approximate index re-scores a few hundred rows spread over the whole file.
By default a page fault on a mapped file also reads the pages around it (128 KiB for a row of
1.5 KiB), so from a cold disk the first retrieval at a million facts read over a hundred times
the bytes it used (1.5 s; 0.4 s with the rows marked as read at random). Marked so, a read of
every row in order (a copy, a check, a save) would fault page by page instead (21 s instead of
1.4 s for 1.4 GB): such a read marks the rows as read in order first.

Advice only: nothing here changes what is read, and where the rows are not a mapped file (bytes
in memory, a matrix made by a write) or the platform has no ``madvise`` it does nothing.
"""

from __future__ import annotations

import mmap
from typing import Any, TypeVar

import numpy as np

__all__ = ["read_at_random", "read_in_order"]

_Rows = TypeVar("_Rows")


def _advise(rows: Any, advice: int | None) -> bool:
    """Give ``advice`` for the pages of ``rows`` (an array viewing a mapped file); whether it
    was given."""
    owner = rows
    while isinstance(owner, np.ndarray):
        owner = owner.base
    mapping = owner.obj if isinstance(owner, memoryview) else owner
    if advice is None or not isinstance(mapping, mmap.mmap) or rows.nbytes == 0:
        return False
    try:
        start = rows.ctypes.data - np.frombuffer(mapping, np.uint8).ctypes.data
    except ValueError:  # the mapping is closed
        return False
    first = start // mmap.PAGESIZE * mmap.PAGESIZE
    if not 0 <= first < start + rows.nbytes <= len(mapping):
        return False
    try:
        mapping.madvise(advice, first, start + rows.nbytes - first)
    except (OSError, ValueError):
        return False
    return True


def read_at_random(rows: Any) -> bool:
    """Mark the pages of ``rows`` as read a row here and there: a fault reads its page alone.
    Returns whether they were marked (only a mapped file is)."""
    return _advise(rows, getattr(mmap, "MADV_RANDOM", None))


def read_in_order(rows: _Rows) -> _Rows:
    """Mark the pages of ``rows`` as read as usual (a fault reads ahead), before every row is
    read in order; returns ``rows``."""
    _advise(rows, getattr(mmap, "MADV_NORMAL", None))
    return rows
