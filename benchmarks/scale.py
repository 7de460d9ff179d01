"""Large knowledge bases: save, bundle size, load, memory, retrieve and ingest at 100k+ facts.

    python benchmarks/scale.py --facts 100000 1000000

A synthetic knowledge base of N facts is built directly as a graph: entity names and types from
Re-DocRED's annotations, predicates from its relation names, three facts per document, each fact
its own sentence ("Willi Schneider member of sports team Germany."). Its fact and sentence
vectors are generated (clustered, unit length) rather than embedded: these figures are about
storage and search, not about the embedding model, which would take hours at this size.
Before the cached measurement the members an open and a retrieval read are read once, as a service
restarted over the same bundle finds them; ``--cold`` measures again with the file cache emptied.

Reported per size: the time to save the bundle and its size; in a fresh process, the time to open
it (after the models are loaded) and the memory it adds beyond its vectors; retrieve p50/p95 over
real questions beside a flat faiss search over the same fact vectors (alone, and with the
question's embedding, which is what a vector store's query costs); and the ingest of 1,000 real
Wikipedia paragraphs into the loaded base beside the same ingest into an empty one.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import mmap
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).parent))
import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402
from _common import data_file, machine, print_table, timer  # noqa: E402

if TYPE_CHECKING:
    import noema
    from noema.vectors.index import VectorIndex

_TYPES = {"PER": "PERSON", "ORG": "ORG", "LOC": "GPE", "TIME": "DATE", "NUM": "OTHER"}
FACTS_PER_DOCUMENT = 3
QUESTIONS = 60


def vocabulary() -> tuple[dict[str, list[str]], list[str]]:
    """Entity names by type and predicates, from Re-DocRED's annotations."""
    docs = json.loads(data_file("redocred/dev_revised.json").read_text())
    names: dict[str, set[str]] = {}
    for doc in docs:
        for vertex in doc["vertexSet"]:
            for mention in vertex:
                name = " ".join(mention["name"].split())
                if len(name) > 1:
                    names.setdefault(_TYPES.get(mention["type"], "OTHER"), set()).add(name)
    relations = json.loads(data_file("redocred/rel_info.json").read_text()).values()
    predicates = sorted({re.sub(r"[^a-z0-9]+", "_", r.lower()).strip("_") for r in relations})
    return {t: sorted(n) for t, n in sorted(names.items())}, predicates


def clustered(
    n: int, dimension: int, rng: np.random.Generator, out: np.ndarray | None = None
) -> np.ndarray:
    """Unit vectors around a few thousand centres, so an approximate index meets the kind of
    structure real embeddings have rather than uniform noise. ``out``: the ``(n, dimension)``
    float32 array to fill (a file's mapping, so millions of rows need no anonymous memory),
    else a new one; filled and normalized a block at a time, without a temporary of every row."""
    centres = rng.standard_normal((max(16, n // 300), dimension)).astype(np.float32)
    if out is None:
        out = np.empty((n, dimension), dtype=np.float32)
    for start in range(0, n, 100_000):
        stop = min(n, start + 100_000)
        block = centres[rng.integers(0, len(centres), stop - start)]
        block += 0.6 * rng.standard_normal((stop - start, dimension)).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start:stop] = block
    return out


def _mapped(
    path: Path, rows: int, width: int, dtype: npt.DTypeLike = np.float32
) -> tuple[mmap.mmap, np.ndarray]:
    """A ``(rows, width)`` array over a new file's shared mapping, and the mapping (for
    :func:`_shedding`): its pages belong to the file cache, not to the process's heap."""
    count = rows * width
    size = max(1, count * np.dtype(dtype).itemsize)
    with open(path, "w+b") as handle:
        handle.truncate(size)
        mapping = mmap.mmap(handle.fileno(), size)
    return mapping, np.frombuffer(mapping, dtype, count).reshape(rows, width)


def _generated(
    path: Path, ids: list[str], rng: np.random.Generator, mappings: list[mmap.mmap]
) -> VectorIndex:
    """An index of :func:`clustered` vectors for ``ids``, generated into a mapping of ``path``
    (added to ``mappings``) and holding it as it is (``VectorIndex.add`` would copy every row
    into memory, twice while it runs), with the approximate index a save of this size writes.
    That index is kept as the parts a bundle stores, taken out of faiss once here, their codes
    moved to a mapping of ``path`` with ``.codes`` after it: the save then writes them as they
    are, where it took them out of faiss itself, in two copies beside faiss's own (5 GB more at
    three million facts and as many sentences), while the codes held 2.3 GB until then."""
    from noema.vectors.index import VectorIndex

    mapping, rows = _mapped(path, len(ids), 384)
    mappings.append(mapping)
    clustered(len(ids), 384, rng, rows)
    mapping.flush()  # written back once: dropping its pages later writes nothing
    # trained as KnowledgeBase.save would ("auto": from APPROXIMATE_FROM rows)
    parts = VectorIndex.from_rows(ids, rows).prepare("auto").approximate_parts(ids)
    index = VectorIndex.from_rows(ids, rows)
    if parts is not None and parts.codes is not None:
        mapping, codes = _mapped(_codes_file(path), len(ids), parts.codes.shape[1], np.uint8)
        mappings.append(mapping)
        codes[:] = parts.codes
        mapping.flush()
        index.keep_stored_approximate(replace(parts, codes=codes))
    del parts
    gc.collect()  # faiss's index and the codes' first copy, let go
    return index


def _codes_file(vectors: Path) -> Path:
    """Where :func:`_generated` keeps the approximate index's codes of ``vectors``."""
    return vectors.with_name(f"{vectors.name}.codes")


@contextmanager
def _shedding(mappings: list[mmap.mmap], every: float = 0.1) -> Iterator[None]:
    """While the block runs, drop the pages of ``mappings`` from this process every ``every``
    seconds. They stay in the kernel's file cache (reclaimable, written back to their files)
    and are read again from it when touched: a search structure built over, or a save that
    reads, a few GB of mapped vectors does not hold all of them resident at once."""
    stop = threading.Event()

    def shed() -> None:
        for mapping in mappings:
            mapping.madvise(mmap.MADV_DONTNEED)

    def loop() -> None:
        while not stop.wait(every):
            shed()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        shed()


def build_bundle(n_facts: int, path: Path, seed: int = 7) -> tuple[float, float]:
    """Write a bundle of ``n_facts`` synthetic facts; returns the save's time in seconds and its
    peak memory in MiB above what the process held before it.

    Built lean enough for millions of facts: the fact and sentence vectors are generated into
    files beside ``path`` (deleted once saved) and handed to their indexes without a copy, their
    pages dropped from the process while indexed and saved; what is no longer needed is freed
    before the save; the base names' embeddings are kept beside ``path`` for the next build."""
    import noema
    from noema.storage.bundle import BundleSettings, write_bundle
    from noema.vectors.sentences import SentenceIndex, sentence_key, source_sentences

    started = time.perf_counter()

    def progress(done: str) -> None:
        print(
            f"[{time.perf_counter() - started:6.0f}s, {_rss_mb():,.0f} MB] {done}",
            file=sys.stderr,
            flush=True,
        )

    rng = np.random.default_rng(seed)
    graph, parts = _synthetic_graph(n_facts, random.Random(seed))
    progress(f"graph of {n_facts:,} facts")
    scratch = [
        path.with_name(f".{path.name}.{part}.f32") for part in ("facts", "sentences", "names")
    ]
    mappings: list[mmap.mmap] = []  # their pages dropped from the process all along
    try:
        with _shedding(mappings):
            facts = [*graph.relations, *graph.events]  # fact_order: saved without reordering
            index = _generated(scratch[0], facts, rng, mappings)
            del facts
            keys = [sentence_key(graph, s) for s in source_sentences(graph)]
            sentence_vectors = _generated(scratch[1], keys, rng, mappings)
            del keys
        progress("vectors generated, approximate indexes trained")
        names = name_vectors(graph, parts, scratch[2])
        del parts
        progress(f"{len(names):,} name vectors")
        sentences = SentenceIndex.from_vectors(graph, sentence_vectors)
        del sentence_vectors
        gc.collect()
        progress("sentence sidecar; saving")
        before = _rss_mb()
        _reset_peak()
        with timer() as save, _shedding([*mappings, *names.mappings]):
            write_bundle(
                path,
                graph,
                index,
                settings=BundleSettings(
                    "all-MiniLM-L6-v2", "en_core_web_sm", 0.85, noema.__version__
                ),
                sentences=sentences,
                name_vectors=names,
            )
        return save[0], _peak_mb() - before
    finally:
        for file in [*scratch, *map(_codes_file, scratch)]:  # mappings outlive their files
            file.unlink(missing_ok=True)


def _synthetic_graph(
    n_facts: int, pick: random.Random
) -> tuple[noema.SemanticGraph, dict[str, tuple[str, str]]]:
    """The graph of ``n_facts`` synthetic facts, three a document, each its own sentence; and the
    two names each recombined name was made of."""
    import noema

    names, predicates = vocabulary()
    types = [t for t in names if t != "DATE"]
    graph = noema.SemanticGraph()
    pool: list[tuple[str, str]] = []  # (name, type) of the entities, about one per 3 facts
    parts: dict[str, tuple[str, str]] = {}
    for n in range(max(2, n_facts // 3)):
        type_ = pick.choice(types)
        name = pick.choice(names[type_])
        if n >= len(names[type_]):  # recombined into a new name, as a corpus would have
            other = pick.choice(names[pick.choice(types)])
            parts[f"{name} ({other})"] = (name, other)
            name = f"{name} ({other})"
        pool.append((name, type_))
    entity_ids: dict[int, str] = {}
    for doc_n in range(0, n_facts, FACTS_PER_DOCUMENT):
        facts = []
        text = ""
        for _ in range(min(FACTS_PER_DOCUMENT, n_facts - doc_n)):
            s, o = pick.randrange(len(pool)), pick.randrange(len(pool))
            while o == s:
                o = pick.randrange(len(pool))
            predicate = pick.choice(predicates)
            start = len(text) + (1 if text else 0)
            sentence = f"{pool[s][0]} {predicate.replace('_', ' ')} {pool[o][0]}."
            text = f"{text} {sentence}" if text else sentence
            facts.append((s, predicate, o, start, start + len(sentence)))
        doc_id = f"doc{doc_n // FACTS_PER_DOCUMENT}"
        graph.add_document(
            noema.Document(text, id=doc_id, metadata={"title": pool[facts[0][0]][0]})
        )
        for s, predicate, o, start, end in facts:
            ids = []
            for e, at in ((s, start), (o, end - 1 - len(pool[o][0]))):
                mention = noema.Mention(doc_id, at, at + len(pool[e][0]))
                if e not in entity_ids:
                    entity_ids[e] = graph.add_entity(*pool[e], mentions=[mention])
                ids.append(entity_ids[e])
            graph.add_relation(
                ids[0], predicate, ids[1], mentions=[noema.Mention(doc_id, start, end)]
            )
    return graph, parts


def _reset_peak() -> None:
    """Start the process's peak resident memory again from what it holds now (Linux)."""
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")


def _peak_mb() -> float:
    """The process's peak resident memory since :func:`_reset_peak`, in MiB."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise OSError("no VmHWM in /proc/self/status")


class NameVectors(dict[str, np.ndarray]):
    """Entity id to name vector, each a row of a matrix mapped from a file (``mappings``)."""

    mappings: list[mmap.mmap]


# A recombined name "X (Y)" is given the unit sum of X's vector and this much of Y's: over 300
# such names its cosine with the model's own embedding of "X (Y)" was 0.91 on average and 0.85
# at the 5th percentile (X's vector alone: 0.76 on average)
RECOMBINED_WEIGHT = 0.75


def name_vectors(
    graph: noema.SemanticGraph, parts: Mapping[str, tuple[str, str]], out: Path
) -> NameVectors:
    """The embeddings of the entity names, as a base built by ingest keeps them for the
    canonicalizer (names.bin): without them the first ingest into the loaded base embedded every
    stored name a new one could join (22 s of the 1,000-paragraph ingest at a million facts),
    which no base Noema builds asks for. Every name here, where an ingest keeps those that met
    a candidate: at this size nearly all of them.

    The base names (a few thousand, from Re-DocRED) are embedded by the model, once, and kept
    beside ``out`` under a digest of them for the next build; a recombined name (``parts``: its
    two base names) is composed from theirs (:data:`RECOMBINED_WEIGHT`), since embedding each of
    the million at three million facts would take hours here. The rows are written into ``out``
    (a new file, mapped)."""
    import noema
    from noema.model.records import VALUE_TYPES

    wanted = {e.id: e.name for e in graph.entities.values() if e.type not in VALUE_TYPES}
    distinct = sorted(set(wanted.values()))
    base = sorted({part for name in distinct for part in parts.get(name, (name,))})
    digest = hashlib.sha256("\n".join(base).encode("utf-8")).hexdigest()[:16]
    cached = out.with_name(f".names-{digest}.npy")
    if cached.exists():
        embedded = np.load(cached)
    else:
        embedded = noema.SentenceTransformerEmbedder().embed(base)
        np.save(cached.with_suffix(".partial.npy"), embedded)
        cached.with_suffix(".partial.npy").replace(cached)
    row = {name: n for n, name in enumerate(base)}
    first = np.fromiter((row[parts.get(name, (name,))[0]] for name in distinct), np.int64)
    second = np.fromiter(
        (row[parts[name][1]] if name in parts else -1 for name in distinct), np.int64
    )
    mapping, vectors = _mapped(out, len(distinct), embedded.shape[1])
    for start in range(0, len(distinct), 100_000):
        x, y = first[start : start + 100_000], second[start : start + 100_000]
        block = embedded[x] + RECOMBINED_WEIGHT * (y >= 0)[:, None] * embedded[y]
        vectors[start : start + 100_000] = block / np.linalg.norm(block, axis=1, keepdims=True)
    mapping.flush()
    mapping.madvise(mmap.MADV_DONTNEED)
    at = {name: n for n, name in enumerate(distinct)}
    named = NameVectors((eid, vectors[at[name]]) for eid, name in wanted.items())
    named.mappings = [mapping]
    return named


def _rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _resident_mb(arrays: list[np.ndarray]) -> float:
    """MiB of the pages of ``arrays`` present in this process's memory, read from
    ``/proc/self/pagemap`` (bit 63 of each page's entry; Linux), ``nan`` where it cannot be read.
    An opened bundle's vectors are views of its mapped file: they count toward the resident set
    only once a search has read them, so "memory beyond the vectors" subtracts what is there."""
    page = os.sysconf("SC_PAGE_SIZE")
    present = 0
    try:
        with open("/proc/self/pagemap", "rb") as handle:
            for array in arrays:
                first = array.ctypes.data // page
                last = -(-(array.ctypes.data + array.nbytes) // page)
                handle.seek(first * 8)
                entries = np.frombuffer(handle.read((last - first) * 8), dtype="<u8")
                present += int(np.count_nonzero(entries >> np.uint64(63)))
    except OSError:
        return float("nan")
    return present * page / 2**20


def _drop_file_cache() -> bool:
    """Empty the kernel's file cache (root on Linux), so the next open reads from the disk:
    whether it could."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as handle:
            handle.write("1")
    except OSError:
        return False
    return True


# The members an open and a retrieval read (index.faiss only a save or `noema validate` reads,
# graph.json and names.bin only a write): what a service restarted over the same bundle finds in
# the file cache. Reading only these lets 3M facts (an 18 GB file) be measured from the cache
# on a 24 GB machine, where reading the whole file would push out the pages read first.
_RETRIEVAL_MEMBERS = (
    "graph.columns",
    "embeddings.bin",
    "facts.ivf",
    "sentences.bin",
    "sentences.ivf",
)


def _cache_members(path: Path, members: tuple[str, ...] = _RETRIEVAL_MEMBERS) -> float:
    """Read ``members`` of the bundle at ``path`` once, in order, so the cached measurement
    finds them in the file cache whatever ran before it: GiB read."""
    import zipfile

    read = 0
    with zipfile.ZipFile(path) as archive, open(path, "rb") as handle:
        for info in archive.infolist():
            if info.filename not in members:
                continue
            handle.seek(info.header_offset + 26)
            name, extra = (int.from_bytes(handle.read(2), "little") for _ in range(2))
            handle.seek(info.header_offset + 30 + name + extra)
            left = info.compress_size
            while left > 0:
                left -= len(handle.read(min(left, 1 << 24)))
            read += info.compress_size
    return read / 2**30


def _file_pages(index: VectorIndex) -> list[np.ndarray]:
    """What of ``index`` an opened bundle leaves as pages of its mapped file: the vectors, and
    the 8-bit codes its approximate index's lists read in place (faiss holding none of its own)."""
    arrays = [index.vectors]
    approximate = index._approximate
    if approximate is not None:
        held = getattr(approximate.ivf, "referenced_objects", ())
        arrays += [
            item.codes for item in held if isinstance(getattr(item, "codes", None), np.ndarray)
        ]
    return arrays


def measure(
    bundle: str, ingest_docs: int, cold: bool = False, max_memory: int | None = None
) -> dict[str, float]:
    """Run in a fresh process: load, memory, retrieve against flat search, ingest. ``cold``:
    the file cache emptied before the load (the figure is ``nan`` where it cannot be);
    ``max_memory``: ``KnowledgeBase.load``'s budget, in bytes (its default where ``None``)."""
    import faiss

    import noema
    from noema.evaluate import ChunkRetriever  # noqa: F401  (imported for its models' warm-up)

    # the models loaded as a service loads them before its first question: spaCy, the embedding
    # model and the token encoding (noema.load_models; a server also runs noema.warm_up)
    noema.load_models()
    embedder = noema.SentenceTransformerEmbedder()
    dropped = _drop_file_cache() if cold else False
    rss_before = _rss_mb()
    with timer() as load:
        kb = noema.KnowledgeBase.load(bundle, embedder=embedder, max_memory=max_memory)
    rss_after = _rss_mb()
    facts = len(kb.graph.relations) + len(kb.graph.events)
    snapshot = kb.state
    assert snapshot.index is not None and snapshot.sentences is not None
    vector_arrays = [*_file_pages(snapshot.index), *_file_pages(snapshot.sentences.vectors)]
    vectors_after = _resident_mb(vector_arrays)
    questions = [
        json.loads(line)["question"]
        for line in data_file("hotpotqa/hotpotqa_dev_300.jsonl").read_text().splitlines()
    ][:QUESTIONS]
    queries = embedder.embed(questions)
    # the first retrieval after opening, models already loaded: what a restarted service pays
    # (before the flat index below reads every vector into memory)
    with timer() as first:
        kb.retrieve(questions[0])
    flat = faiss.IndexFlatIP(384)
    flat.add(np.ascontiguousarray(snapshot.index.vectors))
    timings: dict[str, list[float]] = {"retrieve": [], "flat": [], "embed+flat": []}
    for question, query in zip(questions, queries, strict=True):
        start = time.perf_counter()
        kb.retrieve(question)
        timings["retrieve"].append(time.perf_counter() - start)
        start = time.perf_counter()
        flat.search(query.reshape(1, -1), 5)
        timings["flat"].append(time.perf_counter() - start)
        start = time.perf_counter()
        flat.search(embedder.embed([question]), 5)
        timings["embed+flat"].append(time.perf_counter() - start)
    # Recall of the fact search against flat search, asked with stored vectors moved a little:
    # a real question's vector has no true neighbours among generated vectors, so its top five
    # are near-ties any index may order differently
    rng = np.random.default_rng(11)
    stored = snapshot.index.vectors
    probes = stored[rng.integers(0, len(stored), QUESTIONS)]
    probes = probes + 0.02 * rng.standard_normal(probes.shape).astype(np.float32)
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)
    ids = snapshot.index.ids
    hits = sum(
        len({i for i, _ in snapshot.index.search(q, 5)} & {ids[r] for r in rows})
        for q, rows in zip(probes, flat.search(probes, 5)[1], strict=True)
    )
    del flat
    rss_retrieved = _rss_mb()
    vectors_retrieved = _resident_mb(vector_arrays)
    ingest_big, ingest_empty = [float("nan")], [float("nan")]
    if ingest_docs:
        lines = data_file("wiki/wiki_paragraphs.jsonl").read_text().splitlines()[:ingest_docs]
        docs = [
            noema.Document(r["text"], id=f"wiki{n}", metadata={"title": r["title"]})
            for n, r in enumerate(map(json.loads, lines))
        ]
        with timer() as ingest_big:
            kb.ingest(docs)
        empty = noema.KnowledgeBase(embedder=embedder)
        with timer() as ingest_empty:
            empty.ingest(docs)
    out = {
        "facts": facts,
        "load": load[0] if dropped or not cold else float("nan"),
        "first_ms": first[0] * 1000 if dropped or not cold else float("nan"),
        "rss_mb": rss_after - rss_before,
        # after opening and the retrievals (the flat index's copy of the vectors freed)
        "rss_retrieved_mb": rss_retrieved - rss_before,
        # the vectors' pages resident then (the flat baseline reads every fact vector)
        "vector_mb": vectors_after,
        "vector_retrieved_mb": vectors_retrieved,
        "ingest_big": ingest_big[0],
        "ingest_empty": ingest_empty[0],
        "approximate": float(snapshot.index.approximate),
        "recall": hits / (5 * len(queries)),
    }
    for name, values in timings.items():
        values.sort()
        out[f"{name}_p50"] = statistics.median(values) * 1000
        out[f"{name}_p95"] = values[int(0.95 * (len(values) - 1))] * 1000
    return out


def real_recall(bundle: str) -> None:
    """Recall@5 of the approximate index against exact search on a real bundle's vectors (fact
    index and sentence sidecar), asked the HotpotQA questions."""
    import noema
    from noema.vectors.index import VectorIndex

    kb = noema.KnowledgeBase.load(bundle, search="exact")
    questions = [
        json.loads(line)["question"]
        for line in data_file("hotpotqa/hotpotqa_dev_300.jsonl").read_text().splitlines()
    ][:200]
    queries = kb.embedder.embed(questions)
    snapshot = kb.state
    assert snapshot.index is not None and snapshot.sentences is not None
    rows = []
    for label, exact in (("facts", snapshot.index), ("sentences", snapshot.sentences.vectors)):
        approximate = VectorIndex(exact.dimension)
        approximate.add(exact.ids, exact.vectors)
        approximate.prepare("approximate")
        for k in (5, 20):
            found = sum(
                len({i for i, _ in exact.search(q, k)} & {i for i, _ in approximate.search(q, k)})
                for q in queries
            )
            rows.append([label, f"{len(exact):,}", k, f"{found / (k * len(queries)):.1%}"])
    print(f"Approximate search against exact on {bundle} ({len(questions)} questions)\n")
    print_table(["vectors", "rows", "k", "recall@k"], rows)


def writes(sizes: list[int], added: int = 5000) -> None:
    """What a write costs the approximate index of a large base: copying the index for the
    writer, adding ``added`` rows and preparing it, as before (a new index filled row by row, then
    trained again) and now (a copy sharing the matrix, the trained index extended), same vectors."""
    from noema.vectors.index import VectorIndex

    rng = np.random.default_rng(11)
    rows = []
    for n in sizes:
        vectors = clustered(n + added, 384, rng)
        ids = [f"f{i}" for i in range(n + added)]
        base = VectorIndex(384)
        base.add(ids[:n], vectors[:n])
        base.prepare("approximate")
        for label in ("before: copied row by row, trained again", "now: shared, extended"):
            with timer() as copying:
                if label.startswith("before"):
                    index = VectorIndex(384)
                    index.add(base.ids, base.vectors)
                else:
                    index = base.copy()
                index.add(ids[n:], vectors[n:])
            with timer() as preparing:
                index.prepare("approximate")
            found = sum(
                index.search(vectors[i], 1)[0][0] == ids[i] for i in range(n, n + added, 50)
            )
            rows.append(
                [
                    f"{n:,}",
                    label,
                    f"{copying[0]:.2f}",
                    f"{preparing[0]:.2f}",
                    f"{found}/{added // 50}",
                ]
            )
    print(f"Writing {added:,} rows into a large approximate index ({machine()})\n")
    print_table(
        ["rows", "write", "copy + add s", "prepare s", "added rows found as their own nearest"],
        rows,
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--facts", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--ingest-docs", type=int, default=1000)
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # the fresh process's entry point
    parser.add_argument(
        "--bundle", nargs="+", help="instead of building: measure these bundles (built with --keep)"
    )
    parser.add_argument("--keep", help="keep the bundles built, in this folder")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="also open each bundle and retrieve once with the file cache emptied first (root "
        "on Linux)",
    )
    parser.add_argument(
        "--recall-bundle",
        help="instead: recall of the approximate index on this real bundle's vectors "
        "(e.g. one saved by benchmarks/hotpotqa.py --bundle)",
    )
    parser.add_argument(
        "--writes",
        action="store_true",
        help="instead: the approximate index's cost of one write at each --facts size",
    )
    parser.add_argument(
        "--max-memory",
        type=float,
        help="GiB opening a bundle may take (KnowledgeBase.load's max_memory; default: half "
        "the machine's memory)",
    )
    args = parser.parse_args()
    max_memory = None if args.max_memory is None else int(args.max_memory * 2**30)
    if args.writes:
        writes(args.facts)
        return 0
    if args.recall_bundle:
        real_recall(args.recall_bundle)
        return 0
    if args.measure:
        print(json.dumps(measure(args.measure, args.ingest_docs, args.cold, max_memory)))
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        kept = Path(args.keep) if args.keep else Path(tmp)
        sizes: list[int | str] = [*args.bundle] if args.bundle else [*args.facts]
        for n in sizes:
            if isinstance(n, str):  # a bundle built before (--keep): measured as it is
                path, save_text = Path(n), "(built before)"
            else:
                path = kept / f"scale{n}.noema"
                save, save_peak = build_bundle(n, path)
                save_text = f"{save:.1f}s, peak +{save_peak:,.0f} MB"
                print(f"built {n:,} facts, saved in {save:.1f}s", file=sys.stderr, flush=True)
            size = path.stat().st_size
            with timer() as cached:
                gib = _cache_members(path)
            print(
                f"read {gib:.1f} GiB of {path.name} into the file cache in {cached[0]:.0f}s",
                file=sys.stderr,
                flush=True,
            )
            warm = _measured(path, args.ingest_docs, cold=False, max_memory=args.max_memory)
            cold = _measured(path, 0, cold=True, max_memory=args.max_memory) if args.cold else None
            if not args.keep and not isinstance(n, str):
                path.unlink()
            rows.append(_row(warm, cold, save_text, size))
    print(f"Large knowledge bases ({machine()}; synthetic facts, generated vectors)\n")
    print_table(
        [
            "facts",
            "save",
            "bundle",
            "open (cold)",
            "memory after open / after retrieving",
            "first retrieve (cold)",
            "retrieve p50 / p95",
            "fact search, against flat",
            "flat search p50 / p95",
            "embed + flat p50 / p95",
            f"ingest {args.ingest_docs:,} docs",
        ],
        rows,
    )
    return 0


def _measured(
    path: Path, ingest_docs: int, *, cold: bool, max_memory: float | None = None
) -> dict[str, float]:
    """:func:`measure` in a fresh process (``max_memory``: as ``--max-memory``, in GiB)."""
    command = [sys.executable, __file__, "--measure", str(path), "--ingest-docs", str(ingest_docs)]
    if max_memory is not None:
        command += ["--max-memory", str(max_memory)]
    done = subprocess.run(
        [*command, *(["--cold"] if cold else [])],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    measured: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return measured


def _row(m: dict[str, float], cold: dict[str, float] | None, save: str, size: int) -> list[str]:
    """One table row: memory per fact beyond the vectors, after opening and after retrieving."""
    per_fact = [
        (m[rss] - m[vectors]) * 1024 / m["facts"]
        for rss, vectors in (("rss_mb", "vector_mb"), ("rss_retrieved_mb", "vector_retrieved_mb"))
    ]
    return [
        f"{m['facts']:,}",
        save,
        f"{size / 2**20:,.0f} MB",
        f"{m['load']:.2f}s" + (f" ({cold['load']:.1f}s)" if cold else ""),
        f"{m['rss_mb']:,.0f} / {m['rss_retrieved_mb']:,.0f} MB "
        f"({per_fact[0]:.2f} / {per_fact[1]:.2f} KB/fact beyond vectors)",
        f"{m['first_ms']:.0f} ms" + (f" ({cold['first_ms']:,.0f} ms)" if cold else ""),
        f"{m['retrieve_p50']:.1f} / {m['retrieve_p95']:.1f} ms",
        ("approximate" if m["approximate"] else "exact") + f", recall@5 {m['recall']:.1%}",
        f"{m['flat_p50']:.1f} / {m['flat_p95']:.1f} ms",
        f"{m['embed+flat_p50']:.1f} / {m['embed+flat_p95']:.1f} ms",
        f"{m['ingest_big']:.0f}s (empty base: {m['ingest_empty']:.0f}s)",
    ]


if __name__ == "__main__":
    sys.exit(main())
