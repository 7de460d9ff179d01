"""What :meth:`KnowledgeBase.load <noema.KnowledgeBase.load>` and
:meth:`~noema.KnowledgeBase.from_bytes` take besides the bundle, and how those options are
checked against what the bundle's manifest says it was built with.

Apart from :mod:`noema.kb` because the knowledge base's methods are its public face; settling
which model, threshold and vectors an opened bundle gets is a step before the knowledge base
exists, and needs none of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from noema.errors import ModelMismatchError
from noema.ingest.extractor import Extractor
from noema.retrieval.options import DEFAULT_SIMILARITY_THRESHOLD
from noema.storage.bundle import BundleContents
from noema.vectors.embed import Embedder
from noema.vectors.index import SearchMode

__all__ = ["LoadOptions", "check_dimension", "checked_model", "loaded_threshold"]


@dataclass(frozen=True)
class LoadOptions:
    """What :meth:`KnowledgeBase.load` and :meth:`KnowledgeBase.from_bytes` take besides the
    bundle (``from_bytes`` checks its keywords by building one)."""

    embedding_model: str | None = None
    embedder: Embedder | None = None
    extractor: Extractor | None = None
    spacy_model: str | None = None
    similarity_threshold: float | None = None
    search: SearchMode = "auto"
    allow_download: bool = False
    max_memory: int | None = None
    verify: bool = False


def checked_model(manifest: dict[str, Any], name: str, options: LoadOptions) -> str:
    """The embedding model the bundle ``name`` was built with, or :class:`ModelMismatchError`
    where ``options`` ask for another."""
    stored_model: str = manifest["embedding_model"]
    embedder = options.embedder
    asked = embedder.name if embedder is not None else options.embedding_model
    if asked is not None and asked != stored_model:
        raise ModelMismatchError(
            f"{name!r} was built with embedding model {stored_model!r}, not {asked!r}; "
            f"load it with embedding_model={stored_model!r} or rebuild it"
        )
    return stored_model


def loaded_threshold(manifest: dict[str, Any], options: LoadOptions) -> float:
    """The threshold ``options`` give, else the one the bundle was built with."""
    threshold = manifest.get("similarity_threshold", DEFAULT_SIMILARITY_THRESHOLD)
    return (
        options.similarity_threshold
        if options.similarity_threshold is not None
        else float(threshold)
    )


def check_dimension(contents: BundleContents, name: str, stored_model: str, dimension: int) -> None:
    """:class:`ModelMismatchError` where the bundle's vectors are not of the embedder's
    ``dimension``."""
    if contents.index.dimension != dimension:
        raise ModelMismatchError(
            f"{name!r} holds vectors of dimension {contents.index.dimension}, but "
            f"{stored_model!r} gives {dimension}"
        )
