"""Exact search's scoring: how a row's cosine is computed, which rows are near enough the best to
be scored, the float16 prefilter that narrows a large exact search to a few candidates, and
numpy's BLAS held to one thread while one query is scored.

Apart from :class:`~noema.vectors.index.VectorIndex` because every score a search reports is made
here, the same way whichever path proposed the rows (the prefilter, the full scan or the
approximate index), so they agree to the bit; the index decides which path to take.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from noema.errors import BundleError
from noema.vectors._approximate import faiss_module
from noema.vectors._blas import one_blas_thread
from noema.vectors.embed import Vectors

__all__ = [
    "ROUNDING",
    "SAME_REPORTED",
    "Prefilter",
    "PrefilterSoon",
    "cosines",
    "near_top",
    "one_blas_thread",
    "refuse_rows",
]

# Bounds the float32 rounding of one score (384 products of unit vectors: under 3e-5), so rows
# this close below the k-th best are re-scored too and rounding never decides who is left out.
ROUNDING = 1e-4
# Two scores this close may print the same at six decimals: both are ranked by row then.
SAME_REPORTED = 1e-6


class Prefilter:
    """A float16 copy of an index's rows that narrows an exact search to a few candidates.

    Each number is stored to within ``2**-10`` of its size (float16 keeps 11 significant bits),
    so a row's float16 score is within ``bound = sum_d |q_d| * error_d`` of its true score, where
    ``error_d`` bounds the rounding of dimension ``d`` over every row. If ``a_k`` is the k-th
    best float16 score, at least k rows truly score ``a_k - bound`` or more, so every row of the
    true best k has a float16 score of at least ``a_k - 2 * bound``: the rows above that line
    are the candidates, and re-scoring them in float32 gives exactly the full scan's best k.
    Never changed once made (a write builds another)."""

    def __init__(self, vectors: Vectors) -> None:
        faiss = faiss_module()
        self.codes = faiss.IndexScalarQuantizer(
            vectors.shape[1], faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
        )
        self.codes.add(vectors)
        # 2**-10 of each dimension's largest value (rounding or truncation alike), plus the
        # spacing of float16's smallest numbers, which keep fewer bits; the largest magnitude
        # from the largest and the smallest value, without an absolute copy of every row
        # (0.05 s of opening 100,000 facts)
        largest = np.maximum(vectors.max(axis=0), -vectors.min(axis=0))
        if not np.all(np.isfinite(largest)):
            # a stored row read here for the first time (opening a large bundle reads none)
            refuse_rows(vectors, np.flatnonzero(~np.all(np.isfinite(vectors), axis=1))[:1])
        self.error = largest * 2.0**-10 + 2.0**-24

    def candidates(self, query: Vectors, k: int) -> Any:
        """Row numbers, ascending, certain to hold the ``k`` best rows for ``query``; ``None``
        when the rows near the line are too many to gather (then scan them all)."""
        wanted = max(2 * k, 64)
        if wanted >= self.codes.ntotal:
            return None
        bound = float(np.abs(query) @ self.error) + ROUNDING
        faiss = faiss_module()
        threads = faiss.omp_get_max_threads()
        # one query is one thread's work; idle OpenMP threads would spin on the core the
        # embedding model needs next (this thread's setting only, restored after)
        faiss.omp_set_num_threads(1)
        try:
            scores, labels = self.codes.search(query.reshape(1, -1), wanted)
        finally:
            faiss.omp_set_num_threads(threads)
        floor = scores[0, k - 1] - 2 * bound
        if scores[0, -1] >= floor:
            return None
        return np.sort(labels[0][scores[0] >= floor])


class PrefilterSoon:
    """A :class:`Prefilter` for rows read in place from a bundle, made on a thread of its own
    so opening returns without waiting for it (encoding 100,000 rows twice was two thirds of
    opening them), or with ``now`` before the constructor returns (a smaller index, which a
    first retrieval would otherwise scan whole beside the thread). Until it is made a search
    scans every row, which gives the same results; rows that cannot be encoded (not finite)
    leave it unmade, and the full scan raises there."""

    def __init__(
        self, vectors: Vectors, check: Callable[[], None] | None, *, now: bool = False
    ) -> None:
        self._vectors, self._check = vectors, check
        self._made: Prefilter | None = None
        self._failed = False
        self._lock = threading.Lock()  # held while it is made: made once
        self._thread = threading.Thread(target=self._make, name="noema-prefilter", daemon=True)
        if now:
            self._make()
        else:
            self._thread.start()

    def _make(self) -> None:
        with self._lock:
            if self._made is not None or self._failed:
                return
            try:
                if self._check is not None:
                    self._check()
                self._made = Prefilter(self._vectors)
            except Exception:  # noqa: BLE001 - the full scan meets the same rows and raises there
                self._failed = True

    def candidates(self, query: Vectors, k: int) -> Any:
        """As :meth:`Prefilter.candidates`; ``None`` (scan them all) until it is made."""
        made = self._made
        if made is None and not self._failed and not self._thread.is_alive():
            # a process forked while the thread ran has the object, not the thread (or the
            # thread ended between the two reads: then it is made already)
            self._make()
            made = self._made
        return None if made is None else made.candidates(query, k)


def refuse_rows(vectors: Vectors, rows: Any) -> None:
    """Raise for the first of ``rows`` that holds a value that is not finite: a large bundle's
    rows are checked as a search reads them, not every one on opening (its sha256 and every
    row are checked by ``noema validate`` and ``load(verify=True)``)."""
    for row in np.asarray(rows).tolist():
        if not np.all(np.isfinite(vectors[row])):
            raise BundleError(
                f"embedding row {row} holds NaN or infinite values (the bundle is damaged; "
                "`noema validate` names the member)"
            )


def cosines(rows: Vectors, query: Vectors) -> Any:
    """Each row's inner product with ``query``, computed row by row (a product, then a sum along
    the row), so a row's score never depends on which other rows are scored with it, as a
    matrix product's blocking may make it (a last bit apart, enough to move a rounded score)."""
    return np.multiply(rows, query).sum(axis=1, dtype=np.float32)


def near_top(scores: Any, k: int, margin: float = ROUNDING) -> Any:
    """Positions whose score is within ``margin`` of the ``k`` best (all when ``k`` covers
    them), ascending."""
    if len(scores) <= k:
        return np.arange(len(scores))
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    return np.flatnonzero(scores >= kth - margin)
