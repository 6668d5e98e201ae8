"""What the grouping of entity keys knows about one key with live mentions."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Member:
    """What the grouping needs to know about one entity key with live mentions."""

    mentions: int
    """Chunks that mention it."""
    type: str
    """Its voted type."""
    name: str
    """Its voted display name."""

    @property
    def full(self) -> bool:
        """A name of several words ("Ingrid Halvorsen"), not a name used alone."""
        return len(self.name.split()) > 1
