"""Names NER cut wrong or missed, put right before they are filed: a match's score taken into a
team's name, a release number left out of a product's, a proper noun a kind noun describes.

Apart from :mod:`noema.ingest.entities` because each reads the tokens around a span, not the
names of the document: what they give is filed like any name NER found.
"""

from __future__ import annotations

import re
from typing import Any

from noema.ingest._name_table import NameTable, with_version
from noema.ingest._tokens import proper_noun_span
from noema.ingest.evidence import kind_beside
from noema.model.names import clean_name

__all__ = ["read_described", "read_releases", "without_score"]


# A match's score after a team's name: "2-1", "3 – 0" (not a model's "747-400").
_SCORE = re.compile(r"\d{1,2}\s*[-\u2013]\s*\d{1,2}")


def without_score(span: Any) -> Any:
    """ "Wexcombe United" of "Marrowby Town beat Wexcombe United 2-1": NER takes the score into
    the name, which then matched no other mention of the club."""
    for start in range(span.end - 1, span.start, -1):
        tail = span.doc[start : span.end].text
        if _SCORE.fullmatch(tail):
            if not any(c.isalpha() for c in span.doc[span.start : start].text):
                return span
            from spacy.tokens import Span

            return Span(span.doc, span.start, start, label=span.label_)
    return span


def read_described(spacy_doc: Any, names: NameTable) -> None:
    """ "licensed the drug Velotrexin": a proper noun NER missed, where a kind noun beside it
    says what it is (see :func:`noema.ingest.evidence.kind_beside`), is a name; that mention
    is then the one that says its type."""
    for token in spacy_doc:
        if (
            token.pos_ != "PROPN"
            or token.i in names.by_token
            or token.dep_ in ("compound", "flat")
            or not token.text[:1].isupper()
        ):
            continue
        span = proper_noun_span(token)
        if not any(t.i in names.by_token for t in span) and kind_beside(span) is not None:
            names.register(span)


def read_releases(spacy_doc: Any, names: NameTable) -> None:
    """ "Spindle 3.0 was released", "Python 3.7 is no longer supported": a capitalized word with
    a release number after it that NER left out (or tagged the number alone) is a release's
    name, a product (as its form says, see :func:`noema.ingest.evidence.form_type`). The
    tagger reads such a word at a sentence's start as a common noun."""
    for number in spacy_doc:
        if not number.i or number.dep_ != "nummod" or number.head.i != number.i - 1:
            continue
        word = number.head
        if not word.text[:1].isupper() or word.pos_ not in ("NOUN", "PROPN"):
            continue
        if word.i in names.by_token or (number.ent_type_ and number.ent_type_ != "CARDINAL"):
            continue
        span = with_version(proper_noun_span(word))
        if span.end != number.i + 1:
            continue
        names.give_up(span)  # "3.0" tagged a number of its own
        names.add(clean_name(span.text), span, "PRODUCT")
