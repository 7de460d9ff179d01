"""The built-in extractor: entities from spaCy NER, relations from dependency-parse patterns.

English only: the relation rules read spaCy's English dependency labels. What they cover, with the
predicate each gives (lemma-based, lowercase snake_case):

=================================================  =============================================
"Larry Page founded Google"                        Larry Page -found-> Google
"Larry Page and Sergey Brin founded Google"        one fact per conjunct, on either side
"Sundar Pichai is the CEO of Google"               -ceo_of-> (copula with a role noun)
"Google is headquartered in Mountain View"         -headquarter_in-> (verb plus preposition)
"Nvidia acquired Mellanox in 2020"                 -acquire-> Mellanox and -acquire_in-> 2020
"YouTube was founded by Chad Hurley"               Chad Hurley -found-> YouTube (passive, agent)
"Sundar Pichai, the CEO of Google,"                -ceo_of-> (appositive role)
"Google's CEO Sundar Pichai"                       -ceo_of-> (possessive role)
"Google, which Larry Page founded,"                Larry Page -found-> Google (relative clause)
=================================================  =============================================

"He", "she" and "it" as a subject refer to the document's main entity: the entity named by the
document's ``title`` metadata when there is one (a trailing "(band)" is ignored), else the subject
of its first sentence. Whether "he"/"she" or "it" is the one meant follows the document's own
subject pronouns when they are all of one kind, else the main entity's NER type. A definite
common-noun subject ("The band played in Tulsa") stands for the main entity too. Named things
no rule connected are linked to their sentence's topic (its subject, else the main entity) with
the verb or noun they hang from as predicate, at a lower confidence, so every name in the text
can be reached. Proper nouns NER missed become entities of type OTHER unless the same name has a
type elsewhere in the batch.

spaCy labels map to Noema's nine types as follows: PERSON, ORG, GPE, LOC, DATE, EVENT, PRODUCT
and MONEY keep their label; FAC -> LOC; TIME -> DATE; WORK_OF_ART -> PRODUCT; NORP, LAW,
LANGUAGE, PERCENT, QUANTITY and CARDINAL -> OTHER; ORDINAL is dropped (it names no thing). Within a
document, a name's mentions vote on whether it is a PERSON; among the other types, every mention
of the name across the batch of documents votes, so one name gets one type and one node.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from noema.graph import VALUE_TYPES, Document, Mention, SemanticGraph, normalize_predicate
from noema.names import clean_name, is_business_suffix, strip_disambiguation
from noema.resources import DEFAULT_SPACY_MODEL, load_spacy_model

__all__ = ["Extractor", "RelationPattern", "SpacyExtractor", "map_spacy_label"]

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

# Confidence by the rule that produced a fact: direct clause structure is surer than modifiers.
_CONFIDENCE = {
    "svo": 0.9,
    "copula": 0.85,
    "prep": 0.8,
    "role": 0.8,
    "custom": 0.9,
    "object_prep": 0.7,
    "phrase": 0.6,
    "sentence": 0.5,
}
_FALLBACK_DETERMINERS = frozenset({"the", "this", "these", "its", "his", "her", "their"})
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
_RELATIVE_PRONOUNS = frozenset({"which", "who", "whom", "that"})
_PERSON_PRONOUNS = frozenset({"he", "she", "him", "her", "his", "hers"})
_THING_PRONOUNS = frozenset({"it", "its"})
_ANY_PRONOUNS = frozenset({"they", "them", "their"})
_SUBJECT_DEPS = frozenset({"nsubj", "csubj"})
# Modifiers kept in a noun phrase that becomes an entity of its own: "an American rock band"
_PHRASE_MODIFIERS = frozenset(
    {"amod", "compound", "nummod", "nmod", "npadvmod", "advmod", "quantmod"}
)
# Nouns that say too little to stand alone as a thing ("is part of", "won one")
_VAGUE_NOUNS = frozenset(
    {"one", "part", "member", "some", "something", "thing", "way", "lot", "number", "kind", "type"}
)


def map_spacy_label(label: str) -> str | None:
    """Noema's type for a spaCy entity label, or ``None`` for labels that are dropped.

    Example:
        >>> map_spacy_label("FAC"), map_spacy_label("ORDINAL")
        ('LOC', None)
    """
    return _LABELS.get(label, None if label == "ORDINAL" else "OTHER")


@runtime_checkable
class Extractor(Protocol):
    """Anything that turns documents into a graph of entities and relations (e.g. an LLM).

    The graph it returns should hold the documents and give mentions pointing into them.
    """

    def extract(self, documents: Sequence[Document]) -> SemanticGraph:
        """Return the entities, relations and events found in ``documents``."""
        ...


@dataclass(frozen=True)
class RelationPattern:
    """A user rule that maps matches to a predicate.

    ``kind="dependency"``: ``pattern`` is a spaCy ``DependencyMatcher`` pattern; the nodes whose
    ``RIGHT_ID`` is ``"subject"`` and ``"object"`` must fall inside entities.
    ``kind="token"``: ``pattern`` is a spaCy ``Matcher`` pattern for the words *between* two
    entities; the entity just before the match is the subject, the one just after the object.

    Example:
        >>> RelationPattern("partner_with", [{"LOWER": "teamed"}, {"LOWER": "up"}, {"LOWER": "with"}],
        ...                 kind="token").predicate
        'partner_with'
    """

    predicate: str
    pattern: list[dict[str, Any]]
    kind: Literal["dependency", "token"] = "dependency"


@dataclass
class _Found:
    """What one document yields before entities become graph nodes."""

    doc: Document
    names: dict[str, Counter[str]] = field(default_factory=dict)  # name -> type votes
    mentions: dict[str, list[Mention]] = field(default_factory=dict)
    facts: list[tuple[str, str, str, Mention, float]] = field(default_factory=list)


class SpacyExtractor:
    """Entities and relations with a spaCy pipeline (English relation rules).

    Args:
        model: spaCy package name or path; ``en_core_web_sm`` falls back to the PyPI copy.
        patterns: extra :class:`RelationPattern` rules.
        n_process: processes for ``nlp.pipe``; more than one helps on large ingests.
        batch_size: texts per ``nlp.pipe`` batch.

    Example:
        >>> graph = SpacyExtractor().extract([Document("Larry Page founded Google.")])
        >>> [r.predicate for r in graph.relations.values()]
        ['found']
    """

    def __init__(
        self,
        model: str = DEFAULT_SPACY_MODEL,
        *,
        patterns: Sequence[RelationPattern] = (),
        n_process: int = 1,
        batch_size: int = 64,
    ) -> None:
        if isinstance(n_process, bool) or not isinstance(n_process, int) or n_process < 1:
            raise ValueError(f"n_process must be an integer >= 1, got {n_process!r}")
        self.model = model
        self.patterns = tuple(patterns)
        self.n_process = n_process
        self.batch_size = batch_size
        self._matchers: tuple[Any, Any] | None = None

    @property
    def model_name(self) -> str:
        """The spaCy package actually loaded (after fallback)."""
        return load_spacy_model(self.model).name

    def extract(self, documents: Sequence[Document]) -> SemanticGraph:
        """Parse ``documents`` and return a graph with one entity per name and type per document."""
        graphs = list(self.extract_batches(documents, max(len(documents), 1)))
        return graphs[0] if graphs else SemanticGraph()

    def extract_batches(
        self,
        documents: Sequence[Document],
        batch_size: int,
        progress: Callable[[int], None] | None = None,
    ) -> Iterator[SemanticGraph]:
        """What :meth:`extract` gives for each run of ``batch_size`` documents, in order;
        ``progress(n)`` is called each time the first ``n`` documents have been read.

        One ``nlp.pipe`` stream reads all of them, so with ``n_process > 1`` the worker
        processes start once rather than once per batch (measured: starting them per batch of
        256 documents cancelled the gain of a second process).
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        nlp = load_spacy_model(self.model).nlp
        found = [_Found(doc) for doc in documents]
        stream = nlp.pipe(
            _split_long(documents, nlp.max_length),
            as_tuples=True,
            batch_size=self.batch_size,
            n_process=self.n_process,
        )
        done = 0  # documents in batches already yielded
        read = 0  # documents whose every piece has been read
        for spacy_doc, (index, offset) in stream:
            if progress is not None and index > read:  # pieces come in order
                read = index
                progress(read)
            while index >= done + batch_size:  # that batch is complete
                yield _batch_graph(found[done : done + batch_size])
                done += batch_size
            self._read(spacy_doc, found[index], offset)
        if progress is not None and found:
            progress(len(found))
        while done < len(found):
            yield _batch_graph(found[done : done + batch_size])
            done += batch_size

    # -- per document --------------------------------------------------------------------------
    def _read(self, spacy_doc: Any, found: _Found, offset: int) -> None:
        doc_id = found.doc.id
        by_token: dict[int, str] = {}
        previous: tuple[Any, str] | None = None  # (span, name) of the last entity kept
        for ent in _joined_places(spacy_doc.ents):
            ent = _within_line(ent)
            type_ = map_spacy_label(ent.label_)
            name = clean_name(ent.text)
            if type_ is None or not name:
                continue
            if ent.label_ in ("CARDINAL", "ORDINAL") and not any(c.isdigit() for c in name):
                continue  # "two", "one": spelled-out counts join unrelated documents into one node
            if (
                is_business_suffix(name)
                and previous is not None
                and ent.start - previous[0].end <= 1
            ):
                # "Microsoft, Inc." tagged as two entities: the suffix belongs to the name before it
                for token in spacy_doc[previous[0].end : ent.end]:
                    by_token[token.i] = previous[1]
                continue
            full = _full_name(found, name)
            if full is not None:
                name, type_ = full, "PERSON"
            previous = (ent, name)
            found.names.setdefault(name, Counter())[type_] += 1
            found.mentions.setdefault(name, []).append(
                Mention(doc_id, offset + ent.start_char, offset + ent.end_char)
            )
            for token in ent:
                by_token[token.i] = name
        main = _main_entity(spacy_doc, found, by_token)

        def register(span: Any) -> str | None:
            """Name a proper noun NER missed; it gets no type vote of its own (see _decide_type)."""
            name = clean_name(span.text)
            if not name or is_business_suffix(name):
                return None
            found.names.setdefault(name, Counter())
            found.mentions.setdefault(name, []).append(
                Mention(doc_id, offset + span.start_char, offset + span.end_char)
            )
            for token in span:
                by_token[token.i] = name
            return name

        votes = found.names[main].most_common(1) if main else []
        reader = _SentenceReader(
            by_token,
            main,
            register,
            main_is_person=_pronouns_say_person(spacy_doc, bool(votes and votes[0][0] == "PERSON")),
            kinds=_main_kinds(spacy_doc, main, by_token),
        )
        for sent in spacy_doc.sents:
            mention = Mention(doc_id, offset + sent.start_char, offset + sent.end_char)
            for subject, predicate, obj, rule in reader.read(sent):
                if subject != obj and predicate:
                    found.facts.append((subject, predicate, obj, mention, _CONFIDENCE[rule]))
        if self.patterns:
            self._read_patterns(spacy_doc, found, by_token, offset)

    def _read_patterns(
        self, spacy_doc: Any, found: _Found, by_token: dict[int, str], offset: int
    ) -> None:
        from spacy.matcher import DependencyMatcher, Matcher

        vocab = spacy_doc.vocab
        if self._matchers is None or self._matchers[0].vocab is not vocab:
            dep, tok = DependencyMatcher(vocab), Matcher(vocab)
            for n, rule in enumerate(self.patterns):
                (dep if rule.kind == "dependency" else tok).add(str(n), [rule.pattern])
            self._matchers = (dep, tok)
        dep, tok = self._matchers

        def add(subject: str, rule: RelationPattern, obj: str, sent: Any) -> None:
            mention = Mention(found.doc.id, offset + sent.start_char, offset + sent.end_char)
            predicate = normalize_predicate(rule.predicate)
            found.facts.append((subject, predicate, obj, mention, _CONFIDENCE["custom"]))

        for match_id, token_ids in dep(spacy_doc) if len(dep) else ():
            rule = self.patterns[int(vocab.strings[match_id])]
            roles = {node["RIGHT_ID"]: token_ids[k] for k, node in enumerate(rule.pattern)}
            subject = by_token.get(roles.get("subject", -1))
            obj = by_token.get(roles.get("object", -1))
            if subject and obj and subject != obj:
                add(subject, rule, obj, spacy_doc[roles["subject"]].sent)
        for match_id, start, end in tok(spacy_doc) if len(tok) else ():
            rule = self.patterns[int(vocab.strings[match_id])]
            subject, obj = by_token.get(start - 1), by_token.get(end)
            if subject and obj and subject != obj:
                add(subject, rule, obj, spacy_doc[start].sent)


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


def _split_long(
    documents: Sequence[Document], max_length: int
) -> Iterator[tuple[str, tuple[int, int]]]:
    """Texts for nlp.pipe with (document index, character offset); long texts cut at line breaks."""
    limit = max(1000, max_length // 2)
    for index, doc in enumerate(documents):
        text = doc.text
        start = 0
        while len(text) - start > limit:
            cut = text.rfind("\n", start, start + limit)
            if cut <= start:
                cut = text.rfind(" ", start, start + limit)
            if cut <= start:
                cut = start + limit
            yield text[start:cut], (index, start)
            start = cut
        if text[start:].strip():
            yield text[start:], (index, start)


def _full_name(found: _Found, name: str) -> str | None:
    """ "Holm" after "Anna Holm" in the same document means Anna Holm: a one-word name that is
    the last word of exactly one person named earlier in the document (whatever NER labelled
    the short form)."""
    if " " in name or not name[:1].isupper():
        return None
    matches = [
        full
        for full, votes in found.names.items()
        if votes.get("PERSON") and " " in full and full.split()[-1] == name
    ]
    return matches[0] if len(matches) == 1 else None


def _main_entity(spacy_doc: Any, found: _Found, by_token: dict[int, str]) -> str | None:
    title = found.doc.metadata.get("title") if found.doc.metadata else None
    if isinstance(title, str) and title.strip():
        wanted = clean_name(strip_disambiguation(title))
        lowered = wanted.lower()
        for name in found.names:
            if name.lower() == lowered:
                return name
        owner = _possessive_owner(wanted)
        if owner is not None:
            for name in found.names:
                if name.lower() == owner.lower():
                    return name
        # The title names the topic even when NER missed it; its type comes from the best-matching
        # entity inside it, else OTHER. A year or an amount inside a title ("1986 OFC U-20
        # Championship") names an edition, not what the document is about: a DATE topic would
        # also stop the walk, which does not pass through dates.
        inner = [n for n in found.names if n.lower() in lowered]
        votes: Counter[str] = Counter()
        for name in inner:
            votes.update({t: n for t, n in found.names[name].items() if t not in VALUE_TYPES})
        found.names[wanted] = Counter({votes.most_common(1)[0][0] if votes else "OTHER": 1})
        found.mentions.setdefault(wanted, [])
        return wanted
    for sent in spacy_doc.sents:
        for token in sent:
            if token.dep_ in ("nsubj", "nsubjpass") and token.i in by_token:
                return by_token[token.i]
        break
    return None


def _possessive_owner(title: str) -> str | None:
    """ "Nvidia" for "Nvidia's early years", which is about Nvidia; ``None`` for "Charlotte's
    Web", a title of its own rather than an aspect of Charlotte."""
    for mark in ("'s ", "\u2019s "):
        owner, _, rest = title.partition(mark)
        if rest and not rest[0].isupper():
            return owner
    return None


def _pronouns_say_person(spacy_doc: Any, labelled_person: bool) -> bool:
    """Whether "he"/"she" or "it" stands for the document's main entity.

    The text's own subject pronouns decide when they agree: an article whose subjects are only
    "it" is about a thing even when NER called its name a PERSON ("Religion on the Line ... it was
    hosted by Dennis Prager"), and one whose subjects are only "he"/"she" is about a person that
    NER missed or mistyped. Otherwise NER's label decides.
    """
    person = thing = 0
    for token in spacy_doc:
        if token.dep_ in ("nsubj", "nsubjpass"):
            person += token.lower_ in _PERSON_PRONOUNS
            thing += token.lower_ in _THING_PRONOUNS
    if person and not thing:
        return True
    if thing and not person:
        return False
    return labelled_person


def _main_kinds(spacy_doc: Any, main: str | None, by_token: dict[int, str]) -> frozenset[str]:
    """What the document says its main entity is, from its first "X is a ..." sentence."""
    if main is None:
        return frozenset()
    for sent in list(spacy_doc.sents)[:2]:
        root = sent.root
        if root.lemma_ != "be":
            continue
        subjects = [c for c in root.children if c.dep_ == "nsubj"]
        if not subjects or by_token.get(subjects[0].i) != main:
            continue
        return frozenset(_lemma(c) for c in root.children if c.dep_ == "attr" and c.pos_ == "NOUN")
    return frozenset()


class _SentenceReader:
    """The dependency rules, applied to one sentence at a time."""

    def __init__(
        self,
        by_token: dict[int, str],
        main: str | None,
        register: Callable[[Any], str | None],
        *,
        main_is_person: bool,
        kinds: frozenset[str],
    ):
        self.by_token = by_token
        self.main = main
        self.main_is_person = main_is_person  # "he"/"she" mean the main entity, else "it" does
        self.register = register
        self.kinds = kinds  # nouns that name the main entity: "the band"

    def read(self, sent: Any) -> Iterator[tuple[str, str, str, str]]:
        linked: set[str] = set()
        for token in sent:
            if token.pos_ in ("VERB", "AUX"):
                facts = self._verb(token)
            elif token.pos_ in ("NOUN", "PROPN") and token.i not in self.by_token:
                facts = self._role_noun(token)
            else:
                continue
            for fact in facts:
                linked.update((fact[0], fact[2]))
                yield fact
        yield from self._sentence_links(sent, linked)

    def _sentence_links(self, sent: Any, linked: set[str]) -> Iterator[tuple[str, str, str, str]]:
        """Entities no rule connected are linked to the sentence's topic (its subject, else the
        document's main entity when the sentence is about it), with the governing verb or noun
        as predicate, so every named thing in the text can be reached from its topic."""
        root = sent.root
        topic = next(iter(self._subjects_of(root)), None)
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
            predicate = _governing_predicate(token)
            if predicate:
                yield topic, predicate, name, "sentence"

    def _subjects_of(self, verb: Any) -> list[str]:
        found = self.entities(c for c in verb.children if c.dep_ in (*_SUBJECT_DEPS, "nsubjpass"))
        if found:
            return found
        return self._fallback_subject(verb)

    def _fallback_subject(self, verb: Any) -> list[str]:
        """ "The band played in Tulsa" in the article about the band: a definite common-noun
        subject (or none at all, in a fragment) stands for the document's main entity."""
        if self.main is None or verb.dep_ not in ("ROOT", "conj"):
            return []
        subject = next((c for c in verb.children if c.dep_ in (*_SUBJECT_DEPS, "nsubjpass")), None)
        if subject is None:
            return [self.main] if verb.dep_ == "ROOT" else []
        if subject.pos_ == "NOUN" and any(
            c.dep_ in ("det", "poss") and c.lower_ in _FALLBACK_DETERMINERS
            for c in subject.children
        ):
            return [self.main]
        return []

    # entity resolution ------------------------------------------------------------------------
    def resolve(self, token: Any) -> str | None:
        if token.i in self.by_token:
            return self.by_token[token.i]
        lower = token.lower_
        if (
            lower in _RELATIVE_PRONOUNS
            and token.head.dep_ in ("relcl", "acl")
            and token.head.head is not token
        ):
            return self.resolve(token.head.head)
        if token.pos_ == "PRON" and self.main is not None:
            if lower in _PERSON_PRONOUNS and self.main_is_person:
                return self.main
            if lower in _THING_PRONOUNS and not self.main_is_person:
                return self.main
            if lower in _ANY_PRONOUNS:
                return self.main
        if token.pos_ in ("NOUN", "PROPN"):
            for child in token.children:
                if child.dep_ == "appos" and child.i in self.by_token:
                    return self.by_token[child.i]
        if (
            self.main is not None
            and token.pos_ == "NOUN"
            and _lemma(token) in self.kinds
            and any(c.dep_ == "det" and c.lower_ in ("the", "this") for c in token.children)
        ):
            return self.main  # "the band" in the article that began "X is an American rock band"
        if token.pos_ == "NOUN" and token.lower_ in _PLACE_NOUNS:
            # "the city of Tulsa", "the state of Texas": the noun is a wrapper around the name
            for child in token.children:
                if child.dep_ == "prep" and child.lower_ == "of":
                    for grandchild in child.children:
                        if grandchild.dep_ == "pobj" and grandchild.i in self.by_token:
                            return self.by_token[grandchild.i]
        if token.pos_ == "PROPN":
            # a proper noun NER missed ("Tesla was founded by Elon Musk"): the name is still a thing
            start = token.i
            for child in reversed(list(token.lefts)):
                if (
                    child.dep_ in ("compound", "flat")
                    and child.pos_ == "PROPN"
                    and child.i == start - 1
                ):
                    start = child.i
            return self.register(token.doc[start : token.i + 1])
        return None

    def phrases(self, tokens: Iterable[Any]) -> list[str]:
        """Common-noun phrases (and their conjuncts) named as things of type OTHER: "a silver
        medal" -> "silver medal". Determiners, clauses and prepositional tails are left out."""
        out = []
        for token in tokens:
            for item in _with_conjuncts(token):
                if item.pos_ != "NOUN" or item.i in self.by_token:
                    continue
                start = item.i
                for child in reversed(list(item.lefts)):
                    if child.dep_ not in _PHRASE_MODIFIERS or child.right_edge.i != start - 1:
                        break
                    start = child.left_edge.i
                if start == item.i and _lemma(item) in _VAGUE_NOUNS:
                    continue
                name = self.register(item.doc[start : item.i + 1])
                if name is not None and name not in out:
                    out.append(name)
        return out

    def entities(self, tokens: Iterable[Any]) -> list[str]:
        out = []
        for token in tokens:
            for item in _with_conjuncts(token):
                name = self.resolve(item)
                if name is not None and name not in out:
                    out.append(name)
        return out

    # rules ------------------------------------------------------------------------------------
    def _verb(self, verb: Any) -> Iterator[tuple[str, str, str, str]]:
        children = list(verb.children)
        if verb.lemma_ in _COPULAS:
            yield from self._copula(verb, children)
            if verb.lemma_ == "be":
                return
        subjects = self.entities(c for c in children if c.dep_ in _SUBJECT_DEPS)
        passive = self.entities(c for c in children if c.dep_ == "nsubjpass")
        if verb.dep_ == "acl" and verb.tag_ == "VBN":  # "the company founded by X"
            passive = passive or self.entities([verb.head])
        elif verb.dep_ == "acl" and not subjects:  # "the company making phones"
            subjects = self.entities([verb.head])
        if (
            not subjects
            and not passive
            and verb.dep_ == "conj"
            and verb.head.pos_ in ("VERB", "AUX")
        ):
            head_children = list(verb.head.children)
            subjects = self.entities(c for c in head_children if c.dep_ in _SUBJECT_DEPS)
            passive = self.entities(c for c in head_children if c.dep_ == "nsubjpass")
        if not subjects and not passive:
            subjects = self._fallback_subject(verb)
        agents = self.entities(
            g for c in children if c.dep_ == "agent" for g in c.children if g.dep_ == "pobj"
        )
        objects = self.entities(c for c in children if c.dep_ in ("dobj", "obj"))
        predicate = _verb_predicate(verb)
        if not objects and not agents:
            # "Hill won a silver medal": the object is a description, not a name
            for phrase in self.phrases(c for c in children if c.dep_ in ("dobj", "obj")):
                for s in subjects:
                    yield s, predicate, phrase, "phrase"
        if agents:
            subjects, objects = agents, [*passive, *objects]
        for s in subjects:
            for o in objects:
                yield s, predicate, o, "svo"
        anchors = passive if passive and not agents else (subjects or passive)
        for word, targets in self._prepositions(verb):
            for s in anchors:
                for o in targets:
                    yield s, f"{predicate}_{word}", o, "prep"
        # "She received her degree from Harvard": the object noun names the relation
        for obj in children:
            if obj.dep_ not in ("dobj", "obj") or obj.i in self.by_token or obj.pos_ != "NOUN":
                continue
            for word, targets in self._prepositions(obj):
                for s in subjects:
                    for o in targets:
                        yield s, f"{predicate}_{_lemma(obj)}_{word}", o, "object_prep"

    def _prepositions(self, head: Any) -> Iterator[tuple[str, list[str]]]:
        """Each preposition under ``head`` with the entities it governs: ("in", ["Tulsa"])."""
        for prep in head.children:
            if prep.dep_ == "prep":
                yield prep.lower_, self.entities(g for g in prep.children if g.dep_ == "pobj")

    def _copula(self, verb: Any, children: list[Any]) -> Iterator[tuple[str, str, str, str]]:
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
                        yield s, predicate, target, "copula"
                if not roles:
                    # "X is an American rock band": the description is an answer in its own right
                    for phrase in self.phrases([complement]):
                        for s in subjects:
                            yield s, "is", phrase, "phrase"
            else:
                # "The CEO of Y is X", "Y's CEO is X"
                holders = self.entities([complement])
                for token in subject_tokens:
                    if token.i in self.by_token:
                        continue
                    for predicate, target in self._role_targets(token):
                        for h in holders:
                            yield h, predicate, target, "copula"

    def _role_targets(self, noun: Any) -> Iterator[tuple[str, str]]:
        role = _role_phrase(noun)
        for target in self.entities(c for c in noun.children if c.dep_ == "poss"):
            yield f"{role}_of", target
        for word, targets in self._prepositions(noun):
            for target in targets:
                yield f"{role}_{word}", target

    def _role_noun(self, noun: Any) -> Iterator[tuple[str, str, str, str]]:
        holders: list[str] = []
        if noun.dep_ == "appos" or (noun.dep_ == "compound" and noun.head.i in self.by_token):
            holders = self.entities([noun.head])
        holders += [
            h
            for h in self.entities(c for c in noun.children if c.dep_ == "appos")
            if h not in holders
        ]
        if not holders:
            return
        for predicate, target in self._role_targets(noun):
            for h in holders:
                yield h, predicate, target, "role"


def _with_conjuncts(token: Any) -> Iterator[Any]:
    yield token
    for child in token.children:
        if child.dep_ == "conj":
            yield from _with_conjuncts(child)


def _lemma(token: Any) -> str:
    if token.lower_ == "born":  # spaCy lemmatizes "born" to "bear"
        return "born"
    return str(token.lemma_).lower()


def _governing_predicate(token: Any) -> str:
    """The verb (with the preposition on the way) or noun a name hangs from: "perform_in"."""
    prep = ""
    node = token
    for _ in range(8):
        head = node.head
        if head is node:
            break
        if node.dep_ == "pobj" and head.pos_ == "ADP" and not prep:
            prep = head.lower_
        elif (head.pos_ in ("VERB", "AUX") and head.lemma_ != "be") or head.pos_ == "NOUN":
            return normalize_predicate(f"{_lemma(head)}_{prep}" if prep else _lemma(head))
        node = head
    return normalize_predicate(prep) if prep else ""


def _verb_predicate(verb: Any) -> str:
    parts = [_lemma(verb)]
    parts += [c.lower_ for c in verb.children if c.dep_ == "prt"]
    if any(c.dep_ == "neg" for c in verb.children):
        parts.insert(0, "not")
    return normalize_predicate("_".join(parts))


def _role_phrase(noun: Any) -> str:
    """The role noun with its compound and adjective modifiers: "chief executive officer"."""
    modifiers = [c for c in noun.lefts if c.dep_ in ("compound", "amod") and c.pos_ != "PROPN"]
    return normalize_predicate("_".join([*(_lemma(m) for m in modifiers), _lemma(noun)]))


def _decide_type(votes: Counter[str], batch: Counter[str]) -> str:
    """The type of a name in one document.

    The document's own mentions decide whether the name is a PERSON, because a person and a place
    sharing a name (Washington) are different things. Among the other types the small model's
    labels are noisy ("Nvidia" ORG in one sentence, GPE in the next), so every mention of the
    name in the batch votes, which gives one name one node across documents.
    """
    chosen = votes if votes else batch
    if not chosen:  # a proper noun NER never labelled
        return "OTHER"
    order = list(votes) + [t for t in batch if t not in votes]

    def best(counts: Counter[str]) -> str:
        # most votes wins; ties go to the label seen first, so the choice is deterministic
        return max(counts, key=lambda t: (counts[t], -order.index(t)))

    if best(chosen) == "PERSON":
        return "PERSON"
    # the batch already holds this document's votes; ties go to the batch's first label, so every
    # document of the batch decides the same
    others = Counter({t: n for t, n in (batch or votes).items() if t != "PERSON"})
    order[:] = list(batch) + [t for t in votes if t not in batch]
    return best(others) if others else best(chosen)


def _batch_graph(found: Sequence[_Found]) -> SemanticGraph:
    """One graph for a batch of parsed documents; a name's type votes are pooled over the batch."""
    batch_votes: dict[str, Counter[str]] = {}
    for item in found:
        for name, votes in item.names.items():
            batch_votes.setdefault(name, Counter()).update(votes)
    graph = SemanticGraph()
    for item in found:
        _add_to_graph(graph, item, batch_votes)
    return graph


def _add_to_graph(
    graph: SemanticGraph, found: _Found, batch_votes: dict[str, Counter[str]]
) -> None:
    graph.add_document(found.doc)
    ids: dict[str, str] = {}

    def entity(name: str) -> str:
        if name not in ids:
            type_ = _decide_type(found.names[name], batch_votes.get(name, Counter()))
            ids[name] = graph.add_entity(name, type_, mentions=found.mentions.get(name, ()))
        return ids[name]

    for subject, predicate, obj, mention, confidence in found.facts:
        graph.add_relation(
            entity(subject), predicate, entity(obj), mentions=[mention], confidence=confidence
        )
    for name in found.names:
        entity(name)
