"""The MCP tools: a table of (name, description, handler), the handlers being methods of
:class:`Tools`, which holds the knowledge base they serve.

Adding a tool is a method here and an entry in :data:`TOOLS`. The SDK reads each handler's
signature for the tool's input schema (the ``Field`` descriptions are what an agent sees of
each argument) and its return annotation for the output schema.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import quote, unquote

import anyio
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from noema.errors import NoemaError, OptionError
from noema.ingest.sources import read_documents
from noema.kb import KnowledgeBase
from noema.repairs import describe_record, entities_named, entity_history
from noema.retrieval.filters import check_filters
from noema.retrieval.formats import render_fact
from noema.retrieval.options import FORMATS, Format, RetrieveOptions, SeedStrategy, option_help
from noema.serve.names import DocumentNames
from noema.serve.schemas import (
    DocumentOut,
    DocumentsOut,
    EntityFactOut,
    EntityOut,
    ExplainOut,
    ExplanationOut,
    HistoryOut,
    IngestOut,
    RetrieveOut,
    citations_out,
    retrieved,
)

if TYPE_CHECKING:
    from noema import RetrievalResult

__all__ = ["DOCUMENT_URI", "TOOLS", "Tool", "Tools"]

# An agent reads the context itself, and the source sentences hold the answer most often (see
# benchmarks/RESULTS.md): the tools default to them, where the library defaults to notation.
TOOL_FORMAT: Format = "sentences"
# every format the registry holds, the tools' default first
FORMAT_HELP = "; ".join(
    f"{name}: {FORMATS[name].description}"
    for name in sorted(FORMATS, key=lambda n: n != TOOL_FORMAT)
)

DOCUMENT_URI = "noema://document/{document_id}"


async def _in_thread(work: Callable[[], Any]) -> Any:
    """``work`` in a worker thread; Noema's errors (a bad option, an unknown name) come back as
    tool errors naming the problem. Anything else is a bug: the SDK logs its traceback and the
    client sees only that the tool failed."""
    try:
        return await anyio.to_thread.run_sync(work)
    except NoemaError as exc:
        raise ToolError(str(exc)) from None


class Tools:
    """The handlers of the tools over one knowledge base. Tool calls run in worker threads:
    retrievals read the knowledge base's lock-free snapshot, and an ingest publishes a new one.

    Args:
        kb: the knowledge base served.
        bundle: where the ingest tool saves ``kb`` after each call (``None``: not saved).
        root: the folder the ingest tool may read files from (``None``: texts only).
    """

    def __init__(
        self,
        kb: KnowledgeBase,
        *,
        bundle: str | os.PathLike[str] | None = None,
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        self.kb = kb
        self.bundle = bundle
        self.base = Path(root).resolve() if root is not None else None
        self.lock = threading.Lock()  # one ingest and save at a time
        self._names: tuple[object, DocumentNames] | None = None

    def names(self) -> DocumentNames:
        """How the tools name the documents of the current graph (made again after a write)."""
        graph = self.kb.graph
        if self._names is None or self._names[0] is not graph:
            self._names = (graph, DocumentNames(graph, self.base))
        return self._names[1]

    async def _result(
        self, question: str, options: dict[str, Any], explain: bool
    ) -> RetrievalResult:
        """Options checked and the retrieval run in one worker thread; errors as tool errors."""
        filters = self.names().filters(options.pop("filters"))

        def work() -> RetrievalResult:
            check_filters(filters)
            checked = RetrieveOptions.of(options)
            return self.kb.retrieve_with(question, checked, filters=filters, explain=explain)

        return await _in_thread(work)  # type: ignore[no-any-return]

    async def retrieve(
        self,
        question: Annotated[str, Field(description="the question to find facts for")],
        max_tokens: Annotated[
            int, Field(description=option_help("max_tokens"))
        ] = RetrieveOptions.max_tokens,
        format: Annotated[Format, Field(description=FORMAT_HELP)] = TOOL_FORMAT,
        hops: Annotated[int, Field(description=option_help("hops"))] = RetrieveOptions.hops,
        top_k: Annotated[int, Field(description=option_help("top_k"))] = RetrieveOptions.top_k,
        seeds: Annotated[
            SeedStrategy, Field(description=option_help("seeds"))
        ] = RetrieveOptions.seeds,
        as_of: Annotated[str | None, Field(description=option_help("as_of"))] = None,
        filters: Annotated[
            dict[str, Any] | None,
            Field(
                description="only facts matching: entity_types (list), predicates (list), "
                "document_ids (list), metadata (key -> value of the documents)"
            ),
        ] = None,
    ) -> Annotated[CallToolResult, RetrieveOut]:
        arguments: dict[str, Any] = {"max_tokens": max_tokens, "format": format, "hops": hops}
        arguments.update(top_k=top_k, seeds=seeds, as_of=as_of, filters=filters)
        result = await self._result(question, arguments, False)
        out = RetrieveOut(**retrieved(result, self.names().shown))
        return CallToolResult(
            content=[TextContent(type="text", text=result.text or "(no facts found)")],
            structured_content=out.model_dump(mode="json"),
        )

    async def explain(
        self,
        question: Annotated[str, Field(description="the question to find facts for")],
        max_tokens: int = RetrieveOptions.max_tokens,
        format: Format = TOOL_FORMAT,
        hops: int = RetrieveOptions.hops,
        top_k: int = RetrieveOptions.top_k,
        seeds: SeedStrategy = RetrieveOptions.seeds,
        as_of: str | None = None,
        filters: dict[str, Any] | None = None,
    ) -> ExplainOut:
        arguments: dict[str, Any] = {"max_tokens": max_tokens, "format": format, "hops": hops}
        arguments.update(top_k=top_k, seeds=seeds, as_of=as_of, filters=filters)
        result = await self._result(question, arguments, True)
        return ExplainOut(
            **retrieved(result, self.names().shown),
            explanation=[
                ExplanationOut.model_validate(asdict(e)) for e in result.explanation or ()
            ],
        )

    async def entity(
        self, name: Annotated[str, Field(description="a name or alias, e.g. 'Google'")]
    ) -> EntityOut:
        names = self.names()
        return await _in_thread(lambda: _entity(self.kb, name, names))  # type: ignore[no-any-return]

    async def documents(self) -> DocumentsOut:
        graph, names = self.kb.graph, self.names()
        return DocumentsOut(
            documents=[
                DocumentOut(
                    document_id=names.shown(d.id),
                    uri=DOCUMENT_URI.format(document_id=quote(names.shown(d.id), safe="")),
                    title=d.metadata.get("title")
                    if isinstance(d.metadata.get("title"), str)
                    else None,
                    characters=len(d.text),
                    metadata=names.metadata(d.metadata),
                )
                for d in graph.documents.values()
            ]
        )

    def document(self, document_id: str) -> str:
        """A document's text."""
        asked = unquote(document_id)
        doc = self.kb.graph.documents.get(self.names().actual(asked))
        if doc is None:
            raise ResourceNotFoundError(f"no document {asked!r}")
        return doc.text

    async def ingest(
        self,
        texts: Annotated[
            list[str] | None, Field(description="texts to add, one document each")
        ] = None,
        paths: Annotated[
            list[str] | None,
            Field(description="files or folders under the server's root (.txt, .md, .jsonl)"),
        ] = None,
    ) -> IngestOut:
        def work() -> IngestOut:
            sources: list[Any] = [*(texts or []), *self._documents_under_root(paths or [])]
            if not sources:
                raise OptionError("give texts or paths to ingest")
            with self.lock:  # one save at a time, after its own ingest
                try:  # a failed save undoes the ingest: a failed call changes nothing
                    report = self.kb.ingest(sources, save_to=self.bundle)
                except OSError as exc:
                    raise ToolError(f"nothing was ingested: {_os_reason(exc)}") from None
            return IngestOut(
                documents=report.documents,
                new_relations=report.new_relations,
                new_events=report.new_events,
                saved_to=None if self.bundle is None else os.fspath(self.bundle),
            )

        return await _in_thread(work)  # type: ignore[no-any-return]

    def _documents_under_root(self, paths: list[str]) -> list[Any]:
        """The documents of files or folders given relative to the root; none outside it."""
        found: list[Any] = []
        for raw in paths:
            if self.base is None:
                raise OptionError("this server takes no paths (it was started without --root)")
            try:  # a name too long, a folder that cannot be listed: the system's reason
                path = (self.base / raw).resolve()
                if not path.is_relative_to(self.base):
                    raise OptionError(f"{raw!r:.200} is outside the root folder {str(self.base)!r}")
                found.extend(read_documents([path], root=self.base))
            except OSError as exc:
                raise ToolError(f"cannot read {raw!r:.200}: {_os_reason(exc)}") from None
        return found


def _os_reason(exc: OSError) -> str:
    """What the system said, with the file it said it of cut short (a hostile name may be
    100,000 characters long)."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return reason if exc.filename is None else f"{reason}: {str(exc.filename)[:200]!r}"


def _entity(kb: KnowledgeBase, name: str, names: DocumentNames) -> EntityOut:
    snapshot = kb.state  # the graph and the merge log of one write
    graph = snapshot.graph
    matches = entities_named(graph, name)
    best = matches[0]
    facts = [
        EntityFactOut(
            fact_id=fact_id,
            # from the graph this call walks: a concurrent ingest may drop the fact from the next
            sentence=render_fact(graph, fact_id, "natural_language"),
            notation=render_fact(graph, fact_id, "notation"),
            citations=citations_out(graph.citations(fact_id), names.shown),
        )
        for fact_id in graph.facts_of(best.id)
    ]
    history = [
        HistoryOut(
            rule=r.rule,
            merged_name=r.merged_name,
            type=r.type,
            similarity=r.similarity,
            document_ids=[names.shown(i) for i in r.document_ids],
            description=describe_record(r, best.type),
        )
        for r in entity_history(snapshot.merge_log, best.id)
    ]
    return EntityOut(
        entity_id=best.id,
        name=best.name,
        type=best.type,
        aliases=sorted(best.aliases),
        facts=facts,
        others=[e.id for e in matches[1:]],
        history=history,
    )


@dataclass(frozen=True)
class Tool:
    """One tool of the server.

    Attributes:
        name: the tool's name, as agents call it.
        description: what an agent reads to decide when to call it.
        handler: the method of :class:`Tools` that answers a call.
        writes: changes the knowledge base (offered only when ingesting is allowed).
    """

    name: str
    description: str
    handler: Callable[..., Awaitable[Any]]
    writes: bool = False


# In the order the server lists them.
TOOLS: tuple[Tool, ...] = (
    Tool(
        "retrieve",
        "The facts relevant to a question, within a token budget, as context to answer it "
        "from. The text content is the context; the structured content adds the token count and "
        "the citation (document, span, sentence) of every fact in it.",
        Tools.retrieve,
    ),
    Tool(
        "explain",
        "The retrieve tool's result with why each fact is there: a seed, a fact of a sentence "
        "close to the question, a hop to a document about an entity, a bridge search, or the "
        "graph walk; facts the budget cut are listed with included=false.",
        Tools.explain,
    ),
    Tool(
        "entity",
        "An entity of the knowledge base by name or alias: its type, aliases, every fact it "
        "takes part in, each with its citations, and its history: the merges that made it and "
        "any change of its type.",
        Tools.entity,
    ),
    Tool(
        "documents",
        "The documents the knowledge base holds: id, title, size and metadata. Each "
        "document's text is the resource at its uri.",
        Tools.documents,
    ),
    Tool(
        "ingest",
        "Add documents to the knowledge base; it is saved after each call. Retrievals "
        "keep being served while this runs and see the new facts once it returns.",
        Tools.ingest,
        writes=True,
    ),
)
