"""Packing: facts in priority order, rendered in the requested format, under an exact budget.

Greedy, as the design says: each fact is added in order while the whole text stays within
``max_tokens``; the first that would go over ends the packing. The text is made by the format's
entry in :data:`noema.retrieval.formats.FORMATS`; in ``format="sentences"`` the unit that costs
tokens is a source sentence, so a fact whose sentence is already in the text comes free.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import islice

from noema.model.graph import SemanticGraph
from noema.model.spans import Sentence
from noema.resources import count_tokens
from noema.retrieval.formats import (
    FORMATS,
    Format,
    is_stated,
    render_facts,
    render_notation,
)

__all__ = ["Packed", "pack", "split_blocks"]


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

    def take(n: int) -> int:
        if n > len(items):
            items.extend(islice(source, n - len(items)))
        return min(n, len(items))

    counted: dict[int, tuple[str, int]] = {0: ("", 0)}

    def fits(n: int) -> bool:
        text = _render_prefix(graph, items[:n], format, floor)
        tokens = count_tokens(text, token_model) if text else 0
        counted[n] = (text, tokens)
        return tokens <= max_tokens

    fit, over = _longest_prefix(take, fits)
    text, tokens = counted[fit]
    return _packed(graph, items[:fit], text, tokens, over is not None, floor)


def _longest_prefix(
    take: Callable[[int], int], fits: Callable[[int], bool]
) -> tuple[int, int | None]:
    """The longest prefix known to fit and the shortest known not to (``None``: all fit).
    ``take(n)`` reads up to ``n`` items and says how many there are; ``fits(n)`` renders and
    counts the first ``n``."""
    fit, over = 0, None
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
    return fit, over


def _packed(
    graph: SemanticGraph,
    chosen: Sequence[tuple[str, Sentence | None]],
    text: str,
    tokens: int,
    truncated: bool,
    floor: float,
) -> Packed:
    """What fitted: ``chosen`` with its rendered text and token count."""
    notation, entity_ids = render_notation(
        graph,
        [f for f, _ in chosen if f in graph.relations],
        [f for f, _ in chosen if f not in graph.relations],
        floor,
    )
    stated = [f for f, _ in chosen if is_stated(graph, f, floor)]  # not only as entities
    return Packed(
        text=text,
        notation=notation,
        entity_ids=tuple(entity_ids),
        relation_ids=tuple(f for f in stated if f in graph.relations),
        event_ids=tuple(f for f in stated if f not in graph.relations),
        fact_ids=tuple(stated),
        token_count=tokens,
        truncated=truncated,
    )


def _render_prefix(
    graph: SemanticGraph,
    chosen: Sequence[tuple[str, Sentence | None]],
    format: Format,
    floor: float = 0.0,
) -> str:
    """The text of these facts in ``format``."""
    return FORMATS[format].render(graph, chosen, floor)
