"""How sure a fact is, by the dependency rule that read it (see :mod:`noema.ingest.rules`)."""

from __future__ import annotations

__all__ = ["CONFIDENCE", "pattern_of"]

# Confidence by the pattern that produced a fact: the rule, and "+topic" when the subject is not
# named in the sentence but stood for the sentence's topic or the document's main entity (a
# pronoun, "the band", a subjectless clause). Calibrated: each value is the pattern's precision
# on the labelled sample of benchmarks/fact_labels.jsonl (1,215 facts, 1,050 of them read again
# by the extractor of 2026-12-06), smoothed as (true + 1) / (facts + 2) (python
# benchmarks/fact_precision.py score), so a fact at 0.7 is true about 7 times in 10. A pattern
# with fewer than ten labelled facts keeps its earlier value (object_prep: the prior 0.5;
# role+topic: role's); succession ("when Z took over") and list (an entry of a list with its
# period, see noema.ingest.listings) are not measured yet: near the prior, apart from the rest.
# "custom" (the user's own patterns) is not measured. Every value is distinct, so a fact's
# confidence names its pattern (pattern_of); a merged fact keeps its surest pattern's. The
# facts a fixed floor leaves out are the topic links (sentence, sentence+topic); a model of
# each fact's own features was fitted on the same labels and did not do better on new facts
# (benchmarks/fit_confidence.py).
CONFIDENCE = {
    "custom": 0.9,
    "copula": 0.68,
    "prep+topic": 0.67,
    "phrase": 0.62,
    "list": 0.58,
    "phrase+topic": 0.56,
    "succession": 0.55,
    "object_prep": 0.52,
    "prep": 0.51,
    "object_prep+topic": 0.48,
    "copula+topic": 0.47,
    "succession+topic": 0.46,
    "svo+topic": 0.44,
    "svo": 0.43,
    "role": 0.4,
    "role+topic": 0.39,
    "sentence": 0.27,
    "sentence+topic": 0.19,
}


def pattern_of(confidence: float) -> str | None:
    """The pattern whose confidence ``confidence`` is (see CONFIDENCE), else ``None``."""
    for pattern, value in CONFIDENCE.items():
        if abs(value - confidence) < 1e-9:
            return pattern
    return None
