"""numpy's BLAS held to one thread: for the searches of one query and the question encoder.

A module of its own, importing nothing of Noema's, so that both the exact search and the NumPy
question encoder (which the embedder loads) can use it without importing each other.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from functools import lru_cache
from typing import Any

__all__ = ["one_blas_thread"]


@lru_cache(maxsize=1)
def _blas() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_blas_thread() -> AbstractContextManager[Any]:
    """numpy's BLAS limited to one thread for the ``with`` block (searches of one query)."""
    return _blas().limit(limits=1, user_api="blas")  # type: ignore[no-any-return]
