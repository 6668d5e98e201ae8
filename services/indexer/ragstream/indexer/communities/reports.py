"""What a community's report is made from, the key that says when to rewrite it, the offline
(extractive) report, and the report's search record. Pure functions."""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragstream.common.communities import Finding, Report
from ragstream.common.derive import FRAGMENT_SEPARATOR
from ragstream.common.models import GraphEdge, GraphNode, SearchRecord
from ragstream.common.text.analyzer import analyze

MAX_FINDINGS = 5
MAX_EXPLANATION_CHARS = 400
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


@dataclass(frozen=True, slots=True)
class CommunityContent:
    """A community's members as the graph store holds them, each list sorted by key."""

    id: str
    level: int
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    """The relations with both ends in the community."""

    @classmethod
    def of(
        cls, id_: str, level: int, nodes: Sequence[GraphNode], edges: Sequence[GraphEdge]
    ) -> CommunityContent:
        return cls(
            id_, level, tuple(sorted(nodes, key=lambda n: n.key)),
            tuple(sorted(edges, key=lambda e: (e.source, e.target))),
        )  # fmt: skip

    def degrees(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for edge in self.edges:
            counts[edge.source] += 1
            counts[edge.target] += 1
        return counts

    def ranked_nodes(self) -> list[GraphNode]:
        """Most connected inside the community first, ties by key."""
        degree = self.degrees()
        return sorted(self.nodes, key=lambda n: (-degree[n.key], n.key))

    def ranked_edges(self) -> list[GraphEdge]:
        return sorted(self.edges, key=lambda e: (-e.weight, e.source, e.target))


def content_key(content: CommunityContent) -> str:
    """sha256 over the members' names, types and descriptions and the inner relations'
    descriptions and weights, in key order: the same content gives the same key whatever
    order it was made in, so a report is rewritten only when what it summarizes changed.
    A description's fragments (lines) count as a set: stage 2 joins them in chunk-id order,
    so an edit elsewhere in a document, which renames its chunks, reorders them."""
    lines = [f"E\t{n.key}\t{n.name}\t{n.type}\t{_fragments(n.description)}" for n in content.nodes]
    lines += [f"R\t{e.key}\t{e.weight:g}\t{_fragments(e.description)}" for e in content.edges]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _fragments(description: str) -> str:
    return "\x1f".join(sorted(set(description.split(FRAGMENT_SEPARATOR))))


def extractive_report(content: CommunityContent) -> Report:
    """The offline report: invents nothing. The title names the three best-connected
    members; the summary counts the members by type and quotes the first sentence of the
    best-connected one; the findings are the heaviest inner relations (then, if too few,
    the best-connected entities), each with what the graph says of it and its chunks, and
    no two quoting the same text. A community none of whose members the graph holds (read
    while stage 2 re-points a merged entity's relations) has its id for a title: its report
    is rewritten once its members are written, as their keys change its content."""
    ranked = content.ranked_nodes()
    names = [n.name for n in ranked[:3]]
    title = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)
    types = Counter(n.type or "entity" for n in content.nodes)
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(types.items()))
    lead = first_sentence(ranked[0].description) if ranked else ""
    summary = f"{len(content.nodes)} entities ({kinds}) joined by {len(content.edges)} relations."
    candidates = [_relation_finding(e, content) for e in content.ranked_edges()]
    candidates += [
        Finding(node.name, _clip(node.description), (node.key,), (), node.source_ids[:5])
        for node in ranked
    ]
    findings = _distinct(candidates)[:MAX_FINDINGS]
    weight = sum(e.weight for e in content.edges)
    rating = min(10.0, round(1.0 + math.log2(1 + len(content.nodes)) + math.log10(1 + weight), 1))
    return Report(
        title=title or content.id,
        summary=f"{summary} {lead}".strip(),
        findings=tuple(findings),
        rating=rating,
        rating_explanation="From the community's size and the weight of its relations.",
        content_key=content_key(content),
        writer="extractive",
    )


def _distinct(findings: Sequence[Finding]) -> list[Finding]:
    """The findings in order, each explanation once: offline, a relation's description is
    the sentence that names both ends, so the relations among the names of one sentence
    would all quote it."""
    seen: set[str] = set()
    kept = []
    for finding in findings:
        if finding.explanation not in seen:
            seen.add(finding.explanation)
            kept.append(finding)
    return kept


def _relation_finding(edge: GraphEdge, content: CommunityContent) -> Finding:
    names = {n.key: n.name for n in content.nodes}
    label = f"{names.get(edge.source, edge.source)} and {names.get(edge.target, edge.target)}"
    return Finding(
        label, _clip(edge.description), (edge.source, edge.target), (edge.key,),
        edge.source_ids[:5],
    )  # fmt: skip


def first_sentence(text: str) -> str:
    return _clip(_SENTENCE_END.split(text.strip(), maxsplit=1)[0]) if text.strip() else ""


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_EXPLANATION_CHARS else text[: MAX_EXPLANATION_CHARS - 1] + "…"


def report_text(report: Report) -> str:
    """What a report's search record holds and is embedded from."""
    lines = [report.title, report.summary]
    lines += [f"- {f.summary}: {f.explanation}" for f in report.findings]
    return "\n".join(lines)


def report_record(
    workspace: str, content: CommunityContent, report: Report, parent: str
) -> SearchRecord:
    """The report's search record (collection `communities`), without its vector."""
    text = report_text(report)
    doc_ids = sorted({d for n in content.nodes for d in n.doc_ids})
    return SearchRecord(
        id=content.id, workspace=workspace, text=text, terms=tuple(analyze(text)),
        vector=np.zeros(0, dtype=np.float32), doc_ids=tuple(doc_ids),
        attrs={
            "title": report.title, "level": content.level, "parent": parent,
            "rating": report.rating, "members": len(content.nodes),
        },
    )  # fmt: skip
