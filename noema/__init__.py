"""Noema."""
