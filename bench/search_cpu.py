"""CPU per search of two engine copies on the same database, alternated.

Run from the repository root in the Python 3.14 environment, on a
database and queries `bench/engine.py --data DIR` built (build them with
the older engine: a newer one migrates its private copy, an older one
refuses a newer schema):

    python bench/search_cpu.py --engine A/custom_components/memory --compare B/custom_components/memory --database DIR/memories-10000-before.db --queries DIR/queries-10000-before.json --runs 3

Each run, in its own process, opens a private copy of the database, warms up on 20 queries, then times the
CPU of all the process's threads over every hybrid query (text and
vector, limit 10). The engines alternate run by run; the medians are
printed. CPU is steadier than latency when other work shares the machine.
With `--count`, it also counts the SQL statements and Python function
calls of the same queries under `cProfile`.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib
import json
from pathlib import Path
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Final

import numpy as np

WARMUP: Final = 20
STATEMENTS: Final = ("execute", "executemany")


async def _measure(
    engine_dir: str, db: Path, queries: Path, count: bool
) -> dict[str, float]:
    sys.path.insert(0, str(Path(engine_dir).resolve()))
    engine: Any = importlib.import_module("engine")
    texts = json.loads(queries.read_text())["texts"]
    vectors = np.load(queries.with_suffix(".npy"))
    plan = [
        engine.SearchQuery(text=text, vector=vectors[i], limit=10)
        for i, text in enumerate(texts)
    ]
    store = engine.MemoryStore(db, model="bench", vector_backend="numpy")
    await store.open()
    try:
        for query in plan[:WARMUP]:
            await store.search(query)
        cpu = time.process_time()
        for query in plan:
            await store.search(query)
        result = {"cpu_ms": (time.process_time() - cpu) / len(plan) * 1000}
        if count:
            # A second pass, counted: the profiler's own cost stays out of the CPU.
            profile = cProfile.Profile()
            profile.enable()
            for query in plan:
                await store.search(query)
            profile.disable()
            stats: Any = pstats.Stats(profile).stats  # type: ignore[attr-defined]
            result["calls"] = float(sum(entry[1] for entry in stats.values()))
            result["statements"] = float(
                sum(
                    entry[1]
                    for (_file, _line, name), entry in stats.items()
                    if any(
                        f"'{kind}' of 'sqlite3.Connection'" in name
                        for kind in STATEMENTS
                    )
                )
            )
        return result
    finally:
        await store.close()


def _run(engine_dir: str, args: argparse.Namespace) -> dict[str, float]:
    source = args.database
    with tempfile.TemporaryDirectory(prefix="search-cpu-") as folder:
        copy = Path(folder) / "m.db"
        shutil.copyfile(source, copy)
        proc = subprocess.run(  # noqa: S603 - our own script, our own arguments
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "--worker",
                json.dumps(
                    [
                        engine_dir,
                        str(copy),
                        str(args.queries),
                        args.count,
                    ]
                ),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Alternate the two engines' runs and print the medians."""
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        engine_dir, db, queries, count = json.loads(sys.argv[2])
        print(
            json.dumps(
                asyncio.run(_measure(engine_dir, Path(db), Path(queries), count))
            )
        )
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", required=True)
    parser.add_argument("--compare", required=True)
    parser.add_argument("--database", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--count", action="store_true")
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {args.engine: [], args.compare: []}
    for run in range(args.runs):
        order = [args.compare, args.engine] if run % 2 else [args.engine, args.compare]
        for engine_dir in order:
            results[engine_dir].append(_run(engine_dir, args))
    for engine_dir, runs in results.items():
        cpu = [run["cpu_ms"] for run in runs]
        line = f"{engine_dir}: CPU per query {statistics.median(cpu):.2f} ms (runs {', '.join(f'{c:.2f}' for c in cpu)})"
        if args.count:
            line += f"; statements {runs[0]['statements']:.0f}, calls {runs[0]['calls']:.0f}"
        print(line)


if __name__ == "__main__":
    main()
