"""Model providers: embedders and chat models behind narrow Protocols.

`embedding.build_embedder` and `llm.build_chat_model` turn configuration into a provider;
nothing else in ragstream constructs one. This module holds what both share.
"""

from __future__ import annotations

import os

from openai import AsyncOpenAI
from pydantic import SecretStr

OPENAI_API = "https://api.openai.com/v1"

NO_API_KEY = "no-key"
"""Sent when no key is configured: self-hosted servers (vLLM, Ollama, TEI) ignore the key,
while the openai client refuses to start without one. An empty key never falls back to the
OPENAI_API_KEY environment variable, so a real key never reaches a server it was not meant for.
"""


def openai_base_url(configured: str) -> str:
    """The endpoint an openai-provider section means, resolved as the openai client resolves
    it: its own base_url, else OPENAI_BASE_URL, else OpenAI's API."""
    return (configured or os.environ.get("OPENAI_BASE_URL") or OPENAI_API).rstrip("/")


class ProviderError(Exception):
    """A model provider failed after its retries; the message names the provider and endpoint."""


def openai_client(
    *, base_url: str, api_key: SecretStr, timeout_s: float, max_retries: int
) -> AsyncOpenAI:
    """The one place an `AsyncOpenAI` client is configured (for streamed chat answers; other
    requests go through `endpoint.JsonEndpoint`).

    The client itself retries connection errors, 408, 409, 429 and 5xx answers with
    exponential backoff (honouring Retry-After), so callers do not add their own retry loop.
    An empty base_url means the client's default endpoint (OPENAI_BASE_URL, else OpenAI's API).
    """
    return AsyncOpenAI(
        base_url=base_url or None,
        api_key=api_key.get_secret_value() or NO_API_KEY,
        timeout=timeout_s,
        max_retries=max_retries,
    )
