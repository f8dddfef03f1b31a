"""Device commands: skip rate on Home Assistant's sentences, false skips, speed.

Run from the repository root in the Python 3.14 environment:

    python bench/device_commands.py                  # all ten languages
    python bench/device_commands.py --json bench/out/device_commands.json
    python bench/device_commands.py --engine DIR     # another version's rules

Digestion skips a conversation of nothing but device commands, so this
measures `is_device_command` of `engine/digestion/device_commands.py` three ways:

- skip rate on Home Assistant's own intent sentences: every language's
  templates from the installed `home_assistant_intents` package, expanded by
  `hassil` with fixed area, name and floor values (at most `--expand`
  sentences per intent, numeric ranges not expanded), then at most
  `--per-intent` of them per intent drawn with `random.Random(--seed)`,
  afresh for every language. Each of these is a plain command or question:
  the higher the rate, the more LLM calls saved.
- the labelled file `bench/data/device_command_statements.jsonl`, one
  `{"lang": ..., "text": ..., "command": ...}` per line: household
  statements (`command: false`) that must never be skipped, since a false
  skip loses what they say for good, and plain commands (`true`), where a
  miss only costs one LLM call. Both errors are counted apart.
- speed: microseconds per call over all those texts, the median of `--runs`
  passes, and the time the first import takes (it compiles the patterns).

`--engine DIR` measures the `engine` package in DIR instead of this
checkout's (`custom_components/memory`): `engine/digestion/device_commands.py` if it
has one, else `engine/digestion.py`, where the English-only rules lived.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
import importlib
from importlib import metadata
import json
import os
from pathlib import Path
import platform
import random
import statistics
import sys
import time
from typing import TYPE_CHECKING, Any, Final

from hassil.intents import Intents, SlotList, TextSlotList
from hassil.sample import sample_intents
import home_assistant_intents

if TYPE_CHECKING:
    from bench._machine import cpu_model
else:
    from _machine import cpu_model

REPO: Final = Path(__file__).resolve().parents[1]
ENGINE_DIR: Final = REPO / "custom_components" / "memory"
STATEMENTS: Final = REPO / "bench" / "data" / "device_command_statements.jsonl"
LANGUAGES: Final = ("en", "de", "fr", "es", "it", "nl", "pt", "pl", "sv", "da")
# Slot values the sampled sentences are filled with: two areas and two
# device names per language, one floor.
AREAS: Final = {
    "en": ("kitchen", "living room"),
    "de": ("Küche", "Wohnzimmer"),
    "fr": ("cuisine", "salon"),
    "es": ("cocina", "salón"),
    "it": ("cucina", "soggiorno"),
    "nl": ("keuken", "woonkamer"),
    "pt": ("cozinha", "sala"),
    "pl": ("kuchnia", "salon"),
    "sv": ("kök", "vardagsrum"),
    "da": ("køkken", "stue"),
}
NAMES: Final = {
    "en": ("ceiling light", "fan"),
    "de": ("Deckenlampe", "Ventilator"),
    "fr": ("plafonnier", "ventilateur"),
    "es": ("lámpara", "ventilador"),
    "it": ("lampadario", "ventilatore"),
    "nl": ("plafondlamp", "ventilator"),
    "pt": ("candeeiro", "ventoinha"),
    "pl": ("lampa sufitowa", "wentylator"),
    "sv": ("taklampa", "fläkt"),
    "da": ("loftlampe", "ventilator"),
}
FLOORS: Final = ("upstairs",)

type Check = Callable[[str], bool]


def load_check(engine_dir: Path) -> tuple[Check, str, float]:
    """`is_device_command` of the `engine` package in `engine_dir`.

    Returns the function, the module it came from, and the seconds its
    import took after the rest of the package (the patterns compile then).
    """
    sys.path.insert(0, str(engine_dir))
    importlib.import_module("engine")
    started = time.perf_counter()
    try:
        module = importlib.import_module("engine.digestion.device_commands")
    except ModuleNotFoundError as err:
        if err.name != "engine.digestion.device_commands":
            raise
        module = importlib.import_module("engine.digestion")
    seconds = time.perf_counter() - started
    check: Check = module.is_device_command
    return check, str(module.__file__), seconds


def intent_sentences(
    language: str, *, expand: int, per_intent: int, seed: int
) -> list[tuple[str, str]]:
    """(intent, sentence) pairs sampled from Home Assistant's templates."""
    data = home_assistant_intents.get_intents(language)
    if data is None:
        raise SystemExit(f"home_assistant_intents has no sentences for {language}")
    slots: dict[str, SlotList] = {
        "area": TextSlotList.from_strings(AREAS[language]),
        "name": TextSlotList.from_strings(NAMES[language]),
        "floor": TextSlotList.from_strings(FLOORS),
    }
    by_intent: defaultdict[str, list[str]] = defaultdict(list)
    for intent, text in sample_intents(
        Intents.from_dict(data),
        slots,
        max_sentences_per_intent=expand,
        expand_ranges=False,
    ):
        by_intent[intent].append(text.strip())
    rng = random.Random(seed)
    return [
        (intent, text)
        for intent, texts in sorted(by_intent.items())
        for text in rng.sample(texts, min(per_intent, len(texts)))
    ]


@dataclass(frozen=True, slots=True)
class Labelled:
    """One line of the labelled file."""

    lang: str
    text: str
    command: bool


def load_labelled(path: Path) -> list[Labelled]:
    """Read the labelled statements and commands."""
    rows: list[Labelled] = []
    for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        raw = json.loads(line)
        if not isinstance(raw.get("command"), bool) or raw.get("lang") not in (
            LANGUAGES
        ):
            raise SystemExit(f"{path}:{number}: needs lang, text and command")
        rows.append(Labelled(raw["lang"], str(raw["text"]), raw["command"]))
    return rows


def skip_rates(
    check: Check, sentences: dict[str, list[tuple[str, str]]]
) -> dict[str, dict[str, Any]]:
    """Per language: sentences, skipped, rate, and the sentences missed."""
    results: dict[str, dict[str, Any]] = {}
    for language, pairs in sentences.items():
        missed = [(intent, text) for intent, text in pairs if not check(text)]
        skipped = len(pairs) - len(missed)
        results[language] = {
            "sentences": len(pairs),
            "skipped": skipped,
            "rate": round(skipped / len(pairs), 4) if pairs else 0.0,
            "missed": [f"{intent}: {text}" for intent, text in missed],
        }
    return results


def labelled_errors(
    check: Check, rows: Sequence[Labelled]
) -> dict[str, dict[str, Any]]:
    """Per language: statements skipped by mistake and commands missed."""
    results: dict[str, dict[str, Any]] = {
        language: {
            "statements": 0,
            "false_skips": [],
            "commands": 0,
            "missed_commands": [],
        }
        for language in LANGUAGES
        if any(row.lang == language for row in rows)
    }
    for row in rows:
        entry = results[row.lang]
        skipped = check(row.text)
        if row.command:
            entry["commands"] += 1
            if not skipped:
                entry["missed_commands"].append(row.text)
        else:
            entry["statements"] += 1
            if skipped:
                entry["false_skips"].append(row.text)
    return results


def speed(check: Check, texts: Sequence[str], runs: int) -> dict[str, float]:
    """Microseconds per call: median, fastest and slowest of `runs` passes."""
    per_call: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        for text in texts:
            check(text)
        per_call.append(1e6 * (time.perf_counter() - started) / len(texts))
    return {
        "calls_per_run": len(texts),
        "median_us": round(statistics.median(per_call), 2),
        "min_us": round(min(per_call), 2),
        "max_us": round(max(per_call), 2),
    }


def _environment(module: str) -> dict[str, Any]:
    model = cpu_model(platform.processor() or platform.machine())
    return {
        "module": module,
        "cpu": model,
        "cores": os.cpu_count(),
        "load_average": os.getloadavg(),
        "python": platform.python_version(),
        "hassil": metadata.version("hassil"),
        "home_assistant_intents": metadata.version("home-assistant-intents"),
    }


def markdown(report: dict[str, Any]) -> str:
    """Render the report as Markdown tables."""
    env = report["environment"]
    settings = report["settings"]
    lines = [
        f"`{report['command']}`",
        "",
        (
            f"{env['module']} · {env['cpu']} ({env['cores']} cores) · Python "
            f"{env['python']} · hassil {env['hassil']} · home-assistant-intents "
            f"{env['home_assistant_intents']} · load "
            f"{env['load_average'][0]:.2f}"
        ),
        "",
        (
            f"### Home Assistant's intent sentences (≤ {settings['per_intent']} "
            f"per intent, seed {settings['seed']})"
        ),
        "",
        "| language | sentences | skipped | skip rate |",
        "|---|---|---|---|",
    ]
    for language, entry in report["intent_sentences"].items():
        lines.append(
            f"| {language} | {entry['sentences']} | {entry['skipped']} "
            f"| {100 * entry['rate']:.1f} % |"
        )
    lines += [
        "",
        f"### Labelled statements and commands (`{settings['statements']}`)",
        "",
        "| language | statements | false skips | commands | missed commands |",
        "|---|---|---|---|---|",
    ]
    labelled = report["labelled"]
    for language, entry in labelled.items():
        lines.append(
            f"| {language} | {entry['statements']} | {len(entry['false_skips'])} "
            f"| {entry['commands']} | {len(entry['missed_commands'])} |"
        )
    total = {
        key: sum(len(entry[key]) for entry in labelled.values())
        for key in ("false_skips", "missed_commands")
    }
    lines.append(
        f"| all | {sum(e['statements'] for e in labelled.values())} "
        f"| {total['false_skips']} | {sum(e['commands'] for e in labelled.values())} "
        f"| {total['missed_commands']} |"
    )
    for key, title in (
        ("false_skips", "False skips"),
        ("missed_commands", "Missed commands"),
    ):
        if total[key]:
            lines += ["", f"{title}:", ""]
            lines += [
                f"- {language}: {text}"
                for language, entry in labelled.items()
                for text in entry[key]
            ]
    timing = report["speed"]
    lines += [
        "",
        "### Speed",
        "",
        (
            "| µs per message (median) | fastest run | slowest run "
            "| calls per run | first import |"
        ),
        "|---|---|---|---|---|",
        (
            f"| {timing['median_us']:.1f} | {timing['min_us']:.1f} "
            f"| {timing['max_us']:.1f} | {timing['calls_per_run']} "
            f"| {report['import_ms']:.0f} ms |"
        ),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Measure and print the tables; `--json` also writes every detail."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    parser.add_argument("--statements", type=Path, default=STATEMENTS)
    parser.add_argument("--per-intent", type=int, default=25)
    parser.add_argument("--expand", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--engine",
        type=Path,
        default=ENGINE_DIR,
        help="folder with the `engine` package to measure",
    )
    parser.add_argument("--json", type=Path, help="also write the full results")
    parser.add_argument(
        "--missed", type=int, default=0, help="print N missed sentences a language"
    )
    args = parser.parse_args(argv)
    languages = [code for code in args.languages.split(",") if code]
    unknown = set(languages) - set(LANGUAGES)
    if unknown:
        parser.error(f"unknown languages: {', '.join(sorted(unknown))}")

    check, module, import_seconds = load_check(args.engine.resolve())
    sentences = {
        language: intent_sentences(
            language, expand=args.expand, per_intent=args.per_intent, seed=args.seed
        )
        for language in languages
    }
    rows = [row for row in load_labelled(args.statements) if row.lang in languages]
    texts = [text for pairs in sentences.values() for _, text in pairs]
    texts += [row.text for row in rows]
    shown = " ".join(sys.argv[1:] if argv is None else argv)
    report: dict[str, Any] = {
        "command": f"python bench/device_commands.py {shown}".strip(),
        "environment": _environment(module),
        "settings": {
            "languages": languages,
            "per_intent": args.per_intent,
            "expand": args.expand,
            "seed": args.seed,
            "runs": args.runs,
            "statements": str(args.statements.resolve().relative_to(REPO))
            if args.statements.resolve().is_relative_to(REPO)
            else str(args.statements),
        },
        "import_ms": round(1000 * import_seconds, 1),
        "intent_sentences": skip_rates(check, sentences),
        "labelled": labelled_errors(check, rows),
        "speed": speed(check, texts, args.runs),
    }
    print(markdown(report))
    if args.missed:
        for language, entry in report["intent_sentences"].items():
            print(f"\n{language}, missed:")
            print("\n".join(f"  {text}" for text in entry["missed"][: args.missed]))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
