"""The panel's words (frontend/src/strings.js): every language has every key.

The panel falls back to English for a missing word, which would leave an
English word in a translated panel: each language must have exactly the
English keys, with the same `{placeholders}` (a missing one would show a
number nowhere; an unknown one would show `{name}` literally). And the
panel's source must use only keys English has.
"""

from __future__ import annotations

from pathlib import Path
import re
from typing import Final

SOURCE: Final = Path(__file__).resolve().parents[1] / "frontend" / "src"
_LANGUAGE: Final = re.compile(
    r"^  ([a-z]{2,3}(?:-[A-Za-z]+)?): \{$(.*?)^  \},$", re.MULTILINE | re.DOTALL
)
_ENTRY: Final = re.compile(r'^    (\w+):\s*"((?:[^"\\]|\\.)*)",$', re.MULTILINE)
_PLACEHOLDER: Final = re.compile(r"\{(\w+)\}")


def languages() -> dict[str, dict[str, str]]:
    """Return every language's words, by key."""
    text = (SOURCE / "strings.js").read_text(encoding="utf-8")
    # A value may continue on the next line after its key.
    text = re.sub(r":\n\s+\"", ': "', text)
    return {
        language: dict(_ENTRY.findall(body))
        for language, body in _LANGUAGE.findall(text)
    }


def test_every_language_has_every_key_and_placeholder() -> None:
    """Each language has the English keys, each value the English placeholders."""
    found = languages()
    english = found.pop("en")
    assert len(english) > 100
    assert found, "only English"
    for language, words in found.items():
        assert set(words) == set(english), language
        for key, value in english.items():
            assert set(_PLACEHOLDER.findall(words[key])) == set(
                _PLACEHOLDER.findall(value)
            ), (language, key)


def test_the_panel_uses_only_keys_english_has() -> None:
    """Every `this.t("key")` in the panel's source is a key English has."""
    english = languages()["en"]
    used: set[str] = set()
    for source in SOURCE.glob("*.js"):
        used.update(
            re.findall(r"this\.t\(\"(\w+)\"", source.read_text(encoding="utf-8"))
        )
    assert used
    assert used <= set(english), used - set(english)
