"""bench/search_phases.py on a small real store: each step of a hybrid search, in order.

A store of 60 memories with vectors and a few queries, in the layout of
bench/engine.py's `--data` folder, timed by the script in a subprocess
(it wraps the engine's methods: never in this test process). It checks the
steps and the paired figures it reports, never how fast anything is.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np

from custom_components.memory.engine import MemoryStore, NewMemory, Origin, Source
from tests.bench_scripts import run_bench

SIZE = 60
TOPICS = ("kitchen boiler", "garden hedge", "car tyres", "school trip", "cat food")


async def _build(folder: Path) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((SIZE, 16)).astype(np.float32)
    store = MemoryStore(str(folder / f"memories-{SIZE}.db"), model="bench")
    await store.open()
    try:
        await store.add_many(
            [
                NewMemory(
                    content=f"Note {i} about the {TOPICS[i % len(TOPICS)]}",
                    source=Source(origin=Origin.TOOL),
                )
                for i in range(SIZE)
            ],
            vectors=list(vectors),
        )
    finally:
        await store.close()
    queries = {
        "texts": [f"the {topic}" for topic in TOPICS],
        "scopes": [["household"]] * 5,
    }
    (folder / f"queries-{SIZE}.json").write_text(json.dumps(queries))
    np.save(folder / f"queries-{SIZE}.npy", vectors[: len(TOPICS)])


def _phases(folder: Path, *options: str) -> tuple[dict[str, Any], str]:
    """Build the store in `folder`, run the script on it; its summary and output."""
    asyncio.run(_build(folder))
    out = folder / "phases.json"
    proc = run_bench(
        "search_phases.py",
        "--data",
        str(folder),
        "--size",
        str(SIZE),
        "--warmup",
        "1",
        *options,
        "--json",
        str(out),
    )
    return json.loads(out.read_text()), proc.stdout


def test_the_steps_of_a_hybrid_search_are_timed_in_order(tmp_path: Path) -> None:
    """Keyword query, both sides, completion, fusion, hits: each timed, in order."""
    summary, stdout = _phases(tmp_path)
    assert summary["queries"] == len(TOPICS)
    marks = summary["marks"]
    for step in (
        "keyword query",
        "keyword side",
        "vector side",
        "completion",
        "fusion",
        "hits",
    ):
        assert marks[f"{step} start"]["p50"] <= marks[f"{step} end"]["p50"]
    assert marks["keyword query end"]["p50"] <= marks["keyword side end"]["p50"]
    assert marks["fusion end"]["p50"] <= marks["hits start"]["p50"]
    assert marks["hits end"]["p50"] <= marks["search end"]["p50"]
    paired = summary["paired"]
    assert 0.0 <= paired["vector side last"] <= 1.0
    assert paired["wait before completion"]["p50"] >= 0.0
    assert "| completion start |" in stdout


def test_keyword_mode_times_the_same_texts_without_their_vectors(
    tmp_path: Path,
) -> None:
    """`--mode keyword`: the texts alone; the vector side has nothing to do."""
    summary, stdout = _phases(tmp_path, "--mode", "keyword")
    assert summary["mode"] == "keyword"
    # Paired query by query (percentiles of two marks are not): the vector
    # side, with nothing to do, never ends after the keyword side.
    assert summary["paired"]["vector side last"] == 0.0
    assert stdout.startswith(f"{len(TOPICS)} keyword queries")
