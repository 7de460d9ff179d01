"""Where a graph keeps its records: by id in insertion order, either all in memory or read from
a base of rows on demand (a bundle's columns) with the changes made since held beside it.

A graph opened from a large bundle reads its entities, relations, events and documents in place
and makes a record only when one is asked for: making every record of a million-fact graph took
most of opening it and most of the memory it held. :class:`RecordStore` is that mapping; with no
base it is an ordinary insertion-ordered mapping. :class:`FactsByEntity` is the index of the facts
touching each entity, read from the base's adjacency until an entity's facts change.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping, MutableMapping, Sequence, ValuesView
from typing import Generic, Protocol, TypeVar

from noema.errors import UnknownIdError

__all__ = ["Adjacency", "FactsByEntity", "RecordStore", "Rows", "changed_ids"]

_R = TypeVar("_R")
_R_co = TypeVar("_R_co", covariant=True)


class Rows(Protocol[_R_co]):
    """Records of one kind stored as rows: their count, each row's id (and all of them in row
    order), the row of an id, and the record of a row."""

    def __len__(self) -> int: ...

    def id_at(self, row: int) -> str: ...

    def all_ids(self) -> Sequence[str]: ...

    def row_of(self, record_id: str) -> int | None: ...

    def record(self, row: int) -> _R_co: ...


class Adjacency(Protocol):
    """The ids of the facts touching an entity, as a base stores them, in fact order."""

    def facts(self, entity_id: str) -> list[str]: ...


class RecordStore(MutableMapping[str, _R], Generic[_R]):
    """Records by id in insertion order: a base's rows (none by default), then the records added
    since. A base row's record is made when it is asked for; one replaced keeps its place, one
    removed and added again goes last, as in a dict."""

    def __init__(self, base: Rows[_R] | None = None) -> None:
        self._base = base
        self._changed: dict[str, _R] = {}  # base rows replaced
        self._removed: set[str] = set()  # base rows removed
        self._added: dict[str, _R] = {}  # added since, in order (removed base rows included)

    def _in_base(self, key: str) -> bool:
        return self._base is not None and self._base.row_of(key) is not None

    def __getitem__(self, key: str) -> _R:
        found = self._added.get(key)
        if found is not None:
            return found
        if self._base is None or key in self._removed:
            raise UnknownIdError(f"no record with id {key!r}")
        found = self._changed.get(key)
        if found is not None:
            return found
        row = self._base.row_of(key) if isinstance(key, str) else None
        if row is None:
            raise UnknownIdError(f"no record with id {key!r}")
        return self._base.record(row)

    def __contains__(self, key: object) -> bool:
        if key in self._added:
            return True
        if self._base is None or not isinstance(key, str) or key in self._removed:
            return False
        return key in self._changed or self._base.row_of(key) is not None

    def __setitem__(self, key: str, value: _R) -> None:
        if key in self._added or key in self._removed or not self._in_base(key):
            self._added[key] = value
        else:
            self._changed[key] = value

    def __delitem__(self, key: str) -> None:
        if key in self._added:
            del self._added[key]
        elif key in self:
            self._removed.add(key)
            self._changed.pop(key, None)
        else:
            raise UnknownIdError(f"no record with id {key!r}")

    def popitem(self) -> tuple[str, _R]:
        """The last item, removed (as a dict's ``popitem``; the mixin's takes the first)."""
        if self._added:
            key = next(reversed(self._added))
        else:
            listed = [k for _, k in self._base_ids()]
            if not listed:
                raise UnknownIdError("popitem(): the store is empty")
            key = listed[-1]
        value = self[key]
        del self[key]
        return key, value

    def _base_ids(self) -> Iterator[tuple[int, str]]:
        if self._base is None:
            return
        removed = self._removed
        for row, key in enumerate(self._base.all_ids()):
            if key not in removed:
                yield row, key

    def __iter__(self) -> Iterator[str]:
        if self._base is not None:
            if self._removed:
                yield from (key for _, key in self._base_ids())
            else:  # the base's own ids, read in order (not each looked up in _removed)
                yield from self._base.all_ids()
        yield from self._added

    def __len__(self) -> int:
        return (len(self._base) if self._base else 0) - len(self._removed) + len(self._added)

    def _pairs(self) -> Iterator[tuple[str, _R]]:
        """Every id and record in order, each base row read once (not looked up by its id)."""
        base = self._base
        if base is not None:
            for row, key in self._base_ids():
                found = self._changed.get(key)
                yield key, (found if found is not None else base.record(row))
        yield from self._added.items()

    def values(self) -> ValuesView[_R]:
        return _Values(self)

    def items(self) -> ItemsView[str, _R]:
        return _Items(self)

    def _touched(self) -> set[str]:
        return {*self._changed, *self._added, *self._removed}

    def copy(self) -> RecordStore[_R]:
        """A store that can be changed without touching this one (the base is shared: it is
        never changed)."""
        other: RecordStore[_R] = RecordStore(self._base)
        other._changed = dict(self._changed)
        other._removed = set(self._removed)
        other._added = dict(self._added)
        return other


def changed_ids(new: Mapping[str, _R], old: Mapping[str, _R]) -> set[str] | None:
    """The ids whose records may differ between two stores over the same base rows (one a copy
    of the other, either changed since): every other id is the same row in both, or in
    neither. ``None`` when they share no base: then only comparing every record tells.

    A base row's record is made anew each time it is read, so "the same object" (how a write
    tells the records it replaced) holds only for records a store holds itself."""
    if (
        isinstance(new, RecordStore)
        and isinstance(old, RecordStore)
        and new._base is not None
        and new._base is old._base
    ):
        return new._touched() | old._touched()
    return None


class _Values(ValuesView[_R]):
    _mapping: RecordStore[_R]

    def __iter__(self) -> Iterator[_R]:
        for _, record in self._mapping._pairs():
            yield record


class _Items(ItemsView[str, _R]):
    _mapping: RecordStore[_R]

    def __iter__(self) -> Iterator[tuple[str, _R]]:
        return self._mapping._pairs()


class FactsByEntity:
    """The ids of the relations and events touching each entity, in the order they were added:
    the base's adjacency (none by default) until an entity's facts change, then that entity's
    own ordered set."""

    def __init__(self, base: Adjacency | None = None) -> None:
        self._base = base
        self._own: dict[str, dict[str, None]] = {}

    def of(self, entity_id: str) -> list[str]:
        own = self._own.get(entity_id)
        if own is not None:
            return list(own)
        return self._base.facts(entity_id) if self._base is not None else []

    def _owned(self, entity_id: str) -> dict[str, None]:
        own = self._own.get(entity_id)
        if own is None:
            own = self._own[entity_id] = dict.fromkeys(self.of(entity_id))
        return own

    def add(self, entity_id: str, fact_id: str) -> None:
        self._owned(entity_id)[fact_id] = None

    def discard(self, entity_id: str, fact_id: str) -> None:
        if entity_id in self._own or self._base is not None:
            self._owned(entity_id).pop(fact_id, None)

    def drop(self, entity_id: str) -> None:
        """The entity is gone: it touches no fact."""
        if self._base is None:
            self._own.pop(entity_id, None)
        else:
            self._own[entity_id] = {}

    def copy(self) -> FactsByEntity:
        other = FactsByEntity(self._base)
        other._own = {k: dict(v) for k, v in self._own.items()}
        return other
