"""Retrieval options: every ``retrieve()`` option with its default, in one place, checked once.

:class:`RetrieveOptions` is what :meth:`noema.KnowledgeBase.retrieve`, the CLI, :func:`noema.compress`,
:func:`noema.evaluate` and the LangChain and LlamaIndex adapters share, so a default is written
once and a bad value fails the same way everywhere.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import date
from typing import TYPE_CHECKING, Any, TypedDict, get_args

from noema.errors import InputTypeError, OptionError, quote_value
from noema.resources import DEFAULT_TOKEN_MODEL
from noema.retrieval.formats import FORMATS, NOTATION_MIN_CONFIDENCE, Format
from noema.retrieval.steps import STRATEGY_HELP, SeedStrategy
from noema.retrieval.times import as_of_period

# ``**options: Unpack[RetrieveKwargs]`` is read at run time too (tool wrappers read the type
# hints), so Unpack is imported for real, from typing_extensions before Python 3.11
if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover
    from typing_extensions import Unpack

__all__ = [
    "NOTATION_MIN_CONFIDENCE",
    "DEFAULT_SIMILARITY_THRESHOLD",
    "FORMATS",
    "Format",
    "RetrieveKwargs",
    "RetrieveOptions",
    "SEED_STRATEGIES",
    "SeedStrategy",
    "Unpack",
    "option_help",
    "option_names",
]

SEED_STRATEGIES: tuple[str, ...] = get_args(SeedStrategy)

# The knowledge base's merge threshold, shared by KnowledgeBase, compress and the adapters.
DEFAULT_SIMILARITY_THRESHOLD = 0.85


def _option(default: Any, help: str) -> Any:
    """A retrieve option: its default and the one line every surface (the CLI's flags, the MCP
    tools' parameters) describes it with."""
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class RetrieveOptions:
    """The options of one retrieval, validated when built.

    Attributes:
        top_k: vector-search hits over the fact vectors used as seeds (``fact_matches``).
        hops: how far the graph walk goes from the seeds' entities.
        max_tokens: the budget of the returned text, counted with ``token_model``.
        format: ``"notation"``, ``"natural_language"`` (the facts decoded to sentences) or
            ``"sentences"`` (the source sentences of the chosen facts, grouped by document).
        token_model: the tiktoken encoding that counts the budget.
        seeds: ``"graph"`` (default) adds seeds from the facts' source sentences and hops from
            the seeds' entities to the documents about them; ``"vector"`` is the three steps of
            the original design exactly: the ``top_k`` vector hits, the walk, packing.
        min_similarity: when set, a question whose best fact and sentence are both less similar
            than this gets an empty result, and no seed below it is used.
        min_confidence: facts whose confidence (the measured precision of the pattern that
            read them) is below this are not stated: notation keeps only their entities' lines,
            natural_language names those entities in one "Also named: ..." line without a
            claim; ``"sentences"`` still uses them to choose sentences, since there the sentence
            is the evidence (each format's ``below_floor`` in
            :data:`~noema.retrieval.formats.FORMATS`). ``None`` (default): the format's
            ``default_floor``, :data:`NOTATION_MIN_CONFIDENCE` for notation and natural_language
            and 0 for sentences. 0 states every fact. ``fact_matches`` stays the vector-search hits.
        as_of: keep only the facts valid on this day: a ``datetime.date``, an ISO date string
            (``"2005"``, ``"2005-06"``, ``"2005-06-01"``: a year or month is every day of it) or
            ``"now"`` (today, read at each retrieval). A fact whose time does not overlap it
            is not stated (and in ``"sentences"`` a sentence none of whose facts is valid then
            is not shown), though it still leads the search to what is: the facts stated are
            those the same call without ``as_of`` states, less the ones invalid then (or, when
            every fact seed is invalid, the best valid ones too); a fact without a time, or
            with a time that is no ISO date or interval, is kept, since nothing says it is not
            valid. ``None`` (default): every fact, a time in the question ordering those that
            match it first (see :mod:`noema.retrieval.timeorder`).

    Example:
        >>> RetrieveOptions().max_tokens
        200
        >>> RetrieveOptions(top_k=0)
        Traceback (most recent call last):
        ...
        noema.errors.OptionError: top_k must be an integer >= 1, got 0
    """

    top_k: int = _option(5, "vector-search hits over the fact vectors used as seeds")
    hops: int = _option(1, "how far the graph walk goes from the seeds' entities")
    max_tokens: int = _option(
        200, f"the budget of the returned text, in tokens ({DEFAULT_TOKEN_MODEL} by default)"
    )
    format: Format = _option("notation", "how the facts are written")
    token_model: str = _option(DEFAULT_TOKEN_MODEL, "the tiktoken encoding that counts the budget")
    seeds: SeedStrategy = _option(
        "graph", "; ".join(f"{name!r}: {text}" for name, text in STRATEGY_HELP.items())
    )
    min_similarity: float | None = _option(
        None, "return nothing when no fact or sentence is at least this similar to the question"
    )
    min_confidence: float | None = _option(
        None,
        "state no fact read with less confidence than this: notation keeps its entities' lines, "
        "natural_language names them in one line without a claim (default: "
        f"{NOTATION_MIN_CONFIDENCE} for notation and natural_language, 0 for sentences; 0 "
        "states every fact)",
    )
    as_of: str | date | None = _option(
        None,
        "keep only facts valid on this date: 2005, 2005-06, 2005-06-01 or 'now' (facts "
        "without a time are kept)",
    )

    def __post_init__(self) -> None:
        if not isinstance(self.format, str) or self.format not in FORMATS:
            raise OptionError(
                f"format must be one of {', '.join(map(repr, FORMATS))}, got {quote_value(self.format)}"
            )
        if self.seeds not in SEED_STRATEGIES:
            raise OptionError(
                f"seeds must be one of {', '.join(map(repr, SEED_STRATEGIES))}, got {quote_value(self.seeds)}"
            )
        for name, low in (("top_k", 1), ("hops", 0), ("max_tokens", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise OptionError(f"{name} must be an integer >= {low}, got {quote_value(value)}")
        if not isinstance(self.token_model, str) or not self.token_model:
            raise OptionError(
                f"token_model must be a tiktoken encoding name, got {quote_value(self.token_model)}"
            )
        for name, low in (("min_similarity", -1), ("min_confidence", 0)):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or not low <= value <= 1
            ):
                raise OptionError(
                    f"{name} must be a number from {low} to 1 or None, got {quote_value(value)}"
                )
        if self.as_of is not None:
            as_of_period(self.as_of)  # raises OptionError naming the forms it takes

    def confidence_floor(self) -> float:
        """The ``min_confidence`` in force: the option, else the format's default.

        Example:
            >>> RetrieveOptions().confidence_floor()
            0.3
            >>> RetrieveOptions(format="sentences").confidence_floor()
            0.0
        """
        if self.min_confidence is not None:
            return float(self.min_confidence)
        return FORMATS[self.format].default_floor

    @classmethod
    def of(cls, source: Mapping[str, Any] | object) -> RetrieveOptions:
        """The options named in a mapping (a call's arguments) or set as attributes of an object
        (an adapter's fields); other names are ignored, missing ones take their default.

        Example:
            >>> RetrieveOptions.of({"hops": 2, "question": "ignored"}).hops
            2
        """
        names = option_names()
        if isinstance(source, Mapping):
            return cls(**{n: source[n] for n in names if n in source})
        return cls(**{n: getattr(source, n) for n in names if hasattr(source, n)})

    def updated(self, **changes: Any) -> RetrieveOptions:
        """A copy with ``changes`` applied and checked; an unknown option name raises.

        Example:
            >>> RetrieveOptions().updated(hops=2).hops
            2
        """
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise InputTypeError(
                f"unknown retrieve option {quote_value(unknown[0])}; the options are {', '.join(option_names())}"
            )
        return replace(self, **changes)

    def as_kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments for :meth:`noema.KnowledgeBase.retrieve`."""
        return asdict(self)


class RetrieveKwargs(TypedDict, total=False):
    """The retrieve options as keyword arguments (``**options`` of
    :meth:`noema.KnowledgeBase.retrieve`, :func:`noema.compress` and the LlamaIndex retriever),
    each typed as its :class:`RetrieveOptions` field; a test holds the two to the same names."""

    top_k: int
    hops: int
    max_tokens: int
    format: Format
    token_model: str
    seeds: SeedStrategy
    min_similarity: float | None
    min_confidence: float | None
    as_of: str | date | None


if TYPE_CHECKING:
    # pydantic for type checkers only: ``import noema`` does not import it
    from pydantic import BaseModel

    class RetrieveFieldTypes(BaseModel):
        """The retrieve options as type checkers see the adapters' pydantic fields (at run time
        :mod:`noema.adapters` makes those fields from :class:`RetrieveOptions`, which a class
        body cannot be); a test holds the two to the same names, types and defaults."""

        top_k: int = RetrieveOptions.top_k
        hops: int = RetrieveOptions.hops
        max_tokens: int = RetrieveOptions.max_tokens
        format: Format = RetrieveOptions.format
        token_model: str = RetrieveOptions.token_model
        seeds: SeedStrategy = RetrieveOptions.seeds
        min_similarity: float | None = RetrieveOptions.min_similarity
        min_confidence: float | None = RetrieveOptions.min_confidence
        as_of: str | date | None = RetrieveOptions.as_of


def option_help(name: str) -> str:
    """The one-line description of the retrieve option ``name``.

    Example:
        >>> option_help("hops")
        "how far the graph walk goes from the seeds' entities"
    """
    return str(_FIELDS[name].metadata["help"])


def option_names() -> tuple[str, ...]:
    """The names of the retrieve options, in declaration order."""
    return tuple(f.name for f in fields(RetrieveOptions))


_FIELDS = {f.name: f for f in fields(RetrieveOptions)}
