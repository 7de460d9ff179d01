"""The word index of the sentence sidecar: BM25 postings of every word of its sentences, made
from their texts or read in place from the ``sentences.words`` member of a bundle.

Beside the sidecar, not in retrieval, because both a retrieval (which searches it) and a bundle
(which stores it) need it, and neither may import the other.

The scoring is Lucene's BM25 (``k1=1.5``, ``b=0.75``, idf ``ln(1 + (N - df + 0.5) / (df + 0.5))``,
no ``k1 + 1`` factor), the same as ``bm25s``'s default, over lower-cased words with accents
folded and English function words left out (:func:`words`). Each sentence is read as its
document's title, then its text. A posting holds its sentence's row and the word's BM25 weight in
it, so a query adds a few slices into one score array, and a stored index scores exactly as the
one made from the texts.

Layout of ``sentences.words`` (every number little-endian; :func:`word_index_pieces` writes it,
:func:`read_word_index` reads it in place):

==============  ==============  ===============================================================
field           type            holds
==============  ==============  ===============================================================
magic           8 bytes         ``NOEMAWRD``
version         uint32          :data:`WORDS_VERSION`
(zero)          uint32
rows            uint64          the sentences: the sidecar's rows, in its row order (that of
                                ``sentences.bin``)
terms           uint64          the distinct words
postings        uint64          the (sentence, word) pairs
heap            uint64          the bytes of the words' text
keys            32 bytes        sha256 of the sidecar's sentence keys in row order, each
                                followed by a line feed: ties the member to the sentences
word_offsets    int64[terms+1]  where each word starts in ``heap``, the last the heap's size
starts          int64[terms+1]  where each word's postings start, the last ``postings``
rows            int32[postings] each posting's sentence row, increasing within a word
weights         float32[...]    each posting's BM25 weight
heap            bytes           the words (ASCII letters and digits), in increasing order
==============  ==============  ===============================================================

The fields follow one another with no gaps; the member's size is exactly what its counts give.
"""

from __future__ import annotations

import hashlib
import re
import struct
import unicodedata
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from noema.errors import BundleError
from noema.model.graph import SemanticGraph
from noema.model.spans import Sentence

__all__ = [
    "LEXICAL_LIMIT",
    "WORDS_VERSION",
    "WORD_SCORING",
    "LexicalIndex",
    "RowSentences",
    "read_word_index",
    "sentence_keys_digest",
    "word_index_pieces",
    "words",
]

K1 = 1.5
B = 0.75
# Up to this many sentences a sidecar has a word index: made by the first retrieval that needs
# it where no bundle stored one, and written at save. Above it, making it would hold a first
# retrieval (and a save) for seconds: 7-8 s and 0.6 GB at 500,000 sentences, measured (about a
# tenth of a save of that size, before reading the documents in place doubles it), so such a
# base searches by vector alone. Opening a bundle reads no record, so it never makes it.
LEXICAL_LIMIT = 200_000
# How the stored weights were made; a bundle whose member says otherwise has its index made
# again from the sentences rather than mixed with this version's scores.
WORD_SCORING = "bm25 k1=1.5 b=0.75 lucene idf; title and sentence; folded words, no stopwords"
WORDS_VERSION = 1
MAGIC = b"NOEMAWRD"
HEADER = struct.Struct("<8sII4Q32s")

_WORD = re.compile(r"[a-z0-9]+")
_MARKS = re.compile("[\u0300-\u036f]")  # the combining accents NFKD splits off letters
# Words that say how a question is put, not what it is about: in nearly every sentence or none.
_STOPWORD_LIST = (
    "a about above after again against all also am an and any are as at be because been before "
    "being below between both but by can could did do does doing down during each few for from "
    "further had has have having he her here hers herself him himself his how i if in into is it "
    "its itself just me more most my myself no nor not now of off on once only or other our ours "
    "ourselves out over own same she should so some such than that the their theirs them "
    "themselves then there these they this those through to too under until up very was we were "
    "what when where which while who whom whose why will with would you your yours yourself s"
)
_STOPWORDS = frozenset(_STOPWORD_LIST.split())
_WORD_BYTES = np.zeros(256, dtype=bool)
_WORD_BYTES[list(b"abcdefghijklmnopqrstuvwxyz0123456789")] = True


def words(text: str) -> list[str]:
    """The words BM25 counts: lower case, accents folded ("Zoë" is "zoe"), no function words."""
    folded = text.lower()
    if not folded.isascii():
        folded = _MARKS.sub("", unicodedata.normalize("NFKD", folded))
    return [w for w in _WORD.findall(folded) if w not in _STOPWORDS]


class LexicalIndex:
    """BM25 over a fixed list of sentences; made once, then only read (shared without locks).

    Each word's postings are one slice of two flat arrays, the sentence rows and the word's BM25
    weight in each, the words in increasing order.

        >>> from noema.model.spans import Sentence
        >>> rows = [Sentence("a", 0, 9), Sentence("b", 0, 9)]
        >>> index = LexicalIndex(rows, ["Orlin released Tallow.", "The band toured."])
        >>> index.search("When did Orlin release it?", 5)
        [(Sentence(document_id='a', start=0, end=9), 0.254366)]
    """

    def __init__(self, sentences: Sequence[Sentence], texts: Iterable[str]) -> None:
        self.sentences: Sequence[Sentence] = tuple(sentences)
        # each word numbered as it is first seen, and kept as its number: a list of every word
        # took 1.2 GB more at 500,000 sentences
        seen: dict[str, int] = {}
        numbers = array("q")
        lengths = np.zeros(len(self.sentences), dtype=np.int64)
        for row, text in enumerate(texts):
            found = words(text)
            numbers.extend([seen.setdefault(word, len(seen)) for word in found])
            lengths[row] = len(found)
        # renumbered in increasing order, as the member stores them and a stored index looks
        # them up
        listed = sorted(seen)
        rank = np.empty(len(listed), dtype=np.int64)
        rank[np.fromiter(map(seen.__getitem__, listed), np.int64, len(listed))] = np.arange(
            len(listed)
        )
        vocabulary = {word: n for n, word in enumerate(listed)}
        del seen, listed
        size = max(len(vocabulary), 1)
        terms = rank[np.frombuffer(numbers, dtype=np.int64)] if numbers else np.zeros(0, np.int64)
        del numbers
        rows = np.repeat(np.arange(len(self.sentences), dtype=np.int64), lengths)
        # one entry per (sentence, word) with its count, by sentence then word
        pairs, counts = np.unique(rows * size + terms, return_counts=True)
        self.rows, self.weights, self.starts = _postings(
            (pairs // size).astype(np.int32),
            pairs % size,
            counts.astype(np.float32),
            lengths.astype(np.float32),
            len(vocabulary),
        )
        self._vocabulary: Mapping[str, int] = vocabulary
        self._term: Callable[[str], int | None] = vocabulary.get
        self._check: Callable[[], None] | None = None
        self._stored = False
        # the digest of the sentence keys a stored index was written for
        self.keys_digest: bytes | None = None

    @classmethod
    def of_documents(
        cls, graph: SemanticGraph, by_document: Mapping[str, Sequence[Sentence]]
    ) -> LexicalIndex:
        """The index of the sentences of each document, each read as its document's title and
        its own text (one look-up of each document: a bundle read in place looks records up one
        by one)."""
        listed = [(document_id, tuple(sentences)) for document_id, sentences in by_document.items()]

        def texts() -> Iterator[str]:  # one at a time: a list of them all is held for nothing
            for document_id, sentences in listed:
                document = graph.documents[document_id]
                title = document.metadata.get("title") if document.metadata else None
                heading = title if isinstance(title, str) else ""
                text = document.text
                for sentence in sentences:
                    yield f"{heading} {text[sentence.start : sentence.end]}"

        return cls([s for _, sentences in listed for s in sentences], texts())

    def __len__(self) -> int:
        return len(self.sentences)

    @property
    def stored(self) -> bool:
        """Read from a bundle's member rather than made from the sentences."""
        return self._stored

    def vocabulary(self) -> Iterator[str]:
        """The words, in increasing order."""
        if isinstance(self._term, _StoredWords):
            return iter(self._term)
        return iter(self._vocabulary)

    def scores(self, text: str) -> npt.NDArray[np.float32]:
        """Every sentence's BM25 score for ``text`` (each distinct word counted once).

        Raises:
            BundleError: the index is read from a bundle's file, changed since it was opened,
                or its postings of a word of ``text`` are damaged.
        """
        total = np.zeros(len(self.sentences), dtype=np.float32)
        if self._check is not None:
            self._check()
        for word in dict.fromkeys(words(text)):
            term = self._term(word)
            if term is None:
                continue
            start, end = int(self.starts[term]), int(self.starts[term + 1])
            rows, weights = self.rows[start:end], self.weights[start:end]
            if self._stored:  # read where they lie: each slice checked as it is read
                _check_postings(
                    rows, weights, len(total), f"the stored word index's postings of {word!r}"
                )
            total[rows] += weights
        return total

    def search(self, text: str, k: int) -> list[tuple[Sentence, float]]:
        """The ``k`` best sentences for ``text`` with a score above 0, best first (ties in the
        sentences' order)."""
        scores = self.scores(text)
        hit = np.flatnonzero(scores > 0)
        if not len(hit) or k <= 0:
            return []
        best = hit[np.lexsort((hit, -scores[hit]))][:k]
        return [(self.sentences[int(i)], round(float(scores[i]), 6)) for i in best]

    def postings_check(self) -> Callable[[], None]:
        """The check of every posting (each row a sentence's, each weight finite), which reads
        the whole member: run with its sha256 where opening did not hash it."""

        def check() -> None:
            if self._check is not None:
                self._check()
            _check_postings(self.rows, self.weights, len(self.sentences), "its postings")

        return check


def _postings(
    rows: npt.NDArray[np.int32],
    terms: npt.NDArray[np.int64],
    counts: npt.NDArray[np.float32],
    lengths: npt.NDArray[np.float32],
    vocabulary: int,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """The postings sorted by word (rows, BM25 weights) and each word's first position."""
    n = len(lengths)
    order = np.argsort(terms, kind="stable")  # stable: within a word, rows stay in order
    rows, terms, counts = rows[order], terms[order], counts[order]
    frequency = np.bincount(terms, minlength=vocabulary)
    starts = np.zeros(vocabulary + 1, dtype=np.int64)
    np.cumsum(frequency, out=starts[1:])
    idf = np.log(1 + (n - frequency + 0.5) / (frequency + 0.5))
    average = float(lengths.mean()) if n and lengths.sum() else 1.0
    norm = K1 * (1 - B + B * lengths[rows] / average)
    weights = (idf[terms] * counts / (counts + norm)).astype(np.float32)
    return rows, weights, starts


def sentence_keys_digest(keys: Iterable[str]) -> bytes:
    """The sha256 the member holds of the sidecar's sentence keys, in row order."""
    hasher = hashlib.sha256()
    for key in keys:
        hasher.update(key.encode("utf-8"))
        hasher.update(b"\n")
    return hasher.digest()


def word_index_pieces(index: LexicalIndex, keys_digest: bytes) -> tuple[bytes | memoryview, ...]:
    """The member's bytes, as pieces written one after another (the postings as views of their
    arrays, never copied): see the module docstring."""
    listed = list(index.vocabulary())
    heap = "".join(listed).encode("ascii")
    offsets = np.zeros(len(listed) + 1, dtype="<i8")
    np.cumsum([len(word) for word in listed], out=offsets[1:])
    header = HEADER.pack(
        MAGIC,
        WORDS_VERSION,
        0,
        len(index),
        len(listed),
        len(index.rows),
        len(heap),
        keys_digest,
    )
    arrays = (
        offsets,
        np.ascontiguousarray(index.starts, dtype="<i8"),
        np.ascontiguousarray(index.rows, dtype="<i4"),
        np.ascontiguousarray(index.weights, dtype="<f4"),
    )
    return (header, *(a.data for a in arrays), heap)


def read_word_index(
    blob: bytes | memoryview,
    sentences: Sequence[Sentence],
    *,
    check: Callable[[], None] | None = None,
    postings_checked: bool = True,
) -> LexicalIndex:
    """The index a member holds, read in place over the sidecar's ``sentences`` (in row order),
    with the digest of the sentence keys it was written for (``keys_digest``). The header, the word offsets and
    the starts are checked now; every posting too where ``postings_checked`` (else the caller
    runs :meth:`LexicalIndex.postings_check` later, and each search checks the postings it
    reads). ``check``: where ``blob`` is a view of a bundle's mapped file, what to call before
    every later read of it.

    Raises:
        BundleError: saying what in the member is wrong (the caller names the member).
    """
    if len(blob) < HEADER.size:
        raise BundleError(f"holds {len(blob)} bytes, fewer than its {HEADER.size}-byte header")
    magic, version, zero, rows, terms, postings, heap_size, digest = HEADER.unpack_from(blob)
    if magic != MAGIC:
        raise BundleError(f"does not start with {MAGIC!r} (written by another tool?)")
    if version != WORDS_VERSION:
        raise BundleError(
            f"is of version {version}; this Noema reads version {WORDS_VERSION}. Upgrade Noema"
        )
    if zero != 0:
        raise BundleError("has a header field that must be 0 set")
    if rows != len(sentences):
        raise BundleError(f"indexes {rows:,} sentences, the sidecar holds {len(sentences):,}")
    size = HEADER.size + 16 * (terms + 1) + 8 * postings + heap_size
    if size != len(blob):
        raise BundleError(
            f"holds {len(blob):,} bytes; its header's counts ({terms:,} words, {postings:,} "
            f"postings, a {heap_size:,}-byte heap) take {size:,}"
        )
    at = HEADER.size
    arrays: list[Any] = []
    for dtype, count in (
        ("<i8", terms + 1),
        ("<i8", terms + 1),
        ("<i4", postings),
        ("<f4", postings),
    ):
        arrays.append(np.frombuffer(blob, dtype=dtype, count=count, offset=at))
        at += np.dtype(dtype).itemsize * count
    offsets, starts, posting_rows, weights = arrays
    heap = np.frombuffer(blob, dtype=np.uint8, count=heap_size, offset=at)
    _check_ranges(offsets, heap_size, "word offsets")
    _check_ranges(starts, postings, "starts of the postings")
    if np.any(offsets[1:] == offsets[:-1]):
        raise BundleError("lists an empty word")
    if not _WORD_BYTES[heap].all():
        raise BundleError("holds a word of other characters than ASCII letters and digits")
    if postings_checked:
        _check_postings(posting_rows, weights, rows, "has postings that")
    index = LexicalIndex.__new__(LexicalIndex)
    index.sentences = sentences
    index.rows, index.weights, index.starts = posting_rows, weights, starts
    index._vocabulary = {}
    index._term = _StoredWords(heap, offsets)
    index._check = check
    index._stored = True
    index.keys_digest = bytes(digest)
    return index


def _check_ranges(offsets: npt.NDArray[Any], end: int, what: str) -> None:
    """``offsets`` start at 0, never go back, and end at ``end``."""
    if offsets[0] != 0 or offsets[-1] != end or np.any(offsets[1:] < offsets[:-1]):
        raise BundleError(f"has {what} that do not run from 0 to {end:,} in order")


def _check_postings(
    rows: npt.NDArray[Any], weights: npt.NDArray[Any], sentences: int, what: str
) -> None:
    """Each of ``rows`` a sentence's, each of ``weights`` finite and positive; ``what``: the
    subject of the error's message."""
    if len(rows) and (int(rows.min()) < 0 or int(rows.max()) >= sentences):
        raise BundleError(f"{what} name a sentence row past the {sentences:,} sentences")
    if not np.isfinite(weights).all() or np.any(weights <= 0):
        raise BundleError(f"{what} hold a weight that is not a finite positive number")


class _StoredWords:
    """The words of a member, looked up by binary search over its heap (nothing made for every
    word on opening); called with a word, it gives the word's number or ``None``."""

    def __init__(self, heap: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]) -> None:
        self._heap, self._offsets = heap, offsets

    def _word(self, at: int) -> bytes:
        return self._heap[int(self._offsets[at]) : int(self._offsets[at + 1])].tobytes()

    def __call__(self, word: str) -> int | None:
        if not word.isascii():
            return None
        target = word.encode("ascii")
        low, high = 0, len(self._offsets) - 1
        while low < high:
            middle = (low + high) // 2
            if self._word(middle) < target:
                low = middle + 1
            else:
                high = middle
        return low if low < len(self._offsets) - 1 and self._word(low) == target else None

    def __iter__(self) -> Iterator[str]:
        return (self._word(at).decode("ascii") for at in range(len(self._offsets) - 1))


class RowSentences(Sequence[Sentence]):
    """``count`` sentences in row order, each looked up by ``sentence_of`` as it is read: a
    stored index's rows, none made on opening."""

    def __init__(self, count: int, sentence_of: Callable[[int], Sentence]) -> None:
        self._count, self._sentence_of = count, sentence_of

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, at: Any) -> Any:  # a row, or a slice of rows
        if isinstance(at, slice):
            return [self._sentence_of(row) for row in range(self._count)[at]]
        return self._sentence_of(range(self._count)[at])  # a row past the end: IndexError
