"""A BERT sentence encoder run in NumPy from the model's own files, so a question is embedded
without importing torch (5 s of a cold ``noema query`` that retrieves in 0.04 s).

It runs the models shaped as all-MiniLM-L6-v2 is: a sentence-transformers folder whose modules
are a BERT ``Transformer`` (GELU, absolute positions), a mean ``Pooling`` and optionally a
``Normalize``, with its weights in float32 in ``model.safetensors`` and a fast tokenizer in
``tokenizer.json``. The weights are the ones torch loads; the forward pass is the same
arithmetic in float32, so the vectors match torch's float32 ones to rounding (cosine above
0.99999; ``tests/test_numpy_bert.py`` holds it on real questions). :meth:`NumpyBert.from_folder`
raises :class:`UnsupportedModel` saying why for any other folder; the caller then embeds with
torch.

Several texts go through each product together (a short text's cost is mostly reading the
weights: three questions take 0.6 of the time one at a time), but each attends only to its own
tokens, with no padding and no mask, so a text's vector is the one it has alone to float32's
rounding (BLAS may block a longer product otherwise: 2e-7 apart at most beside a 256-token text;
``tests/test_numpy_bert.py``). A retrieval embeds its question alone and the further queries
one batch at a time, each batch set by the question, so its results stay deterministic. The
tokenizer is set up once and then only read, so threads may share one encoder without a lock.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from noema.vectors._blas import one_blas_thread

__all__ = ["NumpyBert", "UnsupportedModel"]

Array = npt.NDArray[np.float32]


class UnsupportedModel(Exception):
    """The folder holds no model :class:`NumpyBert` can run; the message says what is missing."""


class NumpyBert:
    """A BERT encoder with mean pooling, in NumPy.

    Example:
        >>> from noema.resources import resolve_embedding_model
        >>> encoder = NumpyBert.from_folder(Path(resolve_embedding_model("all-MiniLM-L6-v2")))
        >>> encoder.embed(["Who founded Google?"]).shape
        (1, 384)
    """

    def __init__(
        self, weights: dict[str, Array], tokenizer: Any, config: dict[str, Any], lowercase: bool
    ) -> None:
        self.weights = weights
        self.tokenizer = tokenizer
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.epsilon = float(config.get("layer_norm_eps", 1e-12))
        self.lowercase = lowercase
        self.dimension = int(config["hidden_size"])

    @classmethod
    def from_folder(cls, folder: Path) -> NumpyBert:
        """The encoder of the sentence-transformers model in ``folder``.

        Raises:
            UnsupportedModel: a file is missing, or the model is not a BERT encoder with mean
                pooling in float32 (the message names the file and what it holds).
        """
        config = _read_json(folder / "config.json")
        _check_architecture(folder, config)
        sentence = _read_json(folder / "sentence_bert_config.json", required=False)
        lowercase = bool(sentence.get("do_lower_case", False))
        positions = int(config.get("max_position_embeddings", 512))
        length = min(int(sentence.get("max_seq_length") or positions), positions)
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - a dependency of sentence-transformers
            raise UnsupportedModel("the tokenizers library is not installed") from exc
        if not (folder / "tokenizer.json").is_file():
            raise UnsupportedModel(f"{folder / 'tokenizer.json'} is missing (no fast tokenizer)")
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # as sentence-transformers calls it: truncated to the model's length, never padded
        # (the file may ask for a fixed padding; each text runs alone here)
        tokenizer.enable_truncation(length)
        tokenizer.no_padding()
        weights = read_safetensors(folder / "model.safetensors")
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""
        weights = {name.removeprefix(prefix): array for name, array in weights.items()}
        _check_weights(weights, config)
        return cls(weights, tokenizer, config, lowercase)

    def embed(self, texts: Sequence[str]) -> Array:
        """One mean-pooled row per text, L2-normalized, float32."""
        rows = np.empty((len(texts), self.dimension), dtype=np.float32)
        # one text's products are too small to share: a second BLAS thread only spins, and on
        # a busy machine it made a question 30 times slower (0.42 s against 0.014 s)
        with one_blas_thread():
            segments = [
                np.asarray(
                    self.tokenizer.encode(text.lower() if self.lowercase else text).ids,
                    dtype=np.int64,
                )
                for text in texts
            ]
            if segments:
                hidden = self._forward(segments)
                bounds = np.cumsum([0, *(len(ids) for ids in segments)])
                for n in range(len(segments)):
                    rows[n] = hidden[bounds[n] : bounds[n + 1]].mean(axis=0)
        rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
        return rows

    def _forward(self, segments: Sequence[npt.NDArray[np.int64]]) -> Array:
        """The last hidden states of the texts' tokens, one text after another, shape
        ``(tokens, dimension)``. The texts go through each layer's products together (the
        weights are read once for all of them, which is most of a short text's cost), and
        attend only within themselves."""
        w = self.weights
        x = np.concatenate(
            [
                w["embeddings.word_embeddings.weight"][ids]
                + w["embeddings.position_embeddings.weight"][: len(ids)]
                for ids in segments
            ]
        )
        x = self._norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        width = x.shape[1]
        size = width // self.heads
        scale = np.float32(1 / math.sqrt(size))
        bounds = np.cumsum([0, *(len(ids) for ids in segments)])
        for layer in range(self.layers):
            at = f"encoder.layer.{layer}."
            q, k, v = (
                self._linear(x, f"{at}attention.self.{part}") for part in ("query", "key", "value")
            )
            context = np.empty_like(x)
            for start, end in zip(bounds[:-1], bounds[1:], strict=True):
                tokens = end - start
                qs, ks, vs = (
                    m[start:end].reshape(tokens, self.heads, size).transpose(1, 0, 2)
                    for m in (q, k, v)
                )
                scores = (qs @ ks.transpose(0, 2, 1)) * scale
                scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
                scores /= scores.sum(axis=-1, keepdims=True)
                context[start:end] = (scores @ vs).transpose(1, 0, 2).reshape(tokens, width)
            attended = self._linear(context, f"{at}attention.output.dense") + x
            x = self._norm(attended, f"{at}attention.output.LayerNorm")
            inner = _gelu(self._linear(x, f"{at}intermediate.dense"))
            x = self._norm(self._linear(inner, f"{at}output.dense") + x, f"{at}output.LayerNorm")
        return x

    def _linear(self, x: Array, name: str) -> Array:
        # the stored (out, in) matrix transposed as a view: BLAS reads it in place, no copy
        product: Array = x @ self.weights[f"{name}.weight"].T + self.weights[f"{name}.bias"]
        return product

    def _norm(self, x: Array, name: str) -> Array:
        centered = x - x.mean(axis=-1, keepdims=True)
        variance = (centered * centered).mean(axis=-1, keepdims=True)
        scaled = centered / np.sqrt(variance + np.float32(self.epsilon))
        normed: Array = scaled * self.weights[f"{name}.weight"] + self.weights[f"{name}.bias"]
        return normed


def _gelu(x: Array) -> Array:
    """BERT's exact GELU, ``x * Phi(x)``, with erf from Abramowitz and Stegun 7.1.26 (absolute
    error under 1.5e-7, float32's own rounding): NumPy has no erf, and SciPy's costs 0.2 s to
    import."""
    z = np.abs(x) * np.float32(1 / math.sqrt(2))
    t = 1 / (1 + np.float32(0.3275911) * z)
    poly = t * (
        np.float32(0.254829592)
        + t
        * (
            np.float32(-0.284496736)
            + t * (np.float32(1.421413741) + t * (np.float32(-1.453152027) + t * 1.061405429))
        )
    )
    erf = np.copysign(1 - poly * np.exp(-z * z), x)
    return np.asarray(x * (np.float32(0.5) * (1 + erf)), dtype=np.float32)


def read_safetensors(path: Path) -> dict[str, Array]:
    """The float32 tensors of a safetensors file, mapped from the file rather than read: reading
    all of all-MiniLM-L6-v2's 91 MB took 0.25 s of a cold query, and a question touches the rows
    of its own tokens only. The format: an 8-byte little-endian header length, a JSON header
    ``{name: {dtype, shape, data_offsets}}``, then the data; tensors of other types (BERT's
    int64 position ids) are left out.

    Raises:
        UnsupportedModel: the file is missing or not a safetensors file.
    """
    try:
        mapped = np.memmap(path, dtype=np.uint8, mode="r")
        length = int(np.frombuffer(mapped[:8].tobytes(), dtype="<u8")[0])
        header = json.loads(mapped[8 : 8 + length].tobytes())
    except (OSError, ValueError, IndexError) as exc:
        raise UnsupportedModel(f"{path} is missing or not a safetensors file ({exc})") from exc
    start = 8 + length
    tensors: dict[str, Array] = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry.get("dtype") != "F32":
            continue
        begin, end = (start + offset for offset in entry["data_offsets"])
        shape = tuple(int(n) for n in entry["shape"])
        if end > len(mapped) or (end - begin) != 4 * math.prod(shape):
            raise UnsupportedModel(f"{path}: tensor {name!r} lies outside the file")
        tensors[name] = np.frombuffer(
            mapped, dtype="<f4", count=math.prod(shape), offset=begin
        ).reshape(shape)
    return tensors


def _read_json(path: Path, *, required: bool = True) -> dict[str, Any]:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if required:
            raise UnsupportedModel(f"{path} is missing") from None
        return {}
    except (OSError, ValueError) as exc:
        raise UnsupportedModel(f"{path} could not be read ({exc})") from exc
    if not isinstance(loaded, dict):
        raise UnsupportedModel(f"{path} holds no JSON object")
    return loaded


def _check_architecture(folder: Path, config: dict[str, Any]) -> None:
    """Refuse what this forward pass does not compute: another encoder, another activation or
    position scheme, or modules beyond a Transformer, a mean pooling and a normalization."""
    found = (
        config.get("model_type"),
        config.get("hidden_act"),
        config.get("position_embedding_type", "absolute"),
    )
    if found != ("bert", "gelu", "absolute"):
        raise UnsupportedModel(
            f"{folder / 'config.json'} describes model_type, hidden_act, position_embedding_type "
            f"{found!r}; only ('bert', 'gelu', 'absolute') runs in NumPy"
        )
    modules_path = folder / "modules.json"
    try:
        modules = json.loads(modules_path.read_text(encoding="utf-8"))
        kinds = [str(module["type"]).rsplit(".", 1)[-1] for module in modules]
        pooling = next(str(m["path"]) for m in modules if str(m["type"]).endswith("Pooling"))
    except (OSError, ValueError, KeyError, TypeError, StopIteration) as exc:
        raise UnsupportedModel(f"{modules_path} is missing or names no pooling ({exc})") from exc
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise UnsupportedModel(f"{modules_path} lists {kinds}; only Transformer, Pooling runs")
    modes = _read_json(folder / pooling / "config.json")
    chosen = sorted(k for k, v in modes.items() if k.startswith("pooling_mode_") and v is True)
    if chosen != ["pooling_mode_mean_tokens"]:
        raise UnsupportedModel(f"{folder / pooling} pools by {chosen}; only the mean runs")
    options = _read_json(folder / "config_sentence_transformers.json", required=False)
    if options.get("default_prompt_name"):
        raise UnsupportedModel(f"{folder} prepends a prompt by default")


def _check_weights(weights: dict[str, Array], config: dict[str, Any]) -> None:
    width = int(config.get("hidden_size", 0))
    names = [
        "embeddings.word_embeddings.weight",
        "embeddings.position_embeddings.weight",
        "embeddings.token_type_embeddings.weight",
        "embeddings.LayerNorm.weight",
    ]
    for layer in range(int(config.get("num_hidden_layers", 0))):
        names += [
            f"encoder.layer.{layer}.{part}.weight"
            for part in (
                "attention.self.query",
                "attention.self.key",
                "attention.self.value",
                "attention.output.dense",
                "intermediate.dense",
                "output.dense",
            )
        ]
    missing = [name for name in names if name not in weights]
    if missing or weights[names[0]].shape[1] != width:
        raise UnsupportedModel(
            f"model.safetensors lacks {missing[:3]} in float32, or its width is not {width}"
        )
