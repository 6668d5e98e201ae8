"""The official openai client chats with the demo index through the HTTP port of a running
`ragstream serve`, streamed and not, and gets the answer's references with it; with auth
on, its API key is the bearer token, which decides the workspace it can chat with."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from ragstream.query.transport.auth import token_digest
from tests.e2e.conftest import DEMO_CORPUS, DEMO_WORKSPACE
from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
QUESTION = "Which supplier made the seal that caused the Tern S3 recall?"
DEMO_FILES = {path.name for path in DEMO_CORPUS.iterdir()}


def cited_and_listed(content: str) -> tuple[set[str], dict[str, str]]:
    """The markers the answer cites, and the reference block's numbers and documents."""
    answer, block = content.split("### References", 1)
    listed = dict(re.findall(r"^- \[(\d+)\] (.+)$", block, re.MULTILINE))
    return set(re.findall(r"\[(\d+)\]", answer)), listed


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
    cited, listed = cited_and_listed(content)
    assert "Tern S3" in content.split("### References", 1)[0]
    # The reference block is exactly what the answer cites, each a demo document.
    assert cited and cited == set(listed) and set(listed.values()) <= DEMO_FILES
    extra = reply.model_extra["references"]  # type: ignore[index]
    assert {r["doc_id"] for r in extra} == set(listed.values())


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
    cited, listed = cited_and_listed(content)
    assert cited and cited == set(listed) and set(listed.values()) <= DEMO_FILES
    assert next(m.id for m in chat.models.list()) == "ragstream"


ALPHA, BETA = "tok-chat-alpha", "tok-chat-beta"


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """Auth on; the demo corpus in workspace alpha only, alpha's token granting just it."""
    root = tmp_path_factory.mktemp("chat-auth")
    tokens = root / "tokens.toml"
    tokens.write_text(
        f'[[tokens]]\nname = "alpha"\nsha256 = "{token_digest(ALPHA)}"\nworkspaces = ["alpha"]\n'
        f'[[tokens]]\nname = "beta"\nsha256 = "{token_digest(BETA)}"\nworkspaces = ["beta"]\n'
    )
    env = {"RAGSTREAM_AUTH__ENABLED": "true", "RAGSTREAM_AUTH__TOKENS_FILE": str(tokens)}
    with ServeProcess(Path(root / "data"), env, http=True) as process:
        command = [sys.executable, "-m", "ragstream.cli.main", "ingest", str(DEMO_CORPUS)]
        options = ["--workspace", "alpha", "--server", process.address, "--wait"]
        environment = {**os.environ, "RAGSTREAM_TOKEN": ALPHA}
        subprocess.run([*command, *options], env=environment, check=True, capture_output=True)
        yield process


def test_the_api_key_is_the_token_and_picks_the_workspace(secured: ServeProcess) -> None:
    ask: list[Any] = [{"role": "user", "content": QUESTION}]
    alpha = openai.OpenAI(
        base_url=f"http://{secured.http_address}/v1", api_key=ALPHA, max_retries=0
    )
    reply = alpha.chat.completions.create(model="ragstream-naive", messages=ask)
    assert cited_and_listed(reply.choices[0].message.content or "")[1]  # alpha's documents
    beta = alpha.with_options(api_key=BETA)
    answered = beta.chat.completions.create(model="ragstream-naive", messages=ask)
    assert "holds no indexed documents" in (answered.choices[0].message.content or "")
    with pytest.raises(openai.PermissionDeniedError):
        beta.chat.completions.create(
            model="ragstream-naive", messages=ask, extra_headers={"X-Ragstream-Workspace": "alpha"}
        )
    with pytest.raises(openai.AuthenticationError):
        alpha.with_options(api_key="wrong").chat.completions.create(
            model="ragstream-naive", messages=ask, stream=True
        )
