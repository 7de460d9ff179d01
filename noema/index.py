"""A faiss inner-product index over normalized vectors, keyed by string ids.

The vectors are kept beside the faiss index so rows can be removed, saved as ``embeddings.bin``
and re-indexed without calling the embedder again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from noema.embed import Vectors
from noema.errors import BundleError

__all__ = ["VectorIndex"]


def _faiss() -> Any:
    import faiss

    return faiss


class VectorIndex:
    """Exact cosine search (``IndexFlatIP``) over vectors identified by string ids.

    Example:
        >>> index = VectorIndex(2)
        >>> index.add(["a", "b"], np.array([[1, 0], [0, 1]], dtype=np.float32))
        >>> index.search(np.array([1, 0], dtype=np.float32), 1)
        [('a', 1.0)]
    """

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        self._vectors: Vectors = np.zeros((0, dimension), dtype=np.float32)
        self._index: Any = None  # built lazily: faiss is imported only when searching

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, item: object) -> bool:
        return item in self._rows

    @property
    def ids(self) -> list[str]:
        """Ids in row order."""
        return list(self._ids)

    @property
    def vectors(self) -> Vectors:
        """The stored vectors, one row per id, in :attr:`ids` order (read-only)."""
        view: Vectors = self._vectors.view()
        view.flags.writeable = False
        return view

    def vector(self, item_id: str) -> Vectors:
        """The stored vector of one id."""
        row: Vectors = self._vectors[self._rows[item_id]]
        return row

    def add(self, ids: Sequence[str], vectors: Vectors) -> None:
        """Append vectors; ids already present are ignored (their vector is never recomputed)."""
        vectors = np.asarray(vectors, dtype=np.float32).reshape(-1, self.dimension)
        if len(ids) != len(vectors):
            raise ValueError(f"{len(ids)} ids but {len(vectors)} vectors")
        seen = set(self._rows)
        keep = []
        for n, item in enumerate(ids):
            if item not in seen:
                seen.add(item)
                keep.append(n)
        if not keep:
            return
        fresh = np.ascontiguousarray(vectors[keep])
        for n in keep:
            self._rows[ids[n]] = len(self._ids)
            self._ids.append(ids[n])
        self._vectors = np.vstack([self._vectors, fresh])
        if self._index is not None:
            self._index.add(fresh)

    def remove(self, ids: Sequence[str]) -> None:
        """Drop ids (unknown ids are ignored); the rest keep their vectors."""
        drop = {i for i in ids if i in self._rows}
        if not drop:
            return
        keep = [n for n, item in enumerate(self._ids) if item not in drop]
        self._ids = [self._ids[n] for n in keep]
        self._rows = {item: n for n, item in enumerate(self._ids)}
        self._vectors = np.ascontiguousarray(self._vectors[keep])
        self._index = None

    def search(self, query: Vectors, k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest ids to one query vector, best first, with cosine similarity."""
        return self.search_many(np.asarray(query, dtype=np.float32).reshape(1, -1), k)[0]

    def search_many(self, queries: Vectors, k: int) -> list[list[tuple[str, float]]]:
        """:meth:`search` for each row of ``queries``."""
        if not self._ids or k < 1:
            return [[] for _ in range(len(queries))]
        scores, rows = self._faiss_index().search(
            np.ascontiguousarray(queries, dtype=np.float32), min(k, len(self._ids))
        )
        return [
            [(self._ids[r], round(float(s), 6)) for s, r in zip(srow, rrow, strict=True) if r >= 0]
            for srow, rrow in zip(scores, rows, strict=True)
        ]

    def _faiss_index(self) -> Any:
        if self._index is None:
            index = _faiss().IndexFlatIP(self.dimension)
            if len(self._vectors):
                index.add(self._vectors)
            self._index = index
        return self._index

    # -- bytes ---------------------------------------------------------------------------------
    def index_bytes(self) -> bytes:
        """The faiss index serialized (``faiss.serialize_index``)."""
        return bytes(_faiss().serialize_index(self._faiss_index()).tobytes())

    def vector_bytes(self) -> bytes:
        """The vectors as little-endian float32, row-major."""
        return self._vectors.astype("<f4").tobytes()

    @classmethod
    def from_bytes(
        cls, ids: Sequence[str], dimension: int, vectors: bytes, index: bytes | None
    ) -> VectorIndex:
        """Rebuild from :meth:`vector_bytes` and :meth:`index_bytes`, checking their sizes agree.

        Raises:
            BundleError: the byte sizes, row counts or dimensions disagree with ``ids``.
        """
        if dimension < 1:
            raise BundleError(f"vector dimension must be positive, got {dimension}")
        if len(vectors) != len(ids) * dimension * 4:
            raise BundleError(
                f"embeddings hold {len(vectors)} bytes, expected {len(ids)} rows x {dimension} "
                f"float32 = {len(ids) * dimension * 4}"
            )
        if len(set(ids)) != len(ids):
            raise BundleError("the same fact id appears twice in the vector rows")
        out = cls(dimension)
        out._ids = list(ids)
        out._rows = {item: n for n, item in enumerate(out._ids)}
        matrix = np.frombuffer(vectors, dtype="<f4").astype(np.float32).reshape(len(ids), dimension)
        if not np.all(np.isfinite(matrix)):
            raise BundleError("embeddings contain NaN or infinite values")
        out._vectors = np.ascontiguousarray(matrix)
        if index is not None:
            faiss = _faiss()
            try:
                loaded = faiss.deserialize_index(np.frombuffer(index, dtype=np.uint8).copy())
            except Exception as exc:  # faiss raises RuntimeError with C++ text
                raise BundleError(f"index.faiss is not a readable faiss index: {exc}") from exc
            if loaded.ntotal != len(ids) or loaded.d != dimension:
                raise BundleError(
                    f"index.faiss holds {loaded.ntotal} vectors of dimension {loaded.d}, expected "
                    f"{len(ids)} of dimension {dimension}"
                )
            if not isinstance(loaded, faiss.IndexFlatIP):
                raise BundleError(f"index.faiss is a {type(loaded).__name__}, expected IndexFlatIP")
            stored = faiss.rev_swig_ptr(loaded.get_xb(), loaded.ntotal * loaded.d)
            if len(ids) and not np.array_equal(
                np.asarray(stored).reshape(len(ids), dimension), out._vectors
            ):
                raise BundleError("index.faiss does not hold the vectors of embeddings.bin")
            out._index = loaded
        return out
