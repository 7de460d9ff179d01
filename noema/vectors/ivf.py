"""What a bundle keeps of an approximate index, so opening a large base does not train one again.

The approximate index (:mod:`noema.vectors.index`) is a faiss ``IVF,SQ8``: centroids that split the rows
into lists, an 8-bit quantizer trained on the rows' ranges, and each row's code in its list.
Training it and assigning every row to a list took 20 s of opening a million-fact base, and
encoding every row again about 2.5 s per index. So a bundle keeps the trained parts, each row's
list and each row's code, never a faiss serialization (a crafted one can make faiss allocate
what its header claims), and opening gives faiss's lists views of the codes where they lie
(a copy where the faiss installed has no views): a search reads only the few lists it probes.
The codes cost a quarter of the float32 vectors on disk (one byte per dimension).

Layout of a ``*.ivf`` member (little-endian):

``header``
    ``NOEMAIVF`` (8 bytes), then uint32 ``version`` (:data:`IVF_VERSION`: 2; version 1, without
    codes, is still read and its rows encoded on opening), ``rows``,
    ``dimension``, ``lists`` and ``nprobe`` (lists searched per query), and uint64 ``trained``
    (the rows it was trained on, which decides when a later write trains it again).
``centroids``
    ``lists`` x ``dimension`` float32, row-major.
``ranges``
    ``2 * dimension`` float32: the 8-bit quantizer's trained minimum, then range, per dimension.
``codes`` (from version 2)
    ``rows`` x ``dimension`` uint8: each row's 8-bit code under those ranges, grouped by list
    (list 0's rows in row order, then list 1's ...: the order a stable sort of ``assignment``
    gives), so each list's codes are handed to faiss as they lie in the file. Only candidates
    come from them (every candidate is scored again on its float32 vector), so a damaged code
    can cost recall, never a wrong score.
``assignment``
    ``rows`` int32: the list of each row of the vector member it goes with, in that member's row
    order.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from noema.errors import BundleError
from noema.vectors._flat import byte_view

__all__ = [
    "IVF_VERSION",
    "IVFParts",
    "ivf_bytes",
    "ivf_pieces",
    "owned_copy",
    "parts_of",
    "read_ivf",
    "reads_in_place",
    "views_supported",
]

IVF_VERSION = 2
# The versions read: 1 holds no codes (its rows are encoded when the index is built).
_READ_VERSIONS = (1, 2)
_MAGIC = b"NOEMAIVF"
_HEADER = struct.Struct("<8sIIIIIQ")


@dataclass(frozen=True)
class IVFParts:
    """The trained parts of an ``IVF,SQ8`` index, each row's list (in row order) and (``None``
    in a version-1 member) each row's code, grouped by list as the member holds them."""

    centroids: npt.NDArray[np.float32]
    ranges: npt.NDArray[np.float32]
    assignment: npt.NDArray[np.int64]
    nprobe: int
    trained: int
    codes: npt.NDArray[np.uint8] | None = None

    def build(self, vectors: npt.NDArray[np.float32]) -> Any:
        """The index over ``vectors`` (row numbers as labels), its rows' codes in their lists:
        the index the parts were taken from, for the same rows. Where faiss can, it reads the
        parts' codes where they lie (:func:`reads_in_place`); they must then outlive it."""
        import faiss

        index = _empty_index(
            faiss.IndexFlatIP(self.centroids.shape[1]), self.centroids, self.ranges
        )
        assignment = np.ascontiguousarray(self.assignment, dtype=np.int64)
        if self.codes is None:
            rows = np.ascontiguousarray(vectors, dtype=np.float32)
            index.add_core(len(rows), faiss.swig_ptr(rows), None, faiss.swig_ptr(assignment))
        else:
            _add_codes(index, self.codes, assignment, len(self.centroids))
        index.nprobe = self.nprobe
        return index

    def for_rows(self, rows: npt.NDArray[np.int64]) -> IVFParts:
        """The parts for the rows ``rows`` (row n of the result is row ``rows[n]`` here)."""
        if len(rows) == len(self.assignment) and np.array_equal(rows, np.arange(len(rows))):
            return self  # the same rows in the same order (a sidecar saved as it was opened)
        assignment = self.assignment[rows]
        codes = None
        if self.codes is not None:
            # where each row's code lies among the grouped codes, then one gather of them
            at = np.empty(len(self.assignment), dtype=np.int64)
            at[np.argsort(self.assignment, kind="stable")] = np.arange(len(self.assignment))
            codes = self.codes[at[rows][np.argsort(assignment, kind="stable")]]
        return replace(self, assignment=assignment, codes=codes)


def _empty_index(quantizer: Any, centroids: Any, ranges: Any) -> Any:
    """An ``IVF,SQ8`` inner-product index with these centroids (added to ``quantizer``, an empty
    flat index) and the 8-bit quantizer's trained ``ranges``, holding no rows."""
    import faiss

    lists, dimension = centroids.shape
    quantizer.add(np.ascontiguousarray(centroids, dtype=np.float32))
    index = faiss.IndexIVFScalarQuantizer(
        quantizer, dimension, lists, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
    )
    faiss.copy_array_to_vector(np.ascontiguousarray(ranges, dtype=np.float32), index.sq.trained)
    index.is_trained = True
    return index


def _add_codes(
    index: Any, codes: npt.NDArray[np.uint8], assignment: npt.NDArray[np.int64], lists: int
) -> None:
    """Put each list's codes into it, labelled with their row numbers, in row order within a
    list: what ``add_core`` makes from the vectors, without encoding them. The lists view the
    codes where they lie when this faiss allows it, else hold a copy."""
    import faiss

    # sorted as int32 (a radix sort, half the time of int64's at a million rows); lists < 2**31
    by_list = np.argsort(assignment.astype(np.int32), kind="stable").astype(np.int64)
    grouped = np.ascontiguousarray(codes, dtype=np.uint8)  # the member's bytes, not a copy
    ends = np.cumsum(np.bincount(assignment, minlength=lists)).tolist()
    if not _view_codes(index, grouped, by_list, ends):
        start = 0
        for number, end in enumerate(ends):
            if end > start:
                index.invlists.add_entries(
                    number,
                    end - start,
                    faiss.swig_ptr(by_list[start:end]),
                    faiss.swig_ptr(grouped[start:end]),
                )
            start = end
    index.ntotal = len(assignment)


def _view_codes(
    index: Any, grouped: npt.NDArray[np.uint8], by_list: npt.NDArray[np.int64], ends: list[int]
) -> bool:
    """Make each list of ``index`` read its codes in place from ``grouped`` (faiss's
    ``MaybeOwnedVector`` views, as its own memory-mapped reading makes them) and hold its labels
    from ``by_list``; ``False``, changing nothing, where this faiss has no such views. Copying
    the codes into faiss took 0.4 s and 384 bytes a row per index at a million rows, for
    codes a search reads only a few lists of."""
    import faiss

    lists = faiss.downcast_InvertedLists(index.invlists)
    if not views_supported() or not isinstance(lists, faiss.ArrayInvertedLists):
        return False
    _swap_in_views(lists, grouped.reshape(-1), by_list, ends)
    # the views point into these bytes: kept alive with the index (faiss's own convention)
    index.referenced_objects = [*getattr(index, "referenced_objects", []), _ViewedCodes(grouped)]
    return True


def _swap_in_views(lists: Any, flat: Any, by_list: Any, ends: list[int]) -> None:
    """Give each of ``lists`` (empty) its labels from ``by_list`` and a view of its codes in
    ``flat``, list n holding rows ``ends[n - 1]:ends[n]``."""
    import faiss as typed

    faiss: Any = typed  # its type stubs predate the views
    code_size = int(lists.code_size)
    views = faiss.MaybeOwnedVectorUInt8Vector()
    # resize() sizes a list's labels and its codes; with no code size it allocates no codes,
    # which are the views swapped in below (a view can never be resized: faiss aborts)
    lists.code_size = 0
    try:
        start = 0
        for number, end in enumerate(ends):
            view = faiss.MaybeOwnedVectorUInt8()
            if end > start:
                lists.resize(number, end - start)
                labels = faiss.rev_swig_ptr(lists.get_ids(number), end - start)
                labels[:] = by_list[start:end]
                pointer = faiss.swig_ptr(flat[start * code_size : end * code_size])
                size = (end - start) * code_size
                view.is_owned = False
                view.view_data, view.view_size = pointer, size
                view.c_ptr, view.c_size = pointer, size
            views.push_back(view)
            start = end
    finally:
        lists.code_size = code_size
    lists.codes.swap(views)


@lru_cache(maxsize=1)
def views_supported() -> bool:
    """Whether the faiss installed lets a list view codes it does not own, tried once on a list
    of two codes: its lists then read where the views point (a faiss whose views lack a field
    set here would read elsewhere; the codes are copied there instead)."""
    import faiss

    if not hasattr(faiss, "MaybeOwnedVectorUInt8Vector"):
        return False
    codes = np.array([[3, 4], [5, 6]], dtype=np.uint8)
    try:
        lists = faiss.ArrayInvertedLists(1, 2)
        _swap_in_views(lists, codes.reshape(-1), np.array([0, 1], dtype=np.int64), [2])
        at = int(lists.get_codes(0))
        labels = faiss.rev_swig_ptr(lists.get_ids(0), 2).tolist()
    except (AttributeError, TypeError, RuntimeError):
        return False
    return at == codes.ctypes.data and lists.list_size(0) == 2 and labels == [0, 1]


@dataclass(frozen=True)
class _ViewedCodes:
    """The codes an index's lists view, held by the index so they outlive it."""

    codes: npt.NDArray[np.uint8]


def reads_in_place(index: Any) -> bool:
    """Whether the lists of ``index`` view codes they do not own (:func:`_view_codes`): such an
    index cannot take rows (faiss aborts), so a writer extends :func:`owned_copy` of it."""
    held = getattr(index, "referenced_objects", ())
    return any(isinstance(item, _ViewedCodes) for item in held)


def owned_copy(index: Any) -> Any:
    """A copy of ``index`` that owns every list's labels and codes."""
    import faiss

    if not reads_in_place(index):
        return faiss.clone_index(index)
    centroids = index.quantizer.reconstruct_n(0, index.nlist)
    copy = _empty_index(
        faiss.IndexFlatIP(index.d), centroids, faiss.vector_to_array(index.sq.trained)
    )
    lists = index.invlists
    for number in range(index.nlist):
        size = lists.list_size(number)
        if size:
            copy.invlists.add_entries(number, size, lists.get_ids(number), lists.get_codes(number))
    copy.ntotal, copy.nprobe = index.ntotal, index.nprobe
    return copy


def parts_of(
    ivf: Any, labels: Sequence[str], order: Sequence[str], trained: int
) -> IVFParts | None:
    """The parts of ``ivf`` (whose label n stands for ``labels[n]``) for rows in ``order``;
    ``None`` when a row of ``order`` is not in it."""
    import faiss

    lists = ivf.invlists
    code_size = int(lists.code_size)
    list_of_label = np.full(ivf.ntotal, -1, dtype=np.int64)
    code_of_label = np.zeros((ivf.ntotal, code_size), dtype=np.uint8)
    for number in range(ivf.nlist):
        size = lists.list_size(number)
        if size:
            held = np.asarray(faiss.rev_swig_ptr(lists.get_ids(number), size), dtype=np.int64)
            list_of_label[held] = number
            code_of_label[held] = np.asarray(
                faiss.rev_swig_ptr(lists.get_codes(number), size * code_size)
            ).reshape(size, code_size)
    label_of = {item: n for n, item in enumerate(labels)}
    found = np.fromiter((label_of.get(item, -1) for item in order), np.int64, len(order))
    if np.any(found < 0):
        return None
    assignment = list_of_label[found]
    if np.any(assignment < 0):
        return None
    grouped = found[np.argsort(assignment, kind="stable")]
    return IVFParts(
        centroids=ivf.quantizer.reconstruct_n(0, ivf.nlist).astype(np.float32),
        ranges=faiss.vector_to_array(ivf.sq.trained).astype(np.float32),
        assignment=assignment,
        nprobe=int(ivf.nprobe),
        trained=int(trained),
        codes=code_of_label[grouped],
    )


def ivf_pieces(parts: IVFParts) -> tuple[bytes, memoryview, bytes]:
    """The member for ``parts`` (see the module docstring), in the pieces a save writes one
    after another: the header, centroids and ranges; the codes (a view, not a copy); the
    assignment. Its codes are required."""
    if parts.codes is None:
        raise BundleError("the approximate index's parts hold no codes to write")
    lists, dimension = parts.centroids.shape
    header = _HEADER.pack(
        _MAGIC, IVF_VERSION, len(parts.assignment), dimension, lists, parts.nprobe, parts.trained
    )
    trained = (
        header + parts.centroids.astype("<f4").tobytes() + parts.ranges.astype("<f4").tobytes()
    )
    codes = np.ascontiguousarray(parts.codes, dtype=np.uint8)
    return (
        trained,
        byte_view(codes),
        parts.assignment.astype("<i4").tobytes(),
    )


def ivf_bytes(parts: IVFParts) -> bytes:
    """:func:`ivf_pieces` joined."""
    return b"".join(ivf_pieces(parts))


def read_ivf(blob: bytes | memoryview, rows: int, dimension: int) -> IVFParts:
    """The parts a member holds, for a vector member of ``rows`` x ``dimension``; its codes are
    a view of ``blob``.

    Raises:
        BundleError: the member is not one, is of another version, or does not fit those rows.
    """
    if len(blob) < _HEADER.size:
        raise BundleError(f"holds {len(blob)} bytes, too few for its header")
    magic, version, held, held_dimension, lists, nprobe, trained = _HEADER.unpack_from(blob)
    if magic != _MAGIC:
        raise BundleError("does not start with NOEMAIVF: it is not an approximate index")
    if version not in _READ_VERSIONS:
        raise BundleError(f"is version {version}; this Noema reads version {IVF_VERSION} and older")
    if held != rows or held_dimension != dimension:
        raise BundleError(
            f"holds {held} rows of {held_dimension}, its vectors {rows} rows of {dimension}"
        )
    if not 1 <= lists <= max(rows, 1) or not 1 <= nprobe <= lists or trained < 1:
        raise BundleError(f"declares {lists} lists, {nprobe} searched and {trained} trained on")
    code_bytes = rows * dimension if version >= 2 else 0
    sizes = (lists * dimension * 4, 2 * dimension * 4, code_bytes, rows * 4)
    if len(blob) != _HEADER.size + sum(sizes):
        raise BundleError(f"holds {len(blob)} bytes, not the {_HEADER.size + sum(sizes)} declared")
    at = _HEADER.size
    centroids = np.frombuffer(blob, "<f4", lists * dimension, at).reshape(lists, dimension)
    at += sizes[0]
    ranges = np.frombuffer(blob, "<f4", 2 * dimension, at)
    at += sizes[1]
    codes = (
        np.frombuffer(blob, np.uint8, code_bytes, at).reshape(rows, dimension)
        if code_bytes
        else None
    )
    at += sizes[2]
    assignment = np.frombuffer(blob, "<i4", rows, at)
    if not (np.all(np.isfinite(centroids)) and np.all(np.isfinite(ranges))):
        raise BundleError("holds centroids or ranges that are not finite numbers")
    if rows and (int(assignment.min()) < 0 or int(assignment.max()) >= lists):
        raise BundleError(f"assigns a row to a list outside the {lists} it has")
    return IVFParts(
        centroids=centroids.astype(np.float32),
        ranges=ranges.astype(np.float32),
        assignment=assignment.astype(np.int64),
        nprobe=nprobe,
        trained=trained,
        codes=codes,
    )
