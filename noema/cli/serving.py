"""``noema serve``: a bundle as a Model Context Protocol server (the work is in
:mod:`noema.serve`; this module reads the flags and checks them before loading anything)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from noema.cli.common import Command, CommandError
from noema.kb import KnowledgeBase
from noema.resources import install_hint
from noema.warmup import warm_up

__all__ = ["SERVE"]


def add_serve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("bundle")
    p.add_argument(
        "--http",
        nargs="?",
        const="127.0.0.1",
        metavar="HOST:PORT",
        help="streamable HTTP at http://HOST:PORT/mcp instead of stdio (default 127.0.0.1:8765)",
    )
    p.add_argument(
        "--token",
        help="with --http: the bearer token every request must carry (or NOEMA_MCP_TOKEN); "
        "required to bind anything but loopback",
    )
    p.add_argument(
        "--allow-ingest",
        action="store_true",
        help="add an ingest tool that saves the bundle after each call (read-only otherwise)",
    )
    p.add_argument(
        "--root", metavar="DIR", help="with --allow-ingest: the folder files may be ingested from"
    )


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from noema import serve
    except ImportError:  # pragma: no cover - without the extra
        raise CommandError(f"noema serve needs the MCP SDK: {install_hint('mcp')}") from None
    token = args.token or os.environ.get("NOEMA_MCP_TOKEN") or None
    host = port = None
    if args.http is not None:
        host, port = _host_port(args.http)
        serve.check_http_binding(host, token)  # before loading anything
    elif args.token:
        raise CommandError("--token is for --http; over stdio the client starts the server itself")
    if args.root is not None and not Path(args.root).is_dir():
        raise CommandError(f"--root {args.root!r} is not a folder")
    kb = KnowledgeBase.load(args.bundle)
    server = serve.build_server(
        kb, bundle=args.bundle, allow_ingest=args.allow_ingest, root=args.root
    )
    # ready only once warm: an agent host times a tool call out sooner than a server's start
    # (a first retrieve paid the model's loading: 19-25 s on a loaded machine), and a retrieval
    # beside the loading waited for it anyway
    warm_up(kb, parse=args.allow_ingest)
    if host is None or port is None:
        serve.run_stdio(server)
    else:
        print(f"Serving {args.bundle} at http://{host}:{port}/mcp", file=sys.stderr, flush=True)
        serve.run_http(server, host, port, token)
    return 0


def _host_port(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``HOST`` or ``:PORT``, with 127.0.0.1 and the default port for what is
    left out."""
    from noema.serve import DEFAULT_PORT

    host, sep, port_text = text.rpartition(":") if ":" in text else (text, "", "")
    host = host.strip("[]") or "127.0.0.1"
    if not sep:
        return host, DEFAULT_PORT
    try:
        port = int(port_text)
    except ValueError:
        port = -1
    if not 0 < port < 65536:
        raise CommandError(f"--http takes HOST:PORT with a port from 1 to 65535, got {text!r}")
    return host, port


SERVE = Command(
    "serve",
    "Serve a bundle to agents over the Model Context Protocol (stdio, or streamable HTTP).",
    'noema serve kb.noema\n  noema serve kb.noema --http 127.0.0.1:8765 --token "$TOKEN"',
    add_serve_arguments,
    cmd_serve,
)
