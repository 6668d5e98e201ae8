"""MiniLM throughput benchmark: texts/s on passage-length and description-length texts.

Chunks reach the embedder as passages (150-250 words here), entity and relation descriptions
as one to a few sentences (20-60 words); both come in provider calls of 32 texts, as the
scheduler sends them. Each configuration varies one thing against the shipped one: how the
two cores are used (one run over both, or one single-threaded run per core), texts per model
run (each run pads its texts to the longest), and where long texts are truncated (the model
was fine-tuned on 128 word pieces, sentence-transformers cuts at 256). Texts come from a
multi-hop corpus. On demand, never timed in CI:

    .venv/bin/python -m tests.bench.bench_minilm_batches [--data DIR] [--calls 4]

Measured with --calls 2 on the 2-core machine, quiet (load about 1), texts/s:

    setup                         passages (286 pieces)   descriptions (55 pieces)
    before: float32, 4 per run     23.8                    117.7
    shipped: int8, 1 per run       52.2  (2.2x)            273.2  (2.3x)
      4 texts per run              42.3                    248.1
      1 run x 2 threads            38.7                    173.9
      truncated at 128 pieces     116.4                    278.2

Cosine of the int8 vectors to the float32 ones: passages mean 0.9935, lowest 0.9893;
descriptions 0.9942 and 0.9898. The same machine gave a quarter of these rates an hour
earlier (a shared machine): compare rows of one run, not runs.

Truncating at 128 would make passages 2.2x faster again, but it changes their vectors (a
chunk would be embedded from its first ~95 words instead of ~190) and is not shipped
without a SciFact check (`ragstream eval beir --retriever dense`, 0.652 at 256).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragstream.common.providers import minilm

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "multihop" / "2wikimultihopqa_hipporag"
CALL = 32


@dataclass(frozen=True)
class Setup:
    name: str
    threads: int
    """ONNX Runtime threads per run."""
    runs: int
    """Runs at once."""
    batch: int = minilm.BATCH_SIZE
    max_pieces: int = minilm.MAX_WORD_PIECES
    int8: bool = True
    """int8 products (minilm_int8.py), or the package's float32 graph."""


SETUPS = (
    Setup("before: float32, 4 per run", threads=1, runs=minilm.RUNS, batch=4, int8=False),
    Setup("shipped: int8, 1 per run", threads=1, runs=minilm.RUNS),
    Setup("  4 texts per run", threads=1, runs=minilm.RUNS, batch=4),
    Setup("  1 run x 2 threads", threads=2, runs=1),
    Setup("  truncated at 128 pieces", threads=1, runs=minilm.RUNS, max_pieces=128),
)


def texts_of(corpus: Path, count: int, words: tuple[int, int], seed: int = 1) -> list[str]:
    """`count` texts of `words` words (a range), cut from consecutive corpus passages."""
    passages = [json.loads(line)["text"] for line in corpus.open(encoding="utf-8")]
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        want, start = rng.randint(*words), rng.randrange(len(passages))
        taken: list[str] = []
        while len(taken) < want:
            taken += passages[start % len(passages)].split()
            start += 1
        texts.append(" ".join(taken[:want]))
    return texts


Models = dict[tuple[int, bool], minilm._Model]


def rate(setup: Setup, models: Models, texts: list[str]) -> float:
    model = models[setup.threads, setup.int8]
    model.tokenizer.enable_truncation(max_length=setup.max_pieces)
    configured, minilm.BATCH_SIZE = minilm.BATCH_SIZE, setup.batch
    try:
        with ThreadPoolExecutor(setup.runs) as runner:
            model.embed(texts[:CALL], runner)  # warm-up
            started = time.perf_counter()
            for start in range(0, len(texts), CALL):
                model.embed(texts[start : start + CALL], runner)
            return len(texts) / (time.perf_counter() - started)
    finally:
        minilm.BATCH_SIZE = configured
        model.tokenizer.enable_truncation(max_length=minilm.MAX_WORD_PIECES)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--calls", type=int, default=4, help="calls of 32 texts per kind")
    args = parser.parse_args(argv)
    corpus = args.data / "corpus.jsonl"
    kinds = {
        "passages (150-250 words)": texts_of(corpus, CALL * args.calls, (150, 250)),
        "descriptions (20-60 words)": texts_of(corpus, CALL * args.calls, (20, 60)),
    }
    models = {(s.threads, s.int8): minilm._Model.load(s.threads, s.int8) for s in SETUPS}
    for kind, texts in kinds.items():
        models[1, True].tokenizer.no_truncation()
        pieces = [len(e.ids) for e in models[1, True].tokenizer.encode_batch(texts)]
        models[1, True].tokenizer.enable_truncation(max_length=minilm.MAX_WORD_PIECES)
        print(f"{kind}: {sum(pieces) / len(pieces):.0f} word pieces on average (before cut)")
        with ThreadPoolExecutor(1) as runner:
            cosines = np.sum(
                models[1, True].embed(texts, runner) * models[1, False].embed(texts, runner), axis=1
            )
        print(f"  cosine int8 to float32: mean {cosines.mean():.4f}, lowest {cosines.min():.4f}")
        for setup in SETUPS:
            print(f"  {setup.name:28} {rate(setup, models, texts):6.1f} texts/s", flush=True)


if __name__ == "__main__":
    main()
