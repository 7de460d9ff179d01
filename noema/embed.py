"""Turning texts into L2-normalized float32 vectors, behind a small protocol."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from noema.resources import DEFAULT_EMBEDDING_MODEL, load_embedding_model

__all__ = ["Embedder", "SentenceTransformerEmbedder", "Vectors"]

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """What Noema needs from an embedding model.

    ``embed`` returns one L2-normalized float32 row per text, so inner product is cosine
    similarity. ``name`` is recorded in bundles and checked when they are loaded.
    """

    name: str

    @property
    def dimension(self) -> int:
        """Length of each vector."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors for ``texts``, shape ``(len(texts), dimension)``."""
        ...


class SentenceTransformerEmbedder:
    """A sentence-transformers model; ``all-MiniLM-L6-v2`` loads from the packaged copy offline.

    Example:
        >>> embedder = SentenceTransformerEmbedder()
        >>> embedder.embed(["Google", "Alphabet"]).shape
        (2, 384)
    """

    def __init__(self, model: str = DEFAULT_EMBEDDING_MODEL, *, batch_size: int = 128) -> None:
        self.name = model
        self.batch_size = batch_size
        # Hugging Face fast tokenizers raise "Already borrowed" when one instance is used from
        # two threads at once; the model itself already uses every core, so calls take turns.
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        """Length of each vector, read from the model."""
        model = load_embedding_model(self.name)
        get = (
            getattr(model, "get_embedding_dimension", None)
            or model.get_sentence_embedding_dimension
        )
        return int(get())

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; repeated texts are embedded once."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        model = load_embedding_model(self.name)
        with self._lock:
            vectors = model.encode(
                unique,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            ).astype(np.float32, copy=False)
        if len(unique) == len(texts):
            return np.ascontiguousarray(vectors)
        row = {text: n for n, text in enumerate(unique)}
        return np.ascontiguousarray(vectors[[row[t] for t in texts]])

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.name!r})"
