"""The household recall set in bench/data/household/ is well formed.

Each `<lang>.jsonl` holds memories (`id`, `memory`) and questions (`id`,
`answers`, `question`, `paraphrase`); ids mean the same fact or question in
every language. bench/household.py trusts all of this.
"""

from __future__ import annotations

from functools import cache
import json
from pathlib import Path
import re
from typing import Any

import pytest

DATA = Path(__file__).parent.parent / "bench" / "data" / "household"
LANGUAGES = ("en", "de", "fr", "es", "nl", "it", "pt", "pl", "sv", "da", "zh", "ja")
# Minimum (memories, questions) per language: the whole set in each.
MINIMUM = dict.fromkeys(LANGUAGES, (80, 50))
MEMORY_KEYS = {"lang", "id", "memory"}
QUESTION_KEYS = {"lang", "id", "answers", "question", "paraphrase"}


@cache
def rows(lang: str) -> tuple[dict[str, Any], ...]:
    """Every object of one language's file, in order."""
    path = DATA / f"{lang}.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    return tuple(json.loads(line) for line in lines if line.strip())


def memories(lang: str) -> dict[str, str]:
    """Memory id -> text."""
    return {row["id"]: row["memory"] for row in rows(lang) if "memory" in row}


def questions(lang: str) -> dict[str, dict[str, Any]]:
    """Question id -> row."""
    return {row["id"]: row for row in rows(lang) if "question" in row}


def test_every_language_has_its_file_and_no_other() -> None:
    """The files are exactly the languages the bench knows."""
    assert sorted(p.stem for p in DATA.glob("*.jsonl")) == sorted(MINIMUM)


@pytest.mark.parametrize("lang", sorted(MINIMUM))
def test_rows_are_well_formed(lang: str) -> None:
    """Right keys, right language, id patterns, non-empty texts."""
    for row in rows(lang):
        assert row["lang"] == lang
        if "memory" in row:
            assert set(row) == MEMORY_KEYS, row
            assert re.fullmatch(r"m\d{2}", row["id"]), row
            assert row["memory"].strip() == row["memory"] != "", row
        else:
            assert set(row) == QUESTION_KEYS, row
            assert re.fullmatch(r"q\d{2}", row["id"]), row
            for key in ("question", "paraphrase"):
                assert row[key].strip() == row[key] != "", row
            assert row["question"] != row["paraphrase"], row
            assert isinstance(row["answers"], list) and row["answers"], row
            assert len(set(row["answers"])) == len(row["answers"]), row


@pytest.mark.parametrize("lang", sorted(MINIMUM))
def test_no_duplicates_and_minimum_counts(lang: str) -> None:
    """Ids and texts appear once; each language has at least its share."""
    ids = [row["id"] for row in rows(lang)]
    assert len(ids) == len(set(ids))
    texts = [row.get("memory") or row["question"] for row in rows(lang)]
    texts += [row["paraphrase"] for row in rows(lang) if "paraphrase" in row]
    assert len(texts) == len(set(texts))
    want_memories, want_questions = MINIMUM[lang]
    assert len(memories(lang)) >= want_memories
    assert len(questions(lang)) >= want_questions


@pytest.mark.parametrize("lang", sorted(MINIMUM))
def test_answers_exist_in_the_same_language(lang: str) -> None:
    """Every answer id is a memory of that language's file."""
    known = set(memories(lang))
    for row in questions(lang).values():
        assert set(row["answers"]) <= known, row


@pytest.mark.parametrize("lang", sorted(MINIMUM))
def test_ids_agree_with_english(lang: str) -> None:
    """Ids are shared: every language has English's ids, with the same answers."""
    reference = questions("en")
    assert set(memories(lang)) <= set(memories("en"))
    assert set(questions(lang)) <= set(reference)
    for ident, row in questions(lang).items():
        assert row["answers"] == reference[ident]["answers"], ident
    assert set(memories(lang)) == set(memories("en"))
    assert set(questions(lang)) == set(reference)
