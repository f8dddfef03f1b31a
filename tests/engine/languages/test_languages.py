"""Tests of language tags, language names and the stop-word lists."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, strategies as st
import pytest

from custom_components.memory.engine.languages.tags import (
    ANALYSED,
    CJK,
    COMPOUNDING,
    DEFAULT_LANGUAGE,
    language_code,
    language_name,
)
from custom_components.memory.engine.languages.words import STOP_WORDS, stem

STOPWORDS_DIR = (
    Path(__file__).parents[3]
    / "custom_components"
    / "memory"
    / "engine"
    / "languages"
    / "stopwords"
)


@pytest.mark.parametrize(
    ("tag", "code"),
    [
        ("de-DE", "de"),
        ("de_CH", "de"),
        ("pt_BR", "pt"),
        ("PT-br", "pt"),
        ("zh-Hans-CN", "zh"),
        ("zh-Hant", "zh"),
        ("en", "en"),
        (" fr ", "fr"),
        ("nb", "no"),
        ("nb-NO", "no"),
        ("nn", "no"),
        ("no", "no"),
        ("iw", "he"),
        ("fil-PH", "fil"),
        ("sr-Latn-RS", "sr"),
        ("de_DE.UTF-8", "de"),
    ],
)
def test_language_code(tag: str, code: str) -> None:
    """A tag becomes its lower-case primary subtag, Norwegian one code."""
    assert language_code(tag) == code


@pytest.mark.parametrize(
    "tag",
    [None, "", " ", "-", "C", "POSIX", "x-klingon", "und", "mul", "e", "abcd",
     "12", "ëë", "d\u0435", "de\x00", "*", "i-default", 42],
)  # fmt: skip
def test_language_code_falls_back(tag: object) -> None:
    """Nothing readable as a language gives the default, never an error."""
    assert language_code(tag) == DEFAULT_LANGUAGE  # type: ignore[arg-type]
    assert language_code(tag, default="de") == "de"  # type: ignore[arg-type]


@given(st.text())
def test_language_code_never_raises(tag: str) -> None:
    """Any text gives a code of two or three ASCII letters, or the default."""
    code = language_code(tag, default="")
    assert code == "" or (code.isascii() and code.isalpha() and 2 <= len(code) <= 3)


def test_language_name() -> None:
    """English names for prompts; an unknown code comes back as it was."""
    assert language_name("de") == "German"
    assert language_name("pt") == "Portuguese"
    assert language_name("pt-BR") == "Portuguese"
    assert language_name("nb") == "Norwegian"
    assert language_name("zh") == "Chinese"
    assert language_name("ja") == "Japanese"
    assert language_name("ko") == "Korean"
    assert language_name("tlh") == "tlh"
    assert language_name("") == ""


def test_every_language_we_analyse_or_bigram_has_a_name() -> None:
    """Prompts can name every language the analysis knows, and more."""
    common = {"ar", "bg", "ca", "cs", "el", "et", "he", "hi", "hr", "hu", "id"}
    common |= {"lt", "lv", "ro", "sk", "sl", "sr", "th", "tr", "uk", "vi"}
    for code in ANALYSED | CJK | COMPOUNDING | common:
        assert language_name(code) != code, code


def test_analysed_languages_cover_the_issue() -> None:
    """At least the ten languages the issue names have their own analysis."""
    assert {"en", "de", "nl", "fr", "es", "it", "pt", "pl", "sv", "da"} <= ANALYSED
    assert {"de", "nl", "sv", "da", "no"} <= COMPOUNDING


def test_every_analysed_language_has_a_stop_list_with_its_source() -> None:
    """One file per analysed language, its source and licence on top."""
    files = {path.stem for path in STOPWORDS_DIR.glob("*.txt")}
    assert files == set(ANALYSED)
    for code in ANALYSED:
        lines = (STOPWORDS_DIR / f"{code}.txt").read_text(encoding="utf-8").splitlines()
        header = " ".join(lines[:4])
        assert lines[0].startswith("# Stop words")
        assert "Source:" in header
        assert len(STOP_WORDS[code]) >= 50, code


# Words a household asks about, per language: never its stop words.
CONTENT_WORDS = {
    "en": {"home", "time", "house", "car", "dog", "cat", "will", "may"},
    "de": {"haus", "zeit", "hund", "katze", "weg", "machen", "mia", "leo"},
    "nl": {"huis", "tijd", "hond", "wezen", "mia", "leo"},
    "fr": {"maison", "temps", "été", "étés", "chien", "mia"},
    "es": {"casa", "tiempo", "perro", "estado", "mia", "comer"},
    "it": {"casa", "tempo", "cane", "mia", "leo"},
    "pt": {"casa", "tempo", "cão", "mia", "ana"},
    "pl": {"dom", "czas", "kot", "pies", "mia"},
    "sv": {"hus", "tid", "hund", "man", "katt"},
    "da": {"hus", "tid", "hund", "man", "kat"},
    "no": {"hus", "tid", "hund", "man", "kom", "katt"},
    "fi": {"talo", "aika", "koira", "kissa"},
    "ru": {"дом", "время", "человек", "жизнь", "два", "сегодня"},
}


def test_stop_lists_hold_function_words_only() -> None:
    """No content word, no name, no number is a stop word."""
    assert set(CONTENT_WORDS) == set(STOP_WORDS)
    for code, words in STOP_WORDS.items():
        assert not CONTENT_WORDS[code] & words, code
        assert not any(char.isdigit() for word in words for char in word), code
        assert all(word == word.lower() for word in words), code


def test_stop_words_are_matched_with_their_accents() -> None:
    """Spanish "mía" (mine) is a stop word, the name "Mia" is not."""
    assert "mía" in STOP_WORDS["es"]
    assert "mia" not in STOP_WORDS["es"]
    assert stem("mia", "es") == "mia"
