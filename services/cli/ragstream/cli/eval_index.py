"""What an evaluation index holds, so that an index is reused only for the set and the
settings it was built from.

An index is identified by a hash of the set's folder and of the settings that decide what
the index holds (`index_settings`): chunking (with the chunker's rule version), embedding
(with the name of a bundled model, which changes with its vectors) and storage, and for a
multi-hop set the extraction and LLM settings too (the graph comes from them). Query
settings are not part of it, so configurations that differ only in how they query share
one index.
"""

from __future__ import annotations

import enum
import hashlib
import json
from pathlib import Path
from typing import Any

from ragstream.common.config import ConfigError, Settings
from ragstream.common.providers.embedding import bundled_model
from ragstream.common.text.chunking import CHUNKER_VERSION

_RUNTIME = {
    "api_key", "batch_size", "batch_tokens", "batch_window_ms", "concurrency", "timeout_s",
    "max_retries",
}  # fmt: skip
"""Provider settings that change how fast an index is built, never what it holds."""


class SetKind(enum.StrEnum):
    BEIR = "beir"
    MULTIHOP = "multihop"


class IndexMismatchError(ConfigError):
    """A kept index was built from another set or other settings; the message says what to do."""


def index_settings(settings: Settings, kind: SetKind) -> dict[str, Any]:
    """The settings that decide what the index of a set holds."""
    parts: dict[str, Any] = {
        "chunking": settings.chunking.model_dump(mode="json") | {"rule": CHUNKER_VERSION},
        "embedding": settings.embedding.model_dump(mode="json", exclude=_RUNTIME)
        | {"model": bundled_model(settings.embedding.provider)},
        "storage": settings.storage.model_dump(mode="json"),
    }
    if kind is SetKind.MULTIHOP:  # the graph comes from extraction (and the LLM, if any)
        parts["extraction"] = settings.extraction.model_dump(mode="json")
        parts["llm"] = settings.llm.model_dump(mode="json", exclude=_RUNTIME)
        parts["resolution"] = settings.resolution.model_dump(mode="json")
    return parts


def index_key(settings: Settings, kind: SetKind, data_dir: Path) -> str:
    """16 hex digits naming the set at `data_dir` indexed under `settings`."""
    identity = {
        "set": str(data_dir.resolve()),
        "kind": kind.value,
        **index_settings(settings, kind),
    }
    encoded = json.dumps(identity, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()[:16]
