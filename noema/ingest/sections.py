"""Section headings that say what the list under them lists.

A wiki page lists a club's managers under "## Managers" and its former players under "## Former
players", each line only a name and a period ("- 2012–2018: Gareth Pollard"). Read alone, such
a line says the name was listed for the page's topic then (``listed_for``); under a heading that
names a role, it says the name held that role (``manager_of``), which is what a question asks.
A heading scopes the lines up to the next heading of any level; the page's own title (``#``) is
no section.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from noema.ingest.listings import LISTED, ListEntry, role_predicates

__all__ = ["scoped_entries"]

# "## Managers", "### Head coaches since 2012": a second- to sixth-level heading
_SECTION = re.compile(r"^ {0,3}(?P<marks>#{1,6})[ \t]+(?P<text>[^\n]*)$", re.M)
# what a heading may say besides its role: "since 2012", "(2012–2018)", "of the club"
_TAIL = re.compile(r"\s(?:since\b|from\b|of\b|in\b|at\b|\(|\d).*", re.I | re.S)


def scoped_entries(entries: Iterable[ListEntry], text: str, offset: int = 0) -> list[ListEntry]:
    """``entries`` with each name-and-period entry under a heading of ``text`` that names a
    role given that role; the entries' spans are in the piece of ``text`` that starts at
    ``offset``.

    Example:
        >>> from noema.ingest.listings import list_entries
        >>> text = "# Brackwater Town\\n\\n## Head coaches since 2012\\n\\n- 2012–2018: Gareth Pollard"
        >>> [e.predicate for e in scoped_entries(list_entries(text), text)]
        ['head_coach_of']
    """
    entries = list(entries)
    listed = [e.line[0] for e in entries if e.predicate == LISTED]
    if not listed:  # most pieces: nothing a heading could give a role to
        return entries
    sections = [
        (
            match.start(),
            _heading_roles(match["text"].rstrip(" \t#")) if len(match["marks"]) > 1 else [],
        )
        for match in _SECTION.finditer(text, 0, offset + max(listed))
    ]
    scoped: list[ListEntry] = []
    for entry in entries:
        roles = next((r for start, r in reversed(sections) if start < offset + entry.line[0]), [])
        if entry.predicate != LISTED or not roles:
            scoped.append(entry)
            continue
        scoped += [entry._replace(predicate=role) for role in roles]
    return scoped


def _heading_roles(heading: str) -> list[str]:
    """The role predicates a heading names in the plural ("Head coaches" -> ``head_coach_of``),
    or none."""
    words = _TAIL.sub("", heading.strip()).split()
    if not words:
        return []
    return role_predicates(" ".join(words))
