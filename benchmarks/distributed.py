"""The Ray build beside a one-process ingest of the same Wikipedia paragraphs, same process.

    python benchmarks/distributed.py --paragraphs 10000 --runs 1:1 2:2 2:4
    python benchmarks/distributed.py --hotpotqa 200

Each run ``W:P`` builds on a local Ray with W workers and P partitions (``W:P:T``: T torch
threads per worker; by default the driver's threads shared among the workers); Ray is
started once before the runs, so its start-up (a few seconds) is not in the figures. For each
run: the time to build the partitions, each level of the merge tree, the whole call, and how the
result compares with the one-process build (entities by name and type, facts by names, merges by
name and document; see ``noema.distributed.build_on_ray`` for what may differ and why).

``--hotpotqa N`` builds the pool of the first N HotpotQA dev questions (as benchmarks/hotpotqa.py
does) in one process and on Ray with 2 workers, and retrieves every question from both at 100, 200
and 400 tokens: answer recall of each, and how many contexts are identical.

The last table projects a cluster of N machines from these measurements: the one-process ingest
divided over N, plus the merge tree's levels, each level's merge timed here at the size it would
have (merge time grows with the size of the parts; the table says by how much per doubling).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import data_file, machine, print_table, timer  # noqa: E402

import noema  # noqa: E402
from noema.distributed import build_on_ray  # noqa: E402
from noema.evaluate import answer_in_context  # noqa: E402


def content(kb: noema.KnowledgeBase) -> dict[str, set[tuple[object, ...]]]:
    """What a build must reproduce, ids aside: entities with every surface form merged into
    them, facts by the names at their ends, and where each entity is mentioned."""
    g = kb.graph
    name = {e.id: e.name for e in g.entities.values()}
    return {
        "entities": {(e.name, e.type, tuple(sorted(e.aliases))) for e in g.entities.values()},
        "facts": {
            (name[r.subject_id], r.predicate, name[r.object_id]) for r in g.relations.values()
        },
        "mentions": {
            (e.name, m.document_id, m.start, m.end) for e in g.entities.values() for m in e.mentions
        },
    }


def differences(
    a: dict[str, set[tuple[object, ...]]], b: dict[str, set[tuple[object, ...]]], show: int
) -> str:
    for kind in a:
        for item in sorted(a[kind] - b[kind], key=repr)[:show]:
            print(f"  {kind} only in one process: {item}")
        for item in sorted(b[kind] - a[kind], key=repr)[:show]:
            print(f"  {kind} only on Ray: {item}")
    return ", ".join(f"{k} {len(a[k] ^ b[k])} of {len(a[k]):,}" for k in a)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--paragraphs", type=int, default=10000)
    parser.add_argument(
        "--runs",
        nargs="+",
        default=["1:1", "2:2", "2:4"],
        help="WORKERS:PARTS[:THREADS per worker]",
    )
    parser.add_argument("--show", type=int, default=3, help="differences to print per kind")
    parser.add_argument("--hotpotqa", type=int, default=0, help="compare retrieval on this pool")
    args = parser.parse_args()
    if args.hotpotqa:
        return hotpotqa(args.hotpotqa, args.show)
    import ray

    lines = data_file("wiki/wiki_paragraphs.jsonl").read_text().splitlines()[: args.paragraphs]
    docs = [
        noema.Document(r["text"], id=f"{n}:{r['title']}", metadata={"title": r["title"]})
        for n, r in enumerate(json.loads(line) for line in lines)
    ]
    words = sum(len(d.text.split()) for d in docs)
    print(f"{len(docs):,} Wikipedia paragraphs, {words:,} words; {machine()}", flush=True)

    embedder = noema.SentenceTransformerEmbedder()
    single = noema.KnowledgeBase(embedder=embedder)
    single.extractor.extract([noema.Document("Warm up.")])
    embedder.embed(["warm up"])
    with timer() as single_time:
        single.ingest(docs)
    print(f"one process: {single_time[0]:.1f} s", flush=True)
    reference = content(single)

    cpus = max(int(run.split(":")[0]) for run in args.runs)
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
    rows = [
        [
            "one process (ingest)",
            f"{single_time[0]:.1f}",
            "",
            "",
            f"{single_time[0]:.1f}",
            "1.00x",
            "",
        ]
    ]
    levels_by_parts: dict[int, tuple[float, ...]] = {}
    for run in args.runs:
        workers, parts, *threads = (int(x) for x in run.split(":"))
        with timer() as total:
            built = build_on_ray(
                docs,
                workers=workers,
                partitions=parts,
                embedder=embedder,
                threads_per_worker=threads[0] if threads else None,
            )
        levels_by_parts[built.partitions] = built.level_seconds
        rows.append(
            [
                f"Ray, {workers} worker(s), {built.partitions} partition(s)"
                + (f", {threads[0]} thread(s) each" if threads else ""),
                f"{built.build_seconds:.1f}",
                " + ".join(f"{s:.1f}" for s in built.level_seconds) or "0",
                f"{built.merge_seconds / total[0]:.0%}",
                f"{total[0]:.1f}",
                f"{single_time[0] / total[0]:.2f}x",
                differences(reference, content(built.knowledge_base), args.show),
            ]
        )
        print(f"{run}: {total[0]:.1f} s", flush=True)
    ray.shutdown()
    print()
    print_table(
        [
            "build",
            "partitions built (s)",
            "merge levels (s)",
            "merge share",
            "total (s)",
            "speed-up",
            "differences from one process",
        ],
        rows,
    )

    # Projection: top-level merge of two halves of the whole corpus, and its growth per doubling
    # of part size from the deepest tree measured (its first level merges the smallest parts).
    deepest = max(levels_by_parts)
    levels = levels_by_parts[deepest]
    if not levels:
        return 0
    top = levels[-1]
    growth = (levels[-1] / levels[0]) ** (1 / (len(levels) - 1)) if len(levels) > 1 else 2.0
    print()
    print(
        f"Projection for N machines of one worker each (this machine's speed): partitions "
        f"{single_time[0]:.0f} s / N, merge level k (k = 1 at the top) {top:.1f} s / "
        f"{growth:.2f}^(k-1), from the {deepest}-part tree above (x{growth:.2f} per doubling)."
    )
    projected = []
    for n in (1, 2, 4, 8, 16, 64):
        depth = math.ceil(math.log2(n)) if n > 1 else 0
        merge = sum(top / growth**k for k in range(depth))
        projected.append(
            [
                f"{n}",
                f"{single_time[0] / n:.0f}",
                f"{merge:.0f}",
                f"{single_time[0] / n + merge:.0f}",
                f"{merge / (single_time[0] / n + merge):.0%}",
            ]
        )
    print_table(
        [
            f"machines ({len(docs):,} paragraphs)",
            "partitions (s)",
            "merges (s)",
            "total (s)",
            "merge share",
        ],
        projected,
    )
    return 0


def hotpotqa(n: int, show: int) -> int:
    import hotpotqa as pool
    import ray

    questions, docs = pool.load(n)
    embedder = noema.SentenceTransformerEmbedder()
    single = noema.KnowledgeBase(embedder=embedder)
    with timer() as single_time:
        single.ingest(docs)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    with timer() as ray_time:
        built = build_on_ray(docs, workers=2, embedder=embedder)
    ray.shutdown()
    kb = built.knowledge_base
    print(
        f"HotpotQA pool of {n} questions: {len(docs):,} paragraphs, {len(questions)} questions; "
        f"one process {single_time[0]:.0f} s, Ray (2 workers, {built.partitions} partitions) "
        f"{ray_time[0]:.0f} s; differences: {differences(content(single), content(kb), show)}"
    )
    rows = []
    for budget in (100, 200, 400):
        same = hits_single = hits_ray = 0
        for q in questions:
            a = single.retrieve(q.text, max_tokens=budget).text
            b = kb.retrieve(q.text, max_tokens=budget).text
            same += a == b
            hits_single += answer_in_context(q.answers, a)
            hits_ray += answer_in_context(q.answers, b)
        k = len(questions)
        rows.append(
            [f"{budget}", f"{hits_single / k:.1%}", f"{hits_ray / k:.1%}", f"{same} of {k}"]
        )
    print_table(
        ["tokens", "answer recall, one process", "answer recall, Ray", "identical contexts"], rows
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
