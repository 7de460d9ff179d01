"""What a kind noun says a thing is: "an American rock band" is an ORG, "a 2002 film" a PRODUCT.

A Wikipedia-style document names its topic's kind twice: in its title's disambiguation ("Insomnia
(2002 film)") and in its first sentence ("Insomnia is a 2002 American psychological thriller
film"). The small NER model often types such a topic by its form alone ("Insomnia" ORG, "Arrival"
PERSON, "Manchester" PERSON); the kind noun is the document's own word for it, and outvotes NER
for the topic (see :func:`noema.ingest.parse`). Only nouns whose type is unambiguous are listed: "player"
is a person, "game" is not listed (a video game or a match), "place" neither.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["KIND_TYPES", "described_kind", "kind_type", "qualified_kind", "title_kind"]

_KINDS = {
    "PERSON": """
        actor actress singer musician rapper songwriter composer conductor pianist guitarist
        drummer bassist vocalist dancer player footballer cricketer cyclist boxer wrestler
        luchador athlete sprinter runner swimmer skater golfer jockey pitcher quarterback
        goalkeeper coach manager politician diplomat lawyer judge businessman businesswoman
        entrepreneur executive writer author novelist poet playwright screenwriter journalist
        editor filmmaker director producer painter sculptor photographer architect designer
        artist comedian presenter scientist physicist chemist biologist geneticist mathematician
        economist historian philosopher professor engineer physician surgeon chef soldier
        officer general admiral priest bishop monk saint king queen prince princess emperor
        empress duke nobleman aristocrat activist inventor explorer astronaut personality
        midfielder defender striker winger captain biophysicist immunologist entomologist
        epidemiologist virologist pharmacologist
    """,
    "ORG": """
        band group duo trio quartet ensemble orchestra choir company corporation conglomerate
        firm manufacturer retailer airline bank label imprint studio agency organization
        organisation association federation league club team university college school academy
        institute party council ministry department newspaper magazine network broadcaster
        franchise maker startup business brand brewery shipyard supplier carrier subsidiary
        cooperative consultancy cidery winery distillery creamery foundry foundation charity
        collective consortium alliance union guild distributor importer wholesaler
    """,
    "GPE": """
        city town village hamlet municipality borough county country state province
        commune suburb capital township port
    """,
    "LOC": """
        river creek stream lake mountain hill peak volcano island peninsula bay sea ocean valley
        desert forest park street road highway avenue bridge tunnel stadium arena building house
        church cathedral castle palace lighthouse airport mall museum stop ground venue
        laboratory observatory racecourse velodrome vineyard cellar hangar airfield aerodrome
        quarry
    """,
    "PRODUCT": """
        film movie drama thriller comedy album song single novel book poem play musical opera
        series sitcom miniseries episode documentary soundtrack anthology comic painting
        sculpture car engine aircraft dvd ep feature drug medicine medication vaccine
        antibiotic software framework toolkit tool application app plugin compiler browser
        release fork smartphone locomotive spacecraft pump robot scanner implant ventilator
        device machine jet airliner plane airplane aeroplane turboprop helicopter vehicle truck
        tractor wine beer whisky whiskey cider gin vodka champagne liqueur
    """,
    "EVENT": """
        war battle election tournament championship festival ceremony competition offensive
        campaign fair expo exhibition regatta marathon contest
    """,
}

# Kind nouns that say nothing alone ("a place in history", "an area of study") but name a
# settlement with their modifier, as gazetteer-like first sentences write them.
_QUALIFIED_KINDS = {
    # a station alone may be a broadcaster ("the NBC-owned station WMAQ-TV")
    "LOC": (
        "field station",
        "research station",
        "railway station",
        "train station",
        "metro station",
        "subway station",
        "bus station",
        "power station",
    ),
    # a game, not a match
    "PRODUCT": ("video game", "computer game", "board game", "card game", "operating system"),
    # a show alone may be a broadcast
    "EVENT": ("air show", "trade show", "motor show", "flower show", "horse show"),
    # a house alone is a building
    "ORG": (
        "publishing house",
        "fashion house",
        "auction house",
        "design house",
        "trading house",
        # an estate alone is land
        "wine estate",
    ),
    "GPE": (
        "census-designated place",
        "populated place",
        "unincorporated community",
        "unincorporated area",
        "suburban area",
        "residential area",
        "urban area",
        "rural area",
        "metropolitan area",
    ),
}

_DISAMBIGUATION = re.compile(r"\(([^()]*)\)\s*$")

# A kind noun's lemma, lowercased -> the entity type it says its thing is.
KIND_TYPES: dict[str, str] = {
    **{noun: type_ for type_, nouns in _KINDS.items() for noun in nouns.split()},
    **{kind: type_ for type_, kinds in _QUALIFIED_KINDS.items() for kind in kinds},
}


def qualified_kind(phrase: str, noun: str) -> str:
    """The kind a noun phrase names: ``noun`` (a lemma), or the qualified kind the phrase ends
    with when ``noun`` needs its modifier to say a type.

    Example:
        >>> qualified_kind("an unincorporated census-designated place", "place")
        'census-designated place'
        >>> qualified_kind("a small place", "place"), qualified_kind("a rock band", "band")
        ('place', 'band')
    """
    text = " ".join(phrase.lower().replace(" - ", "-").split())
    for kind in (k for kinds in _QUALIFIED_KINDS.values() for k in kinds):
        if text == kind or text.endswith(" " + kind):  # not "interurban area"
            return kind
    return noun


def kind_type(kinds: Iterable[str]) -> str | None:
    """The one type the kind nouns agree on, else ``None`` (none known, or they disagree).

    A qualified kind says more than its noun: "research station" is a place, where "station"
    alone may be a broadcaster.

    Example:
        >>> kind_type(["band"]), kind_type(["film"]), kind_type(["actor", "singer"])
        ('ORG', 'PRODUCT', 'PERSON')
        >>> kind_type(["actor", "band"]) is None, kind_type(["thing"]) is None
        (True, True)
        >>> kind_type(["station", "research station"]), kind_type(["drug"])
        ('LOC', 'PRODUCT')
    """
    kinds = list(kinds)
    qualified = [k for k in kinds if " " in k and k in KIND_TYPES]
    types = {KIND_TYPES[k] for k in (qualified or kinds) if k in KIND_TYPES}
    return types.pop() if len(types) == 1 else None


def title_kind(title: str) -> str | None:
    """The kind noun of a title's disambiguation: "film" for "Needle (2010 film)", "businessman"
    for "Mike Long (American businessman)"; ``None`` when its last word is a name ("Turkey Creek
    (Econlockhatchee River)" is not a river of its own) or there is none.

    Example:
        >>> title_kind("Needle (2010 film)"), title_kind("State Street (Salt Lake County)")
        ('film', None)
    """
    match = _DISAMBIGUATION.search(title)
    if match is None:
        return None
    words = match.group(1).split()
    if not words or not words[-1].islower():
        return None
    return words[-1]


# "Millrace Park: a ground on the river", "Jonah Pellew, the goalkeeper who stayed": a name, a
# separator, an article, then a description whose head noun ends before its first small word
_DESCRIBED_TITLE = re.compile(
    r"^[^:,\u2014\u2013]+?(?::|,|\s[\u2014\u2013-])\s+(?:a|an|the)\s+(?P<words>[a-z][a-z' -]*)"
)
_DESCRIPTION_ENDS = frozenset(
    {"on", "in", "of", "at", "who", "that", "which", "with", "from", "for", "by", "to", "and"}
)
# "Larkspur: a new lead maintainer" is news about the topic, not what the topic is
_NEWS_WORDS = frozenset({"new", "next", "another", "former", "first"})


def described_kind(title: str) -> str | None:
    """The kind noun of the description a title gives its name ("ground" for "Millrace Park: a
    ground on the river"), when it is a kind :data:`KIND_TYPES` knows; ``None`` for a title
    without one, or whose description is news ("Larkspur: a new lead maintainer").

    Example:
        >>> described_kind("Millrace Park: a ground on the river")
        'ground'
        >>> described_kind("Jonah Pellew, the goalkeeper who stayed"), described_kind("Larkspur: a new lead maintainer")
        ('goalkeeper', None)
    """
    match = _DESCRIBED_TITLE.match(title)
    if match is None:
        return None
    words: list[str] = []
    for word in match.group("words").split():
        if word in _DESCRIPTION_ENDS:
            break
        words.append(word)
    if not words or _NEWS_WORDS & set(words):
        return None
    return words[-1] if words[-1] in KIND_TYPES else None
