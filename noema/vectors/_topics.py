"""Who a document is about: its topic, the entity its title names, else the first it mentions.

Apart from the sidecar because the rule is the graph's alone (no vector takes part) and is
versioned on its own: a bundle stores the topics with :data:`TOPIC_RULE`, and a Noema whose rule
differs works them out again.
"""

from __future__ import annotations

from collections.abc import Mapping

from noema.model.graph import SemanticGraph
from noema.model.names import normalize_name, strip_disambiguation
from noema.model.records import VALUE_TYPES

__all__ = ["TOPIC_RULE", "document_topics", "document_topics_and_forms"]


# How a document's topic is chosen (the entity its title names, compared by normalize_name, else
# the first it mentions); stored with the topics a bundle keeps, so a Noema that chooses them
# another way works them out again. Change it whenever document_topics_and_forms or
# normalize_name change for names a stored bundle holds; not for the format characters it
# drops, which ingest removes from every text before parsing (a name in an older bundle that
# held one keeps the topics it had).
TOPIC_RULE = "title names it (normalize_name), else first mentioned"


def document_topics(graph: SemanticGraph) -> dict[str, list[str]]:
    """Entity id -> ids of the documents about it (their title names it, else it comes first)."""
    return document_topics_and_forms(graph, {}, {})[0]


def document_topics_and_forms(
    graph: SemanticGraph, names: Mapping[str, str], titles: Mapping[str, str]
) -> tuple[dict[str, list[str]], dict[str, str], dict[str, str]]:
    """:func:`document_topics`, and the compared form of every entity name and title it read;
    ``names`` and ``titles`` hold those an earlier call worked out (a write into a large base
    changes few names, and working each out again was most of a write's topics: 2.8 s at a
    million facts)."""
    by_name: dict[str, list[str]] = {}
    first: dict[str, tuple[int, str]] = {}
    seen_names: dict[str, str] = {}
    for entity in graph.entities.values():
        if entity.type in VALUE_TYPES:
            continue
        for name in (entity.name, *entity.aliases):
            key = names.get(name)
            if key is None:
                key = normalize_name(name)
            seen_names[name] = key
            by_name.setdefault(key, []).append(entity.id)
        for m in entity.mentions:
            best = first.get(m.document_id)
            if best is None or (m.start, entity.id) < best:
                first[m.document_id] = (m.start, entity.id)
    topics: dict[str, list[str]] = {}
    seen_titles: dict[str, str] = {}
    for document_id, doc in graph.documents.items():
        title = doc.metadata.get("title") if doc.metadata else None
        named = []
        if isinstance(title, str) and title.strip():
            # compared as canonicalization compares names: the parser names "The Beatles"
            # "Beatles", and a title keeps its "The"
            wanted = titles.get(title)
            if wanted is None:
                wanted = normalize_name(strip_disambiguation(" ".join(title.split())))
            seen_titles[title] = wanted
            named = by_name.get(wanted, [])
        if named:
            chosen = named[0]
        elif document_id in first:
            chosen = first[document_id][1]
        else:
            continue
        topics.setdefault(chosen, []).append(document_id)
    return topics, seen_names, seen_titles
