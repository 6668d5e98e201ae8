"""The BM25 analyzer: text to the terms every search backend indexes and queries.

Every backend (SQLite postings, Elasticsearch) stores and searches the output of `analyze`, joined
by spaces, instead of running its own language analysis. That keeps Chinese segmentation,
stemming and stopwords identical everywhere, so a query scores the same on every backend.

- Text is NFKC-normalised (full-width letters and digits become ASCII) and lowercased.
- Latin and other alphabetic words are runs of letters and digits; hyphens, underscores and
  other punctuation separate them ("covid-19" gives "covid" and "19"). A trailing possessive
  "'s" is dropped; other apostrophes separate ("o'brien" gives "o" and "brien"). English
  stopwords are dropped, then words are stemmed with the Snowball English stemmer. Numbers and
  single letters stay terms ("vitamin d", "type 2"): they carry meaning in technical text.
- Runs of CJK ideographs are segmented by jieba in precise mode; a small Chinese stopword list
  (particles, pronouns, conjunctions) is dropped, and words are kept as they are.

Every term is made of Unicode letters and digits only, so a backend's plain Unicode
tokenizer (Elasticsearch whitespace) keeps each term whole; the embedded store indexes the
terms themselves.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Callable

import Stemmer

# CJK Unified Ideographs with Extension A, compatibility ideographs, Extensions B-F.
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef"
_HAN_RUNS = re.compile(rf"([{_HAN}]+)")
_WORD = re.compile(rf"[^\W_{_HAN}]+(?:'[^\W_{_HAN}]+)*")
_NOT_LETTERS = re.compile(r"[\W_]+")

_ENGLISH_STOPWORDS = """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't
    doing don't down during each either else etc ever every few for from further had hadn't has
    hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his
    how how's however i i'd i'll i'm i've if in into is isn't it it's its itself just let's may
    me might more most must mustn't my myself neither no nor not now of off on once only or other
    ought our ours ourselves out over own same shall shan't she she'd she'll she's should
    shouldn't so some such than that that's the their theirs them themselves then there there's
    therefore these they they'd they'll they're they've this those though through thus to too
    under until up upon us very was wasn't we we'd we'll we're we've were weren't what what's
    when when's where where's whether which while who who's whom whose why why's will with within
    without won't would wouldn't yet you you'd you'll you're you've your yours yourself
    yourselves
"""
ENGLISH_STOPWORDS = frozenset(_ENGLISH_STOPWORDS.split())
"""Function words that carry no topic (after lowercasing, before stemming)."""

_CHINESE_STOPWORDS = """
    的 地 得 了 着 过 和 与 及 或 而 并 且 是 在 就 都 也 还 又 很 把 被 让 给 对 从 向 于 以 为
    之 其 这 那 这个 那个 这些 那些 这样 一个 一些 我 你 他 她 它 我们 你们 他们 她们 它们 自己
    吗 呢 吧 啊 呀 哦 嗯 么 但 但是 因为 所以 如果 虽然 而且 或者 以及 等 等等 即 则 所 个
"""
CHINESE_STOPWORDS = frozenset(_CHINESE_STOPWORDS.split())
"""Particles, pronouns and conjunctions; content words such as 学生 are never listed."""

_local = threading.local()


def analyze(text: str) -> list[str]:
    """The BM25 terms of `text`, in text order, repeats kept (they are term frequencies)."""
    normalized = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'")
    stemmer = _stemmer()
    terms: list[str] = []
    # Text between ideograph runs, the runs themselves, text, ...: the odd parts are the runs.
    # Each stretch of text has its words found in one regex pass and stemmed in one call.
    for index, part in enumerate(_HAN_RUNS.split(normalized)):
        if index % 2:
            terms.extend(_han_terms(part))
        elif part:
            terms.extend(_stem(stemmer, _unstemmed(_WORD.findall(part))))
    return terms


def _stemmer() -> Stemmer.Stemmer:
    """This thread's Snowball English stemmer: a Stemmer must not be used by two threads at once."""
    stemmer: Stemmer.Stemmer | None = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer


def _unstemmed(words: list[str]) -> list[str]:
    """The words to stem: stopwords dropped, a trailing possessive "'s" dropped, other
    apostrophes splitting a word (each part a word of its own)."""
    kept = [word for word in words if word not in ENGLISH_STOPWORDS]
    if not any("'" in word for word in kept):
        return kept
    parts: list[str] = []
    for word in kept:
        if "'" not in word:
            parts.append(word)
            continue
        bare = word.removesuffix("'s")
        parts.extend(part for part in bare.split("'") if part and part not in ENGLISH_STOPWORDS)
    return parts


def _stem(stemmer: Stemmer.Stemmer, words: list[str]) -> list[str]:
    stemmed: list[str] = stemmer.stemWords(words)
    return stemmed


def _han_terms(run: str) -> list[str]:
    # The blocks in _HAN hold unassigned code points too (U+FADA-FAFF, ...): not letters, they
    # separate words as punctuation does.
    parts = [run] if run.isalnum() else _NOT_LETTERS.split(run)
    return [word for part in parts for word in _JIEBA.cut(part) if word not in CHINESE_STOPWORDS]


def preload_segmenter() -> None:
    """Starts loading jieba's dictionary on a thread of its own, once per process.

    A service calls this when it starts: the first Chinese text it analyzes then finds the
    dictionary ready (or waits for the load under way) instead of loading it on the event
    loop, which would stall every query and document for that second.
    """
    _JIEBA.preload()


def load_segmenter() -> None:
    """Loads jieba's dictionary now, on the calling thread (once per process)."""
    _JIEBA.load()


class _LazyJieba:
    """jieba's precise mode, loaded on first use or by `preload`: loading its dictionary
    takes about a second and 70 MB.

    The lock makes concurrent first calls load the dictionary once; jieba's INFO lines about
    loading are silenced, since they would repeat in every process.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cut: Callable[[str], list[str]] | None = None
        self._preloading = False

    def preload(self) -> None:
        if self._cut is None and not self._preloading:
            self._preloading = True
            threading.Thread(target=self.load, name="ragstream-jieba", daemon=True).start()

    def cut(self, run: str) -> list[str]:
        cut = self._cut
        if cut is None:
            cut = self.load()
        return cut(run)

    def load(self) -> Callable[[str], list[str]]:
        with self._lock:
            if self._cut is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                self._cut = jieba.lcut
            return self._cut


_JIEBA = _LazyJieba()
