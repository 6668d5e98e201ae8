"""The NebulaGraph GraphStore: statements from `builder`, results through `decoder`.

Open with `await NebulaGraphStore.open(settings.nebula)`: it creates the space and schema
if missing (waiting until NebulaGraph can use them), then opens the session pool. Several
statements of one call (a batch larger than one statement holds) run concurrently, bounded
by the pool size.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from types import TracebackType
from typing import Self

from nebula3.data.ResultSet import ResultSet

from ragstream.common.config import NebulaConfig
from ragstream.common.models import GraphEdge, GraphNode, GraphStats
from ragstream.common.storage.edges import by_endpoint
from ragstream.common.storage.nebula import builder, decoder
from ragstream.common.storage.nebula.executor import Connector, Nebula3Connector, Runner
from ragstream.common.storage.nebula.literals import vid
from ragstream.common.storage.nebula.schema import ensure_schema


class NebulaGraphStore:
    """GraphStore over one NebulaGraph space; every workspace lives in that space."""

    def __init__(self, runner: Runner, space: str) -> None:
        self._runner = runner
        self.space = space

    @classmethod
    async def open(
        cls,
        cfg: NebulaConfig,
        *,
        connector: Connector | None = None,
        schema_timeout_s: float = 120.0,
        schema_poll_s: float = 1.0,
        retries: int = 3,
        backoff_s: float = 0.2,
    ) -> NebulaGraphStore:
        """Ensures the schema, then opens the session pool; `connector` defaults to nebula3."""
        connector = connector or Nebula3Connector(cfg)
        space = cfg.space_prefix
        admin = Runner(
            await asyncio.to_thread(connector.open_session),
            threads=1,
            retries=retries,
            backoff_s=backoff_s,
        )
        try:
            await ensure_schema(admin, space, timeout_s=schema_timeout_s, poll_s=schema_poll_s)
        finally:
            await admin.close()
        pool = await asyncio.to_thread(connector.open_pool, space)
        runner = Runner(pool, threads=cfg.pool_size, retries=retries, backoff_s=backoff_s)
        return cls(runner, space)

    async def close(self) -> None:
        await self._runner.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _run(self, statements: Sequence[str]) -> list[ResultSet]:
        return list(await asyncio.gather(*(self._runner.run(s) for s in statements)))

    # -- writes ---------------------------------------------------------------------------

    async def upsert_nodes(self, workspace: str, nodes: Sequence[GraphNode]) -> None:
        await self._run(builder.insert_nodes(workspace, nodes))

    async def upsert_edges(self, workspace: str, edges: Sequence[GraphEdge]) -> None:
        await self._run(builder.insert_edges(workspace, edges))

    async def delete_nodes(self, workspace: str, keys: Sequence[str]) -> None:
        await self._run(builder.delete_vertices(workspace, keys))

    async def delete_edges(self, workspace: str, pairs: Sequence[tuple[str, str]]) -> None:
        await self._run(builder.delete_edges(workspace, pairs))

    # -- reads ----------------------------------------------------------------------------

    async def get_nodes(self, workspace: str, keys: Sequence[str]) -> list[GraphNode]:
        found = decoder.nodes(await self._run(builder.fetch_nodes(workspace, keys)), workspace)
        return [found[k] for k in dict.fromkeys(keys) if k in found]

    async def get_edges(self, workspace: str, pairs: Sequence[tuple[str, str]]) -> list[GraphEdge]:
        results = await self._run(builder.fetch_edges(workspace, pairs))
        found = decoder.edges(results, workspace)
        wanted = dict.fromkeys((min(a, b), max(a, b)) for a, b in pairs)
        return [found[p] for p in wanted if p in found]

    async def edges_of(self, workspace: str, keys: Sequence[str]) -> dict[str, list[GraphEdge]]:
        found = decoder.edges(await self._run(builder.edges_of(workspace, keys)), workspace)
        return by_endpoint(found, keys)

    async def degrees(self, workspace: str, keys: Sequence[str]) -> dict[str, int]:
        keys_by_vid = {vid(workspace, key): key for key in keys}
        return decoder.degrees(await self._run(builder.degrees(workspace, keys)), keys_by_vid)

    async def edges_among(self, workspace: str, keys: Sequence[str]) -> list[GraphEdge]:
        found = decoder.edges(await self._run(builder.edges_among(workspace, keys)), workspace)
        return [found[pair] for pair in sorted(found)]

    async def stats(self, workspace: str, top: int) -> GraphStats:
        statements = [builder.count_nodes(workspace), builder.count_edges(workspace)]
        if top > 0:
            statements.append(builder.top_by_degree(workspace, top))
        nodes, edges, *ranked = await self._run(statements)
        top_nodes = decoder.ranked(ranked[0]) if ranked else ()
        return GraphStats(decoder.count(nodes), decoder.count(edges), top_nodes)
