"""MiniLM run size benchmark: seconds to embed description-like texts by texts per model run.

Entity and relation descriptions reach the embedder in provider calls of a few dozen texts of
mixed length; each model run pads its texts to the longest, so the run size decides how much
compute goes to padding. Texts are one to five sentences drawn from a multi-hop corpus, sent
in calls of 32 as the scheduler does. On demand, never timed in CI:

    .venv/bin/python -m tests.bench.bench_minilm_batches [--data DIR] [--texts 640]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Sequence
from pathlib import Path

from ragstream.common.providers import minilm

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "multihop" / "2wikimultihopqa_hipporag"
CALL = 32


def description_texts(corpus: Path, count: int, seed: int = 1) -> list[str]:
    sentences: list[str] = []
    with corpus.open(encoding="utf-8") as f:
        for line in f:
            sentences.extend(s for s in json.loads(line)["text"].split(". ") if s)
    rng = random.Random(seed)
    return [
        " ".join(rng.sample(sentences, rng.choice([1, 1, 1, 2, 2, 3, 5]))) for _ in range(count)
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--texts", type=int, default=640)
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 16, 8, 4, 2, 1])
    args = parser.parse_args(argv)
    texts = description_texts(args.data / "corpus.jsonl", args.texts)
    model = minilm._Model.load()
    configured = minilm.BATCH_SIZE
    try:
        for size in args.sizes:
            minilm.BATCH_SIZE = size
            started = time.perf_counter()
            for start in range(0, len(texts), CALL):
                model.embed(texts[start : start + CALL])
            print(f"{size:>3} texts per run: {time.perf_counter() - started:6.1f} s")
    finally:
        minilm.BATCH_SIZE = configured


if __name__ == "__main__":
    main()
