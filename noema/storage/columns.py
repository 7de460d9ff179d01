"""``graph.columns``: the graph as fixed-width arrays and one string heap, read without JSON.

A bundle's ``graph.json`` is the source of truth; this member is a derived copy of it that
opens faster, because nothing is parsed: every field is an array read in place, checked with
vectorized numpy, and a record is made from the arrays only when a reader asks for it
(:mod:`noema.storage._column_records`; the figures are in the
README's "Large knowledge bases").

Layout (all numbers little-endian):

``magic``
    8 bytes, ``NOEMACOL``; then ``version`` (uint32, :data:`COLUMNS_VERSION`) and ``header``
    (uint32, the length in bytes of the header that follows).
``header``
    UTF-8 JSON object: ``arrays``, for each array below its ``dtype`` (numpy notation), byte
    ``offset`` from the start of the member (a multiple of 8) and ``count`` of items; and
    ``merge_log``, the string holding the canonicalizer's merge log as a JSON list (-1: none),
    and ``sentences`` (below).
    The arrays follow, each starting at its offset.

Strings are numbered; a field holding a string holds its number (int32). ``heap`` (uint8) is
every string's UTF-8 in number order, and ``string_offsets`` (int64, one more than the strings)
the *character* offset at which each starts once the heap is decoded, the last being the heap's
length in characters. Each distinct string is stored once.

A record's variable-length parts (aliases, participants, mentions) are ranges: ``X_range``
(int64, one more than the records) gives where record n's items start in the item array, the
last being the item array's length.

========================  =======  ==================================================================
array                     dtype    one item per
========================  =======  ==================================================================
document_id               int32    document, in graph order: its id
document_text             int32    document: its text
document_metadata         int32    document: its metadata as a JSON object, -1 when empty
entity_id, entity_name    int32    entity, in graph order
entity_type               uint8    entity: the position of its type in ``ENTITY_TYPES``
entity_confidence         float64  entity
entity_alias_range        int64    entity, plus one: its range in ``entity_alias`` (strings)
entity_mention_range      int64    entity, plus one: its range in the ``entity_mention_*`` arrays
relation_id               int32    relation, in graph order
relation_subject          int32    relation: the row of its subject among the entities
relation_predicate        int32    relation: its predicate
relation_object           int32    relation: the row of its object among the entities
relation_confidence       float64  relation
relation_mention_range    int64    relation, plus one
event_id, event_label     int32    event, in graph order
event_time                int32    event: its time, -1 when it has none
event_confidence          float64  event
event_participant_range   int64    event, plus one: its range in ``event_participant``
event_participant         int32    participant: the row of the entity among the entities
event_mention_range       int64    event, plus one
X_mention_document        int32    mention (X: entity, relation, event): its document's row
X_mention_start, _end     int64    mention: the character span ``[start, end)`` in that document
sentence_document         int32    source sentence, in sidecar row order: its document's row
sentence_start, _end      int64    source sentence: its character span in that document
sentence_digest           int32    source sentence: the hash in its key (``sentence_key``)
sentence_fact_range       int64    source sentence, plus one: its range in ``sentence_fact``
sentence_fact             int32    fact of a sentence: its row among the relations then events
topic_entity              int32    topic: the entity's row, in the sidecar's topic order
topic_document_range      int64    topic, plus one: its range in ``topic_document``
topic_document            int32    document about a topic: its row
compared_name, _form      int32    entity name or alias: it, and its compared form (normalize_name)
compared_title, _form     int32    document title: it, and the compared form topics match it by
X_id_order                int32    record of kind X (document, entity, relation, event): the rows
                                   sorted by id (code point order, as ``str`` sorts)
entity_fact_range         int64    entity, plus one: its range in ``entity_fact``
entity_fact               int32    fact touching an entity: its row among the relations then events,
                                   an entity's facts in row order, a relation of an entity with
                                   itself listed once
========================  =======  ==================================================================

The id orders and ``entity_fact`` (from version 2) are there so that opening makes nothing per
record: the row of an id is a binary search of its kind's order over the heap, not a dict of
every id, and an entity's facts are read, not sorted out of every relation and event (together
half of opening a million facts, and a few hundred bytes a fact). A member of version 1 has them
worked out on opening.

The sidecar arrays are empty and the header's ``sentences`` is null when the bundle has no
sidecar; otherwise ``sentences`` holds the ``rendering`` (``SENTENCE_RENDERING``) and the
``topics`` rule (``TOPIC_RULE``) they were made with, and a reader whose differ works them out
from the graph again instead.

Reading refuses, as :class:`~noema.errors.BundleError`, a member whose arrays are missing, of
another type, or reach past its end; a string number, row or range out of bounds; a heap that is
not UTF-8 or whose offsets do not cover it; counts that differ from the manifest's; a span outside
its document; an unknown type; a confidence outside [0, 1]; an id order that is not a
permutation of its rows; an ``entity_fact`` that is not the facts each entity's relations and
events give, in order (each pair an end of its fact, each entity's facts ascending, as many as the
facts make: vectorized, nothing sorted). That each order sorts its ids and that no two records of
a kind, nor a relation and an event, share an id needs every id read: it is checked with the
sidecar's keys below (in a member of version 1, on every opening). Nothing is allocated
before the sizes are checked against the member's length, so a hostile header cannot make a
reader allocate more than the member holds. Nor a heap of strings referenced many times over:
the characters the fields reference, and the ids ``graph.json`` writes where this member holds a
row, are summed and held to a budget before any record is made. The sidecar's sentences and keys
are compared with the graph's, as a save compares them (:mod:`noema.storage._save_checks`): on
opening where the member is hashed there, else with its sha256 (they read every mention and
hash every sentence); each document's sentences being one run ordered by span, which reading
them relies on, on every opening.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from noema.errors import BundleError, GraphError
from noema.model.graph import SemanticGraph
from noema.storage._column_checks import (
    check_entity_facts,
    check_id_orders,
    check_numbers,
    check_references,
    check_sentences,
    is_int,
    same_length,
)
from noema.storage._column_ids import Heap
from noema.storage._column_records import (
    Tables,
    graph_from_arrays,
    version_1_arrays,
)
from noema.storage._column_sentences import stored_sentences
from noema.storage._column_write import COLUMNS_VERSION, DTYPES, MAGIC, PREFIX, columns_bytes
from noema.storage._save_checks import (
    check_sentence_keys,
    check_sentence_runs,
    check_sentence_sources,
)
from noema.vectors.sentences import (
    SENTENCE_RENDERING,
    TOPIC_RULE,
    StoredSentences,
)

__all__ = ["COLUMNS_VERSION", "Columns", "columns_bytes", "read_columns"]

# What version 1 did not hold: a reader of it works them out on opening, as it did before.
_ADDED_IN_2 = (
    "document_id_order",
    "entity_id_order",
    "relation_id_order",
    "event_id_order",
    "entity_fact_range",
    "entity_fact",
)


@dataclass(frozen=True)
class Columns:
    """What the member holds: the graph, its merge log (the records as ``graph.json`` holds
    them, for the caller to read) and, when it was written with the sidecar this Noema makes,
    what the sidecar holds besides vectors."""

    graph: SemanticGraph
    merge_log: list[Any]
    sentences: StoredSentences | None
    # the fact ids in row order and each one's row, as the vectors are stored (relations, then
    # events): the tables' own, shared with the fact index rather than made again
    facts: tuple[Sequence[str], Mapping[str, int]]
    # the checks read_columns(check_keys=False) leaves for the caller to run with the sha256
    deferred: tuple[Callable[[], None], ...] = ()


def read_columns(
    blob: bytes | memoryview,
    counts: object,
    *,
    max_memory: int | None = None,
    check_keys: bool = True,
) -> Columns:
    """The member's contents, after the checks the module docstring lists; ``counts`` are the
    manifest's, ``max_memory`` the budget opening was given (``None``: the default).
    ``check_keys=False`` leaves out the checks that read every sentence and mention: each sidecar
    key against its sentence's text (:func:`~noema.storage._save_checks.check_sentence_keys`,
    which hashes them) and the sentences against the facts' mentions
    (:func:`~noema.storage._save_checks.check_sentence_sources`, 0.3 s at a million facts), as
    :attr:`Columns.deferred` for the caller to run later, with the member's sha256. What reading
    the sidecar relies on (each document's sentences one run, ordered by span) is checked in
    any case.

    Raises:
        BundleError: saying what is wrong (the caller adds the bundle's name).
    """
    arrays, header = _arrays(memoryview(blob))
    strings = _heap(arrays["heap"], arrays["string_offsets"])
    n = {
        "documents": same_length(arrays, "document", ("id", "text", "metadata")),
        "entities": same_length(arrays, "entity", ("id", "name", "type", "confidence")),
        "relations": same_length(
            arrays, "relation", ("id", "subject", "predicate", "object", "confidence")
        ),
        "events": same_length(arrays, "event", ("id", "label", "time", "confidence")),
    }
    actual = {**n, "facts": n["relations"] + n["events"]}
    if counts != actual:
        raise BundleError(f"graph.columns holds {actual!r}, the manifest counts {counts!r}")
    check_numbers(arrays, len(strings), n)
    check_sentences(arrays, len(strings), n)
    check_references(arrays, max_memory)
    version_1 = "entity_fact" not in arrays
    if version_1:
        arrays = {**arrays, **version_1_arrays(arrays, strings, n)}
    check_id_orders(arrays, n)
    check_entity_facts(arrays, n)
    try:
        graph, tables, held, strings = graph_from_arrays(arrays, strings)
    except GraphError as exc:
        raise BundleError(f"graph.columns is invalid: {exc}") from None
    # that the orders sort the ids, each once, reads every id: with the sha256 (a member of
    # version 1 had them read and checked in working its orders out)
    deferred: tuple[Callable[[], None], ...] = () if version_1 else (tables.id_checks(),)
    if check_keys and deferred:
        deferred[0]()
        deferred = ()
    sentences: StoredSentences | None = None
    if header["sentences"] == {"rendering": SENTENCE_RENDERING, "topics": TOPIC_RULE}:
        sentences, later = _sentences(held, strings, graph, tables, check_keys)
        deferred += later
    merge_log = _merge_log(header["merge_log"], strings)
    return Columns(graph, merge_log, sentences, tables.facts(), deferred)


def _merge_log(number: int, strings: Heap) -> list[Any]:
    if number < 0:
        return []
    if number >= len(strings):
        raise BundleError("graph.columns: the merge log's string number is out of range")
    try:
        log = orjson.loads(strings[number])
    except ValueError as exc:
        raise BundleError(f"graph.columns: the merge log is not JSON: {exc}") from None
    if not isinstance(log, list):
        raise BundleError("graph.columns: the merge log is not a JSON list")
    return log


def _arrays(blob: memoryview) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]]:
    """Every array as a view of ``blob`` (nothing copied), after checking the directory; and
    the header."""
    if len(blob) < PREFIX.size:
        raise BundleError(f"graph.columns holds {len(blob)} bytes, too few for its header")
    magic, version, header_size = PREFIX.unpack_from(blob)
    if magic != MAGIC:
        raise BundleError("graph.columns does not start with NOEMACOL: it is not a columnar graph")
    if not 1 <= version <= COLUMNS_VERSION:
        raise BundleError(
            f"graph.columns is version {version}; this Noema reads versions 1 to {COLUMNS_VERSION}"
        )
    if PREFIX.size + header_size > len(blob):
        raise BundleError("graph.columns declares a header longer than the member")
    try:
        header = orjson.loads(bytes(blob[PREFIX.size : PREFIX.size + header_size]))
    except ValueError as exc:
        raise BundleError(f"graph.columns has an unreadable header: {exc}") from None
    directory = header.get("arrays") if isinstance(header, dict) else None
    if (
        not isinstance(directory, dict)
        or not is_int(header.get("merge_log"))
        or not isinstance(header.get("sentences", ""), dict | None)
    ):
        raise BundleError(
            "graph.columns has an unreadable header: it needs arrays (an object), merge_log "
            "(an integer) and sentences (an object or null)"
        )
    arrays: dict[str, npt.NDArray[Any]] = {}
    for name, dtype in DTYPES.items():
        if version == 1 and name in _ADDED_IN_2:
            continue
        entry = directory.get(name)
        if not isinstance(entry, dict) or entry.get("dtype") != dtype:
            raise BundleError(f"graph.columns has no {dtype} array {name!r}")
        offset, count = entry.get("offset"), entry.get("count")
        if not is_int(offset) or not is_int(count) or offset < 0 or count < 0:
            raise BundleError(f"graph.columns: array {name!r} has no offset and count")
        size = np.dtype(dtype).itemsize
        if offset + count * size > len(blob):
            raise BundleError(
                f"graph.columns: array {name!r} ({count} items at byte {offset}) reaches past "
                f"the member's {len(blob)} bytes"
            )
        arrays[name] = np.frombuffer(blob, dtype=dtype, count=count, offset=offset)
    return arrays, header


def _heap(heap: npt.NDArray[Any], offsets: npt.NDArray[Any]) -> Heap:
    """The strings, read from one decoding of the heap (a decode per string took longer than
    the rest of reading), decoded from the member's bytes where they lie (``tobytes`` first
    copied them: 0.2 s of opening a million facts)."""
    try:
        text = codecs.utf_8_decode(heap.data, "strict", True)[0]
    except UnicodeDecodeError as exc:
        raise BundleError(f"graph.columns: the string heap is not UTF-8: {exc}") from None
    if len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != len(text):
        raise BundleError(
            f"graph.columns: the string offsets do not cover the heap's {len(text)} characters"
        )
    if np.any(np.diff(offsets) < 0):
        raise BundleError("graph.columns: the string offsets go backwards")
    return Heap(text, offsets)


def _sentences(
    arrays: Mapping[str, npt.NDArray[Any]],
    strings: Heap,
    graph: SemanticGraph,
    tables: Tables,
    check_keys: bool,
) -> tuple[StoredSentences, tuple[Callable[[], None], ...]]:
    """The sidecar's sentences, facts, keys and topics, read in place from arrays already
    checked, once they are what a save will work out again from the graph (now, or by the
    checks returned beside them where ``check_keys`` is false)."""
    doc_ids = tables.documents.ids
    relations, events = len(graph.relations), len(graph.events)

    def sources() -> None:
        check_sentence_sources(arrays, relations, events)

    if check_keys:
        sources()
    check_sentence_runs(arrays)  # where sources() waits: what reading the sidecar relies on
    stored = stored_sentences(
        arrays,
        strings,
        doc_ids,
        doc_ids.rows(),
        tables.entities.ids,
        tables.entities.ids.rows(),
        tables.fact_id,
    )
    if check_keys:
        check_sentence_keys(graph, stored.keys)
        return stored, ()
    return stored, (sources,)
