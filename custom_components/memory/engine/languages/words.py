"""One word's analysis: is it a stop word, its stem, its folded index form.

The pieces `analysis` and `compounds` put together. Words arrive NFKC
normalised and lower-cased with their accents (the Snowball stemmers need
"ä", "ß", "é"), are stemmed per language, and only then folded to what an
FTS5 column tokenized by `unicode61 remove_diacritics 2` holds: every
emitted term is a fixed point of that tokenizer (it reads it back as exactly
that one token), so a term can be looked up in the index's vocabulary and
matched as a prefix. `fold_term` makes sure of it character by character,
including the few characters SQLite's Unicode tables read differently from
Python's (`_UNICODE61_*`, checked against the real SQLite in the tests).
"""

from __future__ import annotations

import functools
from importlib import resources
import threading
from typing import Final, Protocol
import unicodedata

import snowballstemmer  # type: ignore[import-untyped]

from .plurals import RESTEM, base_form, refine
from .tags import ANALYSED

# Snowball algorithm of each analysed language (Polish: `_polish_stem`).
SNOWBALL: Final[dict[str, str]] = {
    "en": "english",
    "de": "german",
    "nl": "dutch",
    "fr": "french",
    "es": "spanish",
    "it": "italian",
    "pt": "portuguese",
    "sv": "swedish",
    "da": "danish",
    "no": "norwegian",
    "fi": "finnish",
    "ru": "russian",
}

APOSTROPHES: Final = "'\u2019\u02bc"


def _load_stop_words(code: str) -> frozenset[str]:
    """Read `stopwords/<code>.txt`: one word a line, `#` starts a comment."""
    text = (
        resources.files(__package__ or "")
        .joinpath("stopwords", f"{code}.txt")
        .read_text(encoding="utf-8")
    )
    words: set[str] = set()
    for line in text.splitlines():
        word = line.split("#", 1)[0].strip()
        if word:
            word = unicodedata.normalize("NFKC", word).lower()
            words.add(word.replace("\u2019", "'").replace("\u02bc", "'"))
    return frozenset(words)


# Read at import (module import runs outside Home Assistant's event loop):
# no file is opened while a text is analysed.
STOP_WORDS: Final[dict[str, frozenset[str]]] = {
    code: _load_stop_words(code) for code in sorted(ANALYSED)
}
_NO_STOP_WORDS: Final[frozenset[str]] = frozenset()


def stop_words(code: str) -> frozenset[str]:
    """Return the stop words of a language code (empty when it has none)."""
    return STOP_WORDS.get(code, _NO_STOP_WORDS)


# -- stemming -------------------------------------------------------------------


class _Stemmer(Protocol):
    def stemWord(self, word: str) -> str: ...  # noqa: N802 (snowballstemmer's name)


# A Snowball stemmer object keeps the word it works on in its fields, so one
# object must not serve two threads at once: every thread gets its own.
_local = threading.local()


def _stemmer(algorithm: str) -> _Stemmer:
    stemmers: dict[str, _Stemmer] | None = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {}
    found = stemmers.get(algorithm)
    if found is None:
        found = stemmers[algorithm] = snowballstemmer.stemmer(algorithm)
    return found


# Polish has no Snowball stemmer: a light one strips the longest of these
# inflection endings that leaves at least three letters, so the cases and
# numbers of a noun ("basen", "basenie", "basenu") and of a verbal noun
# ("pływanie", "pływania", "pływaniu") share a stem; a verb in -ać gets its
# verbal noun's ("pływać" -> "pływan").
_POLISH_ENDINGS: Final = tuple(
    sorted(
        [
            *("ościami", "ościach", "owania", "owanie", "owaniu", "ością", "ości"),
            *("ować", "ałem", "ałam", "iłem", "iłam", "ach", "ami", "ego", "emu"),
            *("owi", "ych", "ich", "ymi", "imi", "iej", "iem", "ów", "om", "em"),
            *("ie", "ia", "iu", "ii", "ej", "ą", "ę", "a", "e", "i", "o", "u", "y"),
        ],
        key=len,
        reverse=True,
    )
)
_POLISH_MIN_STEM: Final = 3


def _polish_stem(word: str) -> str:
    if word.endswith("ać") and not word.endswith("ować"):
        return word[:-2] + "an"
    for ending in _POLISH_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= _POLISH_MIN_STEM:
            return word[: -len(ending)]
    return word


@functools.lru_cache(maxsize=65536)
def stem(word: str, code: str) -> str:
    """Return a lower-cased word's stem in a language (itself if none is known).

    Words with a digit are not stemmed: "2024" and "b12" stay what they are.
    """
    if any(char.isdigit() for char in word):
        return word
    base = base_form(word, code)
    algorithm = SNOWBALL.get(code)
    if algorithm is not None:
        stemmer = _stemmer(algorithm)
        stemmed = stemmer.stemWord(base) or base
        if code in RESTEM:
            stemmed = stemmer.stemWord(stemmed) or stemmed
    elif code == "pl":
        stemmed = _polish_stem(base)
    else:
        return word
    return refine(stemmed, word, code)


# -- folding ------------------------------------------------------------------

# Characters SQLite's unicode61 (remove_diacritics 2) reads differently from
# Python's Unicode tables, found by `tests/engine/test_analysis.py` asking the
# real tokenizer about every character `fold_char` can return:
# - folded to another character,
_UNICODE61_FOLDS: Final[dict[str, str]] = {"\u03c2": "\u03c3"}  # ς -> σ
# - not a token character (newer or re-categorised in Unicode), as ranges.
#   New Tai Lue vowel signs and tone marks (Lo in Unicode 16, marks in
#   SQLite's tables) and two Vedic signs (assigned after them).
_UNICODE61_SEPARATOR_RANGES: Final[tuple[tuple[int, int], ...]] = (
    (0x19B0, 0x19C0),
    (0x19C8, 0x19C9),
    (0x1CF2, 0x1CF3),
)
_HANGUL_FIRST: Final = 0xAC00
_HANGUL_LAST: Final = 0xD7A3
_DROPPED_MARKS: Final = frozenset({"Mn", "Me"})


def _is_unicode61_separator(char: str) -> bool:
    code = ord(char)
    return any(first <= code <= last for first, last in _UNICODE61_SEPARATOR_RANGES)


@functools.lru_cache(maxsize=8192)
def fold_char(char: str) -> str:
    """One lower-cased character as unicode61 folds it; " " for a separator.

    Accents go (the character is decomposed and its marks dropped), Hangul
    syllables stay whole (unicode61 does not decompose them), and a character
    unicode61 does not read as a letter or digit becomes a space.
    """
    folded = _UNICODE61_FOLDS.get(char)
    if folded is not None:
        return folded
    if _HANGUL_FIRST <= ord(char) <= _HANGUL_LAST:
        return char
    kept = []
    for part in unicodedata.normalize("NFD", char):
        if unicodedata.category(part) in _DROPPED_MARKS:
            continue
        base = _UNICODE61_FOLDS.get(part, part)
        is_token = base != "_" and base.isalnum() and not _is_unicode61_separator(base)
        kept.append(base if is_token else " ")
    return "".join(kept)


def fold_term(term: str) -> list[str]:
    """Return the index terms a lower-cased term folds to (one, at times none).

    Each is a fixed point of `unicode61 remove_diacritics 2`. A character
    that tokenizer reads as a separator splits the term.
    """
    if term.isascii():
        return [term] if term.isalnum() else term.replace("_", " ").split()
    return "".join(map(fold_char, term)).split()
