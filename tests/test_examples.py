from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parent.parent / "examples"


def run(name: str) -> str:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, check=True
    ).stdout


def test_demo_answers_the_two_hop_question() -> None:
    two_hop = run("demo.py").split("hops=2")[1]
    # "founded Nvidia in 1993" is a fact in time: an event line with its year
    assert "Jensen Huang" in two_hop and "*found (" in two_hop


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("langchain_rag.py", "Question: Who founded the company that acquired LinkedIn?"),
        # a loader's "source" metadata, and SimpleDirectoryReader's file names, come back
        ("langchain_rag.py", "examples/docs/linkedin.md'"),
        ("llamaindex_query_engine.py", "sources: ['nvidia"),
        ("compressor.py", "-headquarter_in-> #"),
        ("custom_extractor.py", "-subsidiary_of->"),
    ],
)
def test_examples_run(script: str, expected: str) -> None:
    out = run(script)
    assert expected in out


def test_notebook_runs() -> None:
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(EXAMPLES / "notebook.ipynb", as_version=4)
    NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(EXAMPLES)}},
    ).execute()
    outputs = [
        o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
    ]
    html = [o["data"]["text/html"] for o in outputs if "data" in o and "text/html" in o["data"]]
    assert any("<svg" in h and "Mellanox" in h for h in html)
    (table,) = [h for h in html if h.startswith("<table><tr><th>fact")]
    assert "<td>nvidia.md</td>" in table  # ids relative to the docs folder
    texts = [o["data"]["text/plain"] for o in outputs if "data" in o and "text/plain" in o["data"]]
    report = next(t for t in texts if t.startswith("IngestReport("))
    assert "MergeRecord" not in report and report.endswith("merges=<" + report.split("<")[-1])


def test_compressor_example_keeps_its_answer() -> None:
    # the example's own question is answered by microsoft.md ("Redmond")
    out = run("compressor.py")
    assert "Redmond" in out and "tokens of chunks ->" in out
