"""``noema serve``: a knowledge base as a Model Context Protocol server, for agents.

Built on the official MCP Python SDK (``pip install 'noema-graph[mcp]'``). The tools, one entry
each in :data:`noema.serve.tools.TOOLS`:

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
option comes back as a tool error naming it, never as a crash of the server; a bug in Noema is
logged with its traceback.

The modules: ``schemas`` (what the tools return), ``tools`` (the table and its handlers),
``server`` (:func:`build_server`) and ``transport`` (stdio, HTTP and its bearer token).
"""

from noema.serve.server import build_server
from noema.serve.tools import DOCUMENT_URI
from noema.serve.transport import (
    DEFAULT_PORT,
    check_http_binding,
    is_loopback,
    run_http,
    run_stdio,
)

__all__ = [
    "DEFAULT_PORT",
    "DOCUMENT_URI",
    "build_server",
    "check_http_binding",
    "is_loopback",
    "run_http",
    "run_stdio",
]
