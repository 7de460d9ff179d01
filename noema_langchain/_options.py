"""The retrieve options as pydantic fields, shared by the LangChain retriever and compressor."""

from __future__ import annotations

import datetime

from pydantic import BaseModel, ConfigDict, model_validator

import noema


class RetrieveFields(BaseModel):
    """Every :class:`noema.RetrieveOptions` option as a field with the same default, checked
    when the object is built (a bad value raises ``ValueError`` naming the option). A field
    that is not an option or another field of the class raises too: a misspelled option
    (``max_token=50``) or a vector store's (``search_type="mmr"``) must not be ignored."""

    model_config = ConfigDict(extra="forbid")

    top_k: int = noema.RetrieveOptions.top_k
    hops: int = noema.RetrieveOptions.hops
    max_tokens: int = noema.RetrieveOptions.max_tokens
    format: noema.Format = noema.RetrieveOptions.format
    token_model: str = noema.RetrieveOptions.token_model
    seeds: noema.SeedStrategy = noema.RetrieveOptions.seeds
    min_similarity: float | None = noema.RetrieveOptions.min_similarity
    min_confidence: float | None = noema.RetrieveOptions.min_confidence
    as_of: str | datetime.date | None = noema.RetrieveOptions.as_of

    @model_validator(mode="after")
    def _check_options(self) -> RetrieveFields:
        self.retrieve_options()
        return self

    def retrieve_options(self) -> noema.RetrieveOptions:
        """The fields as one :class:`noema.RetrieveOptions`."""
        return noema.RetrieveOptions.of(self)
