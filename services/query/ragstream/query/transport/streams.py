"""Server-streaming handlers run as one coroutine that writes its responses.

grpc.aio iterates an async-generator handler itself. When the call ends early (the client
cancels, the deadline passes) it stops iterating and leaves the generator to the garbage
collector, which closes it later, in another task. The context managers inside it (spans,
context variables) then exit in a context they were not entered in: OpenTelemetry logs
"Failed to detach context" and the reset of a context variable raises ValueError in a task
nobody awaits. A coroutine handler that iterates the generator and sends each response with
`context.write` keeps the whole call in one task: cancellation unwinds it there, at once,
and `aclosing` closes the generator there too.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from typing import Any

import grpc

Context = grpc.aio.ServicerContext[Any, Any]
StreamHandler = Callable[[Any, Context], AsyncGenerator[Any, None] | Awaitable[None]]
"""A server-streaming behaviour: an async generator of responses, or a coroutine that
writes them itself (as the wrappers of the Gate and the tracing interceptor do)."""


async def respond(behaviour: StreamHandler, request: Any, context: Context) -> None:
    """Runs `behaviour` for `request`, sending every response it yields."""
    result = behaviour(request, context)
    if inspect.isawaitable(result):
        await result
        return
    async with aclosing(result) as responses:
        async for response in responses:
            await context.write(response)
