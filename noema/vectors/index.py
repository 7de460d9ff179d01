"""A cosine index over normalized vectors, keyed by string ids: exact, or approximate when big.

The vectors are kept once, as one float32 matrix, so rows can be removed, saved as
``embeddings.bin`` and searched without calling the embedder again. Exact search multiplies that
matrix by the query (the same work as a faiss ``IndexFlatIP``, without a second copy of every
vector). From :data:`APPROXIMATE_FROM` rows on, :meth:`VectorIndex.prepare` can add a faiss
inverted-file index with 8-bit codes (``IVF,SQ8``): it proposes candidates from a few clusters and
the candidates are re-scored exactly, so scores are true cosines and only rarely is a close vector
missed (recall against exact search is reported by ``benchmarks/scale.py``).

Below that, from :data:`PREFILTER_FROM` rows, exact search scans a float16 copy first (a
:class:`~noema.vectors._exact.Prefilter`): half the memory to read, and the rows it proposes
provably hold the exact best ones. Every score a search reports is computed the same way, row by
row (:func:`~noema.vectors._exact.cosines`), so the prefilter, the full scan and the approximate
index agree to the bit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, get_args

import numpy as np

from noema.errors import BundleError, OptionError
from noema.vectors._approximate import Approximate, faiss_module
from noema.vectors._exact import (
    SAME_REPORTED,
    Prefilter,
    PrefilterSoon,
    cosines,
    near_top,
    one_blas_thread,
    refuse_rows,
)
from noema.vectors._flat import (
    FLAT_HEADER_BYTES,
    check_flat,
    check_unit_rows,
    flat_pieces,
    little_endian_rows,
)
from noema.vectors.embed import Vectors
from noema.vectors.ivf import IVFParts, parts_of, reads_in_place

__all__ = [
    "APPROXIMATE_FROM",
    "FLAT_HEADER_BYTES",
    "SEARCH_MODES",
    "SearchMode",
    "SourceCheck",
    "VectorIndex",
    "check_search_mode",
    "load_search_library",
    "one_blas_thread",
]

SearchMode = Literal["auto", "exact", "approximate"]
# Called before rows viewed in a bundle's mapped file are read: raises BundleError when another
# program wrote the file in place since it was opened (noema.storage.container.FileCheck).
SourceCheck = Callable[[], None]
SEARCH_MODES: tuple[str, ...] = get_args(SearchMode)
# Rows from which "auto" search is approximate. Below it exact search takes a few milliseconds
# (benchmarks/scale.py); above it, it grows with every fact added.
APPROXIMATE_FROM = 200_000
# From this many rows exact search scans a float16 copy before the float32 rows (about twice
# the CPU cache's worth of vectors: below it the matrix stays in cache and one product is as
# fast). Measured on the HotpotQA benchmark base (26,692 facts, 7,768 sentences): a query's
# three searches 8.6 -> 2.6 ms p50, at 2 extra bytes per stored number.
PREFILTER_FROM = 4096
# Up to this many rows an opened index makes its prefilter while opening (0.1 s at 38,299 rows):
# made on a thread instead, a first retrieval right after opening scanned every row beside it
# (0.32 s against 0.09 s for the next, HotpotQA pool); above it opening would wait too long.
PREFILTER_ON_THREAD_FROM = 65_536


def load_search_library() -> None:
    """Load faiss now (about 0.3 s of loading its code), as a service loads its models before
    the first question: a small base never needs it, a large one opens with it."""
    faiss_module()


def check_search_mode(mode: object) -> SearchMode:
    """``mode`` if it is one of :data:`SEARCH_MODES`, else ``ValueError`` listing them."""
    if mode not in SEARCH_MODES:
        raise OptionError(
            f"search must be one of {', '.join(map(repr, SEARCH_MODES))}, got {mode!r}"
        )
    return mode  # type: ignore[return-value]


class VectorIndex:
    """Cosine search over vectors identified by string ids.

    Example:
        >>> index = VectorIndex(2)
        >>> index.add(["a", "b"], np.array([[1, 0], [0, 1]], dtype=np.float32))
        >>> index.search(np.array([1, 0], dtype=np.float32), 1)
        [('a', 1.0)]
    """

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        # never changed in place (a change makes new ones), so copies share them; read in place
        # from a bundle's sidecar, a sequence and a mapping over its arrays
        self._ids: Sequence[str] = []
        self._rows: Mapping[str, int] = {}
        self._vectors: Vectors = np.zeros((0, dimension), dtype=np.float32)
        # the approximate index once prepared, and each of its labels' row (-1: removed since);
        # after a write, the one to extend rather than train again (see noema.vectors._approximate)
        self._approximate: Approximate | None = None
        self._label_rows: Any = None
        self._base: Approximate | None = None
        # exact search's float16 copy, once prepared
        self._prefilter: Prefilter | PrefilterSoon | None = None
        # the approximate index a bundle kept for these rows, built by prepare() if it is wanted
        self._stored: IVFParts | None = None
        self._release_stored: Callable[[], None] | None = None
        # where the matrix and the kept parts are views of a bundle's mapped file: its check,
        # called before every read of them (a file truncated under a mapping is SIGBUS, one
        # rewritten in place answers with its new bytes); None once the rows are in memory
        self._source_check: SourceCheck | None = None

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, item: object) -> bool:
        return item in self._rows

    @property
    def ids(self) -> list[str]:
        """Ids in row order."""
        return list(self._ids)

    def id_at(self, row: int) -> str:
        """The id of row ``row``."""
        return self._ids[row]

    @property
    def vectors(self) -> Vectors:
        """The stored vectors, one row per id, in :attr:`ids` order (read-only).

        Raises:
            BundleError: they are read from a bundle's file, changed since it was opened.
        """
        view: Vectors = self._matrix().view()
        view.flags.writeable = False
        return view

    @property
    def approximate(self) -> bool:
        """Whether searches go through the approximate index."""
        return self._label_rows is not None

    def copy(self) -> VectorIndex:
        """An index with the same rows, for a writer to change while readers use this one: the
        vector matrix is shared (no method writes into it, each change makes a new one), and the
        approximate index is extended rather than trained again when the copy is prepared."""
        copy = VectorIndex(self.dimension)
        copy._ids, copy._rows, copy._vectors = self._ids, self._rows, self._vectors
        copy._prefilter = self._prefilter  # of the same rows; a change drops it
        copy._source_check = self._source_check
        copy.inherit_approximate(self)
        return copy

    def held(self) -> VectorIndex:
        """This index with its ids and rows in a list and a dict, for a writer that looks up
        every row: one read in place from a bundle looks each up in the bundle's arrays."""
        if isinstance(self._rows, dict):
            return self
        out = self.copy()
        out._ids = list(self._ids)
        out._rows = {item: n for n, item in enumerate(out._ids)}
        base = out._base
        if base is not None and base.ids is self._ids:  # labelled by these rows: the same ids
            out._base = Approximate(base.ivf, out._ids, base.trained)
        return out

    def inherit_approximate(self, other: VectorIndex) -> None:
        """Extend ``other``'s approximate index at the next :meth:`prepare` instead of training
        a new one (a write's copy of the index, or a sidecar rebuilt in another row order)."""
        self._base = other._approximate or other._base
        self._label_rows = None

    def rows_of(self, ids: Sequence[str]) -> Any:
        """Each id's row number, -1 for ids not held (an int64 array)."""
        rows = self._rows
        return np.fromiter((rows.get(i, -1) for i in ids), dtype=np.int64, count=len(ids))

    def vector(self, item_id: str) -> Vectors:
        """The stored vector of one id."""
        row: Vectors = self._matrix()[self._rows[item_id]]
        return row

    def add(self, ids: Sequence[str], vectors: Vectors) -> None:
        """Append vectors; ids already present are ignored (their vector is never recomputed).
        An approximate index is dropped: :meth:`prepare` builds it again."""
        self._take(self._rows_changed((), ids, vectors))

    def remove(self, ids: Sequence[str]) -> None:
        """Drop ids (unknown ids are ignored); the rest keep their vectors."""
        self._take(self._rows_changed(ids, (), np.zeros((0, self.dimension), np.float32)))

    def changed(self, removed: Sequence[str], ids: Sequence[str], vectors: Vectors) -> VectorIndex:
        """A new index holding this one's rows without ``removed``, then ``ids`` with their
        ``vectors`` (as :meth:`copy`, :meth:`remove` and :meth:`add` would make it), built in
        one pass over the rows; this index is left as it is, for the readers still using it.
        (Copying, removing and adding wrote a large index twice: 0.7 s a write at 100,000
        facts.)"""
        rows = self._rows_changed(removed, ids, vectors)
        if rows is None:
            return self.copy()
        out = VectorIndex(self.dimension)  # not a copy: its ids and row numbers are replaced
        out._ids, out._rows, out._vectors = rows
        out.inherit_approximate(self)
        return out

    def _rows_changed(
        self, removed: Sequence[str], ids: Sequence[str], vectors: Vectors
    ) -> tuple[list[str], dict[str, int], Vectors] | None:
        """The ids, row numbers and matrix without ``removed`` and with the new ``ids`` after
        them (an id held and not removed keeps its vector), or ``None`` when nothing changes."""
        vectors = np.asarray(vectors, dtype=np.float32).reshape(-1, self.dimension)
        self.check_unchanged()  # the kept rows are copied from the matrix below
        if len(ids) != len(vectors):
            raise OptionError(f"{len(ids)} ids but {len(vectors)} vectors")
        drop = {i for i in removed if i in self._rows}
        fresh: dict[str, int] = {}
        for n, item in enumerate(ids):
            if (item not in self._rows or item in drop) and item not in fresh:
                fresh[item] = n
        if not drop and not fresh:
            return None
        kept = len(self._ids) - len(drop)
        matrix = np.empty((kept + len(fresh), self.dimension), dtype=np.float32)
        if drop:
            rows = np.fromiter(
                (n for n, item in enumerate(self._ids) if item not in drop), np.int64, kept
            )
            np.take(self._vectors, rows, axis=0, out=matrix[:kept], mode="clip")
            order = [item for item in self._ids if item not in drop]
            positions = {item: n for n, item in enumerate(order)}
        else:
            matrix[:kept] = self._vectors
            order = list(self._ids)
            # made again rather than dict(self._rows): rows read in place are looked up one by one
            positions = {item: n for n, item in enumerate(order)}
        matrix[kept:] = vectors[list(fresh.values())]
        for item in fresh:
            positions[item] = len(order)
            order.append(item)
        return order, positions, matrix

    def _matrix(self) -> Vectors:
        """The rows, once :meth:`check_unchanged`."""
        self.check_unchanged()
        return self._vectors

    def check_unchanged(self) -> None:
        """Nothing, unless the rows are read from a bundle's file that another program wrote in
        place since it was opened.

        Raises:
            BundleError: naming the file and saying to load it again.
        """
        if self._source_check is not None:
            self._source_check()

    def _take(self, rows: tuple[list[str], dict[str, int], Vectors] | None) -> None:
        """Hold the rows :meth:`_rows_changed` made (nothing when it made none)."""
        if rows is not None:
            self._ids, self._rows, self._vectors = rows
            self._source_check = None  # a new matrix, in memory
            self._drop_approximate()

    def _drop_approximate(self) -> None:
        """After a change of rows the approximate index no longer fits them; :meth:`prepare`
        extends it (or trains another)."""
        self._base = self._approximate or self._base
        self._approximate, self._label_rows, self._prefilter = None, None, None
        self._stored = None

    def keep_stored_approximate(
        self, parts: IVFParts, *, release: Callable[[], None] | None = None
    ) -> None:
        """Build the approximate index from ``parts`` (a bundle's, for exactly these rows) at
        the next :meth:`prepare` that wants one, instead of training it again. ``release``:
        called once faiss holds its own copy of the parts' codes, to let go of the bytes they
        were read from (a bundle's mapped pages, which stayed resident: 0.75 GB at a million
        facts and as many sentences); never where faiss reads them in place."""
        if len(parts.assignment) != len(self):
            raise OptionError(f"{len(parts.assignment)} rows assigned, the index has {len(self)}")
        self._stored, self._release_stored = parts, release

    def approximate_parts(self, order: Sequence[str]) -> IVFParts | None:
        """What a bundle keeps of the approximate index, for the rows of ``order``; ``None``
        when there is none (opening then trains one if it is wanted)."""
        self.check_unchanged()
        if self._approximate is None or self._label_rows is None:
            if self._stored is None:
                return None
            # kept from the bundle this index was opened from, not built (exact search): saved
            # again as it came, so the next approximate opening need not train one
            stored = self._stored
            if stored.codes is None:  # an older member without codes: encoded once, here
                coded = parts_of(stored.build(self._vectors), self._ids, self._ids, stored.trained)
                if coded is None:
                    return None
                self._stored = stored = coded
            rows = self.rows_of(order)
            if np.any(rows < 0):
                return None
            return stored.for_rows(rows)
        approximate = self._approximate
        return parts_of(approximate.ivf, approximate.ids, order, approximate.trained)

    def prepare(self, mode: SearchMode = "auto") -> VectorIndex:
        """Build the approximate index when ``mode`` asks for it (``"auto"``: from
        :data:`APPROXIMATE_FROM` rows); returns ``self``. Done by writers before an index is
        shared, so no reader ever builds anything."""
        check_search_mode(mode)
        self.check_unchanged()
        wanted = mode == "approximate" or (mode == "auto" and len(self) >= APPROXIMATE_FROM)
        if not wanted or len(self) < 2:
            self._approximate, self._label_rows, self._base = None, None, None
            if len(self) < PREFILTER_FROM:
                self._prefilter = None
            elif self._prefilter is None and self._source_check is not None:  # just opened
                self._prefilter = PrefilterSoon(
                    self._vectors, self._source_check, now=len(self) < PREFILTER_ON_THREAD_FROM
                )
            elif self._prefilter is None:
                self._prefilter = Prefilter(self._vectors)
        elif self._label_rows is None:
            self._prefilter = None
            base, stored = self._base, self._stored
            approximate: Approximate | None
            if stored is not None:  # labels are row numbers, as the parts were written
                approximate = Approximate(stored.build(self._vectors), self._ids, stored.trained)
            else:
                approximate = base.extended(self._ids, self._rows, self._vectors) if base else None
            by_row = approximate is None or stored is not None
            if approximate is None:  # labels are row numbers
                approximate = Approximate.trained_on(self._ids, self._vectors)
            self._approximate, self._base, self._stored = approximate, None, None
            if (
                stored is not None
                and self._release_stored is not None
                and not reads_in_place(approximate.ivf)
            ):
                self._release_stored()
            self._release_stored = None
            # each label's row: looking every id up again took 0.3 s at a million rows
            self._label_rows = (
                np.arange(len(self), dtype=np.int64) if by_row else self.rows_of(approximate.ids)
            )
        return self

    def search(self, query: Vectors, k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest ids to one query vector, best first, with cosine similarity."""
        return self.search_many(np.asarray(query, dtype=np.float32).reshape(1, -1), k)[0]

    def search_many(self, queries: Vectors, k: int) -> list[list[tuple[str, float]]]:
        """:meth:`search` for each row of ``queries``."""
        queries = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dimension)
        self.check_unchanged()
        if not self._ids or k < 1:
            return [[] for _ in range(len(queries))]
        k = min(k, len(self._ids))
        if self._approximate is not None and self._label_rows is not None:
            labels = self._approximate.candidates(queries, k, len(self._ids))
            found = []
            for q, row_labels in zip(queries, labels, strict=True):
                rows = self._label_rows[row_labels[row_labels >= 0]]
                found.append(self._best(q, rows[rows >= 0], k))
            return found
        return [self._best(q, None, k) for q in queries]

    def _best(self, query: Vectors, rows: Any, k: int) -> list[tuple[str, float]]:
        """The ``k`` best of ``rows`` (all rows when ``None``) by exact cosine, ties by row."""
        if rows is None and self._prefilter is not None:
            rows = self._prefilter.candidates(query, k)
        if rows is None and k >= len(self._ids):  # every row wanted: score each once
            rows = np.arange(len(self._ids))
        elif rows is None:
            every = self._vectors @ query
            if not np.all(np.isfinite(every)) and np.all(np.isfinite(query)):
                refuse_rows(self._vectors, np.flatnonzero(~np.isfinite(every)))
            rows = near_top(every, k)
        scores = cosines(self._vectors[rows], query)
        if not np.all(np.isfinite(scores)) and np.all(np.isfinite(query)):
            refuse_rows(self._vectors, np.asarray(rows)[~np.isfinite(scores)])
        top = near_top(scores, k, SAME_REPORTED)
        # ranked by the score as reported (six decimals), then by row: equal vectors come in
        # row order, whichever rows were scored beside them
        scored = [(round(float(scores[n]), 6), int(rows[n])) for n in top.tolist()]
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        return [(self._ids[row], score) for score, row in scored[:k]]

    @classmethod
    def from_rows(
        cls, ids: Sequence[str], matrix: Vectors, rows: Mapping[str, int] | None = None
    ) -> VectorIndex:
        """An index over ``matrix``, row n the vector of ``ids[n]``, kept as it is: the caller
        hands the matrix over and never writes into it again. How a write assembles a large
        index in one pass over its rows (through :meth:`add` the rows were copied twice more:
        about 1 s a write at 100,000 sentences). ``rows``: each id's row, where the caller
        holds them already (ids read in place from a bundle, distinct by construction); the ids
        are then kept as given.

        Raises:
            OptionError: the ids repeat, or are not one per row of a float32 matrix of this
                dimension.
        """
        if matrix.dtype != np.float32 or matrix.ndim != 2 or len(matrix) != len(ids):
            raise OptionError(
                f"{len(ids)} ids need a float32 matrix of {len(ids)} rows, got "
                f"{matrix.dtype} {matrix.shape}"
            )
        out = cls(matrix.shape[1])
        if rows is not None:
            out._ids, out._rows = ids, rows
        else:
            out._ids = list(ids)
            out._rows = {item: n for n, item in enumerate(out._ids)}
        if len(out._rows) != len(out._ids):
            raise OptionError("the same id appears twice among the rows")
        out._vectors = np.ascontiguousarray(matrix)
        return out

    def unit_rows_check(self) -> Callable[[], None]:
        """The check :meth:`from_bytes` skips with ``unit_checked=False``, to run later: every row
        finite and of unit length (a longer one would outscore every other), over the rows as
        they are now.

        Returns:
            A callable that raises :class:`~noema.errors.BundleError` naming the first bad row.
        """
        matrix = self._vectors
        return lambda: check_unit_rows(matrix)

    # -- bytes ---------------------------------------------------------------------------------
    def index_pieces(self) -> tuple[bytes, memoryview]:
        """An ``IndexFlatIP`` over the rows as ``faiss.serialize_index`` writes it (its header,
        then the rows' bytes), never built: what a bundle stores, whatever this index searches
        with."""
        return flat_pieces(self._matrix())

    def vector_view(self) -> memoryview:
        """The vectors as little-endian float32, row-major: a view of the rows, not a copy
        (where they are read from a bundle's mapped file, of that file)."""
        return little_endian_rows(self._matrix())

    @classmethod
    def from_bytes(
        cls,
        ids: Sequence[str],
        dimension: int,
        vectors: bytes | memoryview,
        index: bytes | memoryview | None,
        *,
        check: SourceCheck | None = None,
        rows_compared: bool = True,
        rows: Mapping[str, int] | None = None,
        unit_checked: bool = True,
    ) -> VectorIndex:
        """Rebuild from :meth:`vector_view` and :meth:`index_pieces`, checking their sizes agree.
        ``check``: where ``vectors`` is a view of a bundle's mapped file, the check to call
        before every later read of the rows (:meth:`check_unchanged`). ``rows_compared``: the
        index's rows compared with the vectors too, not only its header and size
        (:func:`~noema.vectors._flat.check_flat`). ``rows``: as for :meth:`from_rows`.
        ``unit_checked``: every row checked to be finite and of unit length now; else the
        caller runs :meth:`unit_rows_check` later (it reads every row: 0.45 s warm, seconds
        from a cold disk, at a million facts).

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
        # a view of the bytes read, not a copy (a copy only where float32 is not little-endian):
        # no method writes into the matrix, and a copy doubled the memory a load peaks at
        matrix = np.frombuffer(vectors, dtype="<f4").astype(np.float32, copy=False)
        matrix = matrix.reshape(len(ids), dimension)
        try:
            out = cls.from_rows(ids, matrix, rows)
        except OptionError:  # the shape is right: the size was checked above
            raise BundleError("the same fact id appears twice in the vector rows") from None
        if unit_checked:
            check_unit_rows(matrix)
        if index is not None:
            check_flat(index, vectors, len(ids), dimension, rows_compared=rows_compared)
        out._source_check = check
        return out
