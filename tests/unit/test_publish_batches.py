"""The CLI's publish requests: sized by bytes, under the server's message limit."""

from ragstream.cli.client import DEFAULT_BATCH_MB, batches
from ragstream.v1 import ingest_pb2

MB = 1024 * 1024
LIMIT = int(DEFAULT_BATCH_MB * MB)


def doc(doc_id: str, size: int) -> ingest_pb2.DocumentInput:
    return ingest_pb2.DocumentInput(doc_id=doc_id, content="x" * size, version=1)


def sizes(runs: list[list[ingest_pb2.DocumentInput]]) -> list[int]:
    request = ingest_pb2.PublishDocumentsRequest
    return [request(workspace="w" * 64, documents=run).ByteSize() for run in runs]


def test_large_documents_travel_alone_and_small_ones_together() -> None:
    documents = [doc("a", 9_000_000), doc("b", 9_000_000), doc("c", 60)]
    runs = list(batches(documents, LIMIT, 1000))
    assert [[d.doc_id for d in run] for run in runs] == [["a"], ["b"], ["c"]]
    assert max(sizes(runs)) < 16 * MB  # each fits the server's default message limit


def test_batches_stay_under_the_byte_budget_and_keep_the_order() -> None:
    documents = [doc(f"d{i}", 300_000) for i in range(40)]
    runs = list(batches(documents, LIMIT, 1000))
    assert [d.doc_id for run in runs for d in run] == [d.doc_id for d in documents]
    assert [len(run) for run in runs] == [13, 13, 13, 1]  # 13 x 300 kB fill 4 MiB
    assert all(size <= LIMIT for size in sizes(runs))


def test_batches_respect_the_document_count_limit() -> None:
    runs = list(batches([doc(f"d{i}", 10) for i in range(2500)], LIMIT, 1000))
    assert [len(run) for run in runs] == [1000, 1000, 500]
