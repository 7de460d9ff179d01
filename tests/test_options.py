from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path
from typing import Any, get_args, get_type_hints

import pytest

import noema
import noema_langchain
import noema_llamaindex
from noema import KnowledgeBase, RetrieveOptions
from noema.cli import build_parser
from noema.retrieval import options as options_module
from noema.retrieval.options import option_help


def test_defaults_are_the_documented_ones() -> None:
    options = RetrieveOptions()
    assert (options.top_k, options.hops, options.max_tokens) == (5, 1, 200)
    assert (options.format, options.token_model) == ("notation", "cl100k_base")
    assert options.seeds == "graph" and options.min_similarity is None


def test_the_keyword_arguments_type_names_every_option_with_its_type() -> None:
    hints = get_type_hints(RetrieveOptions)
    assert get_type_hints(noema.RetrieveKwargs) == hints
    assert list(hints) == list(RetrieveOptions().as_kwargs())


def test_the_adapter_fields_type_checkers_see_are_the_options() -> None:
    # RetrieveFieldTypes exists for type checkers only (noema.adapters makes the fields from
    # RetrieveOptions at run time), so it is read from the source: an option missing there would
    # be one a type checker refuses on an adapter
    tree = ast.parse(Path(options_module.__file__).read_text(encoding="utf-8"))
    (declared,) = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.name == "RetrieveFieldTypes"
    ]
    fields = [
        (ast.unparse(line.target), ast.unparse(line.annotation), ast.unparse(line.value))
        for line in declared.body
        if isinstance(line, ast.AnnAssign) and line.value is not None
    ]
    assert fields == [
        (f.name, f.type, f"RetrieveOptions.{f.name}") for f in dataclasses.fields(RetrieveOptions)
    ]


@pytest.mark.parametrize(
    "callable_",
    [KnowledgeBase.retrieve, noema.compress, noema_llamaindex.NoemaRetriever.__init__],
    ids=["KnowledgeBase.retrieve", "compress", "llamaindex.NoemaRetriever"],
)
def test_every_entry_point_takes_the_options_by_name_only(callable_: object) -> None:
    # keyword-only: a caller cannot tell hops from top_k by position, and the options are
    # declared once, in RetrieveOptions, not again in each signature
    parameters = inspect.signature(callable_).parameters  # type: ignore[arg-type]
    (variadic,) = [p for p in parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD]
    assert str(variadic.annotation).endswith("RetrieveKwargs]")
    assert not set(parameters) & set(RetrieveOptions().as_kwargs())


def test_retrieve_refuses_an_unknown_option_and_options_by_position(
    company_kb: KnowledgeBase,
) -> None:
    with pytest.raises(noema.InputTypeError, match="unknown retrieve option 'max_token'"):
        company_kb.retrieve("Who founded Google?", max_token=50)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        company_kb.retrieve("Who founded Google?", 5)  # type: ignore[misc]
    by_name = company_kb.retrieve("Who founded Google?", max_tokens=50, format="natural_language")
    assert by_name.token_count <= 50 and by_name.format == "natural_language"


@pytest.mark.parametrize(
    "fields",
    [
        noema_langchain.NoemaRetriever.model_fields,
        noema_langchain.NoemaContextCompressor.model_fields,
        noema_llamaindex.NoemaNodePostprocessor.model_fields,
    ],
    ids=[
        "langchain.NoemaRetriever",
        "langchain.NoemaContextCompressor",
        "llamaindex.postprocessor",
    ],
)
def test_every_adapter_field_set_holds_every_option_with_its_default(fields: Any) -> None:
    # an option added to RetrieveOptions and forgotten here would be one an adapter user
    # cannot set
    for name, value in RetrieveOptions().as_kwargs().items():
        assert name in fields and fields[name].default == value, name


def test_the_query_command_has_a_flag_for_every_option_with_its_default_and_help() -> None:
    parser = build_parser()
    query = parser._subparsers._group_actions[0].choices["query"]  # type: ignore[union-attr]
    actions = {a.dest: a for a in query._actions}
    for name, value in RetrieveOptions().as_kwargs().items():
        action = actions[name]
        assert action.option_strings == [f"--{name.replace('_', '-')}"]
        assert action.default == value and action.help == option_help(name), name
    assert actions["format"].choices == get_args(noema.Format)
    assert parser.parse_args(["query", "kb", "q", "--min-confidence", "0.5"]).min_confidence == 0.5


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("format", "json"),
        ("seeds", "bm25"),
        ("top_k", 0),
        ("top_k", True),
        ("hops", -1),
        ("max_tokens", 2.5),
        ("token_model", ""),
        ("min_similarity", 2.0),
        ("min_similarity", float("nan")),
        ("min_confidence", -0.1),
        ("min_confidence", 1.5),
        ("min_confidence", True),
    ],
)
def test_bad_values_name_the_option(option: str, value: object) -> None:
    with pytest.raises(ValueError, match=option):
        RetrieveOptions(**{option: value})  # type: ignore[arg-type]


HUGE = "x" * 5_000_000


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"format": HUGE}, "format"),
        ({"seeds": HUGE}, "seeds"),
        ({"top_k": HUGE}, "top_k"),
        ({"min_similarity": HUGE}, "min_similarity"),
        ({"as_of": HUGE}, "as_of"),
        ({"as_of": [HUGE]}, "as_of"),
    ],
    ids=["format", "seeds", "top_k", "min_similarity", "as_of", "as_of-list"],
)
def test_an_error_quotes_a_long_bad_value_only_in_part(options: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named) as raised:
        RetrieveOptions(**options)
    message = str(raised.value)
    assert len(message) < 300 and "'xxxxxxxxxx" in message, message[:300]


def test_an_unknown_long_option_name_is_quoted_only_in_part() -> None:
    with pytest.raises(TypeError, match="unknown retrieve option") as raised:
        RetrieveOptions().updated(**{HUGE: 1})
    assert len(str(raised.value)) < 400


def test_a_bad_filter_is_quoted_only_in_part(company_kb: KnowledgeBase) -> None:
    for filters in ({"predicates": HUGE}, {HUGE: ["found"]}, {"entity_types": [HUGE]}):
        with pytest.raises(ValueError, match="filter") as raised:
            company_kb.retrieve("Who founded Google?", filters=filters)
        assert len(str(raised.value)) < 600


def test_updated_checks_names_and_values() -> None:
    assert RetrieveOptions().updated(hops=2, format="sentences").hops == 2
    with pytest.raises(TypeError, match="tpo_k"):
        RetrieveOptions().updated(tpo_k=1)
    with pytest.raises(ValueError, match="max_tokens"):
        RetrieveOptions().updated(max_tokens=0)


def test_retrieve_refuses_a_question_that_is_not_text(company_kb: KnowledgeBase) -> None:
    with pytest.raises(TypeError, match="string"):
        company_kb.retrieve({"q": 1})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty"):
        company_kb.retrieve("   ")


@pytest.mark.parametrize(
    "callable_",
    [KnowledgeBase.retrieve, noema.compress, noema_llamaindex.NoemaRetriever.__init__],
    ids=["KnowledgeBase.retrieve", "compress", "llamaindex.NoemaRetriever"],
)
def test_the_type_hints_of_every_entry_point_resolve_at_run_time(callable_: Any) -> None:
    # tool wrappers (LangChain's StructuredTool, LlamaIndex's FunctionTool, pydantic's
    # validate_call) read them; a name imported for type checkers only made them a NameError
    hints = get_type_hints(callable_, include_extras=True)
    variadic = [
        p for p in inspect.signature(callable_).parameters.values() if p.kind == p.VAR_KEYWORD
    ]
    assert get_args(hints[variadic[0].name]) == (noema.RetrieveKwargs,)


def test_compress_checks_option_names_even_beside_an_options_object() -> None:
    with pytest.raises(noema.InputTypeError, match="max_token"):
        noema.compress(
            ["Larry Page founded Google."], "Who?", options=RetrieveOptions(), max_token=5
        )  # type: ignore[call-arg]
