"""Index names, aliases and templates, and creating or checking the indices at startup.

Every role has an alias `<prefix>-<role>`. Behind it:
- chunks, entities, relations: `<prefix>-<role>-<model slug>-g<generation>`, one per
  embedding model and rebuild, so `ragstream reindex` builds the next generation beside
  the live one and then moves the aliases in one atomic request;
- documents, mentions, llm-cache, community-records (no vectors): `<prefix>-<role>-v1`.
A search store resolves the vector aliases at startup and then reads and writes the indices
of its own model, following the aliases when a rebuild moves them to indices of that same
model (follow.py): a process never mixes two models' vectors, and one still running the old
model after a rebuild for another keeps serving the old indices (kept, write-blocked) until
it is restarted. Each role has an index template (`<prefix>-<role>-*`), so an index created
by hand or by another version of this code still gets the right mappings. Templates of a
longer prefix get a higher priority: `ragstream` and `ragstream-x` never clash as
same-priority overlaps.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from elasticsearch import AsyncElasticsearch, BadRequestError, NotFoundError

from ragstream.common.models import Collection
from ragstream.common.storage.elastic import mappings
from ragstream.common.storage.elastic.model import ModelFingerprint, mismatch

TEMPLATE_VERSION: Final = 1
# The community records' role is not "communities": that is the search collection of the
# reports, whose alias and index pattern (`<prefix>-communities-*`) it would share.
PLAIN_ROLES: Final = ("documents", "mentions", "llm-cache", "community-records")
_PLAIN_MAPPINGS: Final[Mapping[str, dict[str, Any]]] = {
    "documents": mappings.DOCUMENTS_MAPPINGS,
    "mentions": mappings.MENTIONS_MAPPINGS,
    "llm-cache": mappings.CACHE_MAPPINGS,
    "community-records": mappings.COMMUNITIES_MAPPINGS,
}


@dataclass(frozen=True, slots=True)
class IndexLayout:
    prefix: str

    def alias(self, role: str) -> str:
        return f"{self.prefix}-{role}"

    def pattern(self, role: str) -> str:
        return f"{self.prefix}-{role}-*"

    def vector_index(self, collection: Collection, model: ModelFingerprint, generation: int) -> str:
        return f"{self.prefix}-{Collection(collection).value}-{model.slug}-g{generation}"

    def plain_index(self, role: str) -> str:
        return f"{self.prefix}-{role}-v1"

    def generation_of(self, index: str, collection: Collection) -> int:
        match = re.search(r"-g(\d+)$", index)
        if not index.startswith(f"{self.prefix}-{collection.value}-") or match is None:
            raise ValueError(f"{index!r} is not a {collection.value} index of {self.prefix!r}")
        return int(match.group(1))


async def ensure_templates(client: AsyncElasticsearch, layout: IndexLayout) -> None:
    """Puts (or overwrites with the same content) the index template of every role."""
    roles: list[tuple[str, dict[str, Any]]] = [
        (c.value, mappings.search_mappings(None)) for c in Collection
    ]
    roles += [(role, _PLAIN_MAPPINGS[role]) for role in PLAIN_ROLES]
    for role, role_mappings in roles:
        await client.indices.put_index_template(
            name=layout.alias(role),
            index_patterns=[layout.pattern(role)],
            priority=100 + len(layout.prefix),
            version=TEMPLATE_VERSION,
            template={"settings": mappings.SETTINGS, "mappings": role_mappings},
            meta={"owner": "ragstream", "role": role},
        )


async def alias_targets(client: AsyncElasticsearch, alias: str) -> list[str]:
    """The indices behind an alias ([] when the alias does not exist)."""
    try:
        found = await client.indices.get_alias(name=alias)
    except NotFoundError:
        return []
    return sorted(found.body)


async def index_model(client: AsyncElasticsearch, index: str) -> ModelFingerprint | None:
    found = await client.indices.get_mapping(index=index)
    return ModelFingerprint.from_meta(found.body[index]["mappings"].get("_meta"))


async def create_index(
    client: AsyncElasticsearch, index: str, mappings_: dict[str, Any], alias: str | None
) -> bool:
    """Creates the index (with the alias when given); False if it already existed."""
    try:
        await client.indices.create(
            index=index,
            mappings=mappings_,
            aliases={alias: {}} if alias else None,
            wait_for_active_shards="1",
        )
    except BadRequestError as error:
        if error.error == "resource_already_exists_exception":
            return False
        raise
    return True


async def ensure_plain_index(client: AsyncElasticsearch, layout: IndexLayout, role: str) -> str:
    """The role's alias, created with its first index if missing."""
    alias = layout.alias(role)
    if not await alias_targets(client, alias):
        await create_index(client, layout.plain_index(role), _PLAIN_MAPPINGS[role], alias)
    return alias


async def ensure_vector_indices(
    client: AsyncElasticsearch, layout: IndexLayout, model: ModelFingerprint
) -> dict[Collection, str]:
    """Each collection's index behind its alias; created for `model` when missing.

    Raises ModelMismatchError when an alias points to an index of another model, or to no
    model at all (an index made outside ragstream).
    """
    found: dict[Collection, str] = {}
    for collection in Collection:
        alias = layout.alias(collection.value)
        targets = await alias_targets(client, alias)
        if not targets:
            index = layout.vector_index(collection, model, 1)
            if await create_index(client, index, mappings.search_mappings(model), alias):
                found[collection] = index
                continue
            targets = await alias_targets(client, alias)
        if len(targets) != 1:
            raise RuntimeError(
                f"alias {alias!r} must point to exactly one index, it points to {targets}: "
                "an interrupted alias change? Point it at one index with the aliases API."
            )
        held = await index_model(client, targets[0])
        if held is None:
            raise RuntimeError(f"index {targets[0]!r} (alias {alias!r}) records no embedding model")
        if held != model:
            raise mismatch(held, model, f"Elasticsearch index {targets[0]!r} (alias {alias!r})")
        found[collection] = targets[0]
    return found
