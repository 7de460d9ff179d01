"""What a document is about: its title, its main entity, and whether its pronouns stand for a
person. The sentence rules resolve "it", "she" and "the company" against this main entity."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from noema.ingest._tokens import lemma, proper_noun_span
from noema.ingest.entities import (
    PERSON_PRONOUNS,
    THING_PRONOUNS,
    TITLE_WORDS,
    FoundDocument,
    NameTable,
)
from noema.ingest.kinds import qualified_kind
from noema.ingest.layout import title_line, title_name
from noema.ingest.people import person_titled
from noema.model.names import clean_name, strip_disambiguation
from noema.model.records import VALUE_TYPES, Document

__all__ = ["main_entity", "main_kinds", "pronouns_say_person", "title_of"]


def title_of(doc: Document) -> str | None:
    """The document's title: its ``title`` metadata, else the title line it opens with (see
    :func:`~noema.ingest.layout.title_line`; a document handed over without metadata, from
    LangChain say, still has its title)."""
    title = doc.metadata.get("title") if doc.metadata else None
    if not (isinstance(title, str) and title.strip()):
        title = title_line(doc.text)
    # a title with nothing to name ("# (Draft)", "---") names no topic
    if not any(c.isalnum() for c in clean_name(strip_disambiguation(title))):
        return None
    return title


def main_entity(
    spacy_doc: Any, found: FoundDocument, parse: Callable[[str], Any] | None = None
) -> str | None:
    """What the document is about: the name its title gives (added when the text never names
    it), else the entity subject of its first sentence: a headline names no topic (see
    :func:`~noema.ingest.layout.title_name`). A title the page itself opens with is a headline
    unless it reads as a name or the text writes it; a title given as metadata only (a data
    set's) is one only where ``parse`` reads it as a sentence."""
    names = found.names
    title = title_of(found.doc)
    is_sentence = None if parse is None else lambda text: _sentence(parse(text))
    if title is not None and " ".join(title.split()) == title_line(found.doc.text):
        # a title written on the page is a headline unless it reads as a name: people head
        # their pages "No sale of Narvaline rights"; a data set's titles are Wikipedia's names
        is_sentence = _always
    named = (
        title_name(strip_disambiguation(title), spacy_doc.text, is_sentence=is_sentence)
        if title
        else None
    )
    if title is not None and named is not None:
        wanted = clean_name(named)
        lowered = wanted.lower()
        for name in names.votes:
            if name.lower() == lowered:
                return name
        # a person the title names shorter than the text (person_titled leaves out a title
        # that says another kind: "Ed Wood (film)" is about a film, not about the man)
        person = person_titled(title, names)
        if person is not None:
            # "Tom Brekke", whose first sentence says "Thomas Anders Brekke Jr.": the title is
            # the name he goes by, the full name an alias of the one node
            names.join(person, wanted)
            return wanted
        head, comma, rest = wanted.partition(",")
        where = rest.split()
        # a place's qualifier: capitalized words, not a list ("Dolenz, Jones, Boyce & Hart") or
        # a volume ("Trozos de Mi Alma, Vol. 2")
        qualified = bool(comma and where) and all(
            w[:1].isupper() and w.isalpha() for w in where if w not in ("of", "de")
        )
        subject = _first_subject(spacy_doc, names) if qualified else None
        if subject is not None and subject.lower() == head.strip().lower():
            # "Alder Springs, Oregon" whose text says "Alder Springs is an unincorporated
            # community": the gazetteer's title is another name of what the text names
            names.aliases.setdefault(subject, []).append(wanted)
            return subject
        owner = _possessive_owner(wanted)
        if owner is not None:
            for name in names.votes:
                if name.lower() == owner.lower():
                    return name
        # The title names the topic even when NER missed it; its type comes from the entities
        # inside it when they are all it says ("Raymond, Maine"), else OTHER: "Seal of Montana"
        # and "Pakistan at the 2004 South Asian Games" are not places. A year or an amount inside
        # a title ("1986 OFC U-20 Championship") names an edition, not what the document is
        # about: a DATE topic would also stop the walk, which does not pass through dates.
        inner = [n for n in names.votes if n.lower() in lowered]
        rest = lowered
        for name in inner:
            rest = rest.replace(name.lower(), " ")
        votes: Counter[str] = Counter()
        if not any(c.isalnum() for c in rest):
            for name in inner:
                votes.update({t: n for t, n in names.votes[name].items() if t not in VALUE_TYPES})
        type_ = votes.most_common(1)[0][0] if votes else "OTHER"
        # the text names it whole where NER saw a part ("Triumph" of "A Woman's Triumph")
        at = spacy_doc.text.find(wanted)
        span = spacy_doc.char_span(at, at + len(wanted)) if at >= 0 else None
        if span is not None and _names_one_thing(span, names):
            names.take_over(span, wanted, type_)
        else:
            names.add_topic(wanted, type_)
        return wanted
    return _first_subject(spacy_doc, names)


def _always(text: str) -> bool:
    del text
    return True


def _sentence(parsed: Any) -> bool:
    """Whether a parsed title is a sentence ("Glenmoor Arena opens its doors", "Velotrexin
    approved after nine years"): its root is a verb that says something beyond its subject,
    not a noun ("Hudson River bomb plot") nor one the tagger read as a verb ("New Addington
    tram stop", "List of Dallas Stars head coaches")."""
    roots = [token for token in parsed if token.dep_ == "ROOT"]
    # not a capitalized word ("Bellas Artes metro station") nor a gerund ("Swimming at the
    # 1904 Summer Olympics"), which name things
    if len(roots) != 1 or roots[0].pos_ not in ("VERB", "AUX") or roots[0].tag_ == "VBG":
        return False
    if not roots[0].text[:1].islower():
        return False
    said = ("nsubj", "nsubjpass", "punct", "compound")
    # "Spindle 3.0 released": a past verb says what happened to its subject
    return roots[0].tag_ in ("VBD", "VBN") or any(c.dep_ not in said for c in roots[0].children)


def _first_subject(spacy_doc: Any, names: NameTable) -> str | None:
    """The name the first sentence is about: its subject's name, or a proper noun NER missed
    there, filed as a name."""
    for sent in spacy_doc.sents:
        for token in sent:
            if token.dep_ not in ("nsubj", "nsubjpass"):
                continue
            if token.i in names.by_token:
                return names.by_token[token.i]
            if token.pos_ == "PROPN" and not token.text.isupper():
                # "Quillon Media is a media group ...": a name NER missed is still the subject
                # (an all-capitals word is more often a title: "Apple's CEO Tim Cook")
                return names.register(proper_noun_span(token))
        break
    return None


def _names_one_thing(span: Any, names: NameTable) -> bool:
    """Whether a title found in the text can be one name: a few words inside one sentence,
    short of its root verb and holding at most one name NER saw; not a heading that runs on
    into the text ("Google Larry Page founded Google": a statement, naming two things)."""
    sentence = span[0].sent
    inside = {names.by_token[t.i] for t in span if t.i in names.by_token}
    return (
        len(span) <= TITLE_WORDS
        and span.end <= sentence.end
        and not span.start <= sentence.root.i < span.end
        and "\n" not in span.text
        and len(inside) <= 1
    )


def _possessive_owner(title: str) -> str | None:
    """ "Nvidia" for "Nvidia's early years", which is about Nvidia; ``None`` for "Charlotte's
    Web", a title of its own rather than an aspect of Charlotte."""
    for mark in ("'s ", "\u2019s "):
        owner, _, rest = title.partition(mark)
        if rest and not rest[0].isupper():
            return owner
    return None


def pronouns_say_person(spacy_doc: Any, labelled_person: bool) -> bool:
    """Whether "he"/"she" or "it" stands for the document's main entity.

    The text's own subject pronouns decide when they agree: an article whose subjects are only
    "it" is about a thing even when NER called its name a PERSON ("Religion on the Line ... it was
    hosted by Dennis Prager"), and one whose subjects are only "he"/"she" is about a person that
    NER missed or mistyped. Otherwise NER's label decides.
    """
    person = thing = 0
    for token in spacy_doc:
        if token.dep_ in ("nsubj", "nsubjpass"):
            person += token.lower_ in PERSON_PRONOUNS
            thing += token.lower_ in THING_PRONOUNS
    if person and not thing:
        return True
    if thing and not person:
        return False
    return labelled_person


def main_kinds(spacy_doc: Any, main: str | None, names: NameTable) -> frozenset[str]:
    """What the document says its main entity is, from its first "X is a ..." sentence."""
    if main is None:
        return frozenset()
    for sent in list(spacy_doc.sents)[:2]:
        root = sent.root
        if root.lemma_ != "be":
            continue
        subjects = [c for c in root.children if c.dep_ == "nsubj"]
        if not subjects or not _names_main(subjects[0], main, names):
            continue
        attributes = [c for c in root.children if c.dep_ == "attr" and c.pos_ == "NOUN"]
        # the noun, and the kind its modifiers make of it ("a census-designated place")
        return frozenset(lemma(c) for c in attributes) | frozenset(
            qualified_kind(sent.doc[c.left_edge.i : c.i + 1].text, lemma(c)) for c in attributes
        )
    return frozenset()


def _names_main(token: Any, main: str, names: NameTable) -> bool:
    """Whether ``token`` names the main entity: its name, or (for a title NER missed in the
    text, "Copper Wren is a band") the words of its compound name."""
    if token.i in names.by_token:
        return names.by_token[token.i] == main
    words = [c for c in token.lefts if c.dep_ in ("compound", "flat")]
    text = " ".join(t.text for t in sorted([*words, token], key=lambda t: t.i))
    return text.lower() == main.lower()
