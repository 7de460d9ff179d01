"""Entity-name normalization shared by the extractor and the canonicalizer."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["BUSINESS_SUFFIXES", "clean_name", "normalize_name"]

BUSINESS_SUFFIXES = frozenset(
    [
        "inc",
        "incorporated",
        "corp",
        "corporation",
        "co",
        "company",
        "ltd",
        "limited",
        "llc",
        "plc",
        "gmbh",
        "ag",
        "sa",
        "nv",
        "bv",
        "lp",
        "llp",
        "srl",
        "spa",
        "pty",
        "oy",
        "ab",
        "kg",
    ]
)
_PUNCT = re.compile(r"[^\w\s]+")
_WS = re.compile(r"\s+")


def clean_name(text: str) -> str:
    """A surface form fit for notation: one line, no leading "the", no trailing "'s".

    Example:
        >>> clean_name("the United\\nStates's")
        'United States'
    """
    name = _WS.sub(" ", text).strip()
    if name.lower().startswith("the ") and len(name) > 4:
        name = name[4:]
    if name.endswith(("'s", "\u2019s")):
        name = name[:-2].rstrip()
    return name


def normalize_name(name: str) -> str:
    """The key exact matching compares: lowercase, no accents or punctuation, no business suffix.

    Example:
        >>> normalize_name("Google, Inc."), normalize_name("Siemens AG"), normalize_name("Nestlé S.A.")
        ('google', 'siemens', 'nestle')
    """
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = re.sub(r"(?<=\w)\.(?=\w)", "", text)  # S.A. -> sa, U.S. -> us
    words = _PUNCT.sub(" ", text).split()
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    while len(words) > 1 and words[-1] in BUSINESS_SUFFIXES:
        words = words[:-1]
    return " ".join(words)


def is_business_suffix(name: str) -> bool:
    """True for a name that is only a suffix such as "Inc." or "Ltd", split off by the tagger."""
    return normalize_name(name) in BUSINESS_SUFFIXES
