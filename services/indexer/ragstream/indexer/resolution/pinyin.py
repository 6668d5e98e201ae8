"""The pinyin spellings of a Chinese name (pure, over pypinyin's dictionaries).

A Chinese person or place is written in Latin letters by its pinyin without tones: 周明哲 is
Zhou Mingzhe, 宁波 is Ningbo, 重庆 is Chongqing (pypinyin reads a character by the phrase
it stands in). The spellings are entity keys: the syllables joined ("ningbo"), and split
after the first one or two ("zhou mingzhe", "ouyang xiu": a surname of one or two
characters). Only names of two to four ideographs have them; longer ones are organizations
or descriptions, which are translated rather than spelled ("东海海洋感知研究所").

pypinyin's dictionaries take about 56 MB; they are loaded for the first Chinese name only.
"""

from __future__ import annotations

import re

from ragstream.common.models import entity_key

_HAN_NAME = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,4}")


def spellings(name: str) -> list[str]:
    """The keys the name's pinyin may be written as, sorted; [] for no such name."""
    key = entity_key(name)
    if not _HAN_NAME.fullmatch(key):
        return []
    from pypinyin import Style, lazy_pinyin  # loaded for the first Chinese name only

    syllables = lazy_pinyin(key, style=Style.NORMAL, errors="ignore")
    if len(syllables) != len(key) or not all(s.isascii() and s.isalpha() for s in syllables):
        return []
    forms = {"".join(syllables)}
    for split in (1, 2):
        if split < len(syllables):
            forms.add(f"{''.join(syllables[:split])} {''.join(syllables[split:])}")
    return sorted(forms)
