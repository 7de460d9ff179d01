"""Opening a bundle through graph.columns against through graph.json: time and identical results.

    python benchmarks/hotpotqa.py --questions 200 --bundle pool.noema   # writes the pool's bundle
    python benchmarks/open_paths.py pool.noema --questions 200

The same bundle is opened as it is (its graph read from ``graph.columns``) and with
``graph.columns`` removed (its graph parsed from ``graph.json``, as a bundle of schema 3 or
older is), each in a fresh process after the models are loaded, alternating for ``--rounds``;
then both are asked the HotpotQA questions in every format and their results compared: text,
fact ids and every fact's score must be identical.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import data_file, machine, print_table, timer  # noqa: E402

FORMATS = ("notation", "natural_language", "sentences")


def without_columns(bundle: Path, target: Path) -> Path:
    """``bundle`` with graph.columns removed from the zip and the manifest."""
    with zipfile.ZipFile(bundle) as src, zipfile.ZipFile(target, "w") as out:
        manifest = json.loads(src.read("manifest.json"))
        del manifest["members"]["graph.columns"]
        out.writestr("manifest.json", json.dumps(manifest))
        for info in src.infolist():
            if info.filename not in ("manifest.json", "graph.columns"):
                out.writestr(info, src.read(info.filename), compress_type=info.compress_type)
    return target


def open_time(bundle: str) -> float:
    """Run in a fresh process: seconds to open ``bundle`` once the models are loaded."""
    import noema

    embedder = noema.SentenceTransformerEmbedder()
    embedder.embed(["warm up"])
    with timer() as took:
        noema.KnowledgeBase.load(bundle, embedder=embedder)
    return took[0]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("bundle", nargs="?")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--open-time", help=argparse.SUPPRESS)  # the fresh process's entry point
    args = parser.parse_args()
    if args.open_time:
        print(json.dumps(open_time(args.open_time)))
        return 0
    if not args.bundle:
        parser.error("give the bundle to open")
    import noema

    with tempfile.TemporaryDirectory() as tmp:
        paths = {
            "graph.columns": Path(args.bundle),
            "graph.json": without_columns(Path(args.bundle), Path(tmp) / "json.noema"),
        }
        times: dict[str, list[float]] = {name: [] for name in paths}
        for _ in range(args.rounds):
            for name, path in paths.items():
                done = subprocess.run(
                    [sys.executable, __file__, "--open-time", str(path)],
                    check=True,
                    capture_output=True,
                    text=True,
                    env={**os.environ, "HF_HUB_OFFLINE": "1"},
                )
                times[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
        embedder = noema.SentenceTransformerEmbedder()
        kbs = {n: noema.KnowledgeBase.load(p, embedder=embedder) for n, p in paths.items()}
        questions = [
            json.loads(line)["question"]
            for line in data_file("hotpotqa/hotpotqa_dev_300.jsonl").read_text().splitlines()
        ][: args.questions]
        same = {fmt: 0 for fmt in FORMATS}
        digests = {name: hashlib.sha256() for name in paths}
        for question in questions:
            for fmt in FORMATS:
                results = {n: kb.retrieve(question, format=fmt) for n, kb in kbs.items()}
                scored = {
                    n: (r.text, r.fact_ids, [(m.relation_id, m.similarity) for m in r.fact_matches])
                    for n, r in results.items()
                }
                for n, value in scored.items():
                    digests[n].update(repr(value).encode())
                first, second = scored.values()
                same[fmt] += first == second
    print(f"Opening through graph.columns and graph.json ({machine()}; {args.bundle})\n")
    print_table(
        ["path", "open (fresh process, after the models)", "results digest"],
        [
            [n, " / ".join(f"{t:.2f} s" for t in times[n]), digests[n].hexdigest()[:16]]
            for n in paths
        ],
    )
    print()
    print_table(
        ["format", "questions", "identical (text, fact ids, scores)"],
        [[fmt, len(questions), same[fmt]] for fmt in FORMATS],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
