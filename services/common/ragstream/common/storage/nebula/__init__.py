"""NebulaGraph backend of the graph store (nebula3-python).

literals (the one escaping function), builder (statements) and decoder (results) are
pure; executor runs statements from asyncio; schema creates and checks the space; store
puts them together.
"""

from ragstream.common.storage.nebula.decoder import DecodeError
from ragstream.common.storage.nebula.executor import NebulaUnavailableError, StatementError
from ragstream.common.storage.nebula.schema import SchemaError
from ragstream.common.storage.nebula.store import NebulaGraphStore

__all__ = [
    "DecodeError",
    "NebulaGraphStore",
    "NebulaUnavailableError",
    "SchemaError",
    "StatementError",
]
