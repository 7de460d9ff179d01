"""The data model: records, the graph and its JSON form, names, the notation and its views.

The bottom wing: it imports only :mod:`noema.errors`. Everything else in Noema builds on it.
"""
