"""pgvector on PostgreSQL: load rate, exact scan, HNSW build and search (#26).

Run from the repository root in the Python 3.14 environment:

    python bench/pg_vectors.py --sizes 10000,100000 \
        --locomo ../shared/bench/locomo

It starts its own PostgreSQL 18 + pgvector with `script/postgres start DIR`
(or uses `--url`, a superuser's URL), and stops it at the end. For each set
it makes a fresh database and loads the vectors through `PgVectorIndex.add`
(binary form; the first set also in pgvector's text form, for the choice of
wire format), then asks for the engine's k = 200 candidates with an exact
scan, builds the HNSW index, and asks again at each `--ef` value, for k = 10
(recall@10 of HNSW's own top 10) and for k = 200 (recall@10 after the
engine's exact re-scoring of the 200: are the exact top 10 among them).
Recall is against numpy's exact top 10 in float64; the planner's scan
(HNSW or exact) is read from EXPLAIN with the same settings. Latencies are wall
time per query on one connection over 127.0.0.1 (BEGIN, SET LOCAL, the
query, COMMIT), p50 and p95 of each run, the median over `--runs` runs.
Sets: bench/engine.py's synthetic corpus (queries near a memory) at each
size, and LoCoMo's all-MiniLM-L6-v2 vectors (its questions against its
turns, facts and summaries). The process lowers its priority (nice 10), and
the server it starts inherits it: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
from pathlib import Path
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit
import uuid

import asyncpg
import numpy as np
import numpy.typing as npt

REPO: Final = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from custom_components.memory.engine.postgres.vectors import (  # noqa: E402
    HNSW_EF_CONSTRUCTION,
    HNSW_M,
    TABLE,
    PgVectorIndex,
    index_name,
    register_vector,
)

type Floats = npt.NDArray[np.float32]

DIM: Final = 384
MODEL: Final = "bench"
CANDIDATES: Final = 200  # SEMANTIC_POOL x SEMANTIC_OVERSAMPLE
BATCH: Final = 5000
TEXT_ROWS: Final = 10_000
MIB: Final = 1024 * 1024


def _vector_index() -> Any:
    """bench/vector_index.py (its corpus loaders), a file, not a package."""
    spec = importlib.util.spec_from_file_location(
        "bench_vector_index", REPO / "bench/vector_index.py"
    )
    assert spec is not None and spec.loader is not None  # noqa: S101
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _database_url(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def _percentiles(seconds: list[float]) -> tuple[float, float]:
    ms = np.asarray(seconds) * 1000.0
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def _recall(found: list[list[int]], exact: npt.NDArray[np.int64]) -> float:
    hits = sum(
        len(set(ids) & set(top.tolist())) for ids, top in zip(found, exact, strict=True)
    )
    return hits / exact.size


async def _timed_knn(
    index: PgVectorIndex, queries: Floats, k: int, runs: int, *, exact: bool = False
) -> tuple[float, float, list[list[int]]]:
    """Median p50 / p95 (ms) over `runs`, and the ids of the last run."""
    p50s: list[float] = []
    p95s: list[float] = []
    found: list[list[int]] = []
    for _run in range(runs):
        seconds: list[float] = []
        found = []
        for query in queries:
            tick = time.perf_counter()
            rows = await index.knn(query, k, exact=exact)
            seconds.append(time.perf_counter() - tick)
            found.append([item_id for item_id, _ in rows])
        p50, p95 = _percentiles(seconds)
        p50s.append(p50)
        p95s.append(p95)
    return statistics.median(p50s), statistics.median(p95s), found


async def _text_load_rate(url: str, vectors: Floats) -> float:
    """Rows a second loaded in pgvector's text form (`[0.1,...]`), no codec."""
    connection = await asyncpg.connect(url)
    try:
        start = time.perf_counter()
        rows = [
            ("text-form", n, "[" + ",".join(map(repr, row.tolist())) + "]")
            for n, row in enumerate(vectors)
        ]
        async with connection.transaction():
            await connection.executemany(
                f"INSERT INTO {TABLE} (model, memory_id, embedding)"  # noqa: S608
                " VALUES ($1, $2, $3::text::vector)",
                rows,
            )
        rate = len(vectors) / (time.perf_counter() - start)
        await connection.execute(f"DELETE FROM {TABLE} WHERE model = 'text-form'")  # noqa: S608
    finally:
        await connection.close()
    return rate


async def measure(
    admin_url: str,
    vectors: Floats,
    queries: Floats,
    args: argparse.Namespace,
    *,
    text_form: bool,
) -> dict[str, Any]:
    """Load one set into a fresh database, time exact and HNSW search."""
    name = f"bench_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(admin_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = _database_url(admin_url, name)
    result: dict[str, Any] = {"rows": len(vectors), "queries": len(queries)}
    try:
        connection = await asyncpg.connect(url)
        await connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
        await connection.close()
        pool = await asyncpg.create_pool(
            url, min_size=1, max_size=1, init=register_vector
        )
        try:
            index = PgVectorIndex(
                pool, MODEL, vectors.shape[1], threshold=len(vectors) + 1
            )
            await index.create()
            ids = list(range(1, len(vectors) + 1))
            start = time.perf_counter()
            for first in range(0, len(vectors), BATCH):
                await index.add(
                    ids[first : first + BATCH], vectors[first : first + BATCH]
                )
            result["load_rate"] = len(vectors) / (time.perf_counter() - start)
            if text_form:
                result["text_load_rate"] = await _text_load_rate(
                    url, vectors[:TEXT_ROWS]
                )
            async with pool.acquire() as connection:
                await connection.execute(f"VACUUM ANALYZE {TABLE}")
                result["table_mib"] = (
                    await connection.fetchval(
                        "SELECT pg_total_relation_size($1::regclass)", TABLE
                    )
                    / MIB
                )
            exact_top = (
                np.argsort(
                    -(queries.astype(np.float64) @ vectors.astype(np.float64).T), axis=1
                )[:, :10]
                + 1
            )
            p50, p95, found = await _timed_knn(
                index, queries, CANDIDATES, args.runs, exact=True
            )
            result["exact"] = {
                "p50": p50,
                "p95": p95,
                "recall": _recall([ids_[:10] for ids_ in found], exact_top),
            }
            start = time.perf_counter()
            await index.build_hnsw(m=args.m, ef_construction=args.ef_construction)
            result["build_s"] = time.perf_counter() - start
            result["index_mib"] = await index.index_bytes() / MIB
            result["hnsw"] = []
            # Below k, ef_search is k (PgVectorIndex.knn): k=200 once per ef >= 200.
            wide = sorted({max(ef, CANDIDATES) for ef in args.ef})
            for ef, k in [(ef, 10) for ef in args.ef] + [
                (ef, CANDIDATES) for ef in wide
            ]:
                searched = PgVectorIndex(pool, MODEL, vectors.shape[1], ef_search=ef)
                plan = await searched.plan(queries[0], k)
                p50, p95, found = await _timed_knn(searched, queries, k, args.runs)
                result["hnsw"].append(
                    {
                        "ef": max(ef, k),
                        "k": k,
                        "scan": "HNSW" if index_name(MODEL) in plan else "exact",
                        "p50": p50,
                        "p95": p95,
                        "recall": _recall([ids_[:10] for ids_ in found], exact_top),
                    }
                )
        finally:
            await pool.close()
    finally:
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()
    return result


def markdown(results: dict[str, dict[str, Any]]) -> str:
    """Render a table of the sets, then one of the HNSW searches."""
    lines = [
        (
            "| set | vectors | load (rows/s) | text-form load (rows/s) | table (MiB) "
            "| exact k=200 p50 / p95 (ms) | HNSW build (s) | HNSW index (MiB) |"
        ),
        "|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    for name, r in results.items():
        text = f"{r['text_load_rate']:,.0f}" if "text_load_rate" in r else "–"
        lines.append(
            f"| {name} | {r['rows']:,} | {r['load_rate']:,.0f} | {text} | "
            f"{r['table_mib']:.1f} | {r['exact']['p50']:.1f} / {r['exact']['p95']:.1f}"
            f" | {r['build_s']:.1f} | {r['index_mib']:.1f} |"
        )
    lines += [
        "",
        "| set | ef_search | k | planner's scan | p50 / p95 (ms) | recall@10 vs exact |",
        "|---|---:|---:|---|---|---:|",
    ]
    for name, r in results.items():
        lines.extend(
            f"| {name} | {h['ef']} | {h['k']} | {h['scan']} | "
            f"{h['p50']:.2f} / {h['p95']:.2f} | "
            f"{h['recall']:.4f} |"
            for h in r["hnsw"]
        )
    return "\n".join(lines)


def _server(directory: Path, action: str) -> str:
    done = subprocess.run(  # noqa: S603  # our own script, fixed arguments
        [str(REPO / "script/postgres"), action, str(directory)],
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    )
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


async def run(args: argparse.Namespace, url: str) -> dict[str, dict[str, Any]]:
    """Measure every set asked for."""
    loaders = _vector_index()
    results: dict[str, dict[str, Any]] = {}
    for n, size in enumerate(args.sizes):
        vectors, queries = loaders.synthetic(size, args.queries)
        name = f"bench/engine.py {size:,}"
        print(f"{name}...", file=sys.stderr, flush=True)
        results[name] = await measure(url, vectors, queries, args, text_form=n == 0)
    if args.locomo:
        vectors, queries = loaders.locomo(args.locomo)
        print("LoCoMo MiniLM...", file=sys.stderr, flush=True)
        results["LoCoMo MiniLM"] = await measure(
            url, vectors, queries[: args.queries], args, text_form=False
        )
    return results


def main() -> None:
    """Start a server (unless --url), measure, print the tables, stop it."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=lambda text: [int(size) for size in text.split(",")],
        default=[10_000, 100_000],
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--ef",
        type=lambda text: [int(ef) for ef in text.split(",")],
        default=[40, 64, 100, 200],
    )
    parser.add_argument("--m", type=int, default=HNSW_M)
    parser.add_argument("--ef-construction", type=int, default=HNSW_EF_CONSTRUCTION)
    parser.add_argument("--locomo", type=Path, help="folder of LoCoMo's MiniLM files")
    parser.add_argument(
        "--url", help="a superuser's URL instead of a server of our own"
    )
    args = parser.parse_args()
    os.nice(10)
    if args.url:
        results = asyncio.run(run(args, args.url))
    else:
        with tempfile.TemporaryDirectory(prefix="pg-vectors-") as folder:
            directory = Path(folder)
            url = _server(directory, "start")
            try:
                results = asyncio.run(run(args, url))
            finally:
                _server(directory, "stop")
    print(markdown(results))


if __name__ == "__main__":
    main()
