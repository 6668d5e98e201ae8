"""Embedders: the hashed test embedder, OpenAIEmbedder against the test server, and MiniLM."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from ragstream.common.config import ConfigError, EmbeddingConfig
from ragstream.common.providers import ProviderError
from ragstream.common.providers.embedding import (
    HashEmbedder,
    Matrix,
    OpenAIEmbedder,
    build_embedder,
    embedding_rows,
    hash_embed,
    l2_normalize,
)
from ragstream.common.providers.minilm import MiniLMEmbedder, _verified, length_batches, pad
from ragstream.testing.openai_server import OpenAITestServer


@pytest.fixture
async def server() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer() as running:
        yield running


def openai_config(server: OpenAITestServer, **overrides: Any) -> EmbeddingConfig:
    values: dict[str, Any] = {
        "provider": "openai",
        "model": "test-embedding",
        "base_url": server.base_url,
        "api_key": "test",
        "max_retries": 0,
    }
    return EmbeddingConfig.model_validate(values | overrides)


def assert_unit_rows(matrix: Matrix) -> None:
    assert matrix.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


def test_l2_normalize_keeps_zero_rows_zero() -> None:
    matrix = l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(matrix, [[0.6, 0.8], [0.0, 0.0]])
    assert matrix.dtype == np.float32


async def test_hash_embedder_is_deterministic_and_word_based() -> None:
    texts = ["Graph retrieval with entities", "graph RETRIEVAL, with entities!", "cooking pasta"]
    first = await HashEmbedder().embed(texts)
    second = await HashEmbedder().embed(texts)
    np.testing.assert_array_equal(first, second)
    assert first.shape == (3, 384)
    assert_unit_rows(first)
    assert first[0] @ first[1] == pytest.approx(1.0)
    assert abs(first[0] @ first[2]) < 0.5
    assert HashEmbedder(64).name == "hash:64"


def test_hash_embedding_is_the_same_in_another_process() -> None:
    # Python's str hash is salted per process; stored vectors must not depend on it.
    code = (
        "from ragstream.common.providers.embedding import hash_embed;"
        "print(hash_embed(['stable across runs'], 32).tobytes().hex())"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert output.strip() == hash_embed(["stable across runs"], 32).tobytes().hex()


def test_build_embedder_by_provider() -> None:
    hashed = build_embedder(EmbeddingConfig.model_validate({"provider": "hash"}))
    assert (hashed.name, hashed.dimensions) == ("hash:384", 384)
    assert build_embedder(EmbeddingConfig.model_validate({"provider": "hash", "dimensions": 8}))
    minilm = build_embedder(EmbeddingConfig.model_validate({}))
    assert (minilm.name, minilm.dimensions) == ("minilm:all-MiniLM-L6-v2-qint8", 384)
    with pytest.raises(ValidationError, match=r"embedding\.model is required"):
        EmbeddingConfig.model_validate({"provider": "openai"})
    with pytest.raises(ConfigError, match="minilm provider gives 384"):
        build_embedder(EmbeddingConfig.model_validate({"provider": "minilm", "dimensions": 512}))


async def test_openai_embedder_batches_and_keeps_order(server: OpenAITestServer) -> None:
    texts = [f"text number {index} about topic {index % 3}" for index in range(10)]
    embedder = OpenAIEmbedder(openai_config(server, batch_size=4))
    matrix = await embedder.embed(texts)
    await embedder.close()
    assert server.log.received["embeddings"] == 3
    assert sorted(server.log.embedding_batch_sizes) == [2, 4, 4]
    np.testing.assert_allclose(matrix, hash_embed(texts, 384), atol=1e-6)
    assert embedder.name == "openai:test-embedding"


async def test_openai_embedder_discovers_dimensions(server: OpenAITestServer) -> None:
    server.set_dimensions(48)
    embedder = OpenAIEmbedder(openai_config(server))
    assert embedder.dimensions == 0
    matrix = await embedder.embed(["what size"])
    assert matrix.shape == (1, 48)
    assert embedder.dimensions == 48
    assert "dimensions" not in server.log.bodies["embeddings"][0]
    server.set_dimensions(64)
    with pytest.raises(ProviderError, match="64-dimensional vectors, expected 48"):
        await embedder.embed(["changed model"])
    await embedder.close()


async def test_openai_embedder_sends_configured_dimensions(server: OpenAITestServer) -> None:
    embedder = OpenAIEmbedder(openai_config(server, dimensions=16))
    matrix = await embedder.embed(["a", "b"])
    await embedder.close()
    assert matrix.shape == (2, 16)
    assert server.log.bodies["embeddings"][0]["dimensions"] == 16


async def test_openai_embedder_normalizes(server: OpenAITestServer) -> None:
    def unnormalized(texts: Sequence[str], dimensions: int) -> Matrix:
        rows = [np.full(dimensions, len(text) + 1.0, dtype=np.float32) for text in texts]
        return np.array(rows, dtype=np.float32)

    server.set_embed(unnormalized, dimensions=8)
    embedder = OpenAIEmbedder(openai_config(server))
    matrix = await embedder.embed(["short", "a longer text"])
    await embedder.close()
    assert_unit_rows(matrix)


async def test_openai_embedder_retries_then_succeeds(server: OpenAITestServer) -> None:
    server.fail_next("embeddings", 2, status=503, retry_after_ms=10)
    embedder = OpenAIEmbedder(openai_config(server, max_retries=3))
    matrix = await embedder.embed(["retry me"])
    await embedder.close()
    assert matrix.shape == (1, 384)
    assert server.log.received["embeddings"] == 3


async def test_openai_embedder_failure_names_the_provider(server: OpenAITestServer) -> None:
    server.fail_next("embeddings", 10, status=500)
    embedder = OpenAIEmbedder(openai_config(server, batch_size=1))
    with pytest.raises(ProviderError, match="openai:test-embedding"):
        await embedder.embed(["a", "b", "c"])
    await embedder.close()


def b64(values: list[float]) -> str:
    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode()


def test_embedding_rows_in_input_order_from_base64_or_numbers() -> None:
    payload = {
        "data": [
            {"index": 1, "embedding": [3.0, 4.0]},  # a server that ignores encoding_format
            {"index": 0, "embedding": b64([1.0, 2.0])},
        ]
    }
    rows = embedding_rows(payload, 2)
    assert rows.dtype == np.float32
    np.testing.assert_array_equal(rows, [[1.0, 2.0], [3.0, 4.0]])


FIRST = {"index": 0, "embedding": [1.0]}


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ({"error": "nope"}, "no data list"),
        ({"data": [{"index": 0, "embedding": [1.0]}]}, "returned 1 vectors for 2 texts"),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [2.0]}]}, "index 0"),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 5, "embedding": [2.0]}]}, "index 5"),
        ({"data": [FIRST, {"index": 1, "embedding": "%%"}]}, "base64"),
        ({"data": [FIRST, {"index": 1, "embedding": "AAA="}]}, "whole"),
        ({"data": [FIRST, {"index": 1, "embedding": [1.0, 2.0]}]}, "size"),
        ({"data": [FIRST, {"index": 1, "embedding": None}]}, "neither"),
    ],
)
def test_embedding_rows_refuse_a_malformed_answer(payload: object, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        embedding_rows(payload, 2)


async def test_openai_embedder_reports_a_malformed_answer(server: OpenAITestServer) -> None:
    def one_too_many(texts: Sequence[str], dimensions: int) -> Matrix:
        return np.zeros((len(texts) + 1, dimensions), dtype=np.float32)

    server.set_embed(one_too_many)
    embedder = OpenAIEmbedder(openai_config(server))
    with pytest.raises(ProviderError, match=r"openai:test-embedding at .*returned 2 vectors for 1"):
        await embedder.embed(["one text"])
    await embedder.close()


async def test_empty_input_makes_no_request(server: OpenAITestServer) -> None:
    embedder = OpenAIEmbedder(openai_config(server, dimensions=16))
    assert (await embedder.embed([])).shape == (0, 16)
    await embedder.close()
    assert server.log.received["embeddings"] == 0


def test_pad_and_length_batches() -> None:
    ids, mask = pad([[101, 7, 102], [101, 102]])
    np.testing.assert_array_equal(ids, [[101, 7, 102], [101, 102, 0]])
    np.testing.assert_array_equal(mask, [[1, 1, 1], [1, 1, 0]])
    assert length_batches([5, 1, 3, 2], 2) == [[1, 3], [2, 0]]


def test_pinned_file_mismatch_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    path.write_bytes(b"not the model")
    with pytest.raises(ProviderError, match=r"sha256 .* expected 8199be6f.*some-package"):
        _verified(path, "8199be6f", "some-package")
    with pytest.raises(ProviderError, match="missing"):
        _verified(tmp_path / "absent.onnx", "8199be6f", "some-package")


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


async def test_minilm_is_semantic(minilm: MiniLMEmbedder) -> None:
    vectors = await minilm.embed(
        [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The girl is carrying a baby.",
        ]
    )
    assert vectors.shape == (3, 384)
    assert_unit_rows(vectors)
    similar, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert similar > 0.6
    assert similar > unrelated + 0.4


async def test_minilm_batches_do_not_change_vectors(minilm: MiniLMEmbedder) -> None:
    # Padding to the batch's longest text must not leak into the mean pooling.
    texts = ["short one", "a considerably longer sentence with many more word pieces in it"]
    together = await minilm.embed(texts)
    alone = np.vstack([await minilm.embed([text]) for text in texts])
    np.testing.assert_allclose(together, alone, atol=1e-4)


async def test_minilm_truncates_long_texts(minilm: MiniLMEmbedder) -> None:
    long_text = "retrieval " * 1000
    vectors = await minilm.embed([long_text, long_text + "tail that is cut off"])
    assert_unit_rows(vectors)
    np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-5)


async def test_minilm_leaves_the_event_loop_free(minilm: MiniLMEmbedder) -> None:
    await minilm.embed(["warm up"])
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0)
    # Inference on the loop's thread would leave the ticker no turn until it finished.
    await minilm.embed([f"sentence number {index} about retrieval " * 8 for index in range(256)])
    ticker.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await ticker
    assert ticks >= 3


async def test_minilm_concurrent_calls_get_the_vectors_of_single_calls(
    minilm: MiniLMEmbedder,
) -> None:
    # Every call's runs share the worker threads; none may get another call's rows.
    calls = [[f"text {i} of call {c} " * (1 + (i + c) % 7) for i in range(9)] for c in range(4)]
    together = await asyncio.gather(*(minilm.embed(texts) for texts in calls))
    for texts, vectors in zip(calls, together, strict=True):
        np.testing.assert_allclose(vectors, await minilm.embed(texts), atol=1e-6)
