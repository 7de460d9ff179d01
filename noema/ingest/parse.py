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
document's title (its ``title`` metadata, else the Markdown heading it opens with; a trailing
"(band)" is ignored), else the subject of its first sentence. Whether "he"/"she" or "it" is the
one meant follows the document's own subject pronouns when they are all of one kind, else the main
entity's NER type; the other kind refers back to the nearest name of its kind, and so do "the
company", "the town" and other kind nouns (see :mod:`noema.ingest.rules`). Markdown headings are
blanked before parsing: they are titles, not sentences. Named things no rule connected are linked
to their sentence's topic (its subject, else the main entity) with the verb or noun they hang from
as predicate, at a lower confidence, so every name in the text can be reached. Proper nouns NER
missed become entities of type OTHER unless the same name has a type elsewhere in the batch.

spaCy labels map to Noema's nine types as follows: PERSON, ORG, GPE, LOC, DATE, EVENT, PRODUCT
and MONEY keep their label; FAC -> LOC; TIME -> DATE; WORK_OF_ART -> PRODUCT; NORP, LAW,
LANGUAGE, PERCENT, QUANTITY and CARDINAL -> OTHER; ORDINAL is dropped (it names no thing). The
name's own words and the sentence around each mention vote too, more strongly than a label (see
:mod:`noema.ingest.evidence`). Within a document, a name's mentions vote on whether it is a
PERSON when they say enough; among the other types, every mention of the name across the batch of
documents votes, so one name gets one type and one node.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any, Literal

from noema.errors import OptionError
from noema.ingest.confidence import CONFIDENCE
from noema.ingest.entities import (
    ExtractedFact,
    FoundDocument,
    batch_graph,
    fold_possessives,
    fold_short_names,
    map_spacy_label,
    read_entities,
)
from noema.ingest.evidence import CUE_VOTE, form_type, given_name
from noema.ingest.extractor import BatchExtractor, Extractor, Progress
from noema.ingest.kinds import KIND_TYPES, described_kind, kind_type, title_kind
from noema.ingest.layout import blank_layout, dateline_date
from noema.ingest.listings import entry_facts, list_entries, list_line_starts
from noema.ingest.minutes import attendee_facts
from noema.ingest.people import join_initials, join_surname
from noema.ingest.rules import SentenceReader
from noema.ingest.sections import scoped_entries
from noema.ingest.tables import table_entries, table_headers, table_line_starts, table_lines
from noema.ingest.times import close_tenures, read_sentence_times
from noema.ingest.topic import main_entity, main_kinds, pronouns_say_person, title_of
from noema.model.graph import SemanticGraph
from noema.model.names import strip_disambiguation
from noema.model.records import VALUE_TYPES, Document, normalize_predicate
from noema.model.roles import is_role
from noema.resources import DEFAULT_SPACY_MODEL, load_spacy_model

# spaCy's memory grows with the characters of a batch, not of a document (measured: 128 KB of
# text in one batch took 450 MB; in 16 KB pieces parsed one at a time, 71 MB; 512 KB so, 130
# MB). A document longer than this is parsed in pieces of at most this many characters, cut at
# line breaks or sentence ends, one piece per batch, so peak memory stays bounded.
PIECE_CHARACTERS = 20_000

__all__ = [
    "BatchExtractor",
    "Extractor",
    "RelationPattern",
    "SpacyExtractor",
    "map_spacy_label",
]


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


def _batch(found: Sequence[FoundDocument]) -> SemanticGraph:
    """The graph of a run of documents read to their end."""
    for item in found:
        fold_short_names(item)
    fold_possessives(found)
    return batch_graph(close_tenures(found))


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
            raise OptionError(f"n_process must be an integer >= 1, got {n_process!r}")
        if not isinstance(model, str) or not model.strip():
            raise OptionError(
                f"spacy_model must name a spaCy pipeline or a local path, got {model!r}; "
                f"the default is {DEFAULT_SPACY_MODEL!r}"
            )
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
        self, documents: Sequence[Document], batch_size: int, progress: Progress | None = None
    ) -> Iterator[SemanticGraph]:
        """What :meth:`extract` gives for each run of ``batch_size`` documents, in order;
        ``progress(n)`` is called each time the first ``n`` documents have been read.

        One ``nlp.pipe`` stream reads all of them, so with ``n_process > 1`` the worker
        processes start once rather than once per batch (measured: starting them per batch of
        256 documents cancelled the gain of a second process).
        """
        if batch_size < 1:
            raise OptionError(f"batch_size must be at least 1, got {batch_size}")
        nlp = load_spacy_model(self.model).nlp
        found = [FoundDocument.of(doc) for doc in documents]
        stream = self._parsed(nlp, _split_long(documents, min(PIECE_CHARACTERS, nlp.max_length)))
        done = 0  # documents in batches already yielded
        read = 0  # documents whose every piece has been read
        for spacy_doc, (index, offset) in stream:
            if progress is not None and index > read:  # pieces come in order
                read = index
                progress(read)
            while index >= done + batch_size:  # that batch is complete
                yield _batch(found[done : done + batch_size])
                done += batch_size
            self._read(spacy_doc, found[index], offset, nlp)
        if progress is not None and found:
            progress(len(found))
        while done < len(found):
            yield _batch(found[done : done + batch_size])
            done += batch_size

    def _parsed(
        self, nlp: Any, pieces: Iterable[tuple[str, tuple[int, int], bool]]
    ) -> Iterator[tuple[Any, tuple[int, int]]]:
        """Parsed pieces in order: runs of whole documents in batches as configured, the pieces
        of a long document one per batch (see PIECE_CHARACTERS)."""
        for cut, run in groupby(pieces, key=lambda piece: piece[2]):
            yield from nlp.pipe(
                ((_lines_apart(nlp, text), at) for text, at, _ in run),
                as_tuples=True,
                batch_size=1 if cut else self.batch_size,
                # worker processes would each hold a piece for one batch of one: not worth it
                n_process=1 if cut else self.n_process,
            )

    # -- per document --------------------------------------------------------------------------
    def _read(self, spacy_doc: Any, found: FoundDocument, offset: int, nlp: Any) -> None:
        """Read one piece of a document (starting at ``offset``): its entities, then its facts.
        ``nlp`` parses a title that may be a sentence."""
        names = found.names
        names.start_piece(offset)
        read_entities(spacy_doc, names)
        join_initials(spacy_doc, names)
        # what the document is about is read from its beginning: later pieces of a long
        # document keep it
        main = main_entity(spacy_doc, found, nlp) if offset == 0 else found.main
        found.main = main
        join_surname(names, main)
        kinds = main_kinds(spacy_doc, main, names)
        if main is not None and offset == 0:
            title = title_of(found.doc)
            # "Agatha Christie (video game series)": a title that tells its thing apart from
            # others of the name settles the type here only, never for the batch
            names.shared_topic = title is not None and strip_disambiguation(title) != title
            said = title_kind(title) if title is not None else None
            type_ = kind_type([said]) if said in KIND_TYPES else kind_type(kinds)
            if type_ is not None:
                names.settle_type(main, type_)
        votes = names.votes[main].most_common(1) if main else []
        # the document's own word for its topic ("was an Austrian physicist") outweighs its
        # pronouns ("when it absorbed a neutron" is about the uranium)
        said = names.said_type(main or "")
        # a name whose own words say a company ("Quillon Foods") is no person whatever the
        # pronouns: "She replaced Tomas Reyes" there is the chief executive it named. Not a
        # place's words: "Lake Bell" and "River Phoenix" are people by their "she" and "he"
        named_thing = main is not None and form_type(main) == "ORG"
        person = not named_thing and pronouns_say_person(
            spacy_doc, bool(votes and votes[0][0] == "PERSON")
        )
        if (
            main is not None
            and not names.shared_topic
            and not named_thing
            and pronouns_say_person(spacy_doc, False)
        ):
            names.cued.add(("PERSON", main))  # "he" and "she" say a person as a kind noun does
            if given_name(main):
                # and with a given name they settle what NER's ORG against that name left
                # undecided ("Nadia Bellamy ... where she was born")
                names.votes[main]["PERSON"] += CUE_VOTE
        text = spacy_doc.text
        for start, end in table_headers(text):
            header = spacy_doc.char_span(start, end, alignment_mode="expand")
            if header is not None:
                names.give_up(header, keep=main)
        # the headings of the whole document as written (blanked in the text parsed), so a
        # list in a later piece keeps the heading an earlier one holds
        entries = scoped_entries(
            [*list_entries(text), *table_entries(text)], found.doc.text, offset
        )
        # a person's page by its own words ("is a football manager"): pronouns alone also took
        # "Corbel Foundation is well known" for one, whose "Name: chair, 2014–2021" is the name's
        listed, lines = entry_facts(spacy_doc, names, main, entries, said == "PERSON")
        lines += table_lines(text)  # a table's cells are no sentence, whatever its rows state
        found.facts += listed
        if offset == 0:
            found.facts += attendee_facts(spacy_doc, names, title_of(found.doc))
        # a press note's "today" is its dateline's day
        today = dateline_date(found.doc.text)
        # what the document says its topic is decides over its pronouns ("Millrace Park: a
        # ground on the river ... he has ruled out a move" is no person's page)
        is_person = said == "PERSON" if said is not None else person
        described = described_kind(title_of(found.doc) or "") if offset == 0 else None
        if is_person and described is not None and KIND_TYPES[described] != "PERSON":
            # pronouns of both kinds, which NER's label decided: a title's description says
            # what is written about; it settles nothing else, as a headline ("Liz Truss: the
            # party that lost its way") may describe another thing
            is_person = pronouns_say_person(spacy_doc, False)
        reader = SentenceReader(names, main, main_is_person=is_person, kinds=kinds)
        for sent in spacy_doc.sents:
            mention = names.sentence(sent)
            # the sentence without the blank lines after it (a list's last line, a heading)
            last = sent.start_char + len(sent.text.rstrip())
            if any(start <= sent.start_char and last <= end for start, end in lines):
                continue  # a list entry's line: read above, and no sentence
            # "Q: Did Conrad Hesketh join Ostrander? A: No.": a question states nothing (the
            # parser may run it into its answer)
            asked = max((t.i for t in sent if t.text == "?" and _ends_a_question(t)), default=-1)
            links = [
                link
                for link in reader.read(sent)
                if link.subject != link.object
                and (asked < 0 or getattr(link.anchor, "i", -1) > asked)
                # "- Director of Research: 2010–" read as a sentence: a year holds no office
                and not (
                    is_role(link.predicate) and names.leading_type(link.subject) in VALUE_TYPES
                )
            ]
            timed, ends = read_sentence_times(links, names.by_token)
            found.ends += ends
            named = {names.by_token[t.i] for t in sent if t.i in names.by_token}
            for link, time in timed:
                if time is None and today is not None and _said_today(link.anchor):
                    time = today
                if link.predicate:
                    topic = "" if link.subject in named else "+topic"
                    confidence = CONFIDENCE[link.rule + topic]
                    found.facts.append(
                        ExtractedFact(
                            link.subject, link.predicate, link.object, mention, confidence, time
                        )
                    )
        if self.patterns:
            self._read_patterns(spacy_doc, found)

    def _read_patterns(self, spacy_doc: Any, found: FoundDocument) -> None:
        from spacy.matcher import DependencyMatcher, Matcher

        vocab = spacy_doc.vocab
        if self._matchers is None or self._matchers[0].vocab is not vocab:
            dep, tok = DependencyMatcher(vocab), Matcher(vocab)
            for n, rule in enumerate(self.patterns):
                (dep if rule.kind == "dependency" else tok).add(str(n), [rule.pattern])
            self._matchers = (dep, tok)
        dep, tok = self._matchers

        by_token = found.names.by_token

        def add(subject: str, rule: RelationPattern, obj: str, sent: Any) -> None:
            predicate = normalize_predicate(rule.predicate)
            mention = found.names.mention(sent)
            found.facts.append(
                ExtractedFact(subject, predicate, obj, mention, CONFIDENCE["custom"])
            )

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


def _said_today(verb: Any) -> bool:
    """Whether ``verb`` is said to happen "today" ("The institute today named ...")."""
    return verb is not None and any(c.lower_ == "today" for c in verb.children)


def _lines_apart(nlp: Any, text: str) -> Any:
    """``text``, or where it holds a list or a table, its tokens with a sentence starting at each
    list or table line and at the line after one (the parser keeps sentence starts set before
    it)."""
    starts = sorted({*list_line_starts(text), *table_line_starts(text)})
    if not starts:
        return text
    doc = nlp.make_doc(text)
    by_start = {token.idx: token for token in doc}
    for start in starts:
        token = by_start.get(start)
        if token is not None:
            token.is_sent_start = True
    return doc


def _split_long(
    documents: Sequence[Document], limit: int
) -> Iterator[tuple[str, tuple[int, int], bool]]:
    """Texts for nlp.pipe with (document index, character offset) and whether the document was
    cut: a text over ``limit`` characters is cut at a blank line, else a line break, else after
    a sentence's full stop, else at a space. Titles, headings, markers and datelines are blanked: they frame the
    sentences (see :mod:`noema.ingest.layout`)."""
    for index, doc in enumerate(documents):
        text = blank_layout(doc.text)
        cut_up = len(text) > limit
        start = 0
        while len(text) - start > limit:
            # at a blank line if there is one in the second half: a table or a list under its
            # heading is one block, which a cut at any line break split
            cut = text.rfind("\n\n", start + limit // 2, start + limit) + 1
            if cut <= start:
                cut = text.rfind("\n", start, start + limit)
            if cut <= start:
                cut = text.rfind(". ", start, start + limit) + 1
            if cut <= start:
                cut = text.rfind(" ", start, start + limit)
            if cut <= start:
                cut = start + limit
            yield text[start:cut], (index, start), cut_up
            start = cut
        if text[start:].strip():
            yield text[start:], (index, start), cut_up


def _ends_a_question(mark: Any) -> bool:
    """Whether a "?" ends what is asked: the sentence's last token, or a line's end ("Q: Did
    Conrad Hesketh join Ostrander?\nA: No." parsed as one sentence); not a title's "?" inside a
    sentence ("starred in Who's Afraid of Virginia Woolf? with Richard Burton")."""
    after = mark.doc[mark.i + 1 :][:1]
    return not after or mark.i + 1 >= mark.sent.end or "\n" in mark.whitespace_ + after.text
