"""Hierarchical communities of a workspace's entity graph, kept current under the stream.

Pure functions over a weighted graph (no I/O): `rebuild` (seeded Leiden over input sorted by
key, then each community over `max_size` split again, level by level), `update` (the frontier
re-optimization from the previous partition around the keys a merge batch touched) and
`modularity`. Stage 2's community step (`stages/communities.py`) holds the state and the
stores; the query side only reads what it writes.
"""
