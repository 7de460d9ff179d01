"""Spans of a document's text: the source sentences of facts, their text on one line, and the
title and heading a document is shown under.

Every fact the parser finds carries a mention spanning its whole sentence; a :class:`Sentence`
names such a span. The sentence sidecar (:mod:`noema.vectors.sentences`) embeds them, and
``format="sentences"`` writes them under each document's heading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from noema.model.graph import SemanticGraph

__all__ = [
    "Sentence",
    "blank_headings",
    "document_heading",
    "document_title",
    "first_sentence",
    "leading_heading",
    "sentence_text",
]

_HEADING = re.compile(r"\s{0,3}#{1,6}(\s|$)")
# A whole Markdown ATX heading line: "# Title", "## Early life"; not "#hashtag" or "#1 hit".
_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t][^\n]*)?$", re.MULTILINE)


@dataclass(frozen=True, order=True, slots=True)
class Sentence:
    """A source sentence: its document and character span ``[start, end)``."""

    document_id: str
    start: int
    end: int


def document_title(graph: SemanticGraph, document_id: str) -> str:
    """The document's ``title`` metadata on one line, or ``""``."""
    doc = graph.documents.get(document_id)
    title = doc.metadata.get("title") if doc is not None and doc.metadata else None
    return " ".join(title.split()) if isinstance(title, str) else ""


def document_heading(graph: SemanticGraph, document_id: str) -> str:
    """What ``format="sentences"`` writes above a document's sentences: its title, else the
    ``file_name`` a LlamaIndex reader records (a few tokens, where the ``file:`` path id takes
    dozens), else its id unless that is a generated ``doc_`` hash, which would tell a reader
    nothing."""
    title = document_title(graph, document_id)
    if title:
        return title
    doc = graph.documents.get(document_id)
    name = doc.metadata.get("file_name") if doc is not None and doc.metadata else None
    if isinstance(name, str) and name.strip():
        return " ".join(name.split())
    return "" if document_id.startswith("doc_") else " ".join(document_id.split())


def blank_headings(text: str) -> str:
    """``text`` with every Markdown heading line turned into spaces of the same length.

    A heading is a title, not a sentence: parsed, "# Lumen Forge" became an entity of its own and
    the start of the first sentence. Blanking keeps every character offset, so mentions still
    point into the document's own text.

    Example:
        >>> blank_headings("# Lumen Forge\\nLumen Forge makes drones. #1 hit")
        '             \\nLumen Forge makes drones. #1 hit'
        >>> blank_headings("# Only a heading")
        '# Only a heading'
    """
    blanked = _HEADING_LINE.sub(lambda match: " " * len(match.group()), text)
    # a text that is nothing but a heading line ("# Google Larry Page founded Google.") says
    # something only there
    return blanked if blanked.strip() else text


def leading_heading(text: str) -> str:
    """The text of a first-level Markdown heading on the document's first non-blank line, else
    ``""``: a document that opens with "# Lumen Forge" is about Lumen Forge; a chunk that opens
    with "## Early life" is not about early life.

    Example:
        >>> leading_heading("\\n# Lumen Forge #\\nIt makes drones."), leading_heading("## Early life")
        ('Lumen Forge', '')
    """
    first = next((line for line in text.split("\n") if line.strip()), "")
    if not _HEADING_LINE.fullmatch(first) or not re.match(r" {0,3}#[ \t]", first):
        return ""
    return " ".join(first.strip().strip("#").split())


def first_sentence(graph: SemanticGraph, fact_id: str) -> Sentence | None:
    """The first sentence the fact was read from, or ``None`` (a fact added by hand)."""
    fact = graph.relations.get(fact_id) or graph.events[fact_id]
    for m in fact.mentions:
        if m.document_id in graph.documents:
            return Sentence(m.document_id, m.start, m.end)
    return None


def sentence_text(graph: SemanticGraph, sentence: Sentence) -> str:
    """The sentence on one line. A Markdown heading the parser read as the start of the first
    sentence ("# Nvidia" above "Nvidia acquired Mellanox.") is left out: the title says it.

    Example:
        >>> from noema.model.records import Document
        >>> g = SemanticGraph()
        >>> _ = g.add_document(Document("# Nvidia\\n\\nNvidia acquired Mellanox.", id="n"))
        >>> sentence_text(g, Sentence("n", 0, 35))
        'Nvidia acquired Mellanox.'
    """
    lines = graph.documents[sentence.document_id].text[sentence.start : sentence.end].split("\n")
    while len(lines) > 1 and (_HEADING.match(lines[0]) or not lines[0].strip()):
        lines.pop(0)
    return " ".join(" ".join(lines).split())
