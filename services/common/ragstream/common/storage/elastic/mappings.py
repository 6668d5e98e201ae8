"""Index templates of the Elasticsearch backend: one per storage role.

Why the fields look as they do:
- `terms` holds the analyzer's terms (ragstream.common.text.analyzer) as an array, indexed with
  the built-in `whitespace` analyzer: each term is exactly one token, so Chinese segmentation,
  BM25 statistics and what matches are the embedded store's. Queries send `term` clauses, so
  no query text is ever analyzed or parsed. Only frequencies are indexed (no positions):
  BM25 needs nothing more.
- `text` is the raw text, kept for the caller and not indexed.
- `vector` is int8_hnsw with `dot_product`: the store normalizes every vector (the embedders
  already do), so the dot product is the cosine, and int8 quarters the graph's memory; searches
  rescore the oversampled candidates with the float vectors. Measured: all-MiniLM-L6-v2
  vectors are found exactly (recall@50 1.000, see queries.py); float `hnsw` is better only for
  the hash embedder's sparse test vectors (recall@50 0.90 against 0.76 at 20k chunks).
  `vector` is left out of `_source` (a 384-d float array is ~8 KB of JSON); `vector_b64`
  keeps the exact float32 bytes instead, which is what reads return. (ES-side `_reindex`
  cannot copy vectors because of this; `ragstream reindex` re-embeds anyway.)
- `metadata_kv` holds each metadata pair JSON-encoded (`["key","value"]`), so any key (dots,
  quotes, CJK) is an exact keyword match and metadata can never grow the mapping.
- `dynamic: strict`: a field nobody declared is a bug, not a new mapping.
"""

from __future__ import annotations

from typing import Any

from ragstream.common.storage.elastic.model import ModelFingerprint

SETTINGS: dict[str, Any] = {
    "number_of_shards": 1,
    # One replica wherever a second node exists; none on a single node (so it stays green).
    "auto_expand_replicas": "0-1",
    "refresh_interval": "1s",
}

HNSW: dict[str, Any] = {"type": "int8_hnsw", "m": 16, "ef_construction": 100}

_KEYWORD = {"type": "keyword"}
_STORED_KEYWORD = {"type": "keyword", "index": False, "doc_values": False}
_STORED_TEXT = {"type": "text", "index": False}
_STORED_OBJECT = {"type": "object", "enabled": False}


def vector_field(dimensions: int | None) -> dict[str, Any]:
    field: dict[str, Any] = {
        "type": "dense_vector",
        "element_type": "float",
        "index": True,
        "similarity": "dot_product",
        "index_options": dict(HNSW),
    }
    if dimensions is not None:
        field["dims"] = dimensions
    return field


def search_mappings(model: ModelFingerprint | None) -> dict[str, Any]:
    """Chunks, entities and relations; with `model`, the vector size and `_meta` are set."""
    mappings: dict[str, Any] = {
        "dynamic": "strict",
        "_source": {"excludes": ["vector"]},
        "properties": {
            "workspace": _KEYWORD,
            "id": _KEYWORD,
            "text": _STORED_TEXT,
            "terms": {"type": "text", "analyzer": "whitespace", "index_options": "freqs"},
            "vector": vector_field(model.dimensions if model else None),
            "vector_b64": {"type": "binary"},
            "doc_ids": _KEYWORD,
            "metadata": _STORED_OBJECT,
            "metadata_kv": _KEYWORD,
            "timestamp": {"type": "double"},
            "attrs": _STORED_OBJECT,
        },
    }
    if model is not None:
        mappings["_meta"] = model.meta()
    return mappings


DOCUMENTS_MAPPINGS: dict[str, Any] = {
    "dynamic": "strict",
    "properties": {
        "workspace": _KEYWORD,
        "doc_id": _KEYWORD,
        "version": {"type": "long"},
        "state": _KEYWORD,
        "content_hash": _STORED_KEYWORD,
        "file_path": _STORED_KEYWORD,
        "metadata": _STORED_OBJECT,
        "metadata_kv": _KEYWORD,
        "timestamp": {"type": "double"},
        "error": _STORED_TEXT,
        "chunk_ids": _STORED_KEYWORD,
        "entity_count": {"type": "integer", "index": False},
        "relation_count": {"type": "integer", "index": False},
        "created_at": {"type": "double", "index": False},
        "updated_at": {"type": "double", "index": False},
        "processing_ms": {"type": "double", "index": False},
    },
}

MENTIONS_MAPPINGS: dict[str, Any] = {
    # One document per chunk (see mentions.py): `keys` finds the chunks that mention a key,
    # `mentions` holds what the chunk says, returned as written.
    "dynamic": "strict",
    "properties": {
        "workspace": _KEYWORD,
        "chunk_id": _KEYWORD,
        "keys": _KEYWORD,
        "mentions": _STORED_OBJECT,
    },
}

COMMUNITIES_MAPPINGS: dict[str, Any] = {
    # One document per community (see communities.py): `members` finds an entity's
    # communities, `report` is returned as written.
    "dynamic": "strict",
    "properties": {
        "workspace": _KEYWORD,
        "id": _KEYWORD,
        "level": {"type": "integer"},
        "parent": _KEYWORD,
        "members": _KEYWORD,
        "report": _STORED_OBJECT,
    },
}

CACHE_MAPPINGS: dict[str, Any] = {
    "dynamic": "strict",
    "properties": {
        "value": _STORED_TEXT,
        "created_at": {"type": "double"},
    },
}
