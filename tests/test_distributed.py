"""The Ray build: a local Ray with two workers, real models in every worker."""

from __future__ import annotations

import json
import os
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import ray
import ray.cloudpickle

import noema
from noema.distributed import build_on_ray, partition
from noema.vectors.embed import resolved_precision

# the workers unpickle this module's extractor by value: they cannot import the test module
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

_PEOPLE = ["Anna Holm", "Larry Page", "Sergey Brin", "Jensen Huang", "Lisa Su", "Satya Nadella"]
_COMPANIES = ["Google", "Nvidia", "Microsoft", "Acme Robotics", "Blue Harbor Foods", "Tesla"]
_CITIES = ["Oslo", "Tulsa", "Redmond", "Mountain View", "Austin", "Kyoto", "Lyon"]


def corpus(n: int) -> list[noema.Document]:
    """``n`` short documents whose names recur across partitions, so the merge has work."""
    docs = []
    for i in range(n):
        person, company = _PEOPLE[i % 6], _COMPANIES[(i // 6) % 6]
        city = _CITIES[i % 7]
        text = (
            f"{person} founded {company} in {1950 + i % 60}. "
            f"{company} is headquartered in {city}. "
            f"Unit {i} of {company} makes part {i}."
        )
        docs.append(noema.Document(text, id=f"d{i:04d}"))
    return docs


def summary(kb: noema.KnowledgeBase) -> dict[str, object]:
    """The knowledge base by content: ids aside, what a build must reproduce."""
    g = kb.graph
    name = {e.id: e.name for e in g.entities.values()}
    return {
        "documents": sorted(g.documents),
        "entities": sorted((e.name, e.type, tuple(sorted(e.aliases))) for e in g.entities.values()),
        "facts": sorted(
            (name[r.subject_id], r.predicate, name[r.object_id]) for r in g.relations.values()
        ),
        "mentions": sorted(
            (name[e.id], m.document_id, m.start, m.end)
            for e in g.entities.values()
            for m in e.mentions
        ),
        # a merge at the tree's seams is one record for all the documents of that part
        "merges": sorted(
            {
                (m.canonical_name, m.merged_name, m.rule, d)
                for m in kb.merge_log
                for d in m.document_ids
            }
        ),
    }


@pytest.fixture(scope="module")
def local_ray():  # type: ignore[no-untyped-def]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def test_partitions_are_runs_of_whole_ingest_batches() -> None:
    docs = corpus(700)
    parts = partition(docs, 2)
    assert [len(p) for p in parts] == [512, 188]
    assert [d for p in parts for d in p] == docs
    assert [len(p) for p in partition(docs, 5)] == [256, 256, 188]  # no more parts than batches
    with pytest.raises(ValueError, match="partitions must be"):
        partition(docs, 0)


def test_two_workers_build_the_same_knowledge_base_as_ingest(  # type: ignore[no-untyped-def]
    local_ray, embedder: noema.SentenceTransformerEmbedder, extractor: noema.SpacyExtractor
) -> None:
    docs = corpus(300)
    whole = noema.KnowledgeBase(embedder=embedder, extractor=extractor)
    whole.ingest(docs)
    lines: list[str] = []
    built = build_on_ray(docs, workers=2, progress=lines.append, embedder=embedder)
    assert built.partitions == 2 and built.workers == 2 and built.failed == ()
    on_ray, alone = summary(built.knowledge_base), summary(whole)
    ray_merges, whole_merges = set(on_ray.pop("merges")), set(alone.pop("merges"))  # type: ignore[call-overload]
    assert on_ray == alone
    # every merge of the one-process build is recorded; where the parts meet, one more exact
    # record joins a part's entity to the other's, also for a document whose name the part had
    # joined across types ("Acme Robotics" :PERSON into :ORG): that merge is recorded too
    assert whole_merges <= ray_merges
    assert {rule for _, _, rule, _ in ray_merges - whole_merges} <= {"exact"}
    question = "Who founded the company headquartered in Redmond?"
    assert (
        built.knowledge_base.retrieve(question, hops=2).text
        == whole.retrieve(question, hops=2).text
    )
    assert sorted(lines[:2]) == ["partition 1/2 built", "partition 2/2 built"]
    assert lines[2:] == ["merge level 1: 1 part(s) left"]


class DiesOnce(noema.SpacyExtractor):
    """The real extractor, whose worker process dies the first time it meets a marked document
    (a file records that it did, so the retried task goes through)."""

    def __init__(self, marker: str) -> None:
        super().__init__()
        self.marker = marker

    def extract_batches(self, documents, batch_size, progress=None):  # type: ignore[no-untyped-def]
        if any("CRASH" in d.text for d in documents) and not os.path.exists(self.marker):
            Path(self.marker).write_text("died")
            os._exit(1)  # as a killed worker: no exception, no clean-up
        return super().extract_batches(documents, batch_size, progress)


class DiesOnPoison(noema.SpacyExtractor):
    """The real extractor, whose worker process dies every time it meets a marked document."""

    def extract_batches(self, documents, batch_size, progress=None):  # type: ignore[no-untyped-def]
        if any("POISON" in d.text for d in documents):
            os._exit(1)  # as a segfault in a parser would: no exception, no clean-up
        return super().extract_batches(documents, batch_size, progress)


class RefusesMarked:
    """The real extractor behind a check that refuses every document that says BAD."""

    def __init__(self) -> None:
        self.inner = noema.SpacyExtractor()

    def extract(self, documents):  # type: ignore[no-untyped-def]
        if any("BAD" in d.text for d in documents):
            raise ValueError("cannot read this document")
        return self.inner.extract(documents)


class ChecksThreads:
    """The real extractor behind a check of the worker's torch thread count (reported through
    the failed documents, the one channel a worker's error has back to the driver)."""

    def __init__(self, expected: int) -> None:
        self.inner = noema.SpacyExtractor()
        self.expected = expected

    def extract(self, documents):  # type: ignore[no-untyped-def]
        import torch

        if torch.get_num_threads() != self.expected:
            raise ValueError(f"torch threads {torch.get_num_threads()}")
        return self.inner.extract(documents)


def test_one_worker_computes_with_the_threads_of_this_process(  # type: ignore[no-untyped-def]
    local_ray, embedder: noema.SentenceTransformerEmbedder
) -> None:
    import torch

    # Ray gives an actor one thread per reserved CPU; one worker on this two-CPU Ray must run
    # as many torch threads as the driver (bfloat16 sums depend on it), two workers one each
    threads = min(torch.get_num_threads(), 2)
    for workers, expected in ((1, threads), (2, max(1, threads // 2))):
        built = build_on_ray(
            corpus(12), workers=workers, embedder=embedder, extractor=ChecksThreads(expected)
        )
        assert built.failed == (), (workers, built.failed)
    with pytest.raises(ValueError, match="threads_per_worker must be"):
        build_on_ray(corpus(2), workers=1, threads_per_worker=0)


def test_a_killed_worker_is_restarted_and_every_document_arrives(  # type: ignore[no-untyped-def]
    local_ray, tmp_path: Path, embedder: noema.SentenceTransformerEmbedder
) -> None:
    docs = corpus(300)
    docs[280] = noema.Document("CRASH. " + docs[280].text, id=docs[280].id)
    marker = tmp_path / "died"
    built = build_on_ray(docs, workers=2, embedder=embedder, extractor=DiesOnce(str(marker)))
    assert marker.read_text() == "died"  # a worker did die mid-partition
    assert built.failed == () and sorted(built.knowledge_base.graph.documents) == sorted(
        d.id for d in docs
    )


def test_a_document_that_always_kills_its_worker_is_reported_and_the_rest_built(  # type: ignore[no-untyped-def]
    local_ray, embedder: noema.SentenceTransformerEmbedder
) -> None:
    # the partition's worker died at every retry and build_on_ray raised
    # ActorDiedError, losing every good document; now the partition is built in halves down to
    # the document that kills it
    docs = corpus(12)
    docs[5] = noema.Document("POISON. " + docs[5].text, id=docs[5].id)
    built = build_on_ray(
        docs, workers=2, max_retries=0, embedder=embedder, extractor=DiesOnPoison()
    )
    assert [(f.partition, f.document_id) for f in built.failed] == [(0, docs[5].id)]
    assert "died" in built.failed[0].error
    assert sorted(built.knowledge_base.graph.documents) == sorted(
        d.id for n, d in enumerate(docs) if n != 5
    )
    assert built.failed_partitions == ()


def test_bad_documents_and_a_partition_of_only_bad_ones_are_reported(  # type: ignore[no-untyped-def]
    local_ray, embedder: noema.SentenceTransformerEmbedder
) -> None:
    docs = corpus(300)
    docs = [noema.Document("BAD " + d.text, id=d.id) if i >= 256 else d for i, d in enumerate(docs)]
    docs[3] = noema.Document("BAD " + docs[3].text, id=docs[3].id)
    built = build_on_ray(docs, workers=2, embedder=embedder, extractor=RefusesMarked())
    assert built.failed_partitions == (1,)
    assert sorted(f.document_id for f in built.failed) == sorted(
        [docs[3].id, *(d.id for d in docs[256:])]
    )
    assert {f.error for f in built.failed} == {"ValueError: cannot read this document"}
    assert len(built.knowledge_base.graph.documents) == 255


def test_cli_build_on_ray_writes_the_bundle_ingest_writes(  # type: ignore[no-untyped-def]
    local_ray, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from noema.cli import main

    docs = Path(__file__).parent.parent / "examples" / "docs"
    assert main(["build", str(docs), "-o", str(tmp_path / "ray.noema"), "--ray"]) == 0
    out, err = capsys.readouterr()
    assert "on Ray (workers: 1, partitions: 1" in out and "partition 1/1 built" in err
    assert main(["build", str(docs), "-o", str(tmp_path / "one.noema")]) == 0
    ray_bundle, one = (zipfile.ZipFile(tmp_path / n) for n in ("ray.noema", "one.noema"))
    # six documents are one part: the graph and the sentences are the ones a single process
    # writes, byte for byte
    for member in ("graph.json", "sentences.bin"):
        assert ray_bundle.read(member) == one.read(member), member
    if resolved_precision("auto") == "float32":  # and so is every other member but names.bin
        # The entity names are embedded in the worker, whose torch runs on the one thread Ray
        # gives a worker: on some CPUs a float32 sum on one thread and on two differs in its
        # last bit (seen: 1e-7 in 3 name vectors of 384), so their vectors are compared to
        # rounding and the manifest without their hash
        for member in one.namelist():
            if member not in ("names.bin", "manifest.json"):
                assert ray_bundle.read(member) == one.read(member), member
        manifests = [json.loads(z.read("manifest.json")) for z in (ray_bundle, one)]
        for manifest in manifests:
            manifest["members"].pop("names.bin", None)
        assert manifests[0] == manifests[1]
        rows = 4 * manifests[1]["names"]["rows"]  # int32 positions, then float32 vectors
        names = [z.read("names.bin") for z in (ray_bundle, one)]
        assert names[0][:rows] == names[1][:rows] and len(names[0]) == len(names[1])
        vectors = [np.frombuffer(n[rows:], dtype="<f4") for n in names]
        np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-6)
    else:  # bfloat16 kernels may add up in another order in another process
        vectors = [
            np.frombuffer(z.read("embeddings.bin"), dtype=np.float32) for z in (ray_bundle, one)
        ]
        assert vectors[0].shape == vectors[1].shape
        np.testing.assert_allclose(vectors[0], vectors[1], atol=2e-3)


def test_a_ray_dataset_is_read_as_documents(  # type: ignore[no-untyped-def]
    local_ray, embedder: noema.SentenceTransformerEmbedder
) -> None:
    import ray.data

    docs = corpus(12)
    rows = [{"text": d.text, "id": d.id, "metadata": {"n": n}} for n, d in enumerate(docs)]
    built = build_on_ray(ray.data.from_items(rows), workers=1, embedder=embedder)
    graph = built.knowledge_base.graph
    assert list(graph.documents) == [d.id for d in docs]
    assert [dict(graph.documents[d.id].metadata) for d in docs] == [{"n": n} for n in range(12)]


class UnsaveableMarked:
    """A stand-in extractor (the test is about the build's handling of a bad record, not about
    extraction): documents only, and a document that says UNSAVEABLE comes back with metadata
    too deep for a bundle, as a record that ingests and then cannot be written."""

    def extract(self, documents):  # type: ignore[no-untyped-def]
        deep: object = "leaf"
        for _ in range(100):
            deep = [deep]
        graph = noema.SemanticGraph()
        for d in documents:
            metadata = {"deep": deep} if "UNSAVEABLE" in d.text else dict(d.metadata)
            graph.add_document(noema.Document(d.text, d.id, metadata))
        return graph


def test_a_record_that_cannot_be_saved_costs_only_itself(  # type: ignore[no-untyped-def]
    local_ray, embedder: noema.SentenceTransformerEmbedder
) -> None:
    # the partition's to_bytes() raised outside the worker's try, and build_on_ray raised
    # RayTaskError: one record lost every partition
    docs = corpus(12)
    docs[4] = noema.Document("UNSAVEABLE " + docs[4].text, id=docs[4].id)
    built = build_on_ray(docs, workers=1, embedder=embedder, extractor=UnsaveableMarked())
    assert [f.document_id for f in built.failed] == [docs[4].id]
    assert "64 levels" in built.failed[0].error
    assert sorted(built.knowledge_base.graph.documents) == sorted(
        d.id for n, d in enumerate(docs) if n != 4
    )
    # metadata 62 levels deep ingested, and sat 3 levels deeper in graph.json than the check
    # counted: now refused, as ingest() refuses it, before any worker starts
    nested: object = "leaf"
    for _ in range(62):
        nested = [nested]
    docs[7] = noema.Document(docs[7].text, id=docs[7].id, metadata={"n": nested})
    with pytest.raises(ValueError, match="'n' of document 'd0007'.*64 levels"):
        build_on_ray(docs, workers=1, embedder=embedder)


class FailsOnFourthReading(UnsaveableMarked):
    """A stand-in extractor (the test is about the build's bookkeeping, not extraction): as
    UnsaveableMarked, and a document that says FLAKY fails the fourth time it is read, which is
    the last of the worker's passes over a partition holding an unsaveable record."""

    def __init__(self) -> None:
        self.readings = 0

    def extract(self, documents):  # type: ignore[no-untyped-def]
        if any("FLAKY" in d.text for d in documents):
            self.readings += 1
            if self.readings == 4:
                raise RuntimeError("flaky on its fourth reading")
        return super().extract(documents)


def test_a_document_failing_in_the_last_pass_is_reported(  # type: ignore[no-untyped-def]
    local_ray, embedder: noema.SentenceTransformerEmbedder
) -> None:
    # the last pass (the documents that saved alone, together) dropped its failures unreported
    docs = corpus(3)
    docs[0] = noema.Document("UNSAVEABLE " + docs[0].text, id=docs[0].id)
    docs[2] = noema.Document("FLAKY " + docs[2].text, id=docs[2].id)
    built = build_on_ray(docs, workers=1, embedder=embedder, extractor=FailsOnFourthReading())
    assert [f.document_id for f in built.failed] == [docs[0].id, docs[2].id]
    assert "fourth reading" in built.failed[1].error
    assert sorted(built.knowledge_base.graph.documents) == [docs[1].id]
