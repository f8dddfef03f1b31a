"""The multi-turn recall set in bench/data/multiturn/ is well formed.

bench/multiturn.py trusts all of this: every id a dialogue names exists, a
satellite nobody is identified at never expects a person's memory, a person
never expects another person's, and the set is as large and as varied as
issue #14 asks (at least 150 dialogues of 2-4 turns, English and another
language, every kind of turn).
"""

from __future__ import annotations

from collections import Counter
from functools import cache
import json
from pathlib import Path
from typing import Any

import pytest

from bench.multiturn import load

DATA = Path(__file__).parent.parent / "bench" / "data"
LANGUAGES = ("en", "de")
KINDS = {"pronoun", "ellipsis", "topic_change", "continuation", "mixed"}
SPEAKERS = {"kitchen", "anna", "tom"}
OTHER_SPEAKERS = SPEAKERS | {"hall"}
SCOPES = {"household", "anna", "tom"}


@cache
def rows(lang: str) -> tuple[dict[str, Any], ...]:
    """Return every object of one language's file, in order."""
    text = (DATA / "multiturn" / f"{lang}.jsonl").read_text(encoding="utf-8")
    return tuple(json.loads(line) for line in text.splitlines() if line.strip())


def scopes(lang: str) -> dict[str, str]:
    """Return memory id -> scope, the household set's and the dialogues' own."""
    household = (DATA / "household" / f"{lang}.jsonl").read_text(encoding="utf-8")
    known = {
        row["id"]: "household"
        for row in map(json.loads, household.splitlines())
        if "memory" in row
    }
    known.update({row["memory"]: row["scope"] for row in rows(lang) if "memory" in row})
    return known


def dialogues(lang: str) -> list[dict[str, Any]]:
    """Return the dialogues of one language."""
    return [row for row in rows(lang) if "dialogue" in row]


def test_enough_dialogues_in_two_languages() -> None:
    """At least 150 dialogues, in English and German."""
    counts = {lang: len(dialogues(lang)) for lang in LANGUAGES}
    assert sum(counts.values()) >= 150
    assert all(count >= 50 for count in counts.values())


@pytest.mark.parametrize("lang", LANGUAGES)
def test_dialogues_are_well_formed(lang: str) -> None:
    """Kinds, speakers, 2-4 turns; every id exists; nobody expects another's memory."""
    known = scopes(lang)
    assert set(known.values()) <= SCOPES
    seen = set()
    for dialogue in dialogues(lang):
        assert dialogue["dialogue"].startswith(f"{lang}-")
        assert dialogue["dialogue"] not in seen
        seen.add(dialogue["dialogue"])
        assert dialogue["kind"] in KINDS
        assert dialogue["speaker"] in SPEAKERS
        if dialogue["kind"] != "continuation":
            assert 2 <= len(dialogue["turns"]) <= 4, dialogue["dialogue"]
        else:
            assert dialogue["before"]["turns"]
            assert 1 <= len(dialogue["turns"]) <= 4
        reach = {"household", dialogue["speaker"]}
        for turn in dialogue["turns"]:
            assert turn["say"].strip()
            for key in turn["expect"]:
                assert known[key] in reach, (dialogue["dialogue"], key)
            for key in turn.get("unrelated", ()):
                assert key in known
                assert key not in turn["expect"]
        for other in dialogue.get("others", ()):
            assert other["speaker"] in OTHER_SPEAKERS - {dialogue["speaker"]}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_kind_is_there(lang: str) -> None:
    """Each kind of turn, and each speaker, has several dialogues."""
    kinds = Counter(d["kind"] for d in dialogues(lang))
    assert set(kinds) == KINDS
    assert min(kinds.values()) >= 5
    assert set(Counter(d["speaker"] for d in dialogues(lang))) == SPEAKERS
    # Topic changes name what became unrelated.
    assert all(
        dialogue["turns"][1].get("unrelated")
        for dialogue in dialogues(lang)
        if dialogue["kind"] == "topic_change"
    )


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_bench_reads_what_the_file_says(lang: str) -> None:
    """bench/multiturn.py loads every dialogue and memory, with its scope."""
    data = load(lang)
    assert len(data.dialogues) == len(dialogues(lang))
    assert set(data.memories) == set(scopes(lang))
    assert data.memories["x35"][1] == "person.anna"
