"""LangChain integration: Noema as a retriever, a document transformer and a context compressor.

Install with ``pip install 'noema-graph[langchain]'``, or ``pip install '.[langchain]'`` in a
checkout.

Example:
    >>> from noema_langchain import NoemaRetriever
    >>> retriever = NoemaRetriever(knowledge_base="company.noema")  # doctest: +SKIP
    >>> retriever.invoke("Who is Google's CEO?")[0].page_content  # doctest: +SKIP
"""

try:
    import langchain_core  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "noema_langchain needs langchain-core; install it with: pip install 'noema-graph[langchain]'"
        " (from a checkout: pip install '.[langchain]')"
    ) from exc

from noema_langchain.compressor import NoemaContextCompressor
from noema_langchain.retriever import NoemaRetriever
from noema_langchain.transformer import NoemaDocumentTransformer

__all__ = ["NoemaContextCompressor", "NoemaDocumentTransformer", "NoemaRetriever"]
