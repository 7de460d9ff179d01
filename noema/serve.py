"""``noema serve``: a knowledge base as a Model Context Protocol server, for agents.

Built on the official MCP Python SDK (``pip install 'noema[mcp]'``). The tools:

- ``retrieve``: the context for a question within a token budget, with the citation of every
  fact in the text (document id, span, sentence) as structured content;
- ``explain``: the same retrieval with why each fact is there (or was cut);
- ``entity``: an entity by name or alias, with its aliases, facts and their citations;
- ``documents``: what the knowledge base holds; each document's text is also a resource,
  ``noema://document/{id}`` (the id percent-encoded);
- ``ingest`` (only with ``allow_ingest``): add texts, or files under ``root``, and save the
  bundle atomically after each call.

Tool calls run in worker threads: retrievals read the knowledge base's lock-free snapshot, so
many are served at once, and an ingest publishes a new snapshot without blocking them. A bad
option comes back as a tool error naming it, never as a crash of the server.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, unquote

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from noema.errors import NoemaError, OptionError
from noema.ingest.sources import read_documents
from noema.kb import KnowledgeBase
from noema.model.names import normalize_name
from noema.retrieval.filters import check_filters
from noema.retrieval.options import Format, RetrieveOptions, SeedStrategy
from noema.retrieval.retrieve import RetrievalResult

__all__ = ["build_server", "check_http_binding", "run_http", "run_stdio"]

DEFAULT_PORT = 8765
DOCUMENT_URI = "noema://document/{document_id}"


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
    reason: str = Field(description="seed, sentence, hop, bridge or expansion")
    included: bool = Field(description="false when the budget cut it")
    similarity: float | None
    step: int = Field(description="1 for the question's own search, 2-3 for bridge searches")
    seed_id: str | None
    path: list[str]


class ExplainOut(RetrieveOut):
    explanation: list[ExplanationOut]


class EntityFactOut(BaseModel):
    fact_id: str
    sentence: str = Field(description="the fact decoded to a sentence")
    notation: str
    citations: list[CitationOut]


class EntityOut(BaseModel):
    entity_id: str
    name: str
    type: str
    aliases: list[str]
    facts: list[EntityFactOut]
    others: list[str] = Field(description="ids of other entities with this name, if any")


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


def _facts(result: RetrievalResult) -> list[FactOut]:
    return [
        FactOut(
            fact_id=fact_id,
            citations=[
                CitationOut(document_id=c.document_id, start=c.start, end=c.end, sentence=c.text)
                for c in result.citations.get(fact_id, ())
            ],
        )
        for fact_id in result.fact_ids
    ]


def _retrieved(result: RetrievalResult) -> dict[str, Any]:
    """The fields the retrieve and explain tools share."""
    return {
        "text": result.text,
        "token_count": result.token_count,
        "truncated": result.truncated,
        "format": result.format,
        "facts": _facts(result),
    }


def build_server(
    kb: KnowledgeBase,
    *,
    bundle: str | os.PathLike[str] | None = None,
    allow_ingest: bool = False,
    root: str | os.PathLike[str] | None = None,
) -> MCPServer:
    """An MCP server (the SDK's ``MCPServer``) over ``kb``. With ``allow_ingest`` it has an
    ``ingest`` tool that saves to ``bundle`` after each call; file paths must lie under
    ``root`` (without a root, only texts are taken)."""
    server: MCPServer = MCPServer(
        name="noema",
        instructions=(
            "Facts from a Noema knowledge base. Call retrieve with a question to get the context "
            "to answer it from, with a citation for every fact; explain says why each fact is "
            "there; entity looks one thing up by name; documents lists what the base holds."
        ),
        log_level="WARNING",
    )

    async def in_thread(work: Callable[[], Any]) -> Any:
        try:
            return await anyio.to_thread.run_sync(work)
        except (NoemaError, ValueError, TypeError, KeyError) as exc:
            raise ToolError(str(exc).strip("'\"")) from None

    async def result_of(question: str, options: dict[str, Any], explain: bool) -> RetrievalResult:
        """Options checked and the retrieval run in one worker thread; errors as tool errors."""
        filters = options.pop("filters")

        def work() -> RetrievalResult:
            check_filters(filters)
            checked = RetrieveOptions.of(options)
            return kb.retrieve_with(question, checked, filters=filters, explain=explain)

        return await in_thread(work)  # type: ignore[no-any-return]

    @server.tool()
    async def retrieve(
        question: Annotated[str, Field(description="the question to find facts for")],
        max_tokens: Annotated[
            int, Field(description="the budget of the context, in cl100k_base tokens")
        ] = 200,
        format: Annotated[
            Format,
            Field(
                description="sentences: the facts' source sentences by document (best recall); "
                "notation: compact lines #n Name :TYPE and #1 -predicate-> #2; "
                "natural_language: each fact as a short sentence"
            ),
        ] = "sentences",
        hops: Annotated[
            int, Field(description="how far the graph walk goes from the seeds")
        ] = RetrieveOptions.hops,
        top_k: Annotated[
            int, Field(description="vector-search hits used as seeds")
        ] = RetrieveOptions.top_k,
        seeds: Annotated[
            SeedStrategy, Field(description="graph (default) or vector")
        ] = RetrieveOptions.seeds,
        filters: Annotated[
            dict[str, Any] | None,
            Field(
                description="only facts matching: entity_types (list), predicates (list), "
                "document_ids (list), metadata (key -> value of the documents)"
            ),
        ] = None,
    ) -> Annotated[CallToolResult, RetrieveOut]:
        """The facts relevant to a question, within a token budget, as context to answer it
        from. The text content is the context; the structured content adds the token count and
        the citation (document, span, sentence) of every fact in it."""
        arguments: dict[str, Any] = {"max_tokens": max_tokens, "format": format, "hops": hops}
        arguments.update(top_k=top_k, seeds=seeds, filters=filters)
        result = await result_of(question, arguments, False)
        out = RetrieveOut(**_retrieved(result))
        return CallToolResult(
            content=[TextContent(type="text", text=result.text or "(no facts found)")],
            structured_content=out.model_dump(mode="json"),
        )

    @server.tool()
    async def explain(
        question: Annotated[str, Field(description="the question to find facts for")],
        max_tokens: int = 200,
        format: Format = "sentences",
        hops: int = RetrieveOptions.hops,
        top_k: int = RetrieveOptions.top_k,
        seeds: SeedStrategy = RetrieveOptions.seeds,
        filters: dict[str, Any] | None = None,
    ) -> ExplainOut:
        """The retrieve tool's result with why each fact is there: a seed, a fact of a sentence
        close to the question, a hop to a document about an entity, a bridge search, or the
        graph walk; facts the budget cut are listed with included=false."""
        arguments: dict[str, Any] = {"max_tokens": max_tokens, "format": format, "hops": hops}
        arguments.update(top_k=top_k, seeds=seeds, filters=filters)
        result = await result_of(question, arguments, True)
        return ExplainOut(
            **_retrieved(result),
            explanation=[
                ExplanationOut.model_validate(asdict(e)) for e in result.explanation or ()
            ],
        )

    @server.tool()
    async def entity(
        name: Annotated[str, Field(description="a name or alias, e.g. 'Google'")],
    ) -> EntityOut:
        """An entity of the knowledge base by name or alias: its type, aliases, and every fact
        it takes part in, each with its citations."""
        return await in_thread(lambda: _entity(kb, name))  # type: ignore[no-any-return]

    @server.tool()
    async def documents() -> DocumentsOut:
        """The documents the knowledge base holds: id, title, size and metadata. Each
        document's text is the resource at its uri."""
        graph = kb.graph
        return DocumentsOut(
            documents=[
                DocumentOut(
                    document_id=d.id,
                    uri=DOCUMENT_URI.format(document_id=quote(d.id, safe="")),
                    title=d.metadata.get("title")
                    if isinstance(d.metadata.get("title"), str)
                    else None,
                    characters=len(d.text),
                    metadata=dict(d.metadata),
                )
                for d in graph.documents.values()
            ]
        )

    @server.resource(DOCUMENT_URI, mime_type="text/plain")
    def document(document_id: str) -> str:
        """A document's text."""
        doc = kb.graph.documents.get(unquote(document_id))
        if doc is None:
            raise ResourceNotFoundError(f"no document {unquote(document_id)!r}")
        return doc.text

    if allow_ingest:
        lock = threading.Lock()
        base = Path(root).resolve() if root is not None else None

        @server.tool()
        async def ingest(
            texts: Annotated[
                list[str] | None, Field(description="texts to add, one document each")
            ] = None,
            paths: Annotated[
                list[str] | None,
                Field(description="files or folders under the server's root (.txt, .md, .jsonl)"),
            ] = None,
        ) -> IngestOut:
            """Add documents to the knowledge base; it is saved after each call. Retrievals
            keep being served while this runs and see the new facts once it returns."""

            def work() -> IngestOut:
                sources: list[Any] = list(texts or [])
                for raw in paths or []:
                    if base is None:
                        raise OptionError(
                            "this server takes no paths (it was started without --root)"
                        )
                    path = (base / raw).resolve()
                    if not path.is_relative_to(base):
                        raise OptionError(f"{raw!r} is outside the root folder {str(base)!r}")
                    sources.extend(read_documents([path], root=base))
                if not sources:
                    raise OptionError("give texts or paths to ingest")
                with lock:  # one save at a time, after its own ingest
                    report = kb.ingest(sources)
                    if bundle is not None:
                        kb.save(bundle)
                return IngestOut(
                    documents=report.documents,
                    new_relations=report.new_relations,
                    new_events=report.new_events,
                    saved_to=None if bundle is None else os.fspath(bundle),
                )

            return await in_thread(work)  # type: ignore[no-any-return]

    return server


def _entity(kb: KnowledgeBase, name: str) -> EntityOut:
    graph = kb.graph
    key = normalize_name(name)
    if not key:
        raise OptionError("name is empty")
    matches = [
        e
        for e in graph.entities.values()
        if key in {normalize_name(n) for n in (e.name, *e.aliases)}
    ]
    if not matches:
        raise OptionError(f"no entity named {name!r} in this knowledge base")
    matches.sort(key=lambda e: (-len(graph.facts_of(e.id)), e.id))
    best = matches[0]
    facts = []
    for fact_id in graph.facts_of(best.id):
        facts.append(
            EntityFactOut(
                fact_id=fact_id,
                sentence=kb.render_fact(fact_id, "natural_language"),
                notation=kb.render_fact(fact_id, "notation"),
                citations=[
                    CitationOut(
                        document_id=c.document_id, start=c.start, end=c.end, sentence=c.text
                    )
                    for c in graph.citations(fact_id)
                ],
            )
        )
    return EntityOut(
        entity_id=best.id,
        name=best.name,
        type=best.type,
        aliases=sorted(best.aliases),
        facts=facts,
        others=[e.id for e in matches[1:]],
    )


def run_stdio(server: MCPServer) -> None:
    """Serve over stdin/stdout until the client closes them."""
    server.run("stdio")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_http_binding(host: str, token: str | None) -> None:
    """Without a token the server answers anyone who can reach it: loopback only."""
    if token is None and not is_loopback(host):
        raise OptionError(
            f"refusing to serve on {host!r} without a token: give --token (or set "
            "NOEMA_MCP_TOKEN), or bind to 127.0.0.1"
        )


ASGIApp = Callable[[MutableMapping[str, Any], Any, Any], Awaitable[None]]


def _bearer(app: ASGIApp, token: str) -> ASGIApp:
    """Every HTTP request must carry ``Authorization: Bearer <token>``; else 401."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                body = b'{"error": "a valid bearer token is required"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


def run_http(server: MCPServer, host: str, port: int, token: str | None) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` (a bearer token required when given)."""
    import uvicorn

    check_http_binding(host, token)
    app: ASGIApp = server.streamable_http_app(host=host)
    if token is not None:
        app = _bearer(app, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    anyio.run(uvicorn.Server(config).serve)
