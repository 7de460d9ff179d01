"""Loading the models up front: what an application start (or an adapter's constructor) does so
that the first question costs what its parsing and embedding cost, not the models' loading."""

from __future__ import annotations

from noema.kb import KnowledgeBase
from noema.model.graph import Document
from noema.resources import DEFAULT_EMBEDDING_MODEL, DEFAULT_SPACY_MODEL

__all__ = ["load_models"]


def load_models(
    spacy_model: str = DEFAULT_SPACY_MODEL, embedding_model: str = DEFAULT_EMBEDDING_MODEL
) -> None:
    """Load the spaCy pipeline and the embedding model (once per process; later knowledge bases
    share them) and run a tiny ingest and retrieval through them, which also pays the first
    forward passes, the vector index and the token encoding. Measured on 2 cores: a first
    ``noema.compress`` call on 6 short chunks took 9.2 s, 7 s of it loading the models; after
    this it costs what parsing and embedding the chunks cost (about 0.3 s).

    Raises:
        MissingResourceError: a model is not installed (the message says how to install it).

    Example:
        >>> load_models()
    """
    kb = KnowledgeBase(spacy_model=spacy_model, embedding_model=embedding_model)
    kb.ingest([Document("Larry Page founded Google in 1998.", id="warm-up")])
    kb.retrieve("Who founded Google?")
