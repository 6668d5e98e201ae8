"""The MCP tools' `mode` argument offers exactly the query modes the API defines."""

from typing import get_args

from ragstream.cli.mcp_server import Mode, query_mode
from ragstream.v1 import query_pb2


def test_the_tools_modes_are_the_apis_modes() -> None:
    defined = {
        value.number
        for value in query_pb2.QueryMode.DESCRIPTOR.values
        if value.number != query_pb2.QUERY_MODE_UNSPECIFIED
    }
    assert {query_mode(name) for name in get_args(Mode)} == defined
