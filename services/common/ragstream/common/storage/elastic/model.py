"""Which embedding model an index holds, and the error for starting with another one.

The vector indices carry the model's fingerprint in their names (behind stable aliases) and
its name and size in their `_meta`, so vectors of two models are never mixed: a process
configured with another model refuses to start and names the command that rebuilds.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Protocol

from ragstream.common.config import ConfigError

REINDEX_COMMAND = "ragstream reindex"


class EmbeddingModel(Protocol):
    """The part of an Embedder that identifies its vector space."""

    @property
    def name(self) -> str: ...

    @property
    def dimensions(self) -> int: ...


class ModelMismatchError(ConfigError):
    """The indices hold vectors of another embedding model than the configured one (a
    ConfigError: the commands report it as a setting to fix, without a traceback)."""


@dataclass(frozen=True, slots=True)
class ModelFingerprint:
    """An embedding model's identity: its name and vector size."""

    name: str
    dimensions: int

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("an embedding model fingerprint needs the model's name")
        if self.dimensions < 1:
            raise ValueError(
                f"embedding model {self.name!r}: vector size must be known (got {self.dimensions})"
            )

    @classmethod
    def of(cls, model: EmbeddingModel) -> ModelFingerprint:
        return cls(model.name, model.dimensions)

    @property
    def slug(self) -> str:
        """Lowercase, index-name-safe, unique per (name, dimensions).

        The readable part may collide after lowercasing and truncation; the digest of the
        exact name and size does not.
        """
        readable = re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")[:40].strip("-")
        digest = hashlib.sha256(f"{self.name}\x00{self.dimensions}".encode()).hexdigest()[:8]
        return f"{readable or 'model'}-{self.dimensions}d-{digest}"

    def meta(self) -> dict[str, Any]:
        """The index `_meta` entry that records the model."""
        return {"embedding_model": self.name, "embedding_dimensions": self.dimensions}

    @classmethod
    def from_meta(cls, meta: dict[str, Any] | None) -> ModelFingerprint | None:
        if not meta or "embedding_model" not in meta:
            return None
        return cls(str(meta["embedding_model"]), int(meta["embedding_dimensions"]))

    def __str__(self) -> str:
        return f"{self.name} ({self.dimensions}-d)"


def mismatch(
    held: ModelFingerprint, configured: ModelFingerprint, where: str
) -> ModelMismatchError:
    return ModelMismatchError(
        f"{where} holds vectors of embedding model {held}, but this process is configured "
        f"with {configured}. Vectors of different models cannot be compared: rebuild the "
        f"indices for the configured model with `{REINDEX_COMMAND}` (it re-embeds into new "
        "indices and switches the aliases when done), or configure the model the index holds."
    )
