"""Train the fact verifier and score it on the frozen test split.

    python training/train_verifier.py --design cross --out noema/ingest/verifier   # the shipped one
    python training/train_verifier.py --design head                                # the other design

Two designs read the same examples (``examples.py``):

- ``cross``: all-MiniLM-L6-v2 as a cross-encoder over (the fact, the sentence with its two ends
  marked and its document's title); the bottom layers stay those of the installed model, the top
  ``--layers`` and a linear head are tuned. Only what differs from the installed model is saved:
  the tuned layers and the head, in float16.
- ``head``: the installed model run over the sentence alone (its token states, as a sentence
  pass gives them) and over the fact's text; a small network over the states of the two ends'
  spans, the sentence, the fact and their products.

Train labels are split again by document into ``fit`` (fitted on) and ``dev`` (the calibration,
which maps the model's score to the probability a fact is true, and the choice of the floor are
made on it); the frozen ``test`` labels are only scored. Seeded; 2 CPU threads.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from examples import Example, all_examples  # noqa: E402

SEED = 73
MAX_LENGTH = 128


def fact_text(e: Example) -> str:
    time_part = f" [{e.time}]" if e.time else ""
    return (
        f"{e.subject} ({e.subject_type}) {e.predicate.replace('_', ' ')} "
        f"{e.object} ({e.object_type}){time_part}"
    )


def marked_sentence(e: Example) -> str:
    """The sentence with the subject in << >> and the object in [[ ]], after its title; an end
    the sentence does not name is left unmarked (the fact then rests on the title or a pronoun)."""
    marks = []
    if e.subject_span:
        marks += [(e.subject_span[0], " << "), (e.subject_span[1], " >> ")]
    if e.object_span:
        marks += [(e.object_span[0], " [[ "), (e.object_span[1], " ]] ")]
    text = e.sentence
    for at, mark in sorted(marks, key=lambda m: -m[0]):
        text = text[:at] + mark + text[at:]
    return f"{e.title}: {' '.join(text.split())}"


def dev_part(e: Example) -> bool:
    """About one train document in five is the dev part (labels only)."""
    digest = hashlib.sha256(f"dev\0{e.title}".encode()).hexdigest()
    return e.source == "label" and int(digest, 16) % 5 == 0


def roc_auc(y: np.ndarray, p: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, p))


def platt(scores: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(C=1e4).fit(scores.reshape(-1, 1), y)
    return float(lr.coef_[0, 0]), float(lr.intercept_[0])


def calibrated(scores: np.ndarray, ab: tuple[float, float]) -> np.ndarray:
    return 1 / (1 + np.exp(-(ab[0] * scores + ab[1])))


def train_cross(fit: list[Example], layers: int, epochs: int, out: Path | None) -> Any:
    import torch
    from transformers import AutoModel, AutoTokenizer

    from noema.resources import resolve_embedding_model

    path = resolve_embedding_model()
    tokenizer = AutoTokenizer.from_pretrained(path)
    bert = AutoModel.from_pretrained(path)
    n_layers = len(bert.encoder.layer)
    for p in bert.parameters():
        p.requires_grad = False
    tuned = bert.encoder.layer[n_layers - layers :]
    for p in tuned.parameters():
        p.requires_grad = True
    head = torch.nn.Linear(bert.config.hidden_size, 1)

    def score(batch: list[Example]) -> Any:
        enc = tokenizer(
            [fact_text(e) for e in batch],
            [marked_sentence(e) for e in batch],
            truncation="only_second",
            max_length=MAX_LENGTH,
            padding=True,
            return_tensors="pt",
        )
        states = bert(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).float()
        pooled = (states * mask).sum(1) / mask.sum(1)
        return head(pooled).squeeze(-1)

    params = [
        {"params": [p for p in tuned.parameters()], "lr": 4e-5},
        {"params": head.parameters(), "lr": 1e-3},
    ]
    optimizer = torch.optim.AdamW(params, weight_decay=0.01)
    rng = random.Random(SEED)
    positives = sum(e.label for e in fit)
    weight = torch.tensor((len(fit) - positives) / max(positives, 1))
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=weight)
    order = list(range(len(fit)))
    steps = epochs * math.ceil(len(fit) / 32)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=[4e-5, 1e-3], total_steps=steps, pct_start=0.1
    )
    bert.train()
    start = time.perf_counter()
    for epoch in range(epochs):
        rng.shuffle(order)
        total = 0.0
        for at in range(0, len(order), 32):
            batch = [fit[i] for i in order[at : at + 32]]
            y = torch.tensor([float(e.label) for e in batch])
            loss = loss_fn(score(batch), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += float(loss) * len(batch)
        print(
            f"epoch {epoch + 1}: loss {total / len(fit):.4f} ({time.perf_counter() - start:.0f} s)",
            flush=True,
        )
    bert.eval()

    def predict(examples: list[Example]) -> np.ndarray:
        with torch.inference_mode():
            return np.concatenate(
                [score(examples[at : at + 64]).numpy() for at in range(0, len(examples), 64)]
            )

    if out is not None:
        from safetensors.torch import save_file

        state = {
            f"encoder.layer.{n_layers - layers + i}.{k}": v.detach().half().contiguous()
            for i, layer in enumerate(tuned)
            for k, v in layer.state_dict().items()
        }
        state.update(
            {f"head.{k}": v.detach().half().contiguous() for k, v in head.state_dict().items()}
        )
        out.mkdir(parents=True, exist_ok=True)
        save_file(state, str(out / "verifier.safetensors"))
    return predict


def _pattern_baseline(test: list[Example], y: np.ndarray) -> None:
    """The pattern's confidence on the same test labels, for the table beside the verifier's."""
    from noema.ingest.confidence import CONFIDENCE

    conf = np.array([CONFIDENCE.get(e.pattern, 0.5) for e in test])
    print(f"pattern confidence on the test split: ROC AUC {roc_auc(y, conf):.3f}")


TYPES = ("PERSON", "ORG", "GPE", "LOC", "DATE", "EVENT", "PRODUCT", "MONEY", "OTHER")


def _shape(name: str) -> list[float]:
    """What a name's spelling says: a common noun, a cut name, a number."""
    return [
        float(not any(c.isupper() for c in name)),
        float(name[-1:] in ",;:-–—'"),
        float(any(c.isdigit() for c in name)),
        float(len(name.split()) >= 3),
        float(len(name.split()) == 1),
    ]


def _pooled_span(
    states: np.ndarray, offsets: list[tuple[int, int]], span: tuple[int, int] | None
) -> tuple[np.ndarray, list[int]]:
    """The mean token state over a character span, and its tokens (none: zeros)."""
    tokens = (
        [i for i, (a, b) in enumerate(offsets) if b > a and a < span[1] and span[0] < b]
        if span
        else []
    )
    if not tokens:
        return np.zeros(states.shape[1], dtype=np.float32), []
    return states[tokens].mean(0), tokens


def head_features(examples: list[Example]) -> np.ndarray:
    """The head's input of each example: the installed model's token states of the sentence
    alone (one pass a sentence, shared by its facts), pooled over each end's span, over the words
    between them and over the sentence; the predicate's embedding and its products with the
    ends; types, the extraction pattern, the names' spelling, the time."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from noema.ingest.confidence import CONFIDENCE
    from noema.resources import resolve_embedding_model

    path = resolve_embedding_model()
    tokenizer = AutoTokenizer.from_pretrained(path)
    bert = AutoModel.from_pretrained(path).eval()
    patterns = list(CONFIDENCE)
    sentences = sorted({e.sentence for e in examples})
    states: dict[str, tuple[np.ndarray, list[tuple[int, int]]]] = {}
    with torch.inference_mode():
        for at in range(0, len(sentences), 64):
            batch = sentences[at : at + 64]
            enc = tokenizer(
                batch,
                truncation=True,
                max_length=MAX_LENGTH,
                padding=True,
                return_offsets_mapping=True,
                return_tensors="pt",
            )
            offsets = enc.pop("offset_mapping")
            hidden = bert(**enc).last_hidden_state.numpy()
            for i, sentence in enumerate(batch):
                n = int(enc["attention_mask"][i].sum())
                states[sentence] = (hidden[i, :n], [tuple(o) for o in offsets[i, :n].tolist()])
        predicates = sorted({e.predicate for e in examples})
        enc = tokenizer(
            [q.replace("_", " ") for q in predicates], padding=True, return_tensors="pt"
        )
        hidden = bert(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).float()
        pooled = ((hidden * mask).sum(1) / mask.sum(1)).numpy()
    predicate_vector = dict(zip(predicates, pooled, strict=True))
    dim = bert.config.hidden_size
    rows = []
    for e in examples:
        hidden_states, offsets = states[e.sentence]

        s, s_tokens = _pooled_span(hidden_states, offsets, e.subject_span)
        o, o_tokens = _pooled_span(hidden_states, offsets, e.object_span)
        if s_tokens and o_tokens:
            low, high = sorted((max(s_tokens), min(o_tokens)))
            between = hidden_states[low + 1 : high]
        else:
            between = np.zeros((0, dim), dtype=np.float32)
        b = between.mean(0) if len(between) else np.zeros(dim, dtype=np.float32)
        c = hidden_states[1:-1].mean(0) if len(hidden_states) > 2 else hidden_states.mean(0)
        q = predicate_vector[e.predicate]
        one_hot = [float(e.subject_type == t) for t in TYPES] + [
            float(e.object_type == t) for t in TYPES
        ]
        pattern = [float(e.pattern == x) for x in patterns]
        flags = [
            float(not s_tokens),
            float(not o_tokens),
            float(bool(e.time)),
            float(bool(s_tokens and o_tokens and min(s_tokens) > min(o_tokens))),
            min(len(between), 30) / 30,
            float(e.subject.lower() in e.title.lower()),
            *_shape(e.subject),
            *_shape(e.object),
        ]
        rows.append(
            np.concatenate([s, o, b, c, q, s * q, o * q, one_hot, pattern, flags]).astype(
                np.float32
            )
        )
    return np.stack(rows)


def train_head(fit: list[Example], epochs: int, out: Path | None) -> Any:
    import torch

    x = torch.from_numpy(head_features(fit))
    y = torch.tensor([float(e.label) for e in fit])
    mean, std = x.mean(0), x.std(0) + 1e-4
    net = torch.nn.Sequential(
        torch.nn.Linear(x.shape[1], 256),
        torch.nn.GELU(),
        torch.nn.Dropout(0.3),
        torch.nn.Linear(256, 1),
    )
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=0.05)
    positives = float(y.sum())
    loss_fn = torch.nn.BCEWithLogitsLoss(
        pos_weight=torch.tensor((len(y) - positives) / max(positives, 1.0))
    )
    generator = torch.Generator().manual_seed(SEED)
    for epoch in range(epochs):
        net.train()
        order = torch.randperm(len(y), generator=generator)
        total = 0.0
        for at in range(0, len(y), 64):
            idx = order[at : at + 64]
            loss = loss_fn(net((x[idx] - mean) / std).squeeze(-1), y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
        if (epoch + 1) % 5 == 0:
            print(f"epoch {epoch + 1}: loss {total / len(y):.4f}", flush=True)
    net.eval()

    def predict(examples: list[Example]) -> np.ndarray:
        with torch.inference_mode():
            features = torch.from_numpy(head_features(examples))
            return net((features - mean) / std).squeeze(-1).numpy()

    if out is not None:
        from safetensors.torch import save_file

        state = {f"head.{k}": v.detach().contiguous() for k, v in net.state_dict().items()}
        state.update({"norm.mean": mean.contiguous(), "norm.std": std.contiguous()})
        out.mkdir(parents=True, exist_ok=True)
        save_file(state, str(out / "verifier_head.safetensors"))
    return predict


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--design", choices=("cross", "head"), default="cross")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--redocred", type=int, default=4000, help="Re-DocRED pairs (0: none)")
    parser.add_argument("--no-corruptions", action="store_true")
    args = parser.parse_args()
    import torch

    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    train, test = all_examples(args.redocred)
    if args.no_corruptions:
        train = [e for e in train if not e.source.startswith("corruption")]
    dev = [e for e in train if dev_part(e)]
    dev_titles = {e.title for e in dev}
    fit = [e for e in train if e.title not in dev_titles]
    print(f"fit {len(fit)}, dev {len(dev)}, test {len(test)}", flush=True)
    start = time.perf_counter()
    if args.design == "cross":
        predict = train_cross(fit, args.layers, args.epochs, args.out)
    else:
        predict = train_head(fit, args.epochs, args.out)
    print(f"trained in {time.perf_counter() - start:.0f} s", flush=True)
    dev_scores = predict(dev)
    dev_y = np.array([e.label for e in dev])
    ab = platt(dev_scores, dev_y)
    test_scores = predict(test)
    test_y = np.array([e.label for e in test])
    p = calibrated(test_scores, ab)
    report = {
        "design": args.design,
        "layers": args.layers,
        "epochs": args.epochs,
        "dev_auc": roc_auc(dev_y, dev_scores),
        "test_auc": roc_auc(test_y, test_scores),
        "platt": ab,
        "test_n": len(test),
        "test_true": int(test_y.sum()),
    }
    print(json.dumps(report, indent=1))
    if args.out is not None:
        (args.out / "verifier.json").write_text(json.dumps(report, indent=1) + "\n")
    np.save(f"/tmp/verifier_test_{args.design}.npy", p)
    _pattern_baseline(test, test_y)
    return 0


if __name__ == "__main__":
    sys.exit(main())
