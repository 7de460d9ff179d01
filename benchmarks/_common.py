"""Helpers shared by the benchmark scripts: where the data is, tables, timing and memory."""

from __future__ import annotations

import argparse
import os
import platform
import resource
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DATA = Path(
    os.environ.get("NOEMA_DATA", Path(__file__).resolve().parent.parent.parent / "shared" / "data")
)


def data_file(relative: str) -> Path:
    path = DATA / relative
    if not path.is_file():
        raise SystemExit(
            f"Error: {path} not found; set NOEMA_DATA to the folder holding ../shared/data"
        )
    return path


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine() -> str:
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


@contextmanager
def timer() -> Iterator[list[float]]:
    box = [0.0]
    start = time.perf_counter()
    try:
        yield box
    finally:
        box[0] = time.perf_counter() - start


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A Markdown table, so it can be pasted into the README as is."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [
        max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)
    ]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")


def add_embedder_options(parser: argparse.ArgumentParser) -> None:
    """--embedding-model and --precision, used for Noema and its baseline alike."""
    from noema.resources import DEFAULT_EMBEDDING_MODEL
    from noema.vectors.embed import PRECISIONS

    parser.add_argument("--embedding-model", default=DEFAULT_EMBEDDING_MODEL)
    parser.add_argument("--precision", default="auto", choices=PRECISIONS)


def embedder_from(args: argparse.Namespace) -> Any:
    """The warmed-up embedder the options ask for, and a label saying what precision it ran in."""
    import noema
    from noema.vectors.embed import cpu_has_bfloat16

    embedder = noema.SentenceTransformerEmbedder(args.embedding_model, precision=args.precision)
    embedder.embed(["warm up"])
    label = args.precision
    if label == "auto":
        label += ": bfloat16 on this CPU" if cpu_has_bfloat16() else ": float32 on this CPU"
    return embedder, label
