"""The English dependency rules that read facts from one sentence at a time.

Each rule yields a :class:`Link` naming the rule, so that the extractor can weigh facts by how
direct the structure was (:data:`noema.ingest.confidence.CONFIDENCE`). Names come from and go into the document's
:class:`~noema.ingest.entities.NameTable`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from noema.ingest._tokens import (
    describing_nouns,
    governing_predicate,
    lemma,
    place_clause,
    proper_noun_span,
    role_phrase,
    said_then,
    verb_predicate,
    with_conjuncts,
)
from noema.ingest.dates import is_length
from noema.ingest.entities import PERSON_PRONOUNS, THING_PRONOUNS, NameTable, kind_endings
from noema.ingest.evidence import form_type
from noema.ingest.kinds import KIND_TYPES, kind_type
from noema.model.records import VALUE_TYPES, normalize_predicate

__all__ = ["Link", "SentenceReader"]

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
_COPULAS = frozenset({"be", "become", "remain"})
# Prepositions that say where or when something was done.
_WHERE_WHEN = frozenset(
    {"in", "at", "on", "near", "during", "since", "until", "throughout", "within", "between"}
)
_RELATIVE_PRONOUNS = frozenset({"which", "who", "whom", "that"})
_ANY_PRONOUNS = frozenset({"they", "them", "their"})
# nouns for the people of a name: "the Morrow family kept it" is theirs, not the topic's
_GROUP_NOUNS = frozenset(
    {"family", "brother", "sister", "household", "clan", "dynasty", "administration", "heir"}
)
_SUBJECT_DEPS = frozenset({"nsubj", "csubj"})
# the plain words for a company, which in its own document mean it
_COMPANY_KINDS = frozenset({"company", "firm", "business", "corporation", "group"})
# what a verb does to something or someone: its object, complement or agent
_ARGUMENTS = frozenset({"dobj", "obj", "attr", "oprd", "ccomp", "xcomp", "agent"})
# Modifiers kept in a noun phrase that becomes an entity of its own: "an American rock band"
_PHRASE_MODIFIERS = frozenset(
    {"amod", "compound", "nummod", "nmod", "npadvmod", "advmod", "quantmod"}
)
# Role nouns the tagger often calls proper nouns ("President Lincoln"); acronyms ("CEO") too
_TITLE_LIST = (
    "president chairman chairwoman chair founder director governor mayor senator minister "
    "secretary chancellor king queen prince princess emperor pope bishop general professor"
)
_TITLES = frozenset(_TITLE_LIST.split())
# "when Z took over": an intransitive verb that says Z followed the clause's subject
_SUCCESSION = frozenset({"take_over", "step_in", "take_charge"})
_PEOPLE = frozenset({"PERSON"})
_THINGS = frozenset({"ORG", "PRODUCT"})
_PLACES = frozenset({"GPE", "LOC"})
# The kind nouns of a settlement: what "the town" in a town's own document may be.
_SETTLEMENTS = frozenset(
    {"city", "town", "village", "hamlet", "port", "municipality", "borough", "commune", "township"}
)
# Verbs that say little without their object ("made history", "took office", "gained
# independence", "declared war"): a preposition's fact keeps the object in its predicate.
_LIGHT_VERBS = frozenset(
    {"make", "take", "have", "give", "draw", "declare", "hold", "gain", "get", "set", "pay"}
    | {"do", "earn", "achieve", "attain", "regain"}
)
# "won a total of five titles", "administers the majority of the schools": a share stands for
# what it is a share of ("five titles").
_SHARES = frozenset({"total", "majority", "minority", "half", "rest", "bulk", "portion"})
# Nouns that say nothing alone ("is part of", "won one", "took place", "took the name of the
# settlement", "are a group of ridges"): the point is in what qualifies them, so bare they make
# no fact.
_VAGUE_NOUNS = frozenset(
    {"one", "part", "member", "some", "something", "thing", "way", "lot", "number", "kind"}
    | {"type", "group", "collection", "series", "set", "pair", "couple", "variety", "range"}
    | {"place", "name", "period", "story", "approach"}
    # "has a population of 5,000": a measure, whose point is what it is of
    | {"population"}
    | _SHARES
)


# Participles that say what was done to a made thing ("a novel by X, published in 1969").
_MAKING_PARTICIPLES = frozenset(
    {"publish", "release", "record", "write", "compose", "film", "produce", "print", "issue"}
)


def _share_of(noun: Any) -> Any:
    """What a share is of ("five national titles" for "a total of five national titles"), else
    the noun itself."""
    if lemma(noun) not in _SHARES:
        return noun
    for prep in noun.children:
        if prep.dep_ == "prep" and prep.lower_ == "of":
            for pobj in prep.children:
                if pobj.dep_ == "pobj" and pobj.pos_ == "NOUN":
                    return pobj
    return noun


def _made_thing(participle: Any) -> Any:
    """The noun a participle clause is about: the parser hangs "published in 1969" in "a novel
    by Christopher Stasheff, published in 1969" on the author, the nearest noun; what was
    published is the work the "by" phrase belongs to. Only for participles of making a work:
    "a painting by Paul Klee, born in 1879" is about Klee."""
    noun = participle.head
    by = noun.head
    if lemma(participle) not in _MAKING_PARTICIPLES or noun.dep_ != "pobj" or by.lower_ != "by":
        return noun
    if by.dep_ == "prep" and by.head.pos_ in ("NOUN", "PROPN"):
        return by.head
    if by.dep_ == "agent" and by.head.dep_ == "acl":  # "a novel written by X, published in"
        return by.head.head
    return noun


class Link(NamedTuple):
    """A fact one rule read from a sentence: names at both ends, the rule's name, and the verb or
    noun it was read from, whose clause may tie it to a time (see :mod:`noema.ingest.times`)."""

    subject: str
    predicate: str
    object: str
    rule: str
    anchor: Any = None


def _denied(anchor: Any) -> bool:
    """Whether the clause of ``anchor`` denies what it says: "was not the CEO of", "never
    played for", "is no relation of", "had no children"."""
    if anchor is None:
        return False
    if any(c.dep_ == "neg" for c in anchor.children):
        return True
    nodes = [anchor, *(c for c in anchor.children if c.dep_ in ("attr", "dobj", "obj"))]
    return any(d.dep_ == "det" and d.lower_ == "no" for n in nodes for d in n.children)


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


class SentenceReader:
    """The dependency rules, applied to one sentence at a time."""

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

    def read(self, sent: Any) -> Iterator[Link]:
        linked: set[str] = set()
        for token in sent:
            if token.pos_ in ("VERB", "AUX"):
                facts = self._verb(token)
            elif token.pos_ in ("NOUN", "PROPN") and token.i not in self.by_token:
                facts = self._role_noun(token)
            else:
                continue
            for fact in facts:
                if is_length(fact.object):
                    # "coached the Hawks for six seasons": how long, no thing the fact joins;
                    # the length is left to the sentence's links, under any floor that states
                    continue
                # a denied fact is no fact, and its names are not left to the topic links
                linked.update((fact.subject, fact.object))
                if not _denied(fact.anchor):
                    yield fact
        yield from self._sentence_links(sent, linked)

    def _sentence_links(self, sent: Any, linked: set[str]) -> Iterator[Link]:
        """Entities no rule connected are linked to the sentence's topic (its subject, else the
        document's main entity when the sentence is about it), with the governing verb or noun
        as predicate, so every named thing in the text can be reached from its topic."""
        root = sent.root
        # a name at the root is a sentence the parser read without its verb ("Reyes, formerly
        # the head of sales at Brannis Dairy, left to ..."): what it says is about that name
        named_root = self.by_token.get(root.i)
        if named_root is not None and (
            self.names.leading_type(named_root) in VALUE_TYPES
            or not any(c.isalpha() for c in named_root)
        ):
            # "1998, the Vell Cup final at Oslo Stadium", "1913–1922: Years at the Polo
            # Grounds": a date or a period is no topic of its own
            named_root = None
        topic = named_root or next(iter(self._subjects_of(root)), None)
        subject = next((c for c in root.children if c.dep_ in _SUBJECT_DEPS), None)
        if topic is None and subject is not None and self._named_compound(subject):
            return
        if topic is None and self.main is not None:
            topic = self.main
        if topic is None:
            return
        seen = set(linked) | {topic}
        for token in sent:
            name = self.by_token.get(token.i)
            if name is None or name in seen:
                continue
            seen.add(name)
            # climb from the name's own head word: "last" of "the last two weeks" hangs from
            # "weeks", which is the name, not what the sentence says of it
            while token.head.i != token.i and self.by_token.get(token.head.i) == name:
                token = token.head
            predicate = governing_predicate(token)
            if predicate:
                yield Link(topic, predicate, name, "sentence")

    def _subjects_of(self, verb: Any) -> list[str]:
        found = self.entities(c for c in verb.children if c.dep_ in (*_SUBJECT_DEPS, "nsubjpass"))
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
        subject = next((c for c in verb.children if c.dep_ in (*_SUBJECT_DEPS, "nsubjpass")), None)
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

    # entity resolution ------------------------------------------------------------------------
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
            return self._antecedent(token, _THINGS) if self.main_is_person else self.main
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
        subjects = [c for c in outer.children if c.dep_ in (*_SUBJECT_DEPS, "nsubjpass")]
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
        return self.names.antecedent(at, types, skip) or ""

    def _clause_subjects(self, token: Any) -> list[str]:
        """The names of the other subjects of ``token``'s clause ("Kwame Osei replaced her")."""
        # spaCy makes a new token object on each access: positions tell tokens apart
        siblings = (c for c in token.head.children if c.dep_ in _SUBJECT_DEPS and c.i != token.i)
        return [self.by_token[c.i] for c in siblings if c.i in self.by_token]

    def _apposition(self, token: Any) -> str | None:
        """ "the CEO, Sundar Pichai": a noun with a named apposition stands for that name."""
        if token.pos_ in ("NOUN", "PROPN"):
            for child in token.children:
                if child.dep_ == "appos" and child.i in self.by_token:
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
        holder = self.names.holding(at, kind, skip) if type_ == "ORG" else None
        if holder is not None:
            # "Millbrook Creamery ... The creamery employs": the company whose name ends in the
            # kind word, whatever NER typed it; the word says its type (not for places: "the
            # state" is not "Washington State" in a document about Texas)
            if self.names.leading_type(holder) not in types:
                self.names.settle_type(holder, type_)
            return holder
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
            and (
                leading in types | {"OTHER", None}
                or (leading == "PERSON" and not self.main_is_person)
            )
        ):
            # "Tarbes was founded in 1779. The town lies on a river.": the document's own word
            # for what its main entity is; so too for a name NER called a person in a document
            # whose pronouns call it "it" ("Gannet Sonar ... It was founded ... the company")
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
        if token.pos_ != "PROPN":
            return None
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

    def phrases(self, tokens: Iterable[Any]) -> list[str]:
        """Common-noun phrases (and their conjuncts) named as things of type OTHER: "a silver
        medal" -> "silver medal". Determiners, clauses and prepositional tails are left out."""
        out = []
        for token in tokens:
            for item in with_conjuncts(token):
                item = _share_of(item)
                if item.pos_ != "NOUN" or item.i in self.by_token:
                    continue
                start = item.i
                for child in reversed(list(item.lefts)):
                    if child.dep_ not in _PHRASE_MODIFIERS or child.right_edge.i != start - 1:
                        break
                    start = child.left_edge.i
                if start == item.i and lemma(item) in _VAGUE_NOUNS:
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
        if node.dep_ == "attr" and node.head.lemma_ in _COPULAS and noun.pos_ == "NOUN":
            copula = node.head
            subjects = self.entities(c for c in copula.children if c.dep_ in _SUBJECT_DEPS)
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

    # rules ------------------------------------------------------------------------------------
    def _verb(self, verb: Any) -> Iterator[Link]:
        children = list(verb.children)
        if verb.lemma_ in _COPULAS:
            yield from self._copula(verb, children)
            if verb.lemma_ == "be":
                return
        subjects = self.entities(c for c in children if c.dep_ in _SUBJECT_DEPS)
        passive = self.entities(c for c in children if c.dep_ == "nsubjpass")
        participle = verb.dep_ == "acl" and verb.tag_ == "VBN"
        if participle:  # "the company founded by X"
            passive = passive or self.described(_made_thing(verb))
        elif verb.dep_ == "acl" and not subjects:  # "the company making phones"
            subjects = self.described(verb.head)
        if (
            not subjects
            and not passive
            # "worked for Kelmar Bank between 1990 and 1996, then moved to ...": the parser
            # hangs the second verb on the first as "dep"
            and (verb.dep_ == "conj" or (verb.dep_ == "dep" and said_then(verb)))
            and verb.head.pos_ in ("VERB", "AUX")
        ):
            head_children = list(verb.head.children)
            subjects = self.entities(c for c in head_children if c.dep_ in _SUBJECT_DEPS)
            passive = self.entities(c for c in head_children if c.dep_ == "nsubjpass")
            if any(c.dep_ == "auxpass" for c in children):
                # "Marr left Brenner in 2020 and was replaced by Tomas Reyes": the shared
                # subject is what this verb's deed was done to
                subjects, passive = [], subjects + passive
        if not subjects and not passive:
            subjects = self._fallback_subject(verb)
        agents = self.entities(
            g for c in children if c.dep_ == "agent" for g in c.children if g.dep_ == "pobj"
        )
        objects = self.entities(c for c in children if c.dep_ in ("dobj", "obj"))
        predicate = verb_predicate(verb)
        folded: set[int] = set()  # the words the predicate holds ("declare_war")
        if verb.lemma_ in _COPULAS:
            # "became famous in 1944": the complement is the point, "became in 1944" says nothing
            complements = [
                c for c in children if c.dep_ in ("attr", "acomp") and c.i not in self.by_token
            ]
            if complements:
                predicate = normalize_predicate(f"{predicate}_{lemma(complements[0])}")
                folded.add(complements[0].i)
        vague = [
            c
            for c in children
            if c.dep_ in ("dobj", "obj") and lemma(c) in _VAGUE_NOUNS and c.i not in self.by_token
        ]
        if vague and not list(vague[0].children):
            # "took place in 2011": the bare noun is half the verb ("take_in" says nothing)
            predicate = normalize_predicate(f"{predicate}_{lemma(vague[0])}")
            folded.add(vague[0].i)
        linked = predicate
        if verb.lemma_ in _LIGHT_VERBS and not objects and not vague:
            # "Canada declared war in 1939", "made history in 2016": what the verb did is in its
            # object, so a preposition's fact names it ("declare_in 1939" says nothing)
            plain = [c for c in children if c.dep_ in ("dobj", "obj") and c.pos_ == "NOUN"]
            if plain and plain[0].i not in self.by_token:
                linked = normalize_predicate(f"{predicate}_{lemma(plain[0])}")
                folded.add(plain[0].i)
        if not objects and not agents:
            # "Hill won a silver medal": the object is a description, not a name
            for phrase in self.phrases(c for c in children if c.dep_ in ("dobj", "obj")):
                for s in subjects:
                    yield Link(s, predicate, phrase, "phrase", verb)
        if predicate in _SUCCESSION and not objects and not agents:
            yield from self._succession(verb, subjects)
        # "X was founded in 1890 in Oslo by Y": where and when a passive verb's deed was done is
        # X's (with no such name, "a group of poets, founded in 1890 by Y", nobody's); "sold by
        # Y to Z", "succeeded by Y as CEO" are Y's
        passive_verb = participle or any(c.dep_ in ("auxpass", "agent") for c in children)
        patients = passive or subjects
        if agents:
            subjects, objects = agents, [*passive, *objects]
        for s in subjects:
            for o in objects:
                yield Link(s, predicate, o, "svo", verb)
        anchors = passive if passive and not agents else (subjects or passive)
        # "released it on 1 November 1994", "was protected by an easement in 2013": what was
        # done, or by whom, is the point, and a date as the other end drops it
        dated = not any(c.dep_ in _ARGUMENTS and c.i not in folded for c in children)
        for word, targets in self._prepositions(verb):
            held = patients if passive_verb and word in _WHERE_WHEN else anchors
            for s in held:
                for o in targets:
                    if dated or self.names.leading_type(o) != "DATE":
                        yield Link(s, f"{linked}_{word}", o, "prep", verb)
        yield from self._noun_links(verb, children, predicate, subjects)
        # "was elected mayor of Pennick", "named X chief executive of Y": the role the verb
        # gives its patient (its time is the role's start, see noema.ingest.times)
        for role in children:
            if role.dep_ == "oprd" and role.pos_ == "NOUN" and role.i not in self.by_token:
                for role_predicate, target in self._role_targets(role):
                    for holder in passive or objects:
                        yield Link(holder, role_predicate, target, "role", verb)

    def _noun_links(
        self, verb: Any, children: list[Any], predicate: str, subjects: list[str]
    ) -> Iterator[Link]:
        """Facts a noun under the verb names, anchored at the verb (whose clause has the time)."""
        # "She served as mayor of Halden": the role her verb's time belongs to
        for role in (g for c in children if c.lower_ == "as" for g in c.children):
            if role.dep_ == "pobj" and role.pos_ == "NOUN" and role.i not in self.by_token:
                for role_predicate, target in self._role_targets(role):
                    yield from (Link(s, role_predicate, target, "role", verb) for s in subjects)
        # "She received her degree from Harvard": the object noun names the relation
        for obj in children:
            if obj.dep_ not in ("dobj", "obj") or obj.i in self.by_token or obj.pos_ != "NOUN":
                continue
            if lemma(obj) in _SHARES:
                continue  # "won a total of five titles": the titles are the object (phrases)
            for word, targets in self._prepositions(obj):
                for s in subjects:
                    for o in targets:
                        yield Link(s, f"{predicate}_{lemma(obj)}_{word}", o, "object_prep", verb)

    def _succession(self, verb: Any, successors: list[str]) -> Iterator[Link]:
        """ "X was CEO of Y until 2019, when Z took over": Z succeeded X, and took over Y."""
        clause = verb.head
        while clause.pos_ not in ("VERB", "AUX") and clause.head.i != clause.i:
            clause = clause.head
        if clause is verb or clause.pos_ not in ("VERB", "AUX"):
            return
        holders = [h for h in self._subjects_of(clause) if h not in successors]
        held = self.entities(c for c in clause.children if c.dep_ in ("dobj", "obj"))
        for complement in clause.children:
            if complement.dep_ == "attr" and complement.i not in self.by_token:
                held += [t for _, t in self._role_targets(complement) if t not in held]
        for successor in successors:
            for holder in holders:
                yield Link(successor, "succeed", holder, "succession", verb)
            for thing in held:
                yield Link(successor, "take_over", thing, "succession", verb)

    def _prepositions(self, head: Any) -> Iterator[tuple[str, list[str]]]:
        """Each preposition under ``head`` with the entities it governs: ("in", ["Tulsa"]). The
        parser calls some a dative ("played for Arvik United", "sold it to Fenwick Dairy")."""
        for prep in head.children:
            if prep.dep_ == "prep" or (prep.dep_ == "dative" and prep.pos_ == "ADP"):
                yield prep.lower_, self.entities(g for g in prep.children if g.dep_ == "pobj")
        if place_clause(head):
            # "moved to Pennick, where she died in 2010": "where" is "in" the name it hangs on
            yield "in", self.entities([head.head])

    def _copula(self, verb: Any, children: list[Any]) -> Iterator[Link]:
        subject_tokens = [c for c in children if c.dep_ in _SUBJECT_DEPS]
        subjects = self.entities(subject_tokens) or self._fallback_subject(verb)
        for complement in children:
            if complement.dep_ not in ("attr", "acomp"):
                continue
            if complement.i not in self.by_token:
                # "X is the CEO of Y", "X is married to Y"
                roles = list(self._role_targets(complement))
                for predicate, target in roles:
                    for s in subjects:
                        yield Link(s, predicate, target, "copula", verb)
                if not roles:
                    # "X is an American rock band": the description is an answer in its own right
                    for phrase in self.phrases([complement]):
                        for s in subjects:
                            yield Link(s, "is", phrase, "phrase", verb)
            else:
                # "The CEO of Y is X", "Y's CEO is X"
                holders = self.entities([complement])
                for token in subject_tokens:
                    if token.i in self.by_token:
                        continue
                    for predicate, target in self._role_targets(token):
                        for h in holders:
                            yield Link(h, predicate, target, "copula", verb)

    def _role_targets(self, noun: Any) -> Iterator[tuple[str, str]]:
        role = role_phrase(noun)
        for target in self.entities(c for c in noun.children if c.dep_ == "poss"):
            yield f"{role}_of", target
        for word, targets in self._prepositions(noun):
            for target in targets:
                yield f"{role}_{word}", target

    def _role_noun(self, noun: Any) -> Iterator[Link]:
        if noun.pos_ != "NOUN" and not (noun.text.isupper() or lemma(noun) in _TITLES):
            return  # a proper noun NER missed is a name ("Slough, Berkshire"), not a role
        holders: list[str] = []
        if noun.dep_ == "appos" or (noun.dep_ == "compound" and noun.head.i in self.by_token):
            # "George W. Bush, the 43rd President; Jeb Bush, a former governor": a role in the
            # singular belongs to the one name it stands beside, not to the names listed after
            # it; "Ann and Bob, the founders of X" are both founders
            head = noun.head
            if noun.tag_ != "NNS":
                holder = self.resolve(head)
                holders = [holder] if holder else []
            else:
                while head.dep_ == "conj" and head.head.i != head.i:
                    head = head.head  # the parser hangs the plural on the last name listed
                holders = self.entities([head])
        holders += [
            h
            for h in self.entities(c for c in noun.children if c.dep_ == "appos")
            if h not in holders
        ]
        if not holders:
            return
        for predicate, target in self._role_targets(noun):
            for h in holders:
                yield Link(h, predicate, target, "role", noun)
