"""What a bundle stores of a :class:`~noema.vectors.index.VectorIndex` besides its rows'
order: the flat inner-product index faiss would serialize, written and compared without faiss,
and the check that every stored row is a unit vector."""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np
import numpy.typing as npt

from noema.errors import BundleError
from noema.vectors.embed import Vectors

__all__ = [
    "FLAT_HEADER_BYTES",
    "byte_view",
    "check_flat",
    "check_unit_rows",
    "flat_pieces",
    "little_endian_rows",
]

# How far a stored row's length may be from 1 (float32 rounding is about 1e-7).
_UNIT_TOLERANCE = 1e-3


def check_unit_rows(matrix: Vectors) -> None:
    """Every row finite and of length 1, checked from the squared lengths alone (no temporary
    the size of the matrix: a non-finite number makes its row's squared length non-finite)."""
    squares = np.einsum("ij,ij->i", matrix, matrix)
    row, length = -1, 1.0
    if not np.all(np.isfinite(squares)):
        row = int(np.flatnonzero(~np.isfinite(squares))[0])
        if not np.all(np.isfinite(matrix[row])):
            raise BundleError("embeddings contain NaN or infinite values")
        length = math.sqrt(float(np.sum(matrix[row].astype(np.float64) ** 2)))  # overflowed
    elif len(squares):
        lengths = np.sqrt(squares)
        row = int(np.argmax(np.abs(lengths - 1.0)))
        length = float(lengths[row])
    if abs(length - 1.0) > _UNIT_TOLERANCE:
        raise BundleError(
            f"embedding row {row} has length {length:.4g}; every row must be a "
            "unit vector (a longer one would outscore every other fact)"
        )


def _same_bytes(a: memoryview, b: memoryview) -> bool:
    """Whether two byte views of one length hold the same bytes, compared a block at a time
    (memoryview's own comparison goes item by item: 0.25 s per 150 MB)."""
    step = 1 << 24
    return all(
        a[n : n + step].tobytes() == b[n : n + step].tobytes() for n in range(0, len(a), step)
    )


def _flat_header(rows: int, dimension: int) -> bytes:
    """What ``faiss.serialize_index`` writes before the vectors of an ``IndexFlatIP``: its type,
    dimension, row count, two unused fields faiss fills with 2**20, "trained", the metric (0:
    inner product) and the number of floats that follow (tests/test_index.py holds this equal
    to faiss's own output)."""
    fields = (dimension, rows, 1 << 20, 1 << 20, True, 0, rows * dimension)
    return b"IxFI" + struct.pack("<iqqq?iQ", *fields)


FLAT_HEADER_BYTES = len(_flat_header(0, 1))  # the same for every size: fixed-width fields


def little_endian_rows(vectors: Vectors) -> memoryview:
    """The bytes of ``vectors`` as little-endian float32, row-major: a view of the matrix
    itself where it is already laid out so (a save writes a million rows without a copy of
    1.5 GB), else of a converted copy."""
    return byte_view(np.ascontiguousarray(vectors, dtype="<f4"))


def byte_view(array: npt.NDArray[Any]) -> memoryview:
    """The bytes of a C-contiguous ``array``, as a view (an empty array has no view to cast)."""
    return array.data.cast("B") if array.size else memoryview(b"")


def flat_pieces(vectors: Vectors) -> tuple[bytes, memoryview]:
    """``faiss.serialize_index`` of an ``IndexFlatIP`` over ``vectors``, without building one:
    its header, then the rows (:func:`little_endian_rows`)."""
    return _flat_header(*vectors.shape), little_endian_rows(vectors)


def check_flat(
    blob: bytes | memoryview,
    vectors: bytes | memoryview,
    rows: int,
    dimension: int,
    *,
    rows_compared: bool = True,
) -> None:
    """``index.faiss`` must be exactly the flat inner-product index of ``embeddings.bin``: its
    header compared with the one faiss writes and the rest with the vectors' bytes, never
    deserialized, so a header claiming gigabytes, another metric or another index type is never
    acted on. (An approximate index is never read from a bundle: the loader builds it again
    from the vectors.) ``rows_compared=False`` checks the header and size only: nothing reads
    the member's rows (search uses ``embeddings.bin``, a save writes them again from it), and
    comparing them read both members whole, 0.18 s of a 1.7 s opening at 100,000 facts; a load
    with ``verify=True`` compares them."""
    header = _flat_header(rows, dimension)
    if (
        len(blob) != len(header) + len(vectors)
        or bytes(blob[: len(header)]) != header
        or (rows_compared and not _same_bytes(memoryview(blob)[len(header) :], memoryview(vectors)))
    ):
        raise BundleError(
            "index.faiss is not the inner-product flat index of the vectors in embeddings.bin"
        )
