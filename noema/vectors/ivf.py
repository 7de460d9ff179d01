"""What a bundle keeps of an approximate index, so opening a large base does not train one again.

The approximate index (:mod:`noema.vectors.index`) is a faiss ``IVF,SQ8``: centroids that split the rows
into lists, an 8-bit quantizer trained on the rows' ranges, and each row's code in its list.
Training it and assigning every row to a list took 20 s of opening a million-fact base; the
codes themselves are made again in a second. So a bundle keeps the trained parts and each row's
list, never a faiss serialization (a crafted one can make faiss allocate what its header claims),
and opening builds the same index from them through faiss's own calls.

Layout of a ``*.ivf`` member (little-endian):

``header``
    ``NOEMAIVF`` (8 bytes), then uint32 ``version`` (:data:`IVF_VERSION`), ``rows``,
    ``dimension``, ``lists`` and ``nprobe`` (lists searched per query), and uint64 ``trained``
    (the rows it was trained on, which decides when a later write trains it again).
``centroids``
    ``lists`` x ``dimension`` float32, row-major.
``ranges``
    ``2 * dimension`` float32: the 8-bit quantizer's trained minimum, then range, per dimension.
``assignment``
    ``rows`` int32: the list of each row of the vector member it goes with, in that member's row
    order.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from noema.errors import BundleError

__all__ = ["IVF_VERSION", "IVFParts", "ivf_bytes", "parts_of", "read_ivf"]

IVF_VERSION = 1
_MAGIC = b"NOEMAIVF"
_HEADER = struct.Struct("<8sIIIIIQ")


@dataclass(frozen=True)
class IVFParts:
    """The trained parts of an ``IVF,SQ8`` index and each row's list."""

    centroids: npt.NDArray[np.float32]
    ranges: npt.NDArray[np.float32]
    assignment: npt.NDArray[np.int64]
    nprobe: int
    trained: int

    def build(self, vectors: npt.NDArray[np.float32]) -> Any:
        """The index over ``vectors`` (row numbers as labels), its rows encoded in their lists:
        the index the parts were taken from, for the same rows."""
        import faiss

        lists, dimension = self.centroids.shape
        quantizer = faiss.IndexFlatIP(dimension)
        quantizer.add(np.ascontiguousarray(self.centroids))
        index = faiss.IndexIVFScalarQuantizer(
            quantizer, dimension, lists, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
        )
        faiss.copy_array_to_vector(np.ascontiguousarray(self.ranges), index.sq.trained)
        index.is_trained = True
        rows = np.ascontiguousarray(vectors, dtype=np.float32)
        assignment = np.ascontiguousarray(self.assignment, dtype=np.int64)
        index.add_core(len(rows), faiss.swig_ptr(rows), None, faiss.swig_ptr(assignment))
        index.nprobe = self.nprobe
        return index


def parts_of(
    ivf: Any, labels: Sequence[str], order: Sequence[str], trained: int
) -> IVFParts | None:
    """The parts of ``ivf`` (whose label n stands for ``labels[n]``) for rows in ``order``;
    ``None`` when a row of ``order`` is not in it."""
    import faiss

    lists = ivf.invlists
    list_of_label = np.full(ivf.ntotal, -1, dtype=np.int64)
    for number in range(ivf.nlist):
        size = lists.list_size(number)
        if size:
            held = faiss.rev_swig_ptr(lists.get_ids(number), size)
            list_of_label[np.asarray(held, dtype=np.int64)] = number
    label_of = {item: n for n, item in enumerate(labels)}
    found = np.fromiter((label_of.get(item, -1) for item in order), np.int64, len(order))
    if np.any(found < 0):
        return None
    assignment = list_of_label[found]
    if np.any(assignment < 0):
        return None
    return IVFParts(
        centroids=ivf.quantizer.reconstruct_n(0, ivf.nlist).astype(np.float32),
        ranges=faiss.vector_to_array(ivf.sq.trained).astype(np.float32),
        assignment=assignment,
        nprobe=int(ivf.nprobe),
        trained=int(trained),
    )


def ivf_bytes(parts: IVFParts) -> bytes:
    """The member for ``parts`` (see the module docstring)."""
    lists, dimension = parts.centroids.shape
    header = _HEADER.pack(
        _MAGIC, IVF_VERSION, len(parts.assignment), dimension, lists, parts.nprobe, parts.trained
    )
    return (
        header
        + parts.centroids.astype("<f4").tobytes()
        + parts.ranges.astype("<f4").tobytes()
        + parts.assignment.astype("<i4").tobytes()
    )


def read_ivf(blob: bytes | memoryview, rows: int, dimension: int) -> IVFParts:
    """The parts a member holds, for a vector member of ``rows`` x ``dimension``.

    Raises:
        BundleError: the member is not one, is of another version, or does not fit those rows.
    """
    if len(blob) < _HEADER.size:
        raise BundleError(f"holds {len(blob)} bytes, too few for its header")
    magic, version, held, held_dimension, lists, nprobe, trained = _HEADER.unpack_from(blob)
    if magic != _MAGIC:
        raise BundleError("does not start with NOEMAIVF: it is not an approximate index")
    if version != IVF_VERSION:
        raise BundleError(f"is version {version}; this Noema reads version {IVF_VERSION}")
    if held != rows or held_dimension != dimension:
        raise BundleError(
            f"holds {held} rows of {held_dimension}, its vectors {rows} rows of {dimension}"
        )
    if not 1 <= lists <= max(rows, 1) or not 1 <= nprobe <= lists or trained < 1:
        raise BundleError(f"declares {lists} lists, {nprobe} searched and {trained} trained on")
    sizes = (lists * dimension * 4, 2 * dimension * 4, rows * 4)
    if len(blob) != _HEADER.size + sum(sizes):
        raise BundleError(f"holds {len(blob)} bytes, not the {_HEADER.size + sum(sizes)} declared")
    at = _HEADER.size
    centroids = np.frombuffer(blob, "<f4", lists * dimension, at).reshape(lists, dimension)
    ranges = np.frombuffer(blob, "<f4", 2 * dimension, at + sizes[0])
    assignment = np.frombuffer(blob, "<i4", rows, at + sizes[0] + sizes[1])
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
    )
