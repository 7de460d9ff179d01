"""How the server is reached: stdio, or streamable HTTP with an optional bearer token."""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from noema.errors import OptionError

__all__ = ["DEFAULT_PORT", "check_http_binding", "is_loopback", "run_http", "run_stdio"]

DEFAULT_PORT = 8765

ASGIApp = Callable[[MutableMapping[str, Any], Any, Any], Awaitable[None]]


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
