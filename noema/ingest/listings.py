"""Entries of a list that pair a name with a period: who held an office, owned a house or
managed a club in turn.

Articles write successions as lists rather than sentences::

    - 2015–2019: Trond Olaussen            (a period, then the names)
    - Sir Edward Bridges (1945–1956)       (a name, then its period in brackets)
    - Guido Münch, 1978–1989               (a name, then its period after a comma)
    - Hanne Birkeli (1910–1986), chemist, 1955 - 1958

The sentence rules read nothing from such a line (a name and a year, no verb), so the name the
question asks for was in the graph with no fact, or not at all: NER misses or cuts names
without a sentence around them ("Baker" of "Newton D. Baker"). A list line of one of these forms
in a document with a topic (its title, see :mod:`noema.ingest.topic`) says that each name it
lists was listed for the topic in that period: an event ``*listed_for (#name,#topic) @period``.
The line itself says no more: the office or the house is in the heading above the list, which
may be another document.

Only lines that start with a list mark are read, and only periods of two ends (or one end and
"present"): a single year beside a name is as often a work's year or a birth as a term. A period
at the end of the line is the entry's; one in brackets beside a name with another at the end,
or with what the person does after it ("(1645–1714), forest scientist"), is the person's life.
An end written "?" is unknown: an entry that starts so ends at its other end, one that ends so
states nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from noema.ingest.confidence import CONFIDENCE
from noema.ingest.entities import ExtractedFact, NameTable
from noema.ingest.kinds import KIND_TYPES
from noema.model.names import clean_name, is_business_suffix
from noema.model.roles import is_role
from noema.model.times import DATE_TEXT, iso_date, period_text

__all__ = [
    "LISTED",
    "ListEntry",
    "entry_facts",
    "line_entries",
    "list_entries",
    "list_line_starts",
    "name_spans",
    "period_of",
    "role_predicates",
    "written_period",
]

LISTED = "listed_for"

_MARK = re.compile(r"^[ \t]*(?:[-*+\u2022\u2013]|\d{1,3}[.)])[ \t]+", re.M)
_OPEN_WORDS = ("present", "now", "today")
_END = rf"(?:{DATE_TEXT}|{'|'.join(_OPEN_WORDS)}|\?)"
_PERIOD = (
    rf"(?P<start>{DATE_TEXT}|\?)\s*(?:[-\u2013\u2014]|\bto\b|\buntil\b|\btill\b)\s*(?P<end>{_END})"
)
# "2015–2019: Trond Olaussen", "1916-1920 - Newton D. Baker"
_PERIOD_FIRST = re.compile(rf"^{_PERIOD}\s*[:\-\u2013\u2014]\s+(?P<names>.+)$", re.I)
# "Guido Münch, 1978–1989", "Hanne Birkeli (1910–1986), chemist, 1955 - 1958"
_PERIOD_LAST = re.compile(
    rf"^(?P<names>[^(),]+?)(?:\s*\([^)]*\))?(?:,\s*[^,()\d]{{1,40}})?,\s*{_PERIOD}\s*\.?$", re.I
)
# "Sir Edward Bridges (1945–1956)", "Alyaksey Baha (4 June 2018 – 19 December 2019), ..."
_PERIOD_BRACKETED = re.compile(rf"^(?P<names>[^(),]+?)\s*\(\s*{_PERIOD}\s*\)", re.I)
# "Lisa Marr, Owen Marr and Petra Quist"; not the comma of "John F. Kennedy, Jr."
_NAME_SEPARATOR = re.compile(r",\s+(?!(?:Jr|Sr)\b)|\s+(?:and|&)\s+|;\s*")
# lowercase words a name may hold: "Palacio de Deportes", "Charles the Fat", "Ludwig van Beethoven"
_NAME_WORDS = frozenset(
    {"de", "del", "della", "di", "da", "das", "do", "dos", "du", "la", "le", "les", "van", "von"}
    | {"der", "den", "ter", "y", "e", "of", "the", "al", "bin", "ibn"}
)
_NAME_MOST_WORDS = 8


# "Key facts" lines that name a role: "Chair: Beatrix Olenska (2021–)", "Treasurer: Hamid
# Qureshi", "Leontyne Farrish: chair, 2014–2021", and on a person's page "Director, Ravelle
# Institute: 2006–2017". A period may be open ("2021–", "since 2021": to the present); a role
# line without one holds still.
_SINCE = (
    rf"(?:since\s+(?P<since>{DATE_TEXT})"
    rf"|(?P<start>{DATE_TEXT})\s*[-\u2013\u2014]\s*(?P<end>{_END})?)"
)
_ROLE_WORDS = r"[A-Za-z][A-Za-z'\u2019 -]{1,40}?"
_ROLE_NAME = re.compile(
    rf"^(?P<role>{_ROLE_WORDS}):\s+(?P<names>[^():,]+?)(?:\s*\(\s*{_SINCE}\s*\))?\s*\.?$"
)
_NAME_ROLE = re.compile(rf"^(?P<names>[^():,]+?):\s+(?P<role>{_ROLE_WORDS}),\s*{_SINCE}\s*\.?$")
# on a person's page, "Head of the Quarrie Laboratory: 2024–present": the topic's role there
# (a body of one word without "the" is part of an office's title: "Chief of Staff", "Director
# of Research", "Minister of Finance"); the name starts with no space, so a line padded with
# spaces is read in one pass
_ROLE_OF = re.compile(
    rf"^(?P<role>{_ROLE_WORDS})\s+of\s+(?:(?P<the>the)\s+)?(?P<names>[^():,\s][^():,]*?):\s*{_SINCE}\s*\.?$"
)
# a role label opening a line: "Owners: "
_LABEL = re.compile(rf"^(?P<role>{_ROLE_WORDS}):\s+")
_ROLE_AT = re.compile(rf"^(?P<role>{_ROLE_WORDS}),\s+(?P<names>[^():,]+?):\s*{_SINCE}\s*\.?$")
# "Born: Tallowmere, 1975", "Employer: Nettlecombe Software (2017–2025)", "Created by: Grete
# Solberg (2007)": a label for a fact of the topic, with a period or a date, or none
_LABELLED = re.compile(
    rf"^(?P<role>{_ROLE_WORDS}):\s+(?P<names>[^():,]+?)(?:\s*\(\s*{_SINCE}\s*\)"
    rf"|\s*\(\s*(?P<at>{DATE_TEXT})\s*\)|,\s*(?P<on>{DATE_TEXT}))?\s*\.?$"
)
# what such a label states, and whether the topic is its subject ("Born": the topic was born
# in the place named) or its object ("Created by": the name created the topic)
_FACT_LABELS = {
    "born": ("born_in", True),
    "based in": ("base_in", True),
    "location": ("locate_in", True),
    "headquarters": ("headquarter_in", True),
    "part of": ("part_of", True),
    "known for": ("know_for", True),
    "near": ("near", True),
    "owns": ("own", True),
    "employer": ("work_for", True),
    "tested at": ("test_at", True),
    "licensed to": ("license_to", True),
    "forked from": ("fork_from", True),
    "ground": ("ground_of", False),
    "former ground": ("ground_of", False),
    "host": ("host", False),
    "created by": ("create", False),
    "developed by": ("develop", False),
    "founded by": ("found", False),
    "made by": ("make", False),
    "run by": ("run", False),
    "owned by": ("own", False),
    "maintained by": ("maintain", False),
    "developer": ("develop", False),
    "latest release": ("version_of", False),
    "first release": ("version_of", False),
}
# what a label's fact says the listed name is: "Born: Tallowmere" a place, "Ground: Glenmoor
# Arena" a built place, "Latest release: Larkspur 3.1" a product
_LISTED_TYPES = {
    "born_in": "GPE",
    "base_in": "GPE",
    "locate_in": "GPE",
    "headquarter_in": "GPE",
    "near": "GPE",
    "ground_of": "LOC",
    "version_of": "PRODUCT",
}
# what a role's label says of its time, not of the role: "Previous head"
_ROLE_TIME_WORDS = frozenset({"previous", "former", "current", "present", "past", "new"})


class ListEntry(NamedTuple):
    """The names one list line lists (their character spans in the text read), its period (an
    ISO interval, ``None`` for a role held with no period given) and the predicate it states of
    each name and the document's topic: ``listed_for``, or a role (``chair_of``) that the name
    holds, or on a person's page (``topic_holds``) that the topic holds at the name."""

    names: tuple[tuple[int, int], ...]
    time: str | None
    period: tuple[int, int]
    line: tuple[int, int]
    predicate: str = LISTED
    topic_holds: bool = False
    # "Harlow Vale: manager, 2022–present" on a person's page: the topic holds the role there
    # (on a club's page "Ines Morland: manager, 2018–2022" is the name's)
    topic_holds_if_person: bool = False


def list_entries(text: str) -> Iterator[ListEntry]:
    """The entries of a name and a period among the list lines of ``text``.

    Example:
        >>> text = "Mayors:\\n- 2015–2019: Trond Olaussen\\n- Sir Edward Bridges (1945–1956)"
        >>> [([text[a:b] for a, b in e.names], e.time) for e in list_entries(text)]
        [(['Trond Olaussen'], '2015/2019'), (['Sir Edward Bridges'], '1945/1956')]
    """
    for mark in _MARK.finditer(text):
        start = mark.end()
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        yield from line_entries(text[start:end], start, (mark.start(), end))


def line_entries(line: str, at: int, whole: tuple[int, int]) -> list[ListEntry]:
    """The entries of one list line after its mark (its text starts at ``at`` in the text read,
    the whole line spans ``whole``): its roles, else its label, else a name and a period.

    Example:
        >>> [(e.predicate, e.time) for e in line_entries("Chair: Beatrix Olenska (2021–)", 0, (0, 30))]
        [('chair_of', '2021/..')]
    """
    roles = list(_role_entries(line, at, whole))
    entry = None if roles else _entry(line, at, whole)
    return roles if entry is None else [entry]


def list_line_starts(text: str) -> list[int]:
    """Where each list line of ``text`` starts (its mark), and the line after each: sentences
    start there. The parser ran a list line into the sentence before it ("... a historic house
    in Washington .\\n- 1794-1796 - Thomas Beall"), so the rules read "1796" as a role of the
    house.

    Example:
        >>> list_line_starts("Owners:\\n- 1794-1796 - Thomas Beall\\nIt was sold.")
        [8, 35]
    """
    starts: set[int] = set()
    for mark in _MARK.finditer(text):
        starts.add(mark.start() + len(mark.group()) - len(mark.group().lstrip(" \t")))
        end = text.find("\n", mark.end())
        if end >= 0:
            after = len(text) - len(text[end:].lstrip())
            if after < len(text):
                starts.add(after)
    return sorted(starts)


def _entry(line: str, at: int, whole: tuple[int, int]) -> ListEntry | None:
    """The entry of one list line (whose text starts at ``at``), or ``None``."""
    line = line.rstrip()
    for form in (_PERIOD_FIRST, _PERIOD_LAST, _PERIOD_BRACKETED):
        match = form.match(line)
        if match is None:
            continue
        time = period_of(match.group("start"), match.group("end"))
        if time is None or (form is _PERIOD_BRACKETED and _trade_after(line, match.end())):
            # "Hans Carl von Carlowitz (1645–1714), forest scientist": a life, not a term
            return None
        names = tuple(name_spans(line, match.start("names"), match.end("names"), at))
        period = (at + match.start("start"), at + match.end("end"))
        return ListEntry(names, time, period, whole) if names else None
    return None


def _role_entries(line: str, at: int, whole: tuple[int, int]) -> Iterator[ListEntry]:
    """The entries of a list line that names a role (one per role: "Founder and chief
    executive, Pellmar Biologics: 2013–" gives two)."""
    line = line.rstrip()
    for form in (_ROLE_NAME, _NAME_ROLE, _ROLE_AT, _ROLE_OF):
        match = form.match(line)
        if match is None:
            continue
        predicates = role_predicates(match.group("role"))
        if form is _ROLE_OF and match["the"] is None and " " not in match["names"].strip():
            continue
        names = tuple(name_spans(line, match.start("names"), match.end("names"), at))
        written = _written_period(match)
        if not predicates or not names or (form is not _ROLE_NAME and written is None):
            continue
        time, period = None, (at + match.end("names"), at + match.end("names"))
        if written is not None:
            time, period = period_of(*written[0]), (at + written[1], at + match.end())
            if time is None:
                return
        for predicate in predicates:
            yield ListEntry(
                names,
                time,
                period,
                whole,
                predicate,
                form in (_ROLE_AT, _ROLE_OF),
                form is _NAME_ROLE,
            )
        return
    many = list(_many_entries(line, at, whole))
    yield from many if many else _labelled_entries(line, at, whole)


def _many_entries(line: str, at: int, whole: tuple[int, int]) -> Iterator[ListEntry]:
    """The entries of a role line whose label in the plural lists several holders, each with
    its own period or none ("Owners: Marlin Holdings (2010–2016), Velmont Group (2016–)"): one
    per holder, or none when any part is not a name with a period. A comma before "Inc." or
    "Jr." stays inside the name; a label in the singular ("Chair: Beatrix Olenska, OBE") lists
    one holder and is read by the other forms."""
    label = _LABEL.match(line)
    if label is None or _singular(label["role"].split()[-1]) == label["role"].split()[-1]:
        return
    predicates = role_predicates(label["role"])
    if not predicates:
        return
    parts: list[tuple[int, int]] = []
    start, depth = label.end(), 0
    for n, char in enumerate(line[label.end() :], label.end()):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and char in ",;":
            parts.append((start, n))
            start = n + 1
    parts.append((start, len(line.rstrip(" ."))))
    joined: list[tuple[int, int]] = []
    for first, last in parts:  # "Marlin Holdings, Inc. (2010–2016)" is one holder
        bare = line[first:last].split("(")[0].strip(" .")
        if joined and (is_business_suffix(bare) or bare in ("Jr", "Sr")):
            joined[-1] = (joined[-1][0], last)
        else:
            joined.append((first, last))
    if len(joined) < 2:
        return
    entries = []
    for first, last in joined:
        item = _holder_item(line, first, last)
        if item is None:
            return
        (names_at, names_end), time, period = item
        names: tuple[tuple[int, int], ...]
        if "," in line[names_at:names_end]:  # "Marlin Holdings, Inc.": one name, joined above
            whole_name = _is_name(line[names_at:names_end].strip(" ."))
            names = ((at + names_at, at + names_end),) if whole_name else ()
        else:
            names = tuple(name_spans(line, names_at, names_end, at))
        if not names:
            return
        period = period if period is not None else (names_end, names_end)
        entries += [
            ListEntry(names, time, (at + period[0], at + period[1]), whole, p) for p in predicates
        ]
    yield from entries


def _holder_item(
    line: str, first: int, last: int
) -> tuple[tuple[int, int], str | None, tuple[int, int] | None] | None:
    """One holder of a role line, ``line[first:last]``: the span of its names, its period and
    the period's span (``None`` without one), or ``None`` when it is no name with a period.
    Read without a regular expression over the whole part, which a long run of spaces made
    take minutes."""
    text = line[first:last]
    a = first + len(text) - len(text.lstrip())
    b = first + len(text.rstrip())
    time, period, names_end = None, None, b
    if b > a and line[b - 1] == ")":
        opening = line.rfind("(", a, b)
        inner = line[opening + 1 : b - 1] if opening >= 0 else ""
        match = _WHOLE_PERIOD.match(inner.strip())
        written = _written_period(match) if match is not None else None
        if written is None:
            return None
        time = period_of(*written[0])
        if time is None:
            return None
        period, names_end = (opening, b), opening
    names_end = a + len(line[a:names_end].rstrip())
    if names_end <= a or any(c in "():;" for c in line[a:names_end]):
        return None
    return (a, names_end), time, period


def _labelled_entries(line: str, at: int, whole: tuple[int, int]) -> Iterator[ListEntry]:
    """The entry of a list line whose label says a fact of the topic ("Born: Tallowmere,
    1975"), if any."""
    match = _LABELLED.match(line)
    label = match and _FACT_LABELS.get(" ".join(match.group("role").lower().split()))
    if match is None or not label:
        return
    names = tuple(name_spans(line, match.start("names"), match.end("names"), at))
    when = next((g for g in ("at", "on") if match[g] is not None), None)
    written = _written_period(match)
    if written is not None:
        time, period = period_of(*written[0]), (at + written[1], at + match.end())
    elif when is not None:
        time, period = iso_date(match[when]), (at + match.start(when), at + match.end(when))
    else:
        time, period = None, (at + match.end("names"), at + match.end("names"))
    if names and (time is not None or written is None):
        yield ListEntry(names, time, period, whole, label[0], label[1])


def _written_period(match: re.Match[str]) -> tuple[tuple[str, str], int] | None:
    """The two ends a role line's period writes ("2021–2025"; "2021–" and "since 2021" end in
    the present) and where it starts in the line, or ``None`` when it writes none."""
    if match["since"] is not None:
        return (match["since"], _OPEN_WORDS[0]), match.start("since")
    if match["start"] is not None:
        return (match["start"], match["end"] or _OPEN_WORDS[0]), match.start("start")
    return None


_WHOLE_PERIOD = re.compile(rf"^\s*{_SINCE}\s*$", re.I)


def written_period(text: str) -> str | None:
    """The ISO period ``text`` writes and nothing else ("2015–2019", "2021–" and "since 2021"
    to the present), or ``None``.

    Example:
        >>> written_period("2015–2019"), written_period(" 2021– "), written_period("2012")
        ('2015/2019', '2021/..', None)
    """
    match = _WHOLE_PERIOD.match(text)
    written = _written_period(match) if match is not None else None
    return period_of(*written[0]) if written is not None else None


def role_predicates(label: str) -> list[str]:
    """The predicates of a list label that names roles ("Previous head" -> ``head_of``,
    "Founder and chief executive" -> ``founder_of``, ``chief_executive_of``), or none when the
    label is no role ("Born", "Ground", nor a verb that says what the topic does: "Owns",
    "Run by")."""
    if " ".join(label.lower().split()) in _FACT_LABELS:
        return []
    predicates = []
    for role in re.split(r"\s+(?:and|&)\s+|\s*/\s*", label.strip().lower()):
        words = [w for w in re.findall(r"[a-z]+", role) if w not in _ROLE_TIME_WORDS]
        if not words:
            return []
        for last in dict.fromkeys((_singular(words[-1]), words[-1])):  # "Owners", "Head coaches"
            predicate = "_".join([*words[:-1], last, "of"])
            if is_role(predicate) or _held_by_people(last):
                predicates.append(predicate)
                break
        else:
            return []
    return predicates


def _singular(word: str) -> str:
    """The singular of a plural noun of a role's label or heading ("coaches", "secretaries",
    "managers"); other words as they are. Only for role words: "series" and "news" come out
    wrong.

    Example:
        >>> _singular("coaches"), _singular("secretaries"), _singular("owners"), _singular("press")
        ('coach', 'secretary', 'owner', 'press')
    """
    lower = word.lower()
    if lower.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if lower.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if lower.endswith("s") and not lower.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


# positions a list names whose words are not offices: "Founder", "Researcher", "Treasurer"
_HELD = frozenset({"founder", "cofounder", "researcher", "treasurer", "maintainer", "player"})


def _held_by_people(word: str) -> bool:
    """Whether a role's last word is a person's position ("manager", "maintainer")."""
    return KIND_TYPES.get(word) == "PERSON" or word in _HELD


def _trade_after(line: str, at: int) -> bool:
    """Whether ``line`` goes on from ``at`` with what a person does (", forest scientist",
    ", pianist and composer"): a person kind noun ends its first part."""
    rest = line[at:].strip()
    if not rest.startswith(","):
        return False
    words = re.findall(r"[a-z]+", rest[1:].split(",")[0].lower())
    return any(KIND_TYPES.get(word.removesuffix("s")) == "PERSON" for word in words)


def period_of(start: str, end: str) -> str | None:
    """The ISO period of two written ends; ``None`` where the end is unknown ("?"), either is no
    date, or the end comes first.

    Example:
        >>> period_of("?", "1827"), period_of("1796", "?"), period_of("2019", "present")
        ('../1827', None, '2019/..')
    """
    first = None if start == "?" else iso_date(start)
    last = None if end.lower() in _OPEN_WORDS else iso_date(end)
    if (
        end == "?"
        or (first is None and start != "?")
        or (last is None and end.lower() not in _OPEN_WORDS)
    ):
        return None
    if first is not None and last is not None and last[:4] < first[:4]:
        return None
    return period_text(first, last)


def name_spans(line: str, start: int, end: int, at: int) -> Iterator[tuple[int, int]]:
    """The spans of the names in ``line[start:end]``, in order, up to the first part that is no
    name ("David Orrin, who restored the roof" lists David Orrin)."""
    cut = line.find("(", start, end)
    end = cut if cut >= 0 else end
    position = start
    for separator in [*_NAME_SEPARATOR.finditer(line, start, end), None]:
        stop = end if separator is None else separator.start()
        part = line[position:stop]
        stripped = part.strip(" .")
        if not _is_name(stripped):
            return
        first = position + part.index(stripped)
        yield at + first, at + first + len(stripped)
        if separator is None:
            return
        position = separator.end()


def _is_name(text: str) -> bool:
    """Whether ``text`` reads as a proper name: capitalized words (and the small words names
    hold), not too many, not a date."""
    words = text.split()
    if not words or len(words) > _NAME_MOST_WORDS or not words[0][:1].isupper() or ":" in text:
        return False
    if iso_date(text) is not None or not any(c.isalpha() for c in text):
        return False
    return all(w[:1].isupper() or w.lower() in _NAME_WORDS for w in words)


def entry_facts(
    spacy_doc: Any,
    names: NameTable,
    topic: str | None,
    entries: Iterable[ListEntry] | None = None,
    topic_is_person: bool = False,
) -> tuple[list[ExtractedFact], list[tuple[int, int]]]:
    """The facts the list entries of a parsed piece state, and the character spans of the lines
    they come from (whose sentences the rules leave alone: what they read there takes the period
    for a name, "1943–1951 interim_minister_in April 1946").

    Each listed name is filed over whatever NER found inside it ("Baker" of "Newton D. Baker"),
    and the names NER found in the period are dropped. ``entries`` are the text's list entries
    unless given (a table's rows are entries too: :mod:`noema.ingest.tables`);
    ``topic_is_person`` says the document is about a person, whose "Club: manager, 2022–" is a
    role the person holds.
    """
    if topic is None:
        return [], []
    facts: list[ExtractedFact] = []
    lines: list[tuple[int, int]] = []
    for entry in list_entries(spacy_doc.text) if entries is None else entries:
        if topic_is_person and entry.topic_holds_if_person:
            entry = entry._replace(topic_holds=True)
        line = spacy_doc.char_span(*entry.line, alignment_mode="expand")
        period = spacy_doc.char_span(*entry.period, alignment_mode="expand")
        if line is None or period is None or not len(line):
            continue
        names.give_up(period, keep=topic)
        mention = names.sentence(line)
        for at in entry.names:
            label = _LISTED_TYPES.get(entry.predicate) or _holder_type(entry)
            name = _file_name(spacy_doc, names, at, topic, label)
            if name is not None and name != topic:
                ends = (topic, name) if entry.topic_holds else (name, topic)
                facts.append(
                    ExtractedFact(
                        ends[0], entry.predicate, ends[1], mention, CONFIDENCE["list"], entry.time
                    )
                )
        lines.append(entry.line)
    return facts, lines


def _holder_type(entry: ListEntry) -> str | None:
    """``PERSON`` for the holder of a role a person holds ("Manager: Ines Morland": NER took her
    for a place), else ``None`` (an owner may be a company)."""
    if entry.topic_holds or entry.predicate == LISTED:
        return None
    return "PERSON" if _held_by_people(entry.predicate.removesuffix("_of").split("_")[-1]) else None


def _file_name(
    spacy_doc: Any, names: NameTable, at: tuple[int, int], topic: str, label: str | None
) -> str | None:
    """File the name written at character span ``at`` with the type NER gave a name covering
    most of it (no type when NER saw only a piece of it) and the type its line's ``label``
    says, and return it."""
    span = spacy_doc.char_span(*at, alignment_mode="expand")
    name = clean_name(spacy_doc.text[at[0] : at[1]])
    if span is None or not name:
        return None
    inner = {names.by_token[t.i] for t in span if t.i in names.by_token}
    covering = [n for n in inner if len(n) * 2 >= len(name)]
    type_ = names.leading_type(covering[0]) if len(covering) == 1 else None
    names.take_over(span, name, type_, keep=topic, listed=True, label=label)
    return name
