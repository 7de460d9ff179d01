"""How the tools name documents: a file read without ``--root`` is stored as ``file:`` and its
absolute path, which tells an agent where the server's files are (the user's home, a folder
layout) and helps it answer nothing. The tools show such a document as its path relative to
the served folder (``google.md``, ``reports/q3.md``): the ``--root`` folder when the server has
one, else the folder all the base's files share. The shown name is taken back wherever an agent
passes one (a filter's ``document_ids``, a document's uri)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from noema.model.graph import SemanticGraph

__all__ = ["DocumentNames"]

_FILE = "file:"


class DocumentNames:
    """The shown name of every document of one graph, and the way back.

    Example:
        >>> from noema.model.records import Document
        >>> graph = SemanticGraph()
        >>> _ = graph.add_document(Document("A.", id="file:/home/ann/docs/a.md"))
        >>> _ = graph.add_document(Document("B.", id="file:/home/ann/docs/sub/b.md"))
        >>> names = DocumentNames(graph)
        >>> names.shown("file:/home/ann/docs/sub/b.md"), names.actual("sub/b.md")
        ('sub/b.md', 'file:/home/ann/docs/sub/b.md')
    """

    def __init__(self, graph: SemanticGraph, root: str | os.PathLike[str] | None = None) -> None:
        paths = {
            doc_id: PurePosixPath(doc_id[len(_FILE) :])
            for doc_id in graph.documents
            if doc_id.startswith(_FILE) and doc_id[len(_FILE) :].startswith("/")
        }
        base = PurePosixPath(os.fspath(root)) if root is not None else _common_folder(paths)
        self._shown: dict[str, str] = {}
        for doc_id, path in paths.items():
            if base is not None and path.is_relative_to(base) and path != base:
                name = path.relative_to(base).as_posix()
            else:
                name = path.name  # outside the served folder: its name only
            # a name another document already has as its id would be ambiguous: keep the id
            if name not in graph.documents and name not in self._shown.values():
                self._shown[doc_id] = name
        self._actual = {name: doc_id for doc_id, name in self._shown.items()}

    def shown(self, document_id: str) -> str:
        """What the tools show for ``document_id``."""
        return self._shown.get(document_id, document_id)

    def actual(self, name: str) -> str:
        """The document id a shown name stands for (an id itself is taken as it is)."""
        return self._actual.get(name, name)

    def metadata(self, metadata: Mapping[str, Any]) -> dict[str, Any]:
        """A document's metadata with an absolute ``source`` path (what reading a file
        records) shown as the document is."""
        shown = dict(metadata)
        source = shown.get("source")
        if isinstance(source, str) and source.startswith("/"):
            shown["source"] = self.shown(_FILE + source)
            if shown["source"].startswith(_FILE):
                shown["source"] = PurePosixPath(source).name
        return shown

    def filters(self, filters: dict[str, Any] | None) -> dict[str, Any] | None:
        """``filters`` with the shown names in ``document_ids`` taken back to ids."""
        ids = filters.get("document_ids") if isinstance(filters, dict) else None
        if filters is None or not isinstance(ids, list):
            return filters
        return {
            **filters,
            "document_ids": [self.actual(i) if isinstance(i, str) else i for i in ids],
        }


def _common_folder(paths: Mapping[str, PurePosixPath]) -> PurePosixPath | None:
    """The deepest folder holding every path (the folder the base was built from)."""
    folders = [path.parent for path in paths.values()]
    if not folders:
        return None
    return PurePosixPath(os.path.commonpath([f.as_posix() for f in folders]))
