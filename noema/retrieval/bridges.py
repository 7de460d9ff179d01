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

The question's own words can also say which fact leads on. In "Where was the founder of Kestrel
Mills born?" the sentence most like the question may be about the company's later chief
executive ("... taking over from its founder"), whose entity a bridge from that sentence would
follow. "founder" is the founding: of the facts of an entity the question names, one whose
predicate shares a word stem with the question (the word nearest the name first: in a nested
question the innermost relation stands next to the name) gives a *relation bridge*, the other
end of that fact.

A bridge found leads on the same way when the question asks a further relation of it: in "Where
was the chief executive of the company that licensed Velotrexin born?" the company reached by
"licensed" has one chief executive among its facts, the *chained bridge*, whose own page says
where she was born. Without it, only the best sentence of the company's search could give the
third step's bridge, and that sentence is often about the drug again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence

from noema.model.graph import VALUE_TYPES, SemanticGraph
from noema.model.names import is_description, normalize_name
from noema.model.roles import OFFICES

__all__ = [
    "answers_asked",
    "asked_stems",
    "bridge_entity",
    "chained_bridge",
    "relation_bridge",
    "relation_words",
    "bridge_query",
    "entities_of",
    "predicate_of",
    "question_names",
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
# Predicate words that name no relation of their own ("is", "has"): they match any question.
# Not "make": "the company that makes the Talvio" asks for the maker.
_VERB_WORDS = frozenset({"be", "have", "do", "get", "become"})
# Past forms a suffix rule cannot undo, of verbs predicates are made of (predicates are lemmas).
_IRREGULAR = {
    "bought": "buy",
    "led": "lead",
    "ran": "run",
    "took": "take",
    "sold": "sell",
    "won": "win",
    "wrote": "write",
    "written": "write",
    "held": "hold",
    "built": "build",
    "began": "begin",
    "begun": "begin",
    "left": "leave",
    "grew": "grow",
    "grown": "grow",
    "sang": "sing",
    "sung": "sing",
    "drew": "draw",
    "drawn": "draw",
    "taught": "teach",
    "met": "meet",
    "born": "born",
    "made": "make",
    "successor": "succeed",
    "paid": "pay",
    "gave": "give",
    "given": "give",
}
# A relation of the named entity leads on when it reaches at most this many entities.
RELATION_BRIDGE_ENDS = 3
_SUFFIXES = ("ings", "ing", "ers", "er", "ors", "or", "ied", "ies", "ed", "es", "s", "e")
# The endings of a question word that names a relation: a verb's past or -ing form, an agent
# noun ("founder", "director"). A bare noun ("the town of Halloran", "the company") names what a
# thing is, and would match predicates such as ``town_on``.
_RELATION_ENDINGS = ("ed", "ing", "er", "ers", "or", "ors")


def walkable(graph: SemanticGraph, entity_id: str) -> bool:
    """Dates, amounts and descriptions ("American rock band") are shared by unrelated things:
    walking, hopping or bridging through them would join everything."""
    entity = graph.entities[entity_id]
    return entity.type not in VALUE_TYPES and not is_description(entity.name)


def predicate_of(graph: SemanticGraph, fact_id: str) -> str:
    """A relation's predicate or an event's label: what the fact says of its entities."""
    rel = graph.relations.get(fact_id)
    return rel.predicate if rel is not None else graph.events[fact_id].label


def entities_of(graph: SemanticGraph, fact_id: str) -> tuple[str, ...]:
    """The entities a relation or an event joins."""
    rel = graph.relations.get(fact_id)
    if rel is not None:
        return rel.subject_id, rel.object_id
    return graph.events[fact_id].participant_ids


def question_words(question: str) -> str:
    """The question normalized as names are, padded so a name is matched as whole words."""
    return f" {normalize_name(question)} "


def question_names(question: str) -> str:
    """The question's capitalized words, as :func:`question_words` gives them: the words of the
    names it asks about ("ostmere cider" of "... the founder of Ostmere Cider was born?")."""
    words = (w.lstrip("\"'“‘(") for w in question.split())  # a name may open a quotation
    return question_words(" ".join(w for w in words if w[:1].isupper()))


def _named_in(question: str, names: Sequence[str], question_names: str = "") -> bool:
    """The question names the entity: one of its names as whole words, or every word of a
    name spelled nearly so ("Bubi River" in a question about the Bubye River: another
    spelling of the question's own river, which brings nothing new), or every word past a
    natural place's kind word among the words of the question's names (``question_names``):
    "Lake Ostmere" in a question about Ostmere Cider, whose search would bring what the
    question's own did; not "Lake District" in a question about "the district"."""
    words = question.split()
    for name in names:
        key = normalize_name(name)
        if not key:
            continue
        if f" {key} " in question:  # both normalized: words and single spaces, padded
            return True
        if all(any(_near(part, word) for word in words) for part in key.split()):
            return True
        telling = [part for part in key.split() if part not in _PLACE_WORDS]
        if 0 < len(telling) < len(key.split()) and all(
            f" {part} " in question_names for part in telling
        ):
            return True
    return False


# The kind words of a natural place's name, which say nothing of which place it is.
_PLACE_WORDS = frozenset({"lake", "river", "mount", "loch", "bay", "island", "isle"})


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
    *,
    names: str = "",
) -> tuple[str, str] | None:
    """The bridge among the entities of ``fact_ids`` (the facts of one sentence), with the fact
    it came from: ``(entity id, fact id)``; ``None`` when no entity qualifies.

    ``question`` is :func:`question_words` of the question, ``names`` its
    :func:`question_names`; ``used`` are bridges already taken.
    """
    candidates: dict[str, tuple[int, int, int, str]] = {}
    for fact_id in fact_ids:
        for entity_id in entities_of(graph, fact_id):
            if entity_id in candidates or entity_id in used or not walkable(graph, entity_id):
                continue
            entity = graph.entities[entity_id]
            if _named_in(question, (entity.name, *entity.aliases), names):
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


def _stem(word: str) -> str:
    """A crude stem, enough to join "founder", "founded" and "founds" to the predicate
    "found", "acquired" to "acquire", "studied" to "study".

    Example:
        >>> [_stem(w) for w in ("founder", "found", "acquired", "acquire", "bought", "studied")]
        ['found', 'found', 'acquir', 'acquir', 'buy', 'study']
    """
    word = _IRREGULAR.get(word, word)
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)]
            return stem + "y" if suffix in ("ied", "ies") else stem
    return word


def _names_relation(word: str) -> bool:
    return word in _IRREGULAR or word.endswith(_RELATION_ENDINGS)


# The words after which a word ending in "s" is a verb: "the company that makes", "the charity
# which funds", "who chairs"; elsewhere such a word is as often a plural noun ("the towns").
_RELATIVES = frozenset({"that", "which", "who"})
_PREPOSITIONS = frozenset({"in", "of", "at", "on", "for", "by", "from", "with", "to", "during"})


def _relation_at(words: Sequence[str], i: int) -> bool:
    """Whether ``words[i]`` names a relation: a verb's past or -ing form, an agent noun (see
    :func:`_names_relation`), or a verb in the present after a relative pronoun."""
    word = words[i]
    if _names_relation(word):
        return True
    # "which" opening the question or after a preposition ("in which") asks which thing:
    # "Which towns near Halloran ...", "the years in which films ..." are nouns
    relative = i > 1 and words[i - 1] in _RELATIVES and words[i - 2] not in _PREPOSITIONS
    return word.endswith("s") and len(word) > 3 and relative


def _predicate_stems(predicate: str) -> set[str]:
    return {
        _stem(part)
        for part in predicate.split("_")
        if part and part not in _FORM_WORDS and part not in _VERB_WORDS
    }


def relation_words(question: str, predicate: str) -> list[str]:
    """The words of ``question`` that share a stem with ``predicate``: what a fact of that
    predicate says of the question.

    Example:
        >>> relation_words("Where was the founder of Kestrel Mills born?", "found")
        ['founder']
    """
    stems = _predicate_stems(predicate)
    words = normalize_name(question).split()
    return [w for i, w in enumerate(words) if _relation_at(words, i) and _stem(w) in stems]


def _name_position(words: Sequence[str], names: Sequence[str]) -> tuple[int, int] | None:
    """Where in ``words`` (the question normalized, split) one of ``names`` stands."""
    for name in names:
        key = normalize_name(name).split()
        for start in range(len(words) - len(key) + 1):
            if key and words[start : start + len(key)] == key:
                return start, start + len(key)
    return None


def _related(
    graph: SemanticGraph,
    entity_id: str,
    stems: Mapping[str, int],
    words: Sequence[str],
    used: Collection[str],
    topics: Mapping[str, Sequence[str]],
    allowed: Callable[[str], bool],
) -> Iterator[tuple[list[int], int, int, str, str]]:
    """The other ends of ``entity_id``'s facts whose predicate shares a stem of ``stems`` (a
    question word's stem -> its distance from what it is measured from): the distances of the
    stems matched, 0 for an end some document is about, the end's fact count, the end and the
    fact. Ends already used, values and names the question writes are passed over."""
    for fact_id in graph.facts_of(entity_id):
        if not allowed(fact_id):
            continue
        distances = [stems[s] for s in _predicate_stems(predicate_of(graph, fact_id)) if s in stems]
        if not distances:
            continue
        for other in entities_of(graph, fact_id):
            if other == entity_id or other in used or not walkable(graph, other):
                continue
            # the name itself, not a near spelling: "the studio founded by Tobias Crane"
            # means Crane Studios without naming it
            if _name_position(words, (graph.entities[other].name,)) is not None:
                continue
            topic = 0 if other in topics else 1
            yield distances, topic, len(graph.facts_of(other)), other, fact_id


def relation_bridge(
    graph: SemanticGraph,
    named: Sequence[str],
    question: str,
    used: Collection[str],
    topics: Mapping[str, Sequence[str]],
    allowed: Callable[[str], bool] = lambda _: True,
) -> tuple[str, str] | None:
    """The relation bridge: ``(entity id, fact id)`` of the fact of an entity of ``named``
    that the question names (the others are passed over) whose predicate shares a stem with
    a word of the question (``question`` as :func:`question_words` gives it): nearest that
    entity's name first, then as :func:`bridge_entity` ranks; ``None`` when no fact's
    predicate does."""
    words = question.split()
    best: tuple[int, int, int, str, str] | None = None  # distance, topic, facts, ids
    for named_id in named:
        entity = graph.entities[named_id]
        at = _name_position(words, (entity.name, *entity.aliases))
        if at is None:
            continue
        stems = {
            _stem(w): min(abs(i - at[0]), abs(i - at[1] + 1))
            for i, w in enumerate(words)
            if (i < at[0] or i >= at[1]) and w not in _FORM_WORDS and _relation_at(words, i)
        }
        ranks = [
            (min(distances), topic, facts, other, fact_id)
            for distances, topic, facts, other, fact_id in _related(
                graph, named_id, stems, words, used, topics, allowed
            )
        ]
        # "located" in the United States, "held" in many a country: the relation does not say
        # which thing the question means
        if 0 < len({r[3] for r in ranks}) <= RELATION_BRIDGE_ENDS:
            best = min(ranks) if best is None else min(best, *ranks)
    return None if best is None else (best[3], best[4])


def _asks_relation(words: Sequence[str], i: int) -> bool:
    """Whether question word ``words[i]`` names a relation: a verb's form or agent noun (see
    :func:`_relation_at`), or an office ("chief executive", "head", "chair", "CEO")."""
    return _relation_at(words, i) or words[i] in OFFICES or words[i] in _SPELLED_OUT


def chained_bridge(
    graph: SemanticGraph,
    entity_id: str,
    question: str,
    said: str,
    used: Collection[str],
    topics: Mapping[str, Sequence[str]],
    allowed: Callable[[str], bool] = lambda _: True,
) -> tuple[str, str] | None:
    """The bridge after ``entity_id`` (a bridge the question does not name): ``(entity id,
    fact id)`` of its fact whose predicate shares a stem with a relation word of ``question``
    (:func:`question_words`) that ``said`` (the evidence so far, normalized as names are) does
    not hold; ``None`` when no fact's predicate does, or when the relation reaches more than a
    few entities (it does not say which one the question means).

    A nested question's relations run outward from the name it gives ("Where was the founder
    of the company that licensed Narvaline born?": licensed, founder, born), so of the words
    left the one nearest the words the evidence holds comes first, then as
    :func:`bridge_entity` ranks."""
    words = question.split()
    said_words = set(said.split())
    told = [i for i, w in enumerate(words) if w in said_words and w not in _FORM_WORDS]
    stems: dict[str, int] = {}
    for i, w in enumerate(words):
        if w in _FORM_WORDS or w in said_words or not _asks_relation(words, i):
            continue
        distance = min((abs(i - j) for j in told), default=len(words))
        for part in (w, *_SPELLED_OUT.get(w, ())):  # "ceo_of" as well as "chief_executive_of"
            stems[_stem(part)] = min(distance, stems.get(_stem(part), distance))
    if not stems:
        return None
    # (words of the question the predicate holds, fewest first as negated; distance; topic;
    # facts; the end; the fact): "chief executive" is chief_executive_of, not chief_scientist_of
    ranks = [
        (-len(distances), min(distances), topic, facts, other, fact_id)
        for distances, topic, facts, other, fact_id in _related(
            graph, entity_id, stems, words, used, topics, allowed
        )
    ]
    if not ranks:
        return None
    closest = min(r[0] for r in ranks)
    ranks = [r for r in ranks if r[0] == closest]
    if len({r[4] for r in ranks}) > RELATION_BRIDGE_ENDS:
        return None
    best = min(ranks)
    return best[4], best[5]


def asked_stems(words: str, said: str, names: str = "") -> frozenset[str]:
    """The stems of the relations a question asks (``words``, :func:`question_words` of it)
    that ``said`` (the evidence so far, normalized as names are) does not say: "born" of "Where
    was the founder of the company that makes Narvaline born?" once the evidence names the
    founder. The relation written just before one of the question's names (``names``,
    :func:`question_names`) is the one a bridge was reached by, said or not ("performer" of "the
    sibling of the performer of Decade": the performer's other songs say nothing of the sibling).

    Example:
        >>> question = "Where was the chair of the Lanthorn Foundation born?"
        >>> sorted(asked_stems(question_words(question), "ngozi ferrand", question_names(question)))
        ['born']
    """
    tokens = words.split()
    said_stems = {_stem(w) for w in said.split()}
    # a question's first word is capitalized too ("Who"): no name
    named = [i for i, w in enumerate(tokens) if f" {w} " in names and w not in _FORM_WORDS]
    relations = [
        i for i, w in enumerate(tokens) if w not in _FORM_WORDS and _asks_relation(tokens, i)
    ]
    # the relation written just before a name ("the performer of Decade", "the company that
    # makes Narvaline"), not one after it ("... of the Lanthorn Foundation born?")
    before = [(j - i, i) for i in relations for j in named if i < j]
    if before:
        relations.remove(min(before)[1])
    asked: set[str] = set()
    for i in relations:
        parts = (tokens[i], *_SPELLED_OUT.get(tokens[i], ()))
        asked.update(s for p in parts if (s := _stem(p)) not in said_stems)
    return frozenset(asked)


def answers_asked(
    graph: SemanticGraph, fact_id: str, entity_id: str, asked: Collection[str]
) -> bool:
    """Whether ``fact_id`` is a fact of ``entity_id`` whose predicate shares a stem of
    ``asked`` (see :func:`asked_stems`): what the question wants to know of that entity."""
    if entity_id not in entities_of(graph, fact_id):
        return False
    return not _predicate_stems(predicate_of(graph, fact_id)).isdisjoint(asked)


# offices written as letters in a question, matched by the words a predicate spells them with
_SPELLED_OUT = {
    "ceo": ("chief", "executive"),
    "cfo": ("chief", "financial", "officer"),
    "coo": ("chief", "operating", "officer"),
    "cto": ("chief", "technology", "officer"),
}


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
