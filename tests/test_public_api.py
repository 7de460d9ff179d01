from __future__ import annotations

import ast
from pathlib import Path

import noema

ROOT = Path(__file__).parent.parent

# The public names, pinned: a change here is a change to the API users import.
EXPECTED = [
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


def test_public_names_are_pinned_and_sorted() -> None:
    assert noema.__all__ == sorted(EXPECTED)
    for name in noema.__all__:
        assert hasattr(noema, name), name


def test_error_tree() -> None:
    assert issubclass(noema.NotationError, ValueError) and issubclass(
        noema.NotationError, noema.NoemaError
    )
    assert issubclass(noema.GraphError, ValueError)
    assert issubclass(noema.ModelMismatchError, noema.BundleError)
    assert issubclass(noema.BundleError, noema.NoemaError)


# Each module may import only the modules listed (layers: dependencies point down, never up).
LAYERS = {
    "errors": set(),
    "_version": set(),
    "options": set(),
    "records": {"errors"},
    "graph": {"errors", "records"},
    "names": set(),
    "resources": {"errors"},
    "notation": {"graph", "errors"},
    "roundtrip": {"graph", "errors", "notation"},
    "sources": {"graph", "errors"},
    "embed": {"resources"},
    "extractor": {"graph"},
    "entities": {"graph", "names"},
    "rules": {"entities", "graph"},
    "parse": {"entities", "extractor", "graph", "resources", "rules"},
    "index": {"embed", "errors"},
    "canonical": {"graph", "embed", "index", "names"},
    "view": {"notation"},
    "filters": {"graph"},
    "sentences": {"embed", "errors", "graph", "index", "names"},
    "plan": {"embed", "filters", "graph", "index", "names", "sentences"},
    "pack": {"graph", "notation", "options", "resources", "sentences"},
    "retrieve": {
        "embed",
        "filters",
        "graph",
        "index",
        "notation",
        "options",
        "pack",
        "plan",
        "resources",
        "sentences",
        "view",
    },
    "facttext": {"graph", "notation"},
    "bundle": {"graph", "index", "errors", "canonical", "facttext", "sentences"},
    "snapshot": {"embed", "facttext", "graph", "index", "sentences"},
    "kb": {
        "_version",
        "bundle",
        "canonical",
        "embed",
        "errors",
        "extractor",
        "facttext",
        "filters",
        "graph",
        "index",
        "notation",
        "options",
        "pack",
        "parse",
        "resources",
        "retrieve",
        "sentences",
        "snapshot",
        "sources",
        "view",
    },
    "distributed": {"errors", "graph", "kb", "sources"},
    "compress": {"embed", "extractor", "graph", "kb", "options", "resources", "retrieve"},
    "evaluate": {"embed", "graph", "index", "kb", "options", "resources"},
    "export": {"graph"},
    "cli": {
        "_version",
        "distributed",
        "errors",
        "evaluate",
        "export",
        "graph",
        "kb",
        "notation",
        "options",
        "roundtrip",
        "sources",
    },
}


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_dependencies_point_one_way() -> None:
    for path in sorted((ROOT / "noema").glob("*.py")):
        if path.stem in ("__init__", "__main__"):
            continue
        used = {m.split(".")[1] for m in _imports(path) if m.startswith("noema.")}
        assert path.stem in LAYERS, f"{path.name} is not in the layer table"
        assert used <= LAYERS[path.stem], f"{path.name} imports {sorted(used - LAYERS[path.stem])}"


def test_adapters_use_only_the_public_api() -> None:
    for package in ("noema_langchain", "noema_llamaindex"):
        for path in sorted((ROOT / package).glob("*.py")):
            private = {
                m for m in _imports(path) if m.startswith("noema.") or m.startswith("noema._")
            }
            assert not private, f"{path} imports {private}"


def test_every_module_is_typed() -> None:
    assert (ROOT / "noema" / "py.typed").is_file()
