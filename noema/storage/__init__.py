"""Storage: the snapshot a knowledge base publishes, and the ``.noema`` bundle's members.

Imports :mod:`noema.model` and :mod:`noema.vectors`; never ingest or retrieval.
"""
