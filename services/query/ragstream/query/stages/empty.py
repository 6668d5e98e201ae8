"""Empty-workspace check: a query that found nothing, in a workspace with no indexed chunk,
says so. There, "nothing found" does not mean the question missed: nothing was ever indexed
(or is indexed yet), or the workspace's name is mistyped. The check runs only when the
retrieval came back empty, so a query that found something pays nothing for it. The note
goes into the response; without an LLM the answer says it too (engine.py).
"""

from __future__ import annotations

from opentelemetry.trace import Span

from ragstream.common.models import Collection
from ragstream.common.storage.protocols import SearchStore
from ragstream.common.telemetry import annotate
from ragstream.query.types import QueryState


def empty_workspace_note(workspace: str) -> str:
    return (
        f"workspace '{workspace}' holds no indexed documents: nothing was there to search "
        "(ingest documents into it, wait until they are indexed, or check the workspace name)"
    )


class EmptyWorkspace:
    name = "workspace"

    def __init__(self, search: SearchStore) -> None:
        self._search = search

    def applies(self, state: QueryState) -> bool:
        found = state.result
        return not (found.chunks or found.entities or found.relations)

    async def run(self, state: QueryState, span: Span) -> None:
        chunks = await self._search.count(Collection.CHUNKS, state.q.workspace)
        annotate(span, chunks=chunks)
        if chunks == 0:
            state.result.notes.append(empty_workspace_note(state.q.workspace))
            state.result.workspace_empty = True
