"""The retrieve options as pydantic fields, shared by the LangChain retriever and compressor."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, model_validator

import noema


class RetrieveFields(BaseModel):
    """Every :class:`noema.RetrieveOptions` option as a field with the same default, checked
    when the object is built (a bad value raises ``ValueError`` naming the option)."""

    top_k: int = noema.RetrieveOptions.top_k
    hops: int = noema.RetrieveOptions.hops
    max_tokens: int = noema.RetrieveOptions.max_tokens
    format: Literal["notation", "natural_language", "sentences"] = noema.RetrieveOptions.format
    token_model: str = noema.RetrieveOptions.token_model
    seeds: Literal["graph", "vector"] = noema.RetrieveOptions.seeds
    min_similarity: float | None = noema.RetrieveOptions.min_similarity

    @model_validator(mode="after")
    def _check_options(self) -> RetrieveFields:
        self.retrieve_options()
        return self

    def retrieve_options(self) -> noema.RetrieveOptions:
        """The fields as one :class:`noema.RetrieveOptions`."""
        return noema.RetrieveOptions.of(self)
