"""KnowledgeBase: ingest documents into one canonical graph, retrieve facts, save and load bundles."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from noema._loading import LoadOptions, check_dimension, checked_model, loaded_threshold
from noema._version import __version__
from noema.errors import ModelMismatchError
from noema.ingest.canonical import Canonicalizer, IngestReport
from noema.ingest.extractor import Extractor
from noema.ingest.parse import SpacyExtractor
from noema.ingest.sources import Source, as_keyed_documents
from noema.model.facttext import fact_text
from noema.model.graph import SemanticGraph
from noema.model.view import graph_html
from noema.repairs import EntityRepairs
from noema.resources import DEFAULT_EMBEDDING_MODEL, DEFAULT_SPACY_MODEL
from noema.retrieval.formats import render_fact, render_facts
from noema.retrieval.options import (
    DEFAULT_SIMILARITY_THRESHOLD,
    Format,
    RetrieveKwargs,
    RetrieveOptions,
    Unpack,
)
from noema.retrieval.pack import split_blocks
from noema.retrieval.result import RetrievalResult
from noema.retrieval.retrieve import retrieve_question
from noema.storage.bundle import BundleContents, BundleSettings
from noema.storage.names import StoredNames
from noema.storage.store import NOT_MERGED, Snapshot, Store, read
from noema.vectors.embed import (
    Embedder,
    SentenceTransformerEmbedder,
    Vectors,
    query_embedding,
)
from noema.vectors.index import SearchMode, check_search_mode
from noema.writes import delete_documents, ingest_documents, merge_snapshot

__all__ = ["IngestReport", "KnowledgeBase", "Source"]

ProgressCallback = Callable[[int, int], None]


class KnowledgeBase(EntityRepairs):
    """A canonical knowledge graph with a vector index over its facts.

    Args:
        similarity_threshold: embedding similarity at or above which two same-type entities
            merge; higher merges less.
        spacy_model: spaCy pipeline for the built-in extractor (falls back to an installed
            equivalent; :attr:`spacy_model_name` says which was loaded).
        embedding_model: sentence-transformers model name or path for facts and entity names.
        extractor: replaces the built-in spaCy extractor (any :class:`noema.Extractor`).
        embedder: replaces the embedding model (any :class:`noema.Embedder`).
        n_process: processes for spaCy parsing.
        search: how the fact index and the sentence sidecar are searched: ``"exact"``,
            ``"approximate"`` (a faiss IVF index proposes candidates, re-scored exactly) or
            ``"auto"``: approximate from :data:`noema.vectors.index.APPROXIMATE_FROM` vectors on.

    ``retrieve`` may run from many threads at once; ``ingest`` takes a lock, builds the new
    state aside and swaps it in, so a retrieval sees the knowledge base before or after an
    ingest, never halfway, and a failed ingest changes nothing. The other writes
    (``delete_documents``, ``merge``) and the repairs of entities (``merge_entities``,
    ``split_entity``, ``retype``, from :class:`noema.repairs.EntityRepairs`) work the same way.

    Example:
        >>> kb = KnowledgeBase()
        >>> _ = kb.ingest(["Larry Page founded Google.", "Sundar Pichai is the CEO of Google."])
        >>> print(kb.retrieve("Who is Google's CEO?", max_tokens=50).text)
        #1 Sundar Pichai :PERSON
        #2 Google :ORG
        #3 Larry Page :PERSON
        #1 -ceo_of-> #2
        #3 -found-> #2
    """

    def __init__(
        self,
        similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
        spacy_model: str = DEFAULT_SPACY_MODEL,
        embedding_model: str = DEFAULT_EMBEDDING_MODEL,
        *,
        extractor: Extractor | None = None,
        embedder: Embedder | None = None,
        n_process: int = 1,
        search: SearchMode = "auto",
        allow_download: bool = True,
    ) -> None:
        self.search: SearchMode = check_search_mode(search)
        self.similarity_threshold = similarity_threshold
        self.spacy_model = spacy_model
        self.embedding_model = embedder.name if embedder is not None else embedding_model
        self.extractor: Extractor = extractor or SpacyExtractor(spacy_model, n_process=n_process)
        self.embedder: Embedder = embedder or SentenceTransformerEmbedder(
            embedding_model, allow_download=allow_download
        )
        self._names = Canonicalizer(self.embedder, similarity_threshold)
        # the name vectors of the bundle this was loaded from, handed to the canonicalizer at
        # its first use (a write or a save) rather than copied on opening
        self._stored_names: StoredNames | None = None
        # Graph, fact index and sentence sidecar in one snapshot: a reader takes it once and
        # uses nothing else, so it never waits and never sees half a write. Writers build the
        # next graph aside and the store publishes it whole (noema.storage.store).
        self._store = Store(self.embedder, self.search)
        self._spacy_model_name: str | None = None
        self.manifest: dict[str, Any] | None = None
        """The manifest of the bundle this knowledge base was loaded from or last saved to, if
        any."""

    # -- state ---------------------------------------------------------------------------------
    @property
    def _canonicalizer(self) -> Canonicalizer:
        """The canonicalizer, holding the name vectors the bundle kept from its first use on
        (copied then, out of the bundle's file, once)."""
        stored = self._stored_names
        if stored is not None:
            self._names.remember(stored.copied())
            self._stored_names = None
        return self._names

    @property
    def _snapshot(self) -> Snapshot:
        return self._store.snapshot

    @property
    def state(self) -> Snapshot:
        """The current state as one snapshot (graph, fact index, sentence sidecar, merge log),
        read at once so its parts belong together: for diagnostics and benchmarks. Treat it as
        read-only; change the knowledge base through its methods."""
        return self._store.snapshot

    @property
    def graph(self) -> SemanticGraph:
        """The canonical graph (treat it as read-only; change it through the methods)."""
        return self._snapshot.graph

    @property
    def spacy_model_name(self) -> str:
        """The spaCy package actually used (after fallback), or the extractor's class name."""
        if self._spacy_model_name is None:
            if isinstance(self.extractor, SpacyExtractor):
                self._spacy_model_name = self.extractor.model_name
            else:
                self._spacy_model_name = type(self.extractor).__name__
        return self._spacy_model_name

    def __repr__(self) -> str:
        g = self._snapshot.graph
        return (
            f"KnowledgeBase(documents={len(g.documents)}, entities={len(g.entities)}, "
            f"relations={len(g.relations)}, events={len(g.events)})"
        )

    def _repr_html_(self) -> str:
        return self.to_html()

    def to_html(self) -> str:
        """The whole graph as a picture: self-contained HTML (no scripts, no network)."""
        return graph_html(self._snapshot.graph, title=repr(self))

    # -- ingest --------------------------------------------------------------------------------
    def ingest(
        self,
        sources: Source | Iterable[Source],
        *,
        progress: ProgressCallback | None = None,
        root: str | os.PathLike[str] | None = None,
        embed_progress: ProgressCallback | None = None,
        save_to: str | os.PathLike[str] | None = None,
    ) -> IngestReport:
        """Parse, canonicalize against what is stored, and add the facts of ``sources``.

        ``sources`` is one or many of: a string of text, a :class:`Document`, a path
        (``pathlib.Path``) to a UTF-8 text file, a LangChain ``Document`` or a LlamaIndex
        ``Document``/``TextNode`` (their metadata is kept). A document already stored with the
        same id and text is skipped; with the same id and other text, it replaces the stored one
        and its facts. ``progress(done, total)`` is called as documents are parsed: after each
        document with the built-in extractor, after each batch of 256 with another; embedding the
        new facts and sentences follows the last call, and ``embed_progress(done, total)`` is
        called as it goes (texts embedded and texts known so far; the total grows when the
        sentences follow the facts; only the built-in embedder reports); it is also called,
        counting from 0, while each parsed batch's names are embedded to merge them.
        :func:`noema.vectors.embed.current_embedding_stage` says which stage a call counts.
        A file's id is its path relative to ``root`` when given (``"google.md"``), else
        ``"file:"`` and its resolved path, so the same file is one document however it is named.
        A LangChain ``Document``'s id is its ``id``, else ``metadata["source"]`` or ``"file_path"``;
        a LlamaIndex reader's document is its file's. One key's chunks in one call are ``key#1``,
        ``key#2``..., and replace all that was stored under the key.
        ``save_to``: a bundle to :meth:`save` to before the call returns; if that save fails
        (a full disk), the ingest is undone too, so the knowledge base and the file agree.

        Example:
            >>> kb = KnowledgeBase()
            >>> kb.ingest(["Larry Page founded Google."]).new_relations
            1
        """
        documents, keys = as_keyed_documents(sources, root)
        return ingest_documents(
            self._store,
            self._canonicalizer,
            self.extractor,
            documents,
            progress=progress,
            embed_progress=embed_progress,
            replaces=keys,
            then=None if save_to is None else lambda: self.save(save_to),
        )

    def delete_documents(self, document_ids: Iterable[str]) -> tuple[int, int]:
        """Remove documents and what only they supported; returns (entities, facts) removed.

        Facts and entities also mentioned by other documents stay (without the deleted
        mentions). The fact index drops the removed rows; no other fact is embedded again. The
        key of chunks (a LangChain ``source`` ingested as ``source#1``, ``source#2``...) names
        them all.

        Example:
            >>> from noema import Document
            >>> kb = KnowledgeBase()
            >>> _ = kb.ingest([Document("Larry Page founded Google.", id="a")])
            >>> kb.delete_documents(["a"])
            (2, 1)
        """
        return delete_documents(self._store, list(dict.fromkeys(document_ids)))

    def merge(self, other: KnowledgeBase) -> IngestReport:
        """Add another knowledge base: canonicalize its graph into this one without parsing any
        text again, reusing its fact vectors wherever a fact's notation did not change.

        Raises:
            ModelMismatchError: the two were built with different embedding models.
            BundleError: ``other`` was loaded from a bundle, and a member that opening did not
                hash (see :meth:`load`) does not match its sha256.
        """
        if other.embedding_model != self.embedding_model:
            raise ModelMismatchError(
                f"cannot merge a knowledge base built with {other.embedding_model!r} into one "
                f"built with {self.embedding_model!r}"
            )
        other._store.check_hashes(NOT_MERGED)
        return merge_snapshot(self._store, self._canonicalizer, other._snapshot)

    # -- index ---------------------------------------------------------------------------------
    def fact_text(self, fact_id: str) -> str:
        """The text a fact is embedded as: its notation block decoded to a sentence
        (:data:`noema.model.facttext.FACT_RENDERING`)."""
        return fact_text(self._snapshot.graph, fact_id)

    def render_fact(self, fact_id: str, format: Format = "notation") -> str:
        """One fact on its own, in a retrieval format: its notation block, that block decoded,
        or (``"sentences"``) the first sentence it came from (decoded when it has none).

        Example:
            >>> kb = KnowledgeBase()
            >>> _ = kb.ingest(["Larry Page founded Google."])
            >>> kb.render_fact(next(iter(kb.graph.relations)), "natural_language")
            'Larry Page found Google.'
        """
        return render_fact(self._snapshot.graph, fact_id, format)

    def render_facts(self, fact_ids: Sequence[str], format: Format = "notation") -> str:
        """Facts as one self-contained text in a retrieval format (local ``#n`` ids of their
        own), with no budget: how the LangChain block mode splits a retrieval into ``k`` blocks.

        Example:
            >>> kb = KnowledgeBase()
            >>> _ = kb.ingest(["Larry Page founded Google."])
            >>> print(kb.render_facts(list(kb.graph.relations)))
            #1 Larry Page :PERSON
            #2 Google :ORG
            #1 -found-> #2
        """
        return render_facts(self._snapshot.graph, fact_ids, format)

    def render_blocks(
        self, result: RetrievalResult, k: int, max_tokens: int | None = None
    ) -> list[tuple[list[str], str, int]]:
        """A retrieval's facts as at most ``k`` self-contained texts of consecutive facts, in
        its format, together within ``max_tokens`` (default: the result's own token count,
        which the budget bounded): what the adapters' block mode returns when asked for ``k``
        Documents or nodes. Each text repeats the entity lines it needs, so a split holds a few
        facts fewer. Each item is the text's fact ids, the text and its token count.

        Example:
            >>> kb = KnowledgeBase()
            >>> _ = kb.ingest(["Larry Page founded Google. Google acquired YouTube."])
            >>> result = kb.retrieve("Who founded Google?", max_tokens=100)
            >>> [len(facts) for facts, _, _ in kb.render_blocks(result, 2, 100)]
            [1, 1]
        """
        budget = result.token_count if max_tokens is None else max_tokens
        return split_blocks(
            self._snapshot.graph, result.fact_ids, k, budget, result.format, result.token_model
        )

    # -- retrieve ------------------------------------------------------------------------------
    def retrieve(
        self,
        question: str,
        *,
        filters: Mapping[str, Any] | None = None,
        explain: bool = False,
        **options: Unpack[RetrieveKwargs],
    ) -> RetrievalResult:
        """The facts relevant to ``question`` within ``max_tokens``, as notation, decoded
        sentences, or the source sentences they came from.

        The options are those of :class:`noema.RetrieveOptions`, by name (``top_k``, ``hops``,
        ``max_tokens``, ``format``, ``token_model``, ``seeds``, ``min_similarity``,
        ``min_confidence``, ``as_of``); an unknown name raises. ``as_of`` keeps only the facts
        valid on a date; without it, a time in the question orders the facts that match it first. ``filters`` restricts the facts
        used, before seeds are chosen and during expansion: ``{"entity_types": [...],
        "predicates": [...], "document_ids": [...], "metadata": {key: value}}``.
        ``explain=True`` fills ``result.explanation``.

        Raises:
            TypeError: ``question`` is not a string.
            ValueError: ``question`` is empty; ``format`` is not "notation",
                "natural_language" or "sentences"; ``top_k < 1``, ``hops < 0``,
                ``max_tokens < 1``; or ``filters`` names an unknown field or holds a value of the
                wrong type.

        Example:
            >>> kb = KnowledgeBase()
            >>> _ = kb.ingest(["Sundar Pichai is the CEO of Google."])
            >>> kb.retrieve("Who runs Google?", format="natural_language").text
            'Sundar Pichai is the ceo of Google.'
        """
        checked = RetrieveOptions().updated(**options)
        return self.retrieve_with(question, checked, filters=filters, explain=explain)

    def retrieve_with(
        self,
        question: str,
        options: RetrieveOptions,
        *,
        filters: Mapping[str, Any] | None = None,
        explain: bool = False,
    ) -> RetrievalResult:
        """:meth:`retrieve` with its options as one :class:`noema.RetrieveOptions` (what the
        adapters hold).

        Example:
            >>> kb = KnowledgeBase()
            >>> _ = kb.ingest(["Sundar Pichai is the CEO of Google."])
            >>> kb.retrieve_with("Who runs Google?", RetrieveOptions(max_tokens=20)).token_count <= 20
            True
        """
        snapshot = self._snapshot
        return retrieve_question(
            (snapshot.graph, snapshot.index, snapshot.sentences),
            query_embedding(self.embedder),
            question,
            options,
            filters=filters,
            explain=explain,
        )

    async def aretrieve(self, question: str, **options: Any) -> RetrievalResult:
        """:meth:`retrieve` in a worker thread, so the event loop is not blocked."""
        return await asyncio.to_thread(self.retrieve, question, **options)

    # -- pickling ------------------------------------------------------------------------------
    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (and deep-copied) as its bundle's bytes, which carry every vector and are
        checked again when unpickled; the embedder and extractor go along as objects."""
        return (_unpickle, (self.to_bytes(), self.embedder, self.extractor, self.search))

    # -- bundles -------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the knowledge base to a ``.noema`` bundle, atomically, and set :attr:`manifest`
        to its manifest; returns the path. Saves to one path take turns (a lock beside it).

        Raises:
            BundleError: ``path`` is the bundle this was loaded from or last saved to, and
                another program has replaced or written it since (its save would be lost); or
                a member of the bundle this was loaded from that opening did not hash (see
                :meth:`load`) does not match its sha256: nothing is written.
        """
        self._store.save(
            path,
            settings=self._bundle_settings(),
            name_vectors=self._name_vectors,
            names_kept=self._stored_names is not None,
            # set in the save's turn: two saves to one path note the manifest of the later
            written=partial(setattr, self, "manifest"),
        )
        return Path(path)

    def to_bytes(self) -> bytes:
        """The bytes :meth:`save` writes, to keep in memory or send elsewhere (a database, another
        process); :meth:`from_bytes` reads them back."""
        return self._store.to_bytes(
            settings=self._bundle_settings(),
            name_vectors=self._name_vectors,
            names_kept=self._stored_names is not None,
        )

    def _name_vectors(self, graph: SemanticGraph) -> dict[str, Vectors]:
        # the canonicalizer only when asked: taking it copies the stored names out of the
        # bundle, which a save copying names.bin has no use for
        return self._canonicalizer.name_vectors(graph)

    def _bundle_settings(self) -> BundleSettings:
        return BundleSettings(
            embedding_model=self.embedding_model,
            spacy_model=self.spacy_model_name,
            similarity_threshold=self.similarity_threshold,
            noema_version=__version__,
        )

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        embedding_model: str | None = None,
        embedder: Embedder | None = None,
        extractor: Extractor | None = None,
        spacy_model: str | None = None,
        similarity_threshold: float | None = None,
        search: SearchMode = "auto",
        allow_download: bool = False,
        max_memory: int | None = None,
        verify: bool = False,
    ) -> KnowledgeBase:
        """Open a bundle written by :meth:`save`, reusing its vectors and index (``search`` as
        for the constructor; an approximate index the bundle kept is built from its parts,
        one it did not keep is trained on load).
        The embedding model the manifest names is looked for only in installed packages, local
        paths and the Hugging Face cache: opening a stranger's bundle reaches no network unless
        ``allow_download=True``. ``max_memory`` (bytes) bounds what opening may take, judged
        from the sizes the bundle declares before anything is inflated; by default half the
        machine's memory, and a ``graph.json`` that inflates implausibly (a decompression bomb)
        is refused.

        Opening checks every member's structure and the sha256 of the small ones; the large
        ones (and the sentence keys a large ``graph.columns`` holds, which hash each sentence's
        text) are checked before they go into another bundle (save, merge). ``verify=True``
        checks them all first, as ``noema validate`` does, and that ``graph.json`` (within
        ``max_memory``; parsed only where it is not what this version writes for the graph) and
        ``index.faiss`` agree with ``graph.columns`` and the vectors.

        Raises:
            BundleError: the bundle is corrupt, truncated, foreign or from a newer Noema; with
                ``verify=True``, also a member that does not match its sha256 or does not agree
                with the others (named).
            ModelMismatchError: ``embedding_model`` (or ``embedder.name``) differs from the model
                the bundle was built with.
        """
        models = (embedding_model, embedder, extractor, spacy_model)
        options = LoadOptions(
            *models, similarity_threshold, search, allow_download, max_memory, verify
        )
        contents = read(path, max_memory=max_memory, verify=verify)
        return cls._from_contents(contents, str(path), options)

    @classmethod
    def from_bytes(cls, data: bytes, **options: Any) -> KnowledgeBase:
        """:meth:`load` for the bytes of a bundle (:meth:`to_bytes`); same options and errors."""
        checked = LoadOptions(**options)
        contents = read(data, max_memory=checked.max_memory, verify=checked.verify)
        return cls._from_contents(contents, "<bytes>", checked)

    @classmethod
    def _from_contents(
        cls, contents: BundleContents, name: str, options: LoadOptions
    ) -> KnowledgeBase:
        manifest = contents.manifest
        stored_model = checked_model(manifest, name, options)
        kb = cls(
            similarity_threshold=loaded_threshold(manifest, options),
            spacy_model=options.spacy_model or DEFAULT_SPACY_MODEL,
            embedding_model=stored_model,
            extractor=options.extractor,
            embedder=options.embedder,
            search=options.search,
            allow_download=options.allow_download,
        )
        check_dimension(contents, name, stored_model, kb.embedder.dimension)
        kb._store.open(contents)
        kb._stored_names = contents.name_vectors
        kb._spacy_model_name = None if options.spacy_model else manifest["spacy_model"]
        kb.manifest = manifest
        return kb


def _unpickle(
    data: bytes, embedder: Embedder, extractor: Extractor, search: SearchMode
) -> KnowledgeBase:
    return KnowledgeBase.from_bytes(data, embedder=embedder, extractor=extractor, search=search)
