"""The LLM check's parts: the name index, candidate pairs of near names, the joins the verdicts
make, and the reading of the LLM's reply."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragstream.common.models import Collection
from ragstream.common.providers.embedding import HashEmbedder
from ragstream.common.providers.llm import OpenAIChat
from ragstream.common.storage.sqlite import Database, SqliteSearchStore
from ragstream.indexer.resolution.checked import Verdict, joined
from ragstream.indexer.resolution.judge import SameAsJudge, parse, prompt
from ragstream.indexer.resolution.member import Member
from ragstream.indexer.resolution.names import Candidate, Named, NameIndex, Near, candidates
from ragstream.indexer.stages.extract.llm_calls import CachedChat
from ragstream.testing.openai_server import OpenAITestServer
from tests.support.chat import MemoryCache, llm_config


@dataclass(frozen=True)
class Typed:
    type: str


def named(key: str, type_: str = "organization") -> Named:
    return Named(key, key.title(), type_)


def near(
    key: str, *others: tuple[str, float], type_: str = "organization", hub: bool = False
) -> Near:
    return Near(named(key, type_), tuple((named(o), s) for o, s in others), hub)


def test_a_pair_is_made_once_between_two_searched_keys_of_compatible_types() -> None:
    found = {
        "ibm": near("ibm", ("big blue", 0.93), ("armonk", 0.91)),
        "big blue": near("big blue", ("ibm", 0.93)),
        "armonk": near("armonk", ("ibm", 0.91), type_="location"),
    }
    pairs = candidates(found)
    assert [(p.a.key, p.b.key, p.score) for p in pairs] == [("big blue", "ibm", 0.93)]


def test_a_hub_makes_no_pair_and_a_key_not_searched_makes_none_either() -> None:
    found = {
        "route 26": near("route 26", ("route 28", 0.95), hub=True),
        "route 28": near("route 28", ("route 26", 0.95)),
        "kestrel": near("kestrel", ("kestrel airlines", 0.92)),
    }
    assert candidates(found) == []
    concept = {"x": near("x", ("y", 0.9)), "y": near("y", ("x", 0.9), type_="concept")}
    assert len(candidates(concept)) == 1  # a fallback type goes with any


def test_the_joins_hold_apart_what_a_verdict_calls_different_in_any_order() -> None:
    members = {k: Typed("organization") for k in ("kestrel", "kp", "ka", "kestrel air")}
    classes = [["kestrel"], ["kp"], ["ka", "kestrel air"]]
    verdicts = [
        Verdict("kestrel", "kp", True, 0.95),
        Verdict("kestrel", "ka", True, 0.93),
        Verdict("kp", "kestrel air", False, 0.91),
    ]
    results = {
        tuple(map(tuple, joined(classes, list(order), members, 64)))
        for order in itertools.permutations(verdicts)
    }
    # The closest pair joins first; the second join would put kp beside kestrel air.
    assert results == {(("ka", "kestrel air"), ("kestrel", "kp"))}


def test_the_joins_respect_types_and_the_size_bound() -> None:
    members = {"a": Typed("person"), "b": Typed("organization"), "c": Typed("concept")}
    same = [Verdict("a", "b", True, 0.99), Verdict("b", "c", True, 0.95)]
    assert joined([["a"], ["b"], ["c"]], same, members, 64) == [["a"], ["b", "c"]]
    assert joined([["a"], ["b"], ["c"]], same, members, 1) == [["a"], ["b"], ["c"]]


def test_the_reply_is_read_pair_by_pair_and_what_it_leaves_out_has_no_verdict() -> None:
    assert parse('```json\n{"1": true, "2": false, "3": "yes", "9": true,}\n```', 3) == {
        0: True,
        1: False,
    }
    assert parse("no idea", 2) == {}
    assert parse("[true, false]", 2) == {}


def test_the_prompt_names_each_pair_with_its_types() -> None:
    pair = Candidate(named("ibm"), Named("international business machines", 'A "B"', "org"), 0.9)
    assert prompt([pair]) == 'Pairs:\n1. "Ibm" (organization) | "A \\"B\\"" (org)'


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteSearchStore]:
    db = await Database.open(tmp_path)
    yield await SqliteSearchStore.open(db)
    await db.close()


async def test_the_name_index_keeps_the_live_names_and_tells_who_was_near_one_that_went(
    store: SqliteSearchStore,
) -> None:
    index = NameIndex(store, HashEmbedder(64), similarity=0.5, limit=3)
    org = "organization"
    live = {
        "kestrel polymers": Member(1, org, "Kestrel Polymers"),
        "kestrel polymers group": Member(1, org, "Kestrel Polymers Group"),
        "bergen": Member(1, "location", "Bergen"),
    }
    assert await index.update("ws", live, []) == set()
    near = await index.near("ws", ["kestrel polymers", "bergen", "nobody"])
    assert set(near) == {"kestrel polymers", "bergen"}
    assert [n.key for n, _ in near["kestrel polymers"].neighbours] == ["kestrel polymers group"]
    assert near["bergen"].neighbours == ()
    # A renamed key is embedded again; a key gone is deleted; both tell their old neighbours.
    renamed = {"kestrel polymers": Member(2, org, "KESTREL POLYMERS")}
    assert await index.update("ws", renamed, ["kestrel polymers group"]) == set()
    assert await index.update("ws", {}, ["kestrel polymers"]) == set()
    assert await store.count(Collection.NAMES, "ws") == 1
    # Three or more names near one: each of them is a hub and pairs with none, though its
    # neighbours are listed (the walk reaches them).
    routes = {f"route {n}": Member(1, "product", f"Route {n}") for n in (26, 28, 39, 55)}
    await index.update("ws", routes, [])
    found = await index.near("ws", list(routes))
    assert all(n.hub and len(n.neighbours) == 3 for n in found.values())
    assert candidates(found) == []
    assert await index.update("ws", {}, ["route 26"]) == {"route 28", "route 39", "route 55"}


async def test_a_pair_the_reply_leaves_out_is_asked_again_and_an_answered_one_never() -> None:
    ibm = Candidate(named("big blue"), named("international business machines"), 0.93)
    kp = Candidate(named("kestrel"), named("kestrel polymers"), 0.91)
    async with OpenAITestServer() as server:
        chat = OpenAIChat(llm_config(server))
        cache = MemoryCache()
        judge = SameAsJudge(CachedChat(chat, cache, "m", llm_config(server)), cache, "m", 20)
        server.script_replies('Sure: {"1": true}', '{"1": false}')
        first = await judge.verdicts([ibm, kp])
        second = await judge.verdicts([kp, ibm])
        third = await judge.verdicts([ibm, kp])
        await chat.close()
        prompts = [b["messages"][-1]["content"] for b in server.log.bodies["chat"]]
    assert first == [Verdict("big blue", "international business machines", True, 0.93)]
    assert sorted(second, key=lambda v: v.a) == [
        Verdict("big blue", "international business machines", True, 0.93),
        Verdict("kestrel", "kestrel polymers", False, 0.91),
    ]
    assert sorted(third, key=lambda v: v.a) == sorted(second, key=lambda v: v.a)
    # Two calls: both pairs, then the one left unanswered alone; the third asked nothing.
    assert prompts == [prompt([ibm, kp]), prompt([kp])]
