"""Extraction quality on Re-DocRED, and canonicalization time at 10k and 100k entities.

    python benchmarks/redocred.py [--docs 500] [--sizes 10000 100000] [--tables extraction nodes]

Entity recall: a gold entity counts as found when an extracted entity of the same document has
one of its mention names as its name or an alias (after Noema's name normalization). Linked-pair recall: a gold (head,
tail) pair counts when both are found and some extracted relation connects them, either
direction. Linked-pair precision: the share of extracted relations between found gold entities
whose pair is a gold pair (Re-DocRED does not annotate every true pair, so this is a lower
bound), of every relation and of those notation states at its default floor (the topic links
below it are there to reach names, not to state). Relations to entities outside the gold set are
counted separately.

Entity nodes and types, each document extracted on its own: a found gold entity is split when
its found mention names land on two or more extracted entities of its document; its type is
judged on the extracted entity most of its mentions land on, for the gold kinds whose type is
unambiguous (PER is PERSON, ORG is ORG, LOC is GPE or LOC). OTHER claims nothing,
so it is counted apart from a wrong type.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import data_file, machine, peak_rss_mb, print_table, timer  # noqa: E402

import noema  # noqa: E402
from noema import normalize_name  # noqa: E402
from noema.retrieval.options import NOTATION_MIN_CONFIDENCE  # noqa: E402


def detokenize(tokens: list[str]) -> str:
    text = " ".join(tokens)
    for a, b in (
        (" ,", ","),
        (" .", "."),
        (" 's", "'s"),
        ("( ", "("),
        (" )", ")"),
        (" ;", ";"),
        (" :", ":"),
    ):
        text = text.replace(a, b)
    return text


def build_documents(docs: list[dict]) -> list[noema.Document]:  # type: ignore[type-arg]
    """One Noema document per Re-DocRED document, its id the document's index."""
    return [
        noema.Document(
            " ".join(detokenize(s) for s in d["sents"]), id=str(n), metadata={"title": d["title"]}
        )
        for n, d in enumerate(docs)
    ]


def extraction(docs: list[dict]) -> None:  # type: ignore[type-arg]
    documents = build_documents(docs)
    extractor = noema.SpacyExtractor()
    with timer() as took:
        graph = extractor.extract(documents)
    by_doc: dict[str, dict[str, str]] = defaultdict(dict)  # doc -> normalized name -> entity id
    for entity in graph.entities.values():
        for doc_id in {m.document_id for m in entity.mentions} or set():
            for name in (entity.name, *entity.aliases):
                by_doc[doc_id][normalize_name(name)] = entity.id
    linked: dict[str, set[frozenset[str]]] = defaultdict(set)
    stated: dict[str, set[frozenset[str]]] = defaultdict(set)  # what notation states
    for rel in graph.relations.values():
        for doc_id in {m.document_id for m in rel.mentions}:
            linked[doc_id].add(frozenset((rel.subject_id, rel.object_id)))
            if rel.confidence >= NOTATION_MIN_CONFIDENCE:
                stated[doc_id].add(frozenset((rel.subject_id, rel.object_id)))

    gold_entities = found_entities = gold_pairs = found_pairs = 0
    extracted_between_gold = correct_between_gold = extracted_other = 0
    stated_between_gold = stated_correct = 0
    for n, doc in enumerate(docs):
        names = by_doc.get(str(n), {})
        match: dict[int, str] = {}
        for v, cluster in enumerate(doc["vertexSet"]):
            gold_entities += 1
            for mention in cluster:
                eid = names.get(normalize_name(mention["name"]))
                if eid:
                    match[v] = eid
                    found_entities += 1
                    break
        pairs = {frozenset((label["h"], label["t"])) for label in doc["labels"]}
        gold_pairs += len(pairs)
        doc_links = linked.get(str(n), set())
        for pair in pairs:
            ends = [match.get(v) for v in pair]
            if all(ends) and frozenset(ends) in doc_links:  # type: ignore[arg-type]
                found_pairs += 1
        gold_ids = {eid: v for v, eid in match.items()}
        for link in doc_links:
            if all(e in gold_ids for e in link):
                extracted_between_gold += 1
                if frozenset(gold_ids[e] for e in link) in pairs:
                    correct_between_gold += 1
            else:
                extracted_other += 1
        for link in stated.get(str(n), set()):
            if all(e in gold_ids for e in link):
                stated_between_gold += 1
                stated_correct += frozenset(gold_ids[e] for e in link) in pairs
    words = sum(len(s) for d in docs for s in d["sents"])
    print(
        f"Re-DocRED dev, {len(docs)} documents, {words:,} words; spaCy model {extractor.model_name}; {machine()}"
    )
    print(f"extraction took {took[0]:.1f}s ({words / took[0]:,.0f} words/s)\n")
    print_table(
        ["measure", "value"],
        [
            [
                "entity recall",
                f"{found_entities / gold_entities:.1%} ({found_entities:,}/{gold_entities:,})",
            ],
            [
                "linked-pair recall",
                f"{found_pairs / gold_pairs:.1%} ({found_pairs:,}/{gold_pairs:,})",
            ],
            [
                "linked-pair precision (between gold entities)",
                f"{correct_between_gold / max(extracted_between_gold, 1):.1%} ({correct_between_gold:,}/{extracted_between_gold:,})",
            ],
            [
                f"the same, relations notation states (confidence >= {NOTATION_MIN_CONFIDENCE})",
                f"{stated_correct / max(stated_between_gold, 1):.1%} ({stated_correct:,}/{stated_between_gold:,})",
            ],
            ["relations touching a non-gold entity", f"{extracted_other:,}"],
            ["relations per document", f"{len(graph.relations) / len(docs):.1f}"],
        ],
    )


# the types an extracted entity of each gold kind may rightly have; TIME, NUM and MISC map to
# several types or none, so they are left out of the type check
_RIGHT_TYPES = {"PER": ("PERSON",), "ORG": ("ORG",), "LOC": ("GPE", "LOC")}


def entity_nodes(docs: list[dict]) -> None:  # type: ignore[type-arg]
    """Entity nodes and types on the gold clusters, each document extracted on its own (one
    ``nlp.pipe`` stream as in :func:`extraction`, one graph per document). A gold entity is found
    as in :func:`extraction`'s entity recall; it is split when its found mention names land on two
    or more extracted entities. Its type is judged on the entity most of its mentions land on
    (ties to the first), for clusters whose every mention gold gives one of PER, ORG, LOC."""
    extractor = noema.SpacyExtractor()
    with timer() as took:
        graphs = list(extractor.extract_batches(build_documents(docs), 1))
    gold_entities = found = split = mixed_kinds = 0
    confusion: dict[str, Counter[str]] = {kind: Counter() for kind in _RIGHT_TYPES}
    for n, (doc, graph) in enumerate(zip(docs, graphs, strict=True)):
        by_name: dict[str, list[str]] = defaultdict(list)  # normalized name -> entity ids
        for entity in graph.entities.values():
            if str(n) in {m.document_id for m in entity.mentions}:
                for name in (entity.name, *entity.aliases):
                    by_name[normalize_name(name)].append(entity.id)
        for cluster in doc["vertexSet"]:
            gold_entities += 1
            # mentions landing on each entity, counted in mention order so ties go to the first
            landed = Counter(
                eid
                for mention in cluster
                for eid in by_name.get(normalize_name(mention["name"]), ())
            )
            if not landed:
                continue
            found += 1
            split += len(landed) > 1
            kinds = {mention["type"] for mention in cluster}
            if len(kinds) > 1:
                mixed_kinds += 1
                continue
            kind = kinds.pop()
            if kind in _RIGHT_TYPES:
                confusion[kind][graph.entities[landed.most_common(1)[0][0]].type] += 1
    typed = sum(sum(c.values()) for c in confusion.values())
    wrong = sum(
        count
        for kind, counts in confusion.items()
        for type_, count in counts.items()
        if type_ not in _RIGHT_TYPES[kind] and type_ != "OTHER"
    )
    other = sum(counts["OTHER"] for counts in confusion.values())

    def share(part: int, whole: int) -> str:
        return f"{part / max(whole, 1):.1%} ({part:,}/{whole:,})"

    print(
        f"\nEntity nodes and types on the gold clusters, {len(docs)} documents each extracted on "
        f"its own in {took[0]:.1f}s\n"
    )
    print_table(
        ["measure", "value"],
        [
            ["gold entities found", share(found, gold_entities)],
            ["found gold entities split across nodes", share(split, found)],
            ["found PER/ORG/LOC entities with a wrong type (not OTHER)", share(wrong, typed)],
            ["found PER/ORG/LOC entities typed OTHER", share(other, typed)],
            ["found PER/ORG/LOC entities typed right", share(typed - wrong - other, typed)],
            [
                "found gold entities whose mentions gold gives two kinds (not judged)",
                f"{mixed_kinds:,}",
            ],
        ],
    )
    columns = [t for t in noema.ENTITY_TYPES if any(c[t] for c in confusion.values())]
    print()
    print_table(
        ["gold kind", *columns, "right"],
        [
            [
                kind,
                *(f"{counts[t]:,}" for t in columns),
                share(sum(counts[t] for t in _RIGHT_TYPES[kind]), sum(counts.values())),
            ]
            for kind, counts in confusion.items()
        ],
    )


class TimedEmbedder:
    """The real embedder, timing its calls so embedding can be told apart from the rest."""

    def __init__(self, inner: noema.SentenceTransformerEmbedder) -> None:
        self.inner, self.name, self.seconds = inner, inner.name, 0.0

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts):  # type: ignore[no-untyped-def]
        with timer() as took:
            out = self.inner.embed(texts)
        self.seconds += took[0]
        return out


def canonicalization(docs: list[dict], sizes: list[int]) -> None:  # type: ignore[type-arg]
    """Time merging N entities into an empty store, then N/10 more into the filled store."""
    from noema.ingest.canonical import Canonicalizer

    rng = random.Random(0)
    pool = sorted(
        {m["name"] for d in docs for c in d["vertexSet"] for m in c if len(m["name"]) > 2}
    )
    types = ["PERSON", "ORG", "GPE", "OTHER"]
    suffixes = ["", "", "", " Inc.", " Ltd", " (band)", " Jr."]
    embedder = TimedEmbedder(noema.SentenceTransformerEmbedder())
    rows = []
    for size in sizes:

        def batch(count: int) -> noema.SemanticGraph:
            g = noema.SemanticGraph()
            for _ in range(count):
                name = rng.choice(pool) + rng.choice(suffixes)
                if rng.random() < 0.5:
                    name = f"{rng.choice(pool).split()[0]} {name}"
                g.add_entity(name, rng.choice(types))
            return g

        first, more = batch(size), batch(size // 10)
        store = noema.SemanticGraph()
        canon = Canonicalizer(embedder)
        embedder.seconds = 0.0
        with timer() as t1:
            first_result = canon.merge_into(store, first)
        embed_time = [embedder.seconds]
        with timer() as t2:
            more_result = canon.merge_into(store, more)
        rows.append(
            [
                f"{size:,}",
                f"{t1[0]:.1f}s",
                f"{embed_time[0]:.1f}s",
                f"{t1[0] - embed_time[0]:.1f}s",
                f"{len(first_result.merges):,}",
                f"{size // 10:,} into {len(store.entities) - len(more_result.new_entity_ids):,}: {t2[0]:.1f}s",
                f"{peak_rss_mb():,.0f} MB",
            ]
        )
    print(f"\nCanonicalization (synthetic names from Re-DocRED mentions, 4 types; {machine()})\n")
    print_table(
        [
            "entities",
            "merge into empty store",
            "of which embedding names",
            "rest (exact + faiss search)",
            "merges",
            "10% more into the store",
            "peak RSS",
        ],
        rows,
    )


_GOLD_KIND = {
    "PER": "person",
    "ORG": "org",
    "LOC": "place",
    "TIME": "time",
    "NUM": "num",
    "MISC": "misc",
}


def typed_once(docs: list[dict]) -> None:  # type: ignore[type-arg]
    """An entity is typed once, on the gold clusters: each document extracted on
    its own and canonicalized into one store, with the typed-once rule off and on (the same
    graphs, the same process). A name "split by type" is one whose mentions in documents where
    gold gives it one kind landed on entities of more than one type; a typed-once merge is right
    when gold gives the merged documents the kind it gives the kept entity's other documents
    (and counted apart when gold itself gives those other documents both kinds)."""
    from noema.ingest import canonical

    documents = build_documents(docs)
    gold: dict[tuple[str, str], str] = {}
    for n, d in enumerate(docs):
        for cluster in d["vertexSet"]:
            for mention in cluster:
                gold.setdefault(
                    (str(n), normalize_name(mention["name"])), _GOLD_KIND[mention["type"]]
                )
    extractor = noema.SpacyExtractor()
    graphs = [extractor.extract([doc]) for doc in documents]
    embedder = noema.SentenceTransformerEmbedder()
    rows = []
    eligible = canonical.TYPED_ONCE
    for label, types in (("off", ()), ("on", eligible)):
        canonical.TYPED_ONCE = types  # type: ignore[assignment]
        store = noema.SemanticGraph()
        canon = canonical.Canonicalizer(embedder)
        merges = [m for g in graphs for m in canon.merge_into(store, g).merges if m.rule == "type"]
        canonical.TYPED_ONCE = eligible
        types_of: dict[str, set[str]] = defaultdict(set)  # name -> types of entities it names
        kinds_of: dict[str, set[str]] = defaultdict(set)  # name -> gold kinds in its documents
        for entity in store.entities.values():
            if entity.type in ("DATE", "MONEY"):
                continue
            key = normalize_name(entity.name)
            for doc_id in {m.document_id for m in entity.mentions}:
                if (doc_id, key) in gold:
                    types_of[key].add(entity.type)
                    kinds_of[key].add(gold[(doc_id, key)])
        one_kind = [k for k in types_of if len(kinds_of[k]) == 1]
        split = sum(len(types_of[k]) > 1 for k in one_kind)
        right = mixed = wrong = unknown = 0
        for record in merges:
            key = normalize_name(record.merged_name)
            merged = {gold.get((d, key)) for d in record.document_ids} - {None}
            kept = {
                gold.get((m.document_id, key))
                for m in store.entities[record.entity_id].mentions
                if m.document_id not in record.document_ids
            } - {None}
            if not merged or not kept:
                unknown += 1
            elif merged == kept:
                right += 1
            elif merged <= kept:
                mixed += 1  # gold itself gives the kept entity's documents both kinds
                print(
                    f"typed-once merge gold itself mixes: {record.merged_name!r} {record.type} "
                    f"-> {store.entities[record.entity_id].type}, gold {merged} vs {kept}"
                )
            else:
                wrong += 1
                print(
                    f"wrong typed-once merge: {record.merged_name!r} {record.type} -> "
                    f"{store.entities[record.entity_id].type}, gold {merged} vs {kept}"
                )
        judged = right + mixed + wrong
        rows.append(
            [
                label,
                f"{split} of {len(one_kind)}",
                f"{len(merges)}",
                f"{right}/{judged} ({right / judged:.0%})" if judged else "-",
                f"{right + mixed}/{judged} ({(right + mixed) / judged:.0%})" if judged else "-",
                f"{unknown}",
                f"{len(store.entities):,}",
            ]
        )
    print(f"\nTyped once, {len(docs)} documents canonicalized into one store\n")
    print_table(
        [
            "rule",
            "gold names of one kind split by type",
            "typed-once merges",
            "right: gold gives both sides one kind",
            "right or gold mixes the kinds too",
            "without gold on a side",
            "entities",
        ],
        rows,
    )


_TABLES = ("extraction", "nodes", "typed-once", "canonicalization")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument(
        "--tables",
        nargs="+",
        choices=_TABLES,
        default=list(_TABLES),
        help="the tables to print (default: all; canonicalization is the slow one)",
    )
    args = parser.parse_args()
    docs = json.loads(data_file("redocred/dev_revised.json").read_text())[: args.docs]
    if "extraction" in args.tables:
        extraction(docs)
    if "nodes" in args.tables:
        entity_nodes(docs)
    if "typed-once" in args.tables:
        typed_once(docs)
    if "canonicalization" in args.tables and args.sizes:
        canonicalization(docs, args.sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
