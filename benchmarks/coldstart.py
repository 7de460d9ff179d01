"""What a first call costs: import, model loading, a cold ``noema query``, a first MCP retrieve.

python benchmarks/coldstart.py --runs 3

Every figure is a fresh process (what a user, a shell script or an agent host starts), on a small
bundle built from examples/docs, in one run of this script: the time to ``import noema``, to
import it and load the embedding model (the floor of any retrieval), a cold ``noema query``, and
the MCP stdio server (``noema serve``) driven by the MCP SDK's client: from start until it
answers the handshake, then a first and a later ``retrieve``. Medians over ``--runs``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, print_table  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "docs"
QUESTION = "Who founded the company that acquired LinkedIn?"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

# what any retrieval needs first: torch, transformers and the model, one forward pass
LOAD_MODEL = "import noema; noema.SentenceTransformerEmbedder().embed(['warm up'])"


def timed_process(command: list[str]) -> float:
    """Seconds from starting ``command`` until it exits (it must succeed)."""
    start = time.perf_counter()
    subprocess.run(command, check=True, env=ENV, cwd=ROOT, capture_output=True)
    return time.perf_counter() - start


async def mcp_calls(bundle: Path) -> tuple[float, float, float]:
    """Seconds until the server answered the handshake and listed its tools (what an agent host
    does on connecting), for the first retrieve, for a later one."""
    import jsonschema  # noqa: F401  (the client's own lazy import on its first call: not the server's)
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    command = [sys.executable, "-m", "noema", "serve", str(bundle)]
    params = StdioServerParameters(command=command[0], args=command[1:], env=ENV, cwd=ROOT)
    start = time.perf_counter()
    async with Client(params) as client:
        await client.list_tools()
        ready = time.perf_counter() - start
        first = await _call(client, QUESTION)
        later = await _call(client, QUESTION)  # the same work, warm
    return ready, first, later


async def _call(client: object, question: str) -> float:
    start = time.perf_counter()
    reply = await client.call_tool("retrieve", {"question": question})  # type: ignore[attr-defined]
    assert not reply.is_error, reply
    return time.perf_counter() - start


def langchain_calls(bundle: Path) -> tuple[float, float]:
    """A first and a later ``invoke`` of a LangChain retriever opened on the bundle, in a fresh
    process (after its imports and the constructor)."""
    code = (
        "import sys, time\n"
        "from noema_langchain import NoemaRetriever\n"
        "r = NoemaRetriever(sys.argv[1])\n"
        "t = time.perf_counter(); r.invoke(sys.argv[2]); first = time.perf_counter() - t\n"
        "t = time.perf_counter(); r.invoke(sys.argv[3]); later = time.perf_counter() - t\n"
        "print(first, later)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(bundle), QUESTION, QUESTION],
        check=True,
        env=ENV,
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(out[-2]), float(out[-1])


def median(samples: list[float]) -> str:
    return f"{statistics.median(samples):.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        bundle = Path(folder) / "kb.noema"
        noema_cli = [sys.executable, "-m", "noema"]
        subprocess.run(
            [*noema_cli, "build", str(EXAMPLES), "-o", str(bundle), "--root", str(EXAMPLES)],
            check=True,
            env=ENV,
            cwd=ROOT,
            capture_output=True,
        )
        times: dict[str, list[float]] = {}
        for _ in range(args.runs):
            measured = {
                "python -c 'import noema'": timed_process([sys.executable, "-c", "import noema"]),
                "import noema + load the embedding model": timed_process(
                    [sys.executable, "-c", LOAD_MODEL]
                ),
                "noema query (cold process)": timed_process(
                    [*noema_cli, "query", str(bundle), QUESTION]
                ),
            }
            ready, first, later = asyncio.run(mcp_calls(bundle))
            measured["MCP serve: start until ready"] = ready
            measured["MCP retrieve: first call"] = first
            measured["MCP retrieve: later call"] = later
            lc_first, lc_later = langchain_calls(bundle)
            measured["LangChain invoke: first (after constructor)"] = lc_first
            measured["LangChain invoke: later"] = lc_later
            for name, seconds in measured.items():
                times.setdefault(name, []).append(seconds)
    print(f"{machine()}; {args.runs} runs, medians; bundle: examples/docs (6 documents)\n")
    print_table(["what", "seconds"], [(name, median(s)) for name, s in times.items()])
    first = statistics.median(times["MCP retrieve: first call"])
    later = statistics.median(times["MCP retrieve: later call"])
    print(f"\nfirst MCP retrieve / later: {first / later:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
