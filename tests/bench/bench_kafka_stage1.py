"""Stage 1 throughput on Kafka: events/s of one `ragstream indexer` process.

The indexer consumes from the real broker, embeds with the hash embedder and calls an
instant LLM (the OpenAI-compatible test server, no latency, answering every extraction
with a few well-formed records), so the figure measures ragstream itself: decoding,
chunking, extraction parsing, the store writes, the graph-merge events and the commits
(stage 2 runs in the same process meanwhile, as it does in production). The clock runs from
the first publish to the last document processed. A benchmark, not a timed test:

    .venv/bin/python -m pytest -q -s tests/bench/bench_kafka_stage1.py
    .venv/bin/python -m tests.bench.bench_kafka_stage1 [--docs 1000]   # starts its own broker
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ragstream.indexer.stages.extract.parser import TUPLE_DELIMITER as SEP
from ragstream.testing.openai_server import ChatResponder, OpenAITestServer
from ragstream.testing.openai_wire import Body
from tests.support.kafka_indexer import KafkaDeployment, document, events, processed, wait_until

if TYPE_CHECKING:  # the fixture module is loaded by tests/conftest.py as a plugin
    from tests.support.kafka import KafkaEndpoint

DOCS = 1000


def extraction_reply(messages: list[Body], body: Body) -> str:
    """An instant, well-formed extraction: the stations and harbours the passage names."""
    text = str(messages[-1].get("content", "")) if messages else ""
    stations = sorted(set(re.findall(r"Station (\d+)", text)))[:3]
    harbours = sorted(set(re.findall(r"harbour (\d+)", text)))[:3]
    lines = [f"entity{SEP}Station {s}{SEP}location{SEP}A monitoring station." for s in stations]
    lines += [f"entity{SEP}Harbour {h}{SEP}location{SEP}A harbour." for h in harbours]
    lines += [
        f"relation{SEP}Station {s}{SEP}Harbour {h}{SEP}monitoring{SEP}Measured near it."
        for s in stations
        for h in harbours
    ]
    return "\n".join([*lines, "<|COMPLETE|>"])


@contextlib.contextmanager
def instant_llm(responder: ChatResponder = extraction_reply) -> Iterator[OpenAITestServer]:
    """The OpenAI-compatible test server, answering at once on a thread of its own."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="instant-llm", daemon=True)
    thread.start()
    server = OpenAITestServer(responder=responder)
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(30)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def measure(bootstrap: str, workdir: Path, docs: int) -> float:
    """Events per second from the first publish to the last document processed."""
    with instant_llm() as server:
        base_url = server.base_url
        deployment = KafkaDeployment(bootstrap, workdir / "data", partitions=6)
        deployment.extra_env.update(
            {
                "RAGSTREAM_LLM__PROVIDER": "openai",
                "RAGSTREAM_LLM__BASE_URL": base_url,
                "RAGSTREAM_LLM__MODEL": "test-chat",
                "RAGSTREAM_LLM__API_KEY": "test",
                "RAGSTREAM_LOG_LEVEL": "WARNING",
            }
        )
        changes = [document(i) for i in range(docs)]
        indexer = deployment.indexer("bench").start()
        try:
            time.sleep(3)  # the group assignment settles before the clock starts
            began = time.monotonic()
            asyncio.run(deployment.publish(events(changes)))
            wait_until(lambda: processed(deployment.data_dir) == docs, 900, "indexing", 0.1)
            seconds = time.monotonic() - began
        finally:
            indexer.stop()
    rate = docs / seconds
    print(f"\nstage 1 on Kafka: {docs} documents in {seconds:.1f} s = {rate:.1f} events/s")
    return rate


def test_stage1_events_per_second(kafka_broker: KafkaEndpoint, tmp_path: Path) -> None:
    assert measure(kafka_broker.bootstrap, tmp_path, DOCS) > 0


def main() -> None:
    from tests.support.kafka import KafkaBroker

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=DOCS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, KafkaBroker(workdir=Path(tmp) / "kafka") as broker:
        measure(broker.bootstrap, Path(tmp), args.docs)


if __name__ == "__main__":
    main()
