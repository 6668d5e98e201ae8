"""The embedders' language rule: script-based detection, the gate, and BM25 as the fallback."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from ragstream.common.config import ConfigError, EmbeddingConfig, load_settings
from ragstream.common.config_chunking import ChunkingConfig
from ragstream.common.events import DocumentChange
from ragstream.common.models import Chunk, Collection, SearchFilter
from ragstream.common.providers.embedding import Matrix, build_embedder, hash_embed
from ragstream.common.providers.gate import LanguageGate
from ragstream.common.storage.sqlite import Database, SqliteSearchStore
from ragstream.common.text.analyzer import analyze
from ragstream.common.text.chunking import chunk_text
from ragstream.common.text.language import ANY, parse_languages, script_shares, served
from ragstream.indexer.stages.chunk import chunk_document
from ragstream.indexer.stages.write import write_chunks
from ragstream.query.search import Retriever, SearchSpec, hybrid_search

EN = frozenset({"en"})


@pytest.mark.parametrize(
    ("text", "english"),
    [
        ("Does vitamin D lower the risk of type 2 diabetes?", True),
        ("鹦鹉吃自己的小鱼吗", False),
        ("東京タワーはどこですか", False),
        ("서울의 인구는", False),
        ("Сколько стоит билет", False),
        ("Quelle est la capitale de la France ?", True),  # Latin script: not told apart
        ("The Huawei 华为 Mate 60 phone review", True),  # mostly Latin words
        ("iPhone 15 价格是多少", False),  # mostly Chinese words
        ("Python 教程", False),  # a tie is not "more than half"
        ("12345 + 678 = ?", True),  # no letters: nothing to judge
        ("", True),
    ],
)
def test_served_by_an_english_embedder(text: str, english: bool) -> None:
    assert served(text, EN) is english
    assert served(text, frozenset({ANY}))


def test_script_shares_weight_cjk_characters_as_words() -> None:
    assert script_shares("abc 中") == {"latin": 0.5, "han": 0.5}
    assert script_shares("...") == {}


def test_a_chinese_embedder_serves_chinese_and_not_russian() -> None:
    zh = frozenset({"zh"})
    assert served("鹦鹉吃自己的小鱼吗", zh)
    assert not served("Сколько стоит билет", zh)


def test_language_codes_are_checked() -> None:
    assert parse_languages(["EN", " zh ", ""]) == {"en", "zh"}
    assert parse_languages(["en", "any"]) == {ANY}
    with pytest.raises(ValueError, match=r"unknown language code.*cn"):
        parse_languages(["cn"])
    with pytest.raises(ValueError, match="at least one"):
        parse_languages([" "])


def test_embedding_languages_setting_is_validated_and_normalized() -> None:
    assert EmbeddingConfig.model_validate({"languages": "zh, EN"}).languages == "en,zh"
    assert EmbeddingConfig.model_validate({}).languages == ""
    with pytest.raises(ConfigError, match=r"embedding\.languages"):
        load_settings(None, embedding={"languages": "english"})


class Recording:
    """An embedder serving English that records what it is asked to embed."""

    def __init__(self, dimensions: int = 8) -> None:
        self.name = "recording"
        self.dimensions = dimensions
        self.languages = EN
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls.append(list(texts))
        self.dimensions = self.dimensions or 4
        return hash_embed(texts, self.dimensions)

    async def close(self) -> None:
        return None


async def test_the_gate_gives_zero_rows_without_running_the_model() -> None:
    inner = Recording()
    gate = LanguageGate(inner)
    rows = await gate.embed(["vitamin d deficiency", "鹦鹉吃自己的小鱼吗", "fish eat fry"])
    assert inner.calls == [["vitamin d deficiency", "fish eat fry"]]
    assert rows.shape == (3, 8)
    assert not np.any(rows[1])
    assert np.linalg.norm(rows[[0, 2]], axis=1) == pytest.approx([1.0, 1.0])
    assert not np.any(await gate.embed(["只有中文"]))
    assert inner.calls[-1] == ["vitamin d deficiency", "fish eat fry"]  # no call for it
    assert gate.name == "recording" and gate.languages == EN


async def test_the_gate_learns_an_unknown_size_from_one_text() -> None:
    inner = Recording(dimensions=0)
    rows = await LanguageGate(inner).embed(["只有中文", "还是中文"])
    assert rows.shape == (2, 4) and not np.any(rows)
    assert inner.calls == [["只有中文"]]


def test_languages_set_in_config_replace_the_providers_and_name_the_index() -> None:
    minilm = build_embedder(EmbeddingConfig.model_validate({}))
    assert minilm.languages == EN and minilm.name == "minilm:all-MiniLM-L6-v2-qint8"
    ungated = build_embedder(EmbeddingConfig.model_validate({"languages": "any"}))
    assert ungated.languages == {ANY}
    assert ungated.name == "minilm:all-MiniLM-L6-v2-qint8[any]"
    hashed = build_embedder(EmbeddingConfig.model_validate({"provider": "hash"}))
    assert hashed.languages == {ANY} and hashed.name == "hash:384"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteSearchStore]:
    db = await Database.open(tmp_path)
    yield await SqliteSearchStore.open(db)
    await db.close()


DOCS = {
    "zh-parrot": "鹦鹉鱼会吃掉自己的鱼苗吗？雌鱼有时会吞下小鱼。",
    "zh-weather": "今天天气很好，我们去公园散步。",
    "en-fish": "Parrot fish sometimes eat their own fry.",
    "en-weather": "The weather is fine today; we walk in the park.",
}


async def chunks(doc_id: str, embedder: LanguageGate) -> list[Chunk]:
    return await chunk_document("ws", doc_id, DOCS[doc_id], doc_id, ChunkingConfig(), embedder)


async def index(store: SqliteSearchStore, embedder: LanguageGate) -> None:
    for doc_id, text in DOCS.items():
        change = DocumentChange("ws", doc_id, 1, False, text, doc_id)
        await write_chunks(await chunks(doc_id, embedder), change, embedder, store)


async def search(
    store: SqliteSearchStore, embedder: LanguageGate, query: str, retriever: Retriever
) -> list[str]:
    [vector] = await embedder.embed([query])
    spec = SearchSpec("ws", analyze(query), vector, SearchFilter(), 10, 10, retriever=retriever)
    return [hit.record.doc_ids[0] for hit in await hybrid_search(store, Collection.CHUNKS, spec)]


async def test_unserved_chunks_and_queries_are_searched_by_bm25_alone(
    store: SqliteSearchStore,
) -> None:
    embedder = LanguageGate(Recording())
    await index(store, embedder)
    [zh] = await store.get(
        Collection.CHUNKS, "ws", [c.id for c in await chunks("zh-parrot", embedder)]
    )
    assert not np.any(zh.vector)
    # A Chinese query: every retriever gives BM25's ranking.
    bm25 = await search(store, embedder, "鹦鹉吃小鱼", Retriever.BM25)
    assert bm25[0] == "zh-parrot"
    for retriever in (Retriever.DENSE, Retriever.HYBRID):
        assert await search(store, embedder, "鹦鹉吃小鱼", retriever) == bm25
    # An English query: dense search sees the English chunks only.
    dense = await search(store, embedder, "parrot fish eat fry", Retriever.DENSE)
    assert set(dense) <= {"en-fish", "en-weather"} and dense[0] == "en-fish"


async def test_the_multilingual_embedder_matches_chinese_by_meaning() -> None:
    from ragstream.common.providers.e5 import E5Embedder

    embedder = build_embedder(EmbeddingConfig.model_validate({"provider": "e5"}))
    assert embedder.languages == {ANY} and embedder.name == "e5:multilingual-e5-small-q4"
    query, parrot, weather, english = await embedder.embed(
        ["鹦鹉鱼吃小鱼吗", DOCS["zh-parrot"], DOCS["zh-weather"], DOCS["en-fish"]]
    )
    assert float(query @ parrot) > float(query @ weather)
    assert float(query @ english) > float(query @ weather)  # across languages too
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-4)
    assert (await E5Embedder().embed([])).shape == (0, 384)


def test_the_multilingual_weights_are_pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragstream.common.providers import ProviderError, e5

    assert e5.model_path().name == e5.MODEL_FILE
    monkeypatch.setattr(e5, "MODEL_SHA256", "0" * 64)
    with pytest.raises(ProviderError, match="expected 0000"):
        e5.model_path()


async def test_semantic_chunking_cuts_unserved_documents_by_tokens() -> None:
    inner = Recording()
    embedder = LanguageGate(inner)
    cfg = ChunkingConfig.model_validate(
        {"strategy": "semantic", "chunk_tokens": 24, "overlap_tokens": 4}
    )
    text = "。".join([DOCS["zh-parrot"], DOCS["zh-weather"]] * 4)
    chunked = await chunk_document("ws", "zh", text, "zh", cfg, embedder)
    tokens = [piece.content for piece in chunk_text(text, cfg)]
    assert [c.content for c in chunked] == list(dict.fromkeys(tokens))
    assert inner.calls == []  # no sentence was embedded
