"""The CommunityStore contract: backends subclass and provide `store`, a fresh, empty store."""

from __future__ import annotations

from ragstream.common.communities import CommunityRecord, Finding, Report
from ragstream.common.storage.protocols import CommunityStore

WS = "ws-a"


def community(
    id_: str,
    members: tuple[str, ...],
    *,
    level: int = 0,
    parent: str = "",
    ws: str = WS,
    report: Report | None = None,
) -> CommunityRecord:
    return CommunityRecord(ws, id_, level, parent, tuple(sorted(members)), report)  # fmt: skip


REPORT = Report(
    title='Okafor and the "Harbor" 港口',
    summary="Mira Okafor leads the harbor works.\nSecond line \\ backslash.",
    findings=(
        Finding("Okafor leads", "Said in two chunks.", ("mira okafor",), ("a\u241eb",), ("c1",)),
        Finding("No evidence", "", (), (), ()),
    ),
    rating=7.5,
    rating_explanation="Central to the corpus.",
    content_key="k" * 64,
    writer="extractive",
)


class CommunityStoreContract:
    async def test_communities_round_trip_every_field(self, store: CommunityStore) -> None:
        top = community("c1", ("b", "a", "mira okafor"), report=REPORT)
        child = community("c2", ("a", "b"), level=1, parent="c1")
        await store.apply(WS, [top, child], [])
        assert await store.get(WS, ["c2", "missing", "c1"]) == [child, top]
        assert await store.list(WS) == [top, child]
        assert await store.list(WS, level=1) == [child]

    async def test_apply_replaces_and_deletes(self, store: CommunityStore) -> None:
        await store.apply(WS, [community("c1", ("a", "b")), community("c2", ("c", "d"))], [])
        await store.apply(WS, [community("c1", ("a", "e"), report=REPORT)], ["c2", "unknown"])
        assert await store.list(WS) == [community("c1", ("a", "e"), report=REPORT)]
        assert await store.of_entities(WS, ["a", "b", "c", "e"]) == {"a": ["c1"], "e": ["c1"]}

    async def test_an_id_both_deleted_and_upserted_is_kept(self, store: CommunityStore) -> None:
        await store.apply(WS, [community("c1", ("a",))], [])
        await store.apply(WS, [community("c1", ("b",))], ["c1"])
        assert await store.get(WS, ["c1"]) == [community("c1", ("b",))]

    async def test_of_entities_lists_the_path_top_level_first(self, store: CommunityStore) -> None:
        await store.apply(
            WS,
            [
                community("z-top", ("a", "b", "c")),
                community("m-mid", ("a", "b"), level=1, parent="z-top"),
                community("a-leaf", ("a",), level=2, parent="m-mid"),
            ],
            [],
        )
        found = await store.of_entities(WS, ["a", "c", "nobody"])
        assert found == {"a": ["z-top", "m-mid", "a-leaf"], "c": ["z-top"]}

    async def test_workspaces_are_apart(self, store: CommunityStore) -> None:
        await store.apply(WS, [community("c1", ("a",))], [])
        await store.apply("ws-b", [community("c1", ("b",), ws="ws-b")], [])
        assert await store.list("ws-b") == [community("c1", ("b",), ws="ws-b")]
        assert await store.of_entities("ws-b", ["a"]) == {}
        await store.apply("ws-b", [], ["c1"])
        assert await store.get(WS, ["c1"]) == [community("c1", ("a",))]

    async def test_a_community_of_another_workspace_is_refused(self, store: CommunityStore) -> None:
        try:
            await store.apply(WS, [community("c1", ("a",), ws="ws-b")], [])
        except ValueError as error:
            assert "workspace" in str(error)
        else:
            raise AssertionError("a community of another workspace was written")
        assert await store.list(WS) == []

    async def test_empty_calls_read_and_write_nothing(self, store: CommunityStore) -> None:
        await store.apply(WS, [], [])
        assert await store.get(WS, []) == []
        assert await store.of_entities(WS, []) == {}
        assert await store.list(WS) == []

    async def test_many_communities_are_listed_in_full(self, store: CommunityStore) -> None:
        many = [community(f"c{i:04d}", (f"e{i}", f"f{i}")) for i in range(1500)]
        await store.apply(WS, many, [])
        assert await store.list(WS) == many
        assert len(await store.of_entities(WS, [f"e{i}" for i in range(1500)])) == 1500
