"""The LLM extractor against the OpenAI-compatible test server, through the real openai client."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragstream.common.config import LLMConfig
from ragstream.common.config_extraction import ExtractionConfig
from ragstream.common.providers.llm import ChatMessage, OpenAIChat
from ragstream.indexer.stages.extract.llm_calls import CachedChat, cache_key
from ragstream.indexer.stages.extract.llm_extractor import LLMExtractor
from ragstream.indexer.stages.extract.parser import ExtractionFormatError, parse_extraction
from ragstream.indexer.stages.extract.prompts import extraction_messages, gleaning_messages
from ragstream.indexer.stages.extract.records import ExtractedEntity, ExtractedRelation
from ragstream.testing.openai_server import OpenAITestServer
from ragstream.testing.openai_wire import split_tokens
from tests.support.chat import MemoryCache, llm_config

CHUNK = (
    "Halvorsen Aquatics launched the Tern S3 in Bergen. The seal of the Tern S3 is made by "
    "Kestrel Polymers of Aberdeen."
)
FIRST = """\
entity<|#|>Halvorsen Aquatics<|#|>organization<|#|>Maker of the Tern S3.
entity<|#|>Tern S3<|#|>product<|#|>A sensor.
relation<|#|>Halvorsen Aquatics<|#|>Tern S3<|#|>launch<|#|>Launched it.
<|COMPLETE|>"""
GLEANED = """\
entity<|#|>Kestrel Polymers<|#|>organization<|#|>Makes the seal of the Tern S3, in Aberdeen.
entity<|#|>tern s3<|#|>product<|#|>A water-quality sensor whose seal Kestrel Polymers makes.
relation<|#|>Tern S3<|#|>Halvorsen Aquatics<|#|>launch<|#|>Halvorsen Aquatics launched it in Bergen.
relation<|#|>Kestrel Polymers<|#|>Tern S3<|#|>supplier<|#|>Kestrel Polymers makes its seal.
<|COMPLETE|>"""


@pytest.fixture
async def server() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer() as running:
        yield running


@pytest.fixture
async def chat(server: OpenAITestServer) -> AsyncIterator[OpenAIChat]:
    model = OpenAIChat(llm_config(server))
    yield model
    await model.close()


def extractor(
    chat: OpenAIChat,
    cache: MemoryCache,
    llm: LLMConfig,
    **cfg: Any,
) -> LLMExtractor:
    return LLMExtractor(chat, cache, "test-chat", ExtractionConfig.model_validate(cfg), llm)


async def test_one_extraction_and_one_gleaning_call_then_the_cache(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    cache = MemoryCache()
    server.script_replies(FIRST, GLEANED)
    first_run = await extractor(chat, cache, llm_config(server), gleaning="always").extract(CHUNK)
    assert server.log.received["chat"] == 2
    assert len(first_run.cache_keys) == 2
    assert set(first_run.cache_keys) == set(cache.values)

    again = await extractor(chat, cache, llm_config(server), gleaning="always").extract(CHUNK)
    assert server.log.received["chat"] == 2  # both answers came from the cache
    assert again == first_run


async def test_gleaning_repeats_the_extraction_prompt_then_the_records_so_far(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    server.script_replies(FIRST, GLEANED, "<|COMPLETE|>")
    ext = extractor(chat, MemoryCache(), llm_config(server), gleaning="always", max_gleaning=2)
    await ext.extract(CHUNK)
    first, gleaning, second = server.log.bodies["chat"]
    assert CHUNK in first["messages"][-1]["content"]
    # The extraction prompt is the gleaning prompt's prefix, byte for byte (prefix caching).
    for later in (gleaning, second):
        assert later["messages"][: len(first["messages"])] == first["messages"]
        assert (
            later["messages"][-1]["role"] == "user" and "missed" in later["messages"][-1]["content"]
        )
    assert gleaning["messages"][-2] == {"role": "assistant", "content": FIRST}
    # The second round sends every record found so far once, not the whole conversation.
    assert len(second["messages"]) == len(gleaning["messages"])
    recorded = second["messages"][-2]["content"]
    assert "Kestrel Polymers" in recorded and FIRST not in recorded
    assert recorded.count("entity<|#|>") == 3


async def test_the_system_prompt_is_the_same_bytes_for_every_chunk(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    server.script_replies(FIRST, FIRST)
    ext = extractor(chat, MemoryCache(), llm_config(server), gleaning="never")
    await ext.extract(CHUNK)
    await ext.extract("Kestrel Polymers moved to Oslo in 2024.")
    first, second = (body["messages"] for body in server.log.bodies["chat"])
    assert first[0] == second[0] and first[0]["role"] == "system"
    assert first[1] != second[1]


COMPLETE_ENOUGH = """\
entity<|#|>Halvorsen Aquatics<|#|>organization<|#|>Launched the Tern S3.
entity<|#|>Tern S3<|#|>product<|#|>A sensor.
<|COMPLETE|>"""


async def test_adaptive_gleaning_skips_a_complete_reply(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    server.script_replies(COMPLETE_ENOUGH)
    result = await extractor(chat, MemoryCache(), llm_config(server)).extract(CHUNK)
    assert server.log.received["chat"] == 1
    assert len(result.cache_keys) == 1


@pytest.mark.parametrize(
    ("reply", "chunk", "why"),
    [
        (COMPLETE_ENOUGH.removesuffix("\n<|COMPLETE|>"), CHUNK, "no completion marker"),
        (
            COMPLETE_ENOUGH,
            " ".join(f"Visitor{i} Person{i} came." for i in range(12)),
            "far fewer entities than the passage's names",
        ),
    ],
)
async def test_adaptive_gleaning_asks_again_after_a_reply_that_looks_incomplete(
    server: OpenAITestServer, chat: OpenAIChat, reply: str, chunk: str, why: str
) -> None:
    server.script_replies(reply, "<|COMPLETE|>")
    await extractor(chat, MemoryCache(), llm_config(server)).extract(chunk)
    assert server.log.received["chat"] == 2, why


async def test_adaptive_gleaning_asks_again_after_a_reply_cut_at_the_output_limit(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    # The model wrote the marker and kept going; the server cuts the reply at max_tokens and
    # says finish_reason "length": a sign that the model had more to say.
    limit = len(split_tokens(COMPLETE_ENOUGH)) + 20
    server.script_replies(COMPLETE_ENOUGH + "\n" + "and more " * 50, "<|COMPLETE|>")
    result = await extractor(
        chat, MemoryCache(), llm_config(server, max_output_tokens=limit)
    ).extract(CHUNK)
    assert server.log.received["chat"] == 2
    assert len(result.entities) == 2


async def test_no_gleaning_under_the_never_policy(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    server.script_replies(COMPLETE_ENOUGH.removesuffix("\n<|COMPLETE|>"))
    ext = extractor(chat, MemoryCache(), llm_config(server), gleaning="never")
    await ext.extract(CHUNK)
    assert server.log.received["chat"] == 1


async def test_the_longer_description_wins_across_passes(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    server.script_replies(FIRST, GLEANED)
    result = await extractor(chat, MemoryCache(), llm_config(server), gleaning="always").extract(
        CHUNK
    )
    assert result.entities == (
        ExtractedEntity("Halvorsen Aquatics", "organization", "Maker of the Tern S3."),
        ExtractedEntity(
            "tern s3", "product", "A water-quality sensor whose seal Kestrel Polymers makes."
        ),
        ExtractedEntity(
            "Kestrel Polymers", "organization", "Makes the seal of the Tern S3, in Aberdeen."
        ),
    )
    assert result.relations == (
        ExtractedRelation(
            "Tern S3", "Halvorsen Aquatics", "launch", "Halvorsen Aquatics launched it in Bergen."
        ),
        ExtractedRelation(
            "Kestrel Polymers", "Tern S3", "supplier", "Kestrel Polymers makes its seal."
        ),
    )


async def test_gleaning_is_skipped_when_its_prompt_would_overflow_the_context(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    long_reply = "\n".join(
        f"entity<|#|>Entity {i}<|#|>concept<|#|>{'a long description ' * 8}" for i in range(40)
    )
    first_prompt = extraction_messages(CHUNK, entity_types=ExtractionConfig().entity_types)
    probe = CachedChat(chat, MemoryCache(), "test-chat", llm_config(server))
    first_tokens = probe.prompt_tokens(first_prompt)
    listed = parse_extraction(long_reply)
    gleaning = gleaning_messages(first_prompt, listed.entities, listed.relations)
    gleaning_tokens = probe.prompt_tokens(gleaning)
    # Room for the first prompt and a full answer, not for the gleaning prompt.
    llm = llm_config(server, context_tokens=first_tokens + 2048, max_output_tokens=2048)
    assert gleaning_tokens > llm.context_tokens - llm.max_output_tokens
    server.script_replies(long_reply + "\n<|COMPLETE|>")

    result = await extractor(chat, MemoryCache(), llm, gleaning="always").extract(CHUNK)
    assert server.log.received["chat"] == 1
    assert len(result.entities) == 40
    assert any("gleaning pass 1 skipped" in warning for warning in result.warnings)


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.text(alphabet="ab cd.\n北京学生é🙂", max_size=400), min_size=1, max_size=4),
    budget=st.integers(min_value=1, max_value=1200),
)
def test_fits_is_the_exact_count_against_the_budget(texts: list[str], budget: int) -> None:
    llm = LLMConfig(provider="openai", model="m", context_tokens=4096, max_output_tokens=2048)
    calls = CachedChat(OpenAIChat(llm), MemoryCache(), "m", llm)
    calls.input_budget = budget
    messages = [ChatMessage("user", text) for text in texts]
    assert calls.fits(messages) == (calls.prompt_tokens(messages) <= budget)


async def test_no_gleaning_when_disabled(server: OpenAITestServer, chat: OpenAIChat) -> None:
    server.script_replies(FIRST)
    result = await extractor(chat, MemoryCache(), llm_config(server), max_gleaning=0).extract(CHUNK)
    assert server.log.received["chat"] == 1
    assert len(result.cache_keys) == 1


async def test_gleaning_stops_once_nothing_more_is_found(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    server.script_replies(FIRST, GLEANED, "<|COMPLETE|>", "entity<|#|>X<|#|>concept<|#|>x")
    result = await extractor(
        chat, MemoryCache(), llm_config(server), max_gleaning=5, gleaning="always"
    ).extract(CHUNK)
    assert server.log.received["chat"] == 3
    assert len(result.cache_keys) == 3
    assert "X" not in {entity.name for entity in result.entities}


async def test_an_unusable_first_answer_raises_and_is_not_cached(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    cache = MemoryCache()
    server.script_replies("Sorry, I cannot help with that.")
    with pytest.raises(ExtractionFormatError):
        await extractor(chat, cache, llm_config(server), gleaning="always").extract(CHUNK)
    assert cache.values == {}
    server.script_replies(FIRST, "<|COMPLETE|>")
    result = await extractor(chat, cache, llm_config(server), gleaning="always").extract(CHUNK)
    assert len(result.entities) == 2
    assert server.log.received["chat"] == 3


async def test_an_unusable_gleaning_answer_keeps_the_first_pass(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    cache = MemoryCache()
    server.script_replies(FIRST, "I found nothing else.")
    result = await extractor(chat, cache, llm_config(server), gleaning="always").extract(CHUNK)
    assert [entity.name for entity in result.entities] == ["Halvorsen Aquatics", "Tern S3"]
    assert len(result.cache_keys) == 1
    assert len(cache.values) == 1
    assert any("gleaning pass 1 ignored" in warning for warning in result.warnings)


async def test_the_prompt_names_the_types_and_the_language(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    server.script_replies(FIRST, "<|COMPLETE|>")
    llm = llm_config(server)
    ext = extractor(chat, MemoryCache(), llm, entity_types=["vessel", "port"], language="Chinese")
    await ext.extract(CHUNK)
    system = server.log.bodies["chat"][0]["messages"][0]["content"]
    assert "vessel, port" in system
    assert "in Chinese" in system
    assert ext.name == "llm:test-chat"


@settings(max_examples=300)
@given(st.text(), st.text(), st.floats(allow_nan=False, allow_infinity=False))
def test_the_cache_key_is_the_sha256_of_the_canonical_json_stored_keys_were_made_of(
    drawn: str, model: str, temperature: float
) -> None:
    # Keys already in a cache stay valid: the same bytes as json.dumps of the whole payload.
    text = 'Zoë «quoted» "x" \\ \n\t\x00\x1f\x7f \u2028 中文 😀' + drawn
    messages = [ChatMessage("system", text), ChatMessage("user", text[::-1])]
    parameters = {"temperature": temperature, "top_p": 1e-05, "max_tokens": 10, "stop": ["<|"]}
    payload = {
        "model": model,
        "messages": [[m.role, m.content] for m in messages],
        "parameters": parameters,
    }
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    expected = hashlib.sha256(canonical.encode()).hexdigest()
    assert cache_key(model, messages, parameters) == expected


def test_the_cache_key_covers_model_messages_and_parameters() -> None:
    messages = [ChatMessage("user", "hello")]
    base = cache_key("m", messages, {"temperature": 0.0, "max_tokens": 10})
    assert base == cache_key("m", messages, {"max_tokens": 10, "temperature": 0.0})
    assert len(base) == 64
    assert base != cache_key("n", messages, {"temperature": 0.0, "max_tokens": 10})
    assert base != cache_key(
        "m", [ChatMessage("user", "hello!")], {"temperature": 0.0, "max_tokens": 10}
    )
    assert base != cache_key(
        "m", [ChatMessage("system", "hello")], {"temperature": 0.0, "max_tokens": 10}
    )
    assert base != cache_key("m", messages, {"temperature": 0.5, "max_tokens": 10})


async def test_a_temperature_change_misses_the_cache(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    cache = MemoryCache()
    server.script_replies(FIRST, "<|COMPLETE|>", FIRST, "<|COMPLETE|>")
    await extractor(chat, cache, llm_config(server), gleaning="always").extract(CHUNK)
    await extractor(chat, cache, llm_config(server, temperature=0.7), gleaning="always").extract(
        CHUNK
    )
    assert server.log.received["chat"] == 4
    assert len(cache.values) == 4
