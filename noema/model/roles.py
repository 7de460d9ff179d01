"""Roles: the predicates of a position one holder has at a time.

A company has one chief executive at a time, a player one club, a person one spouse, a house
one owner, a country one capital: where two facts of such a predicate share an end and their
times differ, one followed the other, and the one valid latest is the current one. Other
predicates name acts and ties that all hold together: a company's acquisitions, a founder's
companies, a country's memberships. Their facts are never rivals, however their times differ
(:mod:`noema.retrieval.timeorder` orders rivals only).

A predicate is read by its words (``chief_executive_of``: ``chief``, ``executive``, ``of``),
as the built-in extractor writes it (lowercase, ``_`` between words).
"""

from __future__ import annotations

__all__ = ["OFFICES", "ROLE_ACRONYMS", "is_role", "same_role", "taken_then"]

# the words of a predicate that make it an office one holder hands to the next
# ("chief_executive_of", "head_coach_of"), not a tie such as "son_of" or "study_at"
OFFICES = frozenset(
    {"ceo", "chief", "executive", "president", "chairman", "chairwoman", "chair", "director"}
    | {"head", "coach", "captain", "manager", "mayor", "governor", "editor", "leader", "owner"}
    | {"minister", "secretary", "principal", "dean", "conductor", "chancellor", "commissioner"}
)
# roles written in capitals, which NER takes for companies ("resigned as CEO of X")
ROLE_ACRONYMS = frozenset({"ceo", "cfo", "cto", "coo", "cio", "cmo"})
# other words of a role's predicate: a position that is not an office, and the people one has
# one of at a time
_POSITIONS = frozenset(
    {"maintainer", "capital", "premier", "monarch", "king", "queen", "emperor", "treasurer"}
    | {"spouse", "husband", "wife", "chairperson", "superintendent", "commander", "cfo", "cto"}
)
# the verbs that hold a role ("Mara Voss led Veltrix", "Ada Ring played for Harbor City FC")
_HOLDING = frozenset(
    {"lead", "run", "head", "manage", "direct", "chair", "coach", "captain", "maintain", "own"}
    | {"marry", "govern", "edit", "preside", "rule", "reign", "command", "helm"}
)
# verbs that hold a role only with their preposition: a club played for, not a game played
_HOLDING_FOR = frozenset({"play", "sign", "work"})
# verbs of a role that say when it was taken, not that it was held then: "signed for Arvik
# United in 2015"
_TAKING = frozenset({"sign"})
# the office a verb of holding holds: "Mira Solberg managed the club" as "the manager of"
_OFFICE_HELD = {
    "manage": "manager",
    "lead": "leader",
    "direct": "director",
    "chair": "chair",
    "coach": "coach",
    "captain": "captain",
    "head": "head",
    "own": "owner",
    "maintain": "maintainer",
    "edit": "editor",
    "govern": "governor",
}


def is_role(predicate: str) -> bool:
    """Whether ``predicate`` names a position one holder has at a time.

    Example:
        >>> [is_role(p) for p in ("ceo_of", "lead", "play_for", "capital_of", "marry")]
        [True, True, True, True, True]
        >>> [is_role(p) for p in ("acquire", "found", "member_of", "play", "founder_of")]
        [False, False, False, False, False]
    """
    words = predicate.lower().split("_")
    if words[0] in _HOLDING or not OFFICES.isdisjoint(words) or not _POSITIONS.isdisjoint(words):
        return True
    return words[0] in _HOLDING_FOR and words[1:2] in (["for"], ["at"])


def _offices(predicate: str) -> frozenset[str]:
    words = predicate.lower().split("_")
    held = {w for w in words if w in OFFICES or w in _POSITIONS}
    if words[0] in _OFFICE_HELD:
        held.add(_OFFICE_HELD[words[0]])
    return frozenset(held)


def same_role(predicate: str, other: str) -> bool:
    """Whether two predicates of roles name the same position: the same predicate, or one
    office said as a noun and as a verb ("manager_of" and "manage") or with other words
    ("head_coach_of" and "coach_of").

    Example:
        >>> same_role("manager_of", "manage"), same_role("manager_of", "captain_of")
        (True, False)
    """
    return predicate == other or not _offices(predicate).isdisjoint(_offices(other))


def taken_then(predicate: str) -> bool:
    """Whether a role's predicate dated once says when the role was taken ("signed for Arvik
    United in 2015": held from then on), rather than a day it was held ("chair_of" in minutes
    of 30 May 2018, "managed the club in 2019": held then, begun some time before).

    Example:
        >>> taken_then("sign_for"), taken_then("chair_of"), taken_then("manage")
        (True, False, False)
    """
    return predicate.lower().split("_")[0] in _TAKING
