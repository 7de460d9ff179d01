"""Which entity a token of a sentence stands for: a name, a pronoun, a kind noun, a surname.

Apart from the rules of :mod:`noema.ingest.rules` because every rule asks it the same question
and it answers from the document (its main entity, its names so far, its pronouns), never from
the rule's structure: each way a token can name an entity is one named step of
:meth:`EntityResolver.resolve`, tried in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from noema.ingest._tokens import describing_nouns, lemma, proper_noun_span, with_conjuncts
from noema.ingest.entities import PERSON_PRONOUNS, THING_PRONOUNS, NameTable, kind_endings
from noema.ingest.evidence import form_type
from noema.ingest.kinds import KIND_TYPES, kind_type
from noema.model.roles import ROLE_ACRONYMS

__all__ = ["COPULAS", "SHARES", "SUBJECT_DEPS", "VAGUE_NOUNS", "EntityResolver"]


# "The paper folded in 1906", "Its head office is in Berlin": the main entity. Not "this snow
# event", "his sons" or "their album": on the labelled sample those named something else.
_FALLBACK_DETERMINERS = frozenset({"the", "its"})
_PLACE_NOUNS = frozenset(
    [
        "city",
        "town",
        "village",
        "state",
        "province",
        "county",
        "country",
        "region",
        "island",
        "district",
        "borough",
        "municipality",
        "republic",
        "kingdom",
    ]
)
COPULAS = frozenset({"be", "become", "remain"})
_RELATIVE_PRONOUNS = frozenset({"which", "who", "whom", "that"})
_ANY_PRONOUNS = frozenset({"they", "them", "their"})
_OUR_PRONOUNS = frozenset({"we", "us", "our", "ours"})
# nouns for the people of a name: "the Morrow family kept it" is theirs, not the topic's
_GROUP_NOUNS = frozenset(
    {"family", "brother", "sister", "household", "clan", "dynasty", "administration", "heir"}
)
SUBJECT_DEPS = frozenset({"nsubj", "csubj"})
# spaCy's labels of dates and numbers: an apposition with one is an age or a year, not a name
_VALUE_LABELS = frozenset({"DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT"})
# the plain words for a company, which in its own document mean it
_COMPANY_KINDS = frozenset({"company", "firm", "business", "corporation", "group"})
# The last words of the names of bodies that are not companies: "the company" is none of them.
_NOT_COMPANIES = frozenset(
    {"institute", "university", "college", "school", "academy", "foundation", "charity"}
    | {"society", "hospital", "museum", "council", "ministry", "church", "club", "laboratory"}
    | {"centre", "center", "trust", "association", "federation", "league", "party", "orchestra"}
)
# Modifiers kept in a noun phrase that becomes an entity of its own: "an American rock band"
_PHRASE_MODIFIERS = frozenset(
    {"amod", "compound", "nummod", "nmod", "npadvmod", "advmod", "quantmod"}
)
_PEOPLE = frozenset({"PERSON"})
_THINGS = frozenset({"ORG", "PRODUCT"})
_PLACES = frozenset({"GPE", "LOC"})
# what a name taken for "the laboratory" may be typed: a place, or nothing said yet
_MAY_BE_PLACES = frozenset({*_PLACES, "OTHER", None})
# The kind nouns of a settlement: what "the town" in a town's own document may be.
_SETTLEMENTS = frozenset(
    {"city", "town", "village", "hamlet", "port", "municipality", "borough", "commune", "township"}
)
# "won a total of five titles", "administers the majority of the schools": a share stands for
# what it is a share of ("five titles").
SHARES = frozenset({"total", "majority", "minority", "half", "rest", "bulk", "portion"})
# Nouns that say nothing alone ("is part of", "won one", "took place", "took the name of the
# settlement", "are a group of ridges"): the point is in what qualifies them, so bare they make
# no fact.
VAGUE_NOUNS = frozenset(
    {"one", "part", "member", "some", "something", "thing", "way", "lot", "number", "kind"}
    | {"type", "group", "collection", "series", "set", "pair", "couple", "variety", "range"}
    | {"place", "name", "period", "story", "approach"}
    # "has a population of 5,000": a measure, whose point is what it is of
    | {"population"}
    | SHARES
)


def _share_of(noun: Any) -> Any:
    """What a share is of ("five national titles" for "a total of five national titles"), else
    the noun itself."""
    if lemma(noun) not in SHARES:
        return noun
    for prep in noun.children:
        if prep.dep_ == "prep" and prep.lower_ == "of":
            for pobj in prep.children:
                if pobj.dep_ == "pobj" and pobj.pos_ == "NOUN":
                    return pobj
    return noun


_GENDER = {"he": "m", "him": "m", "his": "m", "she": "f", "her": "f", "hers": "f"}
_GENDER_KEY = "noema.main_gender"


def _main_gender(doc: Any) -> str | None:
    """ "m" or "f" when one gender's pronouns, two or more, are at least twice the other's in the
    parsed piece ``doc`` (those of its main person, the writer's subject), else ``None``; read
    once per piece (kept in ``doc.user_data``)."""
    if _GENDER_KEY not in doc.user_data:
        counts = {"m": 0, "f": 0}
        for token in doc:
            if token.lower_ in _GENDER and token.pos_ == "PRON":
                counts[_GENDER[token.lower_]] += 1
        found = None
        for kind, other in (("m", "f"), ("f", "m")):
            if counts[kind] >= max(2, 2 * counts[other]):
                found = kind
        doc.user_data[_GENDER_KEY] = found
    gender: str | None = doc.user_data[_GENDER_KEY]
    return gender


class EntityResolver:
    """Resolves the tokens of one document's sentences to the names of its :class:`NameTable`;
    the base of :class:`~noema.ingest.rules.SentenceReader`."""

    def __init__(
        self, names: NameTable, main: str | None, *, main_is_person: bool, kinds: frozenset[str]
    ) -> None:
        self.names = names
        self.by_token = names.by_token  # the piece being read
        self.main = main
        self.main_is_person = main_is_person  # "he"/"she" mean the main entity, else "it" does
        self.kinds = kinds  # nouns that name the main entity: "the band"
        # each way a token can name an entity, tried in order (see resolve)
        self._steps: tuple[Callable[[Any], str | None], ...] = (
            self._named,
            self._relative_pronoun,
            self._pronoun,
            self._apposition,
            self._place_wrapper,
            self._kind_noun,
            self._surname,
            self._missed_proper_noun,
        )

    def _subjects_of(self, verb: Any) -> list[str]:
        found = self.entities(c for c in verb.children if c.dep_ in (*SUBJECT_DEPS, "nsubjpass"))
        if found:
            return found
        return self._fallback_subject(verb)

    def _named_compound(self, noun: Any) -> bool:
        """Whether ``noun`` is a group a person's name qualifies ("the Morrow family", "the
        Obama administration"): the article's own name never is ("The USA Sevens tournament",
        which NER may call a person), nor a noun of no group ("the 1970 NBA draft")."""
        return lemma(noun) in _GROUP_NOUNS and any(
            c.dep_ == "compound"
            and c.i in self.by_token
            and self.by_token[c.i] != self.main
            and self.names.leading_type(self.by_token[c.i]) == "PERSON"
            for c in noun.children
        )

    def _fallback_subject(self, verb: Any) -> list[str]:
        """ "The band played in Tulsa" in the article about the band: a definite common-noun
        subject (or none at all, in a fragment) stands for the document's main entity."""
        if self.main is None or verb.dep_ not in ("ROOT", "conj"):
            return []
        if any(c.dep_ == "expl" for c in verb.children):
            return []  # "There are 8294400 such positions": what there is, not the topic
        subject = next((c for c in verb.children if c.dep_ in (*SUBJECT_DEPS, "nsubjpass")), None)
        if subject is None:
            return [self.main] if verb.dep_ == "ROOT" else []
        if self._named_compound(subject):
            return []  # "The Morrow family kept it" is the Morrows', not the house's
        if (
            subject.pos_ == "NOUN"
            and any(
                c.dep_ in ("det", "poss") and c.lower_ in _FALLBACK_DETERMINERS
                for c in subject.children
            )
            and self._names_main(subject)
        ):
            return [self.main]
        return []

    def _names_main(self, noun: Any) -> bool:
        """Whether the common noun ``noun`` can name the document's main entity: one of its own
        kind nouns, the word its name ends in, a kind noun of its type ("the state" for
        Montana), or any noun its own name qualifies ("The USA Sevens tournament"); "the
        lands", "the story" or "the tribe" in its document are other things."""
        kind = lemma(noun)
        if kind in self.kinds or self._main_ends_in(kind):
            return True
        if any(c.dep_ == "compound" and self.by_token.get(c.i) == self.main for c in noun.children):
            return True
        type_ = KIND_TYPES.get(kind)
        return type_ is not None and type_ == self.names.leading_type(self.main or "")

    def resolve(self, token: Any) -> str | None:
        """The entity ``token`` stands for: the first step that decides gives it. A step returns
        a name, ``None`` to pass the token on, or ``""`` to decide that it names nothing."""
        for step in self._steps:
            name = step(token)
            if name is not None:
                return name or None
        return None

    def _named(self, token: Any) -> str | None:
        return self.by_token.get(token.i)

    def _relative_pronoun(self, token: Any) -> str | None:
        """ "Google, which Larry Page founded": the pronoun stands for what the clause hangs on."""
        if (
            token.lower_ in _RELATIVE_PRONOUNS
            and token.head.dep_ in ("relcl", "acl")
            and token.head.head.i != token.i
        ):
            described = self.described(token.head.head)
            if not described:
                return ""
            if token.lower_ in ("who", "whom") and not self._may_be_person(described[0]):
                # "an outfielder in Major League Baseball who played for the Astros": the
                # clause hangs on the wrong noun; a person it names is not that name
                return ""
            return described[0]
        return None

    def _may_be_person(self, name: str) -> bool:
        votes = self.names.votes.get(name)
        return not votes or votes.most_common(1)[0][0] == "PERSON"

    def _pronoun(self, token: Any) -> str | None:
        """ "He", "she", "it" or "they" for the document's main entity (see main_is_person);
        the pronoun of the other kind for the nearest name of its kind before it ("Tobias Crane
        founded Crane Studios. He sold it in 2015." in a document about Crane: "it" is the
        studio), never a name its own clause already holds ("Kwame Osei replaced her")."""
        if token.pos_ != "PRON" or self.main is None:
            return None
        lower = token.lower_
        if lower in PERSON_PRONOUNS:
            bound = self._bound_subject(token)
            if bound is not None:
                return bound
            if not self.main_is_person:
                return self._antecedent(token, _PEOPLE)
            gender = _main_gender(token.doc)
            if gender is not None and _GENDER[lower] != gender:
                # "She stayed in the band after he left" in her document: he is another person
                return self._antecedent(token, _PEOPLE, also_not=self.main)
            return self.main
        if lower in THING_PRONOUNS:
            if self.main_is_person:
                return self._antecedent(token, _THINGS)
            if token.dep_ in ("dobj", "dative") and self.main in self._verb_subjects(token.head):
                # "the company created Tidewrack and later gave it to the foundation": a thing
                # does not give itself away; "it" is the thing named before
                return self._antecedent(token, _THINGS, also_not=self.main)
            return self.main
        if lower in _OUR_PRONOUNS:
            # "Oswin Petrakis has been our chief executive" in a firm's FAQ or press note: a
            # body's own voice; in a person's page "we" is some group of theirs, and in a
            # quotation whoever speaks ("'We have hired her,' said the union's leader")
            if self.main_is_person or _quoted(token):
                return None
            # the name's own words first: NER calls "Thornquist Books" a place on its FAQ page
            main_type = form_type(self.main) or self.names.leading_type(self.main)
            return self.main if main_type == "ORG" else None
        if lower in _ANY_PRONOUNS:
            # "From here they acquired slaves" in a coast's document are people, not the coast;
            # "They gained independence" in the Bahamas' is the islands
            plural = self.main.lower().endswith("s")
            return "" if self._main_place_type() and not plural else self.main
        return None

    def _bound_subject(self, token: Any) -> str | None:
        """ "Fenn had run the division before he joined Veltrix": a person pronoun subject of a
        clause of time or reason stands for the person named as the subject of the clause it
        hangs on, not for the document's main person."""
        verb = token.head
        if token.dep_ not in ("nsubj", "nsubjpass") or verb.dep_ != "advcl":
            return None
        outer = verb.head
        subjects = [c for c in outer.children if c.dep_ in (*SUBJECT_DEPS, "nsubjpass")]
        if not subjects or subjects[0].pos_ != "PROPN":
            return None
        # "Tom Berg met Anna Berg before she moved", "Marie Curie continued his work after he
        # died": another person in the outer clause may be the one meant
        others = (
            t
            for t in outer.subtree
            if t.i < verb.left_edge.i or t.i > verb.right_edge.i
            if t.i not in (s.i for s in subjects[0].subtree)
        )
        for other in others:
            name = self.by_token.get(other.i)
            if other.lower_ in PERSON_PRONOUNS or (
                name is not None and self.names.leading_type(name) == "PERSON"
            ):
                return None
        name = self.by_token.get(subjects[0].i)
        if name is None or self.names.leading_type(name) != "PERSON":
            return None
        return name

    def _antecedent(self, token: Any, types: frozenset[str], also_not: str | None = None) -> str:
        """The nearest name of ``types`` before ``token``, not one of its clause's subjects nor
        ``also_not``; ``""`` (names nothing) when there is none."""
        at = self.names.offset + token.idx
        skip = self._clause_subjects(token) + ([also_not] if also_not else [])
        if token.dep_ in ("dobj", "dative"):
            # "the company created Tidewrack and later gave it to the foundation": the object
            # is not the subject, however the subject is written
            skip += self._verb_subjects(token.head)
        return self.names.antecedent(at, types, skip) or ""

    def _verb_subjects(self, verb: Any) -> list[str]:
        """What the subjects of ``verb`` stand for, or those of the verb it is joined to
        ("created X and gave it") when it has none of its own."""
        for head in (verb, verb.head if verb.dep_ == "conj" else None):
            subjects = [] if head is None else [c for c in head.children if c.dep_ in SUBJECT_DEPS]
            if subjects:
                return [name for c in subjects if (name := self.resolve(c))]
        return []

    def _clause_subjects(self, token: Any) -> list[str]:
        """The names of the other subjects of ``token``'s clause ("Kwame Osei replaced her")."""
        # spaCy makes a new token object on each access: positions tell tokens apart
        siblings = (c for c in token.head.children if c.dep_ in SUBJECT_DEPS and c.i != token.i)
        return [self.by_token[c.i] for c in siblings if c.i in self.by_token]

    def _apposition(self, token: Any) -> str | None:
        """ "the CEO, Sundar Pichai": a noun with a named apposition stands for that name; not
        a number or a date ("Dempsey, 41, spent": his age)."""
        if token.pos_ in ("NOUN", "PROPN"):
            for child in token.children:
                if (
                    child.dep_ == "appos"
                    and child.i in self.by_token
                    and child.ent_type_ not in _VALUE_LABELS
                ):
                    return self.by_token[child.i]
        return None

    def _kind_noun(self, token: Any) -> str | None:
        """ "the band" in the article that began "X is an American rock band"; "the company"
        or "the town" elsewhere for the nearest name of that kind before it, else the main
        entity when it is of that kind."""
        if (
            self.main is None
            or token.pos_ != "NOUN"
            or not any(c.dep_ == "det" and c.lower_ in ("the", "this") for c in token.children)
        ):
            return None
        kind = lemma(token)
        if kind in self.kinds:
            return self.main
        type_ = KIND_TYPES.get(kind)
        if type_ is None or type_ == "PERSON":
            return None
        if type_ != "ORG" and self._main_ends_in(kind):
            # "the house" in the document about the Calloway House, whatever NER typed it (a
            # company's own kind word settles its type below)
            return self.main
        types = _PLACES if type_ in _PLACES else frozenset({type_})
        if type_ == self._main_place_type() and (type_ != "GPE" or kind in _SETTLEMENTS):
            # "Lennox is a river port ... Tobin Vance, a former mayor of Halloran, was born in
            # the town": in a town's own document "the town" is that town, not the last town
            # named in passing, and "the river" in a river's is that river; "the river" or
            # "the country" in a town's document is still another place
            return self.main
        at = self.names.offset + token.idx
        # "Lindqvist Marine bought the company": never the subject of its own clause
        skip = self._clause_subjects(token)
        holder = self.names.holding(at, kind, skip) if type_ in ("ORG", "LOC") else None
        if type_ == "LOC" and self.names.leading_type(holder or "") not in _MAY_BE_PLACES:
            holder = None  # "sold the house" after "Penguin Random House" is no publisher
        if holder is not None:
            # "Millbrook Creamery ... The creamery employs": the company whose name ends in the
            # kind word, whatever NER typed it; the word says its type; so for a built or
            # natural place ("the laboratory" is the Quarrie Laboratory, not the program last
            # named), not for a country or a town: "the state" is not "Washington State" in a
            # document about Texas
            if type_ == "ORG" and self.names.leading_type(holder) not in types:
                self.names.settle_type(holder, type_)
            return holder
        if kind in _COMPANY_KINDS:
            # "signed the licence with the Ravelle Institute and has led the company": a name
            # that ends in the word for another kind of body is not the company, while another
            # name may be ("He co-founded Diners Club. He ran the company" has no other)
            others = skip + [n for n in self.names.mentions if _ends_in_another_body(n)]
            if self.names.antecedent(at, types, others) is not None:
                skip = others
        described = describing_nouns(token)
        if (
            type_ == "ORG"
            and kind in _COMPANY_KINDS
            and not described
            and self.main not in skip
            and self._main_is_company()
        ):
            # "Quillon Media ... owns radio stations and Crane Studios. Lucinda Pryce led the
            # company": in a company's own document the plain word is that company, not the
            # last one it named (nor the town it sits in); "the avionics firm" still picks by
            # its word
            return self.main
        found = self.names.antecedent(at, types, skip, described=described)
        leading = self.names.leading_type(self.main)
        # what the document's own words said its topic is ("Ilse Brandt was an Austrian
        # physicist") stands: "the small group of scientists" is then another thing
        said = self.names.said_type(self.main)
        if (
            found is None
            and said in (None, *types)
            and not self.main_is_person
            and leading in types | {"OTHER", "PERSON", None}
        ):
            # "Tarbes was founded in 1779. The town lies on a river.": the document's own word
            # for what its main entity is; so too for a name NER called a person in a document
            # whose pronouns call it "it" ("Gannet Sonar ... It was founded ... the company").
            # Never in a document whose pronouns say its topic is a person: "the first release"
            # in Ferdinand Aulich's is of what he wrote
            self.names.settle_type(self.main, type_)
            found = self.main
        return found

    def _main_is_company(self) -> bool:
        """Whether the document's main entity is a company by what the document or its name
        says ("Lindqvist Marine", "Quillon Media is a media group"), NER agreeing or silent."""
        if self.main is None or self.main_is_person:
            return False
        said = self.names.said_type(self.main) or kind_type(self.kinds)
        if said is not None:
            return said == "ORG"
        return form_type(self.main) == "ORG" or self.names.leading_type(self.main) == "ORG"

    def _main_ends_in(self, kind: str) -> bool:
        """Whether the document's main entity is a name of two or more words ending in the
        kind noun ``kind`` ("Calloway House" for "the house", "Crane Studios" for "the studio")."""
        words = (self.main or "").split()
        return len(words) > 1 and words[-1].lower() in kind_endings(kind)

    def _main_place_type(self) -> str | None:
        """GPE or LOC when the document is about a place: its own kind noun ("a river port")
        or else its name's type says which, and its pronouns do not call it a person."""
        if self.main is None or self.main_is_person:
            return None
        said = kind_type(self.kinds) or self.names.leading_type(self.main)
        return said if said in _PLACES else None

    def _place_wrapper(self, token: Any) -> str | None:
        """ "the city of Tulsa", "the state of Texas": the noun is a wrapper around the name."""
        if token.pos_ == "NOUN" and token.lower_ in _PLACE_NOUNS:
            for child in token.children:
                if child.dep_ == "prep" and child.lower_ == "of":
                    for grandchild in child.children:
                        if grandchild.dep_ == "pobj" and grandchild.i in self.by_token:
                            return self.by_token[grandchild.i]
        return None

    def _surname(self, token: Any) -> str | None:
        """ "Crane later sold the firm" after "Tobias Crane": a capitalized word alone that ends
        exactly one longer name of the document is that name."""
        if token.pos_ not in ("NOUN", "PROPN") or not token.text[:1].isupper():
            return None
        if any(c.dep_ in ("det", "compound", "flat", "poss") for c in token.children):
            return None
        return self.names.surname(token.doc[token.i : token.i + 1])

    def _missed_proper_noun(self, token: Any) -> str | None:
        """A proper noun NER missed ("Tesla was founded by Elon Musk"): still a thing, with the
        proper noun its "of" joins to it when that names nothing else ("the Medal of Honor",
        "the Age of Enlightenment": "medal" or "Age" alone is a piece of the name)."""
        if token.pos_ != "PROPN" or token.lower_ in ROLE_ACRONYMS:
            return None  # "resigned as CEO of X": the tagger's proper noun is a role
        span = proper_noun_span(token)
        of = next((c for c in token.children if c.dep_ == "prep" and c.lower_ == "of"), None)
        tail = next((g for g in of.children if g.dep_ == "pobj"), None) if of else None
        if (
            of is not None
            and tail is not None
            and tail.pos_ == "PROPN"
            and token.text[:1].isupper()
            and proper_noun_span(tail).start == of.i + 1
            and not any(t.i in self.by_token for t in tail.doc[of.i + 1 : tail.i + 1])
        ):
            span = token.doc[span.start : tail.i + 1]
        return self.names.register(span)

    def phrases(self, tokens: Iterable[Any], *, conjuncts: bool = True) -> list[str]:
        """Common-noun phrases (and their conjuncts, unless ``conjuncts`` is False) named as
        things of type OTHER: "a silver medal" -> "silver medal". Determiners, clauses and
        prepositional tails are left out."""
        out = []
        for token in tokens:
            for item in with_conjuncts(token) if conjuncts else (token,):
                item = _share_of(item)
                if item.pos_ != "NOUN" or item.i in self.by_token:
                    continue
                start = item.i
                for child in reversed(list(item.lefts)):
                    if child.dep_ not in _PHRASE_MODIFIERS or child.right_edge.i != start - 1:
                        break
                    start = child.left_edge.i
                if start == item.i and lemma(item) in VAGUE_NOUNS:
                    continue
                name = self.names.register(item.doc[start : item.i + 1])
                if name is not None and name not in out:
                    out.append(name)
        return out

    def described(self, noun: Any) -> list[str]:
        """What a clause on ``noun`` is about. "3 Ninjas is a 1992 film starring Victor Wong":
        the film of the complement is 3 Ninjas, so the clause is about the copula's subject,
        never about the description "1992 film" (nor "poet" in "X was a poet raised in Y")."""
        node = noun
        while node.dep_ in ("conj", "appos") and node.head.i != node.i:
            node = node.head
        if node.dep_ == "attr" and node.head.lemma_ in COPULAS and noun.pos_ == "NOUN":
            copula = node.head
            subjects = self.entities(c for c in copula.children if c.dep_ in SUBJECT_DEPS)
            if subjects:
                return subjects
            fallback = self._fallback_subject(copula)
            if fallback:
                return fallback
        # "Tobias Crane, the animator who founded Crane Studios": the clause on the apposition
        # is about the name it stands beside
        return self.entities([noun]) or (self.entities([node]) if node is not noun else [])

    def entities(self, tokens: Iterable[Any]) -> list[str]:
        out = []
        for token in tokens:
            for item in with_conjuncts(token):
                name = self.resolve(item)
                if name is not None and name not in out:
                    out.append(name)
        return out


def _quoted(token: Any) -> bool:
    """Whether ``token`` stands inside quotation marks in its sentence: an odd number of
    straight quotes before it, or more opening curly quotes than closing ones."""
    before: str = token.doc[token.sent.start : token.i].text
    return before.count('"') % 2 == 1 or before.count("\u201c") > before.count("\u201d")


def _ends_in_another_body(name: str) -> bool:
    """Whether ``name`` ends in the word for a body that is not a company ("Ravelle
    Institute", "Corbel Foundation")."""
    words = name.split()
    return len(words) > 1 and words[-1].lower().removesuffix("s") in _NOT_COMPANIES
