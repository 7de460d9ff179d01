"""What a retrieval plan is made of: the names of the strategies that make plans
(:data:`SeedStrategy`, each with its one-line help), the :class:`Step` records a plan is a list
of, and the :data:`Reason` each step gives, with every text said about it: what it means, the
word the MCP schema lists, and the line ``noema query --explain`` prints.

A strategy's function is registered in :mod:`noema.retrieval.strategies`; its name and help are
here, below the options that accept it (a test holds the names equal to the registry's keys). A
strategy with a new kind of step adds its reason here, beside the others' texts (a test holds the
texts equal to :data:`Reason`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from noema.model.spans import Sentence

__all__ = [
    "REASONS",
    "STRATEGY_HELP",
    "Reason",
    "ReasonText",
    "SeedStrategy",
    "Step",
    "explain_reason",
    "reason_choices",
]

SeedStrategy = Literal["graph", "vector"]

STRATEGY_HELP: Mapping[SeedStrategy, str] = MappingProxyType(
    {
        "graph": "fact and sentence seeds with a hop to the documents about their entities",
        "vector": "only the top-k fact vectors (the original design)",
    }
)

Reason = Literal["seed", "sentence", "hop", "bridge", "expansion", "time"]


@dataclass(frozen=True)
class ReasonText:
    """What is said about one reason.

    ``meaning``: why a fact with this reason is in the result. ``explain``: the ``--explain``
    line, a :meth:`str.format` template of ``seed`` (the seed fact, rendered), ``last`` (the
    name of the last entity of the path), ``similarity``, ``step`` and ``hops``. ``note``: said
    beside its name where the reasons are only listed (the MCP schema).
    """

    meaning: str
    explain: str
    note: str = ""


REASONS: Mapping[Reason, ReasonText] = MappingProxyType(
    {
        "seed": ReasonText(
            "a vector-search hit over the fact vectors", "seed, similarity {similarity}"
        ),
        "sentence": ReasonText(
            "a fact of a source sentence close to the question",
            "its sentence is a seed, similarity {similarity}",
        ),
        "hop": ReasonText(
            "a fact of a sentence of the document about an entity of a better-ranked sentence",
            "hop from {seed} to the document about {last}, similarity {similarity}",
        ),
        "bridge": ReasonText(
            "a fact of a sentence found by a further search: the question with the name of a "
            "bridge entity of earlier evidence",
            "step {step}: a search with the bridge {last} named by {seed}, similarity {similarity}",
        ),
        "expansion": ReasonText(
            "reached by the graph walk", "{hops} hop(s) from {seed}, similarity {similarity}"
        ),
        "time": ReasonText(
            "an event of the same role predicate and end as the fact after it, valid later, so the "
            "current one is read before the former (see :mod:`noema.retrieval.timeorder`)",
            "a rival of {seed}",
            note="a rival fact valid later",
        ),
    }
)


def reason_choices() -> str:
    """The reasons in a line, for a schema's description.

    Example:
        >>> reason_choices()
        'seed, sentence, hop, bridge, expansion or time (a rival fact valid later)'
    """
    words = [f"{r} ({t.note})" if t.note else r for r, t in REASONS.items()]
    return f"{', '.join(words[:-1])} or {words[-1]}"


def explain_reason(
    reason: Reason, *, seed: str, last: str, similarity: float | None, step: int, hops: int
) -> str:
    """Why one fact is in a result, in the words of ``noema query --explain``.

    Example:
        >>> explain_reason("seed", seed="", last="", similarity=0.5, step=1, hops=0)
        'seed, similarity 0.5'
    """
    template = REASONS[reason].explain
    return template.format(seed=seed, last=last, similarity=similarity, step=step, hops=hops)


@dataclass(frozen=True)
class Step:
    """One fact of the packing order and why it is there.

    ``similarity`` is the cosine similarity to the question of what chose the fact: the fact's
    vector for seeds and walked facts, its sentence's vector for sentence seeds and hops.
    ``sentence`` is the source sentence shown for it in ``format="sentences"``. ``time`` says
    how its time placed it (:mod:`noema.retrieval.timeorder`), ``None`` when it did not.
    """

    fact_id: str
    reason: Reason
    similarity: float | None
    seed_id: str
    hops: int
    path: tuple[str, ...]
    sentence: Sentence | None
    step: int = 1
    time: str | None = None
