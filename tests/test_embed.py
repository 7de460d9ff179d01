"""The embedder: precision options give the same vectors to within bfloat16 rounding."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pytest

import noema
from noema.vectors.embed import cpu_has_bfloat16

TEXTS = [
    "#1 Larry Page :PERSON\n#2 Google :ORG\n#1 -found-> #2",
    "#1 Nvidia :ORG\n#2 Mellanox :ORG\n#1 -acquire-> #2",
    "Who founded the company that acquired Mellanox?",
    "A longer text, so that one batch holds texts of different lengths and padding is exercised.",
]


@pytest.fixture(scope="module")
def exact() -> noema.SentenceTransformerEmbedder:
    return noema.SentenceTransformerEmbedder(precision="float32")


def test_bfloat16_vectors_match_float32(exact: noema.SentenceTransformerEmbedder) -> None:
    fast = noema.SentenceTransformerEmbedder(precision="bfloat16").embed(TEXTS)
    reference = exact.embed(TEXTS)
    assert fast.dtype == np.float32 and fast.shape == reference.shape
    np.testing.assert_allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-6)
    assert (fast * reference).sum(axis=1).min() > 0.999


def test_auto_is_one_of_the_two(
    exact: noema.SentenceTransformerEmbedder, embedder: noema.SentenceTransformerEmbedder
) -> None:
    assert embedder.precision == "auto"
    # what the CPU reports: bfloat16 needs AVX512-BF16 or AMX (isinstance(bool) could not fail)
    flags = Path("/proc/cpuinfo").read_text().split() if Path("/proc/cpuinfo").exists() else []
    if flags:
        assert cpu_has_bfloat16() == bool({"avx512_bf16", "amx_tile"} & set(flags))
    cosine = (embedder.embed(TEXTS) * exact.embed(TEXTS)).sum(axis=1)
    assert cosine.min() > 0.999


def test_unknown_precision_is_refused() -> None:
    with pytest.raises(ValueError, match="precision must be one of 'auto', 'float32', 'bfloat16'"):
        noema.SentenceTransformerEmbedder(precision="int8")  # type: ignore[arg-type]


def test_embedding_reports_progress_without_changing_the_vectors(
    embedder: noema.SentenceTransformerEmbedder,
) -> None:
    from noema.vectors.embed import EMBED_GROUP, embedding_progress

    texts = [
        f"Company number {n} was founded" + " in a year" * (n % 7) for n in range(EMBED_GROUP + 40)
    ]
    seen: list[tuple[int, int]] = []
    with embedding_progress(lambda done, total: seen.append((done, total))):
        reported = embedder.embed(texts)
    assert seen == [(0, len(texts)), (EMBED_GROUP, len(texts)), (len(texts), len(texts))]
    assert np.array_equal(reported, embedder.embed(texts))


def test_ingest_reports_the_embedding_stage(
    embedder: noema.SentenceTransformerEmbedder, extractor
) -> None:  # type: ignore[no-untyped-def]
    kb = noema.KnowledgeBase(embedder=embedder, extractor=extractor)
    seen: list[tuple[int, int]] = []
    kb.ingest(
        ["Larry Page founded Google.", "Jensen Huang founded Nvidia."],
        embed_progress=lambda done, total: seen.append((done, total)),
    )
    # the facts, then the sentences: the total grows, and the stage ends with everything done
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] >= len(kb.graph.relations) + 2
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_linears_cast_once_compute_what_autocast_computes(
    exact: noema.SentenceTransformerEmbedder,
) -> None:
    """The bfloat16 path runs a copy whose linear layers are stored in bfloat16; under
    autocast that gives the very vectors autocast over the float32 model gives, and the
    float32 model is left in float32 for ``precision="float32"``."""
    import torch

    from noema.resources import load_embedding_model
    from noema.vectors.embed import _bfloat16_autocast

    fast = noema.SentenceTransformerEmbedder(precision="bfloat16").embed(TEXTS)
    model = load_embedding_model(exact.name)
    with _bfloat16_autocast():
        reference = model.encode(TEXTS, convert_to_numpy=True).astype(np.float32)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    np.testing.assert_array_equal(fast, reference)
    assert {p.dtype for p in model.parameters()} == {torch.float32}


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_a_call_within_one_batch_embeds_what_encode_embeds(precision: str) -> None:
    """A query's few texts skip ``encode``'s per-call bookkeeping (one forward pass of their own);
    the vectors must stay those ``encode`` gives, bit for bit, or a base built through
    ``encode`` would be searched with slightly different questions."""
    from noema.resources import load_embedding_model
    from noema.vectors.embed import _bfloat16_autocast, _with_bfloat16_linears

    embedder = noema.SentenceTransformerEmbedder(precision=precision, batch_size=4)  # type: ignore[arg-type]
    model = load_embedding_model(embedder.name)
    if precision == "bfloat16":
        model = _with_bfloat16_linears(model)
    for texts in (TEXTS[2:3], TEXTS[:2], TEXTS, [*TEXTS, "Mellanox"]):  # the last: two batches
        with _bfloat16_autocast() if precision == "bfloat16" else contextlib.nullcontext():
            reference = model.encode(texts, batch_size=4, convert_to_numpy=True)
        reference = reference.astype(np.float32)
        reference /= np.linalg.norm(reference, axis=1, keepdims=True)
        np.testing.assert_array_equal(embedder.embed(texts), reference)
