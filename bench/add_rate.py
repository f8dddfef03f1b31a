"""Bulk-add throughput of the engine: memories per second through `add_many`.

Run from the repository root in the Python 3.14 environment:

    python bench/add_rate.py                       # this checkout, 3 runs
    python bench/add_rate.py --engine DIR          # another checkout's engine

Adds 10,000 English memories of 8 to 20 words (a fixed seed) in batches of
500 to a fresh keyword-only store per run and prints memories per second of
each run and their median. Run it alternately with `--engine` on an older
checkout to compare the two on the same machine.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
from pathlib import Path
import random
import statistics
import sys
import tempfile
import time
from typing import Any, Final

REPO: Final = Path(__file__).resolve().parent.parent
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


async def one_run(engine: Any, count: int, batch: int) -> float:
    """Add `count` memories to a fresh store; return memories per second."""
    rng = random.Random(1)
    memories = [
        engine.NewMemory(
            content=" ".join(rng.choices(WORDS, k=rng.randint(8, 20))) + f" {i}",
            source=engine.Source(origin=engine.Origin.ACTION),
        )
        for i in range(count)
    ]
    with tempfile.TemporaryDirectory(prefix="add-rate-") as folder:
        store = engine.MemoryStore(Path(folder) / "m.db", model=None)
        await store.open()
        try:
            started = time.perf_counter()
            for start in range(0, count, batch):
                await store.add_many(memories[start : start + batch])
            return count / (time.perf_counter() - started)
        finally:
            await store.close()


def main() -> None:
    """Print each run's rate and the median."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--engine", type=Path, default=REPO / "custom_components" / "memory"
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args()
    sys.path.insert(0, str(args.engine))
    engine = importlib.import_module("engine")
    rates = [
        asyncio.run(one_run(engine, args.count, args.batch)) for _ in range(args.runs)
    ]
    print(
        f"{args.engine}: {[round(rate) for rate in rates]} memories/s, "
        f"median {round(statistics.median(rates))}"
    )


if __name__ == "__main__":
    main()
