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

from noema.graph import SemanticGraph
from noema.notation import decode, encode_facts
from noema.options import Format
from noema.resources import count_tokens
from noema.sentences import Sentence, document_heading, sentence_text

__all__ = ["Packed", "pack"]


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
        parts.append(decode(encode_facts(graph, relations, events).text))
    return "\n".join(parts)


def _render_facts(
    graph: SemanticGraph, relations: list[str], events: list[str], format: Format
) -> tuple[str, str, list[str]]:
    encoded = encode_facts(graph, relations, events)
    text = encoded.text if format == "notation" else decode(encoded.text) if encoded.text else ""
    return text, encoded.text, list(encoded.local_ids)


def pack(
    graph: SemanticGraph,
    ordered: Iterable[tuple[str, Sentence | None]],
    max_tokens: int,
    format: Format,
    token_model: str,
) -> Packed:
    """Pack ``(fact id, sentence)`` pairs in order; see the module docstring."""
    relations: list[str] = []
    events: list[str] = []
    packed: list[str] = []
    shown: list[Sentence | str] = []
    text, tokens, truncated = "", 0, False
    for fact_id, sentence in ordered:
        is_relation = fact_id in graph.relations
        if format == "sentences":
            item: Sentence | str = sentence if sentence is not None else fact_id
            new_item = item not in shown
            candidate = render_sentences(graph, [*shown, item]) if new_item else text
        else:
            trial_relations = [*relations, fact_id] if is_relation else relations
            trial_events = events if is_relation else [*events, fact_id]
            candidate = _render_facts(graph, trial_relations, trial_events, format)[0]
        candidate_tokens = count_tokens(candidate, token_model) if candidate != text else tokens
        if candidate_tokens > max_tokens:
            truncated = True
            break
        (relations if is_relation else events).append(fact_id)
        packed.append(fact_id)
        if format == "sentences" and new_item:
            shown.append(item)
        text, tokens = candidate, candidate_tokens
    _, notation, entity_ids = _render_facts(graph, relations, events, "notation")
    return Packed(
        text=text,
        notation=notation,
        entity_ids=tuple(entity_ids),
        relation_ids=tuple(relations),
        event_ids=tuple(events),
        fact_ids=tuple(packed),
        token_count=tokens,
        truncated=truncated,
    )
