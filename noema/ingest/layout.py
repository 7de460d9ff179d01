"""The page read as structure: a document's title line, and the markers and datelines that frame
its sentences without being part of them.

People write titles that are headlines ("Velotrexin approved after nine years"), names with a
description ("Anneliese Dorrow: the immunologist who found Velotrexin") or the kind of document
("Larkspur FAQ", "Corbel Foundation grants committee — minutes, 14 March 2020"), as a Markdown
heading or as a bare first line. Parsed as text, such a title became an entity that took the
document's "she" and "it"; a FAQ's ``Q:`` became an entity joining unrelated documents, and a
press note's dateline ("PORTWELL, 27 May 2020 — ...") the subject of its first sentence.

:func:`blank_layout` turns titles, markers and datelines into spaces of the same length before
parsing, so every offset still points into the document's own text; :func:`title_name` says what
a title names, if anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from noema.model.spans import blank_headings, leading_heading
from noema.model.times import iso_date

__all__ = [
    "blank_layout",
    "dateline",
    "dateline_date",
    "title_date",
    "title_line",
    "title_name",
    "title_subject",
]

# A bare title: a short first line with no sentence end, a blank line after it.
_TITLE_MOST_CHARACTERS = 120
_BARE_TITLE = re.compile(r"\A\s*(?P<title>[^\n]*[^\s.,;:])[ \t]*\n[ \t]*\n\s*\S")
_NOT_A_TITLE = re.compile(r"^\s*(?:#|[-*+\u2022|>]|\d{1,3}[.)]\s)")
# "Note: ...", "Present: ...", "Q: ...": a label opening the line, which makes it no title unless
# the label is a name the rest of the text writes ("Larkspur: a new lead maintainer")
_LABEL = re.compile(r"^\s*(?P<label>[A-Za-z]{1,8}):\s")
_MARKER_WORDS = frozenset({"Q", "A", "Question", "Answer"})
# "Q: Who owns the club?", "A: Marlin Holdings." at the start of a line
# (not "A." or "Q.", which open as many names: "A. P. Hill's Light Division")
_MARKER = re.compile(r"^[ \t]*(?:Q|A|Question|Answer)[ \t]*:[ \t]+", re.M)
# "BRIMSWORTH, 9 September 2024 — " opening a line: a place in capitals, a date, a dash
_DATELINE = re.compile(
    r"^[ \t]*(?P<place>[A-Z][A-Z'.]+(?:[ -][A-Z][A-Z'.]+)*),[ \t]+(?P<date>[^\n\u2014\u2013]{4,30}?)"
    r"[ \t]+(?:\u2014|\u2013|--?)[ \t]+",
    re.M,
)
# a fenced code block: "```python" ... "```" (or "~~~"), to its end or the text's
_CODE_BLOCK = re.compile(
    r"^[ \t]*(```|~~~)[^\n]*\n(?:.*?\n)??[ \t]*\1[ \t]*$|^[ \t]*(```|~~~).*\Z", re.M | re.S
)
# what a title calls a document: "Larkspur FAQ", "Spindle changelog", "... — minutes, DATE"
_DOCUMENT_KINDS = (
    "frequently asked questions",
    "questions and answers",
    "release notes",
    "change log",
    "changelog",
    "minutes",
    "faqs",
    "faq",
    "q&a",
)
# "X: the immunologist who ...", "X — minutes, 14 March 2020", "X, the founder who ..."
_SEPARATOR = re.compile(r"\s*(?::|\s[\u2014\u2013-]|[\u2014\u2013]|,)\s+")
# small words a name holds in lowercase: "Centre for Tropical Medicine", "Pakistan at the Games"
_JOINING_WORDS = frozenset(
    {"a", "an", "and", "at", "de", "del", "der", "du", "for", "in", "la", "le", "of", "on"}
    | {"the", "to", "van", "von", "y", "vs", "vs.", "v.", "&amp;"}
)

# words a headline opens with that no name does: "Inside the Quarrie Laboratory"
_PREPOSITIONS = frozenset({"inside", "behind"})


def title_line(text: str) -> str:
    """The document's title written in its text: a first-level Markdown heading on its first
    line, else a bare first line followed by a blank line that does not end as a sentence does.

    Example:
        >>> title_line("Valk stays at Eskridge\\n\\nTeodor Valk signed a new contract.")
        'Valk stays at Eskridge'
        >>> title_line("Valk stayed.\\n\\nHe signed."), title_line("# Valk\\nHe signed.")
        ('', 'Valk')
    """
    heading = leading_heading(text)
    if heading:
        return heading
    match = _BARE_TITLE.match(text)
    if match is None:
        return ""
    title = match.group("title").strip()
    if len(title) > _TITLE_MOST_CHARACTERS or _NOT_A_TITLE.match(title):
        return ""
    label = _LABEL.match(title)
    if label is not None and not _names_the_page(label.group("label"), text[match.end("title") :]):
        return ""
    if dateline(title) is not None or not any(c.isalpha() for c in title):
        return ""
    return " ".join(title.split())


def _names_the_page(label: str, rest: str) -> bool:
    """Whether a first line's label is a name the rest of the page writes as a word of its own,
    capitalized and not as a label again: the name of what an update is about ("Larkspur: a new
    lead maintainer ... lead maintainer of Larkspur"), where "Note:" or a FAQ's "Q:" is none."""
    if not label[:1].isupper() or label in _MARKER_WORDS:
        return False
    return re.search(rf"(?<!\w){re.escape(label)}(?![\w:])", rest) is not None


def dateline(line: str) -> tuple[str, str] | None:
    """The place and the date of a dateline opening ``line``, or ``None``.

    Example:
        >>> dateline("PORTWELL, 27 May 2020 — The club announced a fork.")
        ('PORTWELL', '2020-05-27')
    """
    match = _DATELINE.match(line)
    if match is None:
        return None
    when = iso_date(match.group("date").strip())
    return None if when is None else (match.group("place"), when)


def dateline_date(text: str) -> str | None:
    """The ISO date of the first dateline in ``text``: the day a press note says "today" of.

    Example:
        >>> dateline_date("Halvard denies bid\\n\\nTAMSFORD, 30 September 2020 — Halvard ...")
        '2020-09-30'
    """
    for match in _DATELINE.finditer(text):
        found = dateline(text[match.start() :])
        if found is not None:
            return found[1]
    return None


def blank_layout(text: str) -> str:
    """``text`` with its Markdown headings, a bare title line, code blocks, ``Q:``/``A:``
    markers and datelines turned into spaces of the same length (code blocks keep their line
    breaks): what is left is the document's sentences, at their own offsets.

    Example:
        >>> blank_layout("Q: Who owns it?\\nA: Marlin Holdings.")
        '   Who owns it?\\n   Marlin Holdings.'
    """
    blanked = blank_headings(text)
    title = title_line(text)
    if title and blanked == text and not leading_heading(text):
        at = text.find(title.split()[0])
        end = text.find("\n", at)
        blanked = _spaces(blanked, at, end)
    blanked = _CODE_BLOCK.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), blanked)
    blanked = _MARKER.sub(lambda m: " " * len(m.group()), blanked)
    for match in _DATELINE.finditer(blanked):
        if iso_date(match.group("date").strip()) is not None:
            blanked = _spaces(blanked, match.start(), match.end())
    return blanked if blanked.strip() else text


def _spaces(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def title_name(
    title: str, text: str = "", *, is_sentence: Callable[[str], bool] | None = None
) -> str | None:
    """The name a title gives its document's topic, or ``None`` when it gives none.

    A title that is a name ("Conrad Hesketh", "Hollinsworth Centre for Tropical Medicine") or a
    name with a subtitle ("Star Wars: Episode IV", "William Astor, 4th Viscount Astor") is that
    name; a document kind after a name ("Larkspur FAQ", "Tarrowby United — FAQ") leaves the
    name. A headline names no topic: a committee's minutes, a name with a description
    ("Anneliese Dorrow: the immunologist who found Velotrexin", unless ``text`` writes the name
    described), or a title in lowercase words that ``is_sentence`` (a parse) calls a sentence
    ("Glenmoor Arena opens its doors") and ``text`` does not write. Other titles in lowercase
    words name their topic, as Wikipedia's do ("Hudson River bomb plot", "Pop music").

    Example:
        >>> title_name("Larkspur FAQ"), title_name("Corbel Foundation board — minutes, 3 May 2016")
        ('Larkspur', None)
        >>> title_name("Valk stays at Eskridge", is_sentence=lambda title: True)
        >>> title_name("Anneliese Dorrow: the immunologist who found Velotrexin")
        >>> title_name("Ida Ravelle, the founder, dies", "Ida Ravelle has died.")
        'Ida Ravelle'
    """
    name = " ".join(title.split())
    cut = _SEPARATOR.search(name)
    kind = _before_kind(name) is not None
    if cut is not None:
        head, tail = name[: cut.start()], name[cut.end() :]
        if _before_kind(_without_date(tail)) == "":
            name, kind = head, True  # "Tarrowby United — FAQ", "... board — minutes, 3 May 2018"
        elif not _capitalized(re.sub(r"^(?:the|a|an)\s+", "", tail)):
            # a description, not a subtitle ("The Good, the Bad and the Ugly"): the name it
            # describes, where the text writes it
            return head if _is_name(head) and _writes(text, head) else None
    rest = _before_kind(name)
    if rest is not None:
        words = rest.split()
        while words and not _capitalized(words[-1]):
            words.pop()  # "Eskridge Athletic supporters' FAQ"
        name = " ".join(words)
    if not any(c.isalnum() for c in name) or all(w.lower() in _JOINING_WORDS for w in name.split()):
        return None
    if _writes(text, name):
        return name
    opening, _, rest = name.partition(" ")
    rest = rest.removeprefix("the ").removeprefix("The ")
    if opening.lower() in _PREPOSITIONS and _is_name(rest) and _writes(text, rest):
        return rest  # "Inside the Quarrie Laboratory", whose text writes the laboratory
    if _is_name(name):
        return name
    # the minutes of a committee are not about it; a sentence names nothing
    return None if kind or (is_sentence is not None and is_sentence(name)) else name


def _is_name(text: str) -> bool:
    """Whether ``text`` reads as a name: capitalized words and the small words names hold."""
    words = [w for w in text.split() if any(c.isalnum() for c in w)]  # not "–" nor "&amp;"
    return bool(words) and all(_capitalized(w) or w.lower() in _JOINING_WORDS for w in words)


def _writes(text: str, name: str) -> bool:
    """Whether ``text`` writes ``name`` as words of its own."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.I) is not None


def title_subject(title: str) -> str | None:
    """The body whose minutes a title names ("Dunmarrow Rovers" of "Dunmarrow Rovers board —
    minutes, 17 July 2020"), or ``None`` for a title of other kinds.

    Example:
        >>> title_subject("Corbel Foundation grants committee — minutes, 14 March 2020")
        'Corbel Foundation'
    """
    cut = _SEPARATOR.search(title)
    if cut is None or _without_date(title[cut.end() :]).lower() != "minutes":
        return None
    words = title[: cut.start()].split()
    while words and not _capitalized(words[-1]):
        words.pop()  # "board", "grants committee"
    name = " ".join(words)
    return name if name and _is_name(name) else None


def title_date(title: str) -> str | None:
    """The ISO date a title ends with after a comma ("minutes, 14 March 2020"), or ``None``.

    Example:
        >>> title_date("Corbel Foundation grants committee — minutes, 14 March 2020")
        '2020-03-14'
    """
    head, comma, date = title.rpartition(",")
    return iso_date(date.strip()) if comma else None


def _without_date(text: str) -> str:
    """``text`` without a date after its last comma ("minutes, 14 March 2020")."""
    head, comma, date = text.rpartition(",")
    return head.strip() if comma and iso_date(date.strip()) is not None else text


def _before_kind(title: str) -> str | None:
    """What a title says before the document kind it ends with ("Larkspur" of "Larkspur
    FAQ", "" of "Changelog"), or ``None`` when it ends with none."""
    lowered = title.lower()
    for kind in _DOCUMENT_KINDS:
        if lowered == kind or lowered.endswith(" " + kind):
            return title[: len(title) - len(kind)].rstrip()
    return None


def _capitalized(word: str) -> bool:
    """Whether a word of a title reads as part of a name: capitalized ("Hollinsworth", "eBay"),
    or a number or version ("2004", "3.0")."""
    return any(c.isupper() for c in word[:2]) or word[:1].isdigit()
