"""Indexing at scale: what a corpus costs in time, embedding requests and LLM calls.

Two workloads, both through the real pipeline on the embedded backends (events on the
embedded bus, both indexing stages, until the index is current):

- `corpus`: 100 documents of 30 consecutive 2Wiki passages each ("title. text" joined by
  blank lines), with the OpenAI-compatible test server as an instant LLM (the scripted
  extraction model of tests/support/scripted_llm.py) and instant embeddings. Then one
  paragraph of a 450-passage document is edited, and 85 of the 100 documents are deleted.
- `offline`: a multi-hop set (2Wiki by default) with the offline providers (MiniLM and the
  NLP extractor), one document per passage, as `ragstream eval multihop` indexes it.

Printed: wall time to current, CPU time of the pipeline's process (all its threads; steadier
than wall time on a shared machine) and of each kind of thread, the cores kept busy and
the shortest time that CPU could take on them (`cores_report`), time per stage (summed span
time: chunk, extract, write, remove, merge batches, summaries, embedding batches), chunks/s
and the chunk count of fixed 1,200/100-token windows, records/s (entities and relations
written by stage 2), embedding requests and texts, LLM calls by kind, prompt characters and
tokens (and how many of those tokens are the byte-identical system prefix). A benchmark, run on
demand, never a timed test:

    .venv/bin/python -m tests.bench.bench_scale corpus [--model six|names] [--server process|thread]
        [--check on|off] [--embedding test|minilm] [--processes N]
    .venv/bin/python -m tests.bench.bench_scale offline [--data DIR] [--limit N] [--processes N]

`--processes N` indexes in N processes (`indexer.processes`): the CPU figure then adds the
other members' CPU (from /proc), and the stage times are this process's share only.

Corpus figures, paired against 45a2475 (before) in one session on 2 shared cores, the test
server in its own process, 337 chunks for both. The changes: embeddings read as plain JSON
with numpy-decoded base64 vectors, batch token counts only where they can matter, one span
per merged key, keys without a summary merged without a task, stage 2's liveness check by
chunk id, jieba loaded off the event loop, chunking on a worker thread.

    quiet machine (02:59-03:25; six "after" is 66cd504, before the liveness check by id)
    model  run     s to current        CPU s               chunks/s
    six    before  6.86  6.74  6.77    6.18  6.01  5.89    49.1 50.0 49.8
    six    after   6.51  6.36  6.13    6.00  5.72  5.53    51.8 53.0 55.0
    names  before  16.82 16.31         15.81 15.27         20.0 20.7
    names  after   12.84 12.86         12.10 12.05         26.3 26.2

    loaded machine (03:51-03:54, about 1.35x slower), the final code
    six    before  9.16  9.22  9.54    8.41  8.37  8.64    36.8 36.6 35.3
    six    after   8.92  9.10  8.97    8.23  8.37  8.28    37.8 37.1 37.6
    names  before  19.38 19.76         18.41 18.75         17.4 17.1
    names  after   15.71 16.13         14.99 15.43         21.4 20.9

LLM calls are unchanged: six 677 (337 extraction, 337 gleaning, 3 summaries), 6.03 M prompt
characters; names 385 (337/48/0), 3.43 M. Stage 2 of names writes 17,000 records; per kind
of thread (final code, loaded machine, 15.5 s to current): event loop 7.2 s of CPU, SQLite
writer 4.3 s, readers 1.6 s, worker threads 1.0 s. The stages run one after the other (stage 2
waits for the document backlog, `indexer.merge_settle_s`), and each is bound by one
interpreter: merging a batch's keys in parts, so that one part's writes overlap the next
part's reads and embedding, was measured and dropped (no faster: the writer's Python work
and the event loop contend for the GIL, and each part re-reads the store).

Deleting 85 documents until nothing is queued: six 1.43-1.44 s after (1.46-1.66 before) on
the quiet machine, 1.87-1.92 s loaded; names 3.72-4.0 s after (5.11-5.13 before), 4.84-5.26 s
loaded. At most 2 LLM calls. Editing one paragraph of the 450-passage document (48 chunks):
2 calls (six) or 1 (names), before and after.

The host's own speed moves these figures more than most changes do: on 2026-12-02 the same
code took 8.1-11.6 s of CPU for `six` (24-38 chunks/s), 1.6x the quiet figures above.
Sampled with py-spy on that host, the openai client was 52% of the event loop's busy time
for `six` (888 requests); bench_http_client.py measures that cost per request by client.

Later that day (12:25-12:40, a slow spell), against e06a186 (before), paired run by run:
chat completions and embeddings posted through JsonEndpoint instead of the openai client,
the analyzer's one-pass path for text without ideographs, and the token encodings and
jieba loaded before the stages consume (`startup_seconds`, not in the time to current;
before, jieba loaded on a thread of its own while the first documents were indexed):

    model  run     s to current                    chunks/s
    six    before  10.04 8.03 9.33 7.83 9.04       33.6 42.0 36.1 43.0 37.3
    six    after    6.68 5.99 6.07 5.78 6.53       50.5 56.3 55.5 58.3 51.6
    six    after, startup included (0.69-1.2 s)    44.9 49.9 49.4 52.1 43.6
    names  before  15.55 16.82                     21.7 20.0
    names  after   13.99 10.83                     24.1 31.1

The event loop's CPU for `six` fell from 3.67-4.77 s to 2.15-2.81 s. LLM calls unchanged.

On 2026-12-06 the test server in its own process still loaded the Chinese segmenter inside
its first embedding request (some 2Wiki passages hold Chinese names): 0.4-0.5 s of its CPU
and a stalled first request inside the measured window, which no real endpoint adds. It now
loads it before it serves. Paired against d2c3a7b (before), in turn, three runs each: one
process 6.08-6.56 s to current (51-55 chunks/s) before, 5.49-6.03 s (56-61) after; two
processes 4.87-5.02 s (67-69) before, 4.08-4.47 s (75-82) after. The pipeline's own CPU is
unchanged (5.2-5.6 s).

Later that day, against 2b0217e (before), in turn, three runs each: the backlog waits read
the committed offsets every 50 ms instead of 200, and a BM25 record's length counted once
per record instead of once per term (6827654), and the writer's connection without a busy
timeout of its own (0251b82): one process 5.39-5.64 s (60-63 chunks/s) before, 4.95-5.14 s
(66-68) after; two processes 4.05-4.20 s (80-83) before, 3.88-4.02 s (84-87) after. Deletes
of 85 documents 1.86-2.47 s before, 1.83-2.25 s after.

How far two processes could go (2026-12-07, a slow spell, 68dd527; `cores_busy` and
`cpu_bound_seconds` are printed with the other figures), one process and two in turn, four
rounds:

    run     s to current          CPU s (+ test server)               cores busy
    one     6.99 7.14 6.93 8.38   6.72+1.43 6.88+1.52 6.74+1.39 8.16+1.66   1.17-1.18
    two     6.07 5.50 5.83 5.86   8.36+1.50 7.38+1.30 7.70+1.31 8.06+1.47   1.55-1.63

Two processes spend 0.99x to 1.24x the CPU of one on the same events, and the test server's
CPU shares the same two cores, so their run cannot end before (CPU + server) / 2: 4.93,
4.34, 4.51 and 4.76 s. The one-process times over those bounds are 1.42, 1.65, 1.54 and
1.76: the most two processes could gain in those rounds with no wait and no serial step.
They gained 1.15, 1.30, 1.19 and 1.43.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult

from ragstream.cli.local_index import publish, running_indexer, wait_current
from ragstream.cli.multihop import passages
from ragstream.common.bus.progress import indexing_progress
from ragstream.common.config import Settings, load_settings
from ragstream.common.config_chunking import ChunkingConfig
from ragstream.common.events import DocumentChange
from ragstream.common.models import Collection
from ragstream.common.registry import Backends
from ragstream.common.text.tokens import count_tokens
from ragstream.testing.openai_server import LOG_PATH, ChatResponder
from tests.bench.bench_kafka_stage1 import instant_llm
from tests.support import scripted_llm


def _shared_data() -> Path:
    """RAGSTREAM_TEST_DATA, else the first `shared/data` beside an ancestor of this file."""
    if "RAGSTREAM_TEST_DATA" in os.environ:
        return Path(os.environ["RAGSTREAM_TEST_DATA"])
    here = Path(__file__).resolve()
    found = (p / "shared" / "data" for p in here.parents if (p / "shared" / "data").is_dir())
    return next(found, here.parents[3] / "shared" / "data")


DATA = _shared_data() / "multihop"
WS = "scale"
DOCS, PASSAGES, BIG_PASSAGES, DELETED = 100, 30, 450, 85
STAGES = (
    "chunk", "extract", "write", "remove", "merge_batch", "summarize", "embedding_batch",
    "communities", "community_reports",
)  # fmt: skip


class SpanTotals(SpanProcessor):
    """Summed duration and count of every span name, and the texts of embedding batches."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.count: Counter[str] = Counter()
        self.embedded_texts = 0

    def on_end(self, span: ReadableSpan) -> None:
        if span.start_time is None or span.end_time is None:
            return
        self.seconds[span.name] += (span.end_time - span.start_time) / 1e9
        self.count[span.name] += 1
        if span.name == "embedding_batch":
            texts = (span.attributes or {}).get("ragstream.texts", 0)
            self.embedded_texts += texts if isinstance(texts, int) else 0

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]


def read_passages(corpus: Path, start: int, count: int) -> list[str]:
    lines = corpus.read_text(encoding="utf-8").splitlines()[start : start + count]
    rows = [json.loads(line) for line in lines]
    return [f"{row['title']}. {row['text']}" for row in rows]


def documents(corpus: Path) -> list[DocumentChange]:
    texts = read_passages(corpus, 0, DOCS * PASSAGES)
    parts = ["\n\n".join(texts[i * PASSAGES : (i + 1) * PASSAGES]) for i in range(DOCS)]
    return [DocumentChange(WS, f"d{i:03d}", 1, False, parts[i], f"d{i:03d}") for i in range(DOCS)]


def fixed_windows(changes: list[DocumentChange], cfg: ChunkingConfig) -> int:
    """How many chunks fixed token windows would cut (LightRAG's: one starting every
    `chunk_tokens - overlap_tokens` tokens), the count content-defined chunking must stay
    within 5% of."""
    step = cfg.chunk_tokens - cfg.overlap_tokens
    return sum(len(range(0, count_tokens(c.content), step)) for c in changes)


async def until_current(
    settings: Settings, backends: Backends, began: float
) -> tuple[float, float]:
    """Seconds since `began` until the document stage, then both stages, have nothing queued."""
    documents_done = None
    while True:
        progress = await indexing_progress(backends.bus, backends.topics, settings.bus.group_id)
        if progress.documents == 0 and documents_done is None:
            documents_done = time.monotonic() - began
        if progress.current:
            return documents_done or 0.0, time.monotonic() - began
        await asyncio.sleep(0.05)


RequestLog = Callable[[], tuple[list[dict[str, Any]], list[int]]]
"""The test server's chat request bodies and embedding batch sizes so far."""


class LLMCounts:
    """Calls by kind and prompt size since the last `take`, read from the server's log."""

    def __init__(self, log: RequestLog) -> None:
        self._log = log
        self._seen = 0
        self._embed_seen = 0

    def take(self) -> dict[str, Any]:
        chat, batch_sizes = self._log()
        bodies = chat[self._seen :]
        self._seen += len(bodies)
        sizes = batch_sizes[self._embed_seen :]
        self._embed_seen += len(sizes)
        calls: Counter[str] = Counter()
        chars = tokens = prefix = 0
        for body in bodies:
            messages = body["messages"]
            calls[scripted_llm.kind(messages)] += 1
            contents = [str(m.get("content", "")) for m in messages]
            chars += sum(len(c) for c in contents)
            counted = [count_tokens(c) for c in contents]
            tokens += sum(counted)
            prefix += counted[0]
        return {
            "llm_calls": dict(calls), "llm_calls_total": sum(calls.values()),
            "prompt_chars": chars, "prompt_tokens": tokens, "system_prefix_tokens": prefix,
            "embedding_requests": len(sizes), "embedded_texts": sum(sizes),
        }  # fmt: skip


def thread_cpu() -> defaultdict[str, float]:
    """CPU seconds of this process's threads so far, by name without its number
    ("ragstream-db-reader_2" counts as "ragstream-db-reader")."""
    seconds: defaultdict[str, float] = defaultdict(float)
    for thread in threading.enumerate():
        if thread.ident is None:
            continue
        with contextlib.suppress(OSError):  # the thread ended meanwhile
            clock = time.pthread_getcpuclockid(thread.ident)
            seconds[thread.name.rsplit("_", 1)[0]] += time.clock_gettime(clock)
    return seconds


def process_cpu(pid: int) -> float:
    """CPU seconds (user and system) of a process so far; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def members_cpu() -> float:
    """CPU seconds of this process's indexer members (indexer/members.py) so far."""
    total = 0.0
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            with contextlib.suppress(OSError):  # the member exited meanwhile
                if b"ragstream.indexer.members" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    total += process_cpu(int(pid))
    return total


def thread_report(before: defaultdict[str, float]) -> dict[str, float]:
    """Per thread kind, CPU seconds since `before`: which threads the work kept busy (the
    event loop's MainThread holds the GIL for most of its time; SQLite, tiktoken and
    numpy release it)."""
    after = thread_cpu()
    return {name: round(after[name] - before[name], 2) for name in sorted(after)}


def stage_report(totals: SpanTotals) -> dict[str, Any]:
    return {
        "stage_seconds": {name: round(totals.seconds[name], 2) for name in STAGES},
        "stage_spans": {name: totals.count[name] for name in STAGES},
    }


async def record_counts(backends: Backends, workspace: str) -> dict[str, int]:
    search = backends.stores.search
    return {c.value: await search.count(c, workspace) for c in Collection}


def cores_report(cpu_seconds: float, seconds: float) -> dict[str, float]:
    """How busy the cores were: the pipeline's and the test server's CPU over the time to
    current (`cores_busy`), and the shortest time that CPU could have taken on the cores this
    process may run on (`cpu_bound_seconds`, with no wait and no serial step). A run's time to
    current over another's `cpu_bound_seconds` bounds the speed-up the other could reach."""
    cores = len(os.sched_getaffinity(0))
    return {
        "cores": cores,
        "cores_busy": round(cpu_seconds / seconds, 2),
        "cpu_bound_seconds": round(cpu_seconds / cores, 2),
    }


def corpus_settings(
    data_dir: Path, base_url: str, check: bool = True, embedding: str = "test", processes: int = 1
) -> Settings:
    """The test server as LLM; embeddings from it (instant) or from the offline MiniLM (real
    vectors, so that names near each other are near: the check's candidates)."""
    api = {"base_url": base_url, "api_key": "test"}
    vectors: dict[str, Any] = {"provider": "openai", "model": "test-embedding", "dimensions": 384}
    return load_settings(
        None,
        data_dir=data_dir,
        llm={"provider": "openai", "model": "test-chat", **api},
        embedding={**vectors, **api} if embedding == "test" else {"provider": "minilm"},
        resolution={"check": check},
        indexer={"processes": processes},
        log_level="WARNING",
    )


async def corpus_run(
    settings: Settings, log: RequestLog, corpus: Path, server_cpu: Callable[[], float]
) -> dict[str, Any]:
    totals = install_span_totals()
    counts = LLMCounts(log)
    report: dict[str, Any] = {}
    changes = documents(corpus)
    starting = time.monotonic()
    async with running_indexer(settings) as backends:
        began, threads = time.monotonic(), thread_cpu()
        cpu, llm_cpu = time.process_time() + members_cpu(), server_cpu()
        await publish(backends, changes)
        stage1, seconds = await until_current(settings, backends, began)
        cpu, llm_cpu = time.process_time() + members_cpu() - cpu, server_cpu() - llm_cpu
        thread_seconds = thread_report(threads)
        records = await record_counts(backends, WS)
        report["index_100"] = {
            "startup_seconds": round(began - starting, 2),
            "seconds": round(seconds, 2), "documents_seconds": round(stage1, 2),
            "cpu_seconds": round(cpu, 2), "thread_cpu_seconds": thread_seconds,
            "test_server_cpu_seconds": round(llm_cpu, 2),
            **cores_report(cpu + llm_cpu, seconds),
            "chunks": records["chunks"], "chunks_per_s": round(records["chunks"] / seconds, 1),
            "fixed_window_chunks": fixed_windows(changes, settings.chunking),
            "entities": records["entities"], "relations": records["relations"],
            "records_per_s": round((records["entities"] + records["relations"]) / seconds, 1),
            **counts.take(), **stage_report(totals),
        }  # fmt: skip
        report["edit_450"] = await edit_big_document(settings, backends, corpus, counts)
        totals.reset()
        began = time.monotonic()
        await publish(backends, [DocumentChange(WS, c.doc_id, 2, True) for c in changes[:DELETED]])
        await wait_current(settings, backends)
        report["delete_85"] = {
            "seconds": round(time.monotonic() - began, 2),
            **counts.take(),
            **stage_report(totals),
        }
    return report


async def edit_big_document(
    settings: Settings, backends: Backends, corpus: Path, counts: LLMCounts
) -> dict[str, Any]:
    texts = read_passages(corpus, DOCS * PASSAGES, BIG_PASSAGES)
    big = DocumentChange("big", "big", 1, False, "\n\n".join(texts), "big.md")
    await publish(backends, [big])
    await wait_current(settings, backends)
    indexed = counts.take()
    record = await backends.stores.docs.get("big", "big")
    middle = BIG_PASSAGES // 2
    texts[middle] = texts[middle].replace(" ", " also ", 1)
    edited = DocumentChange("big", "big", 2, False, "\n\n".join(texts), "big.md")
    began = time.monotonic()
    await publish(backends, [edited])
    await wait_current(settings, backends)
    return {
        "chunks": len(record.chunk_ids) if record else 0,
        "index_llm_calls": indexed["llm_calls_total"],
        "seconds": round(time.monotonic() - began, 2),
        **counts.take(),
    }


class StageSampler(Sampler):
    """Records only the stage spans, so that tracing costs the pipeline next to nothing."""

    def should_sample(
        self,
        parent_context: Any,
        trace_id: int,
        name: str,
        kind: Any = None,
        attributes: Any = None,
        *args: Any,
        **kw: Any,
    ) -> SamplingResult:
        # A sampled span gets the attributes the sampler returns: pass them on.
        if name not in STAGES:
            return SamplingResult(Decision.DROP)
        return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)

    def get_description(self) -> str:
        return "ragstream stages"


def install_span_totals() -> SpanTotals:
    totals = SpanTotals()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider(sampler=StageSampler())
        trace.set_tracer_provider(provider)
    provider.add_span_processor(totals)
    return totals


MODELS: dict[str, str] = {
    "names": "tests.support.scripted_llm:respond",
    "six": "tests.pipeline.test_llm_costs:responder",
}
"""names: every capitalized name, up to 30 a reply (tests/support/scripted_llm.py); six: the
first six two-word names and nothing on gleaning (tests/pipeline/test_llm_costs.py)."""


@contextlib.contextmanager
def llm_in_process(model: str) -> Iterator[tuple[str, RequestLog, Callable[[], float]]]:
    """The test server on a thread of the benchmark's own interpreter, sharing its GIL."""
    module, _, name = MODELS[model].partition(":")
    responder: ChatResponder = getattr(importlib.import_module(module), name)
    with instant_llm(responder) as server:
        yield (
            server.base_url,
            lambda: (
                server.log.bodies.get("chat", []),
                server.log.embedding_batch_sizes,
            ),
            lambda: 0.0,  # its CPU is this process's
        )


@contextlib.contextmanager
def llm_in_subprocess(model: str) -> Iterator[tuple[str, RequestLog, Callable[[], float]]]:
    """The test server in a process of its own, as a real endpoint would be: its CPU is not
    the pipeline's."""
    command = [
        sys.executable, "-m", "ragstream.testing.openai_server", "--port", "0",
        "--responder", MODELS[model],
    ]  # fmt: skip
    repo = Path(__file__).resolve().parents[2]
    with subprocess.Popen(command, cwd=repo, stdout=subprocess.PIPE, text=True) as server:
        try:
            assert server.stdout is not None
            first_line = server.stdout.readline()
            base_url = first_line.split()[-1] if first_line.split() else ""
            if not base_url.startswith("http"):
                raise RuntimeError(f"the test server did not start: {first_line!r}")

            def log() -> tuple[list[dict[str, Any]], list[int]]:
                root = base_url.removesuffix("/v1")
                with urllib.request.urlopen(root + LOG_PATH, timeout=60) as response:
                    seen = json.load(response)
                return seen["chat"], seen["embedding_batch_sizes"]

            yield base_url, log, lambda: process_cpu(server.pid)
        finally:
            server.terminate()


SERVERS = {"process": llm_in_subprocess, "thread": llm_in_process}


def bench_corpus(
    data: Path,
    model: str,
    server: str = "process",
    check: bool = True,
    embedding: str = "test",
    processes: int = 1,
) -> dict[str, Any]:
    corpus = data / "2wikimultihopqa_hipporag" / "corpus.jsonl"
    with tempfile.TemporaryDirectory() as tmp, SERVERS[server](model) as (base_url, log, cpu):
        settings = corpus_settings(Path(tmp), base_url, check, embedding, processes)
        return asyncio.run(corpus_run(settings, log, corpus, cpu))


async def offline_run(settings: Settings, corpus: Path, limit: int) -> dict[str, Any]:
    totals = install_span_totals()
    changes = list(_limited(passages(corpus), limit))
    async with running_indexer(settings) as backends:
        began = time.monotonic()
        await publish(backends, changes)
        stage1, seconds = await until_current(settings, backends, began)
        records = await record_counts(backends, "multihop")
    return {
        "passages": len(changes), "seconds": round(seconds, 1),
        "documents_seconds": round(stage1, 1), "chunks": records["chunks"],
        "chunks_per_s": round(records["chunks"] / seconds, 2),
        "entities": records["entities"], "relations": records["relations"],
        "records_per_s": round((records["entities"] + records["relations"]) / seconds, 1),
        "embedding_requests": totals.count["embedding_batch"],
        "embedded_texts": totals.embedded_texts, **stage_report(totals),
    }  # fmt: skip


def _limited(changes: Iterator[DocumentChange], limit: int) -> Iterator[DocumentChange]:
    for index, change in enumerate(changes):
        if limit and index >= limit:
            return
        yield change


def bench_offline(data: Path, limit: int, processes: int = 1) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            None, data_dir=Path(tmp), indexer={"processes": processes}, log_level="WARNING"
        )
        return asyncio.run(offline_run(settings, data / "corpus.jsonl", limit))


def test_corpus_scale() -> None:
    report = bench_corpus(DATA, "six")
    print(json.dumps(report, indent=2))
    assert report["index_100"]["chunks"] > 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=["corpus", "offline"])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=0, help="offline: first N passages only")
    parser.add_argument("--model", choices=sorted(MODELS), default="six", help="corpus: LLM")
    parser.add_argument(
        "--server",
        choices=sorted(SERVERS),
        default="process",
        help="corpus: where the test server runs (thread: shares this interpreter's GIL)",
    )
    parser.add_argument(
        "--check", choices=["on", "off"], default="on", help="corpus: the LLM check of near names"
    )
    parser.add_argument(
        "--embedding", choices=["test", "minilm"], default="test", help="corpus: embeddings"
    )
    parser.add_argument("--processes", type=int, default=1, help="indexer processes")
    args = parser.parse_args()
    if args.workload == "corpus":
        check = args.check == "on"
        report = bench_corpus(
            args.data or DATA, args.model, args.server, check, args.embedding, args.processes
        )
    else:
        data = args.data or DATA / "2wikimultihopqa_hipporag"
        report = bench_offline(data, args.limit, args.processes)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
