"""noema.warmup: what a server loads before it answers, and what a query never loads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import noema
from noema.warmup import warm_up

EXAMPLES = Path(__file__).parent.parent / "examples" / "docs"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

# Runs a command in a fresh process and reports what was loaded when the server would start
# answering (``run_stdio`` stands in for the transport only: nothing is served).
_LOADED_WHEN_READY = """
import json, sys
import noema.serve
from noema.cli import main
from noema.resources import _ENCODINGS
from noema.vectors.embed import _ENCODERS

seen = {}

def ready(server):
    seen["spacy"] = "spacy" in sys.modules
    seen["torch"] = "torch" in sys.modules
    seen["query_encoder"] = len(_ENCODERS)
    seen["encodings"] = len(_ENCODINGS)

noema.serve.run_stdio = ready
code = main(sys.argv[1:])
seen.setdefault("spacy", "spacy" in sys.modules)
seen.setdefault("torch", "torch" in sys.modules)
seen.setdefault("query_encoder", len(_ENCODERS))
print(json.dumps({"code": code, **seen}))
"""


def _loaded(*argv: str) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", _LOADED_WHEN_READY, *argv],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_a_read_only_server_is_warm_before_it_answers_and_never_loads_spacy(
    bundle: Path,
) -> None:
    # the models loaded in a thread beside the handshake (the first retrieve waited for them),
    # and the spaCy pipeline loaded too, though a read-only server never parses; questions are
    # embedded in NumPy, so torch never loads either
    seen = _loaded("serve", str(bundle))
    assert seen == {"code": 0, "spacy": False, "torch": False, "query_encoder": 1, "encodings": 1}


def test_a_server_that_ingests_also_loads_spacy_before_it_answers(
    bundle: Path, tmp_path: Path
) -> None:
    seen = _loaded("serve", str(bundle), "--allow-ingest", "--root", str(tmp_path))
    assert seen["spacy"] is True and seen["query_encoder"] == 1


def test_a_query_loads_the_query_encoder_and_neither_spacy_nor_torch(bundle: Path) -> None:
    seen = _loaded("query", str(bundle), "Who founded Google?")
    assert seen == {"code": 0, "spacy": False, "torch": False, "query_encoder": 1}


def test_warm_up_changes_nothing(company_kb: noema.KnowledgeBase) -> None:
    before = company_kb.to_bytes()
    warm_up(company_kb, parse=True)
    assert company_kb.to_bytes() == before
    empty = noema.KnowledgeBase(embedder=company_kb.embedder, extractor=company_kb.extractor)
    warm_up(empty)  # nothing to search: the model is still loaded, nothing fails
    assert not empty.graph.documents
