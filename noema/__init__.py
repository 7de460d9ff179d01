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
from noema.canonical import MergeRecord, normalize_name
from noema.compress import compress, compression_base
from noema.embed import Embedder, SentenceTransformerEmbedder
from noema.errors import (
    BundleError,
    GraphError,
    MissingResourceError,
    ModelMismatchError,
    NoemaError,
    NotationError,
)
from noema.extractor import BatchExtractor, Extractor
from noema.graph import (
    ENTITY_TYPES,
    Citation,
    Document,
    Entity,
    Event,
    Mention,
    Relation,
    SemanticGraph,
    normalize_predicate,
)
from noema.kb import IngestReport, KnowledgeBase
from noema.notation import (
    NotationEntity,
    NotationEvent,
    NotationRelation,
    ParsedNotation,
    decode,
    encode_graph,
    parse_notation,
)
from noema.options import DEFAULT_SIMILARITY_THRESHOLD, RetrieveOptions
from noema.parse import RelationPattern, SpacyExtractor
from noema.resources import count_tokens, get_encoding
from noema.retrieve import FactExplanation, FactMatch, RetrievalResult
from noema.roundtrip import RoundTripReport, check_round_trip

__all__ = [
    "BatchExtractor",
    "BundleError",
    "Citation",
    "DEFAULT_SIMILARITY_THRESHOLD",
    "Document",
    "ENTITY_TYPES",
    "Embedder",
    "Entity",
    "Event",
    "Extractor",
    "FactExplanation",
    "FactMatch",
    "GraphError",
    "IngestReport",
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
    "ParsedNotation",
    "Relation",
    "RelationPattern",
    "RetrievalResult",
    "RetrieveOptions",
    "RoundTripReport",
    "SemanticGraph",
    "SentenceTransformerEmbedder",
    "SpacyExtractor",
    "__version__",
    "check_round_trip",
    "compress",
    "compression_base",
    "count_tokens",
    "decode",
    "encode_graph",
    "get_encoding",
    "normalize_name",
    "normalize_predicate",
    "parse_notation",
]
