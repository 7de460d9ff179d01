"""LlamaIndex integration: Noema as a retriever and as a node postprocessor.

Install with ``pip install 'noema-graph[llamaindex]'``, or ``pip install '.[llamaindex]'`` in a
checkout.

Example:
    >>> from noema_llamaindex import NoemaRetriever
    >>> retriever = NoemaRetriever("company.noema")  # doctest: +SKIP
    >>> retriever.retrieve("Who is Google's CEO?")[0].node.text  # doctest: +SKIP
"""

try:
    import llama_index.core  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "noema_llamaindex needs llama-index-core; install it with:"
        " pip install 'noema-graph[llamaindex]' (from a checkout: pip install '.[llamaindex]')"
    ) from exc

from noema_llamaindex.postprocessor import NoemaNodePostprocessor
from noema_llamaindex.retriever import NoemaRetriever

__all__ = ["NoemaNodePostprocessor", "NoemaRetriever"]
