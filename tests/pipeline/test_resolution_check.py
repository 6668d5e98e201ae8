"""The LLM check of near names end to end, on the embedded stores with the OpenAI-compatible
test server as LLM: pairs no rule joins are joined by the LLM's verdict, kept in the cache,
whatever the order of the events, and split again when a side is deleted."""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path
from typing import Any

from ragstream.common.events import DocumentChange
from ragstream.indexer.resolution.judge import SYSTEM
from ragstream.indexer.stages.extract.parser import COMPLETION_MARKER, TUPLE_DELIMITER
from ragstream.testing.openai_server import OpenAITestServer
from tests.support.pipeline import embedded_settings, running_pipeline
from tests.support.scripted_llm import passage_of

WS = "kg"
NAMES = (
    "International Business Machines", "Big Blue", "Lenovo", "Armonk", "Zurich",
    "Kestrel Polymers", "Kestrel Airlines", "Kestrel", "Bergen",
)  # fmt: skip
SAME = {
    frozenset({"Big Blue", "International Business Machines"}),
    frozenset({"Kestrel", "Kestrel Polymers"}),
    frozenset({"Kestrel", "Kestrel Airlines"}),
}
DOCS = {
    "a": "International Business Machines builds mainframes in Armonk.",
    "b": "Big Blue sold its PC division to Lenovo.",
    "c": "Big Blue opened a research lab in Zurich.",
    "d": "Kestrel Polymers makes marine seals in Bergen.",
    "e": "Kestrel Airlines flies to Bergen.",
    "f": "Kestrel is based in Bergen.",
}
_PAIR = re.compile(r'^(\d+)\. ("[^"]*") \((\w+)\) \| ("[^"]*") \((\w+)\)$', re.MULTILINE)


class Scripted:
    """Extraction: the known names of the passage, typed organization; the check: true for
    the pairs of SAME. Counts the pairs the check was asked."""

    def __init__(self) -> None:
        self.asked: list[frozenset[str]] = []

    def __call__(self, messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        if messages[0].get("content") == SYSTEM:
            return self._verdicts(str(messages[-1].get("content", "")))
        if len(messages) > 2:
            return COMPLETION_MARKER
        passage, sep = passage_of(messages), TUPLE_DELIMITER
        names = [n for n in NAMES if re.search(rf"\b{re.escape(n)}\b(?! [A-Z])", passage)]
        lines = [f"entity{sep}{n}{sep}organization{sep}{n} is named here." for n in names]
        lines += [
            f"relation{sep}{a}{sep}{b}{sep}named together{sep}{a} and {b} appear together."
            for a, b in itertools.pairwise(names)
        ]
        return "\n".join([*lines, COMPLETION_MARKER])

    def _verdicts(self, prompt: str) -> str:
        answers = []
        for number, a, _, b, _ in _PAIR.findall(prompt):
            pair = frozenset({a.strip('"'), b.strip('"')})
            self.asked.append(pair)
            answers.append(f'"{number}": {"true" if pair in SAME else "false"}')
        return "{" + ", ".join(answers) + "}"


def change(doc_id: str, version: int, content: str | None) -> DocumentChange:
    if content is None:
        return DocumentChange(WS, doc_id, version, deleted=True)
    return DocumentChange(WS, doc_id, version, False, content, f"{doc_id}.md", {}, 1.0)


def settings(tmp_path: Path, base_url: str, batch: int = 1000) -> Any:
    return embedded_settings(
        tmp_path,
        llm={"provider": "openai", "model": "m", "base_url": base_url},
        # Every two names are near: the verdicts alone decide (hashed vectors are no model).
        resolution={"check_similarity": -1.0, "check_neighbours": 50},
        indexer={"merge_batch_size": batch},
        communities={"enabled": False},
    )


def groups(dump: dict[str, Any]) -> dict[str, list[str]]:
    return {key: record[6].get("members", [key]) for key, record in dump["entities"].items()}


async def test_a_pair_the_llm_calls_one_thing_joins_and_splits_when_a_side_is_deleted(
    tmp_path: Path,
) -> None:
    judge = Scripted()
    async with (
        OpenAITestServer(responder=judge) as llm,
        running_pipeline(settings(tmp_path, llm.base_url)) as pipeline,
    ):
        await pipeline.publish([change(d, 1, text) for d, text in DOCS.items()])
        await pipeline.idle()
        joined = await pipeline.dump(WS)
        asked = len(judge.asked)
        await pipeline.publish([change("a", 2, None)])
        await pipeline.idle()
        split = await pipeline.dump(WS)
        await pipeline.publish([change("a", 3, DOCS["a"])])
        await pipeline.idle()
        again = await pipeline.dump(WS)

    assert groups(joined)["big blue"] == ["big blue", "international business machines"]
    assert "international business machines" not in joined["entities"]
    assert joined["entities"]["big blue"][6]["aliases"] == ["International Business Machines"]
    assert set(joined["entities"]["big blue"][3]) == {"a", "b", "c"}
    # Kestrel is one thing with each of the two, which are two: it joins one of them only.
    kestrel = next(set(g) for g in groups(joined).values() if "kestrel" in g)
    assert len(kestrel & {"kestrel polymers", "kestrel airlines"}) == 1
    # Each pair of names was asked once, however many merges met it.
    assert len(judge.asked) == len(set(judge.asked)) == asked > 0

    assert groups(split)["big blue"] == ["big blue"]
    assert "international business machines" not in split["names"]
    assert set(split["entities"]["big blue"][3]) == {"b", "c"}
    # Back again: the same groups, and no pair asked again (the verdicts are cached).
    assert groups(again) == groups(joined)
    assert len(judge.asked) == asked
    for part in ("entities", "relations", "nodes", "edges", "names"):
        assert again[part] == joined[part], part


async def test_any_order_of_the_events_gives_the_same_groups_and_stores(tmp_path: Path) -> None:
    events = [
        *(change(d, 1, text) for d, text in DOCS.items()),
        change("a", 2, None),
        change("g", 1, "Big Blue moved its headquarters to Armonk."),
        change("a", 3, DOCS["a"] + " Lenovo bought a division."),
        change("e", 2, None),
    ]
    final = {e.doc_id: e for e in sorted(events, key=lambda e: e.version)}
    runs = []
    rng = random.Random(5)
    async with OpenAITestServer(responder=Scripted()) as llm:
        for run in range(3):
            order = list(events)
            rng.shuffle(order)  # a stale version arriving late is skipped
            dump_dir = tmp_path / str(run)
            async with running_pipeline(settings(dump_dir, llm.base_url, 1 + 3 * run)) as p:
                for start in range(0, len(order), 2):
                    await p.publish(order[start : start + 2])
                await p.idle()
                runs.append(await p.dump(WS))
        async with running_pipeline(settings(tmp_path / "final", llm.base_url, 7)) as p:
            await p.publish([e for e in final.values() if not e.deleted])
            await p.idle()
            runs.append(await p.dump(WS))
    first = runs[0]
    assert groups(first)["big blue"] == ["big blue", "international business machines"]
    # Kestrel Airlines is deleted: Kestrel joins the one left that it is one thing with.
    assert groups(first)["kestrel"] == ["kestrel", "kestrel polymers"]
    for other in runs[1:]:
        assert groups(other) == groups(first)
        for part in ("entities", "relations", "nodes", "edges", "mentions", "names"):
            assert other[part] == first[part], part


async def test_a_name_that_becomes_a_hub_leaves_its_group_and_comes_back(tmp_path: Path) -> None:
    """Every two names are near; at four neighbours a name is a hub. Two more names make
    every name a hub, so Kestrel leaves Kestrel Polymers though neither was merged again;
    deleting them joins the two again, as a fresh index of what is left has them."""
    base = [change("d", 1, DOCS["d"]), change("f", 1, DOCS["f"])]
    crowd = change("x", 1, "Lenovo opened an office in Zurich.")

    def hubs(path: Path, base_url: str) -> Any:
        found = settings(path, base_url)
        return found.model_copy(
            update={"resolution": found.resolution.model_copy(update={"check_neighbours": 4})}
        )

    async with OpenAITestServer(responder=Scripted()) as llm:
        async with running_pipeline(hubs(tmp_path / "stream", llm.base_url)) as pipeline:
            await pipeline.publish(base)
            await pipeline.idle()
            joined = await pipeline.dump(WS)
            await pipeline.publish([crowd])
            await pipeline.idle()
            crowded = await pipeline.dump(WS)
            await pipeline.publish([change("x", 2, None)])
            await pipeline.idle()
            after = await pipeline.dump(WS)
        async with running_pipeline(hubs(tmp_path / "fresh", llm.base_url)) as pipeline:
            await pipeline.publish([*base, crowd])
            await pipeline.idle()
            fresh_crowded = await pipeline.dump(WS)
    assert groups(joined)["kestrel"] == ["kestrel", "kestrel polymers"]
    assert groups(crowded)["kestrel"] == ["kestrel"]
    assert groups(crowded)["kestrel polymers"] == ["kestrel polymers"]
    assert groups(after) == groups(joined)
    for part in ("entities", "relations", "nodes", "edges", "names"):
        assert after[part] == joined[part], part
        assert crowded[part] == fresh_crowded[part], part
