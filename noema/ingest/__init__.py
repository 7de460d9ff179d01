"""Ingest: sources, the extractor protocols, the spaCy extractor, and canonicalization.

Imports :mod:`noema.model` and :mod:`noema.vectors`; never retrieval or storage.
"""
