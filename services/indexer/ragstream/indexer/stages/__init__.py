"""Indexing stages, one module each, in pipeline order: chunk, write (embed + store)."""
