"""Output formats: the :data:`FORMATS` registry, one entry per ``format`` a retrieval returns.

An entry is everything that differs between formats: how it renders a packed list of facts and
one fact alone, whether its text states the facts or shows the sentences they came from, what
becomes of a fact under the confidence floor, the floor it takes by default and a one-line
description. Packing, the strategies, the options' check and
:meth:`noema.KnowledgeBase.render_fact` read the entry and never the format's name, so a new
format is its render functions and its entry here, its name in :data:`Format` (a test holds the
two equal) and its test.

Example:
    >>> FORMATS["natural_language"].states_facts, FORMATS["sentences"].states_facts
    (True, False)
    >>> get_format("notation").default_floor
    0.3
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Literal

from noema.errors import OptionError
from noema.model.graph import SemanticGraph
from noema.model.notation import decode_facts, encode_facts
from noema.model.spans import Sentence, document_heading, first_sentence, sentence_text
from noema.retrieval.listing import listable

__all__ = [
    "FORMATS",
    "NOTATION_MIN_CONFIDENCE",
    "BelowFloor",
    "Format",
    "OutputFormat",
    "get_format",
    "is_stated",
    "render_fact",
    "render_facts",
    "render_notation",
]

Format = Literal["notation", "natural_language", "sentences"]

# What a format makes of a fact under the confidence floor: shows it only by its entities' names
# (notation's entity lines, natural_language's "Also named:" line; relations and events alike),
# leaves it out of the packing order (a format that could not show the names), or shows it anyway
# (sentences: the sentence is the evidence, whatever the extraction made of it).
BelowFloor = Literal["entities_only", "left_out", "shown"]

# The confidence under which notation and natural_language show a relation only by its
# entities' names: the topic links (0.27 and 0.19), true as stated 18-26% of the time on the
# labelled sample (benchmarks/fact_precision.py), whose names often are the answer. Both fact
# formats state the same facts: a model repeats what it is told as fact.
NOTATION_MIN_CONFIDENCE = 0.3

Chosen = Sequence[tuple[str, Sentence | None]]
"""Facts in packing order, each with the sentence that chose it (``None``: none did)."""

Render = Callable[[SemanticGraph, Chosen, float], str]
"""A format's text of facts in packing order, given the floor."""


@dataclass(frozen=True, kw_only=True)
class OutputFormat:
    """One output format.

    Attributes:
        name: the ``format`` option's value.
        description: what the text is, in one line (for help texts and tool schemas).
        states_facts: True when the text states the facts themselves; False when it shows the
            source sentences they came from (a strategy then favours fewer facts per sentence
            less, and a fact rendered on its own is shown by its first sentence).
        default_floor: the ``min_confidence`` in force when the option is ``None``.
        below_floor: what becomes of a fact under the floor (see :data:`BelowFloor`).
        render: the text of facts in packing order, given the floor.
        render_fact: one fact alone, with no budget (:meth:`noema.KnowledgeBase.render_fact`).
    """

    name: Format
    description: str
    states_facts: bool
    default_floor: float
    below_floor: BelowFloor
    render: Render
    render_fact: Callable[[SemanticGraph, str], str]


def is_stated(graph: SemanticGraph, fact_id: str, floor: float) -> bool:
    """Whether the fact itself is written out: a relation or an event at or over ``floor`` (an
    extractor gives events the confidence of the pattern that read them, as relations)."""
    return graph.fact(fact_id).confidence >= floor


def render_notation(
    graph: SemanticGraph, relations: Sequence[str], events: Sequence[str], floor: float = 0.0
) -> tuple[str, list[str]]:
    """The notation and its local entity ids. A relation or event under ``floor`` is left out
    and its entities stay as entity lines (those a reader can use, see
    :func:`noema.retrieval.listing.listable`): the names the retrieval reached, without a
    statement about them that is likely false (see min_confidence)."""
    stated = [r for r in relations if is_stated(graph, r, floor)]
    timed = [v for v in events if is_stated(graph, v, floor)]
    named = _unstated_names(graph, (*relations, *events), floor, _ends(graph, stated, timed))
    encoded = encode_facts(graph, stated, timed, named)
    return encoded.text, list(encoded.local_ids)


def _ends(graph: SemanticGraph, *facts: Sequence[str]) -> set[str]:
    return {e for group in facts for f in group for e in graph.fact(f).entity_ids}


def _unstated_names(
    graph: SemanticGraph, facts: Sequence[str], floor: float, said: set[str]
) -> list[str]:
    """The listable entities of the facts under ``floor``, in order, but those a stated fact
    names (``said``)."""
    kept = [
        e
        for f in facts
        if not is_stated(graph, f, floor)
        for e in graph.fact(f).entity_ids
        if e not in said and listable(graph.entities[e])
    ]
    return list(dict.fromkeys(kept))


def _split(graph: SemanticGraph, chosen: Chosen) -> tuple[list[str], list[str]]:
    """The relations and the events of ``chosen``, each in order."""
    relations = [f for f, _ in chosen if f in graph.relations]
    events = [f for f, _ in chosen if f not in graph.relations]
    return relations, events


def _notation(graph: SemanticGraph, chosen: Chosen, floor: float) -> str:
    return render_notation(graph, *_split(graph, chosen), floor)[0]


# How the names natural_language keeps without a claim say what each is (OTHER says nothing).
_TYPE_WORDS = {
    "PERSON": "person",
    "ORG": "organization",
    "GPE": "place",
    "LOC": "place",
    "DATE": "date",
    "EVENT": "event",
    "PRODUCT": "work or product",
    "MONEY": "amount",
}


def _natural_language(graph: SemanticGraph, chosen: Chosen, floor: float) -> str:
    """The stated facts decoded, then the names notation keeps as entity lines (those of facts
    under the floor that no stated fact names) in one line without a claim: "Also named:
    Trondheim (place), Ardmoy Dairy (organization)." Both fact formats state the same facts."""
    relations, events = _split(graph, chosen)
    stated = [r for r in relations if is_stated(graph, r, floor)]
    timed = [v for v in events if is_stated(graph, v, floor)]
    text = decode_facts(graph, stated, timed)
    kept = _unstated_names(graph, (*relations, *events), floor, _ends(graph, stated, timed))
    if not kept:
        return text
    listed = []
    for entity_id in kept:
        entity = graph.entities[entity_id]
        word = _TYPE_WORDS.get(entity.type)
        listed.append(f"{entity.name} ({word})" if word else entity.name)
    also = f"Also named: {', '.join(listed)}."
    return f"{text}\n{also}" if text else also


def _sentences(graph: SemanticGraph, chosen: Chosen, floor: float) -> str:
    """Each chosen sentence once, grouped by document under ``# title`` (documents in the order
    their first sentence was chosen, sentences in document order); a fact with no sentence is
    shown as its decoded sentence, after the documents. The floor does not apply."""
    groups: dict[str, list[Sentence]] = {}
    loose: list[str] = []
    for item in dict.fromkeys(s if s is not None else f for f, s in chosen):
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


def _render_alone(render: Render, graph: SemanticGraph, fact_id: str) -> str:
    """One fact as ``render`` shows it packed alone, with no floor."""
    return render(graph, [(fact_id, None)], 0.0)


def _sentence_fact(graph: SemanticGraph, fact_id: str) -> str:
    """The fact's first sentence alone, without the ``# title`` line; decoded without one."""
    sentence = first_sentence(graph, fact_id)
    if sentence is None:
        return _render_alone(_natural_language, graph, fact_id)
    return sentence_text(graph, sentence)


def _fact_format(name: Format, description: str, render: Render) -> OutputFormat:
    """A format whose text states the facts: under the floor (by default
    :data:`NOTATION_MIN_CONFIDENCE`) a fact is shown only by its entities' names, and a fact on
    its own is rendered as the only one packed."""
    return OutputFormat(
        name=name,
        description=description,
        states_facts=True,
        default_floor=NOTATION_MIN_CONFIDENCE,
        below_floor="entities_only",
        render=render,
        render_fact=partial(_render_alone, render),
    )


FORMATS: Mapping[str, OutputFormat] = MappingProxyType(
    {
        entry.name: entry
        for entry in (
            _fact_format(
                "notation", "compact lines #n Name :TYPE and #1 -predicate-> #2", _notation
            ),
            _fact_format("natural_language", "each fact as a short sentence", _natural_language),
            OutputFormat(
                name="sentences",
                description="the facts' source sentences by document (best recall)",
                states_facts=False,
                default_floor=0.0,
                below_floor="shown",
                render=_sentences,
                render_fact=_sentence_fact,
            ),
        )
    }
)
"""The output formats by name, in the order help texts list them."""


def get_format(name: str) -> OutputFormat:
    """The registered format called ``name``.

    Raises:
        OptionError: no format has that name (the message lists those that do).

    Example:
        >>> get_format("sentences").description
        "the facts' source sentences by document (best recall)"
    """
    found = FORMATS.get(name) if isinstance(name, str) else None
    if found is None:
        raise OptionError(f"format must be one of {', '.join(map(repr, FORMATS))}, got {name!r}")
    return found


def render_facts(graph: SemanticGraph, fact_ids: Sequence[str], format: Format) -> str:
    """These facts as one self-contained text in ``format``, with no budget; where the format
    shows sentences, each fact is shown by the first sentence it came from."""
    shown = get_format(format)
    if shown.states_facts:
        return shown.render(graph, [(f, None) for f in fact_ids], 0.0)
    return shown.render(graph, [(f, first_sentence(graph, f)) for f in fact_ids], 0.0)


def render_fact(graph: SemanticGraph, fact_id: str, format: Format) -> str:
    """One fact on its own in ``format`` (:attr:`OutputFormat.render_fact`)."""
    return get_format(format).render_fact(graph, fact_id)
