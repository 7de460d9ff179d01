"""When a fact holds, as its sentence says: the time a clause ties to what the rules read.

A fact the rules of :mod:`noema.ingest.rules` read from a verb or a role noun takes the time its
own clause states: a date on the verb, its object or its complement ("in 2004", "on 19 August
2004", "from 2010 to 2019", "between 2004 and 2007", "since 1998", "until 2019", "before 1811",
"after 1990"), as an ISO 8601 date or interval (:mod:`noema.model.times`). Only the clause's own
prepositions count: a date inside a relative clause, a participle or another verb ("Born in 1950,
she joined Acme in 1980") belongs to that clause, so the walk stops at clause boundaries.

"before 1811" ends before 1811 begins (``../1810``), "after 1990" starts after 1990 ends
(``1991/..``); "became the CEO in 2010" holds from 2010 on (``2010/..``). A succession closes
the tenure it ends: "X was CEO of Y until 2019, when Z took over" gives X ``../2019`` and Z the
same role from 2019 (``2019/..``); "Z succeeded X as CEO of Y in 2019" (or "X was replaced by Z
as ...") gives Z ``2019/..`` and ends X's open fact of that role in the batch of documents (see
:func:`close_tenures`). "the former CEO", "formerly the CEO", "the ex-CEO" bound a fact in time
without a year: the predicate says ``former_ceo_of`` and no year is made up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from noema.ingest._tenures import close_tenures
from noema.ingest._tokens import lemma, place_clause, role_phrase, said_then
from noema.ingest.dates import relative_years, since_then
from noema.ingest.entities import FactEnd
from noema.ingest.rules import Link
from noema.model.times import OPEN, iso_date, period_text, read_period, time_phrase

__all__ = ["ClauseTime", "clause_time", "close_tenures", "read_sentence_times"]

# dependency labels that open another clause: a date under one of them is that clause's
_CLAUSES = frozenset(
    {"relcl", "acl", "advcl", "ccomp", "xcomp", "conj", "appos", "parataxis", "pcomp", "csubj"}
)
# how deep below the verb a time may hang: "was [the CEO] of [Veltrix] from 2010" is three
_DEPTH = 3
_POINT_WORDS = frozenset({"in", "on", "during"})
_TIME_WORDS = _POINT_WORDS | {"from", "between", "since", "until", "till", "before", "after"}
# what joins the two ends of a period written in one phrase
_JOIN_WORDS = frozenset({"to", "until", "till", "through", "and"})
_JOINS = re.compile(r"\s+(?:to|until|till|through|and)\s+|\s*[\u2013\u2014-]\s*(?=\d)", re.I)
# verbs whose subject takes the role of their object from the time on
_SUCCEEDING = frozenset({"succeed", "replace"})
# verbs whose subject's roles at their object end at their time: "left Acme in 2021"
_LEAVING = frozenset({"leave", "quit", "resign", "retire", "depart"})
# "stepped down as", "stood down as": leaving with "down"
_STEPPING = frozenset({"step", "stand"})
# a state that begins at its time rather than holding only then: "became the CEO in 2010"
_BEGINNING = frozenset({"become"})
# verbs that give their patient a role from their time on: "was elected mayor in 2019"
_GIVING_ROLES = frozenset({"elect", "appoint", "name", "make", "crown", "install", "hire"})
# verbs whose agent takes something from their time on: "bought by the Society, which still
# owns the house", "replaced by Sofia Lind, who still coaches the team"
_TAKING = _SUCCEEDING | frozenset(
    {"buy", "purchase", "acquire", "take", "appoint", "name", "elect", "hire", "sign", "join"}
)


@dataclass(frozen=True, slots=True)
class ClauseTime:
    """A clause's time as ISO text, and the tokens that state it."""

    text: str
    tokens: frozenset[int]


def clause_time(anchor: Any) -> ClauseTime | None:
    """The time the clause of ``anchor`` (a verb or role noun) states, or ``None`` when it states
    none or two that disagree ("in 2004 ... in 2006")."""
    starts: set[str] = set()
    ends: set[str] = set()
    points: set[str] = set()
    tokens: set[int] = set()
    phrases = list(_time_phrases(anchor))
    opened = any(word == "from" for word, _ in phrases)
    relative = relative_years(anchor.doc) if phrases else {}
    for word, words in phrases:
        if word == "to" and not opened:
            continue  # "moved to 2019"? only "from X ... to Y" makes "to" an end
        # "the following year": the year it stands for after the one written before it
        text = relative.get(words[-1].i, words.text)
        if word == "after" and words[0].i in relative and words[0].ent_type_ == "DATE":
            # "After two seasons out with an injury, he signed": the span already counts on
            # from the year before it, to the year he signed (not after that year)
            word, text = "in", relative[words[0].i]
        read = _read_phrase(word, text)
        if read is None:
            continue
        start, end, point = read
        starts.update([start] if start else [])
        ends.update([end] if end else [])
        points.update([point] if point else [])
        tokens.update(t.i for t in words)
    if len(starts) > 1 or len(ends) > 1 or len(points) > 1:
        return None
    if starts or ends:
        text = period_text(next(iter(starts), None), next(iter(ends), None))
    elif points:
        point = next(iter(points))
        text = f"{point}/{OPEN}" if _begins(anchor) else point
    else:
        return _then_time(anchor)
    if text is None or read_period(text) is None:  # an end before its start
        return None
    return ClauseTime(text, frozenset(tokens))


def _then_time(verb: Any) -> ClauseTime | None:
    """ "He played for FC Dravona between 2004 and 2008, then moved to Port Celen": a verb that
    comes "then", after one whose period ended, happened when it ended (``2008``)."""
    if (
        verb.pos_ not in ("VERB", "AUX")
        or verb.dep_ not in ("conj", "dep")
        or verb.head.pos_ not in ("VERB", "AUX")
        or not said_then(verb)
    ):
        return None
    before = clause_time(verb.head)
    end = before.text.partition("/")[2] if before is not None else ""
    return ClauseTime(end, before.tokens) if before is not None and end not in ("", OPEN) else None


def _begins(anchor: Any) -> bool:
    return anchor.pos_ in ("VERB", "AUX") and lemma(anchor) in _BEGINNING


def _time_phrases(anchor: Any) -> Iterable[tuple[str, Any]]:
    """Each time preposition of the clause with the words of its phrase (the preposition's own
    subtree without the clauses hanging from it: "until 2019, when Z took over"), each date
    said without one ("The following year he became ...", "two years later"), as "in", and a
    "since" with no object ("has been the capital ever since")."""
    stack = [(anchor, 0)]
    while stack:
        node, depth = stack.pop()
        for child in node.children:
            if child.dep_ == "prep" and child.lower_ in _TIME_WORDS | {"to"}:
                words = _phrase_words(child)
                # "to" is a time word only before a date ("from 2010 to 2019", the parser
                # hanging "to 2019" on the verb); "to Antioch" is read on as any phrase
                if words is not None and (child.lower_ != "to" or iso_date(words.text)):
                    yield child.lower_, words
                    continue
            if (
                node is anchor
                and child.dep_ in ("npadvmod", "advmod")
                and child.ent_type_ == "DATE"
            ):
                bare = _date_around(child)
                if bare is not None:
                    yield "in", bare
                    continue
            if node is anchor and child.lower_ == "since" and _since_then(child) is not None:
                # "ever since", "since then": the year they stand for is read with the
                # relative dates
                yield "since", _since_then(child)
                continue
            if depth >= _DEPTH:
                continue
            if child.dep_ in ("prep", "agent"):
                stack.extend((g, depth + 1) for g in child.children if g.dep_ == "pobj")
            elif child.dep_ in ("dobj", "obj", "attr") or (
                # "The editor of the Gazette since 2018 is Nora Quist": the role's own time
                node is anchor
                and child.dep_ == "nsubj"
                and child.pos_ == "NOUN"
                and lemma(anchor) == "be"
                and any(c.dep_ == "attr" and c.pos_ == "PROPN" for c in anchor.children)
            ):
                stack.append((child, depth + 1))


def _since_then(since: Any) -> Any:
    """The word of "since then" or "ever since" that stands for a year (a one-token span, see
    :func:`noema.ingest.dates.since_then`), or ``None``."""
    word = next((c for c in since.children if c.lower_ == "then"), since)
    return since.doc[word.i : word.i + 1] if since_then(word) else None


def _date_around(token: Any) -> Any:
    """The DATE entity ``token`` belongs to, when ``token`` is its head word; else ``None``."""
    ent = _entity_of(token)
    return ent if ent is not None and ent.label_ == "DATE" and ent.root.i == token.i else None


def _entity_of(token: Any) -> Any:
    """The entity span ``token`` belongs to, or ``None``."""
    return next((ent for ent in token.doc.ents if ent.start <= token.i < ent.end), None)


def _phrase_words(prep: Any) -> Any:
    """The words after ``prep`` in its phrase as a span, without the clauses hanging from it
    ("until 2019, when Z took over"); ``None`` when what is left is not one run of words."""
    cut: set[int] = set()
    for token in prep.subtree:
        if token.i in cut or token.i == prep.i:
            continue
        # "between 2004 and 2007": the second year is the first one's conjunct, kept
        if token.dep_ in _CLAUSES and not (token.dep_ == "conj" and token.head.dep_ == "pobj"):
            cut.update(t.i for t in token.subtree)
    words = [t for t in prep.subtree if t.i > prep.i and t.i not in cut]
    while words and words[-1].is_punct:
        words.pop()
    if not words or any(t.i != words[0].i + n for n, t in enumerate(words)):
        return None
    return prep.doc[words[0].i : words[-1].i + 1]


def _read_phrase(word: str, text: str) -> tuple[str | None, str | None, str | None] | None:
    """(start, end, point) a time phrase gives after preposition ``word``, or ``None``."""
    read = [iso_date(part) for part in _JOINS.split(text)]
    parts = [part for part in read if part is not None]
    if not parts or len(parts) < len(read) or len(parts) > 2:
        return None  # a word that is not a date ("the 1990s", "the war"): no time
    first, last = parts[0], parts[-1]
    if len(parts) == 2:
        return (first, last, None) if word in ("from", "between", *_POINT_WORDS) else None
    if word == "between":
        return None
    if word == "from" or word == "since":
        return first, None, None
    if word in ("until", "till", "to"):
        return None, first, None
    if word == "before":
        return None, _step(first, -1), None
    if word == "after":
        return _step(first, 1), None, None
    return None, None, first


def _step(iso: str, by: int) -> str:
    """The date one unit of ``iso``'s own precision before or after it."""
    parts = [int(p) for p in iso.split("-")]
    if len(parts) == 1:
        return f"{parts[0] + by:04d}"
    if len(parts) == 2:
        months = parts[0] * 12 + parts[1] - 1 + by
        return f"{months // 12:04d}-{months % 12 + 1:02d}"
    return (date(*parts) + timedelta(days=by)).isoformat()


def _when_time(verb: Any) -> str | None:
    """ "until 2019, when Z took over": the date the "when" clause hangs on, as a point."""
    if not any(c.lower_ == "when" and c.dep_ == "advmod" for c in verb.children):
        return None
    head = verb.head
    if verb.dep_ == "relcl" and head.like_num:
        return iso_date(_entity_text(head))
    if verb.dep_ == "advcl":
        found = clause_time(head)
        if found is None:
            return None
        # "until 2019 when ...": the end; "became the CEO in 2010 when ...": the start
        start, _, end = found.text.partition("/")
        point = found.text if not end else (end if end != OPEN else start)
        return point if point not in ("", OPEN) and read_period(point) is not None else None
    return None


def _still_time(verb: Any) -> ClauseTime | None:
    """ "In 2012 he was replaced by Sofia Lind, who still coaches the team": a clause that
    "still" holds, hung on a name of a clause with a date, holds from that date on (``2012/..``);
    a verb joined to it by "and" ("still owns the house and opens it") the same."""
    if verb.dep_ == "conj" and not any(c.dep_ in ("nsubj", "nsubjpass") for c in verb.children):
        verb = verb.head
    if verb.dep_ != "relcl" or not any(c.lower_ == "still" for c in verb.children):
        return None
    outer = verb.head
    while outer.pos_ not in ("VERB", "AUX") and outer.head.i != outer.i:
        outer = outer.head
    if outer.pos_ not in ("VERB", "AUX") or lemma(outer) not in _TAKING:
        # "In 2005 she married John Smith, who still plays for FC Dravona": the marriage's
        # date says nothing of when he began to play
        return None
    found = clause_time(outer)
    if found is not None and "/" not in found.text:
        return ClauseTime(f"{found.text}/{OPEN}", found.tokens)
    point = _when_time(outer)
    return ClauseTime(f"{point}/{OPEN}", frozenset()) if point is not None else None


def _entity_text(token: Any) -> str:
    ent = _entity_of(token)
    return str((ent if ent is not None else token).text)


def read_sentence_times(
    links: Sequence[Link], by_token: Mapping[int, str]
) -> tuple[list[tuple[Link, str | None]], list[FactEnd]]:
    """Each fact of a sentence with its time (``None``: it stays a relation), the facts its
    successions give the successor, and the tenures they end (see :func:`close_tenures`)."""
    cache: dict[int, ClauseTime | None] = {}
    timed = [_given_up(link, _link_time(link, cache, by_token)) for link in map(_former, links)]
    extra: list[tuple[Link, str | None]] = []
    ends: list[FactEnd] = []
    for link, time in timed:
        if time is None or "/" in time:
            continue
        if link.rule == "succession" and link.predicate == "succeed":
            # "X was CEO of Y until 2019, when Z took over": Z holds what X's facts ended then
            for held, until in timed:
                if held.subject == link.object and until and until.endswith(f"/{time}"):
                    successor = held._replace(subject=link.subject, rule="succession")
                    extra.append((successor, f"{time}/{OPEN}"))
        elif link.rule == "svo" and lemma(link.anchor) in _LEAVING:
            # "X left Y in 2021": X's roles at Y end then ("resigned as CEO of Y": that one)
            role = _role_taken(link.anchor, by_token)
            if role is None:
                ends.append(FactEnd(link.subject, None, link.object, time))
            else:
                ends.append(FactEnd(link.subject, role[0], role[1] or link.object, time))
        elif link.rule == "svo" and lemma(link.anchor) in _SUCCEEDING:
            role = _role_taken(link.anchor, by_token)
            if role is None:
                # "Z replaced X in 2012": which of X's facts ended is not said; those Z holds
                # too (see close_tenures)
                ends.append(FactEnd(link.object, None, None, time, successor=link.subject))
                continue
            predicate, target = role
            ends.append(FactEnd(link.object, predicate, target, time))
            if target is not None:
                taken = Link(link.subject, predicate, target, "succession", link.anchor)
                extra.append((taken, f"{time}/{OPEN}"))
    timed = [item for item in timed if not _restated(item, timed)]
    return timed + [item for item in extra if item not in timed], ends


def _restated(item: tuple[Link, str | None], timed: Sequence[tuple[Link, str | None]]) -> bool:
    """Whether ``item`` is a relation to a date that an event of the same verb (or any event,
    for a sentence's topic link) and end states as its time, in the same words ("Nvidia
    acquired Mellanox in 2020": ``-acquire_in-> 2020`` beside ``*acquire (Nvidia, Mellanox)
    @2020``; ``-rule_to-> 1761 to 1798`` beside ``@1761/1798``, said "from 1761 to 1798"). A
    date written otherwise ("August 19, 2004" against ``@2004-08-19``) stays, as a "when"
    answer matches the text's own words."""
    link, time = item
    if time is not None or (link.anchor is None and link.rule != "sentence"):
        return False
    words = set(re.findall(r"\w+", link.object.lower())) - _TIME_WORDS - _JOIN_WORDS
    return bool(words) and any(
        when is not None
        and (link.anchor is None or (other.anchor is not None and other.anchor.i == link.anchor.i))
        # a topic link is a guess at what the date is about: any fact of the sentence whose
        # time the date is says it better ("... opened his own studio a year later")
        and (link.rule == "sentence" or link.subject in (other.subject, other.object))
        and words <= set(re.findall(r"\w+", time_phrase(when).lower()))
        for other, when in timed
    )


def _link_time(
    link: Link, cache: dict[int, ClauseTime | None], by_token: Mapping[int, str]
) -> str | None:
    # the topic links of a sentence are guesses at a low confidence; a time would make them
    # look like stated facts
    if link.anchor is None or link.rule == "sentence":
        return None
    if link.rule == "succession":
        when = _when_time(link.anchor)
        if when is not None:
            return when
    if link.anchor.i not in cache:
        cache[link.anchor.i] = clause_time(link.anchor)
    found = cache[link.anchor.i]
    if link.rule == "prep" and place_clause(link.anchor):
        found = _from_outer(found, link.anchor, cache)
    if found is None and link.anchor.pos_ in ("VERB", "AUX"):
        # "until 1951, when it was bought by the Society": bought then; "replaced by Sofia
        # Lind in 2012, who still coaches the team": coaches from then on
        when = _when_time(link.anchor)
        found = ClauseTime(when, frozenset()) if when is not None else _still_time(link.anchor)
    if found is None and link.anchor.dep_ == "conj" and lemma(link.anchor) in _SUCCEEDING:
        # "Marr left Brenner in 2020 and was replaced by Tomas Reyes": replaced then
        outer = clause_time(link.anchor.head)
        found = outer if outer is not None and "/" not in outer.text else None
    if found is None:
        return None
    stated = {by_token.get(i) for i in found.tokens}
    if link.subject in stated or link.object in stated:
        # "founded in 1779": the date is an end of the fact, which states its time itself, as
        # written (a "when" answer matches "August 19, 2004", not "2004-08-19")
        return None
    if link.rule == "role" and lemma(link.anchor) in _GIVING_ROLES and "/" not in found.text:
        # "was elected mayor of Pennick in 2019": mayor from 2019 on
        return f"{found.text}/{OPEN}"
    return found.text


def _from_outer(
    own: ClauseTime | None, verb: Any, cache: dict[int, ClauseTime | None]
) -> ClauseTime | None:
    """A clause of place holds from the time of the clause it hangs on when it does not say
    when it began: "joined Ostrava in 2004, where she heads the division" from 2004 on, "moved to
    Port Celen in 2008, where he stayed until 2013" from 2008 to 2013."""
    if own is not None and "/" not in own.text:
        return own  # "where she died in 2010": a point of its own
    outer_verb = verb.head
    # spaCy makes a new token object on each access: compare positions, not objects
    while outer_verb.pos_ not in ("VERB", "AUX") and outer_verb.head.i != outer_verb.i:
        outer_verb = outer_verb.head
    if outer_verb.i not in cache:
        cache[outer_verb.i] = clause_time(outer_verb)
    outer = cache[outer_verb.i]
    if outer is None or "/" in outer.text:
        return own
    start, _, end = own.text.partition("/") if own is not None else ("", "", OPEN)
    if start not in ("", OPEN):
        return own
    text = period_text(outer.text, None if end == OPEN else end)
    if text is None or read_period(text) is None:
        return own
    return ClauseTime(text, (own.tokens if own is not None else frozenset()) | outer.tokens)


def _given_up(link: Link, time: str | None) -> tuple[Link, str | None]:
    """A role read from a clause that gives it up ("resigned as chair of Y in 2019", "has
    stepped down as manager of Y", "left his post as coach of Y") held until the clause's time,
    or, with none, is a former one: stated as the clause's point, it was a current role taken
    then."""
    verb = link.anchor
    if link.rule != "role" or verb is None or link.predicate.startswith("former_"):
        return link, time
    down = any(c.lower_ == "down" and c.dep_ in ("prt", "advmod") for c in verb.children)
    if not (lemma(verb) in _LEAVING or (down and lemma(verb) in _STEPPING)):
        return link, time
    if verb.dep_ == "xcomp" or any(c.dep_ == "aux" and c.tag_ == "MD" for c in verb.children):
        return link, time  # "will step down as", "plans to resign as": not given up yet
    if time is None:
        return link._replace(predicate=f"former_{link.predicate}"), None
    return link, time if "/" in time else f"{OPEN}/{time}"


def _former(link: Link) -> Link:
    """ "formerly the CEO of Y", "the ex-CEO of Y": a role that has ended, with no year."""
    if link.rule not in ("copula", "role") or link.predicate.startswith("former_"):
        return link
    anchor = link.anchor
    nodes = [anchor, *(c for c in anchor.children if c.dep_ == "attr")]
    doc = anchor.doc
    for node in nodes:
        formerly = any(c.dep_ == "advmod" and c.lower_ == "formerly" for c in node.children)
        ex = node.lower_.startswith("ex-") or (
            node.i >= 2 and doc[node.i - 1].text == "-" and doc[node.i - 2].lower_ == "ex"
        )
        if formerly or ex:
            return link._replace(predicate=f"former_{link.predicate}")
    return link


def _role_taken(verb: Any, by_token: Mapping[int, str]) -> tuple[str, str | None] | None:
    """ "succeeded X as CEO of Y", "was replaced by Z as CEO of Y": the role's predicate and
    what it is of (``None`` when the sentence does not say)."""
    nodes = [verb]
    for child in verb.children:
        if child.dep_ in ("dobj", "obj", "agent"):
            nodes += [child, *(g for g in child.children if g.dep_ == "pobj")]
    for node in nodes:
        for prep in node.children:
            if prep.dep_ != "prep" or prep.lower_ != "as":
                continue
            for noun in prep.children:
                if noun.dep_ != "pobj":
                    continue
                targets = [
                    by_token[c.i] for c in noun.children if c.dep_ == "poss" and c.i in by_token
                ]
                targets += [
                    by_token[g.i]
                    for p in noun.children
                    if p.dep_ == "prep" and p.lower_ == "of"
                    for g in p.children
                    if g.dep_ == "pobj" and g.i in by_token
                ]
                return f"{role_phrase(noun)}_of", (targets[0] if targets else None)
    return None
