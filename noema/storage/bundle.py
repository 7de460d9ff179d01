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
``sentences.words`` (optional, from version 6)
    The word index of the sidecar's sentences (BM25 postings, :mod:`noema.vectors.words`
    documents it field by field): ``words.rows`` sentences in the sidecar's row order, the sha256
    of their keys, the words in increasing order and each word's postings (sentence rows and
    weights), little-endian, stored rather than deflated and read in place: retrieval searches
    it rather than making one from the documents. ``words.scoring`` says how its weights were
    made; one made another way is left out (the index is then made from the sentences on first
    use). Written for a sidecar of up to :data:`~noema.vectors.words.LEXICAL_LIMIT` sentences.
    Derived (``graph.json`` alone rebuilds it); a bundle without it makes the index on its first
    retrieval.
``facts.ivf``, ``sentences.ivf`` (optional, from version 4)
    The approximate index of the fact vectors and of the sentence vectors, when the knowledge
    base had one (``search="approximate"``, or ``"auto"`` from
    :data:`~noema.vectors.index.APPROXIMATE_FROM` rows): its trained parts and each row's list, in the
    layout :mod:`noema.vectors.ivf` documents (never a faiss serialization); from version 5 each
    row's 8-bit code too. Opening with approximate search builds the index from them rather than
    training it again (and, from version 5, without encoding the rows), and it searches as it
    did before the save. Derived; without them the index is trained on opening.

Where a bundle holds ``graph.columns``, ``graph.json`` is not read on opening, only its size in
the zip directory checked (and its sha256 as a stream, never held whole, when it is small). Members stored as they are (the
vectors, the columns) are read in place: the file is mapped into memory and they are views of
it, so nothing is copied (not on Windows, where a mapped file could not be replaced by a save).
A bundle under 64 MiB is read whole instead, so another program writing its file in place
changes nothing it reads; a larger one is checked before every later read of its mapped
vectors (a search, a save), and once its file was written in place (its size or modification
time moved) each is refused with :class:`~noema.errors.BundleError` saying to load it again.
Noema's own saves move a new file over the path and leave the mapped one as it was.

Loading checks, before anything is trusted: the zip structure, member sizes against the manifest
(a member is inflated as a stream and refused once it passes its declared size, so a zip bomb
never fills memory), what the declared sizes would cost to open against a memory budget (the
caller's ``max_memory``, by default half the machine's memory) and, with the default budget, a
``graph.json`` that claims to inflate over 64 MiB at more than 100 times its stored size (the
graphs Noema writes deflate about 5 times: such a member is padding, not a graph), the schema
version (newer ones are refused), counts against the contents, the dimension, and every id the
graph references. It checks the sha256 of the members up to
:data:`~noema.storage.members.HASHED_ON_OPENING_BYTES` (and of every member of a bundle it cannot
map); the larger ones with ``verify=True``, and before their contents go into another bundle
(:class:`~noema.storage.container.UnhashedMembers`, kept with the contents); what reads every
byte of a member (each vector of unit length, the sidecar's keys) is checked with its sha256.
With ``verify=True``, and before a save copies the members, the members opening does not read
are checked against those it reads (:mod:`noema.storage._agreement`): ``graph.json`` holds the
graph ``graph.columns`` holds, ``index.faiss`` the rows of ``embeddings.bin``,
``sentences.words`` the sentences of the sidecar.
Each failure raises
:class:`~noema.errors.BundleError` saying what is wrong. Saving writes a temporary
file beside the target and moves it into place with ``os.replace``, so a crash midway leaves the
previous bundle untouched. The same knowledge base gives the same bytes; one opened from a bundle
and not written to since is saved by copying that bundle's members rather than making them again
(:mod:`noema.storage.copying`), to the same bytes.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypedDict

import numpy as np
import numpy.typing as npt

from noema.errors import BundleError
from noema.model.facttext import FACT_RENDERING
from noema.model.graph import SemanticGraph
from noema.model.records import MergeRecord, record_to_dict
from noema.storage._reading import BundleContents, read_contents
from noema.storage.container import (
    file_identity,
    mapped_file,
    write_atomically,
    write_target,
    zip_member,
)
from noema.storage.copying import Copying, copy_member
from noema.storage.manifest import (
    FORMAT_NAME,
    SCHEMA_VERSION,
    default_max_memory,
    read_manifest,
)
from noema.storage.members import (
    MEMBERS,
    Saving,
    encode_json,
    fact_order,
    graph_counts,
)
from noema.vectors.index import VectorIndex
from noema.vectors.sentences import SentenceIndex

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "SCHEMA_VERSION",
    "BundleContents",
    "BundleParts",
    "BundleSettings",
    "bundle_bytes",
    "default_max_memory",
    "read_bundle",
    "read_bundle_bytes",
    "read_manifest",
    "write_bundle",
]


EMBEDDING_ROWS = "relations then events, in graph.json order"


@dataclass(frozen=True)
class BundleSettings:
    """What a bundle's manifest records about how it was built."""

    embedding_model: str
    spacy_model: str
    similarity_threshold: float
    noema_version: str


class BundleParts(TypedDict, total=False):
    """What a bundle holds beside its graph and fact index: the keywords of :func:`write_bundle`
    and :func:`bundle_bytes` (none by default). ``copying``: members copied from the bundle the
    state was opened from, which holds them as they would be written
    (:mod:`noema.storage.copying`); ``name_vectors`` is then not needed for a copied names.bin."""

    merge_log: tuple[MergeRecord, ...]
    sentences: SentenceIndex | None
    name_vectors: Mapping[str, npt.NDArray[np.float32]] | None
    copying: Copying | None


def write_bundle(
    path: str | os.PathLike[str],
    graph: SemanticGraph,
    index: VectorIndex,
    *,
    settings: BundleSettings,
    **parts: Unpack[BundleParts],
) -> dict[str, Any]:
    """Write a bundle atomically (its members written one at a time into a temporary file
    beside ``path``, then moved into place, so the previous bundle survives a failure) and
    return its manifest."""
    write_target(path)  # a path no save can replace is refused before the members are made
    manifest: dict[str, Any] = {}

    def write(handle: BinaryIO) -> None:
        manifest.update(_write_members(handle, graph, index, settings, **parts))

    write_atomically(path, write)
    return manifest


def bundle_bytes(
    graph: SemanticGraph,
    index: VectorIndex,
    *,
    settings: BundleSettings,
    **parts: Unpack[BundleParts],
) -> bytes:
    """The bytes :func:`write_bundle` writes, for a bundle kept in memory or sent elsewhere; :func:`read_bundle_bytes` reads
    them back."""
    buffer = io.BytesIO()
    _write_members(buffer, graph, index, settings, **parts)
    return buffer.getvalue()


def _write_members(
    handle: BinaryIO,
    graph: SemanticGraph,
    index: VectorIndex,
    settings: BundleSettings,
    *,
    merge_log: tuple[MergeRecord, ...] = (),
    sentences: SentenceIndex | None = None,
    name_vectors: Mapping[str, npt.NDArray[np.float32]] | None = None,
    copying: Copying | None = None,
) -> dict[str, Any]:
    """Write every member as a zip into ``handle`` and return the manifest. Members are made
    and written one at a time, each dropped before the next is made (the fact vectors written
    from their matrix where its rows are already in fact order, else from one reordered copy);
    ``manifest.json`` comes last, since it holds their sizes and hashes. ``index`` must hold a
    vector for every fact of ``graph``; rows are written in :func:`fact_order`, so the bytes do
    not depend on the order facts were indexed. The members ``copying`` names are copied as
    they lie in the bundle the state was opened from, and nothing is made for them."""
    copied = copying.members if copying is not None else frozenset()
    making: list[Saving] = []

    def saving() -> Saving:  # made for the first member that is not copied
        if not making:
            making.append(_saving(graph, index, merge_log, sentences, name_vectors))
        return making[0]

    if not copied:
        saving()  # a fact without a vector is refused before anything is written
    declared: dict[str, dict[str, Any]] = {}
    described: dict[str, Any] = {}
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for member in MEMBERS:
            if copying is not None and member.name in copied:
                if copying.source.check is not None:
                    copying.source.check()  # refused once the file was written in place
                size, digest = copy_member(zf, copying.source, member.name)
                declared[member.name] = {"size": size, "sha256": digest}
                if member.described:
                    described[member.described] = copying.source.manifest[member.described]
                continue
            if copying is not None and member.name in copying.empty:
                continue
            data = member.write(saving())
            if data is not None:
                size, digest = zip_member(zf, member.name, data, member.stored)
                declared[member.name] = {"size": size, "sha256": digest}
            del data
        # the rows were checked before they were read; a file written in place while they were
        # being written (or copied) is seen here, before the save is moved into place, so no
        # bundle holds bytes of another
        for vectors in (index, sentences.vectors if sentences is not None else None):
            if vectors is not None:
                vectors.check_unchanged()
        if copied and copying is not None and copying.source.check is not None:
            copying.source.check()
        manifest = {
            "format": FORMAT_NAME,
            "schema_version": SCHEMA_VERSION,
            "noema_version": settings.noema_version,
            "counts": graph_counts(graph),
            "embedding_model": settings.embedding_model,
            "embedding_dimension": index.dimension,
            "spacy_model": settings.spacy_model,
            "similarity_threshold": settings.similarity_threshold,
            "embedding_rows": EMBEDDING_ROWS,
            "fact_rendering": FACT_RENDERING,
            **described,
            **(making[0].described if making else {}),
            "merges": len(merge_log),
            "members": declared,
        }
        zip_member(zf, "manifest.json", encode_json(manifest), stored=False)
    return manifest


def _saving(
    graph: SemanticGraph,
    index: VectorIndex,
    merge_log: tuple[MergeRecord, ...],
    sentences: SentenceIndex | None,
    name_vectors: Mapping[str, npt.NDArray[np.float32]] | None,
) -> Saving:
    """What the members are made from, once every fact is checked to have a vector."""
    order = fact_order(graph)
    missing = [f for f in order if f not in index]
    if missing:
        raise BundleError(f"{len(missing)} facts have no vector (first: {missing[0]!r})")
    ordered = index
    if index.ids != order:  # else written as they are: a copy of every row spared
        ordered = VectorIndex(index.dimension)
        if order:
            ordered.add(order, _rows(index, order))
    log = [record_to_dict(r) for r in merge_log]
    return Saving(graph, log, index, ordered, sentences, name_vectors or {})


def _rows(index: VectorIndex, order: list[str]) -> Any:
    return index.vectors.take(index.rows_of(order), axis=0)


def read_bundle(
    path: str | os.PathLike[str], *, max_memory: int | None = None, verify: bool = False
) -> BundleContents:
    """Open and check a bundle; see the module docstring for what is checked.

    ``max_memory`` bounds the bytes that opening may take, judged from the sizes the bundle
    declares before anything is inflated (default: :func:`default_max_memory`, with the
    compression-ratio check on ``graph.json``; an explicit budget replaces both). ``verify``:
    every member is checked against its sha256, not only the small ones.

    Raises:
        BundleError: the file is missing, not a zip, truncated, tampered with, inconsistent,
            or from a newer Noema.
    """
    source = Path(path)
    if not source.is_file():
        raise BundleError(f"{str(source)!r} is not a file")
    # taken before reading: a file replaced meanwhile is then seen by the next save as a file
    # someone else wrote, which refuses rather than overwrites it
    identity = file_identity(source)
    opened = mapped_file(source)
    if opened is None:
        contents = read_contents(source, str(source), max_memory, None, verify=verify)
    else:
        view, check = opened
        # read whole: the zip directory is read from the same bytes as the members, not the file
        zip_source = source if check else io.BytesIO(view)
        contents = read_contents(zip_source, str(source), max_memory, view, check, verify=verify)
    return replace(contents, source=(source, identity))


def read_bundle_bytes(
    data: bytes, name: str = "<bytes>", *, max_memory: int | None = None, verify: bool = False
) -> BundleContents:
    """:func:`read_bundle` for the bytes of a bundle (:func:`bundle_bytes`); ``name`` is what
    error messages call it."""
    return read_contents(io.BytesIO(data), name, max_memory, memoryview(data), verify=verify)
