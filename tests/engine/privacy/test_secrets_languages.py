"""Codes and passwords are found in every language the analysers support.

The corpus (`data/secrets/<language>.txt`) holds, per language, 20 or more
sentences with a code, PIN or password (digits, spoken digits, words) and 20
household sentences with numbers that hold none. Every secret must go; at
most 2 % of the ordinary sentences may be touched. Run with `-rP` to see the
figures per language.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
import re

import pytest

from custom_components.memory.engine.languages.tags import ANALYSED, CJK
from custom_components.memory.engine.privacy.secrets import (
    REDACTED,
    has_secret,
    redacted,
)

CORPUS = Path(__file__).parents[1] / "data" / "secrets"
# The analysed languages, and Chinese, Japanese and Korean (bigrams).
LANGUAGES: tuple[str, ...] = ("en", "de", "nl", "fr", "es", "it", "pt", "pl")
LANGUAGES += ("sv", "da", "no", "fi", "ru", "zh", "ja", "ko")
_VALUE = re.compile(r"\{([^}]*)\}")


@dataclass
class Corpus:
    """One language's sentences: secrets with their values, and ordinary ones."""

    secrets: list[tuple[str, str]] = field(default_factory=list)
    ordinary: list[str] = field(default_factory=list)


def load(language: str) -> Corpus:
    """Read `<language>.txt`: `# secret` and `# ordinary` sections."""
    corpus = Corpus()
    section = ""
    for line in (CORPUS / f"{language}.txt").read_text("utf-8").splitlines():
        if line.startswith("# "):
            section = line[2:]
        elif line.strip() and section == "secret":
            value = _VALUE.search(line)
            assert value, line
            corpus.secrets.append((_VALUE.sub(r"\1", line), value.group(1)))
        elif line.strip():
            assert section == "ordinary", line
            corpus.ordinary.append(line)
    return corpus


def test_corpus_covers_the_analysers_languages() -> None:
    """Each analysed language has its file, 20+ secrets, 300+ ordinary in all."""
    assert set(LANGUAGES) == ANALYSED | CJK
    corpora = [load(language) for language in LANGUAGES]
    assert all(len(corpus.secrets) >= 20 for corpus in corpora)
    assert sum(len(corpus.ordinary) for corpus in corpora) >= 300


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_secret_is_redacted(language: str) -> None:
    """The value is gone, the words around it stay, and it stays that way."""
    for text, value in load(language).secrets:
        shown = redacted(text)
        assert value not in shown, text
        assert REDACTED in shown, text
        assert shown.replace(REDACTED, value) == text, text
        assert has_secret(text), text
        assert redacted(shown) == shown, text


@pytest.mark.parametrize("language", LANGUAGES)
def test_ordinary_sentences_are_kept(language: str) -> None:
    """Household sentences with numbers, and codes that are no secret, stay.

    The issue allows 2 % of them touched; this corpus has none.
    """
    touched = [text for text in load(language).ordinary if redacted(text) != text]
    assert touched == []


def test_corpus_figures() -> None:
    """The figures recorded in docs/robustness.md (printed with `-rP`)."""
    rows = []
    secrets = ordinary = found = touched = 0
    for language in LANGUAGES:
        corpus = load(language)
        hit = sum(value not in redacted(text) for text, value in corpus.secrets)
        kept = sum(redacted(text) != text for text in corpus.ordinary)
        rows.append(
            f"{language}: secrets redacted {hit}/{len(corpus.secrets)}, "
            f"ordinary touched {kept}/{len(corpus.ordinary)}"
        )
        secrets += len(corpus.secrets)
        ordinary += len(corpus.ordinary)
        found += hit
        touched += kept
    print("\n".join(rows))  # noqa: T201
    print(  # noqa: T201
        f"all: secrets redacted {found}/{secrets}, ordinary touched {touched}/{ordinary}"
    )
    assert found == secrets
    assert touched <= 0.02 * ordinary
