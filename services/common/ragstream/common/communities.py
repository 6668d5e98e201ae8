"""Community record types: what stage 2's community step writes and the query side reads.

A community is a set of entity keys at one level of the hierarchy (0 is the coarsest); its
report summarizes what its members' descriptions say, with findings that name the entities,
relations and chunks they rest on (GraphRAG's community report format).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Finding:
    """One key finding of a report."""

    summary: str
    """A short statement."""
    explanation: str
    """What the members' descriptions say in support of it."""
    entities: tuple[str, ...] = ()
    """Entity keys it rests on."""
    relations: tuple[str, ...] = ()
    """Relation keys it rests on."""
    chunks: tuple[str, ...] = ()
    """Chunk ids it rests on."""


@dataclass(frozen=True, slots=True)
class Report:
    """A community's report; rewritten only when `content_key` no longer matches."""

    title: str
    summary: str
    findings: tuple[Finding, ...]
    rating: float
    """Importance, 0 to 10 (GraphRAG's impact severity rating)."""
    rating_explanation: str
    content_key: str
    """The community content the report was written from (see `content_key`)."""
    writer: str
    """"extractive", or the LLM model that wrote it."""


@dataclass(frozen=True, slots=True)
class CommunityRecord:
    """One community of one workspace's partition."""

    workspace: str
    id: str
    """Stable while the community's membership mostly persists."""
    level: int
    """0 is the top (coarsest) level; level k+1 splits a level-k community."""
    parent: str
    """The community one level up; "" at level 0."""
    members: tuple[str, ...]
    """Entity keys, sorted."""
    report: Report | None = None
    """None until a report is written for the current members."""


def report_fields(report: Report | None) -> dict[str, Any] | None:
    """The report as plain JSON values, as both data backends store it."""
    return None if report is None else dataclasses.asdict(report)


def report_of(values: Mapping[str, Any] | None) -> Report | None:
    if values is None:
        return None
    findings = tuple(
        Finding(
            f["summary"],
            f["explanation"],
            tuple(f["entities"]),
            tuple(f["relations"]),
            tuple(f["chunks"]),
        )
        for f in values["findings"]
    )
    return Report(
        values["title"], values["summary"], findings, float(values["rating"]),
        values["rating_explanation"], values["content_key"], values["writer"],
    )  # fmt: skip
