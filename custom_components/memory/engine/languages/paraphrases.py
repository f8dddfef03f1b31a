"""Question and memory pairs that only meaning links, per language.

`reading_pairs/<code>.tsv` holds 24 lines of a spoken question, a tab, and the
stored memory that answers it, written so that the two share no content
word, stem or compound part (Chinese, Japanese and Korean: no character
pair); names may be shared. They are the integration's own text, not the
household's: the embedding worker sends them to the model to measure how
well it reads the language (`vectors/reading.py`).
"""

from __future__ import annotations

from importlib import resources
from typing import Final

from .tags import language_code

type Pairs = tuple[tuple[str, str], ...]


def _read(text: str) -> Pairs:
    """Parse one file: question, tab, memory; blank or one-sided lines skipped."""
    found = []
    for line in text.splitlines():
        question, _tab, memory = line.partition("\t")
        if question.strip() and memory.strip():
            found.append((question.strip(), memory.strip()))
    return tuple(found)


def _load() -> dict[str, Pairs]:
    folder = resources.files(__package__ or "").joinpath("reading_pairs")
    return {
        entry.name.removesuffix(".tsv"): _read(entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".tsv")
    }


# Read at import (outside Home Assistant's event loop), like the stop words:
# no file is opened while a query is searched.
PARAPHRASES: Final[dict[str, Pairs]] = _load()


def paraphrase_pairs(language: str) -> Pairs:
    """Return the language's (question, memory) pairs; none without a file."""
    return PARAPHRASES.get(language_code(language), ())
