"""Vectors pooled from one model pass per paragraph beside the embedded ones.

    python benchmarks/pooled.py --data hotpotqa --questions 200 --bundle /tmp/b/hotpot.noema
    python benchmarks/pooled.py --data musique --questions 100 --bundle /tmp/b/musique.noema

The bundle is one the recall benchmarks saved (``hotpotqa.py --bundle`` / ``musique.py
--bundle``) over the same questions. Each document is run once through the embedding model (its
title prefixed as the sentence rendering prefixes it; windows of at most 256 word pieces cut at
sentence ends), the token states are kept, and the knowledge base's vectors are replaced in
place by pooled ones; questions are embedded as always. Variants:

``embedded``           the vectors as built (the baseline)
``sentences``          a sentence: the mean of its tokens' states
``sentences+title``    the same with the title's tokens, the pooled twin of "title: sentence"
``facts``              ``sentences+title``, and a fact: its sentence's tokens with the title's
``facts+names1``       ``facts`` plus 1 x the mean of its subject's and object's name tokens
``facts+names2``       the same, weighted 2

Printed: answer in context at 100 / 200 / 400 tokens in every format for every variant, and what
a build costs here: the one pass, the chunk index build of the same paragraphs and spaCy's parse
of them, in the same process. Nothing here is part of the library: it measures whether pooled
vectors could be (the issue keeps them only where recall at 200 stays within a point).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import numpy as np  # noqa: E402
from _common import machine, print_table, timer  # noqa: E402
from _recall import Question  # noqa: E402

import noema  # noqa: E402
from noema.evaluate import ChunkRetriever, answer_in_context  # noqa: E402
from noema.model.spans import (
    document_title,  # noqa: E402
    first_sentence,  # noqa: E402
)
from noema.resources import DEFAULT_SPACY_MODEL, load_embedding_model, load_spacy_model  # noqa: E402
from noema.vectors.embed import _bfloat16_autocast, _with_bfloat16_linears  # noqa: E402

VARIANTS = ("embedded", "sentences", "sentences+title", "facts", "facts+names1", "facts+names2")
BUDGETS = (100, 200, 400)
FORMATS = ("notation", "natural_language", "sentences")
MAX_PIECES = 256  # all-MiniLM-L6-v2's max_seq_length
TITLE = -1  # the offset recorded for the title's tokens and the special tokens


class Pass:
    """Token states of every document, from one model pass each (or a few windows)."""

    def __init__(self, graph: noema.SemanticGraph, model: Any) -> None:
        self.graph, self.model = graph, model
        self.states: dict[str, list[tuple[Any, Any]]] = {}

    def windows(self, document_id: str) -> list[tuple[str, str, int, str]]:
        """(document id, title prefix, offset, text) pieces of at most MAX_PIECES word pieces."""
        text = self.graph.documents[document_id].text
        title = document_title(self.graph, document_id)
        prefix = f"{title}: " if title else ""
        tokenizer = self.model.tokenizer

        def pieces(t: str) -> int:
            return len(tokenizer(prefix + t)["input_ids"])

        if pieces(text) <= MAX_PIECES:
            return [(document_id, prefix, 0, text)]
        ends = [m.end() for m in re.finditer(r"[.!?]\s+", text)] + [len(text)]
        out, start = [], 0
        while start < len(text):
            fitting = [e for e in ends if e > start and pieces(text[start:e]) <= MAX_PIECES]
            end = fitting[-1] if fitting else next(e for e in ends if e > start)
            out.append((document_id, prefix, start, text[start:end]))
            start = end
        return out

    def run(self) -> int:
        """Embed every window; returns how many there were."""
        import torch

        windows = [w for d in self.graph.documents for w in self.windows(d)]
        windows.sort(key=lambda w: -len(w[3]))
        encoder = self.model[0].auto_model
        with torch.inference_mode(), _bfloat16_autocast():
            for at in range(0, len(windows), 32):
                batch = windows[at : at + 32]
                encoded = self.model.tokenizer(
                    [p + t for _, p, _, t in batch],
                    padding=True,
                    truncation=True,
                    max_length=MAX_PIECES,
                    return_offsets_mapping=True,
                    return_tensors="pt",
                )
                offsets = encoded.pop("offset_mapping").numpy().astype(np.int64)
                states = encoder(**encoded).last_hidden_state.float().numpy()
                mask = encoded["attention_mask"].numpy().astype(bool)
                for k, (document_id, prefix, start, _) in enumerate(batch):
                    spans = offsets[k][mask[k]]
                    # the prefix's tokens and [CLS] count as the title's; [SEP] as nothing
                    spans = np.where(spans >= len(prefix), spans - len(prefix) + start, TITLE)
                    spans[-1] = TITLE - 1
                    self.states.setdefault(document_id, []).append((spans, states[k][mask[k]]))
        return len(windows)

    def tokens(self, document_id: str, start: int, end: int, title: bool) -> Any:
        """States of the tokens inside ``[start, end)`` (and the title's), or None."""
        chosen = []
        for spans, states in self.states.get(document_id, ()):
            inside = (spans[:, 0] >= max(start, 0)) & (spans[:, 1] <= end)
            if inside.any():
                chosen.append(states[inside | (title & (spans[:, 0] == TITLE))])
        return np.concatenate(chosen) if chosen else None


def _unit(v: Any) -> Any:
    return v / max(float(np.linalg.norm(v)), 1e-12)


def sentence_vectors(kb: noema.KnowledgeBase, passed: Pass, title: bool, base: Any) -> Any:
    sidecar = kb.state.sentences
    out = base.copy()
    for sentence, key in sidecar.keys.items():
        states = passed.tokens(sentence.document_id, sentence.start, sentence.end, title)
        if states is not None:
            out[sidecar.vectors.rows_of([key])[0]] = _unit(states.mean(axis=0))
    return out


def fact_vectors(kb: noema.KnowledgeBase, passed: Pass, weight: float, base: Any) -> Any:
    graph, index = kb.graph, kb.state.index
    out = base.copy()
    for row, fact_id in enumerate(index.ids):
        sentence = first_sentence(graph, fact_id)
        if sentence is None:
            continue
        states = passed.tokens(sentence.document_id, sentence.start, sentence.end, True)
        if states is None:
            continue
        vector = states.mean(axis=0)
        if weight:
            text = graph.documents[sentence.document_id].text[sentence.start : sentence.end].lower()
            names = []
            for entity_id in graph.fact(fact_id).entity_ids:
                entity = graph.entities[entity_id]
                for name in (entity.name, *entity.aliases):
                    at = text.find(name.lower())
                    if at >= 0:
                        start = sentence.start + at
                        found = passed.tokens(sentence.document_id, start, start + len(name), False)
                        if found is not None:
                            names.append(found)
                        break
            if names:
                vector = vector + weight * np.concatenate(names).mean(axis=0)
        out[row] = _unit(vector)
    return out


def recall(kb: noema.KnowledgeBase, questions: Sequence[Question]) -> dict[tuple[str, int], float]:
    hits = {(f, b): 0 for f in FORMATS for b in BUDGETS}
    for q in questions:
        for f in FORMATS:
            for b in BUDGETS:
                text = kb.retrieve(q.text, max_tokens=b, format=f).text  # type: ignore[arg-type]
                hits[(f, b)] += answer_in_context(q.answers, text)
    return {key: n / len(questions) for key, n in hits.items()}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", choices=("hotpotqa", "musique"), required=True)
    parser.add_argument("--questions", type=int, default=None)
    parser.add_argument("--bundle", type=Path, required=True)
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    args = parser.parse_args()
    if args.data == "hotpotqa":
        import hotpotqa as data
    else:
        import musique as data
    load: Callable[[int], tuple[list[Question], list[noema.Document]]] = data.load
    questions, documents = load(args.questions or (200 if args.data == "hotpotqa" else 100))
    kb = noema.KnowledgeBase.load(args.bundle)
    model = _with_bfloat16_linears(load_embedding_model(kb.embedding_model))
    kb.embedder.embed(["warm up"])
    passed = Pass(kb.graph, model)
    with timer() as one_pass:
        windows = passed.run()
    with timer() as chunk_build:
        ChunkRetriever(kb.embedder, documents)
    nlp = load_spacy_model(DEFAULT_SPACY_MODEL).nlp
    list(nlp.pipe(["Warm up."]))
    with timer() as parse:
        for _ in nlp.pipe([d.text for d in documents], batch_size=64):
            pass
    sentences_base = kb.state.sentences.vectors.vectors.copy()
    facts_base = kb.state.index.vectors.copy()
    rows = []
    for variant in args.variants:
        pooled_sentences = variant != "embedded"
        title = variant != "sentences"
        weight = {"facts+names1": 1.0, "facts+names2": 2.0}.get(variant, 0.0)
        sentences = (
            sentence_vectors(kb, passed, title, sentences_base)
            if pooled_sentences
            else sentences_base
        )
        facts = (
            fact_vectors(kb, passed, weight, facts_base)
            if variant.startswith("facts")
            else facts_base
        )
        # the experiment swaps the stored vectors in place, which no public API offers on
        # purpose (a knowledge base's vectors always come from its embedder)
        kb.state.sentences.vectors._vectors[:] = sentences
        kb.state.index._vectors[:] = facts
        found = recall(kb, questions)
        rows.append(
            [variant] + [" / ".join(f"{100 * found[(f, b)]:.1f}" for b in BUDGETS) for f in FORMATS]
        )
        print(f"{variant} done", file=sys.stderr, flush=True)
    print(f"{args.data}: {len(questions)} questions, {len(documents):,} paragraphs; {machine()}\n")
    print_table([f"vectors ({args.bundle.name})", *FORMATS], rows)
    print()
    c = chunk_build[0]
    print_table(
        ["stage, same paragraphs", "seconds", "x chunk build"],
        [
            [
                f"one pass per paragraph ({windows:,} windows)",
                f"{one_pass[0]:.1f}",
                f"{one_pass[0] / c:.2f}",
            ],
            ["chunk index build (embed paragraphs)", f"{c:.1f}", "1.00"],
            ["spaCy parse alone (nlp.pipe)", f"{parse[0]:.1f}", f"{parse[0] / c:.2f}"],
        ],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
