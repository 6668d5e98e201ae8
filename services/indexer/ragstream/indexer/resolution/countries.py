"""Country names in Chinese and their English names (pycountry's ISO 3166 data and its
translations): 挪威 is Norway, 中国 is China. A country's Chinese name is a translation,
not a spelling, so neither pinyin nor a rule finds it; the ISO tables do."""

from __future__ import annotations

import functools
import gettext

from ragstream.common.models import entity_key

_CHINESE = ("zh_CN", "zh_TW", "zh_HK")


def english_names(name: str) -> list[str]:
    """The keys of the English names of the country `name` names in Chinese, sorted."""
    return sorted(_by_chinese_name().get(entity_key(name), ()))


@functools.cache
def _by_chinese_name() -> dict[str, set[str]]:
    import pycountry  # its tables are read for the first Chinese name only

    found: dict[str, set[str]] = {}
    for language in _CHINESE:
        translation = gettext.translation(
            "iso3166-1", pycountry.LOCALES_DIR, languages=[language], fallback=True
        )
        for country in pycountry.countries:
            english = {
                entity_key(str(getattr(country, field)))
                for field in ("name", "common_name", "official_name")
                if hasattr(country, field)
            }
            chinese = entity_key(translation.gettext(country.name))
            if chinese and chinese not in english:
                found.setdefault(chinese, set()).update(english)
    return found
