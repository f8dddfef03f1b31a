"""Issue #26: PostgreSQL's keyword-only search at a size, on a database kept between runs.

Run from the repository root in the Python 3.14 environment:

    nice python bench/pg_keyword.py --size 1M --server DIR --runs 3 --json out.json

bench/pg_engine.py measures the three modes on both backends and loads
vectors too, which takes long at a million memories; this loads the same
memories (bench/engine.py's `Corpus`, seed and `_new_memories`, as
pg_engine does) into PostgreSQL only, through `PostgresMemories.add_many`
with no vectors, into the database `kw_<size>` it keeps on the server of
`--url` (or the one `script/postgres start DIR` runs with `--server DIR`,
left running), so a second run searches at once. Then bench/pg_engine.py's
queries (same seed: a question word and words of a target memory, scopes
household + one person, limit 10), keyword only, `--runs` times after
`--warmup` untimed ones; each run's p50/p95 of `search` wall time and the
server's CPU per query (its processes serving the database, read from
/proc). `--explain N` prints `EXPLAIN (ANALYZE, BUFFERS)` of the N first
queries' statements instead (captured with `auto_explain`-like logging of
the pool's connection: the statements `search` sends, re-run explained).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path
import statistics
import sys
import time
from typing import TYPE_CHECKING, Any, Final

import asyncpg
import numpy as np

REPO: Final = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "custom_components" / "memory"))

if TYPE_CHECKING:
    from bench.pg_engine import LIMIT, bench_engine, database_url, server, server_cpu
    from custom_components.memory.engine import SearchQuery
    from custom_components.memory.engine.postgres import (
        PostgresMemories,
        PostgresSearch,
        migrate,
    )
else:
    from engine import SearchQuery
    from engine.postgres import PostgresMemories, PostgresSearch, migrate
    from pg_engine import LIMIT, bench_engine, database_url, server, server_cpu

BATCH: Final = 1000


def _log(message: str) -> None:
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {message}\n")
    sys.stderr.flush()


def _size(text: str) -> int:
    text = text.strip().lower()
    factor = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * factor)


async def ensure_loaded(admin_url: str, size: int, memories: list[Any]) -> str:
    """Return the URL of `kw_<size>`, loading it first when it is not complete."""
    name = f"kw_{size}"
    admin = await asyncpg.connect(admin_url)
    try:
        exists = await admin.fetchval(
            "SELECT 1 FROM pg_database WHERE datname = $1", name
        )
        if not exists:
            await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    url = database_url(admin_url, name)
    connection = await asyncpg.connect(url)
    try:
        await connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
        await migrate(connection)
        have = int(await connection.fetchval("SELECT count(*) FROM memories"))
    finally:
        await connection.close()
    if have == size:
        return url
    if have:
        raise RuntimeError(f"{name} holds {have:,} memories, not {size:,}: drop it")
    pool = await asyncpg.create_pool(url, min_size=1, max_size=2)
    try:
        adder = PostgresMemories(pool)
        start = time.perf_counter()
        for first in range(0, size, BATCH):
            await adder.add_many(memories[first : first + BATCH])
            if first % 100_000 == 0:
                _log(f"loaded {first:,} in {time.perf_counter() - start:.0f} s")
        async with pool.acquire() as connection:
            await connection.execute("VACUUM ANALYZE")
        _log(f"loaded {size:,} in {time.perf_counter() - start:.0f} s")
    finally:
        await pool.close()
    return url


async def run(url: str, queries: list[SearchQuery], warmup: int) -> dict[str, float]:
    """One timed pass of every query after `warmup` untimed ones."""
    name = url.rsplit("/", 1)[1]
    pool = await asyncpg.create_pool(url, min_size=2, max_size=4)
    try:
        search = PostgresSearch(pool)
        for query in queries[:warmup]:
            await search.search(query)
        served = server_cpu(name)
        latencies: list[float] = []
        for query in queries:
            tick = time.perf_counter()
            await search.search(query)
            latencies.append(time.perf_counter() - tick)
        after = server_cpu(name)
    finally:
        await pool.close()
    spent = sum(seconds - served.get(pid, 0.0) for pid, seconds in after.items())
    ms = np.asarray(latencies) * 1000.0
    return {
        "p50_ms": float(np.percentile(ms, 50)),
        "p95_ms": float(np.percentile(ms, 95)),
        "server_cpu_ms": spent * 1000.0 / len(queries),
        "load": os.getloadavg()[0],
    }


async def explain(url: str, queries: list[SearchQuery]) -> None:
    """Print EXPLAIN (ANALYZE, BUFFERS) of each statement the queries send."""
    sent: list[tuple[str, tuple[Any, ...]]] = []

    class Recording(asyncpg.Connection):  # type: ignore[misc]
        async def fetch(self, sql: str, *args: Any, **kwargs: Any) -> Any:
            sent.append((sql, args))
            return await super().fetch(sql, *args, **kwargs)

        async def fetchval(self, sql: str, *args: Any, **kwargs: Any) -> Any:
            sent.append((sql, args))
            return await super().fetchval(sql, *args, **kwargs)

    pool = await asyncpg.create_pool(
        url, min_size=1, max_size=2, connection_class=Recording
    )
    plain = await asyncpg.connect(url)
    try:
        search = PostgresSearch(pool)
        for query in queries:
            sent.clear()
            await search.search(query)
            print(f"=== {query.text!r}")
            for sql, args in sent:
                plan = await plain.fetch("EXPLAIN (ANALYZE, BUFFERS) " + sql, *args)
                print(sql.strip().splitlines()[0][:100], args[:2])
                print("\n".join(str(row[0]) for row in plan))
    finally:
        await pool.close()
        await plain.close()


async def main_async(args: argparse.Namespace, admin_url: str) -> dict[str, Any]:
    """Load if needed, then measure (or explain)."""
    engine = bench_engine()
    corpus = engine.Corpus()
    cache = args.cache / f"kw-queries-{args.size}.json"
    texts: list[str] | None = None
    scopes: list[str] = []
    if cache.exists():
        planned = json.loads(cache.read_text())
    else:
        _log(f"{args.size:,}: making the corpus")
        texts, scopes, vectors, _topics = corpus.memories(
            args.size, seed=engine.SEED + args.size
        )
        made = corpus.queries(
            args.queries, texts, scopes, vectors, seed=engine.SEED + args.size + 1
        )
        planned = {"texts": made["texts"], "scopes": made["scopes"]}
        cache.write_text(json.dumps(planned))
    memories: list[Any] = []
    if texts is None and not await _complete(admin_url, args.size):
        texts, scopes, _vectors, _topics = corpus.memories(
            args.size, seed=engine.SEED + args.size
        )
    if texts is not None:
        memories = engine._new_memories(texts, scopes)  # noqa: SLF001
    url = await ensure_loaded(admin_url, args.size, memories)
    queries = [
        SearchQuery(text=text, scopes=tuple(scope), limit=LIMIT)
        for text, scope in zip(planned["texts"], planned["scopes"], strict=True)
    ][: args.queries]
    if args.explain:
        await explain(url, queries[: args.explain])
        return {}
    runs = []
    for number in range(args.runs):
        runs.append(await run(url, queries, args.warmup))
        _log(f"run {number + 1}: {runs[-1]}")
    return {
        "size": args.size,
        "queries": len(queries),
        "runs": runs,
        "median": {
            key: statistics.median(r[key] for r in runs)
            for key in ("p50_ms", "p95_ms", "server_cpu_ms")
        },
    }


async def _complete(admin_url: str, size: int) -> bool:
    """Whether `kw_<size>` exists with all its memories."""
    admin = await asyncpg.connect(admin_url)
    try:
        if not await admin.fetchval(
            "SELECT 1 FROM pg_database WHERE datname = $1", f"kw_{size}"
        ):
            return False
    finally:
        await admin.close()
    connection = await asyncpg.connect(database_url(admin_url, f"kw_{size}"))
    try:
        if await connection.fetchval("SELECT to_regclass('memories')") is None:
            return False
        return int(await connection.fetchval("SELECT count(*) FROM memories")) == size
    finally:
        await connection.close()


def main() -> None:
    """Parse the arguments, run, print (and write) the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=_size, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--url", help="a superuser's URL (else --server's)")
    parser.add_argument("--server", type=Path, help="script/postgres's folder")
    parser.add_argument("--cache", type=Path, default=Path(), help="queries' folder")
    parser.add_argument("--explain", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    os.nice(10)
    url = args.url
    if not url:
        if args.server is None:
            parser.error("give --url or --server")
        args.server.mkdir(parents=True, exist_ok=True)
        url = server(args.server, "start")
    report = asyncio.run(main_async(args, url))
    if report:
        print(json.dumps(report["median"]))
        if args.json is not None:
            args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
