"""How long an import of many memories takes: parse, preview, import, search.

Run from the repository root in the Python 3.14 environment:

    python bench/import_rate.py                    # 100,000 memories, 1 run
    python bench/import_rate.py --count 20000 --runs 3 --existing 20000

Writes a file of `--count` English memories of 8 to 20 words (a fixed seed)
as our lossless export (`memories.json`, tags and times included) or as
plain lines (`--format lines`), then, on a fresh keyword-only store that
already holds `--existing` other memories (so the near-duplicate check has
work to do), times reading the file, the preview and the import (one
transaction), and checks that keyword search finds an imported memory at
once. The issue's target: 100,000 memories in 30 seconds or less.
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime
import json
from pathlib import Path
import random
import sys
import tempfile
import time
from typing import Final

REPO: Final = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench._machine import cpu_model  # noqa: E402
from bench.add_rate import WORDS  # noqa: E402
from custom_components.memory.engine import (  # noqa: E402
    HOUSEHOLD,
    MemoryStore,
    NewMemory,
    Origin,
    SearchQuery,
    Source,
)
from custom_components.memory.engine.exchange.import_formats import read_import  # noqa: E402
from custom_components.memory.engine.exchange.importing import (  # noqa: E402
    preview_import,
    run_import,
)


def sentences(count: int, seed: int) -> list[str]:
    """Return `count` different sentences of 8 to 20 words."""
    rng = random.Random(seed)
    return [
        " ".join(rng.choices(WORDS, k=rng.randint(8, 20))) + f" {seed}x{i}"
        for i in range(count)
    ]


def export_file(texts: list[str]) -> bytes:
    """Our lossless export of `texts`, each with a tag and a creation time."""
    records = [
        {
            "id": i + 1,
            "scope": HOUSEHOLD,
            "type": "fact",
            "content": text,
            "tags": ["bench"],
            "status": "active",
            "created_at": datetime.fromtimestamp(1_700_000_000 + i, UTC).isoformat(),
        }
        for i, text in enumerate(texts)
    ]
    document = {"format": "assist-memory", "version": 1, "memories": records}
    return json.dumps(document).encode()


async def one_run(count: int, existing: int, kind: str) -> dict[str, float]:
    """Import `count` memories into a store holding `existing`; return timings."""
    texts = sentences(count, 1)
    data = export_file(texts) if kind == "json" else "\n".join(texts).encode()
    with tempfile.TemporaryDirectory(prefix="import-rate-") as folder:
        store = MemoryStore(Path(folder) / "m.db", model=None)
        await store.open()
        try:
            source = Source(origin=Origin.ACTION)
            others = sentences(existing, 2)
            for start in range(0, existing, 500):
                await store.add_many(
                    [
                        NewMemory(content=t, source=source)
                        for t in others[start : start + 500]
                    ]
                )
            started = time.perf_counter()
            file = await asyncio.to_thread(read_import, data, timezone=UTC)
            parsed = time.perf_counter()
            owners = dict.fromkeys(file.owners, HOUSEHOLD)
            plan = await preview_import(store, file, owners)
            previewed = time.perf_counter()
            result = await run_import(store, file, owners, source_name="bench")
            imported = time.perf_counter()
            hits = await store.search(SearchQuery(text=texts[-1], limit=1))
            if not hits or hits[0].item.id != result.ids[-1]:
                raise SystemExit("keyword search did not find an imported memory")
            if not plan.new == count == len(result.ids):
                raise SystemExit(f"{plan.new} new, {len(result.ids)} imported")
        finally:
            await store.close()
    return {
        "megabytes": len(data) / 1_048_576,
        "parse": parsed - started,
        "preview": previewed - parsed,
        "import": imported - previewed,
        "total": imported - started,
    }


def main() -> None:
    """Print each run's timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--existing", type=int, default=0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--format", choices=("json", "lines"), default="json")
    args = parser.parse_args()
    print(f"CPU: {cpu_model('unknown')}")
    for _ in range(args.runs):
        times = asyncio.run(one_run(args.count, args.existing, args.format))
        print(
            f"{args.count} memories ({args.format}, {times['megabytes']:.1f} MB) "
            f"into {args.existing}: parse {times['parse']:.1f} s, preview "
            f"{times['preview']:.1f} s, import {times['import']:.1f} s, total "
            f"{times['total']:.1f} s = {args.count / times['total']:.0f} memories/s"
        )


if __name__ == "__main__":
    main()
