"""The commands that read or combine built bundles: ``info``, ``entity``, ``notation``,
``decode``, ``merge`` and ``validate``."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from noema.cli.common import Command, CommandError, checked_output
from noema.errors import BundleError
from noema.kb import KnowledgeBase
from noema.model.notation import decode, encode_graph
from noema.model.roundtrip import check_round_trip
from noema.repairs import describe_record, entities_named, entity_history
from noema.storage.bundle import read_manifest

__all__ = ["DECODE", "ENTITY", "INFO", "MERGE", "NOTATION", "VALIDATE"]


def add_bundle(p: argparse.ArgumentParser) -> None:
    p.add_argument("bundle")


def add_info_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("bundle")
    p.add_argument("--json", action="store_true")


def cmd_info(args: argparse.Namespace) -> int:
    info = _info(args.bundle)
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    counts = info["counts"]
    print(
        f"{args.bundle}: {info['size_bytes']:,} bytes, schema {info['schema_version']}, Noema {info['noema_version']}"
    )
    print("  " + ", ".join(f"{counts[k]} {k}" for k in _COUNTED))
    print(
        f"  embedding model: {info['embedding_model']} ({info['embedding_dimension']} dimensions)"
    )
    print(
        f"  spaCy model: {info['spacy_model']}; similarity threshold {info['similarity_threshold']}"
    )
    print(f"  merges recorded: {info['merges']}")
    return 0


_COUNTED = ("documents", "entities", "relations", "events", "facts")


def _counts(counts: Any, bundle: str) -> dict[str, int]:
    """The manifest's counts as ``info`` prints them. Only the manifest is read, so nothing
    else has checked them (a load compares them with the graph)."""
    if not isinstance(counts, dict) or not all(
        isinstance(counts.get(k), int) and not isinstance(counts[k], bool) for k in _COUNTED
    ):
        raise BundleError(
            f"{bundle!r}: manifest counts {counts!r:.200} is not an object of the "
            f"{', '.join(_COUNTED)} counts; the bundle is damaged"
        )
    return {k: counts[k] for k in _COUNTED}


def _info(bundle: str) -> dict[str, Any]:
    # the manifest says it all from schema 3 on: nothing else is inflated, parsed or embedded
    manifest = read_manifest(bundle)
    merges = manifest.get("merges")
    if not isinstance(merges, int):  # an older bundle: the merge log is inside graph.json
        merges = len(KnowledgeBase.load(bundle).merge_log)
    return {
        "path": bundle,
        "size_bytes": Path(bundle).stat().st_size,
        "schema_version": manifest.get("schema_version"),
        "noema_version": manifest.get("noema_version"),
        "counts": _counts(manifest.get("counts"), bundle),
        "embedding_model": manifest.get("embedding_model"),
        "embedding_dimension": manifest.get("embedding_dimension"),
        "spacy_model": manifest.get("spacy_model"),
        "similarity_threshold": manifest.get("similarity_threshold"),
        "merges": merges,
    }


def add_entity_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("bundle")
    p.add_argument("name", help="a name or alias, compared as canonicalization compares names")
    p.add_argument("--json", action="store_true", help="print it as JSON")


def cmd_entity(args: argparse.Namespace) -> int:
    kb = KnowledgeBase.load(args.bundle)
    state = kb.state
    matches = entities_named(state.graph, args.name)
    entity = matches[0]
    history = entity_history(state.merge_log, entity.id)
    facts = state.graph.facts_of(entity.id)
    if args.json:
        shown = {
            "entity_id": entity.id,
            "name": entity.name,
            "type": entity.type,
            "aliases": sorted(entity.aliases),
            "history": [
                {**asdict(r), "description": describe_record(r, entity.type)} for r in history
            ],
            "facts": facts,
            "others": [e.id for e in matches[1:]],
        }
        print(json.dumps(shown, indent=2, ensure_ascii=False))
        return 0
    print(f"{entity.name} :{entity.type} ({entity.id})")
    if entity.aliases:
        print("  aliases: " + ", ".join(sorted(entity.aliases)))
    for record in history:
        documents = ", ".join(record.document_ids)
        print(
            f"  {describe_record(record, entity.type)}" + (f" [{documents}]" if documents else "")
        )
    if len(matches) > 1:
        print("  other entities of this name: " + ", ".join(e.id for e in matches[1:]))
    if facts:
        print(kb.render_facts(facts))
    return 0


def cmd_notation(args: argparse.Namespace) -> int:
    kb = KnowledgeBase.load(args.bundle)
    text = encode_graph(kb.graph)
    if text:
        print(text)
    return 0


def add_decode_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", default="-", help="notation file, or - for stdin (default)")


def cmd_decode(args: argparse.Namespace) -> int:
    if args.file == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(args.file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{args.file}: cannot read ({exc})") from exc
    sentences = decode(text)
    if sentences:
        print(sentences)
    return 0


def add_merge_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("bundles", nargs="+", metavar="BUNDLE")
    p.add_argument("-o", "--output", required=True)


def cmd_merge(args: argparse.Namespace) -> int:
    checked_output(args.output)
    kb = KnowledgeBase.load(args.bundles[0])
    for path in args.bundles[1:]:
        report = kb.merge(KnowledgeBase.load(path))
        print(
            f"merged {path}: {report.documents} documents, {report.new_relations} new relations, {len(report.merges)} entity merges",
            file=sys.stderr,
        )
    kb.save(args.output)
    g = kb.graph
    print(
        f"Wrote {args.output}: {len(g.documents)} documents, {len(g.entities)} entities, {len(g.relations)} relations, {len(g.events)} events"
    )
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    # every member against its sha256 (an ordinary opening hashes the small ones only), and
    # the members that opening does not read (graph.json, the rows of index.faiss) against
    # the ones it reads
    kb = KnowledgeBase.load(args.bundle, verify=True)
    report = check_round_trip(kb.graph)
    g = kb.graph
    if report.ok:
        print(
            "OK: every member matches its sha256 and the members agree; "
            f"{len(g.entities)} entities, {len(g.relations)} relations and {len(g.events)} "
            "events round-trip"
        )
        return 0
    for label, items in (
        ("entity", report.lost_entities),
        ("relation", report.lost_relations),
        ("event", report.lost_events),
    ):
        for item in items:
            print(f"lost {label}: {item}")
    print(
        f"Error: {len(report.lost_entities) + len(report.lost_relations) + len(report.lost_events)} items did not survive the round trip",
        file=sys.stderr,
    )
    return 1


INFO = Command(
    "info",
    "Show a bundle's counts, models and size.",
    "noema info kb.noema",
    add_info_arguments,
    cmd_info,
)
ENTITY = Command(
    "entity",
    "Show an entity by name: its type, aliases, history (merges and type changes) and facts.",
    'noema entity kb.noema "Google"',
    add_entity_arguments,
    cmd_entity,
)
NOTATION = Command(
    "notation",
    "Print the whole graph of a bundle as notation.",
    "noema notation kb.noema",
    add_bundle,
    cmd_notation,
)
DECODE = Command(
    "decode",
    "Turn notation into sentences.",
    "noema notation kb.noema | noema decode -",
    add_decode_arguments,
    cmd_decode,
)
MERGE = Command(
    "merge",
    "Combine bundles into one, canonicalizing across them without parsing any text again.",
    "noema merge part1.noema part2.noema -o all.noema",
    add_merge_arguments,
    cmd_merge,
)
VALIDATE = Command(
    "validate",
    "Check a bundle: every member against its sha256 and its structure, that graph.json holds "
    "the graph graph.columns holds and index.faiss the stored vectors, and that its graph "
    "survives a notation round trip.",
    "noema validate kb.noema",
    add_bundle,
    cmd_validate,
)
