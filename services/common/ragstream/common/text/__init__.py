"""Text processing shared by indexing and query: token counts, chunking, BM25 terms."""
