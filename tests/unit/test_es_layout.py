"""Every Elasticsearch role has an alias and index pattern of its own: a store must never
read another role's documents through a shared alias or get its mappings from another
role's template."""

from __future__ import annotations

import fnmatch

from ragstream.common.models import Collection
from ragstream.common.storage.elastic.layout import PLAIN_ROLES, IndexLayout
from ragstream.common.storage.elastic.model import ModelFingerprint

LAYOUT = IndexLayout("ragstream")
MODEL = ModelFingerprint("minilm", 384)


def indices_of(role: str) -> list[str]:
    if role in PLAIN_ROLES:
        return [LAYOUT.plain_index(role)]
    return [LAYOUT.vector_index(Collection(role), MODEL, g) for g in (1, 2)]


def test_no_two_roles_share_an_alias_or_match_each_others_indices() -> None:
    roles = [c.value for c in Collection] + list(PLAIN_ROLES)
    assert len({LAYOUT.alias(role) for role in roles}) == len(roles)
    for role in roles:
        for other in roles:
            if other != role:
                matched = [i for i in indices_of(other) if fnmatch.fnmatch(i, LAYOUT.pattern(role))]
                assert matched == [], f"{role}'s template would apply to {matched}"
