"""When a gleaning call pays: the signs that an extraction reply is incomplete (pure).

Gleaning asks the model again for what it missed. Sent after every chunk it doubles the
extraction calls, and most replies are complete, so the `adaptive` policy sends it only when
the reply shows one of these signs:

- no completion marker: the model stopped before the end of its own format;
- cut at the output limit (finish_reason "length");
- far fewer entities than the passage has candidate names: fewer than one for every
  FAR_FEWER capitalized names a cheap pass finds in the chunk. The pass counts distinct runs
  of capitalized words (a sentence-initial stopword dropped), a generous count next to what
  a model records, hence the wide margin. Text without Latin capitals (Chinese) yields no
  candidates, so there only the first two signs apply.

`always` gleans after every reply that still found something (LightRAG's behaviour), `never`
not at all.
"""

from __future__ import annotations

import re
from typing import Literal

from ragstream.common.text.analyzer import ENGLISH_STOPWORDS

GleaningPolicy = Literal["always", "adaptive", "never"]
FAR_FEWER = 4
"""A reply with fewer than one entity per this many candidate names looks incomplete."""

_CONNECTOR = r"(?:of|de|del|der|di|da|du|la|le|van|von|y|and|&)"
_RUN = re.compile(rf"(?<![\w'’-])[A-Z][\w'’-]*(?:(?: {_CONNECTOR})? [A-Z0-9][\w'’.-]*(?<![.]))*")
_SENTENCE_START = re.compile(r"[.!?][\"'”’)\]]*\s+|\n\s*")


def candidate_names(text: str) -> int:
    """Distinct runs of capitalized words in `text`, a cheap count of the names it holds."""
    starts = {0} | {match.end() for match in _SENTENCE_START.finditer(text)}
    found: set[str] = set()
    for match in _RUN.finditer(text):
        name = match.group()
        if match.start() in starts:
            first, _, rest = name.partition(" ")
            if first.lower() in ENGLISH_STOPWORDS:
                name = rest
        if name:
            found.add(name)
    return len(found)


def looks_incomplete(complete: bool, cut: bool, entities: int, candidates: int) -> bool:
    """True when a reply shows a sign of missing records (see the module docstring)."""
    return not complete or cut or entities * FAR_FEWER < candidates
