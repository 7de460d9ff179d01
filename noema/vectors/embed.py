"""Turning texts into L2-normalized float32 vectors, behind a small protocol."""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args, runtime_checkable

import numpy as np
import numpy.typing as npt

from noema.errors import MissingResourceError, OptionError
from noema.resources import (
    DEFAULT_EMBEDDING_MODEL,
    embedding_dimension,
    installed_embedding_model,
    load_embedding_model,
)

if TYPE_CHECKING:
    from noema.vectors._numpy_bert import NumpyBert

__all__ = [
    "Embedder",
    "SentenceTransformerEmbedder",
    "Vectors",
    "current_embedding_stage",
    "embedding_progress",
    "embedding_stage",
    "query_embedding",
]

Vectors = npt.NDArray[np.float32]
Precision = Literal["auto", "float32", "bfloat16"]
PRECISIONS: tuple[str, ...] = get_args(Precision)


# Texts per model.encode call: progress is reported between calls (about 1 s of work each).
EMBED_GROUP = 512


class _Counter:
    """Texts embedded so far and texts known to embed, across the calls of one stage."""

    def __init__(self, callback: Callable[[int, int], None]) -> None:
        self.callback = callback
        self.done = 0
        self.total = 0


_PROGRESS: ContextVar[_Counter | None] = ContextVar("noema_embedding_progress", default=None)


@contextmanager
def embedding_progress(callback: Callable[[int, int], None] | None) -> Iterator[None]:
    """While active (in this thread or task), :class:`SentenceTransformerEmbedder` calls
    ``callback(done, total)`` as it embeds: texts embedded so far and texts known so far, a
    total that grows when one embedding call follows another (facts, then sentences). Other
    embedders report nothing. A context variable, not an attribute, because one embedder is
    shared by every knowledge base and thread of a process."""
    if callback is None:
        yield
        return
    token = _PROGRESS.set(_Counter(callback))
    try:
        yield
    finally:
        _PROGRESS.reset(token)


_STAGE: ContextVar[str] = ContextVar("noema_embedding_stage", default="texts")


@contextmanager
def embedding_stage(name: str) -> Iterator[None]:
    """Names what the embedding calls inside are for (``"names"``, ``"facts"``,
    ``"sentences"``), so a progress callback can say which stage it is counting
    (:func:`current_embedding_stage`): one ingest embeds names while it merges each batch, then
    facts, then sentences, and bars that all said "embedding" read as one stage restarting."""
    token = _STAGE.set(name)
    try:
        yield
    finally:
        _STAGE.reset(token)


def current_embedding_stage() -> str:
    """The stage :func:`embedding_stage` named here (``"texts"`` outside any)."""
    return _STAGE.get()


@runtime_checkable
class Embedder(Protocol):
    """What Noema needs from an embedding model.

    ``embed`` returns one L2-normalized float32 row per text, so inner product is cosine
    similarity. ``name`` is recorded in bundles and checked when they are loaded. An embedder
    may also have ``embed_queries``, the same contract for the texts a retrieval embeds (its
    question and bridge searches), when it embeds those another way (see
    :func:`query_embedding`).
    """

    name: str

    @property
    def dimension(self) -> int:
        """Length of each vector."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors for ``texts``, shape ``(len(texts), dimension)``."""
        ...


class SentenceTransformerEmbedder:
    """A sentence-transformers model; ``all-MiniLM-L6-v2`` loads from the packaged copy offline.

    Args:
        model: a sentence-transformers name or local path.
        batch_size: texts per forward pass (fact texts are short: 32 measured fastest).
        precision: ``"auto"`` computes in bfloat16 on a CPU with native bfloat16 instructions
            (AVX-512 BF16 or AMX) and in float32 elsewhere; ``"float32"`` or ``"bfloat16"``
            force one. On all-MiniLM-L6-v2, bfloat16 embeds fact texts about 1.7 times faster
            with vectors whose cosine to the float32 ones is above 0.9999, so a bundle built
            either way is queried the same. The environment variable ``NOEMA_PRECISION``
            (``"float32"`` or ``"bfloat16"``) decides ``"auto"`` instead of the CPU, in every
            process that inherits it (CLI, Ray workers): how a test run exercises the other
            kind of CPU's path.
        allow_download: whether a model name that is not installed may be fetched from the
            Hugging Face Hub (``False``: the local cache only, no network). Opening a bundle
            sets it to ``False`` unless asked otherwise: a stranger's manifest names the model.

    Example:
        >>> embedder = SentenceTransformerEmbedder()
        >>> embedder.embed(["Google", "Alphabet"]).shape
        (2, 384)
    """

    def __init__(
        self,
        model: str = DEFAULT_EMBEDDING_MODEL,
        *,
        batch_size: int = 32,
        precision: Precision = "auto",
        allow_download: bool = True,
    ) -> None:
        if precision not in PRECISIONS:
            raise OptionError(
                f"precision must be one of {', '.join(map(repr, PRECISIONS))}, got {precision!r}"
            )
        # checked here, not when the first text is embedded: a build parses every document first
        if not isinstance(model, str) or not model.strip():
            raise OptionError(
                "embedding_model must name a sentence-transformers model or a local path, got "
                f"{model!r}; the default is {DEFAULT_EMBEDDING_MODEL!r}"
            )
        self.name = model
        self.batch_size = batch_size
        self.allow_download = allow_download
        self.precision: Precision = precision
        # Hugging Face fast tokenizers raise "Already borrowed" when one instance is used from
        # two threads at once; the model itself already uses every core, so calls take turns.
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        """Length of each vector, read from the model's files when they say it (without loading
        the model), else from the model."""
        return embedding_dimension(self.name, allow_download=self.allow_download)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; repeated texts are embedded once."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        model = load_embedding_model(self.name, allow_download=self.allow_download)
        bfloat16 = _uses_bfloat16(model, self.precision)
        if bfloat16:
            model = _with_bfloat16_linears(model)
        # longest first, as the model batches them (least padding), in groups of whole batches
        # so progress can be told between groups; the groups are the same with or without a
        # progress callback, so the vectors are too
        order = sorted(range(len(unique)), key=lambda n: -len(unique[n]))
        counter = _PROGRESS.get()
        if counter is not None:
            counter.total += len(unique)
            counter.callback(counter.done, counter.total)
        group = max(EMBED_GROUP // self.batch_size, 1) * self.batch_size
        vectors: Vectors | None = None  # sized by the first group: no dimension lookup per call
        for start in range(0, len(order), group):
            chosen = order[start : start + group]
            with self._lock, _bfloat16_autocast() if bfloat16 else nullcontext():
                if len(chosen) <= self.batch_size and _plain(model):
                    encoded = _one_pass(model, [unique[n] for n in chosen])
                else:
                    encoded = model.encode(
                        [unique[n] for n in chosen],
                        batch_size=self.batch_size,
                        convert_to_numpy=True,
                        normalize_embeddings=False,
                        show_progress_bar=False,
                    ).astype(np.float32, copy=False)
            if vectors is None:
                vectors = np.empty((len(unique), encoded.shape[1]), dtype=np.float32)
            vectors[chosen] = encoded
            if counter is not None:
                counter.done += len(chosen)
                counter.callback(counter.done, counter.total)
        assert vectors is not None  # texts is not empty
        # normalized here, in float32, whatever precision the model ran in (in bfloat16 the
        # model's own normalization would leave norms a little off 1)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        if len(unique) == len(texts):
            return np.ascontiguousarray(vectors)
        row = {text: n for n, text in enumerate(unique)}
        return np.ascontiguousarray(vectors[[row[t] for t in texts]])

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Embed the texts of a retrieval (its question, its bridge searches) without torch
        when the model allows: all-MiniLM-L6-v2 and any other BERT encoder with mean pooling
        run in NumPy from the model's own files, in float32 whatever ``precision`` says (the
        vectors match the torch model's float32 ones to rounding, and the bfloat16 ones as
        :meth:`embed`'s do: cosine above 0.9999). Loading torch and sentence-transformers was
        5 s of a 6 s ``noema query``. Another model embeds with :meth:`embed`, after one
        warning that says why.

        Example:
            >>> SentenceTransformerEmbedder().embed_queries(["Who founded Google?"]).shape
            (1, 384)
        """
        encoder = _numpy_encoder(self.name)
        if encoder is None:
            return self.embed(texts)
        if not texts:
            return np.zeros((0, encoder.dimension), dtype=np.float32)
        return encoder.embed(texts)

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.name!r})"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_lock"]  # a lock does not pickle; the model is shared per process anyway
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("allow_download", True)  # pickled before the option existed
        self.__dict__.update(state)
        self._lock = threading.Lock()


def query_embedding(embedder: Embedder) -> Callable[[Sequence[str]], Vectors]:
    """What embeds a retrieval's texts for ``embedder``: its ``embed_queries`` when it has one
    (:class:`SentenceTransformerEmbedder` runs questions without torch there), else its
    ``embed``.

    Example:
        >>> query_embedding(SentenceTransformerEmbedder())(["Who founded Google?"]).shape
        (1, 384)
    """
    embed: Callable[[Sequence[str]], Vectors] = getattr(embedder, "embed_queries", embedder.embed)
    return embed


_encoder_lock = threading.Lock()


def _numpy_encoder(name: str) -> NumpyBert | None:
    """The NumPy encoder of model ``name``, made once per process and shared by every knowledge
    base; ``None`` (after one warning) when the model cannot run in NumPy."""
    if name not in _ENCODERS:
        with _encoder_lock:  # made once even when two threads ask first
            if name not in _ENCODERS:
                _ENCODERS[name] = _make_numpy_encoder(name)
    return _ENCODERS[name]


_ENCODERS: dict[str, NumpyBert | None] = {}


def _make_numpy_encoder(name: str) -> NumpyBert | None:
    from pathlib import Path

    from noema.vectors._numpy_bert import NumpyBert, UnsupportedModel

    try:
        # the files only, downloading nothing: a model not on this machine is torch's to fetch
        return NumpyBert.from_folder(Path(installed_embedding_model(name)))
    except (UnsupportedModel, MissingResourceError) as exc:
        warnings.warn(
            f"questions are embedded with torch and sentence-transformers, not NumPy: {exc}",
            RuntimeWarning,
            stacklevel=4,
        )
        return None


def resolved_precision(precision: Precision) -> Literal["float32", "bfloat16"]:
    """What ``precision`` computes in on this machine's CPU: ``"auto"`` follows
    ``NOEMA_PRECISION`` when it is set, else whether the CPU has bfloat16 instructions.

    Raises:
        ValueError: ``NOEMA_PRECISION`` holds something else than the two precisions.
    """
    if precision != "auto":
        return precision
    forced = os.environ.get("NOEMA_PRECISION", "").strip()
    if forced in ("float32", "bfloat16"):
        return forced  # type: ignore[return-value]
    if forced and forced != "auto":
        raise OptionError(
            f"NOEMA_PRECISION must be 'auto', 'float32' or 'bfloat16', got {forced!r}"
        )
    return "bfloat16" if cpu_has_bfloat16() else "float32"


def _uses_bfloat16(model: Any, precision: Precision) -> bool:
    """bfloat16 on the CPU when asked for, or when ``auto`` and the CPU has it."""
    return model.device.type == "cpu" and resolved_precision(precision) == "bfloat16"


_copy_lock = threading.Lock()


@lru_cache(maxsize=4)
def _with_bfloat16_linears(model: Any) -> Any:
    """``model`` with its linear layers stored in bfloat16, the rest shared with it.

    Under autocast a linear layer casts its float32 weights to bfloat16 on every call, about a
    millisecond of a one-question embedding (measured on this model: 7.6 -> 6.5 ms for one
    question, 9.5 -> 8.2 ms for two). Cast once, autocast has nothing to cast and computes the
    same vectors bit for bit (tests/test_embed.py). A copy, because the float32 model stays
    what ``precision="float32"`` embeds with; only the linear weights are duplicated (about
    21 MB for all-MiniLM-L6-v2), the embeddings and norms are the same tensors.
    """
    import copy

    import torch

    with _copy_lock:
        linear = {
            id(p) for m in model.modules() if isinstance(m, torch.nn.Linear) for p in m.parameters()
        }
        shared = {id(p): p for p in model.parameters() if id(p) not in linear}
        shared.update({id(b): b for b in model.buffers()})
        clone = copy.deepcopy(model, memo=shared)
        for module in clone.modules():
            if isinstance(module, torch.nn.Linear):
                module.to(torch.bfloat16)
        return clone


def _plain(model: Any) -> bool:
    """Whether ``encode`` would only tokenize, run the modules and pool: no prompt prepended, no
    truncated dimensions (then :func:`_one_pass` computes the same vectors)."""
    return not getattr(model, "default_prompt_name", None) and not getattr(
        model, "truncate_dim", None
    )


def _one_pass(model: Any, texts: list[str]) -> Vectors:
    """The texts, longest first, through the model in one forward pass: what ``encode`` computes
    for one batch, bit for bit (tests/test_embed.py), without its per-call bookkeeping (finding
    the device from every parameter, setting every module to eval mode), which is about 2 ms of
    a question's 11-13 ms here, and a query embeds twice."""
    import torch

    if model.training:
        model.eval()
    tokenize = getattr(model, "preprocess", None) or model.tokenize
    features = tokenize(texts)
    features = {k: v.to(model.device) if hasattr(v, "to") else v for k, v in features.items()}
    with torch.inference_mode():
        vectors = model.forward(features)["sentence_embedding"]
    return np.asarray(vectors.float().cpu().numpy(), dtype=np.float32)


def _bfloat16_autocast() -> AbstractContextManager[Any]:
    import torch

    return torch.autocast("cpu", dtype=torch.bfloat16)


@lru_cache(maxsize=1)
def cpu_has_bfloat16() -> bool:
    """True when the CPU computes bfloat16 natively; elsewhere it is emulated, and slower."""
    import torch

    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in checks)
