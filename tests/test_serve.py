"""``noema serve``: the MCP SDK's own client drives the server over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from conftest import types_of
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

import noema
from noema.cli import main
from noema.serve import build_server
from noema.serve.tools import Tools

EXAMPLES = Path(__file__).parent.parent / "examples" / "docs"
TWO_HOPS = "Who founded the company that acquired LinkedIn?"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _stdio(bundle: Path, *extra: str) -> Client:
    command = [sys.executable, "-m", "noema", "serve", str(bundle), *extra]
    return Client(StdioServerParameters(command=command[0], args=command[1:], env=ENV))


def _citations(result: noema.RetrievalResult) -> list[dict[str, Any]]:
    return [
        {
            "fact_id": f,
            "citations": [
                {"document_id": c.document_id, "start": c.start, "end": c.end, "sentence": c.text}
                for c in result.citations[f]
            ],
        }
        for f in result.fact_ids
    ]


async def _same_as_the_library(client: Client, bundle: Path) -> None:
    kb = noema.KnowledgeBase.load(bundle)
    for arguments in (
        {"question": TWO_HOPS},
        {"question": TWO_HOPS, "format": "notation", "max_tokens": 120, "hops": 2},
    ):
        reply = await client.call_tool("retrieve", arguments)
        expected = kb.retrieve(
            TWO_HOPS,
            format=arguments.get("format", "sentences"),
            max_tokens=arguments.get("max_tokens", 200),
            hops=arguments.get("hops", 1),
        )
        assert not reply.is_error
        if "format" not in arguments:  # the default call reaches the second hop
            assert "Bill Gates" in expected.text
        assert reply.content[0].text == expected.text  # type: ignore[union-attr]
        content = reply.structured_content
        assert content is not None
        assert content["text"] == expected.text and content["token_count"] == expected.token_count
        assert content["facts"] == _citations(expected)


async def test_stdio_serves_what_the_library_retrieves_and_changes_nothing(bundle: Path) -> None:
    before = bundle.read_bytes()
    async with _stdio(bundle) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"retrieve", "explain", "entity", "documents"}  # no ingest
        assert "question" in tools["retrieve"].input_schema["properties"]
        assert tools["retrieve"].output_schema is not None
        await _same_as_the_library(client, bundle)

        explained = (await client.call_tool("explain", {"question": TWO_HOPS})).structured_content
        assert explained is not None
        reasons = {e["reason"] for e in explained["explanation"] if e["included"]}
        assert reasons and reasons <= {"seed", "sentence", "hop", "bridge", "expansion"}

        google = (await client.call_tool("entity", {"name": "google"})).structured_content
        assert google is not None and google["name"] == "Google" and google["type"] == "ORG"
        assert any("Larry Page" in f["sentence"] for f in google["facts"])
        assert all(f["citations"] for f in google["facts"])

        listed = (await client.call_tool("documents", {})).structured_content
        assert listed is not None
        ids = sorted(d["document_id"] for d in listed["documents"])
        assert ids == sorted(p.name for p in EXAMPLES.glob("*.md"))
        google_doc = next(d for d in listed["documents"] if d["document_id"] == "google.md")
        text = (await client.read_resource(google_doc["uri"])).contents[0]
        assert text.text == (EXAMPLES / "google.md").read_text()  # type: ignore[union-attr]
    assert bundle.read_bytes() == before


async def test_the_entity_tool_shows_merges_and_type_changes(harrow: noema.KnowledgeBase) -> None:
    ids = types_of(harrow, "Harrow Avionics")
    harrow.merge_entities(ids["PERSON"], ids["ORG"], type="ORG")  # the kept one is retyped too
    shown = await Tools(harrow).entity("harrow avionics")
    assert (shown.entity_id, shown.type, shown.others) == (ids["PERSON"], "ORG", [])
    assert [(h.rule, h.merged_name, h.type, h.document_ids) for h in shown.history] == [
        ("exact", "Harrow Avionics", "ORG", ["o2"]),
        ("user", "Harrow Avionics", "ORG", ["o1", "o2"]),
        ("retype", "Harrow Avionics", "PERSON", ["p"]),
    ]
    assert (
        shown.history[1].description == "'Harrow Avionics' joined it (was ORG): merged on request"
    )
    assert shown.history[2].description == "type changed from PERSON to ORG on request"


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("retrieve", {"question": TWO_HOPS, "format": "poem"}, "format"),
        ("retrieve", {"question": TWO_HOPS, "max_tokens": 0}, "max_tokens must be an integer >= 1"),
        ("retrieve", {"question": "  "}, "question is empty"),
        (
            "retrieve",
            {"question": TWO_HOPS, "filters": {"lang": "en"}},
            "unknown filter field 'lang'",
        ),
        ("explain", {"question": TWO_HOPS, "seeds": "magic"}, "seeds"),
        ("entity", {"name": "Atlantis"}, "no entity named 'Atlantis'"),
        ("ingest", {"texts": ["Larry Page founded Google."]}, "ingest"),
    ],
)
async def test_bad_arguments_are_tool_errors(
    bundle: Path, tool: str, arguments: dict[str, Any], message: str
) -> None:
    async with _stdio(bundle) as client:
        reply = await client.call_tool(tool, arguments)
        assert reply.is_error and message in reply.content[0].text  # type: ignore[union-attr]
        # the server is still there
        assert not (await client.call_tool("documents", {})).is_error


async def test_ingest_adds_facts_and_saves_the_bundle(bundle: Path, tmp_path: Path) -> None:
    copy = tmp_path / "kb.noema"
    copy.write_bytes(bundle.read_bytes())
    root = tmp_path / "docs"
    root.mkdir()
    (root / "ada.txt").write_text("Ada Lovelace wrote the first computer program.")
    (tmp_path / "secret.txt").write_text("The launch code is 1234.")
    async with _stdio(copy, "--allow-ingest", "--root", str(root)) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert "ingest" in tools
        added = await client.call_tool("ingest", {"texts": ["Grace Hopper designed COBOL."]})
        assert not added.is_error and added.structured_content["documents"] == 1  # type: ignore[index]
        reply = await client.call_tool("retrieve", {"question": "Who designed COBOL?"})
        assert "Grace Hopper" in reply.content[0].text  # type: ignore[union-attr]
        from_file = await client.call_tool("ingest", {"paths": ["ada.txt"]})
        assert not from_file.is_error
        refused = await client.call_tool("ingest", {"paths": ["../secret.txt"]})
        assert refused.is_error and "outside the root" in refused.content[0].text  # type: ignore[union-attr]
    reloaded = noema.KnowledgeBase.load(copy)
    texts = {d.text for d in reloaded.graph.documents.values()}
    assert "Grace Hopper designed COBOL." in texts
    assert "Ada Lovelace wrote the first computer program." in texts
    assert not any("launch code" in t for t in texts)


async def test_a_bug_in_a_tool_is_logged_with_its_traceback(
    bundle: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # a ValueError, TypeError or KeyError from anywhere came back as a tool error
    # with its text, as if the agent had passed a bad argument; only Noema's errors do now
    kb = noema.KnowledgeBase.load(bundle)

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("internal state")

    monkeypatch.setattr(kb, "retrieve_with", broken)
    async with Client(build_server(kb)) as client:
        reply = await client.call_tool("retrieve", {"question": TWO_HOPS})
        assert reply.is_error
        assert reply.content[0].text == "Error executing tool retrieve"  # type: ignore[union-attr]
        bad = await client.call_tool("retrieve", {"question": TWO_HOPS, "max_tokens": 0})
        assert bad.is_error and "max_tokens" in bad.content[0].text  # type: ignore[union-attr]
    assert "internal state" in caplog.text and "Traceback" in caplog.text


async def test_an_ingest_the_system_refuses_is_a_clear_tool_error(
    bundle: Path, tmp_path: Path
) -> None:
    # "Error executing tool ingest", no reason, and a traceback on the server's stderr
    kb = noema.KnowledgeBase.load(bundle)
    server = build_server(kb, bundle=tmp_path / "kb.noema", allow_ingest=True, root=tmp_path)
    async with Client(server) as client:
        reply = await client.call_tool("ingest", {"paths": ["a" * 100_000]})
    text = reply.content[0].text  # type: ignore[union-attr]
    assert reply.is_error and "cannot read 'aaaa" in text and "too long" in text
    assert len(text) < 1000
    assert kb.graph.documents.keys() == noema.KnowledgeBase.load(bundle).graph.documents.keys()


_INGEST_ON_A_FULL_DISK = """
import asyncio, json, os, resource, signal, sys
from mcp import Client
import noema
from noema.serve import build_server

path = sys.argv[1]
kb = noema.KnowledgeBase.load(path)
# the bundle may not grow: writing past its size fails as a full disk does (EFBIG, not ENOSPC)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path) + 256, hard))


async def call():
    async with Client(build_server(kb, bundle=path, allow_ingest=True)) as client:
        reply = await client.call_tool("ingest", {"texts": ["Grace Hopper designed COBOL."]})
        retrieved = await client.call_tool("retrieve", {"question": "Who designed COBOL?"})
    return reply.is_error, reply.content[0].text, retrieved.content[0].text


error, text, retrieved = asyncio.run(call())
documents = len(kb.graph.documents)
print(json.dumps({"error": error, "text": text, "retrieved": retrieved, "documents": documents}))
"""


def test_an_ingest_whose_save_fails_changes_nothing(bundle: Path, tmp_path: Path) -> None:
    # on a full disk the call failed, and the documents stayed in the served base, not the file
    copy = tmp_path / "kb.noema"
    copy.write_bytes(bundle.read_bytes())
    result = subprocess.run(
        [sys.executable, "-c", _INGEST_ON_A_FULL_DISK, str(copy)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["error"] and "nothing was ingested: File too large" in outcome["text"]
    assert "Grace Hopper" not in outcome["retrieved"]
    assert outcome["documents"] == len(noema.KnowledgeBase.load(bundle).graph.documents)
    assert copy.read_bytes() == bundle.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["kb.noema"]  # no temporary file left


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _http_server(bundle: Path, *extra: str, host: str = "127.0.0.1") -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "noema",
            "serve",
            str(bundle),
            "--http",
            f"{host}:{port}",
            *extra,
        ],
        env=ENV,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection((host, port), timeout=0.2).close()
                break
            except OSError:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
        yield f"http://{host}:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


@asynccontextmanager
async def _http_client(url: str, token: str | None) -> AsyncIterator[Client]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    http = httpx2.AsyncClient(headers=headers, timeout=120)
    async with Client(streamable_http_client(url, http_client=http)) as client:
        yield client


def _chain(exc: BaseException) -> str:
    """Every message in an exception group and its causes."""
    found = [repr(exc)]
    for inner in getattr(exc, "exceptions", ()):
        found.append(_chain(inner))
    if exc.__cause__ is not None:
        found.append(_chain(exc.__cause__))
    return " ".join(found)


async def test_http_with_a_token_serves_many_calls_at_once(bundle: Path) -> None:
    with _http_server(bundle, "--token", "s3cret") as url:
        async with _http_client(url, "s3cret") as client:
            await _same_as_the_library(client, bundle)
            replies = await asyncio.gather(
                *(client.call_tool("retrieve", {"question": TWO_HOPS}) for _ in range(50))
            )
            assert len({r.content[0].text for r in replies}) == 1  # type: ignore[union-attr]
            assert not any(r.is_error for r in replies)
        for token in ("wrong", None):
            headers = {} if token is None else {"Authorization": f"Bearer {token}"}
            raw = httpx2.post(
                url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}
            )
            assert raw.status_code == 401
            with pytest.raises(BaseException) as refused:  # noqa: B017 - the SDK wraps it in groups
                async with _http_client(url, token) as client:
                    await client.list_tools()
            assert "Server returned an error response" in _chain(refused.value)


async def test_http_without_a_token_on_loopback(bundle: Path) -> None:
    with _http_server(bundle) as url:
        async with _http_client(url, None) as client:
            assert {t.name for t in (await client.list_tools()).tools} >= {"retrieve"}


_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "page", "version": "1"},
    },
}


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2"])
def test_http_without_a_token_checks_host_and_origin_on_every_loopback_address(
    bundle: Path, host: str
) -> None:
    # on 127.0.0.2 the SDK's Host/Origin checks were off: a page reaching the server through
    # DNS rebinding (Host: its own name) could read the base, and write it with --allow-ingest
    headers = {"Accept": "application/json, text/event-stream"}
    with _http_server(bundle, host=host) as url:
        port = url.split(":")[2].split("/")[0]
        rebound = httpx2.post(
            url, json=_INITIALIZE, headers={**headers, "Host": f"attacker.example:{port}"}
        )
        assert rebound.status_code == 421
        foreign = httpx2.post(
            url, json=_INITIALIZE, headers={**headers, "Origin": "http://attacker.example"}
        )
        assert foreign.status_code == 403
        assert httpx2.post(url, json=_INITIALIZE, headers=headers).status_code == 200


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--http", "0.0.0.0:8765"], "without a token"),
        (["--http", "127.0.0.1:99999"], "port from 1 to 65535"),
        (["--token", "x"], "--token is for --http"),
        (["--allow-ingest", "--root", "/no/such/folder"], "is not a folder"),
    ],
)
def test_serve_refuses_unsafe_or_bad_options_in_one_line(
    bundle: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(["serve", str(bundle), *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and message in err and err.count("\n") == 1
