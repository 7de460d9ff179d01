"""What an extractor promises the knowledge base: the two protocols it accepts.

They sit beside the data model, not beside the spaCy extractor, so that the modules that only take
an extractor (the knowledge base, the compressor) need no parser to name the type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, runtime_checkable

from noema.model.graph import SemanticGraph
from noema.model.records import Document

__all__ = ["INGEST_BATCH", "BatchExtractor", "Extractor", "Progress", "extract_in_batches"]

# Called with how many of the documents have been read so far.
Progress = Callable[[int], None]


@runtime_checkable
class Extractor(Protocol):
    """Anything that turns documents into a graph of entities and relations (e.g. an LLM).

    The graph :meth:`extract` returns holds every document it was given (``add_document``) and
    entities whose mentions point into those documents. The same name may appear as several
    entities (one per document, say): the knowledge base's canonicalizer merges entities of the
    same name and type, so an extractor need not de-duplicate across documents. Events are
    optional.
    """

    def extract(self, documents: Sequence[Document]) -> SemanticGraph:
        """Return the entities, relations and events found in ``documents``."""
        ...


@runtime_checkable
class BatchExtractor(Extractor, Protocol):
    """An :class:`Extractor` that reads a long run of documents as one stream.

    The knowledge base calls :meth:`extract_batches` rather than :meth:`extract` once per batch
    when an extractor offers it (checked with ``isinstance``), so a parser with a costly start
    (worker processes, a model on a device) starts once per ingest.
    """

    def extract_batches(
        self, documents: Sequence[Document], batch_size: int, progress: Progress | None = None
    ) -> Iterator[SemanticGraph]:
        """One graph per run of ``batch_size`` documents, in order, each what :meth:`extract`
        would give for that run; ``progress(n)`` once the first ``n`` documents are read."""
        ...


# Documents parsed and canonicalized together: a name's type votes are pooled over one batch.
INGEST_BATCH = 256


def extract_in_batches(
    extractor: Extractor,
    documents: Sequence[Document],
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[SemanticGraph]:
    """Graphs for consecutive batches of :data:`INGEST_BATCH` documents, as ingest reads them:
    one ``extract_batches`` stream from a :class:`BatchExtractor` (progress as it reports it),
    else one ``extract`` call per batch (progress per batch). ``progress(done, total)``."""
    total = len(documents)
    if isinstance(extractor, BatchExtractor):
        each = None if progress is None else (lambda n: progress(n, total))
        yield from extractor.extract_batches(documents, INGEST_BATCH, each)
        return
    for start in range(0, total, INGEST_BATCH):
        graph = extractor.extract(documents[start : start + INGEST_BATCH])
        if progress is not None:
            progress(min(start + INGEST_BATCH, total), total)
        yield graph
