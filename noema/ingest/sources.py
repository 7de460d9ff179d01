"""Reading documents from files: text and Markdown files, folders of them, and JSONL.

A Markdown file's first ``# heading`` becomes the document's ``title`` metadata, else a bare
title line a text file opens with (a short line that ends no sentence, a blank line after it);
the extractor reads what the title names, if anything, as the document's main entity. Binary, non-UTF-8
and empty files are skipped and reported through ``on_skip``; nothing is printed.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from noema.errors import InputTypeError, NoemaError, OptionError
from noema.ingest.layout import title_line
from noema.model.names import visible_text
from noema.model.records import JSON_INTEGERS, METADATA_DEPTH, Document, json_bytes

__all__ = [
    "JSONL_SUFFIXES",
    "TEXT_SUFFIXES",
    "Source",
    "as_documents",
    "as_keyed_documents",
    "document_id",
    "documents_of",
    "read_documents",
]

TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".rst", ".text"})
JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)

SkipCallback = Callable[[str], None]


def _ignore(message: str) -> None:
    del message


def read_documents(
    paths: Sequence[str | os.PathLike[str]],
    *,
    on_skip: SkipCallback = _ignore,
    root: str | os.PathLike[str] | None = None,
) -> Iterator[Document]:
    """Documents from files and folders (searched recursively for known suffixes).

    A text file's id does not depend on how its path was spelled: it is the file's path relative
    to ``root`` (``"google.md"``, ``"reports/q3.md"``) when one is given, else ``"file:"`` and its
    resolved absolute path. JSONL lines are objects with a ``text`` field; ``id`` becomes the
    document id and every other field its metadata.

    Raises:
        NoemaError: a path that does not exist, or a file outside ``root``.

    Example:
        >>> docs = list(read_documents(["examples/docs"]))
        >>> docs[0].metadata["title"]
        'Google'
    """
    base = Path(root).resolve() if root is not None else None
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES | JSONL_SUFFIXES
            )
            if not files:
                on_skip(f"{path}: no .txt, .md or .jsonl files in this folder")
            for file in files:
                yield from _read_file(file, on_skip, base)
        elif path.is_file():
            yield from _read_file(path, on_skip, base)
        else:
            raise NoemaError(f"{str(path)!r}: no such file or folder")


def document_id(path: Path, root: Path | None) -> str:
    """The id of the document a text file holds (see :func:`read_documents`). A file name that
    is not UTF-8 (``caf\\xe9.txt``) has its bad bytes written as ``\\xe9``: the id must be text
    a bundle can hold."""
    resolved = path.resolve()
    if root is None:
        return f"file:{_text_path(resolved.as_posix())}"
    try:
        return _text_path(resolved.relative_to(root).as_posix())
    except ValueError:
        raise NoemaError(f"{str(path)!r} is not inside the root folder {str(root)!r}") from None


def _text_path(path: str) -> str:
    """A path as valid Unicode: bytes of a non-UTF-8 file name (which Python keeps as lone
    surrogates) as ``\\xNN``, the same every time the file is read."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _read_file(path: Path, on_skip: SkipCallback, root: Path | None) -> Iterator[Document]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        on_skip(f"{path}: skipped, cannot be read ({exc.strerror})")
        return
    if b"\x00" in data[:8192]:
        on_skip(f"{path}: skipped, looks like a binary file")
        return
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        on_skip(f"{path}: skipped, not UTF-8 text (bad byte at offset {exc.start})")
        return
    if path.suffix.lower() in JSONL_SUFFIXES:
        yield from _read_jsonl(path, text, on_skip)
        return
    if not text.strip():
        on_skip(f"{path}: skipped, empty")
        return
    metadata = {"source": _text_path(str(path))}
    title = _title(text, path.suffix.lower())
    if title:
        metadata["title"] = title
    yield Document(text, id=document_id(path, root), metadata=metadata)


def _title(text: str, suffix: str) -> str:
    """A file's title: a Markdown file's first ``# heading``, else the bare title line any text
    file may open with (see :func:`noema.ingest.layout.title_line`)."""
    heading = _HEADING.search(text) if suffix in (".md", ".markdown") else None
    return heading.group(1) if heading else title_line(text)


def _read_jsonl(path: Path, text: str, on_skip: SkipCallback) -> Iterator[Document]:
    # records end at "\n" only: str.splitlines() would also split inside a record at U+2028
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(
                line, parse_constant=_no_constant, parse_float=_finite, parse_int=_int64
            )
        except _NotFinite:
            on_skip(f"{path}:{number}: skipped, holds NaN or an infinite number (no bundle can)")
            continue
        except _TooLong:
            on_skip(
                f"{path}:{number}: skipped, holds an integer outside 64 bits (a bundle would "
                "read it back changed); write it as a string"
            )
            continue
        except (ValueError, RecursionError):
            on_skip(f"{path}:{number}: skipped, not JSON (or nested too deeply)")
            continue
        if not isinstance(record, dict) or not isinstance(record.get("text"), str):
            on_skip(f"{path}:{number}: skipped, no string 'text' field")
            continue
        if not record["text"].strip():
            on_skip(f"{path}:{number}: skipped, empty text")
            continue
        metadata = {k: v for k, v in record.items() if k not in ("text", "id")}
        metadata.setdefault("source", f"{_text_path(str(path))}:{number}")
        doc_id = record.get("id")
        yield Document(record["text"], id="" if doc_id is None else str(doc_id), metadata=metadata)


class _NotFinite(ValueError):
    pass


class _TooLong(ValueError):
    pass


def _int64(text: str) -> int:
    # the length first: int() refuses more than 4,300 digits, and that is no JSON error
    value = int(text) if len(text) <= 21 else None
    if value is None or value not in JSON_INTEGERS:
        raise _TooLong(text[:40])
    return value


def _no_constant(name: str) -> float:
    raise _NotFinite(name)  # NaN, Infinity, -Infinity: Python's json reads them, JSON has none


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise _NotFinite(text)  # 1e400
    return value


# -- what ingest() takes -------------------------------------------------------------------------
Source = str | Document | os.PathLike[str]


def as_documents(
    sources: Source | Iterable[Source], root: str | os.PathLike[str] | None = None
) -> list[Document]:
    """What :meth:`noema.KnowledgeBase.ingest` was given, as documents, checked before anything
    changes: text, :class:`Document`, paths (files read as :func:`read_documents` reads them,
    ids relative to ``root``), LangChain ``Document`` and LlamaIndex ``Document``/``TextNode``
    (identified by the host's own key: see :func:`as_keyed_documents`)."""
    return as_keyed_documents(sources, root)[0]


def as_keyed_documents(
    sources: Source | Iterable[Source], root: str | os.PathLike[str] | None = None
) -> tuple[list[Document], frozenset[str]]:
    """:func:`as_documents`, with the host keys the documents were identified by.

    A LangChain ``Document`` is identified by its ``id``, else by ``metadata["source"]`` (what
    LangChain loaders set), else by ``metadata["file_path"]``, as given; a LlamaIndex reader's
    document, with a random id and its file in the metadata, by the file (see
    :func:`_file_identity`). Several texts under one key in one call (a splitter's chunks, a
    page) are ``key#1``, ``key#2``...: the same chunks get the same ids every time; a page a
    loader numbers (``metadata["page"]``) is a key of its own, ``source#page=3``. The keys are
    returned because the documents of a key replace all that was stored under it
    (:func:`documents_of`): a source read again with fewer chunks leaves none behind, and so a
    key's chunks must come in one call.

    Example:
        >>> class Chunk:  # a LangChain Document, as far as Noema looks
        ...     def __init__(self, text): self.page_content, self.metadata = text, {"source": "a.md"}
        >>> docs, keys = as_keyed_documents([Chunk("One."), Chunk("Two.")])
        >>> [d.id for d in docs], sorted(keys)
        (['a.md#1', 'a.md#2'], ['a.md'])
    """
    converted = [_visible(item) for s in _as_list(sources) for item in _as_documents(s, root)]
    documents = _numbered(converted)
    _check_documents(documents)
    return documents, frozenset(doc.id for doc, keyed in converted if keyed)


def documents_of(keys: Collection[str], document_ids: Iterable[str]) -> list[str]:
    """The ids among ``document_ids`` stored under one of ``keys``: a key itself, or one of its
    numbered chunks (``key#1``, ``key#2``..., see :func:`as_keyed_documents`).

    Example:
        >>> documents_of({"a.md"}, ["a.md#1", "a.md#2", "a.md.bak", "b.md", "a.md#page=2"])
        ['a.md#1', 'a.md#2']
    """
    if not keys:
        return []
    found = []
    for doc_id in document_ids:
        head, _, number = doc_id.rpartition("#")
        if doc_id in keys or (number.isdigit() and head in keys):
            found.append(doc_id)
    return found


def _as_list(sources: Source | Iterable[Source]) -> Sequence[Source]:
    if isinstance(sources, Mapping):
        raise InputTypeError(
            "ingest() got a dict; pass noema.Document(text, id=..., metadata=...) for a document "
            "with metadata"
        )
    if (
        isinstance(sources, (str, Document, os.PathLike))
        or _framework_document(sources)[0] is not None
    ):
        return [sources]  # type: ignore[list-item]
    return list(sources)


# A converted source, and whether its id is a host's key (its file, its source), not its own id.
_Converted = tuple[Document, bool]


def _framework_document(
    source: object, root: str | os.PathLike[str] | None = None
) -> tuple[Document | None, bool]:
    """A LangChain ``Document`` or a LlamaIndex ``Document``/``TextNode`` as a Noema document,
    with its id and metadata; recognised by shape, so neither framework is imported."""
    page = getattr(source, "page_content", None)
    if isinstance(page, str):  # LangChain
        doc_id = getattr(source, "id", None)
        metadata = dict(getattr(source, "metadata", None) or {})
        if isinstance(doc_id, str) and doc_id:
            return Document(page, id=doc_id, metadata=metadata), False
        # loaders set "source" (some "file_path" too), not the id: without a key the id would
        # be the text's hash, and a changed file could be neither replaced nor deleted
        key = next((metadata[k] for k in _LANGCHAIN_KEYS if _is_key(metadata.get(k))), "")
        number = metadata.get("page")
        if key and isinstance(number, int) and not isinstance(number, bool):
            # a PDF loader's pages share one source: each page is its own document, so pages
            # ingested one call at a time (lazy_load) never replace one another
            key = f"{key}#page={number}"
        return Document(page, id=key, metadata=metadata), bool(key)
    node_id = getattr(source, "node_id", None)
    text = getattr(source, "text", None)
    if isinstance(node_id, str) and isinstance(text, str):  # LlamaIndex
        metadata = dict(getattr(source, "metadata", None) or {})
        return _file_identity(Document(text, id=node_id, metadata=metadata), root)
    return None, False


# What identifies a LangChain Document without an id, first found first.
_LANGCHAIN_KEYS = ("source", "file_path")


def _is_key(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


# The ids LlamaIndex makes up when a reader does not set one (uuid4).
_RANDOM_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _file_identity(doc: Document, root: str | os.PathLike[str] | None) -> _Converted:
    """A LlamaIndex document or node read from a file (``file_path`` or ``file_name`` in its
    metadata, as ``SimpleDirectoryReader`` sets them) is identified by the file, not by its
    random id: the same file is the same document however often it is read, with the id
    :func:`read_documents` gives it (and ``#page=`` for a page). A Markdown file's first heading
    becomes its ``title``, as :func:`read_documents` does. An id the user chose is kept."""
    metadata = doc.metadata or {}
    file_path, file_name = metadata.get("file_path"), metadata.get("file_name")
    if not _RANDOM_ID.fullmatch(doc.id):
        return doc, False
    if isinstance(file_path, str) and file_path:
        base = Path(root).resolve() if root is not None else None
        identity = document_id(Path(file_path), base)
        suffix = Path(file_path).suffix.lower()
    elif isinstance(file_name, str) and file_name:
        identity, suffix = f"file:{file_name}", Path(file_name).suffix.lower()
    else:
        return doc, False
    page = metadata.get("page_label")
    if isinstance(page, (str, int)) and not isinstance(page, bool):
        identity += f"#page={page}"
    updated = dict(metadata)
    title = _title(doc.text, suffix)
    if title and "title" not in updated:
        updated["title"] = title
    return Document(doc.text, id=identity, metadata=updated), True


def _visible(converted: _Converted) -> _Converted:
    """The document as it reads (:func:`noema.model.names.visible_text`), before anything parses
    it: a name written with a zero-width space or a decomposed accent is then the name written
    without, to the parser and the canonicalizer alike. The text stored is the text parsed, so
    every mention points into it; an id made from the text is made from the text stored."""
    doc, keyed = converted
    text = visible_text(doc.text)
    if text == doc.text:
        return converted
    made = doc.id == Document(doc.text).id
    return Document(text, id="" if made else doc.id, metadata=doc.metadata), keyed


def _numbered(converted: list[_Converted]) -> list[Document]:
    """Ids made from a key that gave several different texts in one call (a splitter's chunks)
    numbered in order, ``#1``, ``#2``...: the same chunks of the same file get the same ids."""
    texts: dict[str, set[str]] = {}
    for doc, from_file in converted:
        if from_file:
            texts.setdefault(doc.id, set()).add(doc.text)
    shared = {i for i, t in texts.items() if len(t) > 1}
    seen: dict[str, int] = {}
    documents = []
    for doc, from_file in converted:
        if from_file and doc.id in shared:
            seen[doc.id] = seen.get(doc.id, 0) + 1
            doc = Document(doc.text, id=f"{doc.id}#{seen[doc.id]}", metadata=doc.metadata)
        documents.append(doc)
    return documents


def _as_documents(source: Source, root: str | os.PathLike[str] | None = None) -> list[_Converted]:
    if isinstance(source, Document):
        return [(source, False)]
    if isinstance(source, str):
        return [(Document(source), False)]
    if isinstance(source, os.PathLike):
        return [(d, False) for d in read_documents([source], on_skip=_warn_skip, root=root)]
    converted, from_file = _framework_document(source, root)
    if converted is not None:
        return [(converted, from_file)]
    raise InputTypeError(
        "ingest() takes text, noema.Document, paths, LangChain Documents or LlamaIndex "
        f"Documents/TextNodes, not {type(source).__name__}"
    )


def _check_documents(documents: Sequence[Document]) -> None:
    """Refuse, before anything changes, what could not be saved or would be lost: metadata that is
    not JSON, and two different texts under one id in one call."""
    texts: dict[str, str] = {}
    for doc in documents:
        if texts.setdefault(doc.id, doc.text) != doc.text:
            raise OptionError(
                f"two documents with id {doc.id!r} and different texts in one ingest() call; "
                "give each its own id"
            )
        for key, value in (doc.metadata or {}).items():
            try:
                json_bytes({key: value}, depth=METADATA_DEPTH)
            except TypeError as exc:
                raise InputTypeError(
                    f"metadata {key!r} of document {doc.id!r} is not JSON "
                    f"({type(value).__name__}): bundles store metadata as JSON; convert it first"
                ) from exc
            except ValueError as exc:
                raise OptionError(
                    f"metadata {key!r} of document {doc.id!r} cannot be saved in a bundle: {exc}"
                ) from None
        try:
            json_bytes(doc.id)
        except ValueError:
            raise OptionError(
                f"document id {doc.id!r} is not valid Unicode (a lone surrogate); give the "
                "document an id a file can hold"
            ) from None


def _warn_skip(message: str) -> None:
    warnings.warn(message, stacklevel=5)  # at the ingest() call
