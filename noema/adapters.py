"""What the LangChain and LlamaIndex adapters share: the retrieve options as pydantic fields, the
fields and model loading of a compressor, and Noema's errors for the options they refuse.

Only the adapters import this module: it imports pydantic, which langchain-core and
llama-index-core bring; ``import noema`` does not import it.

Example:
    >>> from noema.adapters import RetrieveFields
    >>> RetrieveFields(hops=2).retrieve_options().hops
    2
    >>> RetrieveFields.model_fields["max_tokens"].description
    'the budget of the returned text, in tokens (cl100k_base by default)'
    >>> RetrieveFields(hops="two")
    Traceback (most recent call last):
    noema.errors.OptionError: hops should be a valid integer, unable to parse string as an integer, got 'two'
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any, get_type_hints

from pydantic import BaseModel, Field, ValidationError, create_model, model_validator

from noema.compress import compression_base
from noema.errors import NoemaError, OptionError, quote_value
from noema.kb import KnowledgeBase
from noema.model.records import Document
from noema.resources import DEFAULT_EMBEDDING_MODEL, DEFAULT_SPACY_MODEL
from noema.retrieval.options import DEFAULT_SIMILARITY_THRESHOLD, RetrieveOptions
from noema.warmup import load_models

# quote_value: for the adapters' own errors (they import only noema's public API and this module)
__all__ = ["CompressorFields", "RetrieveFields", "quote_value", "unknown_option_message"]


class _CheckedOptions(BaseModel):
    """What every set of option fields does besides holding them: check them when the object is
    built (a bad value raises naming the option, not at the first retrieval) and hand them on
    as one :class:`~noema.RetrieveOptions`."""

    def __init__(self, /, **data: Any) -> None:
        # LangChain's load() and LlamaIndex's from_dict() come here too
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _option_error(type(self), exc) from None

    @model_validator(mode="after")
    def _check_options(self) -> _CheckedOptions:
        self.retrieve_options()
        return self

    def retrieve_options(self) -> RetrieveOptions:
        """The fields as one :class:`noema.RetrieveOptions`."""
        return RetrieveOptions.of(self)


def unknown_option_message(owner: str, unknown: Iterable[str], valid: Iterable[str]) -> str:
    """What to say of options ``owner`` does not take: the first, the closest name it does take,
    and all of them.

    Example:
        >>> unknown_option_message("Retriever", ["max_token"], ["hops", "max_tokens"])
        "Retriever takes no option 'max_token' (did you mean 'max_tokens'?); it takes hops, max_tokens"
    """
    name = sorted(map(str, unknown))[0]
    names = sorted(valid)
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"{owner} takes no option {quote_value(name)}{hint}; it takes {', '.join(names)}"


def _option_error(model: type[BaseModel], exc: ValidationError) -> NoemaError:
    """Noema's error for what pydantic refused: the error a check of Noema raised, else an
    :class:`~noema.OptionError` (a ``ValueError``, as pydantic's is) naming each field."""
    errors = exc.errors()
    unknown = [str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden"]
    parts = [unknown_option_message(model.__name__, unknown, model.model_fields)] if unknown else []
    by_field: dict[str, list[Any]] = {}
    for error in errors:
        if error["type"] != "extra_forbidden":
            by_field.setdefault(str(error["loc"][0]) if error["loc"] else "", []).append(error)
    for name, found in by_field.items():
        raised = found[0].get("ctx", {}).get("error")
        if isinstance(raised, NoemaError):  # a check of Noema's, named in its own words
            if len(errors) == 1:
                return raised
            parts.append(str(raised))
            continue
        # a union (as_of: str | date) reports each of its types: "a valid string or a valid date"
        wanted = " or ".join(
            dict.fromkeys(e["msg"].removeprefix("Input should be ") for e in found)
        )
        parts.append(f"{name} should be {wanted}, got {quote_value(found[0]['input'])}")
    return OptionError("; ".join(parts))


def _option_fields() -> dict[str, Any]:
    """Each retrieve option as ``create_model`` takes a field: its type, default and help."""
    types = get_type_hints(RetrieveOptions)
    return {
        option.name: (
            types[option.name],
            Field(default=option.default, description=option.metadata["help"]),
        )
        for option in fields(RetrieveOptions)
    }


if TYPE_CHECKING:
    from noema.retrieval.options import RetrieveFieldTypes

    class RetrieveFields(RetrieveFieldTypes, _CheckedOptions):
        """Every :class:`noema.RetrieveOptions` option as a pydantic field."""

else:
    # made from the dataclass, so a new option is a field of every adapter without an edit here;
    # type checkers read RetrieveFieldTypes, which a test holds to the same fields
    RetrieveFields = create_model(
        "RetrieveFields",
        __base__=_CheckedOptions,
        __module__=__name__,
        __doc__="Every :class:`noema.RetrieveOptions` option as a pydantic field, with its "
        "default and help, checked when the object is built.",
        **_option_fields(),
    )


class CompressorFields(BaseModel):
    """The settings of a compressor's knowledge base, whose models load when it is built."""

    similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD
    spacy_model: str = DEFAULT_SPACY_MODEL
    embedding_model: str = DEFAULT_EMBEDDING_MODEL

    def model_post_init(self, context: Any, /) -> None:
        # the models load here, once per process, so the first compression costs what parsing
        # and embedding its chunks cost (9.2 s -> 0.3 s on 6 short chunks, 2 cores)
        super().model_post_init(context)
        load_models(self.spacy_model, self.embedding_model)

    def _knowledge_base(self, chunks: Sequence[Document]) -> KnowledgeBase:
        """The knowledge base of ``chunks`` with these settings (kept for the same chunks)."""
        return compression_base(
            chunks,
            similarity_threshold=self.similarity_threshold,
            spacy_model=self.spacy_model,
            embedding_model=self.embedding_model,
        )
