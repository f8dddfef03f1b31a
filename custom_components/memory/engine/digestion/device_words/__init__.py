"""The words that tell a device command, per language: data for `device_commands`.

One module per language (`en`, `de`, `fr`, `es`, `it`, `nl`, `pt`, `pl`,
`sv`, `da`), each filling one `Phrases` (`phrases`, with the parts they
share); `rules` holds the words that make a request a standing rule,
`short` the plain words of short commands with no verb. All languages are
matched at once, so every table leans towards "not a command" (the note in
`phrases`), and a word of one language must not be plain in another
(Danish "er" is German "he", Swedish "om" Dutch "at").
"""

from typing import Final

from . import da, de, en, es, fr, it, nl, pl, pt, sv
from .phrases import Phrases
from .rules import HABIT_EVERY, NIGHTLY, WHEN
from .short import SHORT_DE, SHORT_EN_NL

LANGUAGES: Final[dict[str, Phrases]] = {
    "en": en.PHRASES,
    "de": de.PHRASES,
    "fr": fr.PHRASES,
    "es": es.PHRASES,
    "it": it.PHRASES,
    "nl": nl.PHRASES,
    "pt": pt.PHRASES,
    "pl": pl.PHRASES,
    "sv": sv.PHRASES,
    "da": da.PHRASES,
}

__all__ = [
    "HABIT_EVERY",
    "LANGUAGES",
    "NIGHTLY",
    "SHORT_DE",
    "SHORT_EN_NL",
    "WHEN",
    "Phrases",
]
