"""`ragstream mcp`: the index as Model Context Protocol tools, for any MCP client (agents,
Claude Desktop, IDEs), over stdio or streamable HTTP, with the official SDK.

The MCP server is a client of a running `ragstream serve`, calling its gRPC API like the
other client commands, rather than a second way into the stores: every tool call passes the
server's own gate (token, request rules, workspace grant, admission, deadline), so MCP can
do exactly what the token could do over gRPC and nothing more, and it runs beside an
indexer and query service scaled apart without opening their stores. Whose token a call
carries depends on the transport: over stdio the MCP server is the user's own process and
sends RAGSTREAM_TOKEN, as the CLI does; over HTTP it sends the `Authorization` header of the
MCP request, so each remote client acts with its own token and the endpoint grants nothing
by itself. A tool's `workspace` defaults to the configured one (`--workspace`, else
`workspace` of the configuration). Refusals come back as tool errors with the gRPC status
name and the server's message, which names the field at fault.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from ragstream.common.listen import parse_listen
from ragstream.v1 import (
    graph_pb2,
    graph_pb2_grpc,
    ingest_pb2,
    ingest_pb2_grpc,
    query_pb2,
    query_pb2_grpc,
)

Mode = Literal["local", "global", "hybrid", "mix", "naive", "bypass", "community"]
"""Every QueryMode but UNSPECIFIED, as `query --mode` names them (a unit test holds the two
together)."""
Workspace = Annotated[
    str, Field(description="Workspace (tenant); empty: the one this MCP server is set to.")
]
Question = Annotated[str, Field(min_length=1, description="The question, in natural language.")]
ModeArg = Annotated[Mode, Field(description="Retrieval mode; mix searches graph and text.")]
Name = Annotated[str, Field(min_length=1, description="The entity's name, as the graph has it.")]
DocIds = Annotated[list[str], Field(min_length=1, description="Document ids.")]
Json = dict[str, Any]
Stub = Callable[[grpc.aio.Channel], Any]


@dataclass(frozen=True, slots=True)
class Upstream:
    """The ragstream server the tools call, and what a call carries."""

    address: str
    workspace: str
    token: str
    """RAGSTREAM_TOKEN: sent on stdio calls only."""

    async def send(
        self, ctx: Context, stub: Stub, method: str, request: Message, workspace: str
    ) -> Json:
        """One RPC on a channel of its own, in `workspace` (empty: the configured one); the
        reply in protobuf's JSON mapping."""
        request.workspace = workspace or self.workspace  # type: ignore[attr-defined]
        async with grpc.aio.insecure_channel(self.address) as channel:
            try:
                reply = await getattr(stub(channel), method)(request, metadata=self._auth(ctx))
            except grpc.aio.AioRpcError as exc:
                raise ToolError(f"{exc.code().name}: {exc.details()}") from None
        printed: Json = json_format.MessageToDict(reply)
        return printed

    def _auth(self, ctx: Context) -> tuple[tuple[str, str], ...]:
        headers = ctx.headers
        if headers is not None:  # HTTP: the caller's own token, if any
            given = headers.get("authorization")
            return (("authorization", given),) if given else ()
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()


def query_mode(name: Mode) -> query_pb2.QueryMode:
    return query_pb2.QueryMode.Value(f"QUERY_MODE_{name.upper()}")  # type: ignore[return-value]


_QUERY = query_pb2_grpc.QueryServiceStub
_GRAPH = graph_pb2_grpc.GraphServiceStub
_INGEST = ingest_pb2_grpc.IngestServiceStub


class Tools:
    """The tools, one RPC each (status: two); each method's docstring is its description."""

    def __init__(self, upstream: Upstream) -> None:
        self._up = upstream

    async def retrieve(
        self, ctx: Context, question: Question, mode: ModeArg = "mix", workspace: Workspace = ""
    ) -> Json:
        """The context the index holds for a question, without an answer: entities,
        relations and text chunks, each chunk with its document's reference number."""
        request = query_pb2.RetrieveRequest(
            query=question, params=query_pb2.QueryParams(mode=query_mode(mode))
        )
        return await self._up.send(ctx, _QUERY, "Retrieve", request, workspace)

    async def query(
        self, ctx: Context, question: Question, mode: ModeArg = "mix", workspace: Workspace = ""
    ) -> Json:
        """An answer to a question from the index, citing its sources by reference number,
        with the references (document ids and paths) and the context it was grounded on."""
        request = query_pb2.QueryRequest(
            query=question, params=query_pb2.QueryParams(mode=query_mode(mode))
        )
        return await self._up.send(ctx, _QUERY, "Query", request, workspace)

    async def search_entities(
        self,
        ctx: Context,
        text: Annotated[str, Field(min_length=1, description="A name or part of one.")],
        limit: Annotated[int, Field(ge=1, le=100, description="Hits at most.")] = 10,
        workspace: Workspace = "",
    ) -> Json:
        """Entities of the knowledge graph matching a text, best first, with their scores."""
        request = graph_pb2.SearchEntitiesRequest(query=text, limit=limit)
        return await self._up.send(ctx, _GRAPH, "SearchEntities", request, workspace)

    async def get_entity(
        self,
        ctx: Context,
        name: Name,
        include_chunks: Annotated[bool, Field(description="Also the source text.")] = False,
        workspace: Workspace = "",
    ) -> Json:
        """One entity (by name, key or alias): its type, merged description, aliases, source
        documents and degree."""
        request = graph_pb2.GetEntityRequest(name=name, include_chunks=include_chunks)
        return await self._up.send(ctx, _GRAPH, "GetEntity", request, workspace)

    async def get_neighbourhood(
        self,
        ctx: Context,
        name: Name,
        depth: Annotated[int, Field(ge=1, le=2, description="Hops from the entity.")] = 1,
        max_nodes: Annotated[int, Field(ge=1, le=500, description="Entities at most.")] = 50,
        workspace: Workspace = "",
    ) -> Json:
        """The entities within `depth` relations of one entity, and the relations among
        them (breadth-first, cut at `max_nodes`)."""
        request = graph_pb2.GetNeighbourhoodRequest(name=name, depth=depth, max_nodes=max_nodes)
        return await self._up.send(ctx, _GRAPH, "GetNeighbourhood", request, workspace)

    async def ingest(
        self,
        ctx: Context,
        doc_id: Annotated[str, Field(min_length=1, description="The document's stable id.")],
        text: Annotated[str, Field(min_length=1, description="The document's whole text.")],
        workspace: Workspace = "",
    ) -> Json:
        """Adds or replaces a text document; the index takes it in the background (see
        `status`). Publishing the same id again replaces its text."""
        document = ingest_pb2.DocumentInput(doc_id=doc_id, content=text, file_path=doc_id)
        request = ingest_pb2.PublishDocumentsRequest(documents=[document])
        return await self._up.send(ctx, _INGEST, "PublishDocuments", request, workspace)

    async def delete(self, ctx: Context, doc_ids: DocIds, workspace: Workspace = "") -> Json:
        """Deletes documents, with every chunk, entity mention and relation they brought."""
        request = ingest_pb2.DeleteDocumentsRequest(doc_ids=doc_ids)
        return await self._up.send(ctx, _INGEST, "DeleteDocuments", request, workspace)

    async def status(self, ctx: Context, doc_ids: DocIds, workspace: Workspace = "") -> Json:
        """Indexing state of documents, and the work the workspace still has queued
        (document events and graph merges; both zero: the index is current)."""
        statuses = ingest_pb2.GetDocumentStatusRequest(doc_ids=doc_ids)
        progress = ingest_pb2.GetIndexingProgressRequest()
        return {
            **await self._up.send(ctx, _INGEST, "GetDocumentStatus", statuses, workspace),
            **await self._up.send(ctx, _INGEST, "GetIndexingProgress", progress, workspace),
        }


def build_server(upstream: Upstream) -> MCPServer:
    """The MCP server with the tools, each named as its method."""
    server: MCPServer = MCPServer(
        "ragstream",
        instructions="Search and grow a ragstream knowledge-graph index: retrieve context, "
        "ask questions with cited answers, look up entities and their neighbourhoods, "
        "add or delete documents and follow their indexing.",
        log_level="WARNING",  # on stdio, stderr is the client's log; keep it to problems
    )
    tools = Tools(upstream)
    for tool in (
        tools.retrieve,
        tools.query,
        tools.search_entities,
        tools.get_entity,
        tools.get_neighbourhood,
        tools.ingest,
        tools.delete,
        tools.status,
    ):
        server.add_tool(tool)
    return server


async def run(upstream: Upstream, transport: str, listen: str) -> None:
    """Serves until the client closes stdin (stdio) or the process is stopped (http)."""
    server = build_server(upstream)
    if transport == "stdio":
        await server.run_stdio_async()
        return
    host, port = parse_listen(listen)
    await server.run_streamable_http_async(host=host, port=port)
