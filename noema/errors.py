"""The one exception tree of Noema.

Every error Noema raises on purpose derives from :class:`NoemaError`. Where the documentation
promises a built-in type, the subclass inherits it too, so ``except ValueError`` keeps working::

    NoemaError
    +-- NotationError        (ValueError)   malformed notation, or a name that cannot be encoded
    +-- GraphError           (ValueError)   unknown entity type, dangling id, bad argument
    +-- OptionError          (ValueError)   an option, argument or input value Noema refuses
    +-- InputTypeError       (TypeError)    an argument of the wrong type
    +-- UnknownIdError       (KeyError)     an id the knowledge base does not hold
    +-- MissingResourceError (LookupError)  a model or data file that is not installed
    +-- BundleError                         a .noema file that is corrupt, truncated or foreign
        +-- ModelMismatchError              a bundle built with another embedding model

:func:`quote_value` is how a message quotes the bad value it names.
"""

from __future__ import annotations

import reprlib

__all__ = [
    "BundleError",
    "GraphError",
    "InputTypeError",
    "MissingResourceError",
    "ModelMismatchError",
    "NoemaError",
    "NotationError",
    "OptionError",
    "UnknownIdError",
    "quote_value",
]

# How much of a bad value a message quotes: enough to recognise it, never the megabytes a
# caller may have passed by mistake.
QUOTED_CHARACTERS = 80
_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = QUOTED_CHARACTERS
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxset = _SHORT.maxdict = 4


def quote_value(value: object) -> str:
    """``repr(value)`` for an error message, cut to about 80 characters; a long string says how
    long it was.

    Example:
        >>> quote_value("2005-06")
        "'2005-06'"
        >>> quote_value("x" * 5_000_000)[-33:]
        "xxxxxx'... (5,000,000 characters)"
        >>> len(quote_value(["x" * 5_000_000] * 10)) <= 83
        True
    """
    if isinstance(value, str):
        if len(value) <= QUOTED_CHARACTERS:
            return repr(value)
        return f"{value[:QUOTED_CHARACTERS]!r}... ({len(value):,} characters)"
    text = _SHORT.repr(value)  # not repr(): a container of long values is cut inside too
    return text if len(text) <= QUOTED_CHARACTERS else text[:QUOTED_CHARACTERS] + "..."


class NoemaError(Exception):
    """Base class of every error Noema raises on purpose."""


class NotationError(NoemaError, ValueError):
    """Notation that does not follow the grammar, or a graph that cannot be written as notation.

    Attributes:
        line_number: 1-based line of the offending line, or ``None`` when encoding.
        line: the offending line itself, or ``None``.
    """

    def __init__(self, message: str, *, line_number: int | None = None, line: str | None = None):
        self.line_number = line_number
        self.line = line
        if line_number is not None:
            message = f"line {line_number}: {message} (line was {quote_value(line)})"
        super().__init__(message)


class GraphError(NoemaError, ValueError):
    """An invalid operation on a :class:`~noema.SemanticGraph` (unknown type, dangling id)."""


class OptionError(NoemaError, ValueError):
    """An option, argument or input value Noema does not accept; the message names it and what
    it accepts."""


class InputTypeError(NoemaError, TypeError):
    """An argument of the wrong type; the message names the type it takes."""


class UnknownIdError(NoemaError, KeyError):
    """An id (a document's, an entity's) that the knowledge base does not hold."""

    def __str__(self) -> str:
        # KeyError shows its message quoted, as if it were the missing key
        return str(self.args[0]) if self.args else ""


class MissingResourceError(NoemaError, LookupError):
    """A model, package or data file Noema needs is not installed; the message says what to install."""


class BundleError(NoemaError):
    """A ``.noema`` bundle that is corrupt, truncated, foreign or from a newer Noema."""


class ModelMismatchError(BundleError):
    """A bundle whose vectors were made by another embedding model than the one asked for."""
