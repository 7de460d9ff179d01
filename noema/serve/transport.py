"""How the server is reached: stdio, or streamable HTTP with an optional bearer token."""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from noema.errors import OptionError

__all__ = [
    "DEFAULT_PORT",
    "check_http_binding",
    "host_checks",
    "is_loopback",
    "run_http",
    "run_stdio",
]

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


def host_checks(host: str, token: str | None) -> TransportSecuritySettings | None:
    """The SDK's Host and Origin checks for a server bound to ``host``: on for every address
    served without a token. The SDK turns them on by itself only for 127.0.0.1, localhost and
    ::1; on 127.0.0.2, a page the browser reaches through DNS rebinding (its name resolved to
    the server's address) could read the base, and write it with ``--allow-ingest``. With a
    token that page cannot call at all, and the SDK's own default stands."""
    if token is not None:
        return None
    bound = f"[{host}]" if ":" in host else host
    names = sorted({"127.0.0.1", "localhost", "[::1]", bound})
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names],
        allowed_origins=[f"http://{name}:*" for name in names],
    )


def run_http(server: MCPServer, host: str, port: int, token: str | None) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` (a bearer token required when given)."""
    import uvicorn

    check_http_binding(host, token)
    app: ASGIApp = server.streamable_http_app(
        host=host, transport_security=host_checks(host, token)
    )
    if token is not None:
        app = _bearer(app, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    anyio.run(uvicorn.Server(config).serve)
