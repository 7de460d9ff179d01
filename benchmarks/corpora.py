"""The graph Noema builds on a hand-written corpus, held against its gold names and facts.

    python benchmarks/corpora.py institutes clubs projects
    python benchmarks/corpora.py clubs --show

For each corpus of ``benchmarks/corpora`` (see its README): the entities whose name is a piece of
the page rather than a thing (a document's headline, a ``Q``/``A`` marker, a dateline), the gold
names (``types.jsonl``) that are one node of their type (a place counts as ``GPE`` or ``LOC``),
the gold facts (``facts.jsonl``) that a fact connects in their direction, and the denied ones
that a fact of their own document connects (which should be none). ``--show`` lists what missed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import print_table  # noqa: E402

import noema  # noqa: E402
from noema.model.graph import SemanticGraph  # noqa: E402
from noema.model.records import Relation  # noqa: E402

CORPORA = Path(__file__).parent / "corpora"
_PLACES = frozenset({"GPE", "LOC"})
# "PORTWELL, 27 May 2020 —": a place in capitals and a date before a dash, opening a line
_DATELINE = re.compile(r"^([A-Z][A-Z .'-]+),\s*[^\n—]{0,40}?\s[—–-]\s", re.M)
_MARKERS = frozenset({"q", "a", "q:", "a:", "present", "apologies", "key facts"})
_CUTS = re.compile(r"\s*(?::|—|–|\s-\s|,)\s*")


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _headline(text: str) -> str:
    first = next((line for line in text.splitlines() if line.strip()), "")
    return " ".join(first.strip().lstrip("#").split())


def _headline_pieces(headline: str) -> set[str]:
    """The headline and what comes before each of its separators: "X: the ..." gives "X"."""
    pieces = {headline.lower()}
    for cut in _CUTS.finditer(headline):
        pieces.add(headline[: cut.start()].lower())
    return pieces


def _key(name: str) -> str:
    """A name as the graph writes it, lowercased: Noema drops a leading "the" from every name
    ("The Salt Orchard" is the node "Salt Orchard"), so a gold title is looked up without it."""
    lowered = name.lower()
    return lowered[4:] if lowered.startswith("the ") and len(lowered) > 4 else lowered


def _nodes(graph: SemanticGraph) -> dict[str, list[str]]:
    """Entity ids by each name and alias, as :func:`_key` writes them."""
    found: dict[str, list[str]] = {}
    for entity in graph.entities.values():
        for name in {_key(entity.name), *map(_key, entity.aliases)}:
            found.setdefault(name, []).append(entity.id)
    return found


def _links(graph: SemanticGraph) -> Iterator[tuple[str, str, frozenset[str], str]]:
    """(subject id, object id, documents, predicate) of every relation and two-entity event."""
    for fact in graph.iter_facts():
        ends = fact.entity_ids
        if len(ends) >= 2:
            documents = frozenset(m.document_id for m in fact.mentions)
            predicate = fact.predicate if isinstance(fact, Relation) else fact.label
            yield ends[0], ends[1], documents, predicate


def _says(predicate: str, word: str) -> bool:
    """Whether ``word`` starts at a part of ``predicate`` ("own" in ``own_of``, not in
    ``turn_down``; "sign" in ``sign_for``, not in ``resign``; "take_over" in ``take_over``)."""
    return f"_{word}" in f"_{predicate}"


def measure(name: str, *, show: bool = False) -> dict[str, object]:
    """One row of the table for the corpus ``name``; ``show`` prints what missed."""
    folder = CORPORA / name
    docs = folder / "docs"
    kb = noema.KnowledgeBase()
    kb.ingest([docs], root=docs)
    graph = kb.graph
    gold_types = _lines(folder / "types.jsonl")
    missed: list[str] = []
    pieces = _page_pieces(graph, {str(t["name"]).lower() for t in gold_types}, missed)
    facts = _lines(folder / "facts.jsonl")
    connected, denials = _facts_connected(graph, facts, missed)
    names_right = _names_right(graph, gold_types, missed)
    if show:
        print(f"## {name}")
        print("\n".join(missed))
    return {
        "corpus": name,
        "entities": len(graph.entities),
        **pieces,
        "names right": names_right,
        "facts connected": connected,
        "denials stated": denials,
    }


def _page_pieces(graph: SemanticGraph, gold_names: set[str], missed: list[str]) -> dict[str, int]:
    """How many entities are named by a headline, a marker or a dateline."""
    headlines: set[str] = set()
    datelines: set[str] = set()
    for doc in graph.documents.values():
        body = doc.text.lower().partition("\n")[2]
        # a title the text writes is a name ("Hollinsworth Centre for Tropical Medicine is ...")
        pieces = _headline_pieces(_headline(doc.text)) - gold_names
        headlines |= {piece for piece in pieces if piece not in body}
        for match in _DATELINE.finditer(doc.text):
            datelines.add(match.group(1).strip().lower())
            datelines.add(match.group(0).strip(" —–-").lower())
    counts = {"headlines": 0, "markers": 0, "datelines": 0}
    for entity in graph.entities.values():
        lowered = entity.name.lower()
        if lowered in headlines:
            kind = "headlines"
        elif lowered in _MARKERS:
            kind = "markers"
        # "BRIMSWORTH" of a dateline, or the whole dateline; "Brimsworth" is the town
        elif lowered in datelines and (entity.name.isupper() or lowered not in gold_names):
            kind = "datelines"
        else:
            continue
        counts[kind] += 1
        facts = len(graph.facts_of(entity.id))
        missed.append(f"{kind}: {entity.name!r} :{entity.type} ({facts} facts)")
    return counts


def _names_right(
    graph: SemanticGraph, gold_types: list[dict[str, object]], missed: list[str]
) -> str:
    """The gold names that are one node of their type (one per type, for a shared name)."""
    nodes = _nodes(graph)
    types_by_name: dict[str, set[str]] = {}
    for line in gold_types:
        types_by_name.setdefault(str(line["name"]), set()).add(str(line["type"]))
    right = 0
    for gold, types in sorted(types_by_name.items()):
        found = sorted(graph.entities[i].type for i in nodes.get(_key(gold), []))
        wanted = sorted(types)
        if len(found) == len(wanted) and all(
            f == w or {f, w} <= _PLACES for f, w in zip(found, wanted, strict=True)
        ):
            right += 1
        else:
            missed.append(f"name: {gold} {'/'.join(wanted)} -> {'/'.join(found) or 'none'}")
    return f"{right}/{len(types_by_name)}"


def _facts_connected(
    graph: SemanticGraph, facts: list[dict[str, object]], missed: list[str]
) -> tuple[str, str]:
    """The stated gold facts a fact connects in their direction, and the denied ones a fact of
    their own document connects either way."""
    nodes = _nodes(graph)
    links = list(_links(graph))
    connected = stated = 0
    for fact in facts:
        pairs = {
            (s, o)
            for s in nodes.get(_key(str(fact["subject"])), [])
            for o in nodes.get(_key(str(fact["object"])), [])
        }
        described = f"{fact['subject']} -{fact['relation']}-> {fact['object']} ({fact['doc']})"
        if fact.get("denied"):
            # a true fact of the same pair beside the denial ("he advised the company" beside
            # "did not co-found it") states no denied claim: only a predicate that says it does
            listed = fact.get("says")
            says = [str(word) for word in listed] if isinstance(listed, list) else []
            if any(
                ((a, b) in pairs or (b, a) in pairs)
                and fact["doc"] in where
                and (not says or any(_says(predicate, word) for word in says))
                for a, b, where, predicate in links
            ):
                stated += 1
                missed.append(f"denied but stated: {described}")
        elif any((a, b) in pairs for a, b, _, _ in links):
            connected += 1
        else:
            missed.append(f"fact: {described}")
    denied = sum(1 for fact in facts if fact.get("denied"))
    return f"{connected}/{len(facts) - denied}", f"{stated}/{denied}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpora", nargs="+", help="names of folders under benchmarks/corpora")
    parser.add_argument("--show", action="store_true", help="list what missed")
    args = parser.parse_args()
    rows = [measure(name, show=args.show) for name in args.corpora]
    print_table(list(rows[0]), [list(row.values()) for row in rows])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
