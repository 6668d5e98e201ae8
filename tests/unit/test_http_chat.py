"""The OpenAI-compatible chat endpoint, called with the official openai client on a real
aiohttp server with the real gate, over a QueryService that records what it was asked: the
model picks the mode, the messages become question, history and instructions, references
close the answer, and the gate's refusals come back as OpenAI errors naming the field."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import openai
import pytest

from ragstream.query.transport.admission import Admission
from ragstream.query.transport.auth import Grant, TokenAuthenticator, token_digest
from ragstream.query.transport.gate import QUERIES, CallContext, Gate
from ragstream.query.transport.http.routes import build_routes
from ragstream.query.transport.http.server import HttpServer, build_app
from ragstream.query.transport.validation import Limits
from ragstream.v1 import query_pb2, query_pb2_grpc

ONE, BOTH = "tok-one", "tok-both"
REFERENCES = [
    query_pb2.Reference(reference_id="1", doc_id="recall", file_path="recall.md"),
    query_pb2.Reference(reference_id="2", doc_id="seals", file_path=""),
]


class Queries(query_pb2_grpc.QueryServiceServicer):
    """Answers from nowhere, recording each request; "break" fails mid-stream."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    async def Query(self, request: Any, context: CallContext) -> query_pb2.QueryResponse:
        self.requests.append(request)
        if request.query == "slow":
            await asyncio.sleep(0.5)
        return query_pb2.QueryResponse(answer="Kestrel made them [2].", references=REFERENCES)

    async def StreamQuery(self, request: Any, context: CallContext) -> AsyncIterator[Any]:
        self.requests.append(request)
        context_event = query_pb2.RetrieveResponse(references=REFERENCES)
        yield query_pb2.StreamQueryResponse(context=context_event)
        yield query_pb2.StreamQueryResponse(delta="Kestrel ")
        if request.query == "break":
            raise RuntimeError("the model went away")
        yield query_pb2.StreamQueryResponse(delta="made them [2].")
        cited = query_pb2.StreamQueryEnd(references=REFERENCES[1:])  # the context lists both
        yield query_pb2.StreamQueryResponse(end=cited)


@pytest.fixture
async def served() -> AsyncIterator[tuple[str, Queries]]:
    grants = {
        token_digest(ONE): Grant("one", frozenset({"alpha"})),
        token_digest(BOTH): Grant("both", frozenset({"alpha", "beta"})),
    }
    gate = Gate(
        Limits(max_document_bytes=100),
        "default",
        TokenAuthenticator(grants),
        {QUERIES: Admission(QUERIES, 1, 0)},
    )
    queries = Queries()  # type: ignore[abstract]  # Retrieve is not exercised
    server = HttpServer("127.0.0.1:0", build_app(build_routes({"QueryService": queries}), gate))
    await server.start()
    try:
        yield f"http://127.0.0.1:{server.port}/v1", queries
    finally:
        await server.stop()


def client(base: str, token: str = ONE, **headers: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=base, api_key=token, default_headers=headers, max_retries=0)


CONVERSATION: list[Any] = [
    {"role": "system", "content": "Answer briefly."},
    {"role": "user", "content": "What failed?"},
    {"role": "assistant", "content": "The seals."},
    {"role": "user", "content": [{"type": "text", "text": "Who made them?"}]},
]


async def test_a_completion_is_a_query_of_the_models_mode_with_references(
    served: tuple[str, Queries],
) -> None:
    base, queries = served
    reply = await client(base).chat.completions.create(
        model="ragstream-local", messages=CONVERSATION, temperature=0.2
    )
    content = reply.choices[0].message.content or ""
    assert content.startswith("Kestrel made them [2].")
    assert content.endswith("### References\n\n- [1] recall.md\n- [2] seals")
    assert reply.model == "ragstream-local" and reply.choices[0].finish_reason == "stop"
    assert [r["doc_id"] for r in reply.model_extra["references"]] == ["recall", "seals"]  # type: ignore[index]
    [asked] = queries.requests
    assert (asked.workspace, asked.query) == ("alpha", "Who made them?")
    assert asked.params.mode == query_pb2.QUERY_MODE_LOCAL
    assert [(m.role, m.content) for m in asked.params.conversation_history] == [
        ("user", "What failed?"),
        ("assistant", "The seals."),
    ]
    assert asked.params.user_prompt == "Answer briefly."


async def test_a_streamed_completion_ends_with_the_references(
    served: tuple[str, Queries],
) -> None:
    base, queries = served
    chunks = [
        chunk
        async for chunk in await client(base).chat.completions.create(
            model="ragstream-mix", messages=CONVERSATION[-1:], stream=True
        )
    ]
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    # The cited passage closes the answer, not every passage of the context.
    assert text == "Kestrel made them [2].\n\n### References\n\n- [2] seals"
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert len(chunks[-1].model_extra["references"]) == 1  # type: ignore[index]
    assert queries.requests[0].params.mode == query_pb2.QUERY_MODE_MIX
    with pytest.raises(openai.APIError, match="the server failed"):
        async for _ in await client(base).chat.completions.create(
            model="ragstream", messages=[{"role": "user", "content": "break"}], stream=True
        ):
            pass


async def test_models_list_one_model_per_mode(served: tuple[str, Queries]) -> None:
    base, _ = served
    names = [model.id async for model in client(base).models.list()]
    assert names[0] == "ragstream" and {"ragstream-mix", "ragstream-naive"} <= set(names)
    assert "ragstream-unspecified" not in names
    with pytest.raises(openai.AuthenticationError):
        await client(base, token="wrong").models.list()


async def test_the_token_and_the_workspace_header_are_checked(
    served: tuple[str, Queries],
) -> None:
    base, queries = served
    question: list[Any] = [{"role": "user", "content": "Who?"}]
    with pytest.raises(openai.AuthenticationError):
        await client(base, token="wrong").chat.completions.create(
            model="ragstream", messages=question
        )
    with pytest.raises(openai.PermissionDeniedError, match="'beta'") as denied:
        await client(base, **{"X-Ragstream-Workspace": "beta"}).chat.completions.create(
            model="ragstream", messages=question
        )
    assert denied.value.code == "permission_denied"
    both = client(base, BOTH, **{"X-Ragstream-Workspace": "beta"})
    await both.chat.completions.create(model="ragstream", messages=question)
    with pytest.raises(openai.PermissionDeniedError, match="'default'"):  # the server's
        await client(base, BOTH).chat.completions.create(model="ragstream", messages=question)
    assert [r.workspace for r in queries.requests] == ["beta"]


ASK = [{"role": "user", "content": "q"}]
MODEL = "ragstream"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"model": "gpt-4o", "messages": ASK}, "model"),
        ({"model": MODEL, "messages": []}, "messages"),
        ({"model": MODEL, "messages": [{"role": "robot"}]}, "messages[0].role"),
        ({"model": MODEL, "messages": [{"role": "user", "content": 7}]}, "messages[0].content"),
        ({"model": MODEL, "messages": [*ASK, {"role": "assistant", "content": ""}]}, "messages[1]"),
        ({"model": MODEL, "messages": ASK, "stream": "y"}, "stream"),
        ({"model": MODEL, "messages": [{"role": "user", "content": "q" * 9000}]}, "messages"),
    ],
)
async def test_an_invalid_request_is_400_naming_the_field(
    served: tuple[str, Queries], body: dict[str, Any], param: str
) -> None:
    base, queries = served
    headers = {"authorization": f"Bearer {ONE}"}
    async with (
        aiohttp.ClientSession(headers=headers) as session,
        session.post(f"{base}/chat/completions", json=body) as reply,
    ):
        error = (await reply.json())["error"]
    assert reply.status == 400 and error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert param in error["message"] and not queries.requests


async def test_admission_and_the_deadline_apply(served: tuple[str, Queries]) -> None:
    base, _ = served
    question: list[Any] = [{"role": "user", "content": "slow"}]
    timed = client(base, **{"grpc-timeout": "100m"})
    with pytest.raises(openai.APIStatusError) as late:
        await timed.chat.completions.create(model="ragstream", messages=question)
    assert late.value.status_code == 504
    slow = asyncio.ensure_future(
        client(base).chat.completions.create(model="ragstream", messages=question)
    )
    await asyncio.sleep(0.1)
    with pytest.raises(openai.RateLimitError):
        await client(base).chat.completions.create(model="ragstream", messages=question)
    assert (await slow).choices[0].message.content
