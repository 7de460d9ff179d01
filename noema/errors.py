"""The one exception tree of Noema.

Every error Noema raises on purpose derives from :class:`NoemaError`. Where the documentation
promises a built-in type, the subclass inherits it too, so ``except ValueError`` keeps working::

    NoemaError
    +-- NotationError        (ValueError)   malformed notation, or a name that cannot be encoded
    +-- GraphError           (ValueError)   unknown entity type, dangling id, bad argument
    +-- MissingResourceError (LookupError)  a model or data file that is not installed
    +-- BundleError                         a .noema file that is corrupt, truncated or foreign
        +-- ModelMismatchError              a bundle built with another embedding model
"""

from __future__ import annotations

__all__ = [
    "BundleError",
    "GraphError",
    "MissingResourceError",
    "ModelMismatchError",
    "NoemaError",
    "NotationError",
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


class MissingResourceError(NoemaError, LookupError):
    """A model, package or data file Noema needs is not installed; the message says what to install."""


class BundleError(NoemaError):
    """A ``.noema`` bundle that is corrupt, truncated, foreign or from a newer Noema."""


class ModelMismatchError(BundleError):
    """A bundle whose vectors were made by another embedding model than the one asked for."""
