"""The checks ``graph.columns`` passes before any record is made from it: every string number,
row and range within bounds, spans within their documents, and the lengths of a table's arrays
alike, all with vectorized numpy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

import numpy as np
import numpy.typing as npt

from noema.errors import BundleError
from noema.model.records import ENTITY_TYPES
from noema.storage.manifest import default_max_memory

__all__ = [
    "KINDS",
    "check_entity_facts",
    "check_id_orders",
    "check_numbers",
    "check_references",
    "check_sentences",
    "is_int",
    "same_length",
]

# Each kind of record, and what the manifest's counts call its records.
KINDS = {"document": "documents", "entity": "entities", "relation": "relations", "event": "events"}

# Every array of string numbers. Each distinct string is stored once, however many fields hold
# it, so what opening makes and a save writes out (graph.json holds every field in full) grows
# with the characters the fields reference, not with the heap's.
STRING_FIELDS = (
    "document_id",
    "document_text",
    "document_metadata",
    "entity_id",
    "entity_name",
    "entity_alias",
    "relation_id",
    "relation_predicate",
    "event_id",
    "event_label",
    "event_time",
    "sentence_digest",
    "compared_name",
    "compared_name_form",
    "compared_title",
    "compared_title_form",
)
# Arrays of rows whose record's id graph.json writes out in full at each of them.
ID_ROWS_OF_DOCUMENTS = (
    "entity_mention_document",
    "relation_mention_document",
    "event_mention_document",
    "sentence_document",
)
ID_ROWS_OF_ENTITIES = ("relation_subject", "relation_object", "event_participant")
# A graph Noema writes references its strings about twice (a name as a name and as a compared
# form); past this many characters, more than this many times the heap's is a heap made to be
# multiplied (one 1 MB string referenced by 10,000 documents opened in half a second and needed
# a 10 GB graph.json to save). An explicit budget replaces the ratio, as for graph.json.
REFERENCES_FROM = 64 << 20
MAX_REFERENCE_RATIO = 100
# what opening takes per referenced character, as per byte of graph.columns (storage.members)
MEMORY_PER_REFERENCED = 8


def is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def same_length(arrays: Mapping[str, npt.NDArray[Any]], table: str, fields: Sequence[str]) -> int:
    lengths = {len(arrays[f"{table}_{f}"]) for f in fields}
    if len(lengths) != 1:
        raise BundleError(f"graph.columns: the {table} arrays differ in length")
    return lengths.pop()


def _check_range(arrays: Mapping[str, npt.NDArray[Any]], name: str, items: str, n: int) -> None:
    """``name`` (an ``X_range``) covers the ``items`` array from 0 to its end, going forward."""
    starts = arrays[name]
    if len(starts) != n + 1 or starts[0] != 0 or starts[-1] != len(arrays[items]):
        raise BundleError(f"graph.columns: {name} does not cover {items} for {n} records")
    if np.any(np.diff(starts) < 0):
        raise BundleError(f"graph.columns: {name} goes backwards")


def _check_within(values: npt.NDArray[Any], bound: int, what: str, *, none: bool = False) -> None:
    """Every value in ``[0, bound)`` (or -1 where ``none`` allows it)."""
    low = -1 if none else 0
    if len(values) and (int(values.min()) < low or int(values.max()) >= bound):
        raise BundleError(f"graph.columns: a {what} is out of range (0 to {bound - 1})")


def check_sentences(
    arrays: Mapping[str, npt.NDArray[Any]], strings: int, n: Mapping[str, int]
) -> None:
    """The sidecar's arrays in bounds, and each sentence a span inside its document."""
    sentences = same_length(arrays, "sentence", ("document", "start", "end", "digest"))
    _check_within(arrays["sentence_digest"], strings, "string number in sentence_digest")
    _check_within(arrays["sentence_document"], n["documents"], "document row of a sentence")
    _check_range(arrays, "sentence_fact_range", "sentence_fact", sentences)
    _check_within(arrays["sentence_fact"], n["relations"] + n["events"], "fact row of a sentence")
    topics = len(arrays["topic_entity"])
    _check_within(arrays["topic_entity"], n["entities"], "entity row of a topic")
    _check_range(arrays, "topic_document_range", "topic_document", topics)
    _check_within(arrays["topic_document"], n["documents"], "document row of a topic")
    for kind in ("name", "title"):
        same_length(arrays, "compared", (kind, f"{kind}_form"))
        for field in (kind, f"{kind}_form"):
            _check_within(
                arrays[f"compared_{field}"], strings, f"string number in compared_{field}"
            )
    starts, ends = arrays["sentence_start"], arrays["sentence_end"]
    lengths = _text_lengths(arrays)[arrays["sentence_document"]]
    if not np.all((starts >= 0) & (starts <= ends) & (ends <= lengths)):
        raise BundleError("graph.columns: a sentence lies outside its document")


def _text_lengths(arrays: Mapping[str, npt.NDArray[Any]]) -> npt.NDArray[np.int64]:
    """Each document's length in characters (string numbers checked already)."""
    offsets, texts = arrays["string_offsets"], arrays["document_text"]
    lengths: npt.NDArray[np.int64] = offsets[texts + 1] - offsets[texts]
    return lengths


def check_numbers(
    arrays: Mapping[str, npt.NDArray[Any]], strings: int, n: Mapping[str, int]
) -> None:
    """Every string number, row and range in bounds, every span inside its document, every type
    known and confidence in [0, 1]: vectorized, before any record is made."""
    for name in ("document_id", "document_text", "entity_id", "entity_name", "entity_alias"):
        _check_within(arrays[name], strings, f"string number in {name}")
    for name in ("relation_id", "relation_predicate", "event_id", "event_label"):
        _check_within(arrays[name], strings, f"string number in {name}")
    for name in ("document_metadata", "event_time"):
        _check_within(arrays[name], strings, f"string number in {name}", none=True)
    for name in ("relation_subject", "relation_object", "event_participant"):
        _check_within(arrays[name], n["entities"], f"entity row in {name}")
    _check_within(arrays["entity_type"], len(ENTITY_TYPES), "type")
    _check_range(arrays, "entity_alias_range", "entity_alias", n["entities"])
    _check_range(arrays, "event_participant_range", "event_participant", n["events"])
    if n["events"] and np.any(np.diff(arrays["event_participant_range"]) < 1):
        raise BundleError("graph.columns: an event has no participant")
    text_lengths = _text_lengths(arrays)
    table = {"entity": "entities", "relation": "relations", "event": "events"}
    for kind, records in table.items():
        confidence = arrays[f"{kind}_confidence"]
        if not np.all((confidence >= 0.0) & (confidence <= 1.0)):  # NaN fails both
            raise BundleError(f"graph.columns: a {kind} confidence is outside [0, 1]")
        prefix = f"{kind}_mention"
        _check_range(arrays, f"{prefix}_range", f"{prefix}_document", n[records])
        documents = arrays[f"{prefix}_document"]
        starts, ends = arrays[f"{prefix}_start"], arrays[f"{prefix}_end"]
        if not len(documents) == len(starts) == len(ends):
            raise BundleError(f"graph.columns: the {kind} mention arrays differ in length")
        _check_within(documents, n["documents"], f"document row in {prefix}_document")
        if len(documents) and not np.all(
            (starts >= 0) & (starts <= ends) & (ends <= text_lengths[documents])
        ):
            raise BundleError(f"graph.columns: a {kind} mention lies outside its document")


def check_references(arrays: Mapping[str, npt.NDArray[Any]], max_memory: int | None) -> None:
    """The characters every string field references, and every id graph.json writes where
    graph.columns holds a row, summed (string numbers and rows checked already): what opening
    makes and what a save writes out,
    against :data:`MAX_REFERENCE_RATIO` times the heap's under the default budget, else against
    ``max_memory``."""
    lengths = np.diff(arrays["string_offsets"])
    referenced = 0
    for name in STRING_FIELDS:
        numbers = arrays[name]
        referenced += int(lengths[numbers[numbers >= 0]].sum())
    # graph.json writes the id of a mention's document in every mention, and the ids of a
    # fact's entities in every fact, where graph.columns holds a row number (a 1 MB document
    # id mentioned 10,000 times opened at once, and its save needed 10 GB); a save's sentence
    # keys hold their document's id too
    for table, rows in ((ID_ROWS_OF_DOCUMENTS, "document_id"), (ID_ROWS_OF_ENTITIES, "entity_id")):
        id_lengths = lengths[arrays[rows]]
        referenced += sum(int(id_lengths[arrays[name]].sum()) for name in table)
    heap = int(arrays["string_offsets"][-1])
    multiplied = referenced > REFERENCES_FROM and referenced > MAX_REFERENCE_RATIO * max(heap, 1)
    if max_memory is None and multiplied:
        raise BundleError(
            f"graph.columns refers to {referenced:,} characters of a {heap:,}-character "
            f"string heap ({referenced / max(heap, 1):,.0f} times; a Noema graph refers to "
            "its strings about twice): its strings are made to be multiplied. If you trust "
            "this bundle, open it with an explicit max_memory="
        )
    # the default budget bounds them too: within the ratio, a large heap could still ask a
    # save for more than the machine has
    budget = default_max_memory() if max_memory is None else max_memory
    if MEMORY_PER_REFERENCED * referenced > budget:
        raise BundleError(
            f"graph.columns refers to {referenced:,} characters: opening and saving it would "
            f"take about {MEMORY_PER_REFERENCED * referenced / 2**20:,.0f} MiB, more than the "
            f"budget of {budget / 2**20:,.0f} MiB; pass max_memory= (bytes) to allow more"
        )


def check_id_orders(arrays: Mapping[str, npt.NDArray[Any]], n: Mapping[str, int]) -> None:
    """Each ``X_id_order`` is a permutation of its kind's rows: every value in range, each once
    (whether it sorts the ids, which needs every id read, is checked with the member's sha256)."""
    for kind, records in KINDS.items():
        order, rows = arrays[f"{kind}_id_order"], n[records]
        if len(order) != rows:
            raise BundleError(f"graph.columns: {kind}_id_order does not list {rows} rows")
        _check_within(order, rows, f"{kind} row in {kind}_id_order")
        seen = np.zeros(rows, dtype=bool)
        seen[order] = True
        if not np.all(seen):
            raise BundleError(f"graph.columns: {kind}_id_order is not a permutation of the rows")


def check_entity_facts(arrays: Mapping[str, npt.NDArray[Any]], n: Mapping[str, int]) -> None:
    """``entity_fact_range`` and ``entity_fact`` are the facts touching each entity that the
    relations and events give, in fact order, each once (relation and event rows checked
    already; an event naming a participant twice is refused as the records are read, just after):
    vectorized, without sorting.

    Every relation pair (entity, fact) is an end of that relation, every pair an event's
    participants make is listed, the facts of an entity ascend, and there are as many of each
    as the relations and events make: so they are exactly those pairs, in that order.
    """
    _check_range(arrays, "entity_fact_range", "entity_fact", n["entities"])
    relations, facts = n["relations"], arrays["entity_fact"]
    _check_within(facts, relations + n["events"], "fact row of an entity")
    entity = np.repeat(
        np.arange(n["entities"], dtype=np.int64), np.diff(arrays["entity_fact_range"])
    )
    # one key per pair, ascending where each entity's facts ascend
    keys = entity * (relations + n["events"] + 1) + facts
    if np.any(keys[1:] <= keys[:-1]):
        raise BundleError(
            "graph.columns: the facts of an entity are not in fact order, or listed twice"
        )
    subject, obj = arrays["relation_subject"], arrays["relation_object"]
    of_relation = facts < relations
    rows, ends = facts[of_relation], entity[of_relation]
    participants = arrays["event_participant"]
    event = np.repeat(
        np.arange(n["events"], dtype=np.int64), np.diff(arrays["event_participant_range"])
    )
    wanted = participants.astype(np.int64) * (relations + n["events"] + 1) + event + relations
    found = np.searchsorted(keys, wanted)
    listed = found < len(keys)
    if not (
        np.all((subject[rows] == ends) | (obj[rows] == ends))
        and np.all(listed)
        and np.array_equal(keys[found[listed]], wanted)
    ):
        raise BundleError(
            "graph.columns: entity_fact lists facts that are not facts of that entity"
        )
    pairs = 2 * relations - int(np.count_nonzero(subject == obj))
    if len(rows) != pairs or len(facts) - len(rows) != len(participants):
        raise BundleError(
            f"graph.columns: entity_fact lists {len(facts)} facts of entities; the relations "
            f"and events make {pairs + len(participants)}"
        )
