"""Noema: the facts an LLM needs, as a small sub-graph in compact notation, within a token budget.

Example:
    >>> import noema
    >>> kb = noema.KnowledgeBase()
    >>> _ = kb.ingest(["Larry Page founded Google."])
    >>> kb.retrieve("Who founded Google?").text.splitlines()[-1]
    '#1 -found-> #2'

Importing ``noema`` is light: spaCy, torch, faiss and sentence-transformers load on first use.
"""

from noema._version import __version__
from noema.compress import TokenSaving, compress, compression_base
from noema.errors import (
    BundleError,
    GraphError,
    InputTypeError,
    MissingResourceError,
    ModelMismatchError,
    NoemaError,
    NotationError,
    OptionError,
    UnknownIdError,
)
from noema.ingest.extractor import BatchExtractor, Extractor
from noema.ingest.parse import RelationPattern, SpacyExtractor
from noema.kb import IngestReport, KnowledgeBase
from noema.model.graph import SemanticGraph
from noema.model.names import normalize_name
from noema.model.notation import (
    NotationEntity,
    NotationEvent,
    NotationRelation,
    ParsedNotation,
    decode,
    encode_graph,
    parse_notation,
)
from noema.model.records import (
    ENTITY_TYPES,
    Citation,
    Document,
    Entity,
    Event,
    Mention,
    MergeRecord,
    Relation,
    normalize_predicate,
)
from noema.model.roundtrip import RoundTripReport, check_round_trip
from noema.resources import (
    DEFAULT_EMBEDDING_MODEL,
    DEFAULT_SPACY_MODEL,
    count_tokens,
    get_encoding,
)
from noema.retrieval.filters import check_filters
from noema.retrieval.options import (
    DEFAULT_SIMILARITY_THRESHOLD,
    Format,
    RetrieveKwargs,
    RetrieveOptions,
    SeedStrategy,
)
from noema.retrieval.result import (
    BlockView,
    FactExplanation,
    FactMatch,
    FactView,
    RetrievalResult,
)
from noema.vectors.embed import Embedder, SentenceTransformerEmbedder
from noema.warmup import load_models, warm_up

__all__ = [
    "BatchExtractor",
    "BlockView",
    "BundleError",
    "Citation",
    "DEFAULT_EMBEDDING_MODEL",
    "DEFAULT_SIMILARITY_THRESHOLD",
    "DEFAULT_SPACY_MODEL",
    "Document",
    "ENTITY_TYPES",
    "Embedder",
    "Entity",
    "Event",
    "Extractor",
    "FactExplanation",
    "FactMatch",
    "FactView",
    "Format",
    "GraphError",
    "IngestReport",
    "InputTypeError",
    "KnowledgeBase",
    "Mention",
    "MergeRecord",
    "MissingResourceError",
    "ModelMismatchError",
    "NoemaError",
    "NotationEntity",
    "NotationError",
    "NotationEvent",
    "NotationRelation",
    "OptionError",
    "ParsedNotation",
    "Relation",
    "RelationPattern",
    "RetrievalResult",
    "RetrieveKwargs",
    "RetrieveOptions",
    "RoundTripReport",
    "SeedStrategy",
    "SemanticGraph",
    "SentenceTransformerEmbedder",
    "SpacyExtractor",
    "TokenSaving",
    "UnknownIdError",
    "__version__",
    "check_filters",
    "check_round_trip",
    "compress",
    "compression_base",
    "count_tokens",
    "decode",
    "encode_graph",
    "get_encoding",
    "load_models",
    "normalize_name",
    "normalize_predicate",
    "parse_notation",
    "warm_up",
]
