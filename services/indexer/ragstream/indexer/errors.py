"""How indexing failures are classified (the consumer acts on the class, not the message)."""


class DocumentError(Exception):
    """The document itself cannot be indexed (e.g. no text); it is marked failed, others proceed."""
