"""`ragstream eval beir` on Elasticsearch: BM25 on SciFact within 0.01 nDCG@10 of the
embedded store's 0.689 (the same analyzer terms, so the same BM25 statistics)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from elasticsearch import AsyncElasticsearch

from tests.support.elasticsearch import ElasticsearchNode, drop_prefix, unique_index

pytestmark = pytest.mark.integration
DATA = Path(os.environ.get("RAGSTREAM_TEST_DATA", Path(__file__).parents[3] / "shared" / "data"))
EMBEDDED_BM25_NDCG_AT_10 = 0.689
"""`ragstream eval beir --retriever bm25` on the embedded store (tests/eval/)."""


@pytest.fixture
async def prefix(es_client: AsyncElasticsearch) -> AsyncIterator[str]:
    name = unique_index("beir")
    try:
        yield name
    finally:
        await drop_prefix(es_client, name)


def test_scifact_bm25_matches_the_embedded_store(
    elasticsearch_node: ElasticsearchNode, prefix: str
) -> None:
    scifact = DATA / "scifact"
    if not (scifact / "corpus.jsonl").is_file():
        pytest.fail(f"evaluation data not found at {scifact} (set RAGSTREAM_TEST_DATA)")
    env = {
        **os.environ,
        "RAGSTREAM_STORAGE__SEARCH": "elasticsearch",
        "RAGSTREAM_ELASTICSEARCH__HOSTS": json.dumps([elasticsearch_node.url]),
        "RAGSTREAM_ELASTICSEARCH__INDEX_PREFIX": prefix,
        "RAGSTREAM_EMBEDDING__PROVIDER": "hash",  # BM25 ignores vectors
        "RAGSTREAM_LOG_LEVEL": "WARNING",
    }
    command = [sys.executable, "-m", "ragstream.cli.main", "eval", "beir"]
    command += ["--data", str(scifact), "--retriever", "bm25", "--json"]
    result = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert (report["backend"], report["queries"]) == ("elasticsearch", 300)
    assert abs(report["ndcg@10"] - EMBEDDED_BM25_NDCG_AT_10) <= 0.01, report
