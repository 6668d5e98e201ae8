"""Errors shared across backends."""


class BackendUnavailableError(RuntimeError):
    """A configured server (Kafka, Elasticsearch, NebulaGraph) cannot be reached; the
    message names it and its address. Commands report it and exit instead of a traceback."""
