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
"""

from __future__ import annotations

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
]


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
            message = f"line {line_number}: {message} (line was {line!r})"
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
