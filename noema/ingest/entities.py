"""Entity assembly for the built-in extractor: spaCy's entities cleaned into names and one type
per name (what each document is about: :mod:`noema.ingest.topic`).

What the sentence rules (:mod:`noema.ingest.rules`) read, this module names: a :class:`NameTable` per
document owns the names, their type votes and mentions, and which token belongs to which name;
:func:`batch_graph` turns the tables of a batch of documents into one graph.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from noema.ingest._missed_names import read_described, read_releases, without_score
from noema.ingest._name_table import (
    NameTable,
    full_name,
    has_letter,
    has_word,
    kind_endings,
    most_voted,
    outvote,
    with_version,
    without_dashes,
)
from noema.ingest.dates import relative_year, relative_years
from noema.ingest.evidence import (
    NER_VOTE,
    form_type,
    given_name,
    named_as_place,
    names_a_firm,
    type_by_form,
)
from noema.ingest.kinds import KIND_TYPES
from noema.model.graph import SemanticGraph
from noema.model.names import clean_name, is_business_suffix, surname
from noema.model.records import VALUE_TYPES, Document, Mention
from noema.model.roles import ROLE_ACRONYMS, is_role

__all__ = [
    "PERSON_PRONOUNS",
    "THING_PRONOUNS",
    "ExtractedFact",
    "FactEnd",
    "FoundDocument",
    "NameTable",
    "batch_graph",
    "fold_possessives",
    "fold_short_names",
    "kind_endings",
    "map_spacy_label",
    "read_entities",
]

_LABELS = {
    "PERSON": "PERSON",
    "ORG": "ORG",
    "GPE": "GPE",
    "LOC": "LOC",
    "DATE": "DATE",
    "EVENT": "EVENT",
    "PRODUCT": "PRODUCT",
    "MONEY": "MONEY",
    "FAC": "LOC",
    "TIME": "DATE",
    "WORK_OF_ART": "PRODUCT",
    "NORP": "OTHER",
    "LAW": "OTHER",
    "LANGUAGE": "OTHER",
    "PERCENT": "OTHER",
    "QUANTITY": "OTHER",
    "CARDINAL": "OTHER",
}
# The most tokens a title may span to be read as one name where the text repeats it.
TITLE_WORDS = 12
PERSON_PRONOUNS = frozenset({"he", "she", "him", "her", "his", "hers"})
THING_PRONOUNS = frozenset({"it", "its"})


def map_spacy_label(label: str) -> str | None:
    """Noema's type for a spaCy entity label, or ``None`` for labels that are dropped.

    Example:
        >>> map_spacy_label("FAC"), map_spacy_label("ORDINAL")
        ('LOC', None)
    """
    return _LABELS.get(label, None if label == "ORDINAL" else "OTHER")


class ExtractedFact(NamedTuple):
    """One fact read from a sentence, before its names become entity ids."""

    subject: str
    predicate: str
    object: str
    mention: Mention
    confidence: float
    # when the sentence says the fact holds (ISO 8601, see noema.ingest.times); a fact with a
    # time becomes an event, so it is never stated as timeless
    time: str | None = None


class FactEnd(NamedTuple):
    """A succession or departure read in a sentence: ``holder``'s open fact of ``predicate``
    (with ``object``, or any object when ``None``; any role held at ``object`` when
    ``predicate`` is ``None``) ended at ``at``; ``successor`` took it over ("Z replaced X in
    2012": the roles the two share)."""

    holder: str
    predicate: str | None
    object: str | None
    at: str
    successor: str | None = None


@dataclass
class FoundDocument:
    """What one document yields before its names become graph nodes."""

    doc: Document
    names: NameTable
    facts: list[ExtractedFact] = field(default_factory=list)
    ends: list[FactEnd] = field(default_factory=list)  # tenures its successions end
    main: str | None = None  # what the document is about, read from its first piece

    @classmethod
    def of(cls, doc: Document) -> FoundDocument:
        return cls(doc, NameTable(doc.id))


def read_entities(spacy_doc: Any, names: NameTable) -> None:
    """File the entities spaCy found in one piece, cleaned: places joined, headings cut off,
    spelled-out counts dropped, business suffixes kept with their name, short person names
    completed."""
    previous: tuple[Any, str] | None = None  # (span, name) of the last entity kept
    ents = _joined_people(_people_named(_joined_places(_completed_names(spacy_doc.ents))))
    for ent in ents:
        ent = without_score(without_dashes(_within_line(ent)))
        if ent.label_ in _RELEASED:
            ent = with_version(ent)
        type_ = map_spacy_label(ent.label_)
        name = clean_name(ent.text)
        if type_ is None or not has_word(name):
            continue
        if type_ in _NAMED_WITH_LETTERS and not has_letter(name):
            continue  # "1796" of a list line "- 1796- ? - John Laird" tagged a person
        if ent.label_ in ("CARDINAL", "ORDINAL") and not any(c.isdigit() for c in name):
            continue  # "two", "one": spelled-out counts join unrelated documents into one node
        if name.lower() in ROLE_ACRONYMS:
            continue  # "resigned as CEO of X": a role, which NER takes for a company
        if type_ == "DATE" and relative_year(name) is not None:
            # "the following year" is a year only after the one written before it
            name = relative_years(spacy_doc).get(ent.start, "")
            if not name:
                continue
        if is_business_suffix(name) and previous is not None and ent.start - previous[0].end <= 1:
            # "Microsoft, Inc." tagged as two entities: the suffix belongs to the name before it
            names.claim(spacy_doc[previous[0].end : ent.end], previous[1])
            continue
        # a short form standing where places stand ("moved to Marlow") is the place
        full = None if named_as_place(ent) else full_name(names, name, type_)
        if full is None and not named_as_place(ent):
            full = _firm_short_form(names, name, type_, names_a_firm(ent))
        if full is not None:
            name, type_ = full, names.leading_type(full)
        previous = (ent, name)
        names.add(name, ent, type_)
        # NER's own span ends in "'s" where the possessive is part of the name ("St Orrin's"),
        # not where a name owns something ("Harvard's Kennedy School", tagged "Harvard")
        (names.possessive if ent.text.endswith(_POSSESSIVES) else names.bare).add(name)
    read_releases(spacy_doc, names)
    read_described(spacy_doc, names)


_POSSESSIVES = ("'s", "\u2019s")


# Given names that are also names of peoples or faiths: before another name they say who
# ("German Chancellor", "Irish Guards"), not whose name it is.
_PEOPLES = frozenset(
    {"german", "irish", "roman", "dane", "han", "hui", "sunni", "shia", "tory", "roma", "dakota"}
    | {"cheyenne", "shawnee", "maya", "latina", "latino"}
)

# Entity labels a surname never carries: "Anneliese" before a place or a date is no name's start.
_NO_SURNAME = frozenset({"GPE", "LOC", "FAC", "NORP", "DATE", "TIME", "EVENT", "LAW", "LANGUAGE"})


def _people_named(ents: Sequence[Any]) -> list[Any]:
    """ "Anneliese Dorrow" where NER read the given name as a people (NORP) and the surname as
    nothing or a product is one person: a one-word NORP span that is a common given name, and no
    people's name too, followed at once by a capitalized proper noun (and what NER tagged from
    there, up to two words) is a person's name. Left alone, the surname was a node of its own in
    every document that wrote the name in full."""
    from spacy.tokens import Span

    out: list[Any] = []
    skip_to = -1
    for n, ent in enumerate(ents):
        if ent.start < skip_to:
            continue
        end = _surname_end(ent, ents[n + 1] if n + 1 < len(ents) else None)
        if end is None:
            out.append(ent)
            continue
        out.append(Span(ent.doc, ent.start, end, label="PERSON"))
        skip_to = end
    return out


def _surname_end(ent: Any, following: Any | None) -> int | None:
    """Where the name ends that the given name ``ent`` (a NORP span) starts, or ``None``."""
    doc = ent.doc
    if ent.label_ != "NORP" or len(ent) != 1 or ent.end >= len(doc):
        return None
    word, after = ent[0], doc[ent.end]
    if word.whitespace_ != " " or word.lower_ in _PEOPLES or after.pos_ != "PROPN":
        return None
    if following is not None and following.start == ent.end:
        if following.label_ in _NO_SURNAME or len(following) > 2:
            return None  # "Irish Guards" tagged a place is the people's
        end: int = following.end
    else:
        end = ent.end + 1
    name = doc[ent.start : end].text
    if "\n" in name or not given_name(name) or after.lower_ in KIND_TYPES or is_role(after.lower_):
        return None  # "Tory Chancellor Jeremy Hunt": a title, not a surname
    return end


def _joined_people(ents: Sequence[Any]) -> list[Any]:
    """ "Farid Haddad" tagged as two people side by side ("Farid", "Haddad") is one person: a
    one-word PERSON span followed at once, with one space between, by another PERSON span of
    one or two words is one name: two people are seldom written without a word or a comma
    between them. A word that names a kind of thing ("Comedian April Macie" at the start of a
    sentence) is no part of the name."""
    from spacy.tokens import Span

    out: list[Any] = []
    for ent in ents:
        last = out[-1] if out else None
        if (
            last is not None
            and ent.label_ == "PERSON"
            and last.label_ == "PERSON"
            and len(last) == 1
            and len(ent) <= 2
            and ent.start == last.end
            and last[0].whitespace_ == " "
            and last[0].text[:1].isupper()
            and ent[0].text[:1].isupper()
            and last[0].lower_ not in KIND_TYPES
        ):
            out[-1] = Span(ent.doc, last.start, ent.end, label="PERSON")
        else:
            out.append(ent)
    return out


# The small words inside names of many languages: "Quinta do Vessal", "Casa de Lorca".
_PARTICLES = frozenset(
    {"do", "da", "dos", "das", "de", "del", "della", "di", "du", "van", "von", "der", "den"}
)


def _completed_names(ents: Sequence[Any]) -> list[Any]:
    """Names NER cut short, whole again: one ending in a possessive and the capitalized words
    right after it, where the last of them is a body's or a built place's word ("St Orrin's
    Hospital", cut into "St Orrin's" and "Hospital", or "St Orrin's" alone; see
    :func:`noema.ingest.evidence.form_type`; "Microsoft's Windows" is no such name); and one
    followed by a name's small word and capitalized words ("Quinta do Vessal", cut into
    "Quinta" and "Vessal")."""
    from spacy.tokens import Span

    out: list[Any] = []
    taken = -1  # the end of the last name taken longer
    starts = {ent.start for ent in ents}
    for ent in ents:
        if ent.start < taken:
            continue  # "Hospital" or "Vessal" tagged apart: taken into the name before it
        doc, end = ent.doc, ent.end
        label = None
        if ent.text.endswith(_POSSESSIVES):  # not "Harvard" before "'s Kennedy School"
            last = _capitalized_run(doc, end)
            form = form_type(f"{clean_name(ent.text)}'s {doc[end:last].text}")
            if last > end and form in ("ORG", "LOC"):
                label = "ORG" if form == "ORG" else "FAC"
        elif (
            end + 1 < len(doc)
            and doc[end].text in _PARTICLES
            and ent.label_ in _NAMED
            and end not in starts  # "At Barcelona van Gaal won": the small word starts a name
        ):
            last = _capitalized_run(doc, end + 1)
            if last > end + 1:
                label = ent.label_
        if label is not None:
            ent = Span(doc, ent.start, last, label=label)
            taken = last
        out.append(ent)
    return out


# NER labels of names a small word may run on in: not dates, amounts or peoples, nor places,
# whose names NER keeps whole ("Rio de Janeiro") and after which a person's may start ("At
# Barcelona van Gaal won")
_NAMED = frozenset({"PERSON", "ORG", "PRODUCT", "WORK_OF_ART", "EVENT"})


def _capitalized_run(doc: Any, start: int) -> int:
    """The end of the run of capitalized words from ``start``, on one line."""
    last = start
    while last < len(doc) and doc[last].text[:1].isupper() and doc[last].is_alpha:
        last += 1
    return last


def _joined_places(ents: Sequence[Any]) -> list[Any]:
    """ "Tumwater, Washington" tagged as two GPEs is one place: join "GPE , GPE" into one span.

    A run that goes on with "and" or "or" ("Idaho, Oregon, Washington, and California"), or
    has more parts than "city, region, country", is a list of places and stays apart.
    """
    from spacy.tokens import Span

    runs: list[list[Any]] = []
    for ent in ents:
        last = runs[-1][-1] if runs else None
        if (
            last is not None
            and ent.label_ == "GPE"
            and last.label_ == "GPE"
            and ent.start == last.end + 1
            and ent.doc[last.end].text == ","
            and "\n" not in ent.doc[last.start : ent.end].text
        ):
            runs[-1].append(ent)
        else:
            runs.append([ent])
    out: list[Any] = []
    for run in runs:
        if len(run) == 1 or len(run) > 3 or _list_goes_on(run[-1]):
            out.extend(run)
        else:
            out.append(Span(run[0].doc, run[0].start, run[-1].end, label="GPE"))
    return out


def _list_goes_on(span: Any) -> bool:
    """Whether "and" or "or" follows ``span``, after a comma or not: it ends a list."""
    doc, i = span.doc, span.end
    if i < len(doc) and doc[i].text == ",":
        i += 1
    return i < len(doc) and doc[i].lower_ in ("and", "or")


# Labels of names a release number may follow ("Spindle 3.0"), not of amounts or dates.
_RELEASED = frozenset({"PERSON", "ORG", "GPE", "LOC", "PRODUCT", "WORK_OF_ART", "FAC", "NORP"})


# Types whose names always hold a letter: a number tagged one of them is no name.
_NAMED_WITH_LETTERS = frozenset({"PERSON", "ORG", "GPE", "LOC"})


def _within_line(span: Any) -> Any:
    """The line of an entity span that holds its root.

    NER sometimes joins a heading to the first word of the next paragraph ("Nvidia\n\nNvidia").
    """
    if "\n" not in span.text:
        return span
    from spacy.tokens import Span

    segments: list[list[Any]] = [[]]
    for token in span:
        if "\n" in token.text:
            segments.append([])
            continue
        segments[-1].append(token)
        if "\n" in token.whitespace_:
            segments.append([])
    segment = next((seg for seg in segments if span.root in seg), None) or max(segments, key=len)
    if not segment:
        return span[0:0]
    return Span(span.doc, segment[0].i, segment[-1].i + 1, label=span.label_)


def _firm_short_form(names: NameTable, name: str, type_: str | None, firm_cue: bool) -> str | None:
    """ "joined Veltrix" after "Veltrix Robotics" in the same document means the firm: a
    one-word name, where the sentence puts a firm or a team (see
    :func:`noema.ingest.evidence.names_a_firm`), that is the first word of exactly one longer
    organisation's name of the document. The small NER model types such a short form a place
    as often as not, and the cue overrules it ("joined Boston" after "Boston Celtics"). Without
    the cue the first word is as often another thing: the parent ("BBC" beside "BBC Films",
    "Sony" beside "Sony Network Entertainment"), a people ("British" beside "British Boxing
    Board of Control") or a place ("Lesotho" beside "Lesotho Liberation Army"). A person's name
    is never completed so ("Ford" the man is not "Ford Motor Company"), nor a name the document
    already named where places stand."""
    if not firm_cue or " " in name or not name[:1].isupper() or type_ in ("PERSON", *VALUE_TYPES):
        return None
    if name in names.placed or names.leading_type(name) in ("PERSON", "GPE", "LOC"):
        return None
    matches = [
        full
        for full in names.votes
        if full.startswith(f"{name} ") and names.leading_type(full) == "ORG"
    ]
    return matches[0] if len(matches) == 1 else None


def _decide_type(votes: Counter[str], batch: Counter[str], name: str = "") -> str:
    """The type of a name in one document.

    The document's own mentions decide whether the name is a PERSON, because a person and a place
    sharing a name (Washington) are different things, when they say enough: two NER labels or a
    cue of the sentence (see :mod:`noema.ingest.evidence`). A lone NER label that is no place
    ("Ivo Marsh" ORG where the next document says he was born) is outvoted by the batch. Among
    the other types the small model's labels are noisy ("Nvidia" ORG in one sentence, GPE in the
    next), so every mention of the name in the batch votes, which gives one name one node across
    documents; where two types have as many votes, the name is OTHER, which claims nothing.
    """
    chosen = votes if votes else batch
    if not chosen:  # a proper noun NER never labelled
        return "OTHER"
    document_first = [*votes, *(t for t in batch if t not in votes)]
    own = most_voted(chosen, document_first)
    lone = bool(votes) and chosen[own] <= NER_VOTE
    # one unsupported label: the batch knows more; a lone place label stands ("Washington" the
    # city beside the man), unless the name has a person's form ("Agnes Fenwick", LOC once)
    if lone and (own not in ("GPE", "LOC") or given_name(name)) and batch:
        chosen = batch
    # OTHER only says the evidence was undecided ("Nadia Bellamy": a given name, NER's ORG), so
    # a person's cue as strong ("she" in her own document) settles it
    if most_voted(chosen, sorted(document_first, key=lambda t: t == "OTHER")) == "PERSON":
        return "PERSON"
    # the batch already holds this document's votes; ties go to the batch's first label, so every
    # document of the batch decides the same
    others = Counter({t: n for t, n in (batch or votes).items() if t != "PERSON"})
    pool = others if others else chosen
    top = pool.most_common(2)
    if len(top) == 2 and top[0][1] == top[1][1]:
        return "OTHER"  # the evidence disagrees and nothing settles it: OTHER claims nothing
    batch_first = [*batch, *(t for t in votes if t not in batch)]
    return most_voted(pool, batch_first)


def batch_graph(found: Sequence[FoundDocument]) -> SemanticGraph:
    """One graph for a batch of parsed documents; a name's type votes are pooled over the batch."""
    batch_votes: dict[str, Counter[str]] = {}
    for item in found:
        for name, votes in item.names.votes.items():
            batch_votes.setdefault(name, Counter()).update(votes)
    # A document's own word for what it is about ("Pennick Ironworks is a foundry", "the
    # company" for the name "it" stands for) outvotes the labels other documents give the name
    # in passing, where it mostly has one: one name, one node of the type its own document says.
    # Another document's two labels or a cue of its sentence still decide there (Washington).
    settled: dict[str, set[str]] = {}
    for item in found:
        for name, type_ in item.names.settled.items():
            settled.setdefault(name, set()).add(type_)
    things: dict[str, str] = {}  # name -> the one type other than PERSON its documents said
    for name, types in settled.items():
        if len(types) == 1:  # two documents that disagree name two things ("Orlin", an album)
            outvote(batch_votes[name], *types)
            if types != {"PERSON"}:
                things[name] = next(iter(types))
    for name, type_ in list(things.items()):
        short = _short_form(name)
        if short in batch_votes and short not in settled:
            # "the Hollinsworth Centre" for the Hollinsworth Centre for Tropical Medicine, a
            # research institute by its own page, where NER calls the short form a place
            outvote(batch_votes[short], type_)
            things[short] = type_
    for name in batch_votes:
        if _town_club(name, batch_votes):
            outvote(batch_votes[name], "ORG")
            things[name] = "ORG"
    cued = set().union(*(item.names.cued for item in found))
    graph = SemanticGraph()
    for item in found:
        _add_to_graph(graph, item, batch_votes, cued, things)
    return graph


def _short_form(name: str) -> str:
    """The name of a body without what it is "for" or "of": "Hollinsworth Centre" of the
    Hollinsworth Centre for Tropical Medicine; ``""`` when there is no such tail, or what is left
    is one word ("University" of the University of Alabama)."""
    for word in (" for ", " of "):
        head, found, _ = name.partition(word)
        if found and " " in head and head[:1].isupper():
            return head
    return ""


def _town_club(name: str, batch_votes: dict[str, Counter[str]]) -> bool:
    """Whether ``name`` is a town's name and "Town" ("Marrowby Town"), where the batch names the
    town as a place: a football club, which NER calls a person or a place. Not "Cape Town" or
    "George Town", whose first words are no town's name."""
    town, _, word = name.rpartition(" ")
    votes = batch_votes.get(town)
    if word != "Town" or not votes or not town[:1].isupper():
        return False
    return most_voted(votes, list(votes)) == "GPE"


def fold_short_names(found: FoundDocument) -> None:
    """Join a one-word name to the one longer name of its document it ends ("Marr" tagged a
    person before "Ilse Marr", which NER missed, was read as a noun phrase): the completion of
    :func:`read_entities` for a longer name read after the short one, for people only: a
    surname joins a person ("Crane" never joins "Crane Studios"), and a place's or an
    organisation's short name is left as it is ("Kassel" is not "Regierungsbezirk Kassel")."""
    names = found.names
    joined: dict[str, str] = {}
    for short in [n for n in names.votes if " " not in n and n[:1].isupper()]:
        if names.leading_type(short) not in ("PERSON", None):
            continue
        full = full_name(names, short, "PERSON")
        if full is None or names.leading_type(full) not in ("PERSON", "OTHER", None):
            continue
        names.votes[full].update(names.votes.pop(short))
        names.mentions.setdefault(full, []).extend(names.mentions.pop(short, []))
        names.carry_cues(short, full)
        joined[short] = full
    _rename(found, joined)


def fold_possessives(found: Sequence[FoundDocument]) -> None:
    """Join a name written with a possessive and no more to the one longer name of the batch
    that goes on from it: "joined St Orrin's" is St Orrin's Hospital, where NER's span, cut at
    its "'s", left a person "St Orrin". The short form's votes are dropped, not carried: they are
    NER's guess at the cut name, and the longer name's own words and mentions say what it is.
    Only a name NER's span ended with "'s" ("St Orrin's", never "Harvard" before "'s Kennedy
    School") and that its document never writes without one; the batch is the run of documents
    read together, so a document read in another run keeps its short form."""
    longer: dict[str, set[str]] = {}
    for item in found:
        for name in item.names.votes:
            for mark in _POSSESSIVES:
                head, cut, tail = name.partition(f"{mark} ")
                if cut and head and tail:
                    longer.setdefault(head, set()).add(name)
    for item in found:
        names = item.names
        joined = {
            short: next(iter(longer[short]))
            for short in sorted(names.possessive - names.bare)  # never written without "'s"
            if short in names.votes and len(longer.get(short, ())) == 1
        }
        for short, full in joined.items():
            names.votes.pop(short)
            names.votes.setdefault(full, Counter())
            names.mentions.setdefault(full, []).extend(names.mentions.pop(short, []))
        _rename(item, joined)


def _rename(found: FoundDocument, joined: dict[str, str]) -> None:
    """The document's facts, tenures and main entity with each name of ``joined`` replaced by
    the name it joined; a fact that joins a name to itself is gone."""
    if not joined:
        return
    facts = (
        f._replace(subject=joined.get(f.subject, f.subject), object=joined.get(f.object, f.object))
        for f in found.facts
    )
    found.facts = [f for f in facts if f.subject != f.object]
    found.ends = [
        end._replace(
            holder=joined.get(end.holder, end.holder),
            object=end.object and joined.get(end.object, end.object),
        )
        for end in found.ends
    ]
    found.main = found.main and joined.get(found.main, found.main)


def _add_to_graph(
    graph: SemanticGraph,
    found: FoundDocument,
    batch_votes: dict[str, Counter[str]],
    cued: set[tuple[str, str]],
    things: dict[str, str],
) -> None:
    graph.add_document(found.doc)
    names = found.names
    ids: dict[str, str] = {}
    # a surname of a person the document names in full is a person's name ("Obama" beside
    # "Barack Obama", left apart where two people of the document share it)
    surnames = {surname(n) for n in names.votes if " " in n and names.leading_type(n) == "PERSON"}

    def entity(name: str) -> str:
        if name not in ids:
            type_ = names.settled_here.get(name) or _decide_type(
                names.votes[name], batch_votes.get(name, Counter()), name
            )
            if (
                type_ == "PERSON"
                and name in things
                and ("PERSON", name) not in names.cued
                and not given_name(name)
            ):
                # "Larkspur" NER called a person twice here, where its own document said it is
                # a web framework: nothing here but NER's guess from its look says a person
                type_ = things[name]
            if (
                type_ in ("ORG", "OTHER")
                and ("PERSON", name) in cued
                and name not in things
                and " " in name
                and form_type(name) is None
                and (
                    # OTHER is what a given name against NER's ORG leaves: it claims nothing
                    (type_ == "OTHER" and given_name(name))
                    or ((type_, name) not in cued and not given_name(name))
                )
            ):
                # "Imogen Thrale": NER's ORG in every document, where her own page's "she"
                # or a role people hold says a person; a name of a firm's form stays a firm,
                # and so does one with a given name that the votes made an ORG ("Walt Disney"
                # the company); where they left OTHER (a given name against NER's ORG), the
                # page's own words decide
                type_ = "PERSON"
            if (type_, name) not in cued and not (type_ == "PERSON" and name in surnames):
                # NER alone, for a name whose look does not fit the type: the type its look
                # says, else OTHER, which claims nothing
                type_ = type_by_form(type_, name)
            ids[name] = graph.add_entity(
                name,
                type_,
                aliases=names.aliases.get(name, ()),
                mentions=names.mentions.get(name, ()),
            )
        return ids[name]

    for fact in found.facts:
        if not has_letter(fact.predicate):
            continue  # "1796" read as the role of a list line run into the sentence before it
        ends = (entity(fact.subject), entity(fact.object))
        if fact.time is None:
            graph.add_relation(
                ends[0],
                fact.predicate,
                ends[1],
                mentions=[fact.mention],
                confidence=fact.confidence,
            )
        else:
            graph.add_event(
                fact.predicate,
                ends,
                time=fact.time,
                mentions=[fact.mention],
                confidence=fact.confidence,
            )
    for name in names.votes:
        entity(name)
