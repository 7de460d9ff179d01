"""The members of a ``.noema`` bundle: each one's name, the schema it appeared in, how it is
stored, and what it costs in memory to open. The container, the manifest and the bundle read this
table instead of naming members one by one, so a new member is one row here and its codec.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "COLUMNS_MEMBER",
    "FACTS_IVF_MEMBER",
    "MEMBERS",
    "NAMES_MEMBER",
    "SENTENCES_IVF_MEMBER",
    "SENTENCES_MEMBER",
    "STORED_MEMBERS",
    "VECTOR_MEMBERS",
    "Member",
]

COLUMNS_MEMBER = "graph.columns"
FACTS_IVF_MEMBER = "facts.ivf"
SENTENCES_IVF_MEMBER = "sentences.ivf"
SENTENCES_MEMBER = "sentences.bin"
NAMES_MEMBER = "names.bin"

# Memory to open a bundle, per declared byte: graph.json is inflated (1), parsed into Python
# objects (about 4.8 on the benchmark bundles) and read into the graph (0.8), measured on the
# HotpotQA benchmark bundle; a vector member is inflated and kept as its index's matrix, no copy
# (1), plus the search structure built on opening (a float16 copy, 0.5, below 200,000 rows; an
# IVF of one byte a number, 0.25, from there), and index.faiss is inflated, compared and
# dropped (1). Opening a million-fact bundle with names.bin (graph.json 321 MiB, vector members
# 4,883 MiB) peaked at 8,188 MiB above the models: 8 and 1.5 say 9,893, where 8 and 2 said
# 12,334 and refused it under the default budget of a 24 GB machine.
GRAPH_MEMORY_PER_BYTE = 8.0
# graph.columns is mapped (1) and made into records and strings: reading it peaked at 5.1 times
# its size on the 100,000-fact benchmark bundle and 6.4 times on the HotpotQA pool's
COLUMNS_MEMORY_PER_BYTE = 8.0
VECTOR_MEMORY_PER_BYTE = 1.5


@dataclass(frozen=True)
class Member:
    """One member of the bundle (``manifest.json`` aside, which describes the others).

    ``stored``: written as it is rather than deflated (vectors barely compress, and the
    columnar graph is read in place from the mapped file). ``memory_per_byte``: what opening
    costs per declared byte, for the memory budget (0 where opening does not hold it).
    """

    name: str
    since_schema: int
    stored: bool
    memory_per_byte: float
    optional: bool = False
    vectors: bool = False


MEMBERS: tuple[Member, ...] = (
    Member("graph.json", 1, stored=False, memory_per_byte=GRAPH_MEMORY_PER_BYTE),
    Member("embeddings.bin", 1, stored=True, memory_per_byte=VECTOR_MEMORY_PER_BYTE, vectors=True),
    Member("index.faiss", 1, stored=True, memory_per_byte=VECTOR_MEMORY_PER_BYTE, vectors=True),
    Member(
        SENTENCES_MEMBER,
        1,
        stored=True,
        memory_per_byte=VECTOR_MEMORY_PER_BYTE,
        optional=True,
        vectors=True,
    ),
    Member(
        NAMES_MEMBER,
        3,
        stored=True,
        memory_per_byte=VECTOR_MEMORY_PER_BYTE,
        optional=True,
        vectors=True,
    ),
    Member(COLUMNS_MEMBER, 4, stored=True, memory_per_byte=COLUMNS_MEMORY_PER_BYTE),
    Member(
        FACTS_IVF_MEMBER,
        4,
        stored=True,
        memory_per_byte=VECTOR_MEMORY_PER_BYTE,
        optional=True,
        vectors=True,
    ),
    Member(
        SENTENCES_IVF_MEMBER,
        4,
        stored=True,
        memory_per_byte=VECTOR_MEMORY_PER_BYTE,
        optional=True,
        vectors=True,
    ),
)
VECTOR_MEMBERS = frozenset(m.name for m in MEMBERS if m.vectors)
# Stored as they are rather than deflated: vectors barely compress, and the columnar graph is
# read in place.
STORED_MEMBERS = frozenset(m.name for m in MEMBERS if m.stored)
