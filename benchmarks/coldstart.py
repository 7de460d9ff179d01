"""What a first call costs, as the ratios a user feels, in one run.

    python benchmarks/coldstart.py --runs 3
    python benchmarks/coldstart.py --questions 300 --bundle /tmp/hotpotqa300.noema --runs 3

Every figure comes from fresh processes (what a user, a shell script or an agent host starts), on
one bundle: examples/docs by default, or the pooled paragraphs of the first ``--questions``
HotpotQA dev questions (built once and kept at ``--bundle``). The ratios:

- a cold ``noema query`` against a cold ``noema info`` on the same bundle (what answering a
  question adds to opening it);
- the first retrieval after opening against the median of the next twenty (other questions), in
  a process whose models are loaded (a service after its warm-up: the base opened is not the one
  warmed up), and in a fresh process that loads them on that first call;
- a retrieval's p50 against a chunk retriever's query (the same embedding model over the same
  paragraphs, title-prefixed, packed to the same budget), asked alternately in one process;
- the first MCP ``retrieve`` of ``noema serve`` and the first LangChain ``invoke`` against a later.

Medians over ``--runs``; the p50s are over the questions of the first run's process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
QUESTION = "Who founded the company that acquired LinkedIn?"
EXAMPLE_QUESTIONS = [
    QUESTION,
    "Who founded Google?",
    "Who runs Google?",
    "Where is LinkedIn based?",
    "When was Nvidia founded?",
    "Who founded YouTube?",
    "Which company bought YouTube?",
    "Who is the CEO of Microsoft?",
    "Who founded Nvidia?",
    "When was Microsoft founded?",
    "Who founded LinkedIn?",
]
BUDGET = 200  # max_tokens of every retrieval and chunk query here
NEXT = 20  # retrievals after the first, whose median the first is held against
P50_QUESTIONS = 100  # the first this many questions give the p50s

# In a fresh process: open the bundle and time the first retrieval, then the next twenty; with
# "warm", a first base is opened and warmed up (what `noema serve` and the adapters do at start)
# before the base that is timed is opened. Then, with a question file, the p50 of retrievals and
# of a chunk retriever's queries over the same documents, asked alternately.
FIRST_AND_NEXT = """
import json, statistics, sys, time
import noema
from noema.evaluate import ChunkRetriever

bundle, mode, questions_file, budget, following, chunks = sys.argv[1:7]
questions = json.loads(open(questions_file).read())
budget, following = int(budget), int(following)
if mode == "warm":
    noema.warm_up(noema.KnowledgeBase.load(bundle))
start = time.perf_counter()
kb = noema.KnowledgeBase.load(bundle)
opened = time.perf_counter() - start

def timed(question):
    start = time.perf_counter()
    kb.retrieve(question, max_tokens=budget)
    return time.perf_counter() - start

first = timed(questions[0])
following = [timed(questions[1 + n % (len(questions) - 1)]) for n in range(following)]
report = {"open": opened, "first": first, "next": statistics.median(following)}
if chunks == "chunks":  # the p50 against chunks: the chunk index embeds every paragraph (torch)
    chunk_retriever = ChunkRetriever(kb.embedder, list(kb.graph.documents.values()))
    noema_times, chunk_times = [], []
    for question in questions[: int(sys.argv[7])]:
        noema_times.append(timed(question))
        start = time.perf_counter()
        chunk_retriever.retrieve(question, budget)
        chunk_times.append(time.perf_counter() - start)
    report["noema_p50"] = statistics.median(noema_times)
    report["chunks_p50"] = statistics.median(chunk_times)
print("REPORT", json.dumps(report))
"""

LANGCHAIN = """
import sys, time
from noema_langchain import NoemaRetriever
r = NoemaRetriever(sys.argv[1])
t = time.perf_counter(); r.invoke(sys.argv[2]); first = time.perf_counter() - t
t = time.perf_counter(); r.invoke(sys.argv[3]); later = time.perf_counter() - t
print(first, later)
"""


def timed_process(command: list[str]) -> float:
    """Seconds from starting ``command`` until it exits (it must succeed)."""
    start = time.perf_counter()
    subprocess.run(command, check=True, env=ENV, cwd=ROOT, capture_output=True)
    return time.perf_counter() - start


def python_output(code: str, *args: str) -> str:
    """What ``python -c code args`` prints, from a fresh process (it must succeed)."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        check=True,
        env=ENV,
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout


def first_and_next(bundle: Path, mode: str, questions: Path, chunks: bool) -> dict[str, float]:
    """The worker's figures; with ``chunks``, also the p50s against the chunk retriever."""
    out = python_output(
        FIRST_AND_NEXT,
        str(bundle),
        mode,
        str(questions),
        str(BUDGET),
        str(NEXT),
        "chunks" if chunks else "-",
        str(P50_QUESTIONS),
    )
    line = next(line for line in out.splitlines() if line.startswith("REPORT "))
    return json.loads(line.removeprefix("REPORT "))  # type: ignore[no-any-return]


async def mcp_calls(bundle: Path, question: str) -> tuple[float, float, float]:
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
        first = await _call(client, question)
        later = await _call(client, question)  # the same work, warm
    return ready, first, later


async def _call(client: object, question: str) -> float:
    start = time.perf_counter()
    reply = await client.call_tool("retrieve", {"question": question})  # type: ignore[attr-defined]
    assert not reply.is_error, reply
    return time.perf_counter() - start


def build_bundle(bundle: Path, questions: int) -> None:
    """Build the bundle: examples/docs through ``noema build``, or the HotpotQA pool."""
    if questions == 0:
        command = ["build", str(EXAMPLES), "-o", str(bundle), "--root", str(EXAMPLES)]
        subprocess.run([sys.executable, "-m", "noema", *command], check=True, env=ENV, cwd=ROOT)
        return
    import hotpotqa

    import noema

    kb = noema.KnowledgeBase()
    kb.ingest(hotpotqa.load(questions)[1])
    kb.save(bundle)


def questions_of(questions: int) -> list[str]:
    """The questions asked: the pool's own (as benchmarks/hotpotqa.py asks them), or ones about
    examples/docs."""
    if questions == 0:
        return EXAMPLE_QUESTIONS
    import hotpotqa

    return [question.text for question in hotpotqa.load(questions)[0]]


def ratio(numerator: float, denominator: float) -> str:
    return f"{numerator / denominator:.2f}x"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--questions",
        type=int,
        default=0,
        help="pool the first N HotpotQA dev questions (0: examples/docs)",
    )
    parser.add_argument("--bundle", type=Path, help="keep the bundle here (built when missing)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        bundle = args.bundle or Path(folder) / "kb.noema"
        if not bundle.is_file():
            build_bundle(bundle, args.questions)
        asked = questions_of(args.questions)
        questions = Path(folder) / "questions.json"
        questions.write_text(json.dumps(asked))
        noema_cli = [sys.executable, "-m", "noema"]
        times: dict[str, list[float]] = {}
        for run in range(args.runs):
            measured = {
                "python -c 'import noema'": timed_process([sys.executable, "-c", "import noema"]),
                "noema info (cold process)": timed_process([*noema_cli, "info", str(bundle)]),
                "noema query (cold process)": timed_process(
                    [*noema_cli, "query", str(bundle), asked[0]]
                ),
            }
            for mode in ("warm", "fresh"):
                # the p50s once: embedding the chunks is most of a run on the HotpotQA pool
                chunks = run == 0 and mode == "warm"
                for name, seconds in first_and_next(bundle, mode, questions, chunks).items():
                    measured[f"{mode}: {name}"] = seconds
            ready, first, later = asyncio.run(mcp_calls(bundle, asked[0]))
            measured["MCP serve: start until ready"] = ready
            measured["MCP retrieve: first call"] = first
            measured["MCP retrieve: later call"] = later
            out = python_output(LANGCHAIN, str(bundle), asked[0], asked[1]).split()
            measured["LangChain invoke: first (after constructor)"] = float(out[-2])
            measured["LangChain invoke: later"] = float(out[-1])
            for name, seconds in measured.items():
                times.setdefault(name, []).append(seconds)
    m = {name: statistics.median(samples) for name, samples in times.items()}
    where = (
        f"HotpotQA pool of the first {args.questions} dev questions"
        if args.questions
        else "examples/docs (6 documents)"
    )
    print(f"{machine()}; {args.runs} runs, medians; bundle: {where}; max_tokens={BUDGET}\n")
    print_table(
        ["ratio", "measured", "x"],
        [
            (
                "cold `noema query` / cold `noema info`",
                f"{m['noema query (cold process)']:.2f} s / {m['noema info (cold process)']:.2f} s",
                ratio(m["noema query (cold process)"], m["noema info (cold process)"]),
            ),
            (
                f"first retrieval after opening / median of the next {NEXT} (models loaded)",
                f"{m['warm: first'] * 1000:.0f} ms / {m['warm: next'] * 1000:.0f} ms",
                ratio(m["warm: first"], m["warm: next"]),
            ),
            (
                f"first retrieval in a fresh process / median of the next {NEXT}",
                f"{m['fresh: first'] * 1000:.0f} ms / {m['fresh: next'] * 1000:.0f} ms",
                ratio(m["fresh: first"], m["fresh: next"]),
            ),
            (
                f"retrieval p50 / chunk query p50 ({min(len(asked), P50_QUESTIONS)} questions)",
                f"{m['warm: noema_p50'] * 1000:.1f} ms / {m['warm: chunks_p50'] * 1000:.1f} ms",
                ratio(m["warm: noema_p50"], m["warm: chunks_p50"]),
            ),
            (
                "first MCP retrieve / later",
                f"{m['MCP retrieve: first call'] * 1000:.0f} ms / "
                f"{m['MCP retrieve: later call'] * 1000:.0f} ms",
                ratio(m["MCP retrieve: first call"], m["MCP retrieve: later call"]),
            ),
            (
                "first LangChain invoke / later",
                f"{m['LangChain invoke: first (after constructor)'] * 1000:.0f} ms / "
                f"{m['LangChain invoke: later'] * 1000:.0f} ms",
                ratio(
                    m["LangChain invoke: first (after constructor)"], m["LangChain invoke: later"]
                ),
            ),
        ],
    )
    print()
    print_table(["what", "seconds"], [(name, f"{seconds:.3f}") for name, seconds in m.items()])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
