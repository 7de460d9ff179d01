"""The codec of ``names.bin``: the entity-name vectors the canonicalizer has embedded.

Layout: ``rows`` little-endian int32, each the position of an entity in the graph's entity
order (strictly increasing), then ``rows`` x ``dimension`` little-endian float32, one unit
vector per listed entity, the vector of its name. The manifest's ``names.rows`` gives ``rows``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from noema.errors import BundleError
from noema.model.graph import SemanticGraph

__all__ = ["StoredNames", "check_name_lengths", "names_bytes", "read_names"]


def names_bytes(
    graph: SemanticGraph, name_vectors: Mapping[str, npt.NDArray[np.float32]]
) -> tuple[bytes, int] | None:
    """The member's bytes and its row count for the entities of ``graph`` that have a name
    vector; ``None`` when none has."""
    positions = [n for n, eid in enumerate(graph.entities) if eid in name_vectors]
    if not positions:
        return None
    ids = list(graph.entities)
    rows = np.stack([name_vectors[ids[n]] for n in positions]).astype("<f4")
    return np.asarray(positions, dtype="<i4").tobytes() + rows.tobytes(), len(positions)


@dataclass(frozen=True)
class StoredNames:
    """The name vectors a bundle kept, read in place: ``vectors`` is a view of the member (row n
    the vector of the name of ``entity_ids[n]``), copied out only when the canonicalizer first
    needs them (:meth:`copied`): opening a million facts copied 0.5 GB that a base only read
    never uses. ``check``: where the view is of a bundle's mapped file, what to call before
    reading it (it raises once another program wrote the file in place)."""

    entity_ids: Sequence[str]
    vectors: npt.NDArray[np.float32]
    check: Callable[[], None] | None = None

    def __len__(self) -> int:
        return len(self.entity_ids)

    def copied(self) -> dict[str, npt.NDArray[np.float32]]:
        """The vectors by entity id, in one copy of the matrix (each entity's vector a view of
        it: a copy of each row took 5 s at a million facts), no longer views of the bundle,
        which the canonicalizer would otherwise hold open for the life of the process, past
        any save that replaces its file.

        Raises:
            BundleError: the bundle's file was written in place since it was opened, or a
                vector holds a value that is not finite.
        """
        if self.check is not None:
            self.check()
        matrix = np.array(self.vectors, dtype=np.float32)
        if not np.all(np.isfinite(matrix.sum(axis=1, dtype=np.float64))):
            # read here for the first time: opening a large bundle reads none of them (a NaN
            # or an infinity makes its row's sum one; no temporary the matrix's size)
            raise BundleError("names.bin holds NaN or infinite values (the bundle is damaged)")
        return dict(zip(self.entity_ids, matrix, strict=True))


def read_names(
    blob: bytes | memoryview,
    rows: int,
    dimension: int,
    entity_ids: Sequence[str],
    *,
    unit_checked: bool = True,
    check: Callable[[], None] | None = None,
) -> StoredNames:
    """The name vectors by entity id, from a member of ``rows * (4 + 4 * dimension)`` bytes
    (the caller checks the size against the manifest), read in place (``check``: as for
    :class:`StoredNames`). ``unit_checked``: the vectors' lengths checked now
    (:func:`check_name_lengths`); else the caller checks them later.

    Raises:
        BundleError: positions out of order or outside ``entity_ids``, or (``unit_checked``)
            vectors that are not unit length.
    """
    positions = np.frombuffer(blob, dtype="<i4", count=rows).astype(np.int64)
    if rows and (
        positions[0] < 0 or positions[-1] >= len(entity_ids) or np.any(np.diff(positions) <= 0)
    ):
        raise BundleError(
            f"lists entity positions out of order or outside the {len(entity_ids)} entities "
            "of graph.json"
        )
    if unit_checked:
        check_name_lengths(blob, rows, dimension)
    listed = [entity_ids[p] for p in positions.tolist()]
    vectors = _vectors(blob, rows, dimension).astype(np.float32, copy=False)
    return StoredNames(listed, vectors, check)


def check_name_lengths(blob: bytes | memoryview, rows: int, dimension: int) -> None:
    """Every name vector of the member of unit length.

    Raises:
        BundleError: one is not.
    """
    vectors = _vectors(blob, rows, dimension)
    # squared lengths without a squared copy of the matrix (np.linalg.norm made one: 1.1 s of
    # opening a million facts' names)
    norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    if not np.all(np.abs(norms - 1.0) <= 1e-3):
        raise BundleError("holds vectors that are not unit length")


def _vectors(blob: bytes | memoryview, rows: int, dimension: int) -> npt.NDArray[np.float32]:
    return np.frombuffer(blob, dtype="<f4", offset=4 * rows).reshape(rows, dimension)
