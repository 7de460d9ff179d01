"""The ``.noema`` bundle: one zip file holding a knowledge base.

Members (read by name; anything else in the zip is ignored):

``manifest.json``
    UTF-8 JSON object: ``format`` (always ``"noema-bundle"``), ``schema_version`` (int),
    ``noema_version``, ``counts`` (``entities``, ``relations``, ``events``, ``documents``,
    ``facts``), ``embedding_model``, ``embedding_dimension``, ``spacy_model`` (the package
    actually loaded), ``similarity_threshold``, ``embedding_rows`` (how rows are ordered),
    ``fact_rendering`` (what each fact's vector was embedded from; a bundle embedded another
    way has its fact vectors rebuilt on load, never mixed; absent in version-1 bundles embedded
    from notation blocks) and ``members``: for each other member its ``size`` in bytes and
    ``sha256``; from version 3 ``merges``, the number of merge-log records. Versions are listed at :data:`SCHEMA_VERSION`; an older bundle is read through
    one migration per version step, a newer one refused.
``graph.json``
    :meth:`SemanticGraph.to_json` of the canonical graph, the source of truth, plus a
    ``merge_log`` list of the canonicalizer's merges.
``graph.columns`` (from version 4)
    The graph, its merge log, and the sentence sidecar's sentences, keys and topics, as
    fixed-width arrays and one string heap (:mod:`noema.storage.columns` documents it field by field),
    stored rather than deflated: opening reads it in place instead of parsing ``graph.json``.
    Derived (``graph.json`` alone rebuilds it); a bundle without it is read
    from ``graph.json``.
``embeddings.bin``
    ``counts.facts`` x ``embedding_dimension`` little-endian float32, row-major, one row per
    fact: the relations in ``graph.json`` order, then the events in ``graph.json`` order.
``index.faiss``
    ``faiss.serialize_index`` of an ``IndexFlatIP`` over those rows, in the same order.
``sentences.bin`` (optional)
    The sentence sidecar (:mod:`noema.vectors.sentences`): ``sentences.rows`` x ``embedding_dimension``
    little-endian float32, one row per source sentence in ``(document id, start, end)`` order,
    the text embedded as ``sentences.rendering`` says. A bundle without it (written before it
    existed), or whose rendering differs from this Noema's, has the sidecar rebuilt from
    ``graph.json`` on first use; its vectors are never mixed with the fact vectors.
``names.bin`` (optional, from version 3)
    The entity-name vectors the canonicalizer has embedded (it compares a new name with the
    stored names it could join; without them the first ingest after opening a large base
    embeds every such stored name again): ``names.rows`` little-endian int32, each the position
    of the entity in ``graph.json``'s ``entities`` list (strictly increasing), then ``names.rows``
    x ``embedding_dimension`` little-endian float32, one row per listed entity, the vector of
    its name. Derived (``graph.json`` alone rebuilds it, by embedding the names); a bundle
    without it loads as before.
``facts.ivf``, ``sentences.ivf`` (optional, from version 4)
    The approximate index of the fact vectors and of the sentence vectors, when the knowledge
    base had one (``search="approximate"``, or ``"auto"`` from
    :data:`~noema.vectors.index.APPROXIMATE_FROM` rows): its trained parts and each row's list, in the
    layout :mod:`noema.vectors.ivf` documents (never a faiss serialization). Opening with approximate
    search builds the index from them rather than training it again, and it searches as it did
    before the save. Derived; without them the index is trained on opening.

Where a bundle holds ``graph.columns``, ``graph.json`` is not parsed on opening, only checked
against its size and sha256 as a stream (never held whole). Members stored as they are (the
vectors, the columns) are read in place: the file is mapped into memory and they are views of
it, so nothing is copied (not on Windows, where a mapped file could not be replaced by a save).

Loading checks, before anything is trusted: the zip structure, member sizes against the manifest
(a member is inflated as a stream and refused once it passes its declared size, so a zip bomb
never fills memory), what the declared sizes would cost to open against a memory budget (the
caller's ``max_memory``, by default half the machine's memory) and, with the default budget, a
``graph.json`` that claims to inflate over 64 MiB at more than 100 times its stored size (the
graphs Noema writes deflate about 5 times: such a member is padding, not a graph), every sha256, the schema version (newer ones are
refused), counts against the contents, the dimension, and every id the graph references. Each
failure raises :class:`~noema.errors.BundleError` saying what is wrong. Saving writes a temporary
file beside the target and moves it into place with ``os.replace``, so a crash midway leaves the
previous bundle untouched. The same knowledge base gives the same bytes.
"""

from __future__ import annotations

import glob
import hashlib
import io
import mmap
import os
import stat
import struct
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import orjson

from noema.errors import BundleError, GraphError, InputTypeError, OptionError
from noema.model.facttext import FACT_RENDERING, NOTATION_RENDERING
from noema.model.graph import SemanticGraph
from noema.model.records import MergeRecord, json_bytes, record_to_dict
from noema.storage.columns import columns_bytes, read_columns
from noema.vectors.index import VectorIndex
from noema.vectors.ivf import ivf_bytes, read_ivf
from noema.vectors.sentences import (
    SENTENCE_RENDERING,
    SentenceIndex,
    StoredSentences,
    sentence_key,
    source_sentences,
)

__all__ = [
    "SCHEMA_VERSION",
    "BundleContents",
    "BundleSettings",
    "bundle_bytes",
    "default_max_memory",
    "read_bundle",
    "read_bundle_bytes",
    "read_manifest",
    "write_bundle",
]

# The layout's version, moved whenever the layout does (an older Noema then refuses the bundle
# instead of misreading it):
#   1  graph.json, embeddings.bin and index.faiss; later writers of version 1 added the optional
#      sentences.bin and the manifest's fact_rendering without moving the version, so a
#      version-1 manifest may lack either.
#   2  fact_rendering always present (what the fact vectors were embedded from), and the
#      manifest's sentences entry whenever sentences.bin is.
#   3  the optional names.bin and the manifest's names entry (rows) whenever it is present;
#      the manifest's merges (how many merge_log records graph.json holds).
#   4  graph.columns (the graph and merge log as arrays, read instead of graph.json) in every
#      bundle; the optional facts.ivf and sentences.ivf (approximate indexes kept).
SCHEMA_VERSION = 4
FORMAT_NAME = "noema-bundle"
EMBEDDING_ROWS = "relations then events, in graph.json order"
COLUMNS_MEMBER = "graph.columns"
FACTS_IVF_MEMBER = "facts.ivf"
SENTENCES_IVF_MEMBER = "sentences.ivf"
SENTENCES_MEMBER = "sentences.bin"
NAMES_MEMBER = "names.bin"
# Limits checked against the zip directory before a member is inflated.
MAX_MANIFEST_BYTES = 1 << 20
MAX_MEMBER_BYTES = 8 << 30
# Memory to open a bundle, per declared byte: graph.json is inflated (1), parsed into Python
# objects (about 4.8 on the benchmark bundles) and read into the graph (0.8), measured on the
# HotpotQA benchmark bundle; a vector member is inflated and kept as its index's matrix, no copy
# (1), plus the search structure built on opening (a float16 copy, 0.5, below 200,000 rows; an
# IVF of one byte a number, 0.25, from there), and index.faiss is inflated, compared and
# dropped (1). Opening a million-fact bundle with names.bin (graph.json 321 MiB, vector members
# 4,883 MiB) peaked at 8,188 MiB above the models: 8 and 1.5 say 9,893, where 8 and 2 said
# 12,334 and refused it under the default budget of a 24 GB machine.
GRAPH_MEMORY_PER_BYTE = 8
# graph.columns is mapped (1) and made into records and strings: reading it peaked at 5.1 times
# its size on the 100,000-fact benchmark bundle and 6.4 times on the HotpotQA pool's
COLUMNS_MEMORY_PER_BYTE = 8
VECTOR_MEMORY_PER_BYTE = 1.5
# A graph.json past this size that inflates more than GRAPH_MAX_RATIO times its stored bytes is
# refused under the default budget; real graphs (text and ids) deflate about 5 times.
GRAPH_RATIO_FROM_BYTES = 64 << 20
GRAPH_MAX_RATIO = 100
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
# A temporary file of a save untouched this long belongs to a save that was killed.
STALE_TEMPORARY_SECONDS = 600
_T = TypeVar("_T")
# A member's bytes: read, or a view of the bundle mapped from its file.
Blob = bytes | memoryview
_VECTORS = frozenset(
    {
        "embeddings.bin",
        "index.faiss",
        SENTENCES_MEMBER,
        NAMES_MEMBER,
        FACTS_IVF_MEMBER,
        SENTENCES_IVF_MEMBER,
    }
)
# Stored as they are rather than deflated: vectors barely compress, and the columnar graph is
# read in place.
_BINARY = _VECTORS | {COLUMNS_MEMBER}


@dataclass(frozen=True)
class BundleContents:
    """Everything a bundle holds, checked."""

    graph: SemanticGraph
    index: VectorIndex
    merge_log: tuple[MergeRecord, ...]
    manifest: dict[str, Any]
    sentences: SentenceIndex | None = None
    name_vectors: Mapping[str, npt.NDArray[np.float32]] = field(default_factory=dict)


@dataclass(frozen=True)
class BundleSettings:
    """What a bundle's manifest records about how it was built."""

    embedding_model: str
    spacy_model: str
    similarity_threshold: float
    noema_version: str


def fact_order(graph: SemanticGraph) -> list[str]:
    """The row order of ``embeddings.bin``: relations, then events, in graph order."""
    return [*graph.relations, *graph.events]


def write_bundle(
    path: str | os.PathLike[str],
    graph: SemanticGraph,
    index: VectorIndex,
    *,
    settings: BundleSettings,
    merge_log: tuple[MergeRecord, ...] = (),
    sentences: SentenceIndex | None = None,
    name_vectors: Mapping[str, npt.NDArray[np.float32]] | None = None,
) -> dict[str, Any]:
    """Write a bundle atomically (:func:`bundle_bytes` written beside ``path``, then moved into
    place, so the previous bundle survives a failure) and return its manifest."""
    manifest, members = _members(graph, index, merge_log, sentences, settings, name_vectors)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(target)
    mode = _file_mode(target)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            # mkstemp makes the file 0600: other users and services would lose access to a
            # bundle at every save
            os.fchmod(handle.fileno(), mode)
            _zip(handle, manifest, members)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return manifest


_umask_lock = threading.Lock()


def _file_mode(target: Path) -> int:
    """The permissions the written bundle gets: those of the file it replaces, else what
    ``open()`` would give a new file (0666 less the umask)."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        pass
    with _umask_lock:  # the umask can only be read by setting it
        umask = os.umask(0o077)
        os.umask(umask)
    return 0o666 & ~umask


def bundle_bytes(
    graph: SemanticGraph,
    index: VectorIndex,
    *,
    settings: BundleSettings,
    merge_log: tuple[MergeRecord, ...] = (),
    sentences: SentenceIndex | None = None,
    name_vectors: Mapping[str, npt.NDArray[np.float32]] | None = None,
) -> bytes:
    """The bytes :func:`write_bundle` writes, for a bundle kept in memory or sent elsewhere; :func:`read_bundle_bytes` reads
    them back."""
    manifest, members = _members(graph, index, merge_log, sentences, settings, name_vectors)
    buffer = io.BytesIO()
    _zip(buffer, manifest, members)
    return buffer.getvalue()


def _members(
    graph: SemanticGraph,
    index: VectorIndex,
    merge_log: tuple[MergeRecord, ...],
    sentences: SentenceIndex | None,
    settings: BundleSettings,
    name_vectors: Mapping[str, npt.NDArray[np.float32]] | None = None,
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The manifest and the other members, by name. ``index`` must hold a vector for every fact
    of ``graph``; rows are written in :func:`fact_order`, so the bytes do not depend on the order
    facts were indexed."""
    order = fact_order(graph)
    missing = [f for f in order if f not in index]
    if missing:
        raise BundleError(f"{len(missing)} facts have no vector (first: {missing[0]!r})")
    ordered = VectorIndex(index.dimension)
    if order:
        ordered.add(order, _rows(index, order))
    graph_data = graph.to_dict()
    graph_data["merge_log"] = [record_to_dict(r) for r in merge_log]
    members = {
        "graph.json": _json_bytes(graph_data),
        COLUMNS_MEMBER: columns_bytes(graph, graph_data["merge_log"], sentences),
        "embeddings.bin": ordered.vector_bytes(),
        "index.faiss": ordered.index_bytes(),
    }
    fact_parts = index.approximate_parts(order)
    if fact_parts is not None:
        members[FACTS_IVF_MEMBER] = ivf_bytes(fact_parts)
    sentence_info = None
    if sentences is not None:
        keys = [sentence_key(graph, s) for s in source_sentences(graph)]
        if keys != sentences.vectors.ids:
            raise BundleError("the sentence sidecar was built for another graph")
        members[SENTENCES_MEMBER] = sentences.vectors.vector_bytes()
        sentence_parts = sentences.vectors.approximate_parts(keys)
        if sentence_parts is not None:
            members[SENTENCES_IVF_MEMBER] = ivf_bytes(sentence_parts)
        sentence_info = {"rows": len(keys), "rendering": SENTENCE_RENDERING}
    names_info = None
    if name_vectors:
        positions = [n for n, eid in enumerate(graph.entities) if eid in name_vectors]
        if positions:
            ids = list(graph.entities)
            rows = np.stack([name_vectors[ids[n]] for n in positions]).astype("<f4")
            members[NAMES_MEMBER] = np.asarray(positions, dtype="<i4").tobytes() + rows.tobytes()
            names_info = {"rows": len(positions)}
    manifest = {
        "format": FORMAT_NAME,
        "schema_version": SCHEMA_VERSION,
        "noema_version": settings.noema_version,
        "counts": {
            "entities": len(graph.entities),
            "relations": len(graph.relations),
            "events": len(graph.events),
            "documents": len(graph.documents),
            "facts": len(order),
        },
        "embedding_model": settings.embedding_model,
        "embedding_dimension": index.dimension,
        "spacy_model": settings.spacy_model,
        "similarity_threshold": settings.similarity_threshold,
        "embedding_rows": EMBEDDING_ROWS,
        "fact_rendering": FACT_RENDERING,
        **({"sentences": sentence_info} if sentence_info is not None else {}),
        **({"names": names_info} if names_info is not None else {}),
        "merges": len(merge_log),
        "members": {
            name: {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            for name, data in members.items()
        },
    }
    return manifest, members


def _zip(handle: Any, manifest: dict[str, Any], members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in [("manifest.json", _json_bytes(manifest)), *members.items()]:
            info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            # float32 vectors barely compress: stored as they are, they open without
            # inflating a gigabyte and a half at a million facts
            info.compress_type = zipfile.ZIP_STORED if name in _BINARY else zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)


def _remove_stale_temporaries(target: Path) -> None:
    """Delete temporary files an earlier save of ``target`` left when it was killed. A save in
    progress writes to its file all the time, so only files untouched for a while are taken."""
    cutoff = time.time() - STALE_TEMPORARY_SECONDS
    for leftover in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        try:
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()
        except OSError:
            pass  # gone already, or not ours to remove: the save itself does not depend on it


def _rows(index: VectorIndex, order: list[str]) -> Any:
    return np.stack([index.vector(f) for f in order])


def default_max_memory() -> int:
    """The default memory budget for opening a bundle: half the machine's physical memory
    (8 GiB where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (AttributeError, ValueError, OSError):
        return 8 << 30


def read_bundle(path: str | os.PathLike[str], *, max_memory: int | None = None) -> BundleContents:
    """Open and check a bundle; see the module docstring for what is checked.

    ``max_memory`` bounds the bytes that opening may take, judged from the sizes the bundle
    declares before anything is inflated (default: :func:`default_max_memory`, with the
    compression-ratio check on ``graph.json``; an explicit budget replaces both).

    Raises:
        BundleError: the file is missing, not a zip, truncated, tampered with, inconsistent,
            or from a newer Noema.
    """
    source = Path(path)
    if not source.is_file():
        raise BundleError(f"{str(source)!r} is not a file")
    return _open(source, str(source), max_memory, _mapped(source))


def read_bundle_bytes(
    data: bytes, name: str = "<bytes>", *, max_memory: int | None = None
) -> BundleContents:
    """:func:`read_bundle` for the bytes of a bundle (:func:`bundle_bytes`); ``name`` is what
    error messages call it."""
    return _open(io.BytesIO(data), name, max_memory, memoryview(data))


def read_manifest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A bundle's manifest alone, checked for its format and schema version and migrated to
    this version: what ``noema info`` shows, without inflating or parsing anything else (so
    without the members' checks: :func:`read_bundle` does those).

    Raises:
        BundleError: the file is missing, not a zip, not a Noema bundle, or from a newer Noema.
    """
    source = Path(path)
    if not source.is_file():
        raise BundleError(f"{str(source)!r} is not a file")
    return _in_zip(source, str(source), lambda zf: _manifest_of(zf, str(source)))


def _mapped(path: Path) -> memoryview | None:
    """The file mapped into memory (read-only), so stored members are read in place: nothing is
    copied, and only the pages read are loaded. ``None`` where it cannot be mapped (an empty
    file, a file system without mmap) and on Windows, where a mapped file cannot be replaced
    and a save over the bundle that was opened would fail."""
    if os.name == "nt":
        return None
    try:
        with path.open("rb") as handle:
            return memoryview(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))
    except (OSError, ValueError):
        return None


def _open(
    source: Any, name: str, max_memory: int | None, mapped: memoryview | None
) -> BundleContents:
    if max_memory is not None and (
        isinstance(max_memory, bool) or not isinstance(max_memory, int) or max_memory < 1
    ):
        raise OptionError(f"max_memory must be a positive number of bytes, got {max_memory!r}")
    return _in_zip(source, name, lambda zf: _read(zf, name, max_memory, mapped))


def _in_zip(source: Any, name: str, read: Callable[[zipfile.ZipFile], _T]) -> _T:
    """``read`` on the opened zip, its failures as :class:`BundleError`."""
    try:
        with zipfile.ZipFile(source) as zf:
            return read(zf)
    except BundleError:
        raise
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        EOFError,
        OSError,
        NotImplementedError,
        RuntimeError,  # an encrypted member: zipfile asks for a password
    ) as exc:
        raise BundleError(f"{name!r} is not a readable .noema bundle: {exc}") from exc


def _manifest_of(zf: zipfile.ZipFile, name: str) -> dict[str, Any]:
    """The manifest, checked for format and version and migrated to this version."""
    manifest_bytes = _member(zf, "manifest.json", MAX_MANIFEST_BYTES, name)
    manifest = _load_json(manifest_bytes, "manifest.json", name)
    if manifest.get("format") != FORMAT_NAME:
        raise BundleError(
            f"{name!r} is not a Noema bundle (manifest format is {manifest.get('format')!r})"
        )
    version = manifest.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise BundleError(f"{name!r}: schema_version {version!r} is not a positive integer")
    if version > SCHEMA_VERSION:
        raise BundleError(
            f"{name!r} was written with bundle schema {version} by Noema "
            f"{manifest.get('noema_version')!r}; this Noema reads schema {SCHEMA_VERSION} and older. "
            "Upgrade Noema to load it"
        )
    return _migrate(manifest, version)


def _read(
    zf: zipfile.ZipFile, name: str, max_memory: int | None, mapped: memoryview | None
) -> BundleContents:
    manifest = _manifest_of(zf, name)
    declared = manifest.get("members")
    if not isinstance(declared, dict):
        raise BundleError(f"{name!r}: manifest has no members table")
    columnar = COLUMNS_MEMBER in declared
    _check_budget(zf, name, max_memory, columnar=columnar)
    graph_member = COLUMNS_MEMBER if columnar else "graph.json"
    if columnar:
        # graph.json is in every bundle and parsed only where no columns are; it is still
        # checked against its sha256 (inflated as a stream, never held whole), so a bundle with
        # a damaged source of truth is refused rather than passed on
        _check_streamed(zf, "graph.json", *_declared(declared, "graph.json", name), name)
        if _member_info(zf, COLUMNS_MEMBER, name).compress_type != zipfile.ZIP_STORED:
            raise BundleError(
                f"{name!r}: {COLUMNS_MEMBER} is compressed; a bundle stores it as it is, to be "
                "read in place (written by another tool?)"
            )
    data: dict[str, Blob] = {}
    for member in (graph_member, "embeddings.bin", "index.faiss"):
        size, digest = _declared(declared, member, name)
        blob = _checked_member(zf, member, size, digest, name, mapped)
        data[member] = blob
    stored: StoredSentences | None = None
    try:
        if columnar:
            try:
                columns = read_columns(data[COLUMNS_MEMBER], manifest.get("counts"))
            except BundleError as exc:
                raise BundleError(f"{name!r}: {exc}") from None
            graph, raw_log, stored = columns.graph, columns.merge_log, columns.sentences
        else:
            graph_data = _load_json(data["graph.json"], "graph.json", name)
            raw_log = graph_data.pop("merge_log", [])
            graph = SemanticGraph.from_dict(graph_data)
        merge_log = tuple(_record_from_dict(r) for r in raw_log)
    except (GraphError, KeyError, TypeError, ValueError) as exc:
        raise BundleError(f"{name!r}: {graph_member} is invalid: {exc}") from exc
    counts = manifest.get("counts")
    actual = {
        "entities": len(graph.entities),
        "relations": len(graph.relations),
        "events": len(graph.events),
        "documents": len(graph.documents),
        "facts": len(graph.relations) + len(graph.events),
    }
    if counts != actual:
        raise BundleError(
            f"{name!r}: manifest counts {counts!r} do not match graph.json {actual!r}"
        )
    dimension = manifest.get("embedding_dimension")
    if not isinstance(dimension, int) or isinstance(dimension, bool) or dimension < 1:
        raise BundleError(f"{name!r}: embedding_dimension {dimension!r} is not a positive integer")
    for key in ("embedding_model", "spacy_model"):
        if not isinstance(manifest.get(key), str) or not manifest[key].strip():
            raise BundleError(f"{name!r}: manifest {key} is missing or empty")
    threshold = manifest.get("similarity_threshold", 0.85)
    if (
        not isinstance(threshold, (int, float))
        or isinstance(threshold, bool)
        or not 0.0 < threshold <= 1.0
    ):
        raise BundleError(
            f"{name!r}: manifest similarity_threshold {threshold!r} is not a number in (0, 1]"
        )
    index = VectorIndex.from_bytes(
        fact_order(graph), dimension, data["embeddings.bin"], data["index.faiss"]
    )
    _read_ivf(zf, declared, FACTS_IVF_MEMBER, index, name, mapped)
    sentences = _read_sentences(zf, manifest, graph, dimension, name, stored, mapped)
    if sentences is not None:
        _read_ivf(zf, declared, SENTENCES_IVF_MEMBER, sentences.vectors, name, mapped)
    name_vectors = _read_names(zf, manifest, graph, dimension, name, mapped)
    for member in (graph_member, "index.faiss"):  # read, checked, and needed no more
        _forget_pages(mapped, data[member])
    return BundleContents(
        graph=graph,
        index=index,
        merge_log=merge_log,
        manifest=manifest,
        sentences=sentences,
        name_vectors=name_vectors,
    )


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
    size, digest = _declared(declared, member, name)
    blob = _checked_member(zf, member, size, digest, name, mapped)
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
    size, digest = _declared(manifest["members"], NAMES_MEMBER, name)
    rows = info.get("rows")
    if not isinstance(rows, int) or isinstance(rows, bool) or rows * (4 + 4 * dimension) != size:
        raise BundleError(
            f"{name!r}: {NAMES_MEMBER} holds {size} bytes, not the {rows!r} positions and rows "
            f"of {dimension} float32 the manifest declares"
        )
    blob = _checked_member(zf, NAMES_MEMBER, size, digest, name, mapped)
    positions = np.frombuffer(blob, dtype="<i4", count=rows).astype(np.int64)
    vectors = np.frombuffer(blob, dtype="<f4", offset=4 * rows).reshape(rows, dimension)
    if rows and (
        positions[0] < 0 or positions[-1] >= len(graph.entities) or np.any(np.diff(positions) <= 0)
    ):
        raise BundleError(
            f"{name!r}: {NAMES_MEMBER} lists entity positions out of order or outside the "
            f"{len(graph.entities)} entities of graph.json"
        )
    norms = np.linalg.norm(vectors, axis=1)
    if not np.all(np.abs(norms - 1.0) <= 1e-3):
        raise BundleError(f"{name!r}: {NAMES_MEMBER} holds vectors that are not unit length")
    ids = list(graph.entities)
    # one copy of the matrix, each entity's vector a view of it (a copy of each row took 5 s of
    # opening a million-fact base); not views of the mapped file, which the canonicalizer would
    # then hold open for the life of the process, past any save that replaces it
    rows = np.array(vectors, dtype=np.float32)
    _forget_pages(mapped, blob)
    return {ids[p]: rows[n] for n, p in enumerate(positions.tolist())}


def _read_sentences(
    zf: zipfile.ZipFile,
    manifest: dict[str, Any],
    graph: SemanticGraph,
    dimension: int,
    name: str,
    stored: StoredSentences | None,
    mapped: memoryview | None,
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
    size, digest = _declared(manifest["members"], SENTENCES_MEMBER, name)
    blob = _checked_member(zf, SENTENCES_MEMBER, size, digest, name, mapped)
    rows = info.get("rows")
    if not isinstance(rows, int) or isinstance(rows, bool) or rows * dimension * 4 != size:
        raise BundleError(
            f"{name!r}: {SENTENCES_MEMBER} holds {size} bytes, not the {rows!r} rows of "
            f"{dimension} float32 the manifest declares"
        )
    try:
        if stored is not None:
            return SentenceIndex.from_stored(graph, dimension, blob, stored)
        return SentenceIndex.from_bytes(graph, dimension, blob)
    except BundleError as exc:
        raise BundleError(f"{name!r}: {exc}") from exc


def _manifest_from_1(manifest: dict[str, Any]) -> dict[str, Any]:
    """Version 1 to 2: a manifest without fact_rendering was embedded from notation blocks."""
    return {**manifest, "fact_rendering": manifest.get("fact_rendering", NOTATION_RENDERING)}


def _manifest_from_2(manifest: dict[str, Any]) -> dict[str, Any]:
    """Version 2 to 3: names.bin is new and optional; a version-2 bundle has none."""
    return manifest


def _manifest_from_3(manifest: dict[str, Any]) -> dict[str, Any]:
    """Version 3 to 4: a version-3 bundle has no graph.columns; its graph is read from
    graph.json."""
    return manifest


# One function per version step, taking a manifest of version n to version n + 1, so a bundle of
# any older version is read by applying them in turn.
_MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _manifest_from_1,
    2: _manifest_from_2,
    3: _manifest_from_3,
}


def _migrate(manifest: dict[str, Any], version: int) -> dict[str, Any]:
    """The manifest as this version writes it (the members themselves did not change)."""
    for step in range(version, SCHEMA_VERSION):
        manifest = _MIGRATIONS[step](manifest)
    return {**manifest, "schema_version": SCHEMA_VERSION}


def _check_budget(
    zf: zipfile.ZipFile, name: str, max_memory: int | None, *, columnar: bool
) -> None:
    """Refuse, before inflating anything, a bundle whose members declare more than opening
    may take (see the module docstring); ``columnar``: the graph is read from graph.columns."""
    sizes = {info.filename: (info.file_size, info.compress_size) for info in zf.infolist()}
    graph_size, graph_stored = sizes.get("graph.json", (0, 0))
    if (
        max_memory is None
        and graph_size > GRAPH_RATIO_FROM_BYTES
        and graph_size > GRAPH_MAX_RATIO * max(graph_stored, 1)
    ):
        raise BundleError(
            f"{name!r}: graph.json declares {graph_size:,} bytes stored in {graph_stored:,} "
            f"({graph_size / max(graph_stored, 1):,.0f} times; a Noema graph deflates about 5 "
            "times): it looks like padding, not a graph. If you trust this bundle, open it "
            "with an explicit max_memory="
        )
    # the graph is read from graph.columns where there is one (graph.json is then only hashed)
    graph_member = COLUMNS_MEMBER if columnar else "graph.json"
    graph_size = sizes.get(graph_member, (0, 0))[0]
    per_byte = COLUMNS_MEMORY_PER_BYTE if columnar else GRAPH_MEMORY_PER_BYTE
    needed = per_byte * graph_size + VECTOR_MEMORY_PER_BYTE * sum(
        sizes.get(member, (0, 0))[0] for member in _VECTORS
    )
    budget = default_max_memory() if max_memory is None else max_memory
    if needed > budget:
        raise BundleError(
            f"{name!r}: opening it would take about {needed / 2**20:,.0f} MiB ({graph_member} "
            f"declares {graph_size:,} bytes), more than the budget of {budget / 2**20:,.0f} "
            "MiB; pass max_memory= (bytes) to allow more"
        )


def _declared(declared: dict[str, Any], member: str, name: str) -> tuple[int, str]:
    """The size and sha256 the manifest declares for ``member``."""
    entry = declared.get(member)
    if (
        not isinstance(entry, dict)
        or not isinstance(entry.get("size"), int)
        or isinstance(entry.get("size"), bool)
        or not isinstance(entry.get("sha256"), str)
    ):
        raise BundleError(f"{name!r}: manifest has no size and sha256 for {member}")
    return entry["size"], entry["sha256"]


def _member_info(zf: zipfile.ZipFile, member: str, name: str) -> zipfile.ZipInfo:
    try:
        return zf.getinfo(member)
    except KeyError:
        raise BundleError(f"{name!r} has no {member}; it is not a complete .noema bundle") from None


def _checked_member(
    zf: zipfile.ZipFile, member: str, size: int, digest: str, name: str, mapped: memoryview | None
) -> Blob:
    """The member's bytes, refused unless they are the size and sha256 the manifest declares."""
    blob = _member(zf, member, min(MAX_MEMBER_BYTES, size), name, mapped)
    if len(blob) != size or hashlib.sha256(blob).hexdigest() != digest:
        raise BundleError(
            f"{name!r}: {member} does not match its sha256 in the manifest (corrupt or altered)"
        )
    return blob


def _check_streamed(zf: zipfile.ZipFile, member: str, size: int, digest: str, name: str) -> None:
    """``member`` against its declared size and sha256, inflated a mebibyte at a time."""
    info = _member_info(zf, member, name)
    if info.file_size != size:
        raise BundleError(
            f"{name!r}: {member} holds {info.file_size} bytes, the manifest declares {size}"
        )
    hasher, seen = hashlib.sha256(), 0
    with zf.open(info) as handle:
        while chunk := handle.read(1 << 20):
            seen += len(chunk)
            if seen > size:
                raise BundleError(f"{name!r}: {member} is larger than its declared size")
            hasher.update(chunk)
    if seen != size or hasher.hexdigest() != digest:
        raise BundleError(
            f"{name!r}: {member} does not match its sha256 in the manifest (corrupt or altered)"
        )


def _member(
    zf: zipfile.ZipFile, member: str, limit: int, name: str, mapped: memoryview | None = None
) -> Blob:
    """The member's bytes: a view of ``mapped`` (the whole bundle, in memory or mapped from its
    file) where the member is stored as it is, else inflated."""
    info = _member_info(zf, member, name)
    if info.file_size > limit:
        raise BundleError(
            f"{name!r}: {member} declares {info.file_size} bytes, more than the {limit} allowed"
        )
    if mapped is not None and info.compress_type == zipfile.ZIP_STORED and not info.flag_bits & 1:
        return _stored_view(mapped, info, name)
    # No compression-ratio test: a graph of repetitive text deflates far beyond any fixed ratio
    # and is still ours. The limit is the size the manifest declares (or a fixed cap), and the
    # member is inflated as a stream that stops one byte past it.
    with zf.open(info) as handle:
        blob = handle.read(limit + 1)
    if len(blob) > limit:
        raise BundleError(f"{name!r}: {member} is larger than its declared size")
    return blob


def _forget_pages(mapped: memoryview | None, view: Blob) -> None:
    """Take a mapped member's pages, once read and no longer needed, out of this process's
    resident memory (they stay in the system's file cache, and a later read maps them again):
    at a million facts index.faiss, graph.columns and names.bin are 2.3 GB that opening reads
    whole and then never touches again."""
    if mapped is None or not isinstance(view, memoryview) or not isinstance(mapped.obj, mmap.mmap):
        return
    if not hasattr(mmap, "MADV_DONTNEED") or len(view) == 0:
        return
    start = np.frombuffer(view, np.uint8).ctypes.data - np.frombuffer(mapped, np.uint8).ctypes.data
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE  # only pages wholly inside the member
    end = (start + len(view)) // mmap.PAGESIZE * mmap.PAGESIZE
    if end > first:
        mapped.obj.madvise(mmap.MADV_DONTNEED, first, end - first)


_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # a zip member's local header (zipfile's own)


def _stored_view(mapped: memoryview, info: zipfile.ZipInfo, name: str) -> memoryview:
    """A stored member's bytes within the whole bundle's, found from its local header as
    zipfile finds them (no CRC: the member's sha256 is checked instead)."""
    at = info.header_offset
    if at + _LOCAL_HEADER.size > len(mapped):
        raise BundleError(f"{name!r}: {info.filename} lies past the end of the file (truncated?)")
    fields = _LOCAL_HEADER.unpack_from(mapped, at)
    signature, name_length, extra_length = fields[0], fields[-2], fields[-1]
    start = at + _LOCAL_HEADER.size + name_length + extra_length
    if signature != b"PK\x03\x04" or bytes(
        mapped[at + _LOCAL_HEADER.size : at + _LOCAL_HEADER.size + name_length]
    ) != info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437"):
        raise BundleError(f"{name!r}: {info.filename}'s local header is damaged")
    if start + info.compress_size > len(mapped):
        raise BundleError(f"{name!r}: {info.filename} lies past the end of the file (truncated?)")
    return mapped[start : start + info.compress_size]


def _load_json(blob: Blob, member: str, name: str) -> dict[str, Any]:
    try:
        # orjson parses graph.json about 3x faster than the standard library (see
        # benchmarks/scale.py); both give the same objects for what write_bundle writes
        value = orjson.loads(blob)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BundleError(f"{name!r}: {member} is not valid UTF-8 JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise BundleError(f"{name!r}: {member} must hold a JSON object, not {type(value).__name__}")
    return value


def _json_bytes(value: Any) -> bytes:
    try:
        return json_bytes(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise BundleError(f"the knowledge base cannot be written as JSON: {exc}") from exc


def _record_from_dict(raw: Any) -> MergeRecord:
    if not isinstance(raw, dict):
        raise InputTypeError("merge_log entries must be objects")
    if raw["rule"] not in ("exact", "embedding", "type"):
        raise OptionError(f"unknown merge rule {raw['rule']!r}")
    similarity = raw["similarity"]
    if similarity is not None and not isinstance(similarity, (int, float)):
        raise InputTypeError("merge similarity must be a number or null")
    return MergeRecord(
        entity_id=str(raw["entity_id"]),
        canonical_name=str(raw["canonical_name"]),
        merged_name=str(raw["merged_name"]),
        type=str(raw["type"]),
        rule=raw["rule"],
        similarity=similarity,
        document_ids=tuple(str(d) for d in raw["document_ids"]),
    )
