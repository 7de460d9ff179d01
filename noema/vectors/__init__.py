"""Vectors: the embedder, the fact index and its approximate form, the sentence sidecar.

Imports :mod:`noema.model` and the resources; never ingest, retrieval or storage.
"""
