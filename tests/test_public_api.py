from __future__ import annotations

import ast
from pathlib import Path

import noema

ROOT = Path(__file__).parent.parent

# The public names, pinned: a change here is a change to the API users import.
EXPECTED = """
BatchExtractor BlockView BundleError Citation DEFAULT_EMBEDDING_MODEL DEFAULT_SIMILARITY_THRESHOLD
DEFAULT_SPACY_MODEL Document ENTITY_TYPES Embedder Entity Event Extractor FactExplanation
FactMatch FactView Format GraphError IngestReport InputTypeError
KnowledgeBase Mention MergeRecord MissingResourceError ModelMismatchError NoemaError
NotationEntity NotationError NotationEvent NotationRelation OptionError ParsedNotation Relation
RelationPattern RetrievalResult RetrieveKwargs RetrieveOptions RoundTripReport SeedStrategy SemanticGraph
SentenceTransformerEmbedder SpacyExtractor TokenSaving UnknownIdError __version__ check_filters check_round_trip compress
compression_base count_tokens decode encode_graph get_encoding load_models normalize_name
normalize_predicate parse_notation warm_up
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
    # 37 raise sites used a bare ValueError, TypeError or KeyError where the
    # error tree promises a NoemaError (an `except noema.NoemaError` missed them)
    bare = []
    for path in sorted((ROOT / "noema").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                name = getattr(node.exc.func, "id", None)
                if name in ("ValueError", "TypeError", "KeyError", "RuntimeError", "Exception"):
                    bare.append(f"{path.name}:{node.lineno} {name}")
    assert bare == []


# Noema is five wings over a bottom floor. Each wing may import only the wings listed: ingest,
# retrieval and storage never import each other, so a change to one cannot reach into another.
BOTTOM = {"errors", "_version", "resources"}
WINGS = {
    "model": set(),
    "vectors": {"model"},
    "ingest": {"model", "vectors"},
    "retrieval": {"model", "vectors"},
    "storage": {"model", "vectors"},
}
TOP = {
    "adapters",
    "kb",
    "writes",
    "repairs",
    "compress",
    "evaluate",
    "distributed",
    "export",
    "warmup",
    "serve",
    "cli",
}


# Each module may import only the modules listed (layers: dependencies point down, never up).
def _uses(words: str) -> set[str]:
    return set(words.split())


LAYERS = {
    "errors": _uses(""),
    "_version": _uses(""),
    "resources": _uses("errors"),
    "model.gcpause": _uses(""),
    "model.records": _uses("errors"),
    "model.graphjson": _uses("errors model.gcpause model.records"),
    "model.graph": _uses("errors model.gcpause model.graphjson model.records"),
    "model.spans": _uses("model.graph"),
    "model.names": _uses(""),
    "model.notation": _uses("errors model.graph model.records model.times"),
    "model.roundtrip": _uses("errors model.graph model.notation"),
    "model.facttext": _uses("model.graph model.notation"),
    "model.view": _uses("model.notation"),
    "model.times": _uses(""),
    "vectors.embed": _uses("resources"),
    "vectors.ivf": _uses("errors"),
    "vectors._approximate": _uses("vectors.embed"),
    "vectors._flat": _uses("errors vectors.embed"),
    "vectors.index": _uses("vectors._approximate vectors._flat vectors.embed errors vectors.ivf"),
    "vectors.sentences": _uses(
        "vectors.embed errors model.gcpause model.graph model.records vectors.index model.names model.spans"
    ),
    "ingest.sources": _uses("errors model.records"),
    "ingest.extractor": _uses("model.graph model.records"),
    "ingest.kinds": _uses(""),
    "ingest.evidence": _uses("ingest._tokens ingest.kinds"),
    "ingest.confidence": _uses(""),
    "ingest.entities": _uses(
        "ingest.dates ingest.evidence model.graph model.records model.names model.spans"
    ),
    "ingest._tokens": _uses("model.records"),
    "ingest.topic": _uses("ingest._tokens ingest.entities model.records model.names model.spans"),
    "ingest.rules": _uses("ingest._tokens ingest.entities ingest.kinds model.records"),
    "ingest.parse": _uses(
        "ingest.confidence ingest.entities ingest.extractor model.graph model.names model.records model.spans ingest.kinds "
        "resources ingest.rules ingest.times ingest.topic"
    ),
    "ingest.dates": _uses(""),
    "ingest.times": _uses("ingest._tokens ingest.dates ingest.entities ingest.rules model.times"),
    "ingest.canonical": _uses(
        "vectors.embed model.gcpause model.graph vectors.index model.names model.records"
    ),
    "retrieval.formats": _uses("model.graph model.notation model.spans"),
    "retrieval.steps": _uses("model.spans"),
    "retrieval.options": _uses("resources retrieval.formats retrieval.steps retrieval.times"),
    "retrieval.filters": _uses("model.graph model.records model.times"),
    "retrieval.times": _uses("model.times"),
    "retrieval.timeorder": _uses(
        "retrieval.steps model.graph model.records model.spans model.times retrieval.bridges retrieval.times"
    ),
    "retrieval.bridges": _uses("model.graph model.names"),
    "retrieval.walk": _uses(
        """retrieval.bridges vectors.embed retrieval.filters model.graph vectors.index
        model.spans vectors.sentences"""
    ),
    "retrieval.plan": _uses(
        """retrieval.steps retrieval.bridges model.facttext vectors.embed retrieval.filters model.graph vectors.index
        model.spans vectors.sentences retrieval.walk"""
    ),
    "retrieval.pack": _uses("model.spans model.graph resources retrieval.formats"),
    "retrieval.result": _uses(
        """retrieval.steps model.graph model.records model.notation model.view resources retrieval.formats retrieval.pack
        retrieval.options"""
    ),
    "retrieval.strategies": _uses(
        """retrieval.steps vectors.embed retrieval.filters retrieval.formats model.graph vectors.index
        retrieval.options retrieval.plan vectors.sentences"""
    ),
    "retrieval.retrieve": _uses(
        """retrieval.steps vectors.embed retrieval.filters retrieval.formats model.graph vectors.index
        retrieval.options retrieval.pack retrieval.plan retrieval.result vectors.sentences
        retrieval.strategies model.spans model.records retrieval.timeorder retrieval.times
        retrieval.walk"""
    ),
    "storage._column_checks": _uses("errors model.records storage.manifest"),
    "storage._save_checks": _uses("errors model.graph model.spans vectors.sentences"),
    "storage._column_records": _uses("errors model.graph model.records"),
    "storage.columns": _uses(
        """errors model.graph model.records storage._column_checks storage._column_records
        storage._save_checks vectors.sentences model.spans"""
    ),
    "storage.members": _uses(
        """storage.columns storage.container storage.manifest storage.names errors model.graph
        model.records vectors.index vectors.ivf vectors.sentences"""
    ),
    "storage.container": _uses("errors"),
    "storage.manifest": _uses("errors model.facttext storage.container"),
    "storage.names": _uses("errors model.graph"),
    "storage._reading": _uses(
        """storage.container storage.manifest storage.members errors model.graph model.records
        vectors.index vectors.sentences"""
    ),
    "storage.bundle": _uses(
        """storage._reading storage.container storage.manifest storage.members errors
        model.facttext model.graph model.records vectors.index vectors.sentences"""
    ),
    "storage.store": _uses(
        """storage.bundle storage.container errors vectors.embed model.facttext model.gcpause model.graph
        vectors.index model.records vectors.sentences"""
    ),
    "kb": _uses(
        """_version storage.bundle ingest.canonical vectors.embed errors ingest.extractor
        model.facttext retrieval.filters model.graph vectors.index model.notation
        retrieval.options retrieval.pack ingest.parse model.records resources
        retrieval.retrieve vectors.sentences ingest.sources storage.store model.view writes
        model.spans retrieval.formats retrieval.result repairs"""
    ),
    "repairs": _uses("errors ingest.canonical model.graph model.names model.records storage.store"),
    "writes": _uses(
        """errors ingest.canonical ingest.extractor ingest.sources model.graph model.records
        storage.store vectors.embed vectors.index vectors.sentences"""
    ),
    "distributed": _uses("errors ingest.extractor model.records kb ingest.sources resources"),
    "compress": _uses(
        """vectors.embed ingest.extractor model.records kb retrieval.options resources
        retrieval.retrieve ingest.sources"""
    ),
    "evaluate": _uses("vectors.embed model.records vectors.index kb retrieval.options resources"),
    "export": _uses("model.graph"),
    # imported by the adapters only: it imports pydantic, which they bring
    "adapters": _uses("compress kb model.records resources retrieval.options warmup"),
    "warmup": _uses("model.records kb resources retrieval.options"),
    # The two top packages: "serve" or "cli" in one of their modules' entries stands for the
    # package's other modules. The MCP server: what the tools return, the tools' table, the
    # server, stdio and HTTP.
    "serve.schemas": _uses("retrieval.steps"),
    "serve.names": _uses("model.graph"),
    "serve.tools": _uses(
        "serve ingest.sources kb repairs retrieval.filters retrieval.formats retrieval.options"
    ),
    "serve.server": _uses("serve kb"),
    "serve.transport": _uses(""),
    # The `noema` command: one module per group of commands over what they share (common,
    # progress); app builds the parser from their table.
    "cli.common": _uses("resources retrieval.options storage.container"),
    "cli.progress": _uses("kb model.records vectors.embed"),
    "cli.build": _uses(
        """cli distributed errors ingest.parse ingest.sources kb model.records resources
        retrieval.options storage.bundle"""
    ),
    "cli.query": _uses(
        "cli export kb retrieval.filters retrieval.formats retrieval.options retrieval.steps"
    ),
    "cli.bundles": _uses("cli kb model.notation model.roundtrip repairs storage.bundle"),
    "cli.evaluation": _uses("cli evaluate ingest.sources kb model.records"),
    "cli.serving": _uses("cli kb resources serve warmup"),
    "cli.app": _uses("_version cli"),
}


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def _modules() -> dict[str, Path]:
    """Every module of the package by its dotted name under ``noema.``, packages' own files aside."""
    found = {}
    for path in sorted((ROOT / "noema").rglob("*.py")):
        if path.stem in ("__init__", "__main__"):
            continue
        found[".".join(path.relative_to(ROOT / "noema").with_suffix("").parts)] = path
    return found


def _used(path: Path) -> set[str]:
    used = set()
    for module in _imports(path):
        if module.startswith("noema."):
            parts = module.split(".")[1:]
            used.add(".".join(parts[:2]) if parts[0] in WINGS else parts[0])
    return used


def test_dependencies_point_one_way() -> None:
    for name, path in _modules().items():
        used = _used(path)
        used.discard("errors")  # the bottom layer: every module raises its errors
        assert name in LAYERS, f"{name} is not in the layer table"
        assert used <= LAYERS[name], f"{name} imports {sorted(used - LAYERS[name])}"


def test_wings_import_only_the_wings_below_them() -> None:
    for name, path in _modules().items():
        wing = name.split(".")[0]
        if wing not in WINGS:
            assert wing in BOTTOM | TOP, f"{name} is neither in a wing nor a known top module"
            continue
        for used in _used(path):
            other = used.split(".")[0]
            assert other in BOTTOM or other == wing or other in WINGS[wing], (
                f"{name} imports {used}: the {wing} wing may not import the {other} wing"
            )


def test_adapters_use_only_the_public_api() -> None:
    # noema.adapters is the one module made for them (their shared pydantic fields)
    for package in ("noema_langchain", "noema_llamaindex"):
        for path in sorted((ROOT / package).glob("*.py")):
            private = {
                m
                for m in _imports(path)
                if m.startswith("noema.") and m != "noema.adapters" or m.startswith("noema._")
            }
            assert not private, f"{path} imports {private}"


def test_every_module_is_typed() -> None:
    assert (ROOT / "noema" / "py.typed").is_file()
