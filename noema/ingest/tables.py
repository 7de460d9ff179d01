"""Markdown tables read as rows of cells: who held a role in which period, and labelled facts.

Wiki pages write successions and key facts as tables::

    | Manager       | From | To      |        | Years         | Head coach     |
    |---------------|------|---------|        |---------------|----------------|
    | Graham Tulley | 2012 | 2018    |        | 2015–2019     | Trond Olaussen |
    | Pavel Drozd   | 2022 | present |

Parsed as text, a table ran into the sentence after it and the rules made facts of its cells
("Kelderby Athletic -play_from-> Result"), while the holder of each period had no fact. Here a
table is read only when its second line is a delimiter row (``|---|:---:|``), and states only
what its shape makes plain:

- a table whose first column that is not a period names the holders of a role ("Manager",
  "Head coach", "Chair"), with their periods in the columns headed "From" and "To" or in one
  column headed "Years", "Tenure", "Term" or "Period": each holder held the role of the page's
  topic in that period, as a list line "2015–2019: Trond Olaussen" says
  (:mod:`noema.ingest.listings`);
- a table of two columns whose rows pair a label with a value ("| Chair | Beatrix Olenska
  (2021–) |", "| Ground | Ashgrove Park |"), header row included: each row as the "Key facts"
  line "Chair: Beatrix Olenska (2021–)";
- any other table (releases, honours, results) states nothing: its rows are about something
  other than the page's topic, which its cells do not say.

Every line of a table is left alone by the sentence rules (:func:`table_lines`), and each row is
a sentence of its own (:func:`table_line_starts`), so a row is evidence for the ``sentences``
format without making facts of its cells.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from noema.ingest.listings import (
    ListEntry,
    line_entries,
    name_spans,
    period_of,
    role_predicates,
    written_period,
)
from noema.model.times import iso_date

__all__ = ["table_entries", "table_headers", "table_line_starts", "table_lines"]

# a table's line: any line with a pipe (which lines make a table is the delimiter row's to say)
_ROW = re.compile(r"^[^\n|]*\|[^\n]*$", re.M)
# "|---|:---:|", "--|--", "| - | - |" (GitHub takes one dash), with a line's "\r" after it
_DELIMITER = re.compile(r"^[ \t]*(?:\|[ \t]*)?:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?\s*$")
# what an end cell writes for a holder still in post: nothing, a dash
_OPEN_END = frozenset({"", "-", "\u2013", "\u2014"})
_START_HEADERS = frozenset({"from", "start", "since", "began", "appointed", "took office"})
_END_HEADERS = frozenset({"to", "until", "end", "ended", "left", "left office"})
_PERIOD_HEADERS = frozenset(
    {"years", "year", "tenure", "term", "period", "in office", "dates", "time", "season"}
    | {"seasons"}
)


@dataclass(frozen=True)
class _Cell:
    text: str
    start: int  # the stripped text's span in the text read
    end: int


@dataclass(frozen=True)
class _Table:
    header: list[_Cell]
    rows: list[tuple[tuple[int, int], list[_Cell]]]  # each row's line span and its cells
    lines: list[tuple[int, int]]  # every line, the delimiter row's too


def table_entries(text: str) -> Iterator[ListEntry]:
    """The entries of the tables of holders and of labels in ``text`` (see the module).

    Example:
        >>> text = "| Years | Mayor |\\n|---|---|\\n| 2015–2019 | Trond Olaussen |"
        >>> [([text[a:b] for a, b in e.names], e.time, e.predicate) for e in table_entries(text)]
        [(['Trond Olaussen'], '2015/2019', 'mayor_of')]
    """
    for table in _tables(text):
        holders = _holders_column(table)
        if holders is not None:
            yield from _holder_entries(text, table, *holders)
        elif _of_labels(table):
            yield from _label_entries(text, table)


def table_lines(text: str) -> list[tuple[int, int]]:
    """The span of every line of every table in ``text``, its delimiter row's too."""
    return [line for table in _tables(text) for line in table.lines]


def table_headers(text: str) -> list[tuple[int, int]]:
    """The header lines of the tables in ``text`` whose header is no row of labels: words such
    as "Maintainer" and "Result" there head columns and name nothing."""
    return [table.lines[0] for table in _tables(text) if not _of_labels(table)]


def table_line_starts(text: str) -> list[int]:
    """Where each line of a table starts, and the first line after a table: sentences start
    there (the parser ran a table into the sentence after it)."""
    starts: list[int] = []
    for table in _tables(text):
        starts += [end - len(text[start:end].lstrip()) for start, end in table.lines]
        after = table.lines[-1][1]
        rest = len(text) - len(text[after:].lstrip())
        if rest < len(text):
            starts.append(rest)
    return sorted(set(starts))


@lru_cache(maxsize=8)
def _tables(text: str) -> tuple[_Table, ...]:
    """The tables of ``text``: runs of table lines whose second line is a delimiter row. Kept
    for the last few texts: a piece is asked for its tables' line starts, entries, headers and
    lines in turn."""
    if "|" not in text:  # most documents
        return ()
    tables = []
    run: list[tuple[int, int]] = []
    for match in [*_ROW.finditer(text), None]:
        if match is not None and (not run or text.count("\n", run[-1][1], match.start()) == 1):
            run.append(match.span())
            continue
        if len(run) >= 2 and _DELIMITER.match(text[run[1][0] : run[1][1]]):
            header = _cells(text, *run[0])
            rows = [(line, _cells(text, *line)) for line in run[2:]]
            tables.append(_Table(header, [(line, cells) for line, cells in rows if cells], run))
        run = [match.span()] if match is not None else []
    return tuple(tables)


def _cells(text: str, start: int, end: int) -> list[_Cell]:
    """The cells of the table line ``text[start:end]``, outer pipes left out."""
    line = text[start:end]
    bounds = [n for n, char in enumerate(line) if char == "|"]
    inner = line.strip()
    edges = [-1, *bounds, len(line)]
    if inner.startswith("|"):
        edges = edges[1:]
    if inner.endswith("|"):
        edges = edges[:-1]
    cells = []
    for left, right in zip(edges[:-1], edges[1:], strict=True):
        piece = line[left + 1 : right]
        stripped = piece.strip()
        first = start + left + 1 + (piece.index(stripped) if stripped else 0)
        cells.append(_Cell(stripped, first, first + len(stripped)))
    return cells


def _header(cell: _Cell) -> str:
    return " ".join(re.findall(r"[a-z]+", cell.text.lower()))


def _of_labels(table: _Table) -> bool:
    """Whether ``table`` pairs labels with values: two columns, none headed as a period ("|
    Season | Champion |" under "Honours" is no table of labels)."""
    return len(table.header) == 2 and not _period_headed(table)


def _period_headed(table: _Table) -> bool:
    """Whether a column of ``table`` is headed as a period ("Years", "From", "Season")."""
    headers = {_header(cell) for cell in table.header}
    return bool(headers & (_START_HEADERS | _END_HEADERS | _PERIOD_HEADERS))


def _holders_column(table: _Table) -> tuple[int, list[str]] | None:
    """The column of the role's holders and the role's predicates: the first column that is no
    period, when its header names a role and another column is headed as a period (a table of
    two columns headed "Chair" and "Beatrix Olenska" is one of labels)."""
    if not _period_headed(table):
        return None
    for n, cell in enumerate(table.header):
        header = _header(cell)
        if header in _START_HEADERS | _END_HEADERS | _PERIOD_HEADERS:
            continue
        predicates = role_predicates(cell.text)
        return (n, predicates) if predicates else None
    return None


def _holder_entries(
    text: str, table: _Table, column: int, predicates: list[str]
) -> Iterator[ListEntry]:
    """One entry per row of a table of holders (theirs the cells of ``column``, holding the
    roles ``predicates``): the names of its holders' cell and the period of its period cells;
    a row whose period cells write no period gives none."""
    headers = [_header(cell) for cell in table.header]
    starts = [n for n, h in enumerate(headers) if h in _START_HEADERS]
    ends = [n for n, h in enumerate(headers) if h in _END_HEADERS]
    periods = [n for n, h in enumerate(headers) if h in _PERIOD_HEADERS]
    for line, cells in table.rows:
        if len(cells) != len(table.header):
            continue
        period = _row_period(cells, starts[:1], ends[:1], periods[:1])
        if period is None:
            continue  # a period the row does not write: not a holder without one
        time, span = period
        cell = cells[column]
        names = tuple(name_spans(text, cell.start, cell.end, 0))
        for predicate in predicates if names else ():
            yield ListEntry(names, time, span, line, predicate)


def _row_period(
    cells: list[_Cell], starts: list[int], ends: list[int], periods: list[int]
) -> tuple[str, tuple[int, int]] | None:
    """The row's period and the span it is written in, or ``None``."""
    if starts and ends:
        first, last = cells[starts[0]], cells[ends[0]]
        # an end left empty (or a dash) is a holder still in post: "| Pavel Drozd | 2022 | |"
        time = period_of(first.text, "present" if last.text in _OPEN_END else last.text)
        span = (min(first.start, last.start), max(first.end, last.end))
        return (time, span) if time is not None else None
    if periods:
        cell = cells[periods[0]]
        time = written_period(cell.text)
        return (time, (cell.start, cell.end)) if time is not None else None
    return None


def _label_entries(text: str, table: _Table) -> Iterator[ListEntry]:
    """The entries of a two-column table of labels, each row read as the list line "label:
    value" (the header row too, which such tables often fill with their first pair)."""
    for line, cells in [(table.lines[0], table.header), *table.rows]:
        if len(cells) != 2 or not cells[0].text or not cells[1].text:
            continue
        label, value = cells
        if written_period(label.text) is not None or iso_date(label.text) is not None:
            continue  # a year or a season labels nothing of the topic
        # the row as the line "Label: value", character for character, so every span found in
        # it points into the text read
        written = [" "] * (value.end - label.start)
        written[: label.end - label.start] = label.text
        written[label.end - label.start] = ":"
        written[value.start - label.start :] = value.text
        yield from line_entries("".join(written), label.start, line)
