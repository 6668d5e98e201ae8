"""CPU time of the offline extractor (rules and the packaged named-entity model) over every
passage of a corpus, in one process, as the indexer's extraction stage runs it.

    .venv/bin/python -m tests.bench.bench_extract_offline CORPUS.jsonl [--json]

Each passage is its title and text, as `ragstream eval multihop` indexes it. To compare
another revision's extractor on the same machine, run it from a worktree in turn with this
one (the worktree's sources first on the path):

    git worktree add /tmp/before REV
    PYTHONPATH=/tmp/before/services/common:/tmp/before/services/indexer \\
        .venv/bin/python -m tests.bench.bench_extract_offline CORPUS.jsonl

Offices, ranks and split remnants (1ccd024) against ca40464, musique_hipporag_100's 1,890
passages, in turn three times on a quiet 2-core machine: 20.81, 20.83, 20.65 s against
20.71, 20.52, 21.15 s.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from ragstream.indexer.stages.extract.nlp_extractor import extract_offline
from ragstream.indexer.stages.extract.nlp_model import load_tagger


def passages(corpus: Path) -> list[str]:
    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    return [f"{row.get('title', '')}\n\n{row['text']}".strip() for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tagger = load_tagger()
    texts = passages(args.corpus)
    extract_offline(texts[0], tagger)  # the model's first call loads its weights
    began = time.process_time()
    entities = sum(len(extract_offline(text, tagger).entities) for text in texts)
    cpu = time.process_time() - began
    figures = {
        "passages": len(texts),
        "entities": entities,
        "model": tagger is not None,
        "cpu_s": round(cpu, 2),
        "passages_per_cpu_s": round(len(texts) / cpu, 1),
    }
    print(json.dumps(figures) if args.json else " ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
