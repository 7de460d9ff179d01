"""The English dependency rules that read facts from one sentence at a time.

Each rule yields a :class:`Link` naming the rule, so that the extractor can weigh facts by how
direct the structure was (:data:`noema.ingest.confidence.CONFIDENCE`). Names come from and go into the document's
:class:`~noema.ingest.entities.NameTable`; which name a token stands for is what
:class:`~noema.ingest._resolution.EntityResolver`, the base of :class:`SentenceReader`, says.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from noema.ingest._name_table import has_letter
from noema.ingest._resolution import COPULAS, SHARES, SUBJECT_DEPS, VAGUE_NOUNS, EntityResolver
from noema.ingest._tokens import (
    denies,
    governing_predicate,
    lemma,
    place_clause,
    role_phrase,
    said_then,
    verb_predicate,
    with_conjuncts,
)
from noema.ingest.dates import is_length, names_no_time
from noema.model.records import VALUE_TYPES, normalize_predicate
from noema.model.roles import ROLE_ACRONYMS, is_role

__all__ = ["Link", "SentenceReader"]

# Prepositions that say where or when something was done.
_WHERE_WHEN = frozenset(
    {"in", "at", "on", "near", "during", "since", "until", "throughout", "within", "between"}
)
# what a verb does to something or someone: its object, complement or agent
_ARGUMENTS = frozenset({"dobj", "obj", "attr", "oprd", "ccomp", "xcomp", "agent"})
# Role nouns the tagger often calls proper nouns ("President Lincoln"); acronyms ("CEO") too
_TITLE_LIST = (
    "president chairman chairwoman chair founder director governor mayor senator minister "
    "secretary chancellor king queen prince princess emperor pope bishop general professor"
)
_TITLES = frozenset(_TITLE_LIST.split())
# "when Z took over": an intransitive verb that says Z followed the clause's subject
_SUCCESSION = frozenset({"take_over", "step_in", "take_charge"})
# Verbs that say little without their object ("made history", "took office", "gained
# independence", "declared war"): a preposition's fact keeps the object in its predicate.
_LIGHT_VERBS = frozenset(
    {"make", "take", "have", "give", "draw", "declare", "hold", "gain", "get", "set", "pay"}
    | {"do", "earn", "achieve", "attain", "regain"}
)


# Participles that say what was done to a made thing ("a novel by X, published in 1969").
_MAKING_PARTICIPLES = frozenset(
    {"publish", "release", "record", "write", "compose", "film", "produce", "print", "issue"}
)


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


# types whose names hold no office, and those of a page whose office without a body is not
# the page's ("Theresa May was prime minister" in a town's)
_NO_HOLDERS = frozenset(VALUE_TYPES | {"PRODUCT"})
_NOT_BODIES = frozenset(VALUE_TYPES | {"PERSON", "GPE"})


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
    played for", "is no relation of", "had no children", "is not related to" (the "not" of
    the adjective a copula joins), "has no plans to acquire", or says it holds no more ("is
    no longer affiliated with")."""
    if anchor is None:
        return False
    if _reported(anchor):
        return True
    if any(denies(n) for n in (anchor, *(c for c in anchor.children if c.dep_ == "acomp"))):
        return True
    nodes = [anchor, *(c for c in anchor.children if c.dep_ in ("attr", "dobj", "obj"))]
    if anchor.dep_ == "acl" and anchor.head.pos_ == "NOUN":
        nodes.append(anchor.head)  # "has no plans to acquire X", "no intention to sell"
    return any(d.dep_ == "det" and d.lower_ == "no" for n in nodes for d in n.children)


# what a claim someone reports is called: "Reports that X would leave for Y were wrong"
_REPORTS = frozenset(
    {"report", "rumour", "rumor", "claim", "speculation", "suggestion", "story", "allegation"}
    # what passes others' words on: "Several published profiles say that he worked for X"; not
    # "sources": "Some sources say that John Story was appointed in about 1541" hedges a date
    | {"profile", "article", "newspaper", "tabloid"}
)
# verbs that say a claim is false, or only passed on: "denied that", "reports said"
_DENYING = frozenset({"deny", "dismiss", "reject", "refute"})
_SAYING = frozenset({"say", "claim", "suggest", "report", "speculate", "allege"})
_CLAUSES = frozenset({"acl", "relcl", "ccomp", "xcomp", "conj", "advcl"})


def _reported(anchor: Any) -> bool:
    """Whether the clause of ``anchor`` is not the writer's claim: a question ("Did Hesketh
    work here?"), what a report or a rumour says ("Reports that Valk would leave for Tarrowby
    were wrong", "A rumour that Marlin had bought Tarrowby was denied"), what is denied ("denied
    that it had bid for"), or what reports said ("Press reports said she would join Ostrander").
    """
    words = [t for t in anchor.sent if not t.is_space]
    if words and words[-1].text == "?":
        return True
    if _described(anchor):
        return True
    node = anchor
    for _ in range(6):
        head = node.head
        if head is node or node.dep_ not in _CLAUSES:
            return False
        said = lemma(head)
        # "Reports" opening a sentence is often tagged a proper noun
        reports = said in _REPORTS or said.removesuffix("s") in _REPORTS
        if head.pos_ in ("NOUN", "PROPN") and reports and _complement(node):
            return True
        if head.pos_ in ("VERB", "AUX") and node.dep_ == "ccomp":
            subjects = [lemma(c) for c in head.children if c.dep_ in ("nsubj", "nsubjpass")]
            if said in _DENYING or (said in _SAYING and _REPORTS.intersection(subjects)):
                return True
        node = head
    return False


# verbs whose "as" gives what others make of someone, not what the writer states: "is
# sometimes described as a former reader for Orrery House, but he never worked for the house"
_HEDGING = frozenset({"describe", "portray", "bill", "tout", "label", "rumour", "rumor"})


def _described(anchor: Any) -> bool:
    """Whether ``anchor`` stands in what a hedging verb's "as" says of someone ("described as a
    former reader for X"): climbing from it to the "as" within its own clause, so a fact of a
    clause joined to that verb ("was described as a gifted pianist and played for Arsenal") is
    the writer's own."""
    node = anchor
    for _ in range(5):
        if node.dep_ == "pobj" and node.head.lower_ == "as":
            return lemma(node.head.head) in _HEDGING
        if node.head is node or node.dep_ in _CLAUSES:
            return False
        node = node.head
    return False


def _complement(clause: Any) -> bool:
    """Whether a clause under a noun says what the noun reports ("reports that he would
    leave"), not which one it is ("the story that he wrote"): a complement, or a clause the
    parser read as relative although it has an object of its own beside the "that"."""
    if clause.dep_ != "relcl":
        return True
    children = list(clause.children)
    that = any(c.lower_ == "that" for c in children)
    # "that" as the complementizer with a subject of the clause's own ("Reports that Mara
    # Thistle would leave for Ironwood"): the parser's relative clause is the claim reported
    said = any(c.lower_ == "that" and c.dep_ == "mark" for c in children) and any(
        c.dep_ in ("nsubj", "nsubjpass") and c.lower_ not in ("that", "which") for c in children
    )
    return said or (that and sum(c.dep_ in ("dobj", "obj") for c in children) >= 2)


# Prepositions that say where a verb's object went or came from: "sold X to Y", "signed X from
# Y", "named X after Y". Where the subject goes itself ("joined X from Y", "left X for Y"), with
# whom ("founded it with"), or where the subject did it ("directed Crowe in Gladiator", "taught
# Mathematics at Trinity", "won the Ballon d'Or for Barcelona") stays the subject's.
_WHITHER = frozenset({"to", "from", "into", "onto", "after"})
_MOVERS = frozenset({"join", "rejoin", "leave", "quit", "enter", "follow", "accompany"})
# Verbs whose object comes about where the verb says: "founded Nettlecombe in Tamsford",
# "discovered Velotrexin at the Amberline Laboratory", "recorded the album at Crane Studios".
_MAKERS = frozenset(
    {"found", "establish", "build", "construct", "erect", "open", "create", "start", "launch"}
    | {"form", "base", "locate", "headquarter", "register", "incorporate", "set", "hold"}
    | {"stage", "write", "compose", "record", "develop", "design", "discover", "invent"}
    | {"publish", "release", "produce", "manufacture", "make", "paint", "film", "shoot", "print"}
)


class SentenceReader(EntityResolver):
    """The dependency rules, applied to one sentence at a time."""

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
                if is_length(fact.object) or self._no_time(fact.object):
                    # "coached the Hawks for six seasons": how long, no thing the fact joins;
                    # the length is left to the sentence's links, under any floor that states;
                    # "named him today", "won it that season": no time at all
                    continue
                # a denied fact is no fact, and its names are not left to the topic links
                linked.update((fact.subject, fact.object))
                if not _denied(fact.anchor):
                    yield fact
        yield from self._sentence_links(sent, linked)

    def _things(self, names: list[str]) -> list[str]:
        """``names`` without values: "spent two seasons at City", "paid $19 billion for
        WhatsApp", "lost 2–1 to Eskridge" keep the preposition the subject's."""
        return [n for n in names if self.names.leading_type(n) not in VALUE_TYPES and has_letter(n)]

    def _no_time(self, name: str) -> bool:
        """Whether ``name`` is a date of this document that names no time ("today")."""
        return self.names.leading_type(name) == "DATE" and names_no_time(name)

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
        subject = next((c for c in root.children if c.dep_ in SUBJECT_DEPS), None)
        if topic is None and subject is not None and self._named_compound(subject):
            return
        if topic is None and self.main is not None:
            topic = self.main
        if topic is None:
            return
        seen = set(linked) | {topic}
        for token in sent:
            name = self.by_token.get(token.i)
            if name is None or name in seen or self._no_time(name):
                continue
            seen.add(name)
            # climb from the name's own head word: "last" of "the last two weeks" hangs from
            # "weeks", which is the name, not what the sentence says of it
            while token.head.i != token.i and self.by_token.get(token.head.i) == name:
                token = token.head
            if _described(token):
                continue  # what others call the topic ("described as a reader for X")
            predicate = governing_predicate(token)
            if predicate:
                yield Link(topic, predicate, name, "sentence")

    # rules ------------------------------------------------------------------------------------
    def _verb(self, verb: Any) -> Iterator[Link]:
        children = list(verb.children)
        if verb.lemma_ in COPULAS:
            yield from self._copula(verb, children)
            if verb.lemma_ == "be":
                return
        subjects = self.entities(c for c in children if c.dep_ in SUBJECT_DEPS)
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
            subjects = self.entities(c for c in head_children if c.dep_ in SUBJECT_DEPS)
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
        if verb.lemma_ in COPULAS:
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
            if c.dep_ in ("dobj", "obj") and lemma(c) in VAGUE_NOUNS and c.i not in self.by_token
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
        # "sold Gannet Sonar to Lindqvist Marine", "founded Nettlecombe in Tamsford": where the
        # named object went or came about is the object's, as the passive says it ("Gannet
        # Sonar was sold to ..."); the subject "sold to" it dropped what was sold (see _WHITHER)
        moved = [] if passive_verb or verb.lemma_ in _MOVERS else self._things(objects)
        for word, targets in self._prepositions(verb):
            held = patients if passive_verb and word in _WHERE_WHEN else anchors
            if moved and (word in _WHITHER or (word in ("in", "at") and verb.lemma_ in _MAKERS)):
                held = moved
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
            noun = role.pos_ == "NOUN" or role.lower_ in ROLE_ACRONYMS  # "as CEO of": PROPN
            if role.dep_ == "pobj" and noun and role.i not in self.by_token:
                for role_predicate, target in self._role_targets(role):
                    yield from (Link(s, role_predicate, target, "role", verb) for s in subjects)
        # "She received her degree from Harvard": the object noun names the relation
        for obj in children:
            if obj.dep_ not in ("dobj", "obj") or obj.i in self.by_token or obj.pos_ != "NOUN":
                continue
            if lemma(obj) in SHARES:
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
        subject_tokens = [c for c in children if c.dep_ in SUBJECT_DEPS]
        subjects = self.entities(subject_tokens) or self._fallback_subject(verb)
        held: list[str] = []  # the ends of the last role: "the CEO of Fenwick Dairy"
        # "X is a biophysicist and the director of Y": each conjunct is a complement of its own
        complements = [
            item
            for c in children
            if c.dep_ in ("attr", "acomp")
            for item in (with_conjuncts(c) if c.i not in self.by_token else (c,))
            if item is c or (item.pos_ == "NOUN" and item.i not in self.by_token)
        ]
        for complement in complements:
            if complement.i not in self.by_token:
                # "X is the CEO of Y", "X is married to Y"
                roles = list(self._role_targets(complement))
                for predicate, target in roles:
                    for s in subjects:
                        yield Link(s, predicate, target, "copula", verb)
                office = self._office_of_topic(verb, complement, subjects)
                if office is not None:
                    # "A: Samuel Torvane has been director since 2021." in the centre's FAQ
                    for s in subjects:
                        yield Link(s, office, self.main or "", "copula", verb)
                    held = []
                    continue
                if not roles:
                    # "X is an American rock band": the description is an answer in its own
                    # right; after a role and a comma ("the CEO of Fenwick Dairy, the business
                    # his grandmother started") it describes the role's end, not X
                    after_comma = complement.left_edge.i > 0 and (
                        complement.doc[complement.left_edge.i - 1].text == ","
                    )
                    described = held if held and after_comma else subjects
                    for phrase in self.phrases([complement], conjuncts=False):
                        for s in described:
                            yield Link(s, "is", phrase, "phrase", verb)
                held = [target for _, target in roles]
            else:
                # "The CEO of Y is X", "Y's CEO is X"
                holders = self.entities([complement])
                for token in subject_tokens:
                    if token.i in self.by_token:
                        continue
                    for predicate, target in self._role_targets(token):
                        for h in holders:
                            yield Link(h, predicate, target, "copula", verb)

    def _office_of_topic(self, verb: Any, noun: Any, subjects: list[str]) -> str | None:
        """``director_of`` for "X has been director" with no body named, in a document about
        an organisation, a built place or a product (not a person or a town, and not X
        itself): the office is held there. ``None`` for a noun that names no office, says where
        it is held, or says what X does ("a film director"; "was prime minister" in a town's
        page), or in a clause that is not its own ("when Conrad Hesketh was director" in the
        laboratory's page is the director of the institute it sits in)."""
        if (
            verb.dep_ != "ROOT"
            or self.main is None
            or self.main_is_person
            or self.names.leading_type(self.main) in _NOT_BODIES
            or not subjects
            or self.main in subjects
            # no product or value holds an office: "Dorrow :PRODUCT is the director" is a name
            # NER cut from a person's, whose office its other pages date
            or any(self.names.leading_type(s) in _NO_HOLDERS for s in subjects)
            or noun.pos_ != "NOUN"
            or any(c.dep_ in ("prep", "poss", "relcl", "acl") for c in noun.children)
            or any(c.dep_ == "det" and c.lower_ in ("a", "an") for c in noun.children)
        ):
            return None
        predicate = f"{role_phrase(noun)}_of"
        return predicate if is_role(predicate) else None

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
