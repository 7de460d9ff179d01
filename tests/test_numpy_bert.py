"""Questions embedded in NumPy: the torch model's vectors, and no torch on the query path."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import noema
from noema.resources import resolve_embedding_model
from noema.vectors._numpy_bert import NumpyBert, UnsupportedModel, read_safetensors
from noema.vectors.embed import query_embedding

ROOT = Path(__file__).parent.parent
# 12 questions from each benchmark (the shortest, the longest, ten drawn), with their sources
SAMPLE = json.loads((Path(__file__).parent / "data" / "benchmark_questions.json").read_text())
QUESTIONS = [q for questions in SAMPLE["questions"].values() for q in questions]
AWKWARD = [
    "Who founded Google?",
    "  WHO   founded\tGOOGLE?  ",  # case and spacing: the tokenizer lower-cases and splits
    "Qui a fondé Zoë's café à Besançon ? 北京大学 — ünïcödé",
    "What did the company do " * 80,  # past the model's 256 tokens: truncated as torch does
    "?",
]


@pytest.fixture(scope="module")
def encoder() -> NumpyBert:
    return NumpyBert.from_folder(Path(resolve_embedding_model("all-MiniLM-L6-v2")))


@pytest.fixture(scope="module")
def exact() -> noema.SentenceTransformerEmbedder:
    return noema.SentenceTransformerEmbedder(precision="float32")


@pytest.mark.parametrize(
    "texts",
    [pytest.param(QUESTIONS, id="benchmark-questions"), pytest.param(AWKWARD, id="awkward")],
)
def test_vectors_match_the_torch_model(
    encoder: NumpyBert,
    exact: noema.SentenceTransformerEmbedder,
    embedder: noema.SentenceTransformerEmbedder,
    texts: list[str],
) -> None:
    """Against torch in float32 the same arithmetic (rounding apart); against the embedder that
    built the bases (bfloat16 on a CPU that has it) what its own queries matched before."""
    vectors = encoder.embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (len(texts), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert (vectors * exact.embed(texts)).sum(axis=1).min() >= 0.99999
    assert (vectors * embedder.embed(texts)).sum(axis=1).min() >= 0.9999


def test_a_vector_depends_on_the_texts_beside_it_only_by_rounding(encoder: NumpyBert) -> None:
    """Texts embedded together share each product but attend only to themselves: a text's
    vector is its vector alone, to float32's rounding, whatever is beside it."""
    together = encoder.embed(AWKWARD)
    alone = np.vstack([encoder.embed([text]) for text in AWKWARD])
    np.testing.assert_allclose(together, alone, atol=1e-6)
    reversed_ = encoder.embed(AWKWARD[::-1])[::-1]
    np.testing.assert_allclose(reversed_, alone, atol=1e-6)
    assert (together * alone).sum(axis=1).min() >= 0.9999999


def test_the_embedder_embeds_queries_in_numpy(
    embedder: noema.SentenceTransformerEmbedder, encoder: NumpyBert
) -> None:
    np.testing.assert_array_equal(
        embedder.embed_queries(QUESTIONS[:3]), encoder.embed(QUESTIONS[:3])
    )
    assert embedder.embed_queries([]).shape == (0, 384)


def test_an_embedder_without_embed_queries_embeds_questions_with_embed(
    embedder: noema.SentenceTransformerEmbedder,
) -> None:
    from tests.conftest import CountingEmbedder

    counting = CountingEmbedder(embedder)
    query_embedding(counting)(["Who founded Google?"])
    assert counting.calls == [["Who founded Google?"]]
    assert query_embedding(embedder) == embedder.embed_queries


def test_a_model_without_a_fast_tokenizer_falls_back_to_torch_with_a_warning(
    tmp_path: Path, embedder: noema.SentenceTransformerEmbedder
) -> None:
    folder = Path(shutil.copytree(resolve_embedding_model("all-MiniLM-L6-v2"), tmp_path / "m"))
    (folder / "tokenizer.json").unlink()  # the slow tokenizer's vocab.txt still serves torch
    other = noema.SentenceTransformerEmbedder(str(folder))
    with pytest.warns(RuntimeWarning, match=r"embedded with torch .*tokenizer\.json is missing"):
        vectors = other.embed_queries(["Who founded Google?"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per model and process
        again = other.embed_queries(["Who founded Google?"])
    np.testing.assert_array_equal(vectors, again)
    assert (vectors * embedder.embed(["Who founded Google?"])).sum() > 0.9999


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        pytest.param({"config.json": {"hidden_act": "relu"}}, "only .'bert', 'gelu'", id="act"),
        pytest.param(
            {"1_Pooling/config.json": {"pooling_mode_cls_token": True}}, "pools by", id="pool"
        ),
        pytest.param(
            {"config_sentence_transformers.json": {"default_prompt_name": "query"}},
            "prompt",
            id="prompt",
        ),
    ],
)
def test_what_numpy_does_not_compute_is_refused(
    tmp_path: Path, edit: dict[str, dict[str, object]], message: str
) -> None:
    folder = Path(shutil.copytree(resolve_embedding_model("all-MiniLM-L6-v2"), tmp_path / "m"))
    for name, changes in edit.items():
        path = folder / name
        path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))
    with pytest.raises(UnsupportedModel, match=message):
        NumpyBert.from_folder(folder)


def test_a_truncated_weights_file_is_refused(tmp_path: Path) -> None:
    source = Path(resolve_embedding_model("all-MiniLM-L6-v2")) / "model.safetensors"
    cut = tmp_path / "model.safetensors"
    cut.write_bytes(source.read_bytes()[: 1 << 20])
    with pytest.raises(UnsupportedModel, match="lies outside the file"):
        read_safetensors(cut)
    with pytest.raises(UnsupportedModel, match="missing or not a safetensors file"):
        read_safetensors(tmp_path / "absent.safetensors")


# What a process that only answers questions imports: no torch, sentence-transformers or
# transformers (5 s of a cold query), through the library, warm_up (noema serve's start), both
# adapters and the CLI's query.
NO_TORCH = """
import sys
import noema
from noema_langchain import NoemaRetriever as LangChainRetriever
from noema_llamaindex import NoemaRetriever as LlamaIndexRetriever

kb = noema.KnowledgeBase.load(sys.argv[1])
assert "Larry Page" in kb.retrieve("Who founded Google?", format="natural_language").text
noema.warm_up(kb)
assert LangChainRetriever(knowledge_base=sys.argv[1]).invoke("Who founded Google?")
assert LlamaIndexRetriever(sys.argv[1]).retrieve("Who founded Google?")
heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)
print("HEAVY", heavy)
"""


def test_answering_questions_never_imports_torch(make_kb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bundle = tmp_path / "kb.noema"
    kb = make_kb()
    kb.ingest(["Larry Page founded Google in 1998.", "Jensen Huang founded Nvidia."])
    kb.save(bundle)
    run = subprocess.run(
        [sys.executable, "-c", NO_TORCH, str(bundle)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert "HEAVY []" in run.stdout, run.stdout + run.stderr
    assert "RuntimeWarning" not in run.stderr
    query = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "noema",
            "query",
            str(bundle),
            "Who founded Nvidia?",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert "Jensen Huang" in query.stdout
    imported = {line.split("|")[-1].strip() for line in query.stderr.splitlines() if "|" in line}
    assert not imported & {"torch", "sentence_transformers", "transformers"}
