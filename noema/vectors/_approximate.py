"""The approximate search of a large :class:`~noema.vectors.index.VectorIndex`.

A faiss inverted-file index with 8-bit codes (``IVF,SQ8``) proposes candidates from a few
clusters; the vector index re-scores them exactly, so scores are true cosines and only rarely
is a close vector missed (recall against exact search is reported by ``benchmarks/scale.py``).
Training is the cost, so a write extends the index it copied instead of training another until
the rows have grown too far from those it was trained on (:data:`RETRAIN_GROWTH`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from noema.vectors.embed import Vectors
from noema.vectors.ivf import owned_copy

__all__ = ["RETRAIN_GROWTH", "Approximate", "faiss_module"]

# Clusters searched per query, and candidates re-scored exactly per result wanted.
_PROBES = 16
_CANDIDATES_PER_RESULT = 8
# A write extends the approximate index it copied (its clusters kept, the new rows added) until
# the rows have grown to this many times those it was trained on, or half its entries are rows
# since removed; then it is trained again. Training is the cost: 4.9 s at 300,000 rows here,
# against 0.14 s to copy the index and add 5,000 rows.
RETRAIN_GROWTH = 2.0


def faiss_module() -> Any:
    """faiss, imported on first use (``import noema`` stays light)."""
    import faiss

    return faiss


class Approximate:
    """A trained faiss IVF index and the id each of its labels stands for. Never changed once
    made: a write that adds rows extends a copy, so readers of the old snapshot keep theirs."""

    def __init__(self, ivf: Any, ids: Sequence[str], trained: int) -> None:
        # a list is copied (its owner could change it); other sequences are kept as given
        self.ivf, self.trained = ivf, trained
        self.ids: Sequence[str] = tuple(ids) if isinstance(ids, list) else ids

    @classmethod
    def trained_on(cls, ids: Sequence[str], vectors: Vectors) -> Approximate:
        """A new index over ``vectors``, row n the vector of ``ids[n]`` (labels are rows)."""
        return cls(_build_ivf(vectors), ids, len(ids))

    def extended(
        self, ids: Sequence[str], rows: Mapping[str, int], vectors: Vectors
    ) -> Approximate | None:
        """A copy holding also the rows it lacks of an index's ``ids`` (``rows``: each id's
        row of ``vectors``), labelled after its own; ``None`` when it should be trained again
        instead."""
        if len(ids) > RETRAIN_GROWTH * self.trained:
            return None
        if sum(1 for i in self.ids if i in rows) * 2 < len(self.ids):
            return None
        have = set(self.ids)
        new = [n for n, i in enumerate(ids) if i not in have]
        ivf = owned_copy(self.ivf)  # this one may read a bundle's codes in place
        if new:
            labels = np.arange(len(self.ids), len(self.ids) + len(new), dtype=np.int64)
            ivf.add_with_ids(np.ascontiguousarray(vectors[new]), labels)
        ivf.nprobe = self.ivf.nprobe
        return Approximate(ivf, [*self.ids, *(ids[n] for n in new)], self.trained)

    def candidates(self, queries: Vectors, k: int, rows: int) -> Any:
        """For each query, the labels of the candidates to re-score for its ``k`` best (a
        number of them per result, at least 64, at most ``rows``); -1 where there are fewer."""
        wanted = min(rows, max(k * _CANDIDATES_PER_RESULT, 64))
        _, labels = self.ivf.search(queries, wanted)
        return labels


def _build_ivf(vectors: Vectors) -> Any:
    """An ``IVF,SQ8`` inner-product index over ``vectors`` (row numbers as labels), trained on at
    most 64 vectors per cluster, the sample faiss itself suggests."""
    faiss = faiss_module()
    n, dimension = vectors.shape
    # sqrt(n) clusters: about 1,000 vectors each at a million, so training and adding take
    # seconds (both are built when a large base is written or its sidecar loaded)
    clusters = max(1, min(int(math.sqrt(n)), n // 39))
    quantizer = faiss.IndexFlatIP(dimension)
    index = faiss.IndexIVFScalarQuantizer(
        quantizer, dimension, clusters, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
    )
    step = max(1, n // (64 * clusters))
    index.train(np.ascontiguousarray(vectors[::step]))
    index.add(vectors)
    index.nprobe = min(_PROBES, clusters)
    return index
