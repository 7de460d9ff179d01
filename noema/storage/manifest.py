"""The manifest of a bundle: its format name, the schema version and its history, the
migrations that read an older manifest as this version writes it, the entries it declares for
each member, and the default memory budget for opening a bundle.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from noema.errors import BundleError
from noema.model.facttext import NOTATION_RENDERING
from noema.storage.container import in_zip, load_json, read_member

__all__ = [
    "FORMAT_NAME",
    "SCHEMA_VERSION",
    "checked_settings",
    "declared_entry",
    "default_max_memory",
    "manifest_of",
    "read_manifest",
    "written_manifest",
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
#   5  facts.ivf and sentences.ivf hold each row's 8-bit code too (their member version 2), so
#      opening hands them to faiss instead of encoding every row.
#   6  the optional sentences.words (the sidecar's word index, read in place) and the
#      manifest's words entry (rows, scoring) whenever it is present.
SCHEMA_VERSION = 6


FORMAT_NAME = "noema-bundle"


# Limits checked against the zip directory before a member is inflated.
MAX_MANIFEST_BYTES = 1 << 20


def default_max_memory() -> int:
    """The default memory budget for opening a bundle: half the machine's physical memory
    (8 GiB where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (AttributeError, ValueError, OSError):
        return 8 << 30


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
    return in_zip(source, str(source), lambda zf: manifest_of(zf, str(source)))


def manifest_of(zf: zipfile.ZipFile, name: str) -> dict[str, Any]:
    """The manifest, checked for format and version and migrated to this version."""
    return written_manifest(zf, name)[0]


def written_manifest(zf: zipfile.ZipFile, name: str) -> tuple[dict[str, Any], int]:
    """:func:`manifest_of` and the schema version the bundle was written with."""
    manifest_bytes = read_member(zf, "manifest.json", MAX_MANIFEST_BYTES, name)
    manifest = load_json(manifest_bytes, "manifest.json", name)
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
    return _migrate(manifest, version), version


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


def _manifest_from_4(manifest: dict[str, Any]) -> dict[str, Any]:
    """Version 4 to 5: a version-4 bundle's approximate indexes hold no codes; their rows are
    encoded when the index is built."""
    return manifest


def _manifest_from_5(manifest: dict[str, Any]) -> dict[str, Any]:
    """Version 5 to 6: sentences.words is new and optional; a version-5 bundle has none, and
    its word index is made from the sentences by the first retrieval that needs it."""
    return manifest


# One function per version step, taking a manifest of version n to version n + 1, so a bundle of
# any older version is read by applying them in turn.
_MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _manifest_from_1,
    2: _manifest_from_2,
    3: _manifest_from_3,
    4: _manifest_from_4,
    5: _manifest_from_5,
}


def _migrate(manifest: dict[str, Any], version: int) -> dict[str, Any]:
    """The manifest as this version writes it (the members themselves did not change)."""
    for step in range(version, SCHEMA_VERSION):
        manifest = _MIGRATIONS[step](manifest)
    return {**manifest, "schema_version": SCHEMA_VERSION}


def declared_entry(declared: dict[str, Any], member: str, name: str) -> tuple[int, str]:
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


def checked_settings(manifest: dict[str, Any], name: str) -> int:
    """The manifest's embedding dimension, once its model names and similarity threshold are
    checked too."""
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
    return dimension
