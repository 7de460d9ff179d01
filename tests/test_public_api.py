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
# Inside a wing and above the wings, modules import one another as long as no import leads
# back to where it started, and the library never imports the command or the server: rules a
# new module follows without an entry here.
BOTTOM = {"errors": set(), "_version": set(), "resources": {"errors"}}
WINGS = {
    "model": set(),
    "vectors": {"model"},
    "ingest": {"model", "vectors"},
    "retrieval": {"model", "vectors"},
    "storage": {"model", "vectors"},
}
TOP = {
    "_loading",
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


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def _modules() -> dict[str, Path]:
    """Every module of the package by its dotted name under ``noema.``; a package by its own name."""
    found = {}
    for path in sorted((ROOT / "noema").rglob("*.py")):
        parts = path.relative_to(ROOT / "noema").with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and parts[-1] != "__main__":
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _targets(path: Path) -> set[str]:
    """The Noema modules a file imports: ``from noema.x import name`` is ``x``, or ``x.name``
    when that is a module (``from noema.ingest import _tokens``); the public face aside."""
    imported = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported += [f"{node.module}.{a.name}" for a in node.names] or [node.module]
        elif isinstance(node, ast.Import):
            imported += [a.name for a in node.names]
    targets = set()
    for module in imported:
        if not module.startswith("noema."):
            continue
        name = module.removeprefix("noema.")
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name:
            targets.add(name)
    return targets


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` as the modules along it, or ``[]``: a depth-first walk."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for after in sorted(graph[node]):
            if state.get(after) == 1:
                return [*path[path.index(after) :], after]
            if after not in state and (found := visit(after)):
                return found
        state[node] = 2
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_dependencies_point_one_way() -> None:
    graph = {name: _targets(path) - {name} for name, path in MODULES.items()}
    cycle = _cycle(graph)
    assert cycle == [], "an import cycle: " + " -> ".join(cycle)


def test_the_bottom_floor_imports_nothing_above_it() -> None:
    for name, allowed in BOTTOM.items():
        assert _targets(MODULES[name]) <= allowed, f"{name} imports {_targets(MODULES[name])}"


def test_wings_import_only_the_wings_below_them() -> None:
    for name, path in MODULES.items():
        wing = name.split(".")[0]
        if wing not in WINGS:
            assert wing in BOTTOM.keys() | TOP, (
                f"{name} is neither in a wing nor a known top module"
            )
            continue
        for used in _targets(path):
            other = used.split(".")[0]
            assert other in BOTTOM or other == wing or other in WINGS[wing], (
                f"{name} imports {used}: the {wing} wing may not import the {other} wing"
            )


def test_a_private_module_is_imported_only_inside_its_package() -> None:
    for name, path in MODULES.items():
        for used in _targets(path):
            package, _, module = used.rpartition(".")
            if package and module.startswith("_"):
                assert name.startswith(package + "."), (
                    f"{name} imports {used}, private to {package}"
                )


def test_the_library_never_imports_its_front_ends() -> None:
    # the command and the MCP server are made of the library, never the other way round
    front_ends = {"cli", "serve"}
    for name, path in MODULES.items():
        if name.split(".")[0] in front_ends:
            continue
        used = {t.split(".")[0] for t in _targets(path)} & front_ends
        assert not used, f"{name} imports {sorted(used)}"


def test_only_the_adapters_import_the_adapters_module() -> None:
    # it imports pydantic, which only the adapters' extras bring
    users = sorted(name for name, path in MODULES.items() if "adapters" in _targets(path))
    assert users == []


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
