"""Sentences in many languages for checking the multilingual encoder.

Where they come from, each with its language tag:

- `bench/data/household/*.jsonl`: the household benchmark's memories,
  questions and paraphrases (12 languages, written for this project);
- `bench/data/multiturn/*.jsonl`: the multi-turn benchmark's turns and
  memories (German, English);
- Home Assistant's intent sentences (the `home_assistant_intents` package,
  64 language files), expanded into plain sentences with `hassil`'s sampler,
  entity, area and floor names filled in from a few household names;
- generated combinations: each household memory followed by a question of
  the same language, as a longer text of two sentences.

`sentences()` returns them de-duplicated, in a fixed order.
"""

from __future__ import annotations

from collections.abc import Iterator
import itertools
import json
from pathlib import Path
from typing import Any, Final

from hassil import Intents
from hassil.intents import SlotList, TextSlotList
from hassil.sample import sample_intents
import home_assistant_intents

REPO: Final = Path(__file__).resolve().parents[1]
HOUSEHOLD: Final = REPO / "bench" / "data" / "household"
MULTITURN: Final = REPO / "bench" / "data" / "multiturn"
INTENTS: Final = Path(home_assistant_intents.__file__).parent / "data"
_NAMES: Final = ["Leo", "Mia", "Küche", "Oma Rosi", "Wohnzimmer", "Garage"]
_PER_INTENT: Final = 6


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as stream:
        for line in stream:
            if line.strip():
                yield json.loads(line)


def household() -> Iterator[tuple[str, str]]:
    """(language, text) of every household memory, question and paraphrase."""
    for path in sorted(HOUSEHOLD.glob("*.jsonl")):
        for row in _rows(path):
            for key in ("memory", "question", "paraphrase"):
                if isinstance(row.get(key), str):
                    yield path.stem, row[key]


def multiturn() -> Iterator[tuple[str, str]]:
    """(language, text) of the multi-turn benchmark's turns and memories."""
    for path in sorted(MULTITURN.glob("*.jsonl")):
        for row in _rows(path):
            if isinstance(row.get("text"), str):
                yield path.stem, row["text"]
            for turn in row.get("turns") or []:
                text = turn.get("text") if isinstance(turn, dict) else turn
                if isinstance(text, str):
                    yield path.stem, text


def intents() -> Iterator[tuple[str, str]]:
    """(language, sentence) sampled from Home Assistant's intents."""
    names: SlotList = TextSlotList.from_strings(_NAMES)
    lists = dict.fromkeys(("name", "area", "floor"), names)
    for path in sorted(INTENTS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        sampled = sample_intents(
            Intents.from_dict(data),
            slot_lists=lists,
            max_sentences_per_intent=_PER_INTENT,
            expand_ranges=False,
        )
        for _intent, text in itertools.islice(sampled, 2000):
            yield path.stem, text


def combinations() -> Iterator[tuple[str, str]]:
    """Join each household memory and a question of its language into one text."""
    by_language: dict[str, tuple[list[str], list[str]]] = {}
    for path in sorted(HOUSEHOLD.glob("*.jsonl")):
        memories, questions = by_language.setdefault(path.stem, ([], []))
        for row in _rows(path):
            if isinstance(row.get("memory"), str):
                memories.append(row["memory"])
            if isinstance(row.get("question"), str):
                questions.append(row["question"])
    for language, (memories, questions) in by_language.items():
        for index, memory in enumerate(memories):
            for step in (1, 7, 19):
                if questions:
                    yield (
                        language,
                        f"{memory} {questions[(index * step) % len(questions)]}",
                    )


def sentences() -> list[tuple[str, str]]:
    """Every (language, text), first occurrence kept, in a fixed order."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for language, text in itertools.chain(
        household(), multiturn(), intents(), combinations()
    ):
        if text and text not in seen:
            seen.add(text)
            out.append((language, text))
    return out
