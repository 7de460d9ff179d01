"""Pausing Python's cyclic garbage collector while a large structure is built.

Opening a bundle or copying a large graph creates millions of small objects (records, mentions,
dicts, tuples) and frees almost none: every collection the allocations trigger walks a growing
heap and finds nothing, and the full collections walk all of it. Measured on a 100,000-fact
bundle, that was over a quarter of the time to read it (``benchmarks/scale.py``; see the README,
Large knowledge bases). Reference counting still frees everything as usual; only the search
for reference cycles waits until the outermost pause ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]

_lock = threading.Lock()
_depth = 0
_resume = False  # whether the outermost pause turned the collector off (and so turns it on)


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection inside the block. Nests and works across threads: the
    collector is turned back on when the last pause ends, and only if a pause turned it off
    (a program that disabled it itself keeps it disabled)."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
