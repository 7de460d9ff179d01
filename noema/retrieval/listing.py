"""Which names a fact format lists without a claim.

Notation and natural_language state the facts over the confidence floor and list, with no claim,
the names of the facts under it (notation's entity lines, natural_language's "Also named:" line):
they cost tokens and tell the reader only that a thing is there, so a name no reader could use is
never listed: a common noun with no type ("power", "support", "backing") or a name cut at a comma
or a dash ("Argentine Confederation,").

Listing only the names that matter to the question was measured and not kept: the names a
question uses, the kind it asks for ("when" a date, "who" a person) and those a low fact joins to
them or to a stated fact's end kept about as many answers inside stated facts and lost about 3
in 100 answers in the context on HotpotQA questions not tuned on.

Example:
    >>> from noema.model.graph import SemanticGraph
    >>> graph = SemanticGraph()
    >>> listable(graph.entities[graph.add_entity("support", "OTHER")])
    False
    >>> listable(graph.entities[graph.add_entity("Trondheim", "GPE")])
    True
"""

from __future__ import annotations

import re

from noema.model.records import Entity

__all__ = ["listable"]

_CUT = re.compile(r"[,;:\-–—]$")


def listable(entity: Entity) -> bool:
    """Whether a name may be listed without a claim (see the module docstring)."""
    name = entity.name.strip()
    if not name or _CUT.search(name):
        return False
    return entity.type != "OTHER" or any(c.isupper() or c.isdigit() for c in name)
