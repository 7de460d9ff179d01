"""Bridge entities: which entity of the evidence found so far the next search should add.

A multi-hop question ("Who founded the company that acquired LinkedIn?") names only the first
hop. The sentence that answers it ("Microsoft acquired LinkedIn in 2016.") names the bridge,
"Microsoft", and a second search for the question together with that name finds what the
question asks about it ("Bill Gates and Paul Allen founded Microsoft."), without an LLM.

The bridge of a sentence is one entity of its facts that the question does not name (the
question's own names bring nothing new), that can be walked through (no dates, amounts or
descriptions), preferring entities some document is about, then the rarer ones (fewer facts:
a name every document mentions says little), then the first in the sentence.

The further search is not the question with the name added: the words of the question that the
evidence already says ("acquired", "LinkedIn") are what the first search answered, and left in
they pull the search back to the same sentences. The query is what remains of the question, then
the bridge's name ("Who founded the company that Microsoft"), an approximation of the next
sub-question without an LLM. Along a chain of steps the evidence of every earlier step counts.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from noema.model.graph import VALUE_TYPES, SemanticGraph
from noema.model.names import is_description, normalize_name

__all__ = [
    "bridge_entity",
    "bridge_query",
    "entities_of",
    "question_words",
    "remaining_question",
    "walkable",
]

# Words that carry the question's form, not what it asks about: kept in the remaining question
# even when the evidence has them too ("who", "the", "of" are in most sentences).
_FORM_WORD_LIST = (
    "a an and are as at by did do does for from how in is of on or that the to was were what "
    "when where which who whom whose why with"
)
_FORM_WORDS = frozenset(_FORM_WORD_LIST.split())


def walkable(graph: SemanticGraph, entity_id: str) -> bool:
    """Dates, amounts and descriptions ("American rock band") are shared by unrelated things:
    walking, hopping or bridging through them would join everything."""
    entity = graph.entities[entity_id]
    return entity.type not in VALUE_TYPES and not is_description(entity.name)


def entities_of(graph: SemanticGraph, fact_id: str) -> tuple[str, ...]:
    """The entities a relation or an event joins."""
    rel = graph.relations.get(fact_id)
    if rel is not None:
        return rel.subject_id, rel.object_id
    return graph.events[fact_id].participant_ids


def question_words(question: str) -> str:
    """The question normalized as names are, padded so a name is matched as whole words."""
    return f" {normalize_name(question)} "


def _named_in(question: str, names: Sequence[str]) -> bool:
    """The question names the entity: one of its names as whole words, or every word of a
    name spelled nearly so ("Bubi River" in a question about the Bubye River: another
    spelling of the question's own river, which brings nothing new)."""
    words = question.split()
    for name in names:
        key = normalize_name(name)
        if not key:
            continue
        if f" {key} " in question:  # both normalized: words and single spaces, padded
            return True
        if all(any(_near(part, word) for word in words) for part in key.split()):
            return True
    return False


def _near(a: str, b: str) -> bool:
    """Two spellings of one word: equal, or both at least 4 letters, the same first three,
    and at most 2 edits apart."""
    if a == b:
        return True
    if len(a) < 4 or len(b) < 4 or a[:3] != b[:3] or abs(len(a) - len(b)) > 2:
        return False
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1] <= 2


def bridge_entity(
    graph: SemanticGraph,
    fact_ids: Sequence[str],
    question: str,
    topics: Mapping[str, Sequence[str]],
    used: Collection[str],
) -> tuple[str, str] | None:
    """The bridge among the entities of ``fact_ids`` (the facts of one sentence), with the fact
    it came from: ``(entity id, fact id)``; ``None`` when no entity qualifies.

    ``question`` is :func:`question_words` of the question; ``used`` are bridges already taken.
    """
    candidates: dict[str, tuple[int, int, int, str]] = {}
    for fact_id in fact_ids:
        for entity_id in entities_of(graph, fact_id):
            if entity_id in candidates or entity_id in used or not walkable(graph, entity_id):
                continue
            entity = graph.entities[entity_id]
            if _named_in(question, (entity.name, *entity.aliases)):
                continue
            rank = (
                0 if entity_id in topics else 1,
                len(graph.facts_of(entity_id)),
                len(candidates),
                fact_id,
            )
            candidates[entity_id] = rank
    if not candidates:
        return None
    best = min(candidates, key=lambda e: candidates[e])
    return best, candidates[best][3]


def remaining_question(question: str, evidence: str) -> str:
    """The question without the words the evidence already says (its form words kept).

    Example:
        >>> remaining_question("Who founded the company that acquired LinkedIn?",
        ...                    "Microsoft acquired LinkedIn in 2016.")
        'Who founded the company that'
    """
    said = set(normalize_name(evidence).split())
    kept = []
    for word in question.split():
        key = normalize_name(word)
        if key and key not in _FORM_WORDS and key in said:
            continue
        kept.append(word)
    return " ".join(kept)


def bridge_query(graph: SemanticGraph, question: str, entity_id: str, evidence: str = "") -> str:
    """The text of the next search: the question less what ``evidence`` (the text of the
    sentences that led to the bridge) already says, then the bridge's name.

    Example:
        >>> g = SemanticGraph()
        >>> microsoft = g.add_entity("Microsoft", "ORG")
        >>> bridge_query(g, "Who founded the company that acquired LinkedIn?", microsoft,
        ...              "Microsoft acquired LinkedIn in 2016.")
        'Who founded the company that Microsoft'
    """
    return f"{remaining_question(question, evidence)} {graph.entities[entity_id].name}"
