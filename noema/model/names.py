"""Entity-name normalization shared by the extractor and the canonicalizer."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = [
    "BUSINESS_SUFFIXES",
    "clean_name",
    "is_description",
    "name_suffix",
    "names_compatible",
    "normalize_name",
    "surname",
    "visible_text",
]

# Words that end a company name ("Microsoft Corp"): not a name of their own.
_SUFFIX_WORDS = """
inc incorporated corp corporation co company ltd limited llc plc gmbh ag sa nv bv lp llp srl spa
pty oy ab kg
"""
BUSINESS_SUFFIXES = frozenset(_SUFFIX_WORDS.split())
_PUNCT = re.compile(r"[^\w\s]+")
_WS = re.compile(r"\s+")
_INNER_DOT = re.compile(r"(?<=\w)\.(?=\w)")
# a list line's mark before a name ("- José Borrero"; not the sign of "-29.1"), a dash after one
# ("Little Rock-" of "Little Rock-based", "November 17, 1878 –" of a life's span)
_LIST_MARK = re.compile(r"^(?:[-\u2013\u2014*+\u2022]\s+)+")
_TRAILING_DASH = re.compile(r"\s*[-\u2013\u2014]+$")


# The planes that hold format characters: Unicode keeps planes 2 and 3 for ideographs, leaves 4
# to 13 unassigned and 15 and 16 to private use. Reading only these three took the table's making
# from 70 ms to 12 ms of the first retrieval of a process (a test holds them to the full scan).
FORMAT_PLANES = (0, 1, 14)
# The format characters of the Unicode version Python 3.11 has, as ranges, so that a process on
# it makes no table at all (12 ms of its first retrieval on a busy machine, more under load):
# a test holds them to the full scan; another version of Unicode is read from its tables.
_KNOWN_FORMAT_RANGES = {
    "14.0.0": (
        (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD),
        (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E),
        (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F),
        (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
        (0x13430, 0x13438), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
        (0xE0020, 0xE007F),
    ),
}  # fmt: skip


def format_ranges() -> tuple[tuple[int, int], ...]:
    """The ranges of format characters (Unicode category Cf) of the running Python, first to
    last, read from its Unicode tables unless its version's are known above."""
    known = _KNOWN_FORMAT_RANGES.get(unicodedata.unidata_version)
    return known if known is not None else _scanned_ranges()


def _scanned_ranges() -> tuple[tuple[int, int], ...]:
    """The ranges of format characters, read from the planes that hold them."""
    ranges: list[tuple[int, int]] = []
    codes = (c for plane in FORMAT_PLANES for c in range(plane << 16, (plane + 1) << 16))
    for code in codes:
        if unicodedata.category(chr(code)) != "Cf":
            continue
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    return tuple(ranges)


@lru_cache(maxsize=1)
def _format_characters() -> re.Pattern[str]:
    """Every format character, as a character class: made once, on the first text that is not
    ASCII."""
    spans = (f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in format_ranges())
    return re.compile(f"[{''.join(spans)}]")


def visible_text(text: str) -> str:
    """``text`` as it reads: without format characters (Unicode category Cf: zero-width spaces
    and joiners, direction marks and overrides, soft hyphens, the byte-order mark), then
    composed (NFC). Both show nothing, yet make two spellings of one name differ and split a
    name for the parser ("Ma\\u200dra Voss", an accent as a letter and a combining mark).

    Example:
        >>> visible_text("Ma\\u0301ra\\u200b Voss\\u202e") == "M\\u00e1ra Voss"
        True
    """
    if text.isascii():  # no format character and nothing to compose (most texts)
        return text
    return unicodedata.normalize("NFC", _format_characters().sub("", text))


def clean_name(text: str) -> str:
    """A surface form fit for notation: as it reads (:func:`visible_text`), one line, no
    leading "the", no trailing "'s", no list mark before it or dash after it.

    Example:
        >>> clean_name("the United\\nStates's"), clean_name("- José Borrero"), clean_name("1878 –")
        ('United States', 'José Borrero', '1878')
    """
    name = _WS.sub(" ", visible_text(text)).strip()
    name = _TRAILING_DASH.sub("", _LIST_MARK.sub("", name))
    if name.lower().startswith("the ") and len(name) > 4:
        name = name[4:]
    if name.endswith(("'s", "\u2019s")):
        name = name[:-2].rstrip()
    return name


def normalize_name(name: str) -> str:
    """The key exact matching compares: lowercase, no accents or punctuation, no business suffix,
    nothing invisible (:func:`visible_text`: "Ma\\u200dra Voss" is "Mara Voss").

    Example:
        >>> normalize_name("Google, Inc."), normalize_name("Siemens AG"), normalize_name("Nestlé S.A.")
        ('google', 'siemens', 'nestle')
    """
    if name.isascii():  # nothing to decompose (most names; half the time of a load's topics)
        text = name.lower()
    else:
        text = unicodedata.normalize("NFKD", _format_characters().sub("", name))
        text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = _INNER_DOT.sub("", text)  # S.A. -> sa, U.S. -> us
    words = _PUNCT.sub(" ", text).split()
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    while len(words) > 1 and words[-1] in BUSINESS_SUFFIXES:
        words = words[:-1]
    return " ".join(words)


def is_business_suffix(name: str) -> bool:
    """True for a name that is only a suffix such as "Inc." or "Ltd", split off by the tagger."""
    return normalize_name(name) in BUSINESS_SUFFIXES


_FILLER_WORDS = frozenset({"a", "an", "the", "of", "and", "in", "on", "at", "for", "de", "la"})
# Words that make a different thing of the same name: "Northern Ireland" is not "Ireland", "New
# York" is not "York", "Sea Hunters II" is not "Sea Hunters". So do the kinds of place named after
# another place: "Kansas City" and "Kansas State" are not "Kansas", "Oregon State University" is
# not "University of Oregon", "Orange County" is not "Orange", though MiniLM puts each pair over
# the default threshold (0.87, 0.96). Not "province": "Zhejiang Province" is Zhejiang.
_QUALIFIERS = frozenset(
    ["north", "south", "east", "west", "northern", "southern", "eastern", "western", "central"]
    + ["upper", "lower", "new", "old", "greater", "little"]
    + ["city", "state", "county"]
)
_NUMERALS = frozenset(["ii", "iii", "iv", "vi", "vii", "viii", "ix"])
_CITY_OR_STATE = frozenset(["city", "state"])


@lru_cache(maxsize=1 << 17)
def _content_words(name: str) -> tuple[str, ...]:
    # "Institutes" and "Institute", "FECs" and "FEC" are one word here. Cached: canonicalization
    # compares each new name with every stored name sharing a word with it.
    words = normalize_name(name).split()
    if len(words) > 2 and words[0] in _CITY_OR_STATE and words[1] == "of":
        words = words[2:]  # "City of Jacksonville" is Jacksonville, unlike "Kansas City"
    return tuple(
        w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
        for w in words
        if w not in _FILLER_WORDS
    )


def key_words(name: str) -> tuple[str, ...]:
    """The words :func:`names_compatible` compares: the content words of the part before a comma;
    empty for a description, whose only other spelling is the same words.

    Example:
        >>> key_words("The University of Alabama"), key_words("Kingston, Jamaica")
        (('university', 'alabama'), ('kingston',))
    """
    if is_description(name):
        return ()
    return _content_words(name.split(",")[0])


def initials(words: tuple[str, ...]) -> str:
    """The initials of several words ("us" for United States), which a one-word name may be."""
    return "".join(w[0] for w in words)


_DISAMBIGUATION = re.compile(r"\s*\([^)]*\)\s*$")


def strip_disambiguation(title: str) -> str:
    """A title without its trailing parenthesis: what the document is about.

    Example:
        >>> strip_disambiguation("Tinted Windows (band)")
        'Tinted Windows'
    """
    return _DISAMBIGUATION.sub("", title)


def is_description(name: str) -> bool:
    """Whether a name is a common-noun phrase ("silver medal", "American rock band") rather than a
    proper name: its last word starts with a lowercase letter.

    Example:
        >>> is_description("American rock band"), is_description("Bank of America")
        (True, False)
    """
    words = name.split()
    return bool(words) and words[-1][:1].islower()


def names_compatible(a: str, b: str) -> bool:
    """Whether two names could be two spellings of one thing: the words of one are all in the
    other ("Knicks", "New York Knicks"), or one is the other's initials ("UK", "United Kingdom").

    Names that each have a word the other lacks are two things however close their embeddings:
    "Tim Curry" and "John Curry", "Eastern Roman Empire" and "Western Roman Empire". So are
    names that differ by a qualifier ("Ireland", "Northern Ireland") or by a kind of place
    ("Kansas", "Kansas City"), places whose first part differs ("Kingston, Jamaica" is in
    "Jamaica", not the same place), and a name that is half of a hyphenated one ("Kassel",
    "Hesse-Kassel").

    Example:
        >>> names_compatible("Evan Lysacek", "Evan Frank Lysacek"), names_compatible("U.S.", "United States")
        (True, True)
        >>> names_compatible("Eric Arthur Blair", "Samuel Blair"), names_compatible("Jamaica", "Kingston, Jamaica")
        (False, False)
    """
    if is_description(a) or is_description(b):
        # "television broadcaster" and "American television broadcaster" are two descriptions,
        # each the answer to some question; only the same words make the same description
        return normalize_name(a) == normalize_name(b)
    if "," in a or "," in b:
        return names_compatible(a.split(",")[0], b.split(",")[0])
    x, y = _content_words(a), _content_words(b)
    if not x or not y:
        return True
    if set(x) & _NUMERALS != set(y) & _NUMERALS:
        return False
    if set(x) <= set(y) or set(y) <= set(x):
        # "New York Knicks" is a longer "Knicks"; "Northern Ireland" is not a longer "Ireland"
        extra = set(x) ^ set(y)
        if not extra:
            return True
        fewer, more = (a, b) if len(set(x)) < len(set(y)) else (b, a)
        return not extra <= _QUALIFIERS and not _splits_a_compound(fewer, more)
    for short, long in ((x, y), (y, x)):
        if len(short) == 1 and len(long) > 1 and short[0] == "".join(w[0] for w in long):
            return True
    return False


_COMPOUND = re.compile(r"\w+(?:-\w+)+")


def _splits_a_compound(short: str, long: str) -> bool:
    # Half of a hyphenated name is another thing: "Hesse-Kassel" is the state, not the city of
    # Kassel; "Austria-Hungary" is not Austria. A compound the short name has whole ("Rolls
    # Royce") or not at all ("Sartre" beside "Jean-Paul Sartre") does not part them.
    words = set(_content_words(short))
    for compound in _COMPOUND.findall(long):
        parts = set(_content_words(compound.replace("-", " ")))
        if parts & words and not parts <= words:
            return True
    return False


# What may follow a person's surname: "Thomas Brekke Jr.", "Henry Ford II".
_NAME_SUFFIXES = frozenset({"jr", "jr.", "sr", "sr."})
# a regnal or generational number in capitals: "Henry VIII", "John Jacob Astor IV"
_NUMERAL = re.compile(r"[ivx]{1,5}")


def _is_suffix(word: str) -> bool:
    lowered = word.lower()
    return lowered in _NAME_SUFFIXES or (word.isupper() and _NUMERAL.fullmatch(lowered) is not None)


def name_suffix(name: str) -> str:
    """A person's generational suffix, lowercased without its full stop ("jr" for "Pete Rose
    Jr."), else the empty string."""
    words = name.replace(",", " ").split()
    last = words[-1] if len(words) > 1 else ""
    return last.lower().rstrip(".") if last and _is_suffix(last) else ""


def surname(name: str) -> str:
    """The last word of a person's name, before a generational suffix.

    Example:
        >>> surname("Thomas Anders Brekke Jr."), surname("Henry Ford II"), surname("Cher")
        ('Brekke', 'Ford', 'Cher')
        >>> surname("Charles III"), surname("Henry VIII"), surname("Jet Li")
        ('', '', 'Li')
    """
    words = name.replace(",", " ").split()
    while len(words) > 1 and _is_suffix(words[-1]):
        words.pop()
    # "Charles III": a regnal number follows a given name, not a surname
    return words[-1] if len(words) > 1 or len(words) == len(name.split()) else ""
