from __future__ import annotations

import ast
from pathlib import Path

import noema

ROOT = Path(__file__).parent.parent

# The public names, pinned: a change here is a change to the API users import.
EXPECTED = """
BatchExtractor BundleError Citation DEFAULT_EMBEDDING_MODEL DEFAULT_SIMILARITY_THRESHOLD
DEFAULT_SPACY_MODEL Document ENTITY_TYPES Embedder Entity Event Extractor FactExplanation
FactMatch Format GraphError IngestReport InputTypeError
KnowledgeBase Mention MergeRecord MissingResourceError ModelMismatchError NoemaError
NotationEntity NotationError NotationEvent NotationRelation OptionError ParsedNotation Relation
RelationPattern RetrievalResult RetrieveOptions RoundTripReport SeedStrategy SemanticGraph
SentenceTransformerEmbedder SpacyExtractor UnknownIdError __version__ check_filters check_round_trip compress
compression_base count_tokens decode encode_graph get_encoding load_models normalize_name
normalize_predicate parse_notation
""".split()  # noqa: SIM905  (a word list reads as the pin it is)


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
    for error, builtin in (
        (noema.OptionError, ValueError),
        (noema.InputTypeError, TypeError),
        (noema.UnknownIdError, KeyError),
    ):
        assert issubclass(error, noema.NoemaError) and issubclass(error, builtin)


def test_noema_raises_only_its_own_errors() -> None:
    # issue 30 item 7: 37 raise sites used a bare ValueError, TypeError or KeyError where the
    # error tree promises a NoemaError (an `except noema.NoemaError` missed them)
    bare = []
    for path in sorted((ROOT / "noema").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                name = getattr(node.exc.func, "id", None)
                if name in ("ValueError", "TypeError", "KeyError", "RuntimeError", "Exception"):
                    bare.append(f"{path.name}:{node.lineno} {name}")
    assert bare == []


# Each module may import only the modules listed (layers: dependencies point down, never up).
def _uses(words: str) -> set[str]:
    return set(words.split())


LAYERS = {
    "errors": _uses(""),
    "_version": _uses(""),
    "options": _uses(""),
    "records": _uses("errors"),
    "gcpause": _uses(""),
    "graph": _uses("errors gcpause records"),
    "names": _uses(""),
    "kinds": _uses(""),
    "resources": _uses("errors"),
    "notation": _uses("errors graph"),
    "roundtrip": _uses("errors graph notation"),
    "sources": _uses("errors graph records"),
    "embed": _uses("resources"),
    "extractor": _uses("graph"),
    "entities": _uses("graph names"),
    "rules": _uses("entities graph"),
    "parse": _uses("entities extractor graph kinds resources rules"),
    "ivf": _uses("errors"),
    "index": _uses("embed errors ivf"),
    "canonical": _uses("embed gcpause graph index names"),
    "view": _uses("notation"),
    "filters": _uses("graph"),
    "sentences": _uses("embed errors gcpause graph index names"),
    "bridges": _uses("graph names"),
    "plan": _uses("bridges embed filters graph index names sentences"),
    "pack": _uses("graph notation options resources sentences"),
    "strategies": _uses("embed filters graph index options plan sentences"),
    "retrieve": _uses(
        "embed filters graph index notation options pack plan resources sentences strategies view"
    ),
    "facttext": _uses("graph notation"),
    "columns": _uses("errors graph records sentences"),
    "bundle": _uses("canonical columns errors facttext graph index ivf records sentences"),
    "store": _uses("bundle canonical embed facttext gcpause graph index sentences"),
    "kb": _uses(
        """_version bundle canonical embed errors extractor facttext filters graph index notation
        options pack parse records resources retrieve sentences sources store view"""
    ),
    "distributed": _uses("errors extractor graph kb sources"),
    "compress": _uses("embed extractor graph kb options resources retrieve sources"),
    "evaluate": _uses("embed graph index kb options resources"),
    "export": _uses("graph"),
    "warmup": _uses("graph kb resources"),
    "serve": _uses("errors filters kb names options retrieve sources"),
    "cli": _uses(
        "_version bundle distributed errors evaluate export filters graph kb notation options roundtrip serve sources warmup"
    ),
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
        used.discard("errors")  # the bottom layer: every module raises its errors
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
