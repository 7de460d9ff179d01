"""ISO 8601 times of facts read as ranges of days (noema.model.times)."""

from __future__ import annotations

from datetime import date

import pytest

from noema.model.times import Period, iso_date, period_text, read_period, time_phrase


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("2004", date(2004, 1, 1), date(2004, 12, 31)),
        ("2004-02", date(2004, 2, 1), date(2004, 2, 29)),
        ("2004-08-19", date(2004, 8, 19), date(2004, 8, 19)),
        ("2010/2019", date(2010, 1, 1), date(2019, 12, 31)),
        ("2010-05/2019-03-02", date(2010, 5, 1), date(2019, 3, 2)),
        ("2019/..", date(2019, 1, 1), None),
        ("../2019", None, date(2019, 12, 31)),
    ],
)
def test_read_period_covers_the_days_of_its_precision(
    text: str, start: date | None, end: date | None
) -> None:
    assert read_period(text) == Period(start, end)


@pytest.mark.parametrize(
    "text", ["spring", "2004-13", "2004-02-30", "2019/2010", "../..", "2019/", "/2019", "", "04"]
)
def test_read_period_refuses_what_is_no_iso_time(text: str) -> None:
    assert read_period(text) is None


def test_open_ends_overlap_everything_on_their_side() -> None:
    still = read_period("2019/..")
    ended = read_period("../2018")
    assert still is not None and ended is not None
    assert still.overlaps(Period(date(2030, 1, 1), None))
    assert not still.overlaps(ended)
    assert ended.overlaps(Period(None, date(1900, 1, 1)))
    assert still.contains(date(2026, 12, 4)) and not ended.contains(date(2019, 1, 1))


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("in March 2004", None),
        ("March 2004", "2004-03"),
        ("Sept. 3, 1999", "1999-09-03"),
        ("3rd of September 1999", "1999-09-03"),
        ("the 1990s", None),
        ("February 30, 2004", None),
        ("1,000", None),
    ],
)
def test_iso_date_reads_only_whole_dates(text: str, iso: str | None) -> None:
    assert iso_date(text) == iso


def test_period_text_and_phrase_agree() -> None:
    assert period_text("2010", None) == "2010/.."
    assert time_phrase(period_text("2010", "2019") or "") == "from 2010 to 2019"
    assert period_text(None, None) is None
