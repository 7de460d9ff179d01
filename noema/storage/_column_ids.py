"""The ids of ``graph.columns``' records, read in place: the strings by number, each kind's ids in
row order, and the row of an id, found by a binary search of the kind's stored id order
(``X_id_order``) rather than through a list and a dict of every id made on opening (at a million
facts they took half of opening, and a few hundred bytes a fact).

A search compares the id with the heap's strings along the stored order and answers a row only
where the string found is the id: a damaged order never gives another record. Where a search
sees the damage (the ids it bisects first, every sixteenth or more, out of order, or the ids on
either side of a missed one) it raises a :class:`~noema.errors.BundleError`; other damage costs a
lookup.
That the order is a permutation of the rows is checked on every opening
(:func:`~noema.storage._column_checks.check_id_orders`); that it is sorted, and that the ids are
distinct, needs every id read, so it is checked with the member's sha256
(:func:`check_id_order`).

The last lookups are remembered, as a retrieval asks for the same few hundred ids again and
again. A writer looks up every id (which facts a write removed, which it added): past
:data:`SEARCHES_BEFORE_HOLDING` searches of one kind, its ids are held in a dict, as opening held
them before.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from itertools import islice, pairwise
from operator import lt
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from noema.errors import BundleError, UnknownIdError

__all__ = [
    "SEARCHES_BEFORE_HOLDING",
    "FactIds",
    "Heap",
    "Ids",
    "RowStrings",
    "check_id_order",
    "id_checks",
    "id_order",
]

# Lookups remembered per kind (a retrieval reads the same few hundred facts many times).
_REMEMBERED = 1 << 16
# Every this many ids in order (or more, see _FENCES), one is kept in a list for the search's
# first steps (a bisect in C): the rest of the search compares a few strings sliced from the heap.
_FENCE = 16
# At most about this many kept per kind: they are sliced from the heap at a kind's first lookup,
# which at 3M facts and every sixteenth id made the first retrieval after opening four times a
# later one (0.16 s). At a million facts 8,192 a kind still cost 9 ms of the first retrieval
# (three kinds), 2,048 cost 2.4 ms; each halving costs a search one more string comparison
# (about a microsecond).
_FENCES = 2048
# Searches of one kind after which its ids are held in a dict (at about 5 us a search, the
# searches then cost as much as the dict once did on opening); plus a tenth of its ids.
SEARCHES_BEFORE_HOLDING = 4096
_CHUNK = 1 << 14  # ids sliced at a time when they are all read in order


class Heap:
    """The strings by number, sliced on demand from one decoding of the heap."""

    def __init__(self, text: str, offsets: npt.NDArray[np.int64]) -> None:
        self.text = text
        self.offsets = offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, number: int) -> str:
        return self.text[self.offsets[number] : self.offsets[number + 1]]

    def picked(self, numbers: npt.NDArray[Any]) -> list[str]:
        """The strings of these numbers, in order."""
        bounds, text = self.offsets, self.text
        starts, ends = bounds[numbers].tolist(), bounds[numbers + 1].tolist()
        return [text[a:b] for a, b in zip(starts, ends, strict=True)]


class RowStrings(Sequence[str]):
    """Strings by row, each made when it is asked for (:meth:`at`); a slice, a list of them."""

    def at(self, row: int) -> str:
        raise NotImplementedError

    def picked(self, rows: range) -> list[str]:
        """The strings of ``rows``, in order."""
        return [self.at(n) for n in rows]

    @overload
    def __getitem__(self, row: int) -> str: ...

    @overload
    def __getitem__(self, row: slice) -> list[str]: ...

    def __getitem__(self, row: int | slice) -> str | list[str]:
        if isinstance(row, slice):
            return self.picked(range(len(self))[row])
        n = len(self)
        if not -n <= row < n:
            raise IndexError(row)
        return self.at(row if row >= 0 else row + n)


def _ints(array: npt.NDArray[Any], dtype: type[np.int32 | np.int64]) -> memoryview:
    """``array`` as a memoryview of native integers (no copy where it is one already)."""
    native = np.ascontiguousarray(array, dtype=dtype)
    return native.data.cast("B").cast("q" if native.itemsize == 8 else "i")


def id_order(ids: Sequence[str]) -> npt.NDArray[np.int32]:
    """``X_id_order``: the rows of ``ids`` sorted by id (code point order, as ``str`` sorts)."""
    return np.asarray(sorted(range(len(ids)), key=ids.__getitem__), dtype=np.int32)


class Ids(RowStrings):
    """One kind's ids in row order (``numbers``: each row's string number), and the row of an
    id through ``order``, the rows sorted by id."""

    def __init__(self, heap: Heap, numbers: npt.NDArray[Any], order: npt.NDArray[Any]) -> None:
        self.heap, self.numbers, self.order = heap, numbers, order
        self._start()

    def _start(self) -> None:
        # the arrays as memoryviews: indexing one gives an int three times as fast as numpy
        self._text, self._bounds = self.heap.text, _ints(self.heap.offsets, np.int64)
        self._numbers, self._order = (
            _ints(self.numbers, np.int32),
            _ints(self.order, np.int32),
        )
        self._fences: list[str] | None = None
        self._step = max(_FENCE, -(-len(self.numbers) // _FENCES))
        self._held: dict[str, int] | None = None
        self._searches = 0
        self._remembered = lru_cache(maxsize=_REMEMBERED)(self._search)

    def __getstate__(self) -> dict[str, Any]:
        return {"heap": self.heap, "numbers": self.numbers, "order": self.order}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._start()

    def __len__(self) -> int:
        return len(self.numbers)

    def at(self, row: int) -> str:
        number = self._numbers[row]
        return self._text[self._bounds[number] : self._bounds[number + 1]]

    def picked(self, rows: range) -> list[str]:
        return self.heap.picked(self.numbers[np.arange(rows.start, rows.stop, rows.step)])

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self), _CHUNK):
            yield from self.heap.picked(self.numbers[start : start + _CHUNK])

    def __contains__(self, key: object) -> bool:
        return self.row_of(key) is not None

    def row_of(self, key: object) -> int | None:
        """The row whose id is ``key``, or ``None``."""
        if not isinstance(key, str):
            return None
        held = self._held
        if held is not None:
            return held.get(key)
        row: int | None = self._remembered(key)
        return row

    def _search(self, key: str) -> int | None:
        self._searches += 1
        if self._searches > SEARCHES_BEFORE_HOLDING + len(self) // 10:
            self._held = {item: n for n, item in enumerate(self)}
            return self._held.get(key)
        fences, step = self._fences, self._step
        if fences is None:
            fences = self.heap.picked(self.numbers[self.order[::step]])
            if any(a >= b for a, b in pairwise(fences)):  # the fences only, once
                _refuse_order()
            self._fences = fences
        # the fence at or before the key, then a binary search of the ids after it
        at = bisect.bisect_right(fences, key) - 1
        if at < 0:
            return None
        order, at_row = self._order, self.at
        if fences[at] == key:
            return order[at * step]
        low, high = at * step + 1, min((at + 1) * step, len(self))
        while low < high:
            middle = (low + high) // 2
            if at_row(order[middle]) < key:
                low = middle + 1
            else:
                high = middle
        after = at_row(order[low]) if low < len(self) else None
        if after == key:
            return order[low]
        # not there: where the order sorts, the key lies between the ids on either side
        if not at_row(order[low - 1]) < key or (after is not None and not key < after):
            _refuse_order()
        return None

    def rows(self) -> Mapping[str, int]:
        """Each id's row, as a mapping read through :meth:`row_of`."""
        return _Rows(self)


def _refuse_order() -> None:
    """Raise for an order seen not to sort its ids, where a lookup meets it (the whole order
    is checked with the member's sha256)."""
    raise BundleError(
        "graph.columns: an id order does not sort its ids (damaged or edited); check the bundle "
        "with `noema validate` or KnowledgeBase.load(path, verify=True)"
    )


class FactIds(RowStrings):
    """The fact ids in row order, as the vectors are stored: the relations', then the events'."""

    def __init__(self, relations: Ids, events: Ids) -> None:
        self.relations, self.events = relations, events

    def __len__(self) -> int:
        return len(self.relations) + len(self.events)

    def at(self, row: int) -> str:
        relations = len(self.relations)
        return self.relations.at(row) if row < relations else self.events.at(row - relations)

    def __iter__(self) -> Iterator[str]:
        yield from self.relations
        yield from self.events

    def __contains__(self, key: object) -> bool:
        return self.row_of(key) is not None

    def row_of(self, key: object) -> int | None:
        row = self.relations.row_of(key)
        if row is not None:
            return row
        row = self.events.row_of(key)
        return None if row is None else len(self.relations) + row

    def rows(self) -> Mapping[str, int]:
        return _Rows(self)


class _Rows(Mapping[str, int]):
    """Each id's row, looked up in the ids (:meth:`Ids.row_of`)."""

    def __init__(self, ids: Ids | FactIds) -> None:
        self.ids = ids

    def __getitem__(self, key: str) -> int:
        row = self.ids.row_of(key)
        if row is None:
            raise UnknownIdError(f"no record with id {key!r}")
        return row

    def get(self, key: str, default: Any = None) -> Any:
        row = self.ids.row_of(key)
        return default if row is None else row

    def __contains__(self, key: object) -> bool:
        return self.ids.row_of(key) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)


def check_id_order(kind: str, ids: Ids) -> None:
    """``X_id_order`` (a permutation, checked on opening) lists the ids in order, each once.

    Raises:
        BundleError: two records share an id, or the order is not theirs.
    """
    listed = ids.heap.picked(ids.numbers[ids.order])
    if all(map(lt, listed, islice(listed, 1, None))):
        return
    if len(set(listed)) != len(listed):
        raise BundleError(f"graph.columns: two {kind} records share an id")
    raise BundleError(
        f"graph.columns: the {kind} ids are not in the order {kind}_id_order gives (damaged or "
        "edited)"
    )


def id_checks(ids: Mapping[str, Ids]) -> Callable[[], None]:
    """Every kind's :func:`check_id_order`, then that no relation and event share an id (the
    vectors of facts are filed by id)."""

    def check() -> None:
        for kind, kind_ids in ids.items():
            check_id_order(kind, kind_ids)
        relations, events = ids["relation"], ids["event"]
        if len(relations) and len(events) and not set(relations).isdisjoint(events):
            raise BundleError("graph.columns: a relation and an event share an id")

    return check
