"""Loading the models up front: what an application start (or an adapter's constructor) does so
that the first question costs what its parsing and embedding cost, not the models' loading."""

from __future__ import annotations

from noema.kb import KnowledgeBase
from noema.model.records import Document
from noema.resources import DEFAULT_EMBEDDING_MODEL, DEFAULT_SPACY_MODEL
from noema.retrieval.options import RetrieveOptions
from noema.vectors.embed import query_embedding
from noema.vectors.index import load_search_library

__all__ = ["load_models", "warm_up"]

WARM_UP_QUESTION = "Who founded Google?"


def load_models(
    spacy_model: str = DEFAULT_SPACY_MODEL, embedding_model: str = DEFAULT_EMBEDDING_MODEL
) -> None:
    """Load the spaCy pipeline and the embedding model (once per process; later knowledge bases
    share them) and run a tiny ingest and retrieval through them, which also pays the first
    forward passes, the vector index and the token encoding, and load the vector search library. Measured on 2 cores: a first
    ``noema.compress`` call on 6 short chunks took 9.2 s, 7 s of it loading the models; after
    this it costs what parsing and embedding the chunks cost (about 0.3 s).

    Raises:
        MissingResourceError: a model is not installed (the message says how to install it).

    Example:
        >>> load_models()
    """
    kb = KnowledgeBase(spacy_model=spacy_model, embedding_model=embedding_model)
    kb.ingest([Document("Larry Page founded Google in 1998.", id="warm-up")])
    kb.retrieve(WARM_UP_QUESTION)
    load_search_library()  # a base this small never needs it


def warm_up(
    kb: KnowledgeBase, *, parse: bool = False, options: RetrieveOptions | None = None
) -> None:
    """Pay ``kb``'s first-call costs now: load its own embedding model and run one throwaway
    retrieval over its own facts (the first forward pass, the token encoding and the first
    search each cost more than a later call: measured, a first retrieval 5x a later one even
    with the model loaded). ``options`` are those the later calls will use (their
    ``token_model`` is the encoding built). With ``parse``, also load its extractor's spaCy
    pipeline; a server that only retrieves never needs it (seconds of loading and memory for
    nothing). Changes nothing in ``kb``. The MCP server and the retrievers of both adapters
    call it when they are built.

    Raises:
        MissingResourceError: a model is not installed (the message says how to install it).

    Example:
        >>> kb = KnowledgeBase()
        >>> _ = kb.ingest(["Larry Page founded Google."])
        >>> warm_up(kb)
    """
    query_embedding(kb.embedder)([WARM_UP_QUESTION])  # an empty base retrieves without embedding
    kb.retrieve_with(WARM_UP_QUESTION, options or RetrieveOptions())
    if parse:
        kb.extractor.extract([Document("Larry Page founded Google in 1998.", id="warm-up")])
