"""Write speed of the engine: bulk `add_many`, single `add`, and the SQL floor.

Run from the repository root in the Python 3.14 environment:

    python bench/add_rate.py                        # this checkout, 3 runs
    python bench/add_rate.py --engine DIR           # another checkout's engine
    python bench/add_rate.py --compare DIR --runs 5 # both, interleaved
    python bench/add_rate.py --vectors              # with 384-dim vectors (numpy)

Each run, in its own process, adds 10,000 English memories of 8 to 20
words (a fixed seed; every third with a tag) in batches of 500 to a fresh
store, then times `--single` more through `add` one at a time (p50), and
then the floor: the same number of single INSERTs of a memory row (its
terms analysed beforehand) through `sqlite3` in autocommit, with the
store's pragmas, so that the memories table's FTS trigger runs: one
transaction and one statement an add, nothing else. Besides wall time it
reports the CPU of all the process's threads per memory (bulk) and per
single add, steadier when other work shares the machine. With
`--compare` the two engines' runs alternate (this one first in even runs)
and the medians are printed side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
from pathlib import Path
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Final

REPO: Final = Path(__file__).resolve().parent.parent
DIM: Final = 384
WORDS: Final = [
    "Mia",
    "Leo",
    "boiler",
    "heating",
    "thermostat",
    "bins",
    "Thursday",
    "dentist",
    "Friday",
    "allergic",
    "nuts",
    "garden",
    "kitchen",
    "birthday",
    "party",
    "school",
    "swimming",
    "lessons",
    "Tuesday",
    "car",
    "service",
    "garage",
    "window",
    "plants",
    "water",
    "the",
    "is",
    "on",
    "at",
    "for",
]


def _memories(engine: Any, count: int, offset: int = 0) -> list[Any]:
    rng = random.Random(1 + offset)
    return [
        engine.NewMemory(
            content=" ".join(rng.choices(WORDS, k=rng.randint(8, 20))) + f" {i}",
            source=engine.Source(origin=engine.Origin.ACTION),
            tags=("house",) if i % 3 == 0 else (),
        )
        for i in range(offset, offset + count)
    ]


def _vectors(count: int, seed: int) -> list[Any]:
    import numpy as np  # noqa: PLC0415 - only with --vectors

    matrix = np.random.default_rng(seed).standard_normal((count, DIM))
    return list(matrix / np.linalg.norm(matrix, axis=1, keepdims=True))


def _floor(path: Path, count: int) -> list[float]:
    """Seconds of single autocommit INSERTs of a memory row (FTS trigger runs)."""
    conn = sqlite3.connect(path, isolation_level=None)
    for pragma in ("foreign_keys = ON", "synchronous = NORMAL", "secure_delete = ON"):
        conn.execute(f"PRAGMA {pragma}")
    rng = random.Random(3)
    rows = []
    for i in range(count):
        text = " ".join(rng.choices(WORDS, k=rng.randint(8, 20))) + f" floor {i}"
        rows.append(("household", "fact", text, text.lower(), "", i, 1.0, 1.0))
    latencies = []
    for row in rows:
        tick = time.perf_counter()
        conn.execute(
            "INSERT INTO memories (scope, type, content, content_key, tags, "
            "valid_from, created_at, updated_at, origin, language, terms, analysed) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'action', 'en', ?4, 1)",
            row,
        )
        latencies.append(time.perf_counter() - tick)
    conn.close()
    return latencies


async def one_run(engine: Any, args: argparse.Namespace) -> dict[str, float]:
    """Bulk-add, then single adds, then the floor, in a fresh store."""
    memories = _memories(engine, args.count)
    singles = _memories(engine, args.single, offset=args.count)
    vectors = _vectors(args.count, 5) if args.vectors else None
    single_vectors = _vectors(args.single, 6) if args.vectors else None
    with tempfile.TemporaryDirectory(prefix="add-rate-") as folder:
        path = Path(folder) / "m.db"
        store = engine.MemoryStore(
            path,
            model="bench" if args.vectors else None,
            vector_backend="numpy",
        )
        await store.open()
        try:
            started, cpu = time.perf_counter(), time.process_time()
            for start in range(0, args.count, args.batch):
                await store.add_many(
                    memories[start : start + args.batch],
                    vectors=None
                    if vectors is None
                    else vectors[start : start + args.batch],
                )
            bulk = args.count / (time.perf_counter() - started)
            # CPU of all the process's threads: steadier than wall time
            # when other work shares the machine.
            bulk_cpu = (time.process_time() - cpu) / args.count
            latencies = []
            cpu = time.process_time()
            for i, memory in enumerate(singles):
                vector = None if single_vectors is None else single_vectors[i]
                tick = time.perf_counter()
                await store.add(memory, vector=vector)
                latencies.append(time.perf_counter() - tick)
            single_cpu = (time.process_time() - cpu) / len(singles)
        finally:
            await store.close()
        floor = _floor(path, args.single)
    return {
        "bulk_per_s": bulk,
        "bulk_cpu_us": bulk_cpu * 1e6,
        "single_p50_ms": statistics.median(latencies) * 1000,
        "single_cpu_us": single_cpu * 1e6,
        "floor_p50_ms": statistics.median(floor) * 1000,
    }


def _run(engine_dir: Path, args: argparse.Namespace) -> dict[str, float]:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker"]
    command += ["--engine", str(engine_dir), "--count", str(args.count)]
    command += ["--batch", str(args.batch), "--single", str(args.single)]
    command += ["--vectors"] if args.vectors else []
    output = subprocess.run(  # noqa: S603 - this script, this interpreter
        command, check=True, capture_output=True, text=True
    )
    result: dict[str, float] = json.loads(output.stdout.splitlines()[-1])
    return result


def main() -> None:
    """Print each run's figures and the medians (per engine with --compare)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--engine", type=Path, default=REPO / "custom_components" / "memory"
    )
    parser.add_argument("--compare", type=Path, help="another checkout's root")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--single", type=int, default=500)
    parser.add_argument("--vectors", action="store_true", help="384-dim, numpy")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        sys.path.insert(0, str(args.engine))
        engine = importlib.import_module("engine")
        print(json.dumps(asyncio.run(one_run(engine, args))))
        return
    folders = [args.engine]
    if args.compare is not None:
        folders.append(args.compare / "custom_components" / "memory")
    runs: dict[Path, list[dict[str, float]]] = {folder: [] for folder in folders}
    for run in range(args.runs):
        for folder in folders if run % 2 == 0 else folders[::-1]:
            result = _run(folder, args)
            runs[folder].append(result)
            print(f"run {run + 1} {folder}: {json.dumps(result)}", flush=True)
    for folder, results in runs.items():
        medians = {
            key: statistics.median(result[key] for result in results)
            for key in results[0]
        }
        print(
            f"{folder}: bulk {medians['bulk_per_s']:,.0f}/s "
            f"({medians['bulk_cpu_us']:.0f} µs CPU each), single add p50 "
            f"{medians['single_p50_ms']:.3f} ms ({medians['single_cpu_us']:.0f} µs CPU), "
            "floor p50 "
            f"{medians['floor_p50_ms']:.3f} ms "
            f"({medians['single_p50_ms'] / medians['floor_p50_ms']:.1f}x)"
        )


if __name__ == "__main__":
    main()
