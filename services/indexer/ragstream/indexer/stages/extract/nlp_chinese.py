"""Proper names in Chinese text, from jieba's part-of-speech tags plus a few rules.

- nr (person): adjacent name tokens are joined (jieba splits 周明哲 into 周 + 明哲), and the
  result must be two to four ideographs starting with a common surname, which rejects
  jieba's many false nr tags.
- ns (place), nt (organization), nz (other proper noun) are kept as tagged, except everyday
  words jieba's dictionary tags ns (海洋, 密封, ...).
- Organizations: a noun phrase ending in an organization word (研究所, 实验室, 有限公司, ...)
  is taken back to the last function word, job title or punctuation before it; legal
  suffixes are dropped (青澜海洋装备有限公司 becomes 青澜海洋装备).
- A noun phrase directly followed by a Latin name in parentheses is a name too, by the same
  walk back: 东屿海上风电（Dongyu Offshore Wind）.
- Nouns of three or more ideographs that the chunk uses three times or more are concepts
  (传感器, 密封圈).
"""

from __future__ import annotations

import logging
import re
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragstream.common.text.analyzer import CHINESE_STOPWORDS
from ragstream.indexer.stages.extract import nlp_lexicon as lex
from ragstream.indexer.stages.extract.nlp_spans import Span

_HAN_RUN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
# A Latin name in parentheses, optionally with its short form: （East China Sea ...，简称 ESIOS）.
_LATIN_PAREN = re.compile(
    r"\s*[（(]\s*[A-Za-z][^（）()\u3400-\u9fff]*"
    r"(?:[，,]\s*(?:简称|下称|又称)\s*[^（）()\u3400-\u9fff]*)?[）)]"
)
_NAME_PARTS = frozenset(
    ["n", "nr", "ns", "nt", "nz", "ng", "s", "j", "vn", "v", "b", "an", "l", "nrt", "nrfg"]
)
"""Tags a multi-token name may contain ("东海/ns 海洋/ns 感知/v 研究所/n")."""
_NOT_FIRST = frozenset(["v", "vn", "b", "an", "l", "a", "d"])
"""Tags a name never starts with: "已收到东屿海上风电" starts at 东屿."""
_MAX_NAME_TOKENS = 5
"""Tokens of a walked-back name, its last word included (东海/智能/观测/联合/实验室)."""


@dataclass(frozen=True, slots=True)
class HanToken:
    word: str
    flag: str
    start: int
    end: int


def han_tokens(sentence: str) -> list[HanToken]:
    """jieba part-of-speech tokens with offsets; empty for a sentence without ideographs."""
    if not _HAN_RUN.search(sentence):
        return []
    tokens: list[HanToken] = []
    offset = 0
    for word, flag in _JIEBA.pos(sentence):
        tokens.append(HanToken(word, flag, offset, offset + len(word)))
        offset += len(word)
    return tokens


def han_words(text: str) -> list[str]:
    """Words of the ideograph runs of `text` (jieba precise mode), stopwords dropped."""
    words: list[str] = []
    for run in _HAN_RUN.findall(text):
        words.extend(w for w in _JIEBA.cut(run) if len(w) > 1 and w not in CHINESE_STOPWORDS)
    return words


REPEATED_NOUN_COUNT = 3
"""A common noun becomes a concept when the chunk uses it this often: it is the topic."""


def repeated_nouns(sentences: Iterable[Sequence[HanToken]]) -> frozenset[str]:
    """Nouns of three or more ideographs the chunk repeats, minus titles and bare org words."""
    counts = Counter(
        token.word
        for tokens in sentences
        for token in tokens
        if token.flag == "n" and len(token.word) >= 3 and _HAN_RUN.fullmatch(token.word)
    )
    excluded = set(lex.CHINESE_ROLES) | set(lex.CHINESE_ORG_SUFFIXES)
    return frozenset(
        word
        for word, count in counts.items()
        if count >= REPEATED_NOUN_COUNT and word not in excluded
    )


def han_spans(sentence: str, tokens: Sequence[HanToken], repeated: frozenset[str]) -> list[Span]:
    """Candidate names of one sentence; they may overlap (the caller keeps the longest)."""
    persons = _persons(tokens)
    spans = list(persons)
    for index, token in enumerate(tokens):
        if not _HAN_RUN.fullmatch(token.word):
            continue
        spans.extend(_tagged(token, repeated))
        if token.word.endswith(lex.CHINESE_ORG_SUFFIXES):
            spans.extend(_phrase(tokens, index, frozenset({lex.ORGANIZATION})))
        elif _LATIN_PAREN.match(sentence, token.end) and not _covered(token, persons):
            spans.extend(_aliased(tokens, index))
    return spans


def _aliased(tokens: Sequence[HanToken], index: int) -> list[Span]:
    """The name before a Latin name in parentheses: a place or foreign name is one token
    (卑尔根（Bergen）), anything else the noun phrase ending there."""
    token = tokens[index]
    if token.flag in ("ns", "nrt", "nr"):
        if token.flag == "ns" or len(token.word) < 2:
            return []  # a place is already a span; one ideograph is no name
        return [Span(token.word, token.start, token.end)]
    return _phrase(tokens, index, frozenset())


def _covered(token: HanToken, spans: Sequence[Span]) -> bool:
    return any(span.start <= token.start and token.end <= span.end for span in spans)


def _persons(tokens: Sequence[HanToken]) -> list[Span]:
    spans: list[Span] = []
    index = 0
    while index < len(tokens):
        end = index
        while end < len(tokens) and _person_part(tokens, end, first=end == index):
            end += 1
        if end > index:
            name = "".join(token.word for token in tokens[index:end])
            if _person_name(name):
                spans.append(
                    Span(name, tokens[index].start, tokens[end - 1].end, frozenset({lex.PERSON}))
                )
            index = end
        else:
            index += 1
    return spans


def _person_part(tokens: Sequence[HanToken], index: int, *, first: bool) -> bool:
    token = tokens[index]
    if not _HAN_RUN.fullmatch(token.word):
        return False
    if token.flag in ("nr", "nrfg"):
        return True
    # A lone surname jieba tagged otherwise (林/ng before 海涛/nr) starts a name.
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    return (
        first
        and token.word in lex.CHINESE_SURNAMES
        and following is not None
        and following.flag == "nr"
    )


def _person_name(name: str) -> bool:
    if not 2 <= len(name) <= 4:
        return False
    return name[0] in lex.CHINESE_SURNAMES or name[:2] in lex.CHINESE_COMPOUND_SURNAMES


def _tagged(token: HanToken, repeated: frozenset[str]) -> list[Span]:
    word, flag = token.word, token.flag
    if len(word) < 2:
        return []
    if flag == "ns" and word not in lex.NOT_PLACES:
        evidence = frozenset({lex.LOCATION})
    elif flag == "nt":
        evidence = frozenset({lex.ORGANIZATION})
    elif flag == "nz" or (flag == "n" and word in repeated):
        evidence = frozenset()
    else:
        return []
    return [Span(word, token.start, token.end, evidence)]


def _phrase(tokens: Sequence[HanToken], last: int, evidence: frozenset[str]) -> list[Span]:
    """The noun phrase ending at tokens[last], walked back to a function word or a title."""
    first = last
    while first > 0 and last - first + 1 < _MAX_NAME_TOKENS and _name_part(tokens[first - 1]):
        first -= 1
    while first < last and tokens[first].flag in _NOT_FIRST:
        first += 1
    name = "".join(token.word for token in tokens[first : last + 1])
    if first == last and name.endswith(lex.CHINESE_ORG_SUFFIXES):
        return []  # a bare 研究所 or 公司 is "the institute", not a name
    for suffix in lex.CHINESE_LEGAL_SUFFIXES:
        if name.endswith(suffix) and len(name) - len(suffix) >= 2:
            name = name[: -len(suffix)]
            break
    if len(name) < 2:
        return []
    return [Span(name, tokens[first].start, tokens[first].start + len(name), evidence)]


def _name_part(token: HanToken) -> bool:
    return (
        token.flag in _NAME_PARTS
        and token.word not in lex.CHINESE_ROLES
        and _HAN_RUN.fullmatch(token.word) is not None
    )


class _LazyJieba:
    """jieba, loaded on first use (its dictionary takes a second) and once per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._modules: tuple[Any, Any] | None = None

    def pos(self, text: str) -> list[tuple[str, str]]:
        _, posseg = self._load()
        return [(pair.word, pair.flag) for pair in posseg.lcut(text)]

    def cut(self, text: str) -> list[str]:
        jieba, _ = self._load()
        return list(jieba.lcut(text))

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._modules is None:
                import jieba
                import jieba.posseg

                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                self._modules = (jieba, jieba.posseg)
            return self._modules


_JIEBA = _LazyJieba()
