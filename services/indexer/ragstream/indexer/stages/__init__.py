"""Indexing stages in pipeline order: chunk, write (embed + store), extract, ledger (stage 1,
per document, composed by indexer/documents.py) and merge (stage 2, per entity or relation)."""
