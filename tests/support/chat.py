"""What the LLM tests share: a CacheStore in memory and an LLM configuration for the
OpenAI-compatible test server."""

from __future__ import annotations

from typing import Any

from ragstream.common.config import LLMConfig
from ragstream.testing.openai_server import OpenAITestServer


class MemoryCache:
    """The CacheStore protocol in a dict."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    async def get(self, key: str) -> str | None:
        return self.values.get(key)

    async def put(self, key: str, value: str) -> None:
        self.values[key] = value

    async def close(self) -> None:
        return None


def llm_config(server: OpenAITestServer, **overrides: Any) -> LLMConfig:
    values: dict[str, Any] = {
        "provider": "openai",
        "model": "test-chat",
        "base_url": server.base_url,
        "api_key": "test",
        "max_retries": 0,
    }
    return LLMConfig.model_validate(values | overrides)
