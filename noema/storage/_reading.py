"""Reading a bundle's members once the container is open: the graph (from ``graph.columns``, else
``graph.json``), the fact vectors, and the optional sentence sidecar, name vectors and kept
approximate indexes, each checked as :mod:`noema.storage.bundle` describes.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from noema.errors import BundleError, GraphError
from noema.model.graph import SemanticGraph
from noema.model.records import MergeRecord, read_merge_record
from noema.storage.columns import read_columns
from noema.storage.container import (
    Blob,
    FileIdentity,
    check_streamed,
    checked_member,
    forget_pages,
    load_json,
)
from noema.storage.manifest import (
    check_budget,
    check_stored_members,
    checked_settings,
    declared_entry,
    written_manifest,
)
from noema.storage.members import (
    COLUMNS_MEMBER,
    FACTS_IVF_MEMBER,
    NAMES_MEMBER,
    SENTENCES_IVF_MEMBER,
    SENTENCES_MEMBER,
)
from noema.storage.names import read_names
from noema.vectors.index import VectorIndex
from noema.vectors.ivf import read_ivf
from noema.vectors.sentences import SENTENCE_RENDERING, SentenceIndex, StoredSentences

__all__ = ["BundleContents", "fact_order", "graph_counts", "read_contents"]


@dataclass(frozen=True)
class BundleContents:
    """Everything a bundle holds, checked."""

    graph: SemanticGraph
    index: VectorIndex
    merge_log: tuple[MergeRecord, ...]
    manifest: dict[str, Any]
    sentences: SentenceIndex | None = None
    name_vectors: Mapping[str, npt.NDArray[np.float32]] = field(default_factory=dict)
    # the file it was read from and that file's identity before it was read (None: from bytes)
    source: tuple[Path, FileIdentity | None] | None = None


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


def read_contents(
    zf: zipfile.ZipFile,
    name: str,
    max_memory: int | None,
    mapped: memoryview | None,
    check: Callable[[], None] | None = None,
) -> BundleContents:
    """The bundle's checked contents; ``mapped`` is its bytes where they are in memory or mapped
    from its file, ``check`` what the indexes call before reading a mapped file again."""
    manifest, written_schema = written_manifest(zf, name)
    declared = manifest.get("members")
    if not isinstance(declared, dict):
        raise BundleError(f"{name!r}: manifest has no members table")
    columnar = COLUMNS_MEMBER in declared
    check_budget(zf, name, max_memory, columnar=columnar)
    check_stored_members(zf, manifest, written_schema, name)
    graph_member = COLUMNS_MEMBER if columnar else "graph.json"
    if columnar:
        # graph.json is in every bundle and parsed only where no columns are; it is still
        # checked against its sha256 (inflated as a stream, never held whole), so a bundle with
        # a damaged source of truth is refused rather than passed on
        check_streamed(zf, "graph.json", *declared_entry(declared, "graph.json", name), name)
    data: dict[str, Blob] = {}
    for member in (graph_member, "embeddings.bin", "index.faiss"):
        size, digest = declared_entry(declared, member, name)
        data[member] = checked_member(zf, member, size, digest, name, mapped)
    graph, merge_log, stored = _read_graph(
        data[graph_member], graph_member, manifest, name, max_memory
    )
    counts = manifest.get("counts")
    actual = graph_counts(graph)
    if counts != actual:
        raise BundleError(
            f"{name!r}: manifest counts {counts!r} do not match graph.json {actual!r}"
        )
    dimension = checked_settings(manifest, name)
    index = VectorIndex.from_bytes(
        fact_order(graph), dimension, data["embeddings.bin"], data["index.faiss"], check=check
    )
    _read_ivf(zf, declared, FACTS_IVF_MEMBER, index, name, mapped)
    sentences = _read_sentences(zf, manifest, graph, dimension, name, stored, (mapped, check))
    if sentences is not None:
        _read_ivf(zf, declared, SENTENCES_IVF_MEMBER, sentences.vectors, name, mapped)
    name_vectors = _read_names(zf, manifest, graph, dimension, name, mapped)
    for member in (graph_member, "index.faiss"):  # read, checked, and needed no more
        forget_pages(mapped, data[member])
    return BundleContents(
        graph=graph,
        index=index,
        merge_log=merge_log,
        manifest=manifest,
        sentences=sentences,
        name_vectors=name_vectors,
    )


def _read_graph(
    blob: Blob, member: str, manifest: dict[str, Any], name: str, max_memory: int | None
) -> tuple[SemanticGraph, tuple[MergeRecord, ...], StoredSentences | None]:
    """The graph, its merge log and (from graph.columns) the sidecar's stored sentences."""
    stored: StoredSentences | None = None
    try:
        if member == COLUMNS_MEMBER:
            try:
                columns = read_columns(blob, manifest.get("counts"), max_memory=max_memory)
            except BundleError as exc:
                raise BundleError(f"{name!r}: {exc}") from None
            graph, raw_log, stored = columns.graph, columns.merge_log, columns.sentences
        else:
            graph_data = load_json(blob, "graph.json", name)
            raw_log = graph_data.pop("merge_log", [])
            graph = SemanticGraph.from_dict(graph_data)
        merge_log = tuple(read_merge_record(r) for r in raw_log)
    except (GraphError, KeyError, TypeError, ValueError) as exc:
        raise BundleError(f"{name!r}: {member} is invalid: {exc}") from exc
    return graph, merge_log, stored


def _read_ivf(
    zf: zipfile.ZipFile,
    declared: dict[str, Any],
    member: str,
    index: VectorIndex,
    name: str,
    mapped: memoryview | None,
) -> None:
    """The optional approximate index kept for ``index``'s rows, handed to it to build when
    one is wanted; :class:`BundleError` when present but damaged."""
    if member not in declared:
        return
    size, digest = declared_entry(declared, member, name)
    blob = checked_member(zf, member, size, digest, name, mapped)
    try:
        index.keep_stored_approximate(read_ivf(blob, len(index), index.dimension))
    except BundleError as exc:
        raise BundleError(f"{name!r}: {member} {exc}") from None


def _read_names(
    zf: zipfile.ZipFile,
    manifest: dict[str, Any],
    graph: SemanticGraph,
    dimension: int,
    name: str,
    mapped: memoryview | None,
) -> dict[str, npt.NDArray[np.float32]]:
    """The optional entity-name vectors by entity id; empty when absent, :class:`BundleError`
    when present but damaged."""
    info = manifest.get("names")
    entry = manifest["members"].get(NAMES_MEMBER)
    if info is None and entry is None:
        return {}
    if not isinstance(info, dict) or not isinstance(entry, dict):
        raise BundleError(f"{name!r}: manifest describes {NAMES_MEMBER} only in part")
    size, digest = declared_entry(manifest["members"], NAMES_MEMBER, name)
    rows = info.get("rows")
    if not isinstance(rows, int) or isinstance(rows, bool) or rows * (4 + 4 * dimension) != size:
        raise BundleError(
            f"{name!r}: {NAMES_MEMBER} holds {size} bytes, not the {rows!r} positions and rows "
            f"of {dimension} float32 the manifest declares"
        )
    blob = checked_member(zf, NAMES_MEMBER, size, digest, name, mapped)
    try:
        vectors = read_names(blob, rows, dimension, list(graph.entities))
    except BundleError as exc:
        raise BundleError(f"{name!r}: {NAMES_MEMBER} {exc}") from None
    forget_pages(mapped, blob)
    return vectors


def _read_sentences(
    zf: zipfile.ZipFile,
    manifest: dict[str, Any],
    graph: SemanticGraph,
    dimension: int,
    name: str,
    stored: StoredSentences | None,
    source: tuple[memoryview | None, Callable[[], None] | None],
) -> SentenceIndex | None:
    """The optional sentence sidecar; ``None`` when absent or made with another rendering (it is
    then rebuilt from the graph), :class:`BundleError` when present but damaged. ``stored``:
    its sentences, facts, keys and topics as graph.columns holds them, else they are worked out
    from the graph."""
    info = manifest.get("sentences")
    entry = manifest["members"].get(SENTENCES_MEMBER)
    if info is None and entry is None:
        return None
    if not isinstance(info, dict) or not isinstance(entry, dict):
        raise BundleError(f"{name!r}: manifest describes {SENTENCES_MEMBER} only in part")
    if info.get("rendering") != SENTENCE_RENDERING:
        return None  # embedded another way: re-embedded on first use, never mixed
    size, digest = declared_entry(manifest["members"], SENTENCES_MEMBER, name)
    rows = info.get("rows")  # checked before anything is inflated
    if not isinstance(rows, int) or isinstance(rows, bool) or rows * dimension * 4 != size:
        raise BundleError(
            f"{name!r}: {SENTENCES_MEMBER} holds {size} bytes, not the {rows!r} rows of "
            f"{dimension} float32 the manifest declares"
        )
    mapped, check = source
    blob = checked_member(zf, SENTENCES_MEMBER, size, digest, name, mapped)
    try:
        if stored is not None:
            return SentenceIndex.from_stored(graph, dimension, blob, stored, check=check)
        return SentenceIndex.from_bytes(graph, dimension, blob, check=check)
    except BundleError as exc:
        raise BundleError(f"{name!r}: {exc}") from exc
