"""How sure a fact is, by the dependency rule that read it (see :mod:`noema.ingest.rules`)."""

from __future__ import annotations

__all__ = ["CONFIDENCE", "pattern_of"]

# Confidence by the pattern that produced a fact: the rule, and "+topic" when the subject is not
# named in the sentence but stood for the sentence's topic or the document's main entity (a
# pronoun, "the band", a subjectless clause). Calibrated: each value is the pattern's precision
# on the labelled sample of benchmarks/fact_labels.jsonl, smoothed as (true + 1) / (facts + 2)
# (python benchmarks/fact_precision.py score), so a fact at 0.7 is true about 7 times in 10.
# object_prep and role+topic never came up in the sample: they keep the prior (0.5) and role's
# value; succession ("when Z took over") and list (an entry of a list with its period, see
# noema.ingest.listings) are not measured yet: near the prior, apart from the rest. "custom"
# (the user's own patterns) is not measured. Every value is distinct, so a fact's confidence
# names its pattern (pattern_of); a merged fact keeps its surest pattern's.
CONFIDENCE = {
    "custom": 0.9,
    "svo": 0.75,
    "svo+topic": 0.67,
    "copula": 0.64,
    "copula+topic": 0.5,
    "prep": 0.71,
    "prep+topic": 0.72,
    "role": 0.44,
    "role+topic": 0.43,
    "object_prep": 0.52,
    "object_prep+topic": 0.48,
    "phrase": 0.54,
    "phrase+topic": 0.74,
    "succession": 0.56,
    "list": 0.58,
    "succession+topic": 0.47,
    "sentence": 0.25,
    "sentence+topic": 0.15,
}


def pattern_of(confidence: float) -> str | None:
    """The pattern whose confidence ``confidence`` is (see CONFIDENCE), else ``None``."""
    for pattern, value in CONFIDENCE.items():
        if abs(value - confidence) < 1e-9:
            return pattern
    return None
