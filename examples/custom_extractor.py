"""Extending extraction: a custom relation pattern, and a whole extractor of your own.

The extractor below stands in for one backed by an LLM: anything with an
``extract(documents) -> SemanticGraph`` method plugs into ``KnowledgeBase(extractor=...)``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import noema

# 1. A token pattern for words between two entities: "Apple teamed up with IBM".
teamed_up = noema.RelationPattern(
    "partner_with", [{"LOWER": "teamed"}, {"LOWER": "up"}, {"LOWER": "with"}], kind="token"
)
kb = noema.KnowledgeBase(extractor=noema.SpacyExtractor(patterns=[teamed_up]))
kb.ingest(["Apple teamed up with IBM in 2014."])
print(kb.retrieve("Who did Apple partner with?").text)


# 2. A whole extractor: here a regular expression over "X is a subsidiary of Y." sentences.
class SubsidiaryExtractor:
    PATTERN = re.compile(r"([A-Z][\w ]+?) is a subsidiary of ([A-Z][\w ]+?)\.")

    def extract(self, documents: Sequence[noema.Document]) -> noema.SemanticGraph:
        graph = noema.SemanticGraph()
        for doc in documents:
            graph.add_document(doc)
            for match in self.PATTERN.finditer(doc.text):
                child = graph.add_entity(
                    match.group(1), "ORG", mentions=[noema.Mention(doc.id, *match.span(1))]
                )
                parent = graph.add_entity(
                    match.group(2), "ORG", mentions=[noema.Mention(doc.id, *match.span(2))]
                )
                graph.add_relation(
                    child, "subsidiary_of", parent, mentions=[noema.Mention(doc.id, *match.span())]
                )
        return graph


kb = noema.KnowledgeBase(extractor=SubsidiaryExtractor())
kb.ingest(["YouTube is a subsidiary of Google. Google is a subsidiary of Alphabet."])
print(kb.retrieve("Who owns YouTube?", hops=2).text)
