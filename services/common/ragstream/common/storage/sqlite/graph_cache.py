"""Decoded graph reads per workspace, for one generation of the graph.

Every query reads the nodes, edges and degrees around the entities and relations it found,
and the same popular ones query after query: on the demo corpus those reads were a third of
a mix query's CPU (building the same edges from their rows and their JSON again). The
cache keeps each key's answer decoded: a node (or that there is none), the edges touching
a key, a key's degree and the edge of a pair (or that there is none). Each graph write
moves the workspace's generation on (`graph_state`, in the write's transaction), and a read
uses the cache only at the generation of its own snapshot (`generations.GenerationalCache`):
so a read never sees another snapshot's answer, whichever process wrote.
"""

from __future__ import annotations

from collections.abc import Iterable

from ragstream.common.models import GraphEdge, GraphNode
from ragstream.common.storage.sqlite.generations import GenerationalCache

MAX_CHARS = 4_000_000
"""Characters kept per kind of answer, descriptions and `OVERHEAD_CHARS` each (the four
kinds about 40 MB at most): the hot part of a large graph, the whole of a small one."""
OVERHEAD_CHARS = 64
"""What an answer counts besides its descriptions: its keys, ids and the Python objects."""

Pair = tuple[str, str]


def _chars(items: Iterable[GraphNode | GraphEdge]) -> int:
    return sum(len(item.description) + OVERHEAD_CHARS for item in items) + OVERHEAD_CHARS


class GraphCache:
    """Thread-safe; shared by the reader threads of one store. Per workspace (the key of
    each cache), at one generation: `nodes`, per key its node alone or () when there is
    none; `edges_of`, per key the edges touching it (as `edges.by_endpoint` orders them);
    `pairs`, per stored (source <= target) pair its edge alone or (); `degrees`, per key
    its number of edges. A read answers through them (`GenerationalCache.through`) with a
    load that answers every key it is given, absent ones too."""

    def __init__(self, max_chars: int = MAX_CHARS) -> None:
        self.nodes: GenerationalCache[str, tuple[GraphNode, ...]]
        self.nodes = GenerationalCache(max_chars, _chars)
        self.edges_of: GenerationalCache[str, tuple[GraphEdge, ...]]
        self.edges_of = GenerationalCache(max_chars, _chars)
        self.pairs: GenerationalCache[Pair, tuple[GraphEdge, ...]]
        self.pairs = GenerationalCache(max_chars, _chars)
        self.degrees: GenerationalCache[str, int]
        self.degrees = GenerationalCache(max_chars, lambda _: OVERHEAD_CHARS)
