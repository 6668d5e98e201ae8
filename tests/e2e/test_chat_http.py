"""The official openai client chats with the demo index through the HTTP port of a running
`ragstream serve`, streamed and not, and gets the answer's references with it."""

from __future__ import annotations

import openai
import pytest

from tests.e2e.conftest import DEMO_WORKSPACE
from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
QUESTION = "Which supplier made the seal that caused the Tern S3 recall?"
RECALL = "2024-tern-s3-recall-notice.txt"


def client(server: ServeProcess) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"http://{server.http_address}/v1",
        api_key="unused",  # auth is off: any key
        default_headers={"X-Ragstream-Workspace": DEMO_WORKSPACE},
        max_retries=0,
    )


def test_a_chat_completion_answers_from_the_index_with_references(
    demo_http_server: ServeProcess,
) -> None:
    reply = client(demo_http_server).chat.completions.create(
        model="ragstream-mix", messages=[{"role": "user", "content": QUESTION}]
    )
    content = reply.choices[0].message.content or ""
    answer, references = content.split("### References", 1)
    assert "Tern S3" in answer and RECALL in references
    assert RECALL in {r["doc_id"] for r in reply.model_extra["references"]}  # type: ignore[index]


def test_a_streamed_chat_completion_answers_alike(demo_http_server: ServeProcess) -> None:
    chat = client(demo_http_server)
    stream = chat.chat.completions.create(
        model="ragstream-naive", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    chunks = list(stream)
    content = "".join(c.choices[0].delta.content or "" for c in chunks)
    whole = chat.chat.completions.create(
        model="ragstream-naive", messages=[{"role": "user", "content": QUESTION}]
    )
    assert chunks[0].choices[0].delta.role == "assistant" and len(chunks) >= 3
    assert content == whole.choices[0].message.content
    assert RECALL in content.split("### References", 1)[1]
    assert next(m.id for m in chat.models.list()) == "ragstream"
