"""The key a sentence's vector is stored under, and the text it is embedded as.

Apart from the sidecar because a key is the sentence's identity wherever it is kept: the sidecar
makes it, a bundle stores its digest (:mod:`noema.storage.columns`) and makes it again on
opening, and a save checks it against the sentence's text.
"""

from __future__ import annotations

import hashlib

from noema.model.graph import SemanticGraph
from noema.model.spans import Sentence, document_title, sentence_text

__all__ = [
    "SENTENCE_RENDERING",
    "key_digest",
    "key_with_digest",
    "sentence_key",
    "sentence_text_for_embedding",
    "split_key",
]


# What a sentence vector is built from; stored in the manifest so a bundle made another way is
# re-embedded rather than mixed.
SENTENCE_RENDERING = "title: sentence, headings dropped"

_KEY_SEPARATOR = "\x1f"  # between the parts of a sentence key


def sentence_text_for_embedding(graph: SemanticGraph, sentence: Sentence) -> str:
    """The text a sentence is embedded as (see :data:`SENTENCE_RENDERING`)."""
    text = sentence_text(graph, sentence)
    title = document_title(graph, sentence.document_id)
    return f"{title}: {text}" if title else text


def sentence_key(graph: SemanticGraph, sentence: Sentence) -> str:
    """The id a sentence's vector is stored under: its span and a hash of the embedded text, so a
    document replaced under the same id never reuses a vector of its old text."""
    text = sentence_text_for_embedding(graph, sentence)
    return key_with_digest(sentence, hashlib.sha256(text.encode("utf-8")).hexdigest()[:12])


def key_with_digest(sentence: Sentence, digest: str) -> str:
    """:func:`sentence_key` of a sentence whose embedded text hashes to ``digest`` (a bundle
    stores the digest, and the key is made again from it)."""
    return _KEY_SEPARATOR.join(
        (sentence.document_id, str(sentence.start), str(sentence.end), digest)
    )


def split_key(key: str) -> Sentence | None:
    """The sentence a :func:`sentence_key` names, ``None`` when ``key`` is no such key."""
    parts = key.rsplit(_KEY_SEPARATOR, 3)
    if len(parts) != 4 or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    return Sentence(parts[0], int(parts[1]), int(parts[2]))


def key_digest(key: str) -> str:
    """The hash of the embedded text a :func:`sentence_key` ends with."""
    return key.rsplit(_KEY_SEPARATOR, 1)[1]
