"""Packing: facts in priority order, rendered in the requested format, under an exact budget.

Greedy, as the design says: each fact is added in order while the whole text stays within
``max_tokens``; the first that would go over ends the packing. In ``format="sentences"`` the unit
that costs tokens is a source sentence: a fact whose sentence is already in the text comes free,
and the text is those sentences, each once, grouped under their document's title (documents in
the order their first sentence was chosen, sentences in document order). A fact with no source
sentence (added by hand, without mentions) is shown as its decoded sentence.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from noema.model.graph import SemanticGraph
from noema.model.notation import decode_facts, encode_facts
from noema.resources import count_tokens
from noema.retrieval.options import Format
from noema.vectors.sentences import Sentence, document_heading, sentence_text

__all__ = ["Packed", "first_sentence", "pack", "render_facts"]


@dataclass(frozen=True)
class Packed:
    """What fitted: the text, its notation, and the ids in it."""

    text: str
    notation: str
    entity_ids: tuple[str, ...]
    relation_ids: tuple[str, ...]
    event_ids: tuple[str, ...]
    fact_ids: tuple[str, ...]
    token_count: int
    truncated: bool


def render_sentences(graph: SemanticGraph, shown: Sequence[Sentence | str]) -> str:
    """Sentences grouped by document under ``# title``; a ``str`` item is a fact id shown as its
    decoded sentence (a fact with no source sentence), after the documents."""
    groups: dict[str, list[Sentence]] = {}
    loose: list[str] = []
    for item in shown:
        if isinstance(item, Sentence):
            groups.setdefault(item.document_id, []).append(item)
        else:
            loose.append(item)
    parts = []
    for document_id, sentences in groups.items():
        body = " ".join(sentence_text(graph, s) for s in sorted(sentences))
        title = document_heading(graph, document_id)
        parts.append(f"# {title}\n{body}" if title else body)
    if loose:
        relations = [f for f in loose if f in graph.relations]
        events = [f for f in loose if f in graph.events]
        parts.append(decode_facts(graph, relations, events))
    return "\n".join(parts)


def render_facts(graph: SemanticGraph, fact_ids: Sequence[str], format: Format) -> str:
    """These facts as one self-contained text in ``format``, with no budget; in ``"sentences"``
    each fact is shown by the first sentence it came from."""
    chosen = [(f, first_sentence(graph, f) if format == "sentences" else None) for f in fact_ids]
    return _render_prefix(graph, chosen, format)


def split_blocks(
    graph: SemanticGraph,
    fact_ids: Sequence[str],
    k: int,
    max_tokens: int,
    format: Format,
    token_model: str,
) -> list[tuple[list[str], str, int]]:
    """The facts, in order, as at most ``k`` self-contained texts of consecutive facts (the
    first ones fuller), together within ``max_tokens``: each text repeats the entity lines it
    needs, so facts are dropped from the end until the texts fit. Each item is the text's
    facts, the text and its token count."""
    facts = list(fact_ids)
    while facts:
        size = -(-len(facts) // k)  # ceil: k groups at most
        groups = [facts[n : n + size] for n in range(0, len(facts), size)]
        texts = [render_facts(graph, g, format) for g in groups]
        counts = [count_tokens(t, token_model) for t in texts]
        if sum(counts) <= max_tokens:
            return list(zip(groups, texts, counts, strict=True))
        facts.pop()
    return []


def first_sentence(graph: SemanticGraph, fact_id: str) -> Sentence | None:
    fact = graph.relations.get(fact_id) or graph.events[fact_id]
    for m in fact.mentions:
        if m.document_id in graph.documents:
            return Sentence(m.document_id, m.start, m.end)
    return None


def _render_notation(
    graph: SemanticGraph,
    relations: list[str],
    events: list[str],
    floor: float = 0.0,
) -> tuple[str, list[str]]:
    """The notation and its local entity ids. A relation under ``floor`` is left out and its
    entities stay as entity lines: the names the retrieval reached, without a statement about
    them that is likely false (see min_confidence)."""
    stated: list[str] = []
    named: list[str] = []
    for r in relations:
        if _stated(graph, r, floor):
            stated.append(r)
        else:
            named.extend(graph.relations[r].entity_ids)
    encoded = encode_facts(graph, stated, events, named)
    return encoded.text, list(encoded.local_ids)


def pack(
    graph: SemanticGraph,
    ordered: Iterable[tuple[str, Sentence | None]],
    max_tokens: int,
    format: Format,
    token_model: str,
    floor: float = 0.0,
) -> Packed:
    """Pack ``(fact id, sentence)`` pairs in order; see the module docstring. In notation a
    relation under ``floor`` is shown only by its entities' lines.

    Adding a fact never makes the text shorter, so the greedy result is the longest prefix of
    ``ordered`` whose text fits. It is found by doubling the prefix, then halving the gap, so the
    text is rendered and counted about 2 log n times rather than once per fact (3,200 facts at a
    budget of a million tokens took 128 s). ``ordered`` is read only about twice as far as it fits.
    """
    items: list[tuple[str, Sentence | None]] = []
    source = iter(ordered)
    exhausted = False

    def take(n: int) -> int:
        nonlocal exhausted
        while len(items) < n and not exhausted:
            step = next(source, None)
            if step is None:
                exhausted = True
            else:
                items.append(step)
        return min(n, len(items))

    counted: dict[int, tuple[str, int]] = {0: ("", 0)}

    def fits(n: int) -> bool:
        text = _render_prefix(graph, items[:n], format, floor)
        tokens = count_tokens(text, token_model) if text else 0
        counted[n] = (text, tokens)
        return tokens <= max_tokens

    fit, over = 0, None  # the longest prefix known to fit, the shortest known not to
    size = 1
    while over is None:
        n = take(size)
        if n == fit:  # nothing more to add
            break
        if fits(n):
            fit = n
            size *= 2
        else:
            over = n
    while over is not None and over - fit > 1:
        middle = (fit + over) // 2
        if fits(middle):
            fit = middle
        else:
            over = middle
    chosen = items[:fit]
    text, tokens = counted[fit]
    notation, entity_ids = _render_notation(
        graph,
        [f for f, _ in chosen if f in graph.relations],
        [f for f, _ in chosen if f not in graph.relations],
        floor,
    )
    chosen = [(f, s) for f, s in chosen if _stated(graph, f, floor)]  # not only as entities
    relations = [f for f, _ in chosen if f in graph.relations]
    events = [f for f, _ in chosen if f not in graph.relations]
    return Packed(
        text=text,
        notation=notation,
        entity_ids=tuple(entity_ids),
        relation_ids=tuple(relations),
        event_ids=tuple(events),
        fact_ids=tuple(f for f, _ in chosen),
        token_count=tokens,
        truncated=over is not None,
    )


def _stated(graph: SemanticGraph, fact_id: str, floor: float) -> bool:
    """Whether the fact itself is written out: events always, relations at or over ``floor``."""
    relation = graph.relations.get(fact_id)
    return relation is None or relation.confidence >= floor


def _render_prefix(
    graph: SemanticGraph,
    chosen: Sequence[tuple[str, Sentence | None]],
    format: Format,
    floor: float = 0.0,
) -> str:
    """The text of these facts in ``format``."""
    if format == "sentences":
        shown = list(dict.fromkeys(s if s is not None else f for f, s in chosen))
        return render_sentences(graph, shown)
    relations = [f for f, _ in chosen if f in graph.relations]
    events = [f for f, _ in chosen if f not in graph.relations]
    if format == "natural_language":  # no entity lines: only the stated facts show
        return decode_facts(graph, [r for r in relations if _stated(graph, r, floor)], events)
    return _render_notation(graph, relations, events, floor)[0]
