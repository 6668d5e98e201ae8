"""The prompts of the LLM extractor: extraction, gleaning, and description summaries.

The extraction prompt asks for the format parser.py reads (one record per line, fields
separated by <|#|>, entities first, then relations, then <|COMPLETE|>), and its examples are
rendered by parser.format_records, so prompt and parser cannot drift apart. Names are always
kept as the text writes them (so they match the chunk text and the BM25 index); descriptions
and keywords follow the configured language, by default the language of the text.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragstream.common.providers.llm import ChatMessage
from ragstream.indexer.stages.extract.parser import (
    COMPLETION_MARKER,
    TUPLE_DELIMITER,
    format_records,
)
from ragstream.indexer.stages.extract.records import ExtractedEntity, ExtractedRelation

AUTO_LANGUAGE = "auto"

_EXTRACTION_RULES = """\
You turn a passage of text into knowledge-graph records: the specific things it names and
how the passage connects them.

Entities
- Record a thing only if it is specific: a named person, organization, place, product,
  event, or a well-defined technical idea. Skip pronouns, bare dates and amounts, and
  everyday nouns.
- Type: one of {types}. Pick the closest; the examples below may use other types.
- Name: exactly as the passage writes it, without quotes, brackets or translation, spelled
  the same way in every record.
- Description: one to three sentences stating what the passage says about it, with its
  dates and numbers. Add nothing the passage does not say.

Relations
- A relation joins two recorded entities that the passage connects: who did what with whom,
  what belongs to, makes, uses or causes what.
- Keywords: a few words or short phrases naming the kind of connection, separated by commas.
- Description: one or two sentences explaining the connection from the passage's facts.
- Relations have no direction: record each pair once, and never an entity with itself.

Output
- One record per line, fields separated by {delimiter}, nothing else on the line:
  entity{delimiter}<name>{delimiter}<type>{delimiter}<description>
  relation{delimiter}<name>{delimiter}<name>{delimiter}<keywords>{delimiter}<description>
- All entity lines first, then all relation lines. No numbering, bullets or commentary, and
  no {delimiter} or line break inside a field.
- The last line is {complete} alone.
- Language: {language}

{examples}"""

_GLEANING = """\
Some entities and relations in the passage were missed. Read it again and record the ones \
that are missing, plus any recorded entity whose description left out facts from the \
passage. Use exactly the same format and rules; do not repeat records that are already \
complete. End with {complete} alone on the last line; if nothing was missed, reply with \
only {complete}."""

_SUMMARY_RULES = """\
You merge descriptions of {subject_kind}, collected from different documents, into one
description.

- Keep every distinct fact; state repeated facts once.
- When descriptions disagree, keep each version with its source's context (for example its
  date) instead of choosing one.
- Write in the third person and name {subject_kind_short} at the start, so the description
  makes sense on its own.
- Add nothing that the descriptions do not say.
- At most {max_tokens} tokens. Reply with the description only: no title, list or preamble.
- Language: {language}"""

_EXAMPLE_EN = (
    "In March 2021 the Orsa Valley Water Board hired Tallis Engineering to replace the ageing "
    "pumps at its Kettle Creek station. Project manager Ada Nwosu chose the Vortex 40 pump "
    "because it needs half the power of the old units, and the station's electricity bill "
    "fell by a third in the first year."
)
_EXAMPLE_EN_RECORDS = (
    (
        ExtractedEntity(
            "Orsa Valley Water Board",
            "organization",
            "A water utility that runs the Kettle Creek station and in March 2021 hired Tallis "
            "Engineering to replace its pumps.",
        ),
        ExtractedEntity(
            "Tallis Engineering",
            "organization",
            "An engineering firm hired in March 2021 to replace the pumps of the Kettle Creek "
            "station.",
        ),
        ExtractedEntity(
            "Kettle Creek station",
            "location",
            "A pumping station of the Orsa Valley Water Board; after its pumps were replaced "
            "in 2021 its electricity bill fell by a third in a year.",
        ),
        ExtractedEntity(
            "Ada Nwosu",
            "person",
            "The project manager of the Kettle Creek pump replacement, who chose the Vortex 40.",
        ),
        ExtractedEntity(
            "Vortex 40",
            "product",
            "A pump that needs half the power of the units it replaced at Kettle Creek.",
        ),
    ),
    (
        ExtractedRelation(
            "Orsa Valley Water Board",
            "Tallis Engineering",
            "contract, pump replacement",
            "The Orsa Valley Water Board hired Tallis Engineering in March 2021 to replace "
            "the pumps of its Kettle Creek station.",
        ),
        ExtractedRelation(
            "Orsa Valley Water Board",
            "Kettle Creek station",
            "operates",
            "The Kettle Creek station belongs to the Orsa Valley Water Board.",
        ),
        ExtractedRelation(
            "Ada Nwosu",
            "Vortex 40",
            "product choice, energy use",
            "Ada Nwosu chose the Vortex 40 because it needs half the power of the old pumps.",
        ),
        ExtractedRelation(
            "Vortex 40",
            "Kettle Creek station",
            "installation, energy saving",
            "The Vortex 40 pumps cut the Kettle Creek station's electricity bill by a third "
            "in their first year.",
        ),
    ),
)
_EXAMPLE_ZH = "2022年，青石港务集团与 Marlow Robotics 合作，在青石港试运行 Tug-7 自动拖轮。"
_EXAMPLE_ZH_RECORDS = (
    (
        ExtractedEntity(
            "青石港务集团",
            "organization",
            "港口运营企业，2022年与 Marlow Robotics 合作试运行自动拖轮。",
        ),
        ExtractedEntity(
            "Marlow Robotics", "organization", "机器人公司，2022年与青石港务集团合作。"
        ),
        ExtractedEntity("青石港", "location", "2022年试运行 Tug-7 自动拖轮的港口。"),
        ExtractedEntity("Tug-7", "product", "自动拖轮，2022年在青石港试运行。"),
    ),
    (
        ExtractedRelation(
            "青石港务集团", "Marlow Robotics", "合作, 自动拖轮", "双方于2022年合作试运行自动拖轮。"
        ),
        ExtractedRelation("Tug-7", "青石港", "试运行", "Tug-7 于2022年在青石港试运行。"),
    ),
)


def extraction_messages(
    text: str, *, entity_types: Sequence[str], language: str = AUTO_LANGUAGE
) -> list[ChatMessage]:
    """The first extraction call: the rules and examples, then the passage."""
    rules = _EXTRACTION_RULES.format(
        types=", ".join(entity_types),
        delimiter=TUPLE_DELIMITER,
        complete=COMPLETION_MARKER,
        language=_language_rule(language, "descriptions and keywords", "the passage"),
        examples=_examples(language),
    )
    return [
        ChatMessage("system", rules),
        ChatMessage("user", f"Passage:\n{text}\n\nRecords:"),
    ]


def gleaning_messages(
    extraction: Sequence[ChatMessage],
    entities: Sequence[ExtractedEntity],
    relations: Sequence[ExtractedRelation],
) -> list[ChatMessage]:
    """A gleaning call: the extraction prompt unchanged (so a server's prefix cache serves
    it), every record found so far once, as the model's turn, and the request for what it
    missed. A second round sends the merged records, not the whole conversation again."""
    return [
        *extraction,
        ChatMessage("assistant", format_records(entities, relations)),
        ChatMessage("user", _GLEANING.format(complete=COMPLETION_MARKER)),
    ]


def summary_messages(
    name_or_pair: str | tuple[str, str],
    descriptions: Sequence[str],
    max_tokens: int,
    language: str = AUTO_LANGUAGE,
) -> list[ChatMessage]:
    """Merge descriptions of an entity (a name) or a relation (a pair of names) into one.

    Map-reduce friendly: the descriptions may themselves be partial summaries, and the same
    prompt merges them again.
    """
    if isinstance(name_or_pair, str):
        kind, short, subject = "one entity", "the entity", f"Entity: {name_or_pair}"
    else:
        first, second = name_or_pair
        kind, short = "the relation between two entities", "both entities"
        subject = f"Relation between: {first} and {second}"
    rules = _SUMMARY_RULES.format(
        subject_kind=kind,
        subject_kind_short=short,
        max_tokens=max_tokens,
        language=_language_rule(language, "the description", "the descriptions"),
    )
    listed = "\n".join(f"- {' '.join(text.split())}" for text in descriptions)
    return [
        ChatMessage("system", rules),
        ChatMessage("user", f"{subject}\n\nDescriptions:\n{listed}\n\nMerged description:"),
    ]


def _language_rule(language: str, what: str, source: str) -> str:
    if language.strip().lower() == AUTO_LANGUAGE:
        return (
            f"write {what} in the language of {source} (so Chinese text gets Chinese); "
            "keep names as written."
        )
    return f"write {what} in {language}; keep names as written."


def _examples(language: str) -> str:
    """Both examples when the language follows the text (they show that), else English only."""
    english = format_records(*_EXAMPLE_EN_RECORDS)
    examples = f"Example 1\nPassage:\n{_EXAMPLE_EN}\nRecords:\n{english}"
    if language.strip().lower() == AUTO_LANGUAGE:
        chinese = format_records(*_EXAMPLE_ZH_RECORDS)
        examples += f"\n\nExample 2\nPassage:\n{_EXAMPLE_ZH}\nRecords:\n{chinese}"
    return examples
