"""What the tools return: the structured content's schemas, which MCP clients see as each tool's
output schema, and their making from a retrieval result."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from noema.retrieval.steps import reason_choices

if TYPE_CHECKING:
    from noema import Citation, RetrievalResult

__all__ = [
    "CitationOut",
    "DocumentOut",
    "DocumentsOut",
    "EntityFactOut",
    "EntityOut",
    "ExplainOut",
    "ExplanationOut",
    "FactOut",
    "HistoryOut",
    "IngestOut",
    "RetrieveOut",
    "citations_out",
    "retrieved",
]


class CitationOut(BaseModel):
    document_id: str
    start: int = Field(description="character offset of the span in the document")
    end: int
    sentence: str = Field(description="the text of the span: the sentence the fact came from")


class FactOut(BaseModel):
    fact_id: str
    citations: list[CitationOut]


class RetrieveOut(BaseModel):
    text: str = Field(description="the context, as given in the text content")
    token_count: int
    truncated: bool = Field(description="the budget left out facts the retrieval had reached")
    format: str
    facts: list[FactOut] = Field(description="every fact in the text, in priority order")


class ExplanationOut(BaseModel):
    fact_id: str
    reason: str = Field(description=reason_choices())
    included: bool = Field(description="false when the budget cut it")
    similarity: float | None
    step: int = Field(description="1 for the question's own search, 2-3 for bridge searches")
    seed_id: str | None
    path: list[str]
    time: str | None = Field(
        default=None, description="how its time placed it: the question's time it matches"
    )


class ExplainOut(RetrieveOut):
    explanation: list[ExplanationOut]


class EntityFactOut(BaseModel):
    fact_id: str
    sentence: str = Field(description="the fact decoded to a sentence")
    notation: str
    citations: list[CitationOut]


class HistoryOut(BaseModel):
    rule: str = Field(
        description="why: exact or embedding (the same or a similar name), type (one name "
        "typed two ways), user (merged on request) or retype (its type changed on request)"
    )
    merged_name: str = Field(description="the name that joined it (for retype, its own name)")
    type: str = Field(
        description="for type, user and retype: the type before; else the type both had"
    )
    similarity: float | None
    document_ids: list[str]
    description: str = Field(description="the record in one line")


class EntityOut(BaseModel):
    entity_id: str
    name: str
    type: str
    aliases: list[str]
    facts: list[EntityFactOut]
    others: list[str] = Field(description="ids of other entities with this name, if any")
    history: list[HistoryOut] = Field(
        description="the merges that made it and any change of its type, oldest first"
    )


class DocumentOut(BaseModel):
    document_id: str
    uri: str
    title: str | None
    characters: int
    metadata: dict[str, Any]


class DocumentsOut(BaseModel):
    documents: list[DocumentOut]


class IngestOut(BaseModel):
    documents: int = Field(
        description="documents added (a document stored with the same text is skipped)"
    )
    new_relations: int
    new_events: int
    saved_to: str | None


def citations_out(
    citations: Iterable[Citation], shown: Callable[[str], str] = str
) -> list[CitationOut]:
    """The citations, each document named as ``shown`` names it
    (:class:`noema.serve.names.DocumentNames`)."""
    return [
        CitationOut(document_id=shown(c.document_id), start=c.start, end=c.end, sentence=c.text)
        for c in citations
    ]


def retrieved(result: RetrievalResult, shown: Callable[[str], str] = str) -> dict[str, Any]:
    """The fields the retrieve and explain tools share (documents named as ``shown`` names
    them)."""
    return {
        "text": result.text,
        "token_count": result.token_count,
        "truncated": result.truncated,
        "format": result.format,
        "facts": [
            FactOut(
                fact_id=fact_id,
                citations=citations_out(result.citations.get(fact_id, ()), shown),
            )
            for fact_id in result.fact_ids
        ],
    }
