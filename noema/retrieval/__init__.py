"""Retrieval: options, filters, strategies and the walk, packing within a budget, the result.

Imports :mod:`noema.model` and :mod:`noema.vectors`; never ingest or storage.
"""
