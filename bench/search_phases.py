"""Where a hybrid query's time goes: each step of `HybridSearch.search`, timed in place.

Issue #25 asks for the hybrid search's p95 near a brute-force scan's; this
says which steps hold a query's critical path. Over bench/engine.py's data
(its `--data` folder: `memories-N.db`, `queries-N.json`, `queries-N.npy`,
as bench/peers.py reuses it), every hybrid query is timed from the start of
`HybridSearch.search`: when the keyword query was built (term counts read),
when the keyword side and the vector side ended, then the completion, the
fusion and the hits' read, each with its start and end. Times are paired
per query, so the table also gives how often the vector side ended last
and the gap between the later side's end and the completion's start.

    ../shared/py314/run .venv/bin/python bench/search_phases.py \
        --data bench/out/peers-data --size 100000 [--mode keyword] \
        [--engine bench/out/wt/custom_components/memory]

`--mode keyword` times the same texts without their vectors (the
keyword-only search the #25 target compares with the vector stage).

The steps are timed by wrapping the engine's own methods (a few microseconds
each); the figures are the wall times a query sees, not CPU.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable, Sequence
import functools
import importlib
import json
from pathlib import Path
import sys
import time
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
ENGINE = REPO / "custom_components" / "memory"

# (label, class path in the engine, method, async?) in the order they run.
STEPS = (
    ("keyword query", "search.hybrid", "HybridSearch", "keyword_query", True),
    ("keyword side", "search.hybrid", "HybridSearch", "_keyword", True),
    ("vector side", "search.hybrid", "HybridSearch", "_semantic", True),
    ("completion", "search.hybrid", "HybridSearch", "_complete_keyword", True),
    ("fusion", "search.candidates", "Candidates", "fused", False),
    ("hits", "search.memories", "MemoryCorpus", "hits", True),
)


class Timeline:
    """Each step's start and end (ms after the search began), query by query."""

    def __init__(self) -> None:
        """Start empty."""
        self.start = 0.0
        self.queries: list[dict[str, float]] = []

    def mark(self, name: str) -> None:
        """Note `name` now, in the current query (the latest of repeated steps)."""
        self.queries[-1][name] = (time.perf_counter() - self.start) * 1000

    def begin(self) -> None:
        """Start timing a new query."""
        self.start = time.perf_counter()
        self.queries.append({})

    def wrap(self, engine: str) -> None:
        """Time the engine's steps (`STEPS`) and its `HybridSearch.search`."""
        for label, module, owner, method, is_async in STEPS:
            cls = getattr(importlib.import_module(f"{engine}.{module}"), owner)
            setattr(cls, method, self._timed(getattr(cls, method), label, is_async))
        hybrid = importlib.import_module(f"{engine}.search.hybrid").HybridSearch
        search = hybrid.search

        @functools.wraps(search)
        async def timed_search(*args: Any, **kwargs: Any) -> Any:
            self.begin()
            result = await search(*args, **kwargs)
            self.mark("search end")
            return result

        hybrid.search = timed_search

    def _timed(
        self, method: Callable[..., Any], label: str, is_async: bool
    ) -> Callable[..., Any]:
        if is_async:

            @functools.wraps(method)
            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                self.mark(f"{label} start")
                result = await method(*args, **kwargs)
                self.mark(f"{label} end")
                return result

            return timed_async

        @functools.wraps(method)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.mark(f"{label} start")
            result = method(*args, **kwargs)
            self.mark(f"{label} end")
            return result

        return timed

    def summary(self) -> dict[str, Any]:
        """Percentiles of each mark, and the paired figures, over the queries."""
        marks = sorted(
            {name for query in self.queries for name in query},
            key=lambda name: np.median([q[name] for q in self.queries if name in q]),
        )
        table = {
            name: _percentiles([q[name] for q in self.queries if name in q])
            for name in marks
        }
        both = [
            q
            for q in self.queries
            if {"keyword side end", "vector side end", "completion start"} <= set(q)
        ]
        paired: dict[str, Any] = {}
        if both:
            later = [max(q["keyword side end"], q["vector side end"]) for q in both]
            paired = {
                "vector side last": float(
                    np.mean(
                        [q["vector side end"] > q["keyword side end"] for q in both]
                    )
                ),
                "after both sides": _percentiles(
                    [q["search end"] - end for q, end in zip(both, later, strict=True)]
                ),
                "wait before completion": _percentiles(
                    [
                        q["completion start"] - end
                        for q, end in zip(both, later, strict=True)
                    ]
                ),
            }
        return {"queries": len(self.queries), "marks": table, "paired": paired}


def _percentiles(values: Sequence[float]) -> dict[str, float]:
    return {
        "p50": round(float(np.percentile(values, 50)), 3),
        "p95": round(float(np.percentile(values, 95)), 3),
    }


async def measure(
    search: Callable[[Any], Awaitable[Any]],
    plans: Sequence[Any],
    timeline: Timeline,
    warmup: int,
) -> dict[str, Any]:
    """Run `warmup` plans untimed, then every plan; return `timeline.summary()`."""
    for plan in plans[:warmup]:
        await search(plan)
    timeline.queries.clear()
    for plan in plans:
        await search(plan)
    return timeline.summary()


def markdown(summary: dict[str, Any]) -> str:
    """Render the summary as a Markdown table and a line of paired figures."""
    lines = [
        (
            f"{summary['queries']} {summary.get('mode', 'hybrid')} queries; "
            "ms after the search began"
        ),
        "",
        "| step | p50 | p95 |",
        "|---|---:|---:|",
    ]
    for name, figures in summary["marks"].items():
        lines.append(f"| {name} | {figures['p50']:.3f} | {figures['p95']:.3f} |")
    paired = summary["paired"]
    if paired:
        after, wait = paired["after both sides"], paired["wait before completion"]
        lines += [
            "",
            (
                f"vector side ended last in {paired['vector side last']:.0%} of "
                f"queries; after both sides ended: {after['p50']:.3f} / "
                f"{after['p95']:.3f} ms (p50 / p95), of which before the "
                f"completion began {wait['p50']:.3f} / {wait['p95']:.3f}"
            ),
        ]
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Open the size's store with the engine given and time its hybrid queries."""
    engine_dir = Path(args.engine).resolve()
    sys.path.insert(0, str(engine_dir))
    timeline = Timeline()
    timeline.wrap("engine")
    engine = importlib.import_module("engine")
    data = Path(args.data)
    queries = json.loads((data / f"queries-{args.size}.json").read_text())
    vectors = np.load(data / f"queries-{args.size}.npy")
    store = engine.MemoryStore(
        str(data / f"memories-{args.size}.db"), model="bench", vector_backend="numpy"
    )
    await store.open()
    try:
        plans = [
            engine.SearchQuery(
                text=text,
                vector=None if args.mode == "keyword" else vectors[k],
                scopes=tuple(queries["scopes"][k]),
                limit=10,
            )
            for k, text in enumerate(queries["texts"])
        ][: args.queries]
        summary = await measure(store.search, plans, timeline, args.warmup)
        return summary | {"mode": args.mode}
    finally:
        await store.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the arguments, time the steps, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="bench/engine.py's --data folder")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument(
        "--mode",
        choices=("hybrid", "keyword"),
        default="hybrid",
        help="time hybrid queries, or the same texts without their vectors",
    )
    parser.add_argument(
        "--engine", default=str(ENGINE), help="folder holding the `engine` package"
    )
    parser.add_argument("--json", help="also write the summary here")
    args = parser.parse_args(argv)
    summary = asyncio.run(run(args))
    print(markdown(summary))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
