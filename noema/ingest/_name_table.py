"""The names one document yields, as the sentence rules and the assembly of a batch share them.

Apart from :mod:`noema.ingest.entities` because the table is what every reader of a document
writes into (spaCy's entities, the sentence rules, the people and the listings) and the
assembly reads: its filing of names, votes, mentions and tokens is one job, making spaCy's
entities into names and a batch's tables into a graph another.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from noema.ingest.evidence import (
    CUE_VOTE,
    NER_VOTE,
    NOT_PERSON,
    built_place,
    context_type,
    form_type,
    given_name,
    named_as_place,
)
from noema.model.names import clean_name, is_business_suffix, surname
from noema.model.records import VALUE_TYPES, Mention

__all__ = [
    "NameTable",
    "full_name",
    "has_letter",
    "has_word",
    "kind_endings",
    "most_voted",
    "outvote",
    "with_version",
    "without_dashes",
]


class NameTable:
    """The names one document yields: type votes and mentions by name, insertion-ordered (the
    graph's order follows it), and the name each token of the piece being read belongs to.

    A long document is parsed in pieces; :meth:`start_piece` begins one (token indices restart,
    character offsets do not).
    """

    def __init__(self, doc_id: str) -> None:
        self.doc_id = doc_id
        self.votes: dict[str, Counter[str]] = {}
        self.mentions: dict[str, list[Mention]] = {}
        self.by_token: dict[int, str] = {}
        self.offset = 0
        # the types the document's own words settled (see settle_type), for the whole batch
        # unless its title says other things share the main entity's name
        self.settled: dict[str, str] = {}
        # the same for a main entity whose title says others share its name ("Milan (2004
        # film)"): it holds in this document only, where the batch's labels of the name (the
        # city, named in passing elsewhere) are of the other thing
        self.settled_here: dict[str, str] = {}
        self.shared_topic = False
        # other names of a name in this document ("Thomas Anders Brekke Jr." for the title's
        # "Tom Brekke"), kept as the entity's aliases
        self.aliases: dict[str, list[str]] = {}
        # names a mention of which stands where places stand (see named_as_place)
        self.placed: set[str] = set()
        # (type, name) where something beside NER says the name is of that type: the name's
        # form, the sentence, the document's own word for its topic (see type_by_form)
        self.cued: set[tuple[str, str]] = set()
        # names written with a possessive and no more ("joined St Orrin's"): maybe a longer
        # name's short form (see noema.ingest.entities.fold_possessives)
        self.possessive: set[str] = set()
        # names written without one, which are then no such short form
        self.bare: set[str] = set()

    def start_piece(self, offset: int) -> None:
        self.by_token = {}
        self.offset = offset

    def mention(self, span: Any) -> Mention:
        """Where ``span`` (of the current piece) lies in the whole document."""
        return Mention(self.doc_id, self.offset + span.start_char, self.offset + span.end_char)

    def sentence(self, sent: Any) -> Mention:
        """Where sentence ``sent`` lies, without the blank tokens at its ends (a blanked heading
        before the first sentence is not part of it)."""
        words = [token for token in sent if not token.is_space]
        if not words:
            return self.mention(sent)
        end = words[-1].idx + len(words[-1].text)
        return Mention(self.doc_id, self.offset + words[0].idx, self.offset + end)

    def add(
        self,
        name: str,
        span: Any,
        type_: str | None,
        *,
        listed: bool = False,
        label: str | None = None,
    ) -> None:
        """File a mention of ``name`` at ``span``; ``type_`` is NER's vote (``None``: no vote).
        What the name's form and the sentence around it say vote too (see
        :mod:`noema.ingest.evidence`). A ``listed`` name stands in a list line, no sentence:
        what its ``label`` says ("Born: Tallowmere" a place) votes instead of the parse of the
        line ("Born" read as the verb of "Tallowmere")."""
        counts = self.votes.setdefault(name, Counter())
        if type_ is not None:
            counts[type_] += NER_VOTE
        if type_ not in VALUE_TYPES and any(c.isalpha() for c in name):
            form = form_type(name)
            context = label if listed else context_type(span)
            if form == "PERSON" and type_ in ("GPE", "LOC"):
                form = None  # "Jordan River", "Florence": NER's place stands against a name's look
            if form in ("ORG", "LOC", "PRODUCT") and context == "PERSON":
                # a role beside a name whose own words say a thing ("Founder and chief
                # executive, Pellmar Biologics", "Odalys Merino, who managed Larkspur 3.0")
                # was read as the name's apposition: the name's words outrank the parse
                context = None
            if form is None and given_name(name) and type_ not in ("GPE", "LOC"):
                # "Renata Villa" NER called ORG, but so are "Chelsea FC" and "Orlando Magic": a
                # given name against NER's ORG settles nothing, and OTHER claims nothing, unless
                # the sentence says a person ("founded by Curtis Priem")
                agrees = type_ in (None, "PERSON") or context == "PERSON"
                form = "PERSON" if agrees else "OTHER"
            for cue in (form, context):
                if cue == NOT_PERSON:
                    # NER's PERSON for a founded thing ("Tarbes was founded by") claims nothing,
                    # unless its form says what it is ("Kestrel Labs was founded by")
                    cue = "OTHER" if type_ == "PERSON" and form not in ("ORG", "LOC") else None
                # both places: NER's finer call stands ("Lake Placid" the village), but a
                # stadium is no town
                if cue is not None and ({cue, type_} != {"GPE", "LOC"} or built_place(name)):
                    counts[cue] += CUE_VOTE
                    self.cued.add((cue, name))
        if named_as_place(span):
            self.placed.add(name)
        self.mentions.setdefault(name, []).append(self.mention(span))
        self.claim(span, name)

    def claim(self, tokens: Iterable[Any], name: str) -> None:
        for token in tokens:
            self.by_token[token.i] = name

    def register(self, span: Any) -> str | None:
        """Name a proper noun or noun phrase NER missed; it gets no NER vote (see
        :func:`~noema.ingest.entities.batch_graph`). A surname alone is the person named in full
        before it ("Crane" after "Tobias Crane"). ``None`` when the span holds no usable name."""
        span = without_dashes(span)
        versioned = with_version(span)
        if versioned.end > span.end:
            self.give_up(versioned[-1:])  # "3.0" tagged a number of its own
            span = versioned
        name = clean_name(span.text)
        if not has_word(name) or is_business_suffix(name):
            return None  # the "." of "No. 56" tagged a proper noun
        if not named_as_place(span):
            name = full_name(self, name) or name
        self.add(name, span, None)
        return name

    def surname(self, span: Any) -> str | None:
        """The longer name a one-word ``span`` completes ("Crane" after "Tobias Crane", even
        where the tagger read it as the common noun), filed as its mention; else ``None``."""
        full = None if named_as_place(span) else full_name(self, clean_name(span.text))
        if full is not None:
            self.add(full, span, None)
        return full

    def join(self, name: str, into: str) -> None:
        """File every vote, mention and token of ``name`` under ``into`` (a new name or one
        already filed); ``name`` is kept as an alias of ``into`` unless it is one word (a
        surname says nothing an alias should)."""
        self.votes.setdefault(into, Counter()).update(self.votes.pop(name, Counter()))
        self.mentions.setdefault(into, []).extend(self.mentions.pop(name, []))
        self.by_token = {i: into if n == name else n for i, n in self.by_token.items()}
        moved = self.aliases.pop(name, [])
        if " " in name:
            moved.append(name)
        self.aliases.setdefault(into, []).extend(a for a in moved if a != into)
        self.carry_cues(name, into)

    def carry_cues(self, name: str, into: str) -> None:
        """What said ``name``'s type says ``into``'s: the two are one thing."""
        self.cued |= {(type_, into) for type_, cued in self.cued if cued == name}

    def leading_type(self, name: str) -> str | None:
        """The type with the most votes for ``name`` in this document so far."""
        votes = self.votes.get(name)
        return most_voted(votes, list(votes)) if votes else None

    def antecedent(
        self,
        before: int,
        types: frozenset[str],
        skip: Iterable[str] = (),
        described: Sequence[str] = (),
    ) -> str | None:
        """The name of one of ``types`` mentioned last before character ``before`` of the
        document (not one of ``skip``): what "the company" or "she" refers back to. A person may
        be one typed OTHER whose name starts with a given name ("Renata Villa", which NER called
        an organisation). ``described`` are the words that qualify the reference ("avionics" in
        "the avionics firm"): a name holding one of them ("Harrow Avionics") comes before a
        nearer name that does not, as the writer chose the word to tell the two apart."""
        best: tuple[bool, int, str] | None = None
        skipped = set(skip)
        for name, mentions in self.mentions.items():
            leading = self.leading_type(name)
            if leading == "OTHER" and "PERSON" in types and given_name(name):
                leading = "PERSON"
            if name in skipped or leading not in types:
                continue
            last = _last_start(mentions, before)
            if last is None:
                continue
            key = (_holds_a_word(name, described), last, name)
            if best is None or key[:2] > best[:2]:
                best = key
        return best[2] if best else None

    def holding(self, before: int, word: str, skip: Iterable[str] = ()) -> str | None:
        """The name mentioned last before character ``before`` that ends in ``word`` or its
        plural ("Millbrook Creamery" for "the creamery", "Crane Studios" for "the studio"),
        whatever its type; not one of ``skip``, nor a description ("American multinational
        private equity firm": only a name has every word capitalized)."""
        best: tuple[int, str] | None = None
        endings = kind_endings(word)
        for name, mentions in self.mentions.items():
            words = name.split()
            if (
                name in skip
                or len(words) < 2
                or words[-1].lower() not in endings
                or not all(w[:1].isupper() for w in words)
            ):
                continue
            last = _last_start(mentions, before)
            if last is not None and (best is None or last > best[0]):
                best = (last, name)
        return best[1] if best else None

    def said_type(self, name: str) -> str | None:
        """The type the document's own words settled for ``name`` (see :meth:`settle_type`)."""
        return self.settled.get(name) or self.settled_here.get(name)

    def settle_type(self, name: str, type_: str) -> None:
        """The document's own word for what ``name`` is ("a 2002 film", see
        :mod:`noema.ingest.kinds`) outvotes NER's labels of it in this document."""
        counts = self.votes.setdefault(name, Counter())
        outvote(counts, type_)
        (self.settled_here if self.shared_topic else self.settled)[name] = type_
        if not self.shared_topic:  # "Sega (singer)" says nothing of the batch's other Sega
            self.cued.add((type_, name))

    def take_over(
        self,
        span: Any,
        name: str,
        type_: str | None,
        keep: str | None = None,
        *,
        listed: bool = False,
        label: str | None = None,
    ) -> None:
        """``span`` names ``name`` whole ("A Woman's Triumph"): the names NER found inside it
        ("Triumph") give up their mentions there (see :meth:`give_up`); ``listed`` and
        ``label`` as :meth:`add` takes them."""
        self.give_up(span, keep)
        self.add(name, span, type_, listed=listed, label=label)

    def give_up(self, span: Any, keep: str | None = None) -> None:
        """The names found inside ``span`` lose their mentions and tokens there, and a name left
        with no mention is dropped, except ``keep`` (the document's topic, which facts name
        without a mention, as :meth:`add_topic` files it)."""
        start, end = self.offset + span.start_char, self.offset + span.end_char
        for other in list(self.mentions):
            kept = [m for m in self.mentions[other] if not (start <= m.start and m.end <= end)]
            if len(kept) < len(self.mentions[other]):
                self.mentions[other] = kept
                if not kept and other != keep:
                    del self.mentions[other]
                    self.votes.pop(other, None)
        for token in span:
            self.by_token.pop(token.i, None)

    def add_topic(self, name: str, type_: str) -> None:
        """A main entity named by the title but not in the text: one vote, no mention."""
        self.votes[name] = Counter({type_: 1})
        self.mentions.setdefault(name, [])


# Marks that open a list line, and the dash a span of years leaves after its first end (not
# "+" or "*" at the end: "Google+" is a name of its own).
_DASHES = frozenset({"-", "\u2013", "\u2014"})
_LIST_MARKS = _DASHES | {"*", "+", "\u2022"}


def without_dashes(span: Any) -> Any:
    """``span`` without the list mark before it, a dash after it or a bracket it leaves open:
    NER takes them in ("- José Luis Llorente" of a list line, "November 17, 1878 –" of a life's
    span), and the name with the mark was a node apart from the same name without it."""
    start, end = span.start, span.end
    while start < end and span.doc[start].text in _LIST_MARKS:
        start += 1
    while end > start and span.doc[end - 1].text in _DASHES:
        end -= 1
    # a bracket the span opens and does not close ("A Winter of Moths (" of a list line
    # "A Winter of Moths (Orrery House)"): the name ends before it
    opened = [i for i in range(start + 1, end) if span.doc[i].text == "("]
    if opened and not any(span.doc[i].text == ")" for i in range(opened[-1], end)):
        end = opened[-1]
    if (start, end) == (span.start, span.end):
        return span
    from spacy.tokens import Span

    return Span(span.doc, start, end, label=span.label_)


# A release's number: "3.0", "4.2.1", "v2.1".
_VERSION = re.compile(r"v?\d+(?:\.\d+)+")


def with_version(span: Any) -> Any:
    """ "Spindle 3.0" where NER tagged or the tagger read "Spindle" alone: a release number
    right after a name is part of it, unless an entity goes on past it ("3.5 billion" is an
    amount)."""
    doc = span.doc
    if not len(span) or span.end >= len(doc):
        return span
    number = doc[span.end]
    if (
        not _VERSION.fullmatch(number.text)
        or span[-1].whitespace_ != " "
        or any(e.start <= number.i < e.end and e.end > number.i + 1 for e in doc.ents)
    ):
        return span
    from spacy.tokens import Span

    return Span(doc, span.start, span.end + 1, label=span.label_)


def has_letter(text: str) -> bool:
    """Whether ``text`` holds a letter: a name or a predicate without one is a number."""
    return any(c.isalpha() for c in text)


def has_word(text: str) -> bool:
    """Whether ``text`` holds a letter or a digit: a name of punctuation alone names nothing,
    and every such name would be one node joining unrelated documents."""
    return any(c.isalnum() for c in text)


def full_name(names: NameTable, name: str, type_: str | None = None) -> str | None:
    """ "Holm" after "Anna Holm" in the same document means Anna Holm: a one-word name that is
    the last word of exactly one longer name of the document. A short form NER typed a place is
    never completed (spec: "a person named Washington never merges with the city"), one it typed
    an organisation to an organisation ("Villa" after "Aston Villa"), else to the one person of
    that surname (see below), and a longer name
    that reads as a place is never the one meant. Nor is a short form completed that the
    document already named where places stand ("moved to Marlow ... Marlow became a county
    seat")."""
    if " " in name or not name[:1].isupper() or type_ in ("GPE", "LOC", *VALUE_TYPES):
        return None  # "May" the month is not Theresa May
    if name in names.placed:
        return None
    wanted = frozenset({"ORG"}) if type_ == "ORG" else frozenset({"PERSON", "ORG", "OTHER"})
    matches = [
        full
        for full in names.votes
        if " " in full and surname(full) == name and names.leading_type(full) in wanted
    ]
    if type_ == "ORG" and not matches and not _names_a_firm(names, name):
        # the small NER model reads a lone surname as an organisation more often than not:
        # "Reyes, formerly the head of sales" after "Tomas Reyes" is he, where no name of the
        # document is a firm of his name ("Ford Motor Company"); a person by the look of the
        # name too, not a title NER called a person ("Diehard GameFan"); and the only full
        # name of that surname, whatever its type ("Rocky Mosley Sr." beside the topic, Jr.)
        fulls = [full for full in names.votes if " " in full and surname(full) == name]
        if len(fulls) == 1 and names.leading_type(fulls[0]) == "PERSON" and given_name(fulls[0]):
            matches = fulls
    return matches[0] if len(matches) == 1 else None


def _names_a_firm(names: NameTable, name: str) -> bool:
    """Whether a longer name of the document starts with ``name`` ("Ford Motor Company")."""
    return any(other.startswith(f"{name} ") for other in names.votes)


def most_voted(counts: Counter[str], order: Sequence[str]) -> str:
    """Most votes wins; ties go to the label earliest in ``order``, so the choice is
    deterministic."""
    return max(counts, key=lambda t: (counts[t], -order.index(t)))


def outvote(counts: Counter[str], type_: str) -> None:
    """Give ``type_`` more votes than all the other types together, by a cue's weight."""
    others = sum(n for t, n in counts.items() if t != type_)
    counts[type_] = max(counts[type_], others + CUE_VOTE)


def kind_endings(word: str) -> tuple[str, str, str]:
    """The last words a name of the kind ``word`` may end in ("Crane Studios" for "studio")."""
    return (word, f"{word}s", f"{word}es")


def _last_start(mentions: Sequence[Mention], before: int) -> int | None:
    """Where the last of ``mentions`` that ends by character ``before`` starts, or ``None``."""
    return max((m.start for m in mentions if m.end <= before), default=None)


def _holds_a_word(name: str, words: Sequence[str]) -> bool:
    """Whether a word of ``name`` begins with one of ``words`` ("Robotics" with "robot")."""
    parts = [part.lower() for part in name.split()]
    return any(part.startswith(word) for word in words for part in parts)
