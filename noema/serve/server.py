"""The server: the tools of :data:`~noema.serve.tools.TOOLS` and the documents' resource, over
one knowledge base."""

from __future__ import annotations

import os
from types import MethodType

from mcp.server.mcpserver import MCPServer

from noema.kb import KnowledgeBase
from noema.serve.tools import DOCUMENT_URI, TOOLS, Tools

__all__ = ["INSTRUCTIONS", "build_server"]

INSTRUCTIONS = (
    "Facts from a Noema knowledge base. Call retrieve with a question to get the context "
    "to answer it from, with a citation for every fact; explain says why each fact is "
    "there; entity looks one thing up by name; documents lists what the base holds."
)


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
    server: MCPServer = MCPServer(name="noema", instructions=INSTRUCTIONS, log_level="WARNING")
    tools = Tools(kb, bundle=bundle, root=root)
    for tool in TOOLS:
        if tool.writes and not allow_ingest:
            continue
        server.add_tool(
            MethodType(tool.handler, tools), name=tool.name, description=tool.description
        )
    server.resource(DOCUMENT_URI, mime_type="text/plain")(tools.document)
    return server
