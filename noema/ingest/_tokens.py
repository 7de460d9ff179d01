"""What the dependency rules (:mod:`noema.ingest.rules`) read from spaCy tokens: a word's
lemma, a token with its conjuncts, and the predicate a verb, a role noun or a name's head
gives."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from noema.model.records import normalize_predicate

__all__ = [
    "denies",
    "describing_nouns",
    "proper_noun_span",
    "governing_predicate",
    "lemma",
    "role_phrase",
    "said_then",
    "verb_predicate",
    "with_conjuncts",
]


def with_conjuncts(token: Any) -> Iterator[Any]:
    """``token``, then the tokens joined to it by ``conj``, depth first."""
    yield token
    for child in token.children:
        if child.dep_ == "conj":
            yield from with_conjuncts(child)


def proper_noun_span(token: Any) -> Any:
    """A proper noun with the proper nouns compounded just before it: "Quillon Media" from
    "Media"."""
    start = token.i
    for child in reversed(list(token.lefts)):
        if child.dep_ in ("compound", "flat") and child.pos_ == "PROPN" and child.i == start - 1:
            start = child.i
    return token.doc[start : token.i + 1]


def said_then(verb: Any) -> bool:
    """Whether ``verb`` says it came "then", after the verb it hangs on ("..., then moved to")."""
    return any(c.lower_ == "then" and c.dep_ == "advmod" for c in verb.children)


def lemma(token: Any) -> str:
    """The token's lemma in lower case ("born" stays "born")."""
    if token.lower_ == "born":  # spaCy lemmatizes "born" to "bear"
        return "born"
    return str(token.lemma_).lower()


def denies(word: Any) -> bool:
    """Whether ``word`` is denied ("not", "never") or said to hold no more ("no longer", "no
    more", in lower case: "Faith No More" is a band)."""
    return any(
        c.dep_ == "neg"
        or (
            c.text in ("longer", "more")
            and any(g.lower_ == "no" and g.dep_ in ("neg", "det", "advmod") for g in c.children)
        )
        for c in word.children
    )


def governing_predicate(token: Any) -> str:
    """The verb (with the preposition on the way) or noun a name hangs from: "perform_in";
    empty when a word on the way denies it ("never married to Erik Lund"), as a denied fact is
    no fact."""
    prep = ""
    node = token
    for _ in range(8):
        head = node.head
        if head is node:
            break
        if denies(head):
            return ""
        if node.dep_ == "pobj" and head.pos_ == "ADP" and not prep:
            prep = head.lower_
        elif (head.pos_ in ("VERB", "AUX") and head.lemma_ != "be") or head.pos_ == "NOUN":
            return normalize_predicate(f"{lemma(head)}_{prep}" if prep else lemma(head))
        node = head
    return normalize_predicate(prep) if prep else ""


def verb_predicate(verb: Any) -> str:
    """The verb's lemma with its particles, after "not" when negated: "not_give_up"."""
    parts = [lemma(verb)]
    parts += [c.lower_ for c in verb.children if c.dep_ == "prt"]
    if any(c.dep_ == "neg" for c in verb.children):
        parts.insert(0, "not")
    return normalize_predicate("_".join(parts))


def role_phrase(noun: Any) -> str:
    """The role noun with its compound and adjective modifiers: "chief executive officer"."""
    modifiers = [c for c in noun.lefts if c.dep_ in ("compound", "amod") and c.pos_ != "PROPN"]
    return normalize_predicate("_".join([*(lemma(m) for m in modifiers), lemma(noun)]))


def describing_nouns(noun: Any) -> list[str]:
    """The nouns that qualify ``noun`` ("avionics" in "the avionics firm", "robot" in "the robot
    company"), lowercased: long enough to tell names apart, and no nationality ("the American
    company" says where, not which)."""
    return [
        c.lower_
        for c in noun.children
        if c.dep_ in ("amod", "compound")
        and c.pos_ in ("NOUN", "PROPN")
        and c.ent_type_ != "NORP"
        and len(c) >= 4
    ]


def place_clause(verb: Any) -> bool:
    """Whether ``verb`` heads a relative clause of place: "moved to Pennick, where she died"."""
    return verb.dep_ == "relcl" and any(
        c.dep_ == "advmod" and c.lower_ == "where" for c in verb.children
    )
