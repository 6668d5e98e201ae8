"""Extraction, gleaning and summary prompts: what they ask for and how they are shaped."""

from __future__ import annotations

from ragstream.common.config_extraction import DEFAULT_ENTITY_TYPES
from ragstream.common.providers.llm import ChatMessage
from ragstream.indexer.stages.extract.parser import parse_extraction
from ragstream.indexer.stages.extract.prompts import (
    extraction_messages,
    gleaning_messages,
    summary_messages,
)
from ragstream.indexer.stages.extract.records import ExtractedEntity


def test_extraction_prompt_lists_the_types_and_the_format() -> None:
    messages = extraction_messages("Some text.", entity_types=["vessel", "harbour"])
    system, user = messages
    assert (system.role, user.role) == ("system", "user")
    assert "vessel, harbour" in system.content
    assert "entity<|#|><name><|#|><type><|#|><description>" in system.content
    assert "<|COMPLETE|>" in system.content
    assert user.content.startswith("Passage:\nSome text.")


def test_default_language_follows_the_text_and_shows_a_chinese_example() -> None:
    system = extraction_messages("x", entity_types=DEFAULT_ENTITY_TYPES)[0].content
    assert "language of the passage" in system
    assert "青石港务集团" in system


def test_a_fixed_language_is_named_and_drops_the_chinese_example() -> None:
    system = extraction_messages("x", entity_types=DEFAULT_ENTITY_TYPES, language="German")[0]
    assert "in German" in system.content
    assert "青石港务集团" not in system.content
    assert "keep names as written" in system.content


def test_the_examples_parse_as_valid_output() -> None:
    system = extraction_messages("x", entity_types=DEFAULT_ENTITY_TYPES)[0].content
    examples = system.split("Example 1", 1)[1]
    for block in examples.split("Records:\n")[1:]:
        records = block.split("<|COMPLETE|>")[0] + "<|COMPLETE|>"
        result = parse_extraction(records)
        assert result.entities and result.relations and not result.warnings
        names = {entity.name for entity in result.entities}
        assert all({r.source, r.target} <= names for r in result.relations)


def test_gleaning_continues_the_conversation() -> None:
    first = extraction_messages("text", entity_types=["person"])
    follow_up = gleaning_messages(first, [ExtractedEntity("A", "person", "d")], [])
    assert follow_up[:2] == first
    assert follow_up[2] == ChatMessage("assistant", "entity<|#|>A<|#|>person<|#|>d\n<|COMPLETE|>")
    assert follow_up[3].role == "user"
    assert "missed" in follow_up[3].content
    assert "<|COMPLETE|>" in follow_up[3].content


def test_summary_prompt_for_an_entity() -> None:
    system, user = summary_messages("Tern S3", ["A sensor.", "Recalled\nin 2024."], 600)
    assert "600 tokens" in system.content
    assert "language of the descriptions" in system.content
    assert user.content.startswith("Entity: Tern S3")
    assert "- A sensor.\n- Recalled in 2024." in user.content


def test_summary_prompt_for_a_relation_in_a_fixed_language() -> None:
    system, user = summary_messages(("Tern S3", "Kestrel Polymers"), ["x"], 200, "Chinese")
    assert "in Chinese" in system.content
    assert "Tern S3" in user.content and "Kestrel Polymers" in user.content
    assert "relation" in system.content
