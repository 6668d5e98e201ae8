"""MiniLM's int8 graph: prepared once, cached and checked, and close to the float32 vectors."""

from __future__ import annotations

import logging
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from ragstream.common.providers import ProviderError, minilm, minilm_int8

SOURCE_SHA = "ab" * 32


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(minilm_int8.CACHE_ENV, str(tmp_path / "models"))
    return tmp_path / "models"


@pytest.fixture
def rewrites(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Replaces the 10 to 20 s rewrite with one that records its calls."""
    calls: list[Path] = []

    def rewrite(source: Path) -> bytes:
        calls.append(source)
        return b"prepared from " + source.name.encode()

    monkeypatch.setattr(minilm_int8, "rewrite", rewrite)
    return calls


def test_cache_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(minilm_int8.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert minilm_int8.cache_dir() == tmp_path / "ragstream" / "models"
    monkeypatch.setenv(minilm_int8.CACHE_ENV, str(tmp_path / "elsewhere"))
    assert minilm_int8.cache_dir() == tmp_path / "elsewhere"


def test_the_model_is_prepared_once_then_read_from_the_cache(
    cache: Path, rewrites: list[Path]
) -> None:
    source = Path("model.onnx")
    first = minilm_int8.prepared_model(source, SOURCE_SHA)
    assert first == b"prepared from model.onnx" and rewrites == [source]
    assert minilm_int8.prepared_model(source, SOURCE_SHA) == first
    assert rewrites == [source]
    assert sorted(path.name for path in cache.iterdir()) == [
        f"minilm-abababababababab-{minilm_int8.RECIPE}.onnx",
        f"minilm-abababababababab-{minilm_int8.RECIPE}.onnx.sha256",
    ]


def test_a_damaged_cached_model_is_prepared_again(cache: Path, rewrites: list[Path]) -> None:
    source = Path("model.onnx")
    model = minilm_int8.prepared_model(source, SOURCE_SHA)
    (cached,) = cache.glob("*.onnx")
    cached.write_bytes(model[:-3])  # cut short: its sha256 no longer matches
    assert minilm_int8.prepared_model(source, SOURCE_SHA) == model
    assert len(rewrites) == 2 and cached.read_bytes() == model
    (cache / (cached.name + ".sha256")).unlink()  # no checksum: not trusted either
    assert minilm_int8.prepared_model(source, SOURCE_SHA) == model
    assert len(rewrites) == 3


def test_an_unwritable_cache_still_gives_the_model(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    rewrites: list[Path],
    caplog: pytest.LogCaptureFixture,
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache directory should be")
    monkeypatch.setenv(minilm_int8.CACHE_ENV, str(blocked / "models"))
    with caplog.at_level(logging.WARNING):
        assert minilm_int8.prepared_model(Path("model.onnx"), SOURCE_SHA).startswith(b"prepared")
    assert "cannot cache the prepared MiniLM" in caplog.text


def test_int8_vectors_stay_close_to_the_float32_graph() -> None:
    # The real rewrite, cached in the machine's model cache like any first use.
    texts = [
        "A man is eating food.",
        "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
        "Alan Turing proposed the imitation game as a test of machine intelligence. " * 4,
    ]
    int8, float32 = minilm._Model.load(int8=True), minilm._Model.load(int8=False)
    assert b"MatMulInteger" in minilm_int8.prepared_model(minilm.model_file(), minilm.MODEL_SHA256)
    with ThreadPoolExecutor(1) as runner:
        cosines = np.sum(int8.embed(texts, runner) * float32.embed(texts, runner), axis=1)
    assert cosines.min() > 0.98, cosines
    assert cosines.max() < 0.99999, "the int8 graph gave the float32 vectors: not rewritten"


def test_a_missing_onnx_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime.quantization", None)
    with pytest.raises(ProviderError, match="needs the onnx package"):
        minilm_int8.rewrite(minilm.model_file())
