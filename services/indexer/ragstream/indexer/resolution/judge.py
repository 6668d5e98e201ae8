"""The LLM's verdict on candidate pairs of names: one thing or two.

Pairs go in batches (`check_batch` to a prompt), named with their types and nothing else, so
a verdict is a function of the pair alone. Each pair's verdict is kept in the LLM cache
under its own key, whatever batch asked it: the same pair is never asked twice, and a replay
or another order of the same events finds the same verdicts. A pair the reply leaves out, or
a reply that is no JSON object, gets no verdict (the pair stays apart) and is asked again at
the next merge of either key.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Sequence

from ragstream.common.providers.llm import ChatMessage
from ragstream.common.providers.reply_json import json_object
from ragstream.common.storage.protocols import CacheStore
from ragstream.indexer.resolution.checked import Verdict
from ragstream.indexer.resolution.names import Candidate
from ragstream.indexer.stages.extract.llm_calls import CachedChat

log = logging.getLogger(__name__)
PROMPT_VERSION = 1
SYSTEM = (
    "You decide whether two names refer to one and the same real-world thing (one "
    "organization, person, place, product, event or concept). Use the names, their types "
    "and general knowledge. A short form, an acronym, a former or translated name, a legal "
    "suffix or a spelling variant of the same thing is the same thing. Things with similar "
    "names are different: two numbered routes, two editions of an event, a region and the "
    "country it belongs to, a company and its founder, a parent and a child of one name. "
    "When unsure, answer false.\n"
    'Reply with one JSON object mapping each pair\'s number to true or false, e.g. {"1": '
    'true, "2": false}, and nothing else.'
)
SAME, DIFFERENT = "same", "different"


class SameAsJudge:
    def __init__(self, chat: CachedChat, cache: CacheStore, model: str, batch: int) -> None:
        self._chat = chat
        self._cache = cache
        self._model = model
        self._batch = batch

    async def verdicts(self, pairs: Sequence[Candidate]) -> list[Verdict]:
        """The verdict of every pair that has one: from the cache, else from the LLM."""
        keys = [self._key(p) for p in pairs]
        known = [_read(v) for v in await asyncio.gather(*(self._cache.get(k) for k in keys))]
        asked = [p for p, same in zip(pairs, known, strict=True) if same is None]
        batches = [asked[i : i + self._batch] for i in range(0, len(asked), self._batch)]
        answered: dict[tuple[str, str], bool] = {}
        for found in await asyncio.gather(*(self._ask(b) for b in batches)):
            answered.update(found)
        result: list[Verdict] = []
        for pair, key, cached in zip(pairs, keys, known, strict=True):
            same = cached if cached is not None else answered.get(_ids(pair))
            if same is None:
                continue
            if cached is None:
                await self._cache.put(key, SAME if same else DIFFERENT)
            result.append(Verdict(pair.a.key, pair.b.key, same, pair.score))
        return result

    async def _ask(self, batch: Sequence[Candidate]) -> dict[tuple[str, str], bool]:
        messages = [ChatMessage("system", SYSTEM), ChatMessage("user", prompt(batch))]
        reply = await self._chat.ask(messages)
        found = parse(reply.text, len(batch))
        if found:
            await self._chat.remember(reply)
        if len(found) < len(batch):
            log.warning(
                "the LLM answered %d of the %d pairs put to it (%r...): the others stay apart "
                "and are asked again at their next merge",
                len(found), len(batch), reply.text[:80],
            )  # fmt: skip
        return {_ids(batch[i]): same for i, same in found.items()}

    def _key(self, pair: Candidate) -> str:
        """The pair's own cache key: model, prompt version, both names and types."""
        named = [pair.a.name, pair.a.type, pair.b.name, pair.b.type]
        payload = json.dumps([self._model, PROMPT_VERSION, named], ensure_ascii=False)
        return "same-as:" + hashlib.sha256(payload.encode()).hexdigest()


def prompt(batch: Sequence[Candidate]) -> str:
    lines = [
        f"{i}. {json.dumps(p.a.name, ensure_ascii=False)} ({p.a.type}) | "
        f"{json.dumps(p.b.name, ensure_ascii=False)} ({p.b.type})"
        for i, p in enumerate(batch, start=1)
    ]
    return "Pairs:\n" + "\n".join(lines)


def parse(text: str, size: int) -> dict[int, bool]:
    """Pair index (0-based) -> verdict, for the pairs the reply answers with a boolean;
    tolerant of code fences, prose around the object and trailing commas."""
    data = json_object(text)
    if data is None:
        return {}
    found: dict[int, bool] = {}
    for number, same in data.items():
        index = int(number) - 1 if str(number).strip().isdigit() else -1
        if 0 <= index < size and isinstance(same, bool):
            found[index] = same
    return found


def _read(cached: str | None) -> bool | None:
    """A cached verdict: True (same), False (different), None (none yet)."""
    return {SAME: True, DIFFERENT: False}.get(cached or "")


def _ids(pair: Candidate) -> tuple[str, str]:
    return pair.a.key, pair.b.key
