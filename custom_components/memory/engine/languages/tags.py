"""Language tags: which analyser a text gets, and a language's English name.

Home Assistant and Assist pass BCP 47 tags ("de-DE", "pt_BR", "zh-Hans-CN");
the keyword analysis (`analysis`) works per primary language. A tag becomes
its lower-case primary subtag (`language_code`), Norwegian Bokmål and
Nynorsk ("nb", "nn") become "no" (one Snowball stemmer and stop list serve
both), and anything unreadable becomes the default. `language_name` gives
the English name an LLM prompt can say ("write in German").
"""

from __future__ import annotations

import functools
import re
from typing import Final

DEFAULT_LANGUAGE: Final = "en"

# Languages with their own Snowball stemmer AND a stop-word list
# (`engine/languages/stopwords/<code>.txt`); Polish has its own light stemmer
# (`analysis`). Every other language gets the generic analysis.
ANALYSED: Final[frozenset[str]] = frozenset(
    {"en", "de", "nl", "fr", "es", "it", "pt", "pl", "sv", "da", "no", "fi", "ru"}
)

# Languages whose words are written as one word (compounds): the index also
# holds the tails of long words, a query the heads and tails of its long ones.
COMPOUNDING: Final[frozenset[str]] = frozenset({"de", "nl", "sv", "da", "no", "fi"})

# Written without spaces between words (Chinese, Japanese) or with particles
# glued to words (Korean): searched by character bigrams.
CJK: Final[frozenset[str]] = frozenset({"zh", "ja", "ko"})

# Tags that name the same analyser as another code: Norwegian's written
# standards, and the deprecated ISO 639 codes Java and old systems still send.
_ALIASES: Final[dict[str, str]] = {
    "nb": "no",
    "nn": "no",
    "iw": "he",
    "in": "id",
    "ji": "yi",
    "jw": "jv",
    "mo": "ro",
    "tl": "fil",
}

# "und" (undetermined), "mul" (multiple), "zxx" (no linguistic content) and
# the private-use range say nothing about the language.
_NOT_A_LANGUAGE: Final = frozenset({"und", "mul", "zxx", "mis"})

_PRIMARY: Final = re.compile(r"[a-z]{2,3}")

_NAMES: Final[dict[str, str]] = {
    "af": "Afrikaans",
    "ar": "Arabic",
    "be": "Belarusian",
    "bg": "Bulgarian",
    "bn": "Bengali",
    "bs": "Bosnian",
    "ca": "Catalan",
    "cs": "Czech",
    "cy": "Welsh",
    "da": "Danish",
    "de": "German",
    "el": "Greek",
    "en": "English",
    "eo": "Esperanto",
    "es": "Spanish",
    "et": "Estonian",
    "eu": "Basque",
    "fa": "Persian",
    "fi": "Finnish",
    "fil": "Filipino",
    "fo": "Faroese",
    "fr": "French",
    "fy": "Western Frisian",
    "ga": "Irish",
    "gl": "Galician",
    "gsw": "Swiss German",
    "gu": "Gujarati",
    "he": "Hebrew",
    "hi": "Hindi",
    "hr": "Croatian",
    "hu": "Hungarian",
    "hy": "Armenian",
    "id": "Indonesian",
    "is": "Icelandic",
    "it": "Italian",
    "ja": "Japanese",
    "ka": "Georgian",
    "kk": "Kazakh",
    "kn": "Kannada",
    "ko": "Korean",
    "lb": "Luxembourgish",
    "lt": "Lithuanian",
    "lv": "Latvian",
    "mk": "Macedonian",
    "ml": "Malayalam",
    "mn": "Mongolian",
    "mr": "Marathi",
    "ms": "Malay",
    "mt": "Maltese",
    "my": "Burmese",
    "ne": "Nepali",
    "nl": "Dutch",
    "no": "Norwegian",
    "pa": "Punjabi",
    "pl": "Polish",
    "pt": "Portuguese",
    "ro": "Romanian",
    "ru": "Russian",
    "sk": "Slovak",
    "sl": "Slovenian",
    "sq": "Albanian",
    "sr": "Serbian",
    "sv": "Swedish",
    "sw": "Swahili",
    "ta": "Tamil",
    "te": "Telugu",
    "th": "Thai",
    "tr": "Turkish",
    "uk": "Ukrainian",
    "ur": "Urdu",
    "uz": "Uzbek",
    "vi": "Vietnamese",
    "yi": "Yiddish",
    "zh": "Chinese",
}


def language_code(tag: str | None, default: str = DEFAULT_LANGUAGE) -> str:
    """Lower-case primary subtag of a BCP 47-ish tag; `default` when unreadable.

    "de-DE" -> "de", "pt_BR" -> "pt", "zh-Hans-CN" -> "zh", "nb" -> "no",
    "" / None / "C" / "x-klingon" -> `default`. Never raises.
    """
    if not isinstance(tag, str) or not tag:
        return default
    if len(tag) > _CACHED_TAG:
        return _read_code(tag, default)
    return _cached_code(tag, default)


# Tags read (a store reads its few tags for every text it analyses); a tag of
# more than _CACHED_TAG characters is read each time: the cache stays a few KiB.
_CACHED_TAG: Final = 64


@functools.lru_cache(maxsize=128)
def _cached_code(tag: str, default: str) -> str:
    return _read_code(tag, default)


def _read_code(tag: str, default: str) -> str:
    primary = tag.strip().replace("_", "-").split("-", 1)[0].split(".", 1)[0]
    primary = primary.lower()
    if not primary.isascii() or not _PRIMARY.fullmatch(primary):
        return default
    if primary in _NOT_A_LANGUAGE:
        return default
    return _ALIASES.get(primary, primary)


def language_name(code: str) -> str:
    """English name of a language for a prompt ("de" -> "German").

    Takes a code or a tag; an unknown one is returned as it was given.
    """
    name = _NAMES.get(language_code(code, default=""))
    return name if name is not None else code
