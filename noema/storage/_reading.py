"""Reading a bundle's members from its zip container: the manifest's checks on the zip
before anything is inflated (the memory budget, members stored as they are), then each member
of :data:`~noema.storage.members.MEMBERS` in turn, checked as :mod:`noema.storage.bundle`
describes.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from noema.errors import BundleError, OptionError
from noema.model.graph import SemanticGraph
from noema.model.records import MergeRecord
from noema.storage._agreement import Agreement
from noema.storage.container import (
    FileIdentity,
    UnhashedMembers,
    check_hash,
    forget_pages,
    in_zip,
)
from noema.storage.copying import OpenedBundle, opened_bundle
from noema.storage.manifest import (
    checked_settings,
    declared_entry,
    default_max_memory,
    written_manifest,
)
from noema.storage.members import (
    COLUMNS_MEMBER,
    FACTS_IVF_MEMBER,
    GRAPH_MEMBER,
    IN_PLACE_MEMBERS,
    INFLATED_VECTOR_MEMORY_PER_BYTE,
    MEMBERS,
    SENTENCES_IVF_MEMBER,
    STORED_MEMBERS,
    VECTOR_MEMBERS,
    Opening,
)
from noema.storage.names import StoredNames
from noema.vectors.index import FLAT_HEADER_BYTES, VectorIndex
from noema.vectors.ivf import views_supported
from noema.vectors.sentences import SentenceIndex

__all__ = ["BundleContents", "check_budget", "check_stored_members", "read_contents"]

# A graph.json past this size that inflates more than GRAPH_MAX_RATIO times its stored bytes is
# refused under the default budget; real graphs (text and ids) deflate about 5 times.
GRAPH_RATIO_FROM_BYTES = 64 << 20
GRAPH_MAX_RATIO = 100
IVF_MEMBERS = frozenset({FACTS_IVF_MEMBER, SENTENCES_IVF_MEMBER})


@dataclass(frozen=True)
class BundleContents:
    """Everything a bundle holds, checked."""

    graph: SemanticGraph
    index: VectorIndex
    merge_log: tuple[MergeRecord, ...]
    manifest: dict[str, Any]
    sentences: SentenceIndex | None = None
    # the entity-name vectors the bundle kept (names.bin), read in place
    name_vectors: StoredNames | None = None
    # the file it was read from and that file's identity before it was read (None: from bytes)
    source: tuple[Path, FileIdentity | None] | None = None
    # the members opened without their sha256 checked, to check before they go elsewhere
    unhashed: UnhashedMembers | None = None
    # the bytes it was read from, for a save of the state read to copy members from
    opened: OpenedBundle | None = None


def read_contents(
    source: Any,
    name: str,
    max_memory: int | None,
    mapped: memoryview | None,
    check: Callable[[], None] | None = None,
    *,
    verify: bool = False,
) -> BundleContents:
    """The checked contents of the bundle in ``source`` (a path or a binary file); ``name`` is
    what error messages call it, ``mapped`` its bytes where they are in memory or mapped from its
    file, ``check`` what the indexes call before reading a mapped file again; ``verify``: every
    member hashed, not only the small ones."""
    if max_memory is not None and (
        isinstance(max_memory, bool) or not isinstance(max_memory, int) or max_memory < 1
    ):
        raise OptionError(f"max_memory must be a positive number of bytes, got {max_memory!r}")

    def read(zf: zipfile.ZipFile) -> BundleContents:
        manifest, written_schema = written_manifest(zf, name)
        declared = manifest.get("members")
        if not isinstance(declared, dict):
            raise BundleError(f"{name!r}: manifest has no members table")
        opening = Opening(zf, name, manifest, max_memory, mapped, check, verified=verify)
        check_budget(zf, name, max_memory, columnar=opening.columnar, in_place=mapped is not None)
        check_stored_members(zf, manifest, written_schema, name)
        if verify:  # first, so the damaged member is named before any check of what it holds
            for member in MEMBERS:
                if member.name in declared:
                    size, digest = declared_entry(declared, member.name, name)
                    check_hash(zf, member.name, size, digest, name, mapped)
        for member in MEMBERS:
            if member.optional or member.name in declared:
                member.read(opening)
            elif written_schema >= member.since_schema:
                declared_entry(declared, member.name, name)  # refused: a required member is missing
        for blob in opening.spent:
            forget_pages(mapped, blob)
        core = opening.core
        budget = partial(
            check_budget,
            name=name,
            max_memory=max_memory,
            columnar=False,
            in_place=mapped is not None,
        )
        agreement = Agreement(
            name,
            declared,
            core.graph,
            core.merge_log,
            core.index,
            within_budget=partial(
                budget, doing="reading graph.json to compare it with graph.columns"
            ),
            parse_budget=partial(
                budget,
                doing=(
                    "graph.json is not the bytes this Noema writes for the graph in graph.columns "
                    "(an older Noema or another tool wrote it), and parsing it to compare the two "
                    "record by record"
                ),
                fix=(
                    "nothing was written. Load the bundle with KnowledgeBase.load(..., "
                    "max_memory=) (bytes) to allow more"
                ),
            ),
            sentences=opening.sentences,
            words_digest=opening.words_digest,
        )
        opened = opened_bundle(opening, written_schema)
        if verify:  # the index's rows were compared with the vectors as they were read
            agreement.check(zf, mapped, rows=False)
        elif opened is not None:  # checked before a save copies the members
            opened = replace(opened, agree=agreement.later(opened.mapped, opened.check))
        return BundleContents(
            graph=core.graph,
            index=core.index,
            merge_log=core.merge_log,
            manifest=manifest,
            sentences=opening.sentences,
            name_vectors=opening.name_vectors,
            unhashed=_unhashed(opening),
            opened=opened,
        )

    return in_zip(source, name, read)


def _unhashed(opening: Opening) -> UnhashedMembers | None:
    """What checks the members opened without their sha256 later, from the bytes they were
    read from (:meth:`Opening.hash_now` hashes every member of a bundle not in memory or
    mapped)."""
    if not opening.unhashed or opening.mapped is None:
        return None
    entries = tuple(
        (member, *declared_entry(opening.declared, member, opening.name))
        for member in opening.unhashed
    )
    return UnhashedMembers(
        opening.name, opening.mapped, opening.check, entries, tuple(opening.deferred)
    )


def check_budget(
    zf: zipfile.ZipFile,
    name: str,
    max_memory: int | None,
    *,
    columnar: bool,
    in_place: bool = True,
    doing: str = "opening it",
    fix: str = "pass max_memory= (bytes) to allow more",
) -> None:
    """Refuse, before inflating anything, a bundle whose members declare more than opening
    may take (see the module docstring); ``columnar``: the graph is read from graph.columns;
    ``in_place``: the members stored as they are are read where they lie (the file mapped, or
    the bytes given), else read into memory; ``doing``: what the error says would take it, and
    ``fix`` how to allow it."""
    infos = zf.infolist()
    sizes = {info.filename: (info.file_size, info.compress_size) for info in infos}
    inflated = {
        info.filename
        for info in infos
        if info.compress_type != zipfile.ZIP_STORED
        or not in_place
        # an approximate index's codes are copied into faiss where it cannot view them
        or (info.filename in IVF_MEMBERS and not views_supported())
    }
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
    graph_member = COLUMNS_MEMBER if columnar else GRAPH_MEMBER
    graph_size = sizes.get(graph_member, (0, 0))[0]
    cost = {member.name: member.memory_per_byte for member in MEMBERS}
    needed = cost[graph_member] * graph_size + sum(
        (cost[member] + INFLATED_VECTOR_MEMORY_PER_BYTE * (member in inflated))
        * sizes.get(member, (0, 0))[0]
        for member in sorted(IN_PLACE_MEMBERS)
    )
    budget = default_max_memory() if max_memory is None else max_memory
    if needed > budget:
        raise BundleError(
            f"{name!r}: {doing} would take about {needed / 2**20:,.0f} MiB ({graph_member} "
            f"declares {graph_size:,} bytes), more than the budget of {budget / 2**20:,.0f} "
            f"MiB; {fix}"
        )


def check_stored_members(
    zf: zipfile.ZipFile, manifest: dict[str, Any], written_schema: int, name: str
) -> None:
    """Refuse, before anything is inflated, a member the format stores as it is but that is
    compressed, and fact vectors whose declared size is not the manifest's facts times its
    dimension. Vectors barely compress, so deflated ones are only ever a bomb (2 GiB of zeros
    deflate to 2 MB, and the memory budget trusts the declared size); bundles of schema 1
    deflated them, and there they are inflated only to the size the counts give."""
    for info in zf.infolist():
        old_vectors = written_schema == 1 and info.filename in VECTOR_MEMBERS
        compressed = info.compress_type != zipfile.ZIP_STORED
        if info.filename in STORED_MEMBERS and compressed and not old_vectors:
            raise BundleError(
                f"{name!r}: {info.filename} is compressed; a bundle stores it as it is, to "
                "be read in place (written by another tool?)"
            )
    dimension = checked_settings(manifest, name)
    counts = manifest.get("counts")
    facts = counts.get("facts") if isinstance(counts, dict) else None
    if not isinstance(facts, int) or isinstance(facts, bool) or facts < 0:
        raise BundleError(f"{name!r}: manifest counts {counts!r:.200} declare no number of facts")
    vectors = facts * dimension * 4
    for member, size in (("embeddings.bin", vectors), ("index.faiss", FLAT_HEADER_BYTES + vectors)):
        declared = declared_entry(manifest.get("members") or {}, member, name)[0]
        if declared != size:
            raise BundleError(
                f"{name!r}: {member} declares {declared:,} bytes; the manifest counts {facts:,} "
                f"facts of {dimension} float32, which take {size:,}"
            )
