"""A scripted extraction model for the OpenAI-compatible test server: instant and plausible.

It answers an extraction prompt with the capitalized names of the passage, at most
MAX_RECORDS entities and MAX_RECORDS relations (pairs named next to each other in one
sentence), as a model with a bounded answer would; a gleaning prompt with the names it left
out (again at most MAX_RECORDS); a summary prompt with one sentence naming the subject; a
community report prompt with a report (GraphRAG's JSON) on its first entities and relation;
the check of near names with "different" for every pair, as a cautious model would.
Every reply ends with the completion marker, so the output looks complete and only a
passage with more names than one answer holds leaves something for gleaning.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from ragstream.indexer.resolution.judge import SYSTEM as CHECK_SYSTEM
from ragstream.indexer.stages.extract.parser import COMPLETION_MARKER, TUPLE_DELIMITER

MAX_RECORDS = 30
_NAME = re.compile(r"\b[A-Z][a-z]+(?: (?:of |de |von )?[A-Z][a-z]+)*\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_SKIP = frozenset({"The", "A", "An", "In", "On", "At", "It", "He", "She", "They", "His", "Her"})


def kind(messages: list[dict[str, Any]]) -> str:
    """extraction, gleaning (a follow-up turn on the same passage), summary, report or
    check."""
    if messages[0].get("content") == CHECK_SYSTEM:
        return "check"
    if "merge descriptions" in str(messages[0].get("content", "")):
        return "summary"
    if "report of a community" in str(messages[-1].get("content", "")):
        return "report"
    return "gleaning" if len(messages) > 2 else "extraction"


def passage_of(messages: list[dict[str, Any]]) -> str:
    return str(messages[1].get("content", "")).split("Passage:", 1)[-1]


def names_by_sentence(passage: str) -> list[list[str]]:
    found = []
    for sentence in _SENTENCE.split(passage):
        names = [n for n in dict.fromkeys(_NAME.findall(sentence)) if n not in _SKIP]
        found.append(names)
    return found


def records(sentences: list[list[str]], skip: set[str]) -> str:
    """Entity and relation lines for the names not in `skip`, then the marker."""
    names = [n for n in dict.fromkeys(itertools.chain(*sentences)) if n not in skip]
    chosen = set(names[:MAX_RECORDS])
    sep = TUPLE_DELIMITER
    lines = [f"entity{sep}{n}{sep}concept{sep}{n} is named in the passage." for n in names]
    lines = lines[:MAX_RECORDS]
    pairs = [
        (a, b)
        for names_of_sentence in sentences
        for a, b in itertools.pairwise(n for n in names_of_sentence if n in chosen)
    ]
    lines += [
        f"relation{sep}{a}{sep}{b}{sep}named together{sep}{a} and {b} appear in one sentence."
        for a, b in list(dict.fromkeys(pairs))[:MAX_RECORDS]
    ]
    return "\n".join([*lines, COMPLETION_MARKER])


def report(messages: list[dict[str, Any]]) -> str:
    """A community report on the prompt's first three entities and its first relation."""
    tables = str(messages[-1].get("content", "")).split("Entities\n", 1)[-1]
    entities, _, relations = tables.partition("Relationships\n")
    names = [row.split(",")[1] for row in entities.splitlines()[1:4] if row.count(",") >= 2]
    finding = {
        "summary": f"{names[0] if names else 'The community'} is central",
        "explanation": "It has the most relations in the community.",
        "entities": [0],
        "relationships": [0] if relations.strip().count("\n") >= 1 else [],
    }
    return json.dumps({
        "title": " and ".join(names) or "A community", "summary": "; ".join(names),
        "rating": 5.0, "rating_explanation": "Scripted.", "findings": [finding],
    })  # fmt: skip


def check(messages: list[dict[str, Any]]) -> str:
    """Every pair of the check's prompt called two things."""
    pairs = re.findall(r"^(\d+)\. ", str(messages[-1].get("content", "")), re.MULTILINE)
    return json.dumps(dict.fromkeys(pairs, False))


def respond(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    if kind(messages) == "check":
        return check(messages)
    if kind(messages) == "report":
        return report(messages)
    if kind(messages) == "summary":
        subject = str(messages[-1].get("content", "")).split("\n", 1)[0]
        return f"{subject.split(':', 1)[-1].strip()} is described in several passages."
    sentences = names_by_sentence(passage_of(messages))
    if kind(messages) == "extraction":
        return records(sentences, set())
    said = " ".join(str(m.get("content", "")) for m in messages[2:])
    return records(sentences, {n for n in itertools.chain(*sentences) if n in said})
