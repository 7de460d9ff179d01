"""The embedder: precision options give the same vectors to within bfloat16 rounding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import noema
from noema.embed import cpu_has_bfloat16

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
