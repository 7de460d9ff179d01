"""The members of a ``.noema`` bundle, one row each: its name, the schema it appeared in, how it
is stored, what it costs in memory to open, and the pair of steps that write and read it. The
bundle writes and reads by looping over :data:`MEMBERS`, and the container and the manifest's
checks read the same rows, so a new member is a row here, its codec and its test.

The rows are in the order the members are written, which is also the order they are read in:
the graph's members and the fact vectors first (``index.faiss``, the last of them, builds the
graph and the fact index once all of them are checked), then the derived members that need them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from noema.errors import BundleError, GraphError
from noema.model.graph import SemanticGraph
from noema.model.records import MergeRecord, json_bytes, read_merge_record
from noema.model.spans import Sentence
from noema.storage._opening import (
    COLUMNS_MEMBER,
    HASHED_ON_OPENING_BYTES,
    Core,
    Opening,
    named,
)
from noema.storage._save_checks import check_sentence_keys
from noema.storage.columns import columns_bytes, read_columns
from noema.storage.container import Blob, forget_pages, load_json
from noema.storage.manifest import checked_settings, declared_entry
from noema.storage.names import check_name_lengths, names_bytes, read_names
from noema.vectors import words as words_module
from noema.vectors.index import VectorIndex
from noema.vectors.ivf import ivf_pieces, read_ivf
from noema.vectors.sentences import (
    SENTENCE_RENDERING,
    SentenceIndex,
    StoredSentences,
    sentence_key,
    source_sentences,
)
from noema.vectors.words import (
    WORD_SCORING,
    read_word_index,
    sentence_keys_digest,
    word_index_pieces,
)

__all__ = [
    "COLUMNS_MEMBER",
    "FACTS_IVF_MEMBER",
    "GRAPH_MEMBER",
    "HASHED_ON_OPENING_BYTES",
    "IN_PLACE_MEMBERS",
    "INFLATED_VECTOR_MEMORY_PER_BYTE",
    "MEMBERS",
    "NAMES_MEMBER",
    "SENTENCES_IVF_MEMBER",
    "SENTENCES_MEMBER",
    "STORED_MEMBERS",
    "VECTOR_MEMBERS",
    "WORDS_MEMBER",
    "Member",
    "Opening",
    "Saving",
    "Written",
    "encode_json",
    "fact_order",
    "graph_counts",
]

GRAPH_MEMBER = "graph.json"
FACTS_IVF_MEMBER = "facts.ivf"
SENTENCES_IVF_MEMBER = "sentences.ivf"
SENTENCES_MEMBER = "sentences.bin"
NAMES_MEMBER = "names.bin"
WORDS_MEMBER = "sentences.words"

# Memory to open a bundle, per declared byte: graph.json is inflated (1), parsed into Python
# objects (about 4.8 on the benchmark bundles) and read into the graph (0.8), measured on the
# HotpotQA benchmark bundle.
GRAPH_MEMORY_PER_BYTE = 8.0
# graph.columns is mapped (or is the bytes given) and read in place: its arrays are copied out
# (a file truncated under a mapping would be SIGBUS at a later read, 1) and its string heap
# decoded (a str takes up to 4 bytes a character, 2 where one is past Latin-1), the records made
# only as they are read. Opening the million-fact benchmark bundle held 2.0 times the member.
COLUMNS_MEMORY_PER_BYTE = 4.0
# A vector member stored as it is is read in place too (the pages of the mapped file or of the
# bytes given, which the system can drop again): opening holds none of it. What it holds is
# exact search's float16 copy of the fact and of the sentence vectors, half their size (an
# approximate index views its codes in place and holds one label a row). A member deflated by
# the first schema is inflated: its size again. Counted at 1.5 of every vector member, a
# three-million-fact base was refused under the default budget of a 24 GB machine, which it
# opens in 4.4 GB of.
SEARCHED_VECTOR_MEMORY_PER_BYTE = 0.5
INFLATED_VECTOR_MEMORY_PER_BYTE = 1.0
# sentences.words is read in place too and opening holds none of it (a search reads the postings
# of its words, and holds one float32 score a sentence while it runs); where it cannot be read
# in place it is read into memory: its size, as a vector member's.
WORDS_MEMORY_PER_BYTE = 0.0


def fact_order(graph: SemanticGraph) -> list[str]:
    """The row order of ``embeddings.bin``: relations, then events, in graph order."""
    return [*graph.relations, *graph.events]


def graph_counts(graph: SemanticGraph) -> dict[str, int]:
    """What the manifest's ``counts`` declares, and opening checks, for ``graph``."""
    return {
        "entities": len(graph.entities),
        "relations": len(graph.relations),
        "events": len(graph.events),
        "documents": len(graph.documents),
        "facts": len(graph.relations) + len(graph.events),
    }


def encode_json(value: Any) -> bytes:
    """``value`` as a bundle's JSON member, or :class:`BundleError` saying why it cannot be."""
    try:
        return json_bytes(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise BundleError(f"the knowledge base cannot be written as JSON: {exc}") from exc


# What a member's writer gives: its bytes, or pieces written one after another (the vectors as
# views of their matrix, so a save never holds a copy of them).
Written = Blob | tuple[Blob, ...]


@dataclass
class Saving:
    """What the members are written from; ``described`` gathers the manifest entries that
    members add beside their size and sha256 (``sentences``, ``names``)."""

    graph: SemanticGraph
    merge_log: list[dict[str, Any]]  # the merge log as graph.json holds it
    index: VectorIndex  # the fact index as the knowledge base holds it
    ordered: VectorIndex  # the same rows in fact_order
    sentences: SentenceIndex | None
    name_vectors: Mapping[str, npt.NDArray[np.float32]]
    described: dict[str, Any] = field(default_factory=dict)


def _write_graph_json(saving: Saving) -> bytes:
    # made here, not kept: the graph's dict takes gigabytes at a million facts
    data = saving.graph.to_dict()
    data["merge_log"] = saving.merge_log
    return encode_json(data)


def _read_graph_json(opening: Opening) -> None:
    if opening.columnar:
        # graph.json is in every bundle and parsed only where no columns are; it is still
        # checked against its sha256 (on opening when small, else before it is saved or merged
        # elsewhere), so a bundle with a damaged source of truth is never passed on
        opening.check_unread(GRAPH_MEMBER)
    else:
        opening.keep(GRAPH_MEMBER)


def _write_columns(saving: Saving) -> bytes:
    return columns_bytes(saving.graph, saving.merge_log, saving.sentences)


def _read_columns(opening: Opening) -> None:
    if opening.columnar:  # else the graph is read from graph.json
        opening.keep(COLUMNS_MEMBER)


def _write_embeddings(saving: Saving) -> Written:
    return saving.ordered.vector_view()


def _read_embeddings(opening: Opening) -> None:
    opening.keep("embeddings.bin")


def _write_index(saving: Saving) -> Written:
    return saving.ordered.index_pieces()


def _read_index(opening: Opening) -> None:
    """Check index.faiss, then build the graph and the fact index: a damaged vector member is
    refused before the graph is parsed."""
    opening.keep("index.faiss")
    graph_member = COLUMNS_MEMBER if opening.columnar else GRAPH_MEMBER
    graph, merge_log, stored, facts = _read_graph(opening, graph_member)
    counts = opening.manifest.get("counts")
    actual = graph_counts(graph)
    if counts != actual:
        raise BundleError(
            f"{opening.name!r}: manifest counts {counts!r} do not match graph.json {actual!r}"
        )
    dimension = checked_settings(opening.manifest, opening.name)
    blobs = opening.blobs
    unit_checked = opening.checks_now("embeddings.bin")
    fact_ids, fact_rows = facts if facts is not None else (fact_order(graph), None)
    index = VectorIndex.from_bytes(
        fact_ids,
        dimension,
        blobs["embeddings.bin"],
        blobs["index.faiss"],
        check=opening.check,
        rows_compared=opening.verified,
        rows=fact_rows,
        unit_checked=unit_checked,
    )
    if not unit_checked:
        opening.defer("embeddings.bin", index.unit_rows_check())
    opening.built = Core(graph, merge_log, index, dimension, stored)
    opening.spent += [blobs[graph_member], blobs["index.faiss"]]


def _read_graph(
    opening: Opening, member: str
) -> tuple[
    SemanticGraph,
    tuple[MergeRecord, ...],
    StoredSentences | None,
    tuple[Sequence[str], Mapping[str, int]] | None,
]:
    """The graph, its merge log and (from graph.columns) the sidecar's stored sentences and
    the fact ids in row order with each one's row."""
    blob, name = opening.blobs[member], opening.name
    stored: StoredSentences | None = None
    facts: tuple[Sequence[str], Mapping[str, int]] | None = None
    try:
        if member == COLUMNS_MEMBER:
            try:
                counts = opening.manifest.get("counts")
                # the sidecar's keys hash each sentence's text (7 s of opening 300,000
                # sentences), and its sentences are compared with every mention: checked now
                # where the member was hashed, else with its hash
                hashed = COLUMNS_MEMBER not in opening.unhashed
                columns = read_columns(
                    blob, counts, max_memory=opening.max_memory, check_keys=hashed
                )
                opening.deferred.extend(named(check, name) for check in columns.deferred)
                if not hashed and columns.sentences is not None:
                    opening.deferred.append(
                        _keys_check(columns.graph, columns.sentences.keys, name)
                    )
            except BundleError as exc:
                raise BundleError(f"{name!r}: {exc}") from None
            graph, raw_log, stored = columns.graph, columns.merge_log, columns.sentences
            facts = columns.facts
        else:
            graph_data = load_json(blob, GRAPH_MEMBER, name)
            raw_log = graph_data.pop("merge_log", [])
            graph = SemanticGraph.from_dict(graph_data)
        merge_log = tuple(read_merge_record(r) for r in raw_log)
    except (GraphError, KeyError, TypeError, ValueError) as exc:
        raise BundleError(f"{name!r}: {member} is invalid: {exc}") from exc
    return graph, merge_log, stored, facts


def _keys_check(
    graph: SemanticGraph, keys: Mapping[Sentence, str], name: str
) -> Callable[[], None]:
    """:func:`check_sentence_keys` to run later, holding the documents and the keys only, not
    the opened graph, which a write replaces (they stay in memory until the first save or
    merge runs it, or for good in a base never saved: the documents' texts are the bulk)."""
    documents = graph.documents_only()

    def check() -> None:
        try:
            check_sentence_keys(documents, keys)
        except BundleError as exc:
            raise BundleError(f"{name!r}: {exc}") from None

    return check


def _write_facts_ivf(saving: Saving) -> Written | None:
    parts = saving.index.approximate_parts(fact_order(saving.graph))
    return None if parts is None else ivf_pieces(parts)


def _read_facts_ivf(opening: Opening) -> None:
    _read_ivf(opening, FACTS_IVF_MEMBER, opening.core.index)


def _write_sentences(saving: Saving) -> Written | None:
    sentences = saving.sentences
    if sentences is None:
        return None
    keys = [sentence_key(saving.graph, s) for s in source_sentences(saving.graph)]
    if keys != sentences.vectors.ids:
        raise BundleError("the sentence sidecar was built for another graph")
    saving.described["sentences"] = {"rows": len(keys), "rendering": SENTENCE_RENDERING}
    return sentences.vectors.vector_view()


def _read_sentences(opening: Opening) -> None:
    """The optional sentence sidecar; left out when absent or made with another rendering (it is
    then rebuilt from the graph), :class:`BundleError` when present but damaged."""
    name, core = opening.name, opening.core
    info = _description(opening, "sentences", SENTENCES_MEMBER)
    if info is None:
        return
    if info.get("rendering") != SENTENCE_RENDERING:
        return  # embedded another way: re-embedded on first use, never mixed
    _declared_rows(opening, info, SENTENCES_MEMBER, 4 * core.dimension, "rows")
    blob = opening.fetch(SENTENCES_MEMBER)
    unit_checked = opening.checks_now(SENTENCES_MEMBER)
    try:
        if core.stored is not None:
            opening.sentences = SentenceIndex.from_stored(
                core.graph,
                core.dimension,
                blob,
                core.stored,
                check=opening.check,
                unit_checked=unit_checked,
            )
        else:
            opening.sentences = SentenceIndex.from_bytes(
                core.graph, core.dimension, blob, check=opening.check, unit_checked=unit_checked
            )
    except BundleError as exc:
        raise BundleError(f"{name!r}: {exc}") from exc
    if not unit_checked:
        opening.defer(SENTENCES_MEMBER, opening.sentences.vectors.unit_rows_check())


def _write_sentences_ivf(saving: Saving) -> Written | None:
    if saving.sentences is None:
        return None
    vectors = saving.sentences.vectors
    parts = vectors.approximate_parts(vectors.ids)  # the keys _write_sentences checked
    return None if parts is None else ivf_pieces(parts)


def _read_sentences_ivf(opening: Opening) -> None:
    if opening.sentences is not None:
        _read_ivf(opening, SENTENCES_IVF_MEMBER, opening.sentences.vectors)


def _read_ivf(opening: Opening, member: str, index: VectorIndex) -> None:
    """The optional approximate index kept for ``index``'s rows, handed to it to build when
    one is wanted; :class:`BundleError` when present but damaged."""
    if member not in opening.declared:
        return
    blob = opening.fetch(member)
    try:
        index.keep_stored_approximate(
            read_ivf(blob, len(index), index.dimension),
            release=partial(forget_pages, opening.mapped, blob),
        )
    except BundleError as exc:
        raise BundleError(f"{opening.name!r}: {member} {exc}") from None


def _rows_in_order(made: Sequence[Sentence], sentences: SentenceIndex) -> bool:
    """Whether ``made`` lists the sidecar's sentences in the row order of its vectors."""
    keys, ids = sentences.keys, sentences.vectors.ids
    return len(made) == len(ids) and all(keys.get(s) == ids[row] for row, s in enumerate(made))


def _write_words(saving: Saving) -> Written | None:
    sentences = saving.sentences
    if sentences is None:
        return None
    # the index kept (stored, or made by a retrieval) is written as it is; else it is made
    # now, once, and kept; none above the limit, where retrieval searches by vector alone
    index = sentences.word_index(saving.graph, limit=words_module.LEXICAL_LIMIT)
    if index is None:
        return None
    # the keys _write_sentences checked, in row order: the member names the rows it indexes
    digest = sentence_keys_digest(sentences.vectors.ids)
    if not index.stored and not _rows_in_order(index.sentences, sentences):
        # made document by document, which is the rows' order while each document's sentences
        # are one run of rows; were they not, stored rows would name other sentences: none is
        # written, and the next process makes the index again
        return None
    if index.keys_digest not in (None, digest):
        # a bundle's index kept for other sentences is never passed on as this one's
        raise BundleError(
            f"the {WORDS_MEMBER} this knowledge base was opened with is not the word index of "
            "its sentences (altered, or written by another tool); nothing was written. Restore "
            "the bundle from a copy, or build it again"
        )
    saving.described["words"] = {"rows": len(index), "scoring": WORD_SCORING}
    return word_index_pieces(index, digest)


def _read_words(opening: Opening) -> None:
    """The optional word index of the sidecar's sentences, kept with the sidecar and read in
    place; left out when the sidecar was not read (it is made again) or the index was scored
    another way (made again on first use), :class:`BundleError` when present but damaged."""
    name = opening.name
    info = _description(opening, "words", WORDS_MEMBER)
    sentences = opening.sentences
    if info is None or sentences is None or info.get("scoring") != WORD_SCORING:
        return
    rows = info.get("rows")
    if not isinstance(rows, int) or isinstance(rows, bool) or rows != len(sentences):
        raise BundleError(
            f"{name!r}: the manifest declares {WORDS_MEMBER} of {rows!r} sentences; the sidecar "
            f"holds {len(sentences):,}"
        )
    blob = opening.fetch(WORDS_MEMBER)
    checked = opening.checks_now(WORDS_MEMBER)
    try:
        index = read_word_index(
            blob, sentences.row_sentences(), check=opening.check, postings_checked=checked
        )
    except BundleError as exc:
        raise BundleError(f"{name!r}: {WORDS_MEMBER} {exc}") from None
    if not checked:
        opening.defer(WORDS_MEMBER, index.postings_check())
    sentences.keep_stored_words(index)
    opening.words_digest = index.keys_digest


def _write_names(saving: Saving) -> bytes | None:
    names = names_bytes(saving.graph, saving.name_vectors)
    if names is None:
        return None
    data, rows = names
    saving.described["names"] = {"rows": rows}
    return data


def _read_names(opening: Opening) -> None:
    """The optional entity-name vectors by entity id; none when absent, :class:`BundleError`
    when present but damaged."""
    name, core = opening.name, opening.core
    info = _description(opening, "names", NAMES_MEMBER)
    if info is None:
        return
    rows = _declared_rows(opening, info, NAMES_MEMBER, 4 + 4 * core.dimension, "positions and rows")
    blob = opening.fetch(NAMES_MEMBER)
    unit_checked = opening.checks_now(NAMES_MEMBER)
    try:
        opening.name_vectors = read_names(
            blob,
            rows,
            core.dimension,
            list(core.graph.entities),
            unit_checked=unit_checked,
            check=opening.check,
        )
    except BundleError as exc:
        raise BundleError(f"{name!r}: {NAMES_MEMBER} {exc}") from None
    if not unit_checked:
        opening.defer(NAMES_MEMBER, partial(check_name_lengths, blob, rows, core.dimension))
    opening.spent.append(blob)


def _description(opening: Opening, key: str, member: str) -> dict[str, Any] | None:
    """The manifest's ``key`` entry, which describes the optional ``member``: ``None`` when the
    bundle has neither, :class:`BundleError` when it has one without the other."""
    info = opening.manifest.get(key)
    entry = opening.declared.get(member)
    if info is None and entry is None:
        return None
    if not isinstance(info, dict) or not isinstance(entry, dict):
        raise BundleError(f"{opening.name!r}: manifest describes {member} only in part")
    return info


def _declared_rows(
    opening: Opening, info: dict[str, Any], member: str, row_bytes: int, rows_are: str
) -> int:
    """The ``rows`` of ``info``, checked against the member's declared size before anything is
    inflated."""
    size, _ = declared_entry(opening.declared, member, opening.name)
    rows = info.get("rows")
    if not isinstance(rows, int) or isinstance(rows, bool) or rows * row_bytes != size:
        raise BundleError(
            f"{opening.name!r}: {member} holds {size} bytes, not the {rows!r} {rows_are} of "
            f"{opening.core.dimension} float32 the manifest declares"
        )
    return rows


@dataclass(frozen=True)
class Member:
    """One member of the bundle (``manifest.json`` aside, which describes the others).

    ``stored``: written as it is rather than deflated (vectors barely compress, and the
    columnar graph is read in place from the mapped file). ``memory_per_byte``: what opening
    costs per declared byte, for the memory budget (0 where opening does not hold it).
    ``write``: the member's bytes (:data:`Written`), or ``None`` where the knowledge base has
    nothing for it.
    ``read``: check and read the member into the opening bundle. ``optional``: a bundle may
    lack it (its ``read`` then sees it absent); a member that is not is required from
    ``since_schema`` on. ``described``: the manifest entry its ``write`` adds beside its size
    and sha256 (in :attr:`Saving.described`), if any.
    """

    name: str
    since_schema: int
    stored: bool
    memory_per_byte: float
    write: Callable[[Saving], Written | None]
    read: Callable[[Opening], None]
    optional: bool = False
    vectors: bool = False
    described: str = ""


def _vectors(
    name: str,
    since_schema: int,
    write: Callable[[Saving], Written | None],
    read: Callable[[Opening], None],
    *,
    optional: bool = False,
    searched: bool = False,
    described: str = "",
) -> Member:
    """A member of vectors (or of an index over them): stored as it is, since vectors barely
    compress, and read in place; ``searched``: exact search makes a float16 copy of it."""
    return Member(
        name,
        since_schema,
        stored=True,
        memory_per_byte=SEARCHED_VECTOR_MEMORY_PER_BYTE if searched else 0.0,
        write=write,
        read=read,
        optional=optional,
        vectors=True,
        described=described,
    )


MEMBERS: tuple[Member, ...] = (
    Member(
        GRAPH_MEMBER,
        1,
        stored=False,
        memory_per_byte=GRAPH_MEMORY_PER_BYTE,
        write=_write_graph_json,
        read=_read_graph_json,
    ),
    # in every bundle from schema 4, and optional all the same: the graph is read from
    # graph.json where it is absent
    Member(
        COLUMNS_MEMBER,
        4,
        stored=True,
        memory_per_byte=COLUMNS_MEMORY_PER_BYTE,
        write=_write_columns,
        read=_read_columns,
        optional=True,
    ),
    _vectors("embeddings.bin", 1, _write_embeddings, _read_embeddings, searched=True),
    _vectors("index.faiss", 1, _write_index, _read_index),
    _vectors(FACTS_IVF_MEMBER, 4, _write_facts_ivf, _read_facts_ivf, optional=True),
    _vectors(
        SENTENCES_MEMBER,
        1,
        _write_sentences,
        _read_sentences,
        optional=True,
        searched=True,
        described="sentences",
    ),
    _vectors(SENTENCES_IVF_MEMBER, 4, _write_sentences_ivf, _read_sentences_ivf, optional=True),
    # after the sidecar, whose sentences it indexes in their row order
    Member(
        WORDS_MEMBER,
        6,
        stored=True,
        memory_per_byte=WORDS_MEMORY_PER_BYTE,
        write=_write_words,
        read=_read_words,
        optional=True,
        described="words",
    ),
    _vectors(NAMES_MEMBER, 3, _write_names, _read_names, optional=True, described="names"),
)
VECTOR_MEMBERS = frozenset(m.name for m in MEMBERS if m.vectors)
# Read in place where the bundle is mapped (or given as bytes), else read into memory: the
# members beside the graph that are stored as they are.
IN_PLACE_MEMBERS = frozenset(m.name for m in MEMBERS if m.stored and m.name != COLUMNS_MEMBER)
# Stored as they are rather than deflated: vectors barely compress, and the columnar graph is
# read in place.
STORED_MEMBERS = frozenset(m.name for m in MEMBERS if m.stored)
