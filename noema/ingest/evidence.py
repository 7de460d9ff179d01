"""What a name's own form and its place in a sentence say about its type.

spaCy's small model types a name mostly by its look: on a new user's short documents it called
"Harrow Avionics" a PERSON, "Renata Villa" an ORG and the town "Tarbes" a PERSON, and a name with
two or three mentions has too few labels for a majority to correct them. The sentence usually
says what the thing is: a person is born, dies and is the agent of "founded by"; a place is where
someone is born or a company is based; a company is headquartered, acquired and named with a
company-form word. Each cue found on a mention is a vote of :data:`CUE_VOTE`, beside NER's vote of
:data:`NER_VOTE` per mention (see :func:`noema.ingest.entities.read_entities`).

Only cues that hold across kinds of text are listed; a verb that people and companies both do
("founded", "owns") says nothing.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from importlib.resources import files
from typing import Any

from noema.ingest._tokens import lemma
from noema.ingest.kinds import KIND_TYPES, kind_type, qualified_kind

__all__ = [
    "CUE_VOTE",
    "NER_VOTE",
    "NOT_PERSON",
    "built_place",
    "context_type",
    "form_type",
    "given_name",
    "kind_beside",
    "named_as_place",
    "names_a_firm",
    "type_by_form",
]


def _words(text: str) -> list[str]:
    """The words of a word list written as lines of text, which reads better than literals."""
    return text.split()


# What context_type says of a thing that is no person, without saying what it is.
NOT_PERSON = "not PERSON"

# A cue outweighs two NER labels and loses to three: "was born" settles what the small model
# guessed from a name's look in a sentence or two, not what it saw in many.
NER_VOTE = 2
CUE_VOTE = 5

# The last word of a company's name: "Harrow Avionics", "Lindqvist Marine", "Crane Studios".
_COMPANY_WORDS = frozenset(
    _words("""
    avionics aerospace airlines airways analytics automotive bank biologics biosciences biotech
    books brewery capital
    chemicals communications company corporation dairy distribution dynamics editions electronics
    energy engineering enterprises entertainment foods group holdings industries instruments
    insurance interactive ironworks labs laboratories logistics marine media medical mining motors
    networks partners pharma pharmaceuticals press publishing records robotics shipping shipyards
    software solutions studio studios systems technologies telecom textiles therapeutics trust
    ventures works
    """)
)
# The word that makes a body of people of a name: "Wendholt Polytechnic", "Bryn Academy".
_INSTITUTION_WORDS = frozenset(
    _words("""
    academy college conservatory hospital infirmary institute polytechnic school seminary
    university
    """)
)
# The last word of a sports club's name: "Dunmarrow Rovers", "Eskridge Athletic", "Tarrowby
# United", "Brackwater FC". NER calls such a name after its town a place as often as a club.
# Not "City" or "County" ("Kansas City", "Orange County" are places) nor "Town" alone ("Cape
# Town"): a town's name and "Town" make a club only where the town is named (see
# :func:`noema.ingest.entities.batch_graph`).
_CLUB_WORDS = frozenset(
    _words("""
    united rovers athletic wanderers hotspur albion fc f.c. afc a.f.c.
    """)
)
# The last word of a built place's name: "Kilnworth Stadium", "Glenmoor Arena", "Quarrie
# Laboratory", "Mossgate Field Station". Not "Labs" or "Laboratories", which end companies'
# names ("Kestrel Labs"), nor "Park" or "Hall", which end bands', works' and people's names
# ("Linkin Park", "Jurassic Park", "Arsenio Hall").
_FACILITY_WORDS = frozenset(
    _words("""
    stadium arena ground laboratory observatory velodrome racecourse warehouse airport airfield
    aerodrome hangar vineyard cellar
    """)
)
# A release's number after a name: "Larkspur 3.0", "Corvid 4.2.1", "Spindle v2.1"; not a
# numbered part of a text ("Section 3.2", "Article 5.1").
_VERSION = re.compile(r"v?\d+(?:\.\d+)+[a-z]?")
_NUMBERED_PARTS = frozenset(
    _words("""
    section chapter article paragraph clause figure table appendix part rule step phase
    """)
)
# The word that makes a natural place (or a landmark) of a name, first or last: "River Vell",
# "Tolland River", "Lake Ostmere", "Marbury Abbey". Not "Hill", "Bay" or "Falls", which end as
# many towns' names as places'. A person named so ("River Phoenix") is one by the sentence's
# cues ("was born", "he"), which outweigh NER's labels as this does.
_NATURE_FIRST = frozenset(_words("river lake mount loch"))
_NATURE_LAST = frozenset(_words("river abbey mountains uplands valley glacier"))
# A first word that makes a person of the name: "King Haakon II", "Sir Ian", "Dr. Osei".
_PERSON_TITLES = frozenset(
    _words("""
    king queen prince princess emperor empress pope saint st sir dame lord lady dr dr. mr mr.
    mrs mrs. ms ms. president senator governor general admiral bishop archbishop
    """)
)
# Verbs whose subject is a person.
_PERSON_VERBS = frozenset({"born", "die", "marry", "graduate", "retire", "resign"})
# "founded by X", "started by X": the agent is a person.
_FOUNDING_VERBS = frozenset({"found", "establish", "start", "co-found", "cofound"})
# Verbs whose subject or object is a company.
_COMPANY_VERBS = frozenset({"headquarter", "acquire", "incorporate", "list"})
# Of those, the ones people do too ("Maria listed three reasons"): only their passive subject.
_PASSIVE_ONLY = frozenset({"acquire", "incorporate", "list"})
# "born in X", "based in X": the object of "in" is a place.
_PLACE_VERBS = frozenset(
    {"born", "die", "base", "headquarter", "locate", "situate", "live", "grow", "raise", "bury"}
)
# "mayor of X", "a suburb of X": the object of "of" is a place.
_PLACE_NOUNS = frozenset({"mayor", "suburb", "outskirts", "native", "resident", "capital"})
# "the CEO of X", "X's chairman": a role only a company (or a body like one) has. Not "president"
# or "founder": "the president of France", "the founder of Rome".
_COMPANY_ROLES = frozenset(
    _words("""
    ceo cfo coo cto chairman chairwoman
    """)
)
# "the CEO of Y, X", "CEO X": a role noun beside a name makes the name a person. Not "owner" or
# "president": "Alphabet, the owner of Google", "the president of the league, FIFA".
_ROLE_NOUNS = frozenset(
    _words("""
    ceo founder cofounder co-founder chairman chairwoman mayor governor
    """)
)

# "his grandmother Agnes Fenwick", "His daughter Jordan Sallis": kin are people
_KIN_NOUNS = frozenset(
    _words("""
    mother father son daughter wife husband brother sister grandmother grandfather grandson
    granddaughter uncle aunt nephew niece cousin widow widower
    """)
)
# what only a person is: the roles above, kin and the person kinds ("the drummer Mateo Brisk",
# "Renata Villa, a lawyer")
_PERSON_NOUNS = (
    _ROLE_NOUNS | _KIN_NOUNS | {kind for kind, type_ in KIND_TYPES.items() if type_ == "PERSON"}
)


@cache
def _given_names() -> frozenset[str]:
    """Given names, lowercase (see scripts/given_names.py for where they come from)."""
    text = files("noema.ingest").joinpath("given_names.txt").read_text(encoding="utf-8")
    lines = (line.strip() for line in text.splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))


def built_place(name: str) -> bool:
    """Whether a name's last words make it a built place ("Kilnworth Stadium", "Mossgate Field
    Station"): never a town, whatever NER called it, where a natural place's word ("Lake
    Placid") may be the town of that name.

    Example:
        >>> built_place("Glenmoor Arena"), built_place("Lake Placid")
        (True, False)
    """
    words = name.lower().split()
    return len(words) >= 2 and (words[-1] in _FACILITY_WORDS or words[-2:] == ["field", "station"])


def form_type(name: str) -> str | None:
    """The type a name's own words say: a company word last, a title first.

    Example:
        >>> form_type("Harrow Avionics"), form_type("King Haakon II"), form_type("Renata Villa")
        ('ORG', 'PERSON', None)
        >>> form_type("Lindqvist Marine"), form_type("Villa") is None
        ('ORG', True)
        >>> form_type("aircraft parts company") is None
        True
        >>> form_type("River Vell"), form_type("Wendholt Polytechnic"), form_type("College Park")
        ('LOC', 'ORG', None)
        >>> form_type("Corvid 4.2"), form_type("Tarrowby United"), form_type("Kilnworth Stadium")
        ('PRODUCT', 'ORG', 'LOC')
        >>> form_type("Mossgate Field Station"), form_type("Kestrel Labs"), form_type("Linkin Park")
        ('LOC', 'ORG', None)
        >>> form_type("University of Orrinford"), form_type("school of thought") is None
        ('ORG', True)
    """
    words = name.lower().split()
    if len(words) >= 2 and _VERSION.fullmatch(words[-1]) and words[0] not in _NUMBERED_PARTS:
        # a name and a version number is a release of software, a model of a device
        return "PRODUCT" if all(w[:1].isupper() for w in name.split()[:-1]) else None
    if len(words) >= 3 and words[0] in _INSTITUTION_WORDS and words[1] == "of":
        return "ORG" if name.split()[2][:1].isupper() else None  # "University of Orrinford"
    if len(words) < 2 or not all(word[:1].isupper() for word in name.split()):
        return None  # "an aircraft parts company" is a description, not a company's name
    if words[-1] in _COMPANY_WORDS or words[-1] in _INSTITUTION_WORDS:
        return "ORG"
    if words[-1] in _CLUB_WORDS:
        return "ORG"
    if built_place(name):
        return "LOC"
    if words[0] in _PERSON_TITLES:
        return "PERSON"
    if words[0] in _NATURE_FIRST or words[-1] in _NATURE_LAST:
        return "LOC"
    return None


# The last word of a name that is no person's, whatever NER called it: "Brownlow Medal", "Pilot
# Range", "Pudu Prison", "Klamath Falls", "Kazan Governorate", "Harlan Games". Words that are
# also surnames ("Hall", "Hill", "Park", "Bay", "Church", "Lake", "Rivers", "Street", "Temple")
# are not listed: "Doc Rivers" starts with no given name of the list and is a person.
_THING_LAST = frozenset(
    _words("""
    award awards medal prize trophy cup stadium arena airport station drive road avenue ave
    boulevard highway trail harbour harbor dock fjord lakes falls creek pass peaks range ranges
    region regions municipality county governorate oblast province district orchestra workshop
    films prison empire election cathedral chapel mosque museum library palace square islands
    peninsula canyon mall site league championship tournament festival dynasty war fc rovers
    united games
    """)
)


# The last word of an event's name, and of a natural place's: "Libyan Civil War", "3rd Chess
# Olympiad", "Bhairav Creek", "Vatna Glacier". On 500 Re-DocRED documents every such name NER
# typed ORG or PERSON was an event or a place. Not the words that also end organisations' names
# ("PGA Tour", "Human Rights Campaign", "Special Olympics", "EFL Championship", "Silver Lake",
# "New England Revolution", "Calder Cup") or works' ("Mystic River", "Treasure Island").
_EVENT_LAST = frozenset(
    _words("""
    war wars olympiad election elections uprising rebellion championships tournament festival
    """)
)
_PLACE_LAST = frozenset(
    _words("""
    river creek glacier fjord strait gulf canyon peninsula mountains valley sea ocean desert falls
    islands lakes
    """)
)
# Of those, the ones that are surnames too ("Frank Ocean", "Jack River"): never a person's
# place word, whatever the given-name list lacks.
_SURNAME_PLACES = frozenset(_words("river valley sea ocean desert"))


def type_by_form(type_: str, name: str) -> str:
    """The type an NER label alone gives ``name`` once the name's own look is weighed (what else
    says its type is weighed where this is used, see :func:`noema.ingest.entities.batch_graph`).

    A name ending in an event's or a natural place's word is that, whatever NER called it ORG or
    PERSON, unless it starts with a given name or, for a PERSON, the word is a surname too. A
    PERSON of one word that is no given name ("Sega", "Vanuatu", "Typhonodorum"; a person's
    surname alone too, which the sentence or a joined full name must then say), or of a name
    ending in a word no person's name ends in that does not start with a given name ("Brownlow
    Medal", "Pudu Prison") is ``OTHER``, which claims nothing: on 500 Re-DocRED documents fewer
    than a third of such names NER typed PERSON are people. Not an ORG of one word, though only 29% of those are organisations there: that 29% is
    "Microsoft", "Intel" and "Yale" named once in passing, what users ask about.

    Example:
        >>> type_by_form("PERSON", "Sega"), type_by_form("PERSON", "Paul")
        ('OTHER', 'PERSON')
        >>> type_by_form("PERSON", "Pudu Prison"), type_by_form("PERSON", "Mara Voss")
        ('OTHER', 'PERSON')
        >>> type_by_form("ORG", "Prekmurje"), type_by_form("ORG", "Libyan Civil War")
        ('ORG', 'EVENT')
        >>> type_by_form("ORG", "Bhairav Creek"), type_by_form("PERSON", "Frank Ocean")
        ('LOC', 'PERSON')
        >>> type_by_form("ORG", "PGA Tour"), type_by_form("PRODUCT", "Mystic River")
        ('ORG', 'PRODUCT')
    """
    words = name.split()
    if type_ not in ("PERSON", "ORG"):
        return type_
    given = is_given_name(words[0])
    last = words[-1].lower()
    if len(words) > 1 and not given and not any(word[:1].islower() for word in words):
        if last in _EVENT_LAST:
            return "EVENT"
        if last in _PLACE_LAST and not (type_ == "PERSON" and last in _SURNAME_PLACES):
            return "LOC"
    if type_ != "PERSON":
        return type_
    if len(words) == 1:
        return type_ if given else "OTHER"
    return "OTHER" if last in _THING_LAST and not given else type_


def given_name(name: str) -> bool:
    """Whether a name of two or three capitalized words starts with a common given name
    ("Renata Villa"); also true of "Chelsea FC" or "Orlando Magic", so it is weaker evidence
    than a title (see :func:`noema.ingest.entities.NameTable.add`).

    Example:
        >>> given_name("Renata Villa"), given_name("The Beatles"), given_name("Villa")
        (True, False, False)
    """
    words = name.split()
    return (
        2 <= len(words) <= 3
        and all(word[:1].isupper() for word in words)
        and is_given_name(words[0])
        and words[-1].lower() not in _COMPANY_WORDS
    )


def is_given_name(word: str) -> bool:
    """Whether ``word`` is a given name of the list, read without its accents as the list
    writes them ("Jürgen", "François", "Søren").

    Example:
        >>> is_given_name("Jürgen"), is_given_name("François"), is_given_name("Søren")
        (True, True, True)
    """
    lowered = word.lower()
    if not lowered.isascii():
        folded = unicodedata.normalize("NFKD", lowered.translate(_UNDECOMPOSED))
        lowered = "".join(c for c in folded if not unicodedata.combining(c))
    return lowered in _given_names()


# letters NFKD leaves whole: "Søren", "Łukasz", "Æsa"
_UNDECOMPOSED = str.maketrans({"ø": "o", "ł": "l", "æ": "ae", "œ": "oe", "ß": "ss", "đ": "d"})


# Verbs of moving whose "to" or "from" names a place: "moved to Marlow", "fled from Tarbes".
_MOTION_VERBS = frozenset(
    _words("move relocate return emigrate immigrate migrate travel flee retire settle")
)


def named_as_place(span: Any) -> bool:
    """Whether a mention stands where places stand: where someone moves to or from ("moved to
    Marlow"), where the place verbs put things ("born in", "based in", which also vote a place
    in :func:`context_type`), or after a settlement noun ("the town of Lincoln"). No type of its
    own: a company is moved to, at times."""
    root = span.root
    if root.dep_ != "pobj" or root.head.dep_ != "prep":
        return False
    preposition, governor = root.head.lower_, lemma(root.head.head)
    return (
        (preposition in ("to", "into", "from") and governor in _MOTION_VERBS)
        or (preposition in ("in", "at", "near") and governor in _PLACE_VERBS)
        # "the town of Lincoln"
        or (preposition == "of" and KIND_TYPES.get(governor) == "GPE")
    )


# "joined Veltrix", "worked for Veltrix": what one joins or works for is a firm or a team, never
# the place of the same name ("left Boston" is not said: people leave cities too)
_JOINED_VERBS = frozenset({"join", "rejoin"})
_WORK_VERBS = frozenset({"work", "play"})


def names_a_firm(span: Any) -> bool:
    """Whether a mention stands where a firm or a team stands, whatever NER typed it: the
    object of "joined", or of "for" after "worked" or "played"."""
    root = span.root
    if root.dep_ in ("dobj", "obj"):
        return lemma(root.head) in _JOINED_VERBS
    return (
        root.dep_ == "pobj"
        and root.head.dep_ == "prep"
        and root.head.lower_ == "for"
        and lemma(root.head.head) in _WORK_VERBS
    )


def context_type(span: Any) -> str | None:
    """The type the sentence around a name's mention says (or :data:`NOT_PERSON`), else
    ``None``."""
    root = span.root
    while root.dep_ == "conj" and root.head.pos_ in ("PROPN", "NOUN") and root.head != root:
        # "founded by A, B and C": B and C stand where A stands
        root = root.head
    head = root.head
    dep = root.dep_
    if dep in ("nsubj", "nsubjpass") and lemma(head) in _PERSON_VERBS:
        return "PERSON"
    if dep in ("nsubj", "nsubjpass") and lemma(head) in _COMPANY_VERBS:
        return "ORG" if lemma(head) not in _PASSIVE_ONLY or dep == "nsubjpass" else None
    if dep in ("dobj", "obj") and lemma(head) == "acquire":
        return "ORG"
    if dep == "nsubjpass" and lemma(head) in _FOUNDING_VERBS:
        return NOT_PERSON  # a founded thing (a town, a company, a band)
    if dep == "pobj" and head.dep_ == "agent" and lemma(head.head) in _FOUNDING_VERBS:
        return "PERSON"
    if dep == "pobj" and head.dep_ == "prep":
        governor = head.head
        if head.lower_ in ("in", "at", "near") and lemma(governor) in _PLACE_VERBS:
            return "GPE"
        if head.lower_ == "of" and lemma(governor) in _PLACE_NOUNS:
            return "GPE"
        if head.lower_ == "of" and lemma(governor) in _COMPANY_ROLES:
            return "ORG"
    if dep == "appos" and lemma(head) in _PERSON_NOUNS:
        return "PERSON"
    if any(c.dep_ == "appos" and lemma(c) in _PERSON_NOUNS for c in root.children):
        return "PERSON"
    # "the drummer Mateo Brisk"; a person kind inside the name ("General Motors") is no cue
    for c in root.lefts:
        word = lemma(c)
        if c.dep_ == "compound" and (
            word in _ROLE_NOUNS or (word in _PERSON_NOUNS and c.i < span.start)
        ):
            return "PERSON"
    return _kind_beside(span, root) or _place_clause(root)


# Nouns whose compound is their name: "the Magpie project", "the Larkspur library". Not "the
# drug" ("the Pfizer drug" is Pfizer's) nor "club" ("the Eskridge club" is the town's).
_NAMED_BY_COMPOUND = frozenset(_words("project library framework toolkit"))


def kind_beside(span: Any) -> str | None:
    """The type a kind noun beside a mention says: in apposition ("the drug Velotrexin",
    "Hearthloom, a free desktop toolkit"), before it ("the stadium Kilnworth Park") or named by
    it ("the Magpie project"). A place NER found is left to NER there: "the Brimsworth library"
    is the town's."""
    return _kind_beside(span, span.root)


def _kind_beside(span: Any, root: Any) -> str | None:
    if not span.text[:1].isupper():
        return None  # a common noun's phrase ("chairman of Leader Publications") names no thing
    # "a trio (Micky Dolenz, Michael Nesmith, and Davy Jones)": a list beside a group's noun
    # names its members
    listed = root is not span.root or any(c.dep_ == "conj" for c in root.children)
    nouns = [c for c in root.children if c.dep_ == "appos"]
    if root.dep_ == "appos":
        nouns.append(root.head)
    nouns += [c for c in root.lefts if c.dep_ == "compound" and c.i < span.start]
    for noun in nouns:
        if noun.pos_ != "NOUN" or lemma(noun).endswith(("er", "or")):
            # a maker, a publisher or a supplier is a person as often as a firm: "the cider
            # maker Georgia Tremayne"
            continue
        phrase = noun.doc[noun.left_edge.i : noun.i + 1].text if noun.i > span.start else ""
        type_ = kind_type([qualified_kind(phrase, lemma(noun))] if phrase else [lemma(noun)])
        if type_ is not None and not (listed and type_ == "ORG"):
            return type_
    head = root.head
    if (
        root.dep_ == "compound"
        and head.pos_ == "NOUN"
        and lemma(head) in _NAMED_BY_COMPOUND
        and span.label_ not in ("GPE", "LOC", "FAC", "NORP")
        and form_type(span.text) is None
    ):
        return "PRODUCT"
    return None


def _place_clause(root: Any) -> str | None:
    """ "Ashcombe Park, where the club had played for 101 years": a clause of "where" on a name
    says a place or a body of people (:data:`NOT_PERSON`), never a person."""
    for clause in root.children:
        if clause.dep_ == "relcl" and any(
            c.lower_ == "where" and c.dep_ == "advmod" for c in clause.children
        ):
            return NOT_PERSON
    return None
