"""What the LangChain and LlamaIndex adapters share: the retrieve options as pydantic fields, and
the fields and model loading of a compressor.

Only the adapters import this module: it imports pydantic, which langchain-core and
llama-index-core bring; ``import noema`` does not import it.

Example:
    >>> from noema.adapters import RetrieveFields
    >>> RetrieveFields(hops=2).retrieve_options().hops
    2
    >>> RetrieveFields.model_fields["max_tokens"].description
    'the budget of the returned text, in tokens (cl100k_base by default)'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any, get_type_hints

from pydantic import BaseModel, Field, create_model, model_validator

from noema.compress import compression_base
from noema.kb import KnowledgeBase
from noema.model.records import Document
from noema.resources import DEFAULT_EMBEDDING_MODEL, DEFAULT_SPACY_MODEL
from noema.retrieval.options import DEFAULT_SIMILARITY_THRESHOLD, RetrieveOptions
from noema.warmup import load_models

__all__ = ["CompressorFields", "RetrieveFields"]


class _CheckedOptions(BaseModel):
    """What every set of option fields does besides holding them: check them when the object is
    built (a bad value raises naming the option, not at the first retrieval) and hand them on
    as one :class:`~noema.RetrieveOptions`."""

    @model_validator(mode="after")
    def _check_options(self) -> _CheckedOptions:
        self.retrieve_options()
        return self

    def retrieve_options(self) -> RetrieveOptions:
        """The fields as one :class:`noema.RetrieveOptions`."""
        return RetrieveOptions.of(self)


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
